//! Scratch paths of the tests that write files, under Cargo's per-package temp dir
//! (`CARGO_TARGET_TMPDIR`: on the target disk, not tmpfs). Shared by `common` and, by path, by
//! `durability_support`, `deploy_support`, `tests/store_embedded.rs` and `tests/store_journal.rs`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A fresh path `CARGO_TARGET_TMPDIR/{prefix}-{test}-{pid}-{n}` with nothing at it (a leftover
/// of an earlier run is removed; nothing is created).
pub fn scratch_path(prefix: &str, test: &str) -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "{prefix}-{test}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&path);
    path
}

/// A scratch path removed (directory or file) when dropped, unless the test is failing: then it
/// is kept and named on stderr (the files explain the failure). Declare it before what writes
/// into it (a store, a server), so that closes first.
pub struct TempDir(PathBuf);

impl TempDir {
    /// A fresh path with nothing at it ([`scratch_path`]).
    pub fn fresh(prefix: &str, test: &str) -> TempDir {
        TempDir(scratch_path(prefix, test))
    }

    /// A fresh, empty directory.
    pub fn created(prefix: &str, test: &str) -> TempDir {
        let dir = TempDir::fresh(prefix, test);
        std::fs::create_dir_all(&dir.0).expect("temp dir");
        dir
    }
}

impl std::ops::Deref for TempDir {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("test files kept in {}", self.0.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
            let _ = std::fs::remove_file(&self.0);
        }
    }
}
