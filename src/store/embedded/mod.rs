//! The embedded durable store (the default in production): an append-ordered journal with an
//! in-memory index, in the data directory.
//!
//! # Layout ([`journal`])
//! - `shuangkou.log`: every write in commit order (create, append, finish), checksummed frames;
//! - `shuangkou.archive`: finished games, one frame each (moved there by compaction);
//! - the script table: one `Script` frame per variant version in the journal, named by hash from
//!   the records that pin it (kept by compaction, held in memory by the index);
//! - `shuangkou.positions`: the log positions of full chunks of each game's log, spilled out of
//!   the index ([`sidefile`]; derived data, rebuilt at every open);
//! - `shuangkou.lock`: held (`flock`) while a process has the store open.
//!
//! The index ([`index`]) maps each game to the positions of its frames; it holds no bodies, and
//! reads (`load`, `entries_after`) read the frames by position. It is rebuilt by reading the
//! journal at open, whose size depends on the games in progress: finished games are folded out of
//! it by compaction ([`compact`]) into one archive frame each.
//!
//! # Durability and group commit
//! Every write goes to one writer thread through a channel. The writer takes everything queued
//! (up to [`MAX_BATCH`] operations), checks each against the index and the earlier operations of
//! the same batch (compare-and-append, idempotent create), encodes the frames into one buffer,
//! writes it at the end of the journal with one `pwrite`, `fdatasync`s once ([`syncer`]), then
//! applies the batch to the index and answers it, and only then takes the next batch: the writes
//! queued during a sync make the next batch, so the slower the disk, the more writes one sync
//! covers, and a write waits for at most the sync in progress and its own. No reply (and no
//! read) sees a write before the fsync that covers it; if a write or an fsync fails, the batch
//! fails, the journal is truncated back to its last durable end before the next batch, and every
//! waiter of the batch gets an error (the outcome is unknown to them; a retry reloads and sees).
//! One sequential write and one sync per batch, whatever the number of games in it.
//!
//! # Recovery
//! A crash can tear only the frames written after the last fsync (never acknowledged): the scan
//! at open stops at the first short or mismatched frame, copies the dropped bytes to
//! `shuangkou.log.tail-<offset>` for inspection, and truncates the journal there.
//!
//! # Upgrade
//! A directory written by the redb layout (`shuangkou.redb`) is converted once at open
//! ([`legacy`]).

mod chunked;
mod compact;
pub mod disk;
mod faults;
pub mod index;
pub mod journal;
pub mod legacy;
mod meters;
mod open;
mod ops;
mod positions;
mod retention;
pub mod sidefile;
pub mod snapshots;
pub mod spans;
mod syncer;
mod writer;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::{broadcast, mpsc, oneshot};

use self::disk::{Disk, DiskFile};
use self::index::{Index, Page};
use self::journal::Rec;
use self::ops::{Op, Queued, Reply};
use super::{Appended, Created, GameRecord, LogEntry, LogPage, PinnedScript, StoreError};

pub use self::faults::{Faults, IoStep};
use self::open::open_rw;

/// The journal's file name inside the data directory (the file whose presence marks a store).
pub const FILE_NAME: &str = journal::JOURNAL;
/// The lock file's name.
pub const LOCK_FILE: &str = "shuangkou.lock";

/// Most operations committed in one fsync.
pub const MAX_BATCH: usize = 1024;
/// Queued writes before senders wait (back-pressure).
const QUEUE: usize = 16 * 1024;
/// Buffered notifications per game before a slow watcher lags.
const WATCH_BUFFER: usize = 256;

/// How an embedded store is opened.
#[derive(Clone, Default)]
pub struct Options {
    /// Called before each write and fsync of a commit (fault-injection tests).
    pub faults: Option<Faults>,
    /// How long finished games are kept (`--finished-retention`): a game finished longer ago is
    /// deleted at a later compaction, and the archive is rewritten without such games once they
    /// outweigh the retained ones. `None` (the default) keeps every game.
    pub finished_retention: Option<Duration>,
    /// Unix seconds now, for finish times and expiry (tests); `None`: the system clock.
    pub clock: Option<Clock>,
    /// The disk the store's files are on (the crash-consistency test's simulated disk);
    /// `None` (the default): the real one ([`disk::real`]).
    pub disk: Option<Disk>,
}

/// A clock in unix seconds ([`Options::clock`]).
pub type Clock = Arc<dyn Fn() -> u64 + Send + Sync>;

/// Per-game notification channels.
#[derive(Default)]
struct Watchers {
    map: HashMap<String, broadcast::Sender<u64>>,
    /// Prune channels without receivers when the map reaches this size.
    prune_at: usize,
}

/// The index and the open files, swapped together by compaction.
struct State {
    index: Index,
    journal: Arc<DiskFile>,
    archive: Arc<DiskFile>,
}

/// State shared by the handle, the readers and the writer thread.
struct Shared {
    /// The disk the data directory is on.
    disk: Disk,
    dir: PathBuf,
    /// The journal's path, named in every error.
    label: String,
    state: RwLock<State>,
    /// Set after a failed commit until the journal is truncated back to its durable end.
    broken: AtomicBool,
    /// Set by a compaction's swap just before it renames the new journal in, cleared once the
    /// data directory is fsynced after it: the next commit fsyncs the directory before it
    /// answers (its writes are in the renamed file), so the swap itself does not wait for it.
    dir_unsynced: AtomicBool,
    watchers: Mutex<Watchers>,
    faults: Option<Faults>,
    /// How long finished games are kept (`None`: for ever).
    retention: Option<Duration>,
    clock: Option<Clock>,
    /// Committed fsyncs and the operations they carried (group-commit effectiveness).
    commits: AtomicU64,
    committed_ops: AtomicU64,
    compactions: AtomicU64,
    /// Holds the directory's lock while open.
    _lock: Box<dyn Send + Sync>,
}

/// The embedded durable store. Dropping it stops the writer thread (after the queued writes) and
/// closes the files.
pub struct EmbeddedStore {
    shared: Arc<Shared>,
    queue: Option<mpsc::Sender<Queued>>,
    writer: Option<JoinHandle<()>>,
}

fn store_error(op: &'static str, message: impl Into<String>) -> StoreError {
    StoreError {
        op,
        message: message.into(),
    }
}

impl Shared {
    /// Unix seconds now (the configured clock, else the system's).
    fn now(&self) -> u64 {
        self.clock
            .as_ref()
            .map_or_else(retention::now_secs, |c| c())
    }

    fn state(&self, op: &'static str) -> Result<std::sync::RwLockReadGuard<'_, State>, StoreError> {
        self.state
            .read()
            .map_err(|_| store_error(op, "internal lock poisoned"))
    }

    fn notify(&self, id: &str, seq: u64) {
        let Ok(mut w) = self.watchers.lock() else {
            return;
        };
        if let Some(tx) = w.map.get(id) {
            if tx.send(seq).is_err() {
                // No receiver left.
                w.map.remove(id);
            }
        }
    }

    fn subscribe(&self, id: &str) -> broadcast::Receiver<u64> {
        let Ok(mut w) = self.watchers.lock() else {
            return broadcast::channel(1).1;
        };
        if let Some(tx) = w.map.get(id) {
            return tx.subscribe();
        }
        if w.map.len() >= w.prune_at {
            w.map.retain(|_, tx| tx.receiver_count() > 0);
            w.prune_at = (w.map.len() * 2).max(1024);
        }
        let (tx, rx) = broadcast::channel(WATCH_BUFFER);
        w.map.insert(id.to_string(), tx);
        rx
    }

    fn drop_watchers(&self, id: &str) {
        if let Ok(mut w) = self.watchers.lock() {
            if w.map.get(id).is_some_and(|tx| tx.receiver_count() == 0) {
                w.map.remove(id);
            }
        }
    }

    /// The script table's entry for `hash`, as the record pinning it gets it back.
    fn script(&self, op: &'static str, hash: Option<&str>) -> Result<Option<PinnedScript>, String> {
        let Some(hash) = hash else { return Ok(None) };
        let st = self.state(op).map_err(|e| e.message)?;
        let text = st
            .index
            .scripts
            .get(hash)
            .ok_or_else(|| format!("script {hash} is not in the script table"))?;
        Ok(Some(PinnedScript {
            hash: hash.to_string(),
            text: Arc::clone(text),
        }))
    }

    /// A game's record and log (`after` skips the first entries), read by position.
    fn read_game(
        &self,
        op: &'static str,
        id: &str,
        after: u64,
        limit: usize,
    ) -> Result<Option<(GameRecord, Vec<LogEntry>)>, StoreError> {
        let fail = |m: String| store_error(op, format!("{}: game {id}: {m}", self.label));
        let (page, platform, request_id, journal, archive, side) = {
            let st = self.state(op)?;
            let Some(g) = st.index.games.get(id) else {
                return Ok(None);
            };
            (
                g.page(clamp(after), limit),
                g.platform.clone(),
                g.request_id.clone(),
                Arc::clone(&st.journal),
                Arc::clone(&st.archive),
                st.index.side.reader(),
            )
        };
        let record = |body: &[u8], script: Option<&str>| {
            Ok::<_, StoreError>(GameRecord {
                id: id.to_string(),
                platform: platform.as_deref().map(str::to_string),
                request_id: request_id.as_deref().map(str::to_string),
                body: body.to_vec(),
                script: self.script(op, script).map_err(fail)?,
            })
        };
        match page {
            Page::Journal {
                record: at,
                entries,
                first,
            } => {
                let rec = if matches!(op, "load" | "head") {
                    let payload = journal::read_frame(&journal, at).map_err(fail)?;
                    match journal::decode(&payload).map_err(fail)? {
                        Rec::Create { body, script, .. } => record(body, script)?,
                        _ => return Err(fail("the record frame is not a create".into())),
                    }
                } else {
                    record(&[], None)?
                };
                let entries = entries.read(&side).map_err(fail)?;
                let mut log = Vec::new();
                for (k, span) in entries.iter().enumerate() {
                    let i = first + k;
                    let payload = journal::read_frame(&journal, span).map_err(fail)?;
                    match journal::decode(&payload).map_err(fail)? {
                        Rec::Append { seq, body, .. } if seq == i as u64 + 1 => {
                            log.push(LogEntry {
                                seq,
                                body: body.to_vec(),
                            })
                        }
                        _ => return Err(fail(format!("entry {} is not its append", i + 1))),
                    }
                }
                Ok(Some((rec, log)))
            }
            Page::Archive { span } => {
                let payload = journal::read_frame(&archive, span).map_err(fail)?;
                match journal::decode(&payload).map_err(fail)? {
                    Rec::Game {
                        game,
                        record: body,
                        script,
                        entries,
                        ..
                    } if game.id == id => {
                        let log = entries
                            .iter()
                            .enumerate()
                            .skip(clamp(after))
                            .take(limit)
                            .map(|(i, b)| LogEntry {
                                seq: i as u64 + 1,
                                body: b.to_vec(),
                            })
                            .collect();
                        Ok(Some((record(body, script)?, log)))
                    }
                    _ => Err(fail("the archive frame is not this game".into())),
                }
            }
        }
    }
}

/// Waits for one of the store's threads to end (after its input was closed); a panic is logged.
fn join_thread(thread: Option<JoinHandle<()>>, name: &str) {
    if thread.is_some_and(|t| t.join().is_err()) {
        tracing::warn!(store = "embedded", thread = name, "store thread panicked");
    }
}

/// A log position as an index (saturating: nothing is that long).
fn clamp(after: u64) -> usize {
    usize::try_from(after).unwrap_or(usize::MAX)
}

impl EmbeddedStore {
    /// The journal's path.
    pub fn path(&self) -> &str {
        &self.shared.label
    }

    /// Commits (fsyncs) so far and the operations they carried: with concurrent writers the
    /// second is larger (group commit).
    pub fn commit_stats(&self) -> (u64, u64) {
        (
            self.shared.commits.load(Ordering::Relaxed),
            self.shared.committed_ops.load(Ordering::Relaxed),
        )
    }

    /// Compactions of the journal so far.
    pub fn compactions(&self) -> u64 {
        self.shared.compactions.load(Ordering::Relaxed)
    }

    async fn submit<T>(
        &self,
        op: &'static str,
        make: impl FnOnce(Reply<T>) -> Op,
    ) -> Result<T, StoreError> {
        let queue = self
            .queue
            .as_ref()
            .ok_or_else(|| store_error(op, "store closed"))?;
        let (tx, rx) = oneshot::channel();
        let queued = Queued {
            op: make(tx),
            at: std::time::Instant::now(),
        };
        queue
            .send(queued)
            .await
            .map_err(|_| store_error(op, "store writer stopped"))?;
        rx.await.map_err(|_| {
            store_error(
                op,
                "store writer stopped before answering (outcome unknown)",
            )
        })?
    }

    async fn read<T: Send + 'static>(
        &self,
        op: &'static str,
        f: impl FnOnce(&Shared) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let shared = Arc::clone(&self.shared);
        tokio::task::spawn_blocking(move || f(&shared))
            .await
            .map_err(|e| store_error(op, format!("read task failed: {e}")))?
    }

    pub async fn create(&self, record: &GameRecord) -> Result<Created, StoreError> {
        let record = record.clone();
        self.submit("create", |reply| Op::Create { record, reply })
            .await
    }

    pub async fn load(&self, id: &str) -> Result<Option<(GameRecord, Vec<LogEntry>)>, StoreError> {
        let id = id.to_string();
        self.read("load", move |s| s.read_game("load", &id, 0, usize::MAX))
            .await
    }

    /// The game's record and its log's length: the record's frame only (an archived game's
    /// one frame).
    pub async fn head(&self, id: &str) -> Result<Option<(GameRecord, u64)>, StoreError> {
        let id = id.to_string();
        self.read("head", move |s| {
            // The length first: entries appended after it are read by the caller's next read.
            let len = match s.state("head")?.index.games.get(id.as_str()) {
                Some(g) => g.log_len(),
                None => return Ok(None),
            };
            Ok(s.read_game("head", &id, len, 0)?
                .map(|(record, _)| (record, len)))
        })
        .await
    }

    /// The length of each of `ids`' logs (0: no such game), from the index (no frame is read).
    pub async fn log_lengths(&self, ids: &[String]) -> Result<Vec<u64>, StoreError> {
        let ids = ids.to_vec();
        self.read("log_lengths", move |s| {
            let st = s.state("log_lengths")?;
            Ok(ids
                .iter()
                .map(|id| st.index.games.get(id.as_str()).map_or(0, |g| g.log_len()))
                .collect())
        })
        .await
    }

    /// [`EmbeddedStore::load`] of each of `ids`, in one read task.
    pub async fn load_many(
        &self,
        ids: &[String],
    ) -> Vec<Result<Option<(GameRecord, Vec<LogEntry>)>, StoreError>> {
        let ids = ids.to_vec();
        let n = ids.len();
        let all = self
            .read("load", move |s| {
                Ok(ids
                    .iter()
                    .map(|id| s.read_game("load", id, 0, usize::MAX))
                    .collect())
            })
            .await;
        all.unwrap_or_else(|e| vec![Err(e); n])
    }

    /// The entries of `page`: reads those frames only.
    pub async fn entries(&self, id: &str, page: LogPage) -> Result<Vec<LogEntry>, StoreError> {
        let id = id.to_string();
        self.read("entries", move |s| {
            Ok(s.read_game("entries", &id, page.after, page.limit)?
                .map(|(_, log)| log)
                .unwrap_or_default())
        })
        .await
    }

    pub async fn append(&self, id: &str, entry: &LogEntry) -> Result<Appended, StoreError> {
        let (id, entry) = (id.to_string(), entry.clone());
        self.submit("append", |reply| Op::Append { id, entry, reply })
            .await
    }

    pub fn subscribe(&self, id: &str) -> broadcast::Receiver<u64> {
        self.shared.subscribe(id)
    }

    pub async fn unfinished(&self) -> Result<Vec<String>, StoreError> {
        let st = self.shared.state("unfinished")?;
        Ok(st
            .index
            .games
            .iter()
            .filter(|(_, g)| g.finished.is_none())
            .map(|(id, _)| id.to_string())
            .collect())
    }

    pub async fn finish(&self, id: &str) -> Result<(), StoreError> {
        let id = id.to_string();
        self.submit("finish", |reply| Op::Finish { id, reply })
            .await
    }

    /// Healthy if the writer runs and the last commit did not leave the journal unrepaired;
    /// while it is, asks the writer to retry the repair.
    pub async fn ping(&self) -> Result<(), StoreError> {
        if self.writer.as_ref().is_none_or(|w| w.is_finished()) {
            return Err(store_error("ping", "store writer thread stopped"));
        }
        if self.shared.broken.load(Ordering::Acquire) {
            self.submit("ping", |reply| Op::Sync { op: "ping", reply })
                .await?;
        }
        let journal = Arc::clone(&self.shared.state("ping")?.journal);
        journal
            .size()
            .map(drop)
            .map_err(|e| store_error("ping", format!("{}: {e}", self.shared.label)))
    }

    /// Compacts the journal now if any finished game is still in it (normally the writer
    /// decides; for tests and measurements).
    pub async fn compact_now(&self) -> Result<(), StoreError> {
        self.submit("compact", |reply| Op::Compact { reply }).await
    }

    /// Bytes of the journal file (including the zeros written ahead) and of the archive.
    pub fn disk_usage(&self) -> Result<(u64, u64), StoreError> {
        let st = self.shared.state("disk_usage")?;
        let len = |f: &DiskFile| f.size().unwrap_or(0);
        Ok((len(&st.journal), len(&st.archive)))
    }

    /// Waits until every write queued before it is committed (they are durable once answered, so
    /// this is only an ordering barrier at shutdown).
    pub async fn flush(&self) -> Result<(), StoreError> {
        self.submit("flush", |reply| Op::Sync { op: "flush", reply })
            .await
    }
}

impl Drop for EmbeddedStore {
    fn drop(&mut self) {
        // Closing the queue lets the writer commit what is queued and exit; joining it releases
        // the files (and the lock) before a reopen in the same process.
        self.queue.take();
        join_thread(self.writer.take(), "writer");
    }
}
