//! Opening the embedded store: the data directory's lock, the conversion of older layouts, the
//! recovery of the journal (the index rebuilt by replay, a torn tail saved aside and cut off),
//! and the start of the writer thread.

use std::collections::HashMap;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex, RwLock};

use tokio::sync::mpsc;

use super::disk::{self, Disk, DiskFile, Mode};
use super::index::Index;
use super::sidefile::{self, SideFile};
use super::writer::{Writer, run_writer};
use super::{
    EmbeddedStore, LOCK_FILE, Options, QUEUE, Shared, State, Watchers, journal, legacy, retention,
    snapshots, store_error, syncer,
};
use crate::store::StoreError;

pub(super) fn open_rw(disk: &Disk, path: &Path) -> io::Result<DiskFile> {
    disk.open(path, Mode::Open)
}

/// Opens the journal, rebuilding the index (and its positions side file, truncated first); a
/// torn tail is saved aside and cut off. Returns the file, the index, the end of the valid data
/// and the file's length (zeros written ahead are kept).
fn open_journal(
    disk: &Disk,
    dir: &Path,
    label: &str,
) -> Result<(DiskFile, Index, u64, u64), String> {
    let path = dir.join(journal::JOURNAL);
    let file = open_rw(disk, &path).map_err(|e| format!("cannot open {label}: {e}"))?;
    journal::check_magic(&file, journal::JOURNAL_MAGIC).map_err(|m| format!("{label}: {m}"))?;
    let side_path = dir.join(sidefile::FILE);
    let side = SideFile::create(disk, &side_path)
        .map_err(|e| format!("cannot create {}: {e}", side_path.display()))?;
    let (index, end, stop) =
        Index::replay(&file, side).map_err(|e| format!("cannot read {label}: {e}"))?;
    let len = file.size().map_err(|e| e.to_string())?;
    if end < len {
        let tail = journal::read_raw_range(&file, end, len)
            .map_err(|e| format!("cannot read {label}: {e}"))?;
        // Compared a block at a time (memcmp), not byte by byte: the zeros written ahead are
        // megabytes, read at every open.
        const ZEROS: [u8; 4096] = [0; 4096];
        if tail.chunks(ZEROS.len()).all(|c| c == &ZEROS[..c.len()]) {
            // Only the zeros written ahead of the commits: nothing torn.
            return Ok((file, index, end, len));
        }
        let aside = dir.join(format!("{}.tail-{end}", journal::JOURNAL));
        disk.open(&aside, Mode::Truncate)
            .and_then(|f| f.write_all_at(&tail, 0))
            .map_err(|e| format!("cannot save the torn tail: {e}"))?;
        file.set_len(end)
            .and_then(|()| file.sync_data())
            .map_err(|e| format!("cannot truncate {label}: {e}"))?;
        tracing::warn!(store = "embedded", path = %label, dropped = len - end,
            reason = stop.as_deref().unwrap_or(""), saved = %aside.display(),
            "journal tail after the last commit was torn (a crash); cut off");
    }
    Ok((file, index, end, end))
}

impl EmbeddedStore {
    /// Opens (creating if needed) the store in the data directory `dir`; converts a redb store
    /// found there first. A corrupt or foreign file is a clear error naming it.
    pub fn open(dir: impl AsRef<Path>) -> Result<EmbeddedStore, StoreError> {
        EmbeddedStore::open_with(dir, Options::default())
    }

    /// [`EmbeddedStore::open`] with `options`.
    pub fn open_with(dir: impl AsRef<Path>, options: Options) -> Result<EmbeddedStore, StoreError> {
        let started = std::time::Instant::now();
        let dir = dir.as_ref();
        let Options {
            faults,
            finished_retention,
            clock,
            disk,
        } = options;
        let disk = disk.unwrap_or_else(disk::real);
        let fail = |m: String| store_error("open", m);
        disk.create_dir_all(dir).map_err(|e| {
            fail(format!(
                "cannot create data directory {}: {e}",
                dir.display()
            ))
        })?;
        let lock_path = dir.join(LOCK_FILE);
        let lock = disk.lock(&lock_path).map_err(|e| match e.kind() {
            io::ErrorKind::WouldBlock => fail(format!(
                "{} is already open (another shuangkou process uses this data directory?)",
                dir.display()
            )),
            _ => fail(format!("cannot open {}: {e}", lock_path.display())),
        })?;
        legacy::migrate_if_needed(&disk, dir).map_err(fail)?;
        retention::finish_rewrite(&disk, dir).map_err(fail)?;
        let label = dir.join(journal::JOURNAL).display().to_string();
        let (journal_file, index, end, alloc_end) =
            open_journal(&disk, dir, &label).map_err(fail)?;
        let archive_path = dir.join(journal::ARCHIVE);
        let archive = open_rw(&disk, &archive_path)
            .map_err(|e| fail(format!("cannot open {}: {e}", archive_path.display())))?;
        journal::check_magic(&archive, journal::ARCHIVE_MAGIC)
            .map_err(|m| fail(format!("{}: {m}", archive_path.display())))?;
        let archive_end = archive.size().map_err(|e| fail(e.to_string()))?;
        disk.sync_dir(dir)
            .map_err(|e| fail(format!("cannot sync {}: {e}", dir.display())))?;
        let games = index.games.len();
        // Snapshot files of games no longer in the store (left by compactions before expired
        // games' files were deleted with them); a failure only leaves them.
        match snapshots::sweep_orphans(&disk, dir, |id| index.games.contains_key(id)) {
            Ok(0) => {}
            Ok(n) => tracing::info!(
                store = "embedded",
                files = n,
                "deleted the snapshot files of games no longer in the store"
            ),
            Err(e) => tracing::warn!(store = "embedded", error = %e,
                "cannot sweep the snapshot files of games no longer in the store"),
        }
        let shared = Arc::new(Shared {
            disk,
            dir: dir.to_path_buf(),
            label,
            state: RwLock::new(State {
                index,
                journal: Arc::new(journal_file),
                archive: Arc::new(archive),
            }),
            broken: AtomicBool::new(false),
            dir_unsynced: AtomicBool::new(false),
            watchers: Mutex::new(Watchers {
                map: HashMap::new(),
                prune_at: 1024,
            }),
            faults,
            retention: finished_retention,
            clock,
            commits: AtomicU64::new(0),
            committed_ops: AtomicU64::new(0),
            compactions: AtomicU64::new(0),
            _lock: lock,
        });
        let (queue, rx) = mpsc::channel(QUEUE);
        let wake = queue.downgrade();
        let writer_shared = Arc::clone(&shared);
        let w = Writer {
            end,
            archive_end,
            alloc_end,
        };
        let syncer = syncer::Syncer::new(end);
        let writer = std::thread::Builder::new()
            .name("shuangkou-store-writer".into())
            .spawn(move || run_writer(writer_shared, w, rx, syncer, wake))
            .map_err(|e| fail(format!("cannot start the writer thread: {e}")))?;
        tracing::info!(store = "embedded", path = %shared.label, games,
            ms = started.elapsed().as_millis() as u64, "store opened");
        Ok(EmbeddedStore {
            shared,
            queue: Some(queue),
            writer: Some(writer),
        })
    }
}
