//! The positions side file (`shuangkou.positions`): the packed log positions of full chunks of
//! each game's log, spilled out of the index so that the index holds a bounded tail per game
//! ([`super::chunked`]).
//!
//! Derived data: truncated and rebuilt from the journal at every open, never fsynced (a crash
//! loses nothing the journal does not hold). Append-only while open: a chunk, once written, is
//! never rewritten, so a reader may `pread` it without any lock. A compaction writes a new one
//! ([`NEXT`]) for the new journal's positions and renames it in after the journal's rename.

use std::io;
use std::path::Path;
use std::sync::Arc;

use super::disk::{Disk, DiskFile, Mode};

/// The side file's name in the data directory.
pub const FILE: &str = "shuangkou.positions";
/// The side file a compaction writes, renamed over [`FILE`] with the new journal.
pub(super) const NEXT: &str = "shuangkou.positions.compact";

/// Bits of a chunk's handle that hold its length in bytes (the rest hold its offset).
const LEN_BITS: u32 = 16;

/// Where one chunk is in the side file: its offset and its length in bytes, packed in a `u64`
/// (the index holds one per chunk).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk(u64);

impl Chunk {
    fn new(at: u64, len: usize) -> Option<Chunk> {
        let len = u64::try_from(len).ok().filter(|l| *l < 1 << LEN_BITS)?;
        (at < 1 << (64 - LEN_BITS)).then_some(Chunk(at << LEN_BITS | len))
    }

    fn at(self) -> u64 {
        self.0 >> LEN_BITS
    }

    fn len(self) -> usize {
        (self.0 & ((1 << LEN_BITS) - 1)) as usize
    }
}

/// The side file open for appending (owned by one index) and where its data ends.
#[derive(Debug)]
pub struct SideFile {
    file: Arc<DiskFile>,
    end: u64,
}

impl SideFile {
    /// Creates (or truncates) the side file at `path`.
    pub fn create(disk: &Disk, path: &Path) -> io::Result<SideFile> {
        let file = disk.open(path, Mode::Truncate)?;
        Ok(SideFile {
            file: Arc::new(file),
            end: 0,
        })
    }

    /// Appends one chunk's bytes; returns where it is.
    pub fn append(&mut self, bytes: &[u8]) -> io::Result<Chunk> {
        let chunk = Chunk::new(self.end, bytes.len()).ok_or_else(|| {
            io::Error::other(format!(
                "a chunk of {} bytes at {} does not fit a chunk handle",
                bytes.len(),
                self.end
            ))
        })?;
        self.file.write_all_at(bytes, self.end)?;
        self.end += bytes.len() as u64;
        Ok(chunk)
    }

    /// The file, for reads (a compaction reads the old file's chunks while the writer goes on).
    pub fn reader(&self) -> Arc<DiskFile> {
        Arc::clone(&self.file)
    }
}

/// Reads one chunk's bytes.
pub fn read(file: &DiskFile, chunk: Chunk) -> io::Result<Vec<u8>> {
    let mut buf = vec![0; chunk.len()];
    file.read_exact_at(&mut buf, chunk.at())?;
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_read_back_where_they_were_appended() {
        let dir = std::env::temp_dir().join(format!("sk-sidefile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(FILE);
        let disk = super::super::disk::real();
        let mut side = SideFile::create(&disk, &path).unwrap();
        let a = side.append(b"first").unwrap();
        let b = side.append(&[7; 7000]).unwrap();
        let empty = side.append(b"").unwrap();
        let reader = side.reader();
        assert_eq!(read(&reader, a).unwrap(), b"first");
        assert_eq!(read(&reader, b).unwrap(), vec![7; 7000]);
        assert_eq!(read(&reader, empty).unwrap(), b"");
        // Creating it again truncates it: the old chunks are gone.
        let again = SideFile::create(&disk, &path).unwrap();
        assert!(read(&again.reader(), b).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_chunk_handle_refuses_what_it_cannot_hold() {
        assert!(Chunk::new(0, 1 << LEN_BITS).is_none());
        assert!(Chunk::new(1 << (64 - LEN_BITS), 1).is_none());
        let c = Chunk::new((1 << (64 - LEN_BITS)) - 1, (1 << LEN_BITS) - 1).unwrap();
        assert_eq!((c.at(), c.len()), ((1 << 48) - 1, (1 << 16) - 1));
    }
}
