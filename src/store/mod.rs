//! The store: owns every game's durable record and action log.
//!
//! A game is stored as its creation record (variant and pinned version, seed, options, players,
//! token digests: everything needed to rebuild it) plus its append-only action log; the state is
//! rebuilt by replaying the log and verified against the state hashes recorded with each entry.
//! The store never interprets either: both are opaque bytes (JSON written by the service), so the
//! store depends on no game type.
//!
//! `append` is compare-and-append: it succeeds only if the log has exactly `expected_len`
//! entries, which is how one writer per game is guaranteed across replicas.
//!
//! Backends: [`memory::MemoryStore`] (tests, `--store memory`). The durable embedded and Redis
//! backends plug in as further variants of [`Store`].

pub mod memory;

use std::time::Instant;

use tokio::sync::broadcast;

/// A game's creation record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameRecord {
    /// The game id.
    pub id: String,
    /// The platform that created it (`None` in open mode).
    pub platform: Option<String>,
    /// The create request's idempotency key, if any.
    pub request_id: Option<String>,
    /// Everything else, as written by the service (JSON).
    pub body: Vec<u8>,
}

/// One entry of a game's action log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogEntry {
    /// 1-based position in the log; entry `n` makes the game's seq `n`.
    pub seq: u64,
    /// The action and what the service needs to answer a retry (JSON).
    pub body: Vec<u8>,
}

/// Result of a create.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Created {
    /// The record was stored.
    New,
    /// A game with the same platform and request id exists: its id.
    Existing(String),
}

/// Result of a compare-and-append.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Appended {
    /// The entry is durable.
    Ok,
    /// The log did not have the expected length; it has `current` entries.
    Conflict { current: u64 },
}

/// A store failure. The operation did not happen (or its outcome is unknown and the caller must
/// not acknowledge it).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("store {op} failed: {message}")]
pub struct StoreError {
    pub op: &'static str,
    pub message: String,
}

/// The configured store.
pub enum Store {
    Memory(memory::MemoryStore),
}

impl Store {
    /// A short name for logs and metrics (`memory`, `embedded`, `redis`).
    pub fn kind(&self) -> &'static str {
        match self {
            Store::Memory(_) => "memory",
        }
    }

    /// Stores a new game record (idempotent on platform + request id).
    pub async fn create(&self, record: &GameRecord) -> Result<Created, StoreError> {
        let t = Instant::now();
        let r = match self {
            Store::Memory(s) => s.create(record),
        };
        self.observe("create", t, r.is_ok());
        r
    }

    /// A game's record and its whole log.
    pub async fn load(&self, id: &str) -> Result<Option<(GameRecord, Vec<LogEntry>)>, StoreError> {
        let t = Instant::now();
        let r = match self {
            Store::Memory(s) => s.load(id),
        };
        self.observe("load", t, r.is_ok());
        r
    }

    /// The log entries after `after_seq`.
    pub async fn entries_after(&self, id: &str, after_seq: u64) -> Result<Vec<LogEntry>, StoreError> {
        let t = Instant::now();
        let r = match self {
            Store::Memory(s) => s.entries_after(id, after_seq),
        };
        self.observe("entries_after", t, r.is_ok());
        r
    }

    /// Appends `entry` if the log has exactly `entry.seq - 1` entries. On `Ok` the entry is
    /// durable (as durable as the backend is).
    pub async fn append(&self, id: &str, entry: &LogEntry) -> Result<Appended, StoreError> {
        let t = Instant::now();
        let r = match self {
            Store::Memory(s) => s.append(id, entry),
        };
        self.observe("append", t, r.is_ok());
        r
    }

    /// New seqs of a game as they are appended (by any replica sharing the store).
    pub fn subscribe(&self, id: &str) -> broadcast::Receiver<u64> {
        match self {
            Store::Memory(s) => s.subscribe(id),
        }
    }

    /// Ids of the games not finished.
    pub async fn unfinished(&self) -> Result<Vec<String>, StoreError> {
        match self {
            Store::Memory(s) => Ok(s.unfinished()),
        }
    }

    /// Marks a game finished (archived; backends may expire it after a retention period).
    pub async fn finish(&self, id: &str) -> Result<(), StoreError> {
        let t = Instant::now();
        let r = match self {
            Store::Memory(s) => {
                s.finish(id);
                Ok(())
            }
        };
        self.observe("finish", t, r.is_ok());
        r
    }

    /// Checks that the store is reachable.
    pub async fn ping(&self) -> Result<(), StoreError> {
        match self {
            Store::Memory(_) => Ok(()),
        }
    }

    /// Makes everything acknowledged durable (at shutdown).
    pub async fn flush(&self) -> Result<(), StoreError> {
        match self {
            Store::Memory(_) => Ok(()),
        }
    }

    fn observe(&self, op: &'static str, start: Instant, ok: bool) {
        crate::metrics::store_op(self.kind(), op, start.elapsed().as_secs_f64(), ok);
    }
}
