//! The writer thread's file positions: where the durable journal data ends, where the archive
//! ends, and how far the journal is written ahead with zeros.
//!
//! Its own module so that the writer (which owns it) and compaction (which moves the ends)
//! both depend on it without depending on each other.

/// The writer thread's own state.
pub(super) struct Writer {
    /// End of the durable journal data.
    pub(super) end: u64,
    /// End of the archive.
    pub(super) archive_end: u64,
    /// The journal's length: bytes from `end` on are zeros written ahead (see
    /// `writer::PREALLOCATE`).
    pub(super) alloc_end: u64,
}
