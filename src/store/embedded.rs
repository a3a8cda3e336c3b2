//! The embedded durable store (the default in production): one `redb` database file,
//! `<dir>/shuangkou.redb`.
//!
//! # Layout
//! - `games`: id → (platform, request id, record body);
//! - `log`: (id, seq) → entry body;
//! - `log_len`: id → number of log entries (also "the game exists" for appends);
//! - `requests`: (platform, request id) → id, for idempotent creates;
//! - `unfinished`: ids of the games not finished (rebuilt at start);
//! - `finished`: id → unix seconds when it finished (the archive flag; finished games are kept);
//! - `shuangkou_meta`: `schema` → the layout version, which also marks the file as ours.
//!
//! # Durability and group commit
//! Every write (create, append, finish) goes to one writer thread through a channel. The writer
//! takes everything queued (up to [`MAX_BATCH`] operations), applies it in one write transaction
//! (the compare-and-append checks run inside it, so they see the earlier operations of the same
//! batch), commits once with [`redb::Durability::Immediate`] (fsync), and only then answers every
//! waiter. No reply precedes the commit; if the commit fails, every waiter of the batch gets an
//! error (the outcome is unknown to them; a retry reloads and sees).
//!
//! After an I/O error redb refuses further use of the open database; the writer then reopens the
//! file (redb repairs it) before the next batch, so the store resumes once the cause (a full disk)
//! is gone. Reads run on Tokio's blocking pool and never wait for the writer (MVCC).

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::thread::JoinHandle;
use std::time::{SystemTime, UNIX_EPOCH};

use redb::{
    Database, DatabaseError, Durability, ReadableTable, StorageBackend, StorageError,
    TableDefinition, TableHandle,
};
use tokio::sync::{broadcast, mpsc, oneshot};

use super::{Appended, Created, GameRecord, LogEntry, StoreError};

/// The database file's name inside the data directory.
pub const FILE_NAME: &str = "shuangkou.redb";

/// Most operations committed in one transaction.
pub const MAX_BATCH: usize = 1024;

/// The layout version written in `shuangkou_meta`.
const SCHEMA_VERSION: u64 = 1;
/// Queued writes before senders wait (back-pressure).
const QUEUE: usize = 16 * 1024;
/// Buffered notifications per game before a slow watcher lags.
const WATCH_BUFFER: usize = 256;
/// redb's page cache. Its default (1 GiB) is resident memory once that much has been written —
/// 100,000 games in progress took 1.67 GiB RSS with it (BENCHMARKS.md, "Memory"). Live games are
/// served from memory, so the cache mostly holds pages written once; the OS page cache (not
/// resident in this process) serves the rare reads (recovery, loads).
const CACHE_BYTES: usize = 128 << 20;

const META: TableDefinition<&str, u64> = TableDefinition::new("shuangkou_meta");
/// A `games` row: platform, request id, record body.
type GameRow = (Option<&'static str>, Option<&'static str>, &'static [u8]);

const GAMES: TableDefinition<&str, GameRow> = TableDefinition::new("games");
const LOG: TableDefinition<(&str, u64), &[u8]> = TableDefinition::new("log");
const LOG_LEN: TableDefinition<&str, u64> = TableDefinition::new("log_len");
const REQUESTS: TableDefinition<(Option<&str>, &str), &str> = TableDefinition::new("requests");
const UNFINISHED: TableDefinition<&str, ()> = TableDefinition::new("unfinished");
const FINISHED: TableDefinition<&str, u64> = TableDefinition::new("finished");

/// Every table name this store uses.
const TABLES: [&str; 7] = [
    "shuangkou_meta",
    "games",
    "log",
    "log_len",
    "requests",
    "unfinished",
    "finished",
];

/// Opens a fresh storage backend each time the database is (re)opened. For fault injection in
/// tests; production uses [`EmbeddedStore::open`].
pub type BackendFactory = Arc<dyn Fn() -> io::Result<Box<dyn StorageBackend>> + Send + Sync>;

/// Where the database lives.
enum Source {
    File(PathBuf),
    Backend(BackendFactory),
}

/// A boxed backend passed to redb (which takes `impl StorageBackend`).
struct Boxed(Box<dyn StorageBackend>);

impl fmt::Debug for Boxed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl StorageBackend for Boxed {
    fn len(&self) -> io::Result<u64> {
        self.0.len()
    }
    fn read(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        self.0.read(offset, len)
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }
    fn sync_data(&self, eventual: bool) -> io::Result<()> {
        self.0.sync_data(eventual)
    }
    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.0.write(offset, data)
    }
}

/// A redb error, boxed (it is large) and convertible from every redb error type with `?`.
struct DbError(Box<redb::Error>);

impl<E: Into<redb::Error>> From<E> for DbError {
    fn from(e: E) -> Self {
        DbError(Box::new(e.into()))
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

type DbResult<T> = Result<T, DbError>;

type Reply<T> = oneshot::Sender<Result<T, StoreError>>;

/// A write for the writer thread.
enum Op {
    Create {
        record: GameRecord,
        reply: Reply<Created>,
    },
    Append {
        id: String,
        entry: LogEntry,
        reply: Reply<Appended>,
    },
    Finish {
        id: String,
        reply: Reply<()>,
    },
    /// Answered after everything queued before it is committed; also retries a reopen.
    Sync {
        op: &'static str,
        reply: Reply<()>,
    },
}

impl Op {
    fn name(&self) -> &'static str {
        match self {
            Op::Create { .. } => "create",
            Op::Append { .. } => "append",
            Op::Finish { .. } => "finish",
            Op::Sync { op, .. } => op,
        }
    }

    fn fail(self, message: &str) {
        let op = self.name();
        let e = || StoreError {
            op,
            message: message.to_string(),
        };
        // A dropped receiver means the caller went away; nothing to tell.
        match self {
            Op::Create { reply, .. } => drop(reply.send(Err(e()))),
            Op::Append { reply, .. } => drop(reply.send(Err(e()))),
            Op::Finish { reply, .. } => drop(reply.send(Err(e()))),
            Op::Sync { reply, .. } => drop(reply.send(Err(e()))),
        }
    }
}

/// What one operation of a batch did (sent only once the batch is committed).
enum Outcome {
    Created(Result<Created, String>),
    Appended(Result<Appended, String>),
    Done,
}

/// Per-game notification channels.
#[derive(Default)]
struct Watchers {
    map: HashMap<String, broadcast::Sender<u64>>,
    /// Prune channels without receivers when the map reaches this size.
    prune_at: usize,
}

/// State shared by the handle, the readers and the writer thread.
struct Shared {
    /// The file path (or backend label), named in every error.
    label: String,
    source: Source,
    /// `None` after an I/O error until the writer reopens the file.
    db: RwLock<Option<Database>>,
    /// Set on an I/O error: the writer reopens before its next batch.
    broken: AtomicBool,
    watchers: Mutex<Watchers>,
    /// Committed transactions and the operations they carried (group-commit effectiveness).
    commits: AtomicU64,
    committed_ops: AtomicU64,
}

/// The embedded durable store. Dropping it stops the writer thread (after the queued writes) and
/// closes the file.
pub struct EmbeddedStore {
    shared: Arc<Shared>,
    queue: Option<mpsc::Sender<Op>>,
    writer: Option<JoinHandle<()>>,
}

fn store_error(op: &'static str, message: impl Into<String>) -> StoreError {
    StoreError {
        op,
        message: message.into(),
    }
}

/// Describes an open failure, naming the file.
fn describe_open_error(label: &str, e: &DatabaseError) -> String {
    match e {
        DatabaseError::DatabaseAlreadyOpen => {
            format!("{label} is already open (another shuangkou process uses this data directory?)")
        }
        DatabaseError::Storage(StorageError::Corrupted(m)) => {
            format!("{label} is corrupt or not a redb database: {m}")
        }
        DatabaseError::UpgradeRequired(v) => {
            format!("{label} uses redb file format {v}, which this build cannot read")
        }
        DatabaseError::Storage(StorageError::Io(io)) if io.kind() == io::ErrorKind::InvalidData => {
            format!("{label} is corrupt or not a redb database: {io}")
        }
        DatabaseError::Storage(StorageError::Io(io)) => format!("cannot open {label}: {io}"),
        other => format!("cannot open {label}: {other}"),
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl Shared {
    /// Opens (or creates) the database and checks or initialises the layout.
    fn open_db(&self) -> Result<Database, String> {
        let label = &self.label;
        // redb reports bad files as errors; the guard only turns a panic on a damaged file
        // into the same clear error instead of killing the process.
        let opened = catch_unwind(AssertUnwindSafe(|| match &self.source {
            Source::File(path) => Database::builder().set_cache_size(CACHE_BYTES).create(path),
            Source::Backend(factory) => match factory() {
                Ok(backend) => Database::builder()
                    .set_cache_size(CACHE_BYTES)
                    .create_with_backend(Boxed(backend)),
                Err(e) => Err(DatabaseError::Storage(StorageError::Io(e))),
            },
        }));
        let db = match opened {
            Ok(Ok(db)) => db,
            Ok(Err(e)) => return Err(describe_open_error(label, &e)),
            Err(_) => {
                return Err(format!(
                    "{label} is corrupt (the database reader failed on it)"
                ));
            }
        };
        check_layout(&db).map_err(|m| format!("{label}: {m}"))?;
        Ok(db)
    }

    /// Runs a read on the current database.
    fn read<T>(
        &self,
        op: &'static str,
        f: impl FnOnce(&Database) -> DbResult<T>,
    ) -> Result<T, StoreError> {
        let guard = self
            .db
            .read()
            .map_err(|_| store_error(op, "internal lock poisoned"))?;
        let Some(db) = guard.as_ref() else {
            return Err(store_error(
                op,
                format!(
                    "{} is unavailable after an I/O error (reopen pending)",
                    self.label
                ),
            ));
        };
        f(db).map_err(|e| {
            if is_io(&e) {
                self.broken.store(true, Ordering::Release);
            }
            store_error(op, format!("{}: {e}", self.label))
        })
    }

    /// Reopens the database after an I/O error. Returns whether it is usable.
    fn reopen(&self) -> Result<(), String> {
        let mut guard = self
            .db
            .write()
            .map_err(|_| "internal lock poisoned".to_string())?;
        // Close the failed instance first: redb locks the file per open instance.
        *guard = None;
        let db = self.open_db()?;
        *guard = Some(db);
        self.broken.store(false, Ordering::Release);
        tracing::info!(store = "embedded", path = %self.label, "store reopened after an I/O error");
        Ok(())
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
}

/// Whether an error means the open database must be reopened.
fn is_io(e: &DbError) -> bool {
    matches!(*e.0, redb::Error::Io(_) | redb::Error::PreviousIo)
}

/// Creates the tables of a fresh file, or checks that an existing file is ours.
fn check_layout(db: &Database) -> Result<(), String> {
    let txn = db.begin_write().map_err(|e| e.to_string())?;
    let existing: Vec<String> = txn
        .list_tables()
        .map_err(|e| e.to_string())?
        .map(|t| t.name().to_string())
        .collect();
    let foreign: Vec<&String> = existing
        .iter()
        .filter(|n| !TABLES.contains(&n.as_str()))
        .collect();
    if !foreign.is_empty() {
        return Err(format!(
            "not a shuangkou store (unknown tables: {})",
            foreign
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    {
        let mut meta = txn.open_table(META).map_err(|e| e.to_string())?;
        let schema = meta
            .get("schema")
            .map_err(|e| e.to_string())?
            .map(|v| v.value());
        match schema {
            Some(SCHEMA_VERSION) => {}
            Some(v) => {
                return Err(format!(
                    "store layout version {v} is not supported (this build reads {SCHEMA_VERSION})"
                ));
            }
            None if existing.iter().any(|n| n != "shuangkou_meta") => {
                return Err("not a shuangkou store (no layout version)".into());
            }
            None => {
                meta.insert("schema", SCHEMA_VERSION)
                    .map_err(|e| e.to_string())?;
            }
        }
    }
    // Create every table so readers never meet a missing one.
    let created: DbResult<()> = (|| {
        txn.open_table(GAMES)?;
        txn.open_table(LOG)?;
        txn.open_table(LOG_LEN)?;
        txn.open_table(REQUESTS)?;
        txn.open_table(UNFINISHED)?;
        txn.open_table(FINISHED)?;
        Ok(())
    })();
    created.map_err(|e| e.to_string())?;
    txn.commit().map_err(|e| e.to_string())
}

/// Applies a batch in one transaction and commits it durably.
fn apply(db: &Database, batch: &[Op]) -> DbResult<Vec<Outcome>> {
    let mut txn = db.begin_write()?;
    txn.set_durability(Durability::Immediate);
    let mut outcomes = Vec::with_capacity(batch.len());
    {
        let mut games = txn.open_table(GAMES)?;
        let mut log = txn.open_table(LOG)?;
        let mut lens = txn.open_table(LOG_LEN)?;
        let mut requests = txn.open_table(REQUESTS)?;
        let mut unfinished = txn.open_table(UNFINISHED)?;
        let mut finished = txn.open_table(FINISHED)?;
        for op in batch {
            let outcome = match op {
                Op::Create { record, .. } => {
                    let platform = record.platform.as_deref();
                    let existing = match &record.request_id {
                        Some(rid) => requests
                            .get((platform, rid.as_str()))?
                            .map(|v| v.value().to_string()),
                        None => None,
                    };
                    if let Some(existing) = existing {
                        Outcome::Created(Ok(Created::Existing(existing)))
                    } else if games.get(record.id.as_str())?.is_some() {
                        Outcome::Created(Err(format!("game {} exists", record.id)))
                    } else {
                        let id = record.id.as_str();
                        let rid = record.request_id.as_deref();
                        games.insert(id, (platform, rid, record.body.as_slice()))?;
                        lens.insert(id, 0)?;
                        unfinished.insert(id, ())?;
                        if let Some(rid) = rid {
                            requests.insert((platform, rid), id)?;
                        }
                        Outcome::Created(Ok(Created::New))
                    }
                }
                Op::Append { id, entry, .. } => {
                    let current = lens.get(id.as_str())?.map(|v| v.value());
                    match current {
                        None => Outcome::Appended(Err(format!("no game {id}"))),
                        Some(current) if entry.seq != current + 1 => {
                            Outcome::Appended(Ok(Appended::Conflict { current }))
                        }
                        Some(_) => {
                            log.insert((id.as_str(), entry.seq), entry.body.as_slice())?;
                            lens.insert(id.as_str(), entry.seq)?;
                            Outcome::Appended(Ok(Appended::Ok))
                        }
                    }
                }
                Op::Finish { id, .. } => {
                    if unfinished.remove(id.as_str())?.is_some() {
                        finished.insert(id.as_str(), now_secs())?;
                    }
                    Outcome::Done
                }
                Op::Sync { .. } => Outcome::Done,
            };
            outcomes.push(outcome);
        }
    }
    txn.commit()?;
    Ok(outcomes)
}

/// The writer thread: batches queued writes into one durable commit each.
fn run_writer(shared: Arc<Shared>, mut queue: mpsc::Receiver<Op>) {
    let mut batch: Vec<Op> = Vec::with_capacity(MAX_BATCH);
    while let Some(first) = queue.blocking_recv() {
        batch.push(first);
        while batch.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(op) => batch.push(op),
                Err(_) => break,
            }
        }
        commit_batch(&shared, &mut batch);
    }
}

fn commit_batch(shared: &Shared, batch: &mut Vec<Op>) {
    if shared.broken.load(Ordering::Acquire) {
        if let Err(m) = shared.reopen() {
            tracing::warn!(store = "embedded", error = %m, "store still unavailable");
            let message = format!("store unavailable: {m}");
            batch.drain(..).for_each(|op| op.fail(&message));
            return;
        }
    }
    let result = match shared.db.read() {
        Ok(guard) => match guard.as_ref() {
            Some(db) => apply(db, batch).map_err(|e| {
                if is_io(&e) {
                    shared.broken.store(true, Ordering::Release);
                }
                format!("{}: {e}", shared.label)
            }),
            None => {
                shared.broken.store(true, Ordering::Release);
                Err(format!("{} is unavailable (reopen pending)", shared.label))
            }
        },
        Err(_) => Err("internal lock poisoned".to_string()),
    };
    match result {
        Ok(outcomes) => {
            shared.commits.fetch_add(1, Ordering::Relaxed);
            shared
                .committed_ops
                .fetch_add(batch.len() as u64, Ordering::Relaxed);
            for (op, outcome) in batch.drain(..).zip(outcomes) {
                reply(shared, op, outcome);
            }
        }
        Err(m) => {
            tracing::warn!(
                store = "embedded",
                ops = batch.len(),
                error = %m,
                "commit failed; every write of the batch gets an error"
            );
            let message = format!("commit failed (outcome unknown): {m}");
            batch.drain(..).for_each(|op| op.fail(&message));
            if shared.broken.load(Ordering::Acquire) {
                // Try at once, so readers recover without waiting for the next write.
                if let Err(m) = shared.reopen() {
                    tracing::warn!(store = "embedded", error = %m, "reopen after I/O error failed");
                }
            }
        }
    }
}

/// Answers one committed operation.
fn reply(shared: &Shared, op: Op, outcome: Outcome) {
    match (op, outcome) {
        (Op::Create { reply, .. }, Outcome::Created(r)) => {
            let _ = reply.send(r.map_err(|m| store_error("create", m)));
        }
        (Op::Append { id, entry, reply }, Outcome::Appended(r)) => {
            if r == Ok(Appended::Ok) {
                shared.notify(&id, entry.seq);
            }
            let _ = reply.send(r.map_err(|m| store_error("append", m)));
        }
        (Op::Finish { id, reply }, _) => {
            shared.drop_watchers(&id);
            let _ = reply.send(Ok(()));
        }
        (Op::Sync { reply, .. }, _) => {
            let _ = reply.send(Ok(()));
        }
        (op, _) => op.fail("internal error: outcome mismatch"),
    }
}

impl EmbeddedStore {
    /// Opens (creating if needed) the store in the data directory `dir`. A corrupt or foreign
    /// `shuangkou.redb` is a clear error naming the file.
    pub fn open(dir: impl AsRef<Path>) -> Result<EmbeddedStore, StoreError> {
        let dir = dir.as_ref();
        std::fs::create_dir_all(dir).map_err(|e| {
            store_error(
                "open",
                format!("cannot create data directory {}: {e}", dir.display()),
            )
        })?;
        let path = dir.join(FILE_NAME);
        let label = path.display().to_string();
        EmbeddedStore::start(label, Source::File(path))
    }

    /// Opens the store on backends made by `factory` (called again on each reopen after an I/O
    /// error). For fault-injection tests; `label` names the store in errors.
    pub fn open_with_backend(
        label: &str,
        factory: BackendFactory,
    ) -> Result<EmbeddedStore, StoreError> {
        EmbeddedStore::start(label.to_string(), Source::Backend(factory))
    }

    fn start(label: String, source: Source) -> Result<EmbeddedStore, StoreError> {
        let mut shared = Shared {
            label,
            source,
            db: RwLock::new(None),
            broken: AtomicBool::new(false),
            watchers: Mutex::new(Watchers {
                map: HashMap::new(),
                prune_at: 1024,
            }),
            commits: AtomicU64::new(0),
            committed_ops: AtomicU64::new(0),
        };
        let db = shared.open_db().map_err(|m| store_error("open", m))?;
        shared.db = RwLock::new(Some(db));
        let shared = Arc::new(shared);
        let (queue, rx) = mpsc::channel(QUEUE);
        let writer_shared = Arc::clone(&shared);
        let writer = std::thread::Builder::new()
            .name("shuangkou-store-writer".into())
            .spawn(move || run_writer(writer_shared, rx))
            .map_err(|e| store_error("open", format!("cannot start the writer thread: {e}")))?;
        tracing::info!(store = "embedded", path = %shared.label, "store opened");
        Ok(EmbeddedStore {
            shared,
            queue: Some(queue),
            writer: Some(writer),
        })
    }

    /// The database file (or backend label).
    pub fn path(&self) -> &str {
        &self.shared.label
    }

    /// Transactions committed so far and the operations they carried: with concurrent writers
    /// the second is larger (group commit).
    pub fn commit_stats(&self) -> (u64, u64) {
        (
            self.shared.commits.load(Ordering::Relaxed),
            self.shared.committed_ops.load(Ordering::Relaxed),
        )
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
        queue
            .send(make(tx))
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
        f: impl FnOnce(&Database) -> DbResult<T> + Send + 'static,
    ) -> Result<T, StoreError> {
        let shared = Arc::clone(&self.shared);
        tokio::task::spawn_blocking(move || shared.read(op, f))
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
        self.read("load", move |db| {
            let txn = db.begin_read()?;
            let games = txn.open_table(GAMES)?;
            let Some(game) = games.get(id.as_str())? else {
                return Ok(None);
            };
            let (platform, request_id, body) = game.value();
            let record = GameRecord {
                id: id.clone(),
                platform: platform.map(str::to_string),
                request_id: request_id.map(str::to_string),
                body: body.to_vec(),
            };
            let entries = read_entries(&txn, &id, 0)?;
            Ok(Some((record, entries)))
        })
        .await
    }

    pub async fn entries_after(&self, id: &str, after: u64) -> Result<Vec<LogEntry>, StoreError> {
        let id = id.to_string();
        self.read("entries_after", move |db| {
            let txn = db.begin_read()?;
            read_entries(&txn, &id, after)
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
        self.read("unfinished", |db| {
            let txn = db.begin_read()?;
            let table = txn.open_table(UNFINISHED)?;
            let mut ids = Vec::new();
            for row in table.iter()? {
                let (id, _) = row?;
                ids.push(id.value().to_string());
            }
            Ok(ids)
        })
        .await
    }

    pub async fn finish(&self, id: &str) -> Result<(), StoreError> {
        let id = id.to_string();
        self.submit("finish", |reply| Op::Finish { id, reply })
            .await
    }

    /// Healthy if the database is open and readable; while it is unavailable after an I/O
    /// error, asks the writer to retry the reopen.
    pub async fn ping(&self) -> Result<(), StoreError> {
        if self.writer.as_ref().is_none_or(|w| w.is_finished()) {
            return Err(store_error("ping", "store writer thread stopped"));
        }
        if self.shared.broken.load(Ordering::Acquire) {
            self.submit("ping", |reply| Op::Sync { op: "ping", reply })
                .await?;
        }
        self.read("ping", |db| {
            let txn = db.begin_read()?;
            txn.open_table(META)?;
            Ok(())
        })
        .await
    }

    /// Waits until every write queued before it is committed (they are durable once answered, so
    /// this is only an ordering barrier at shutdown).
    pub async fn flush(&self) -> Result<(), StoreError> {
        self.submit("flush", |reply| Op::Sync { op: "flush", reply })
            .await
    }
}

/// The log entries of `id` after `after`, in order.
fn read_entries(txn: &redb::ReadTransaction, id: &str, after: u64) -> DbResult<Vec<LogEntry>> {
    let log = txn.open_table(LOG)?;
    let mut entries = Vec::new();
    let Some(from) = after.checked_add(1) else {
        return Ok(entries);
    };
    for row in log.range((id, from)..=(id, u64::MAX))? {
        let (key, body) = row?;
        entries.push(LogEntry {
            seq: key.value().1,
            body: body.value().to_vec(),
        });
    }
    Ok(entries)
}

impl Drop for EmbeddedStore {
    fn drop(&mut self) {
        // Closing the queue lets the writer commit what is queued and exit; joining it releases
        // the file before a reopen in the same process.
        self.queue.take();
        if let Some(writer) = self.writer.take() {
            if writer.join().is_err() {
                tracing::warn!(store = "embedded", "store writer thread panicked");
            }
        }
    }
}
