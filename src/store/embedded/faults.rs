//! The embedded store's fault hooks, for fault-injection tests: a function called before each
//! write and fsync of a commit (and each step of a compaction), whose `Err` fails the step as
//! the disk would.

use std::io;
use std::path::Path;
use std::sync::Arc;

use super::{EmbeddedStore, Options, Shared};
use crate::store::StoreError;

/// A step of the commit path, for fault injection in tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoStep {
    /// Writing a batch's frames to the journal.
    Write,
    /// Fsyncing the journal.
    Sync,
    /// Building a compaction, on its own thread (before it reads anything, and again once it
    /// has copied the journal's durable tail); an `Err` fails the compaction and the old
    /// journal stays in use.
    Compact,
}

/// Called before each step of a commit (and of a compaction); an `Err` fails the step as the
/// disk would. For fault-injection tests ([`EmbeddedStore::open_with_faults`]).
pub type Faults = Arc<dyn Fn(IoStep) -> io::Result<()> + Send + Sync>;

impl Shared {
    pub(super) fn fault(&self, step: IoStep) -> io::Result<()> {
        self.faults.as_ref().map_or(Ok(()), |f| f(step))
    }
}

impl EmbeddedStore {
    /// Opens the store with `faults` called before each write and fsync of a commit. For
    /// fault-injection tests.
    pub fn open_with_faults(
        dir: impl AsRef<Path>,
        faults: Faults,
    ) -> Result<EmbeddedStore, StoreError> {
        let options = Options {
            faults: Some(faults),
            ..Options::default()
        };
        EmbeddedStore::open_with(dir, options)
    }
}
