//! The store: owns every game's durable record and action log.
//!
//! A game is stored as its creation record (variant and pinned version, seed, options, players,
//! token digests: everything needed to rebuild it) plus its append-only action log; the state is
//! rebuilt by replaying the log and verified against the state hashes recorded with each entry.
//! The store never interprets either: both are opaque bytes (JSON written by the service), so the
//! store depends on no game type.
//!
//! The variant script a record pins ([`PinnedScript`], ≈ 17 KB of text) is not in the record's
//! body: every store keeps one copy per version in its script table, the create record refers to
//! it by its hash, and a load brings it back with the record. Records written before the table
//! (the script text inside the body, `script: None`) still load as they are.
//!
//! `append` is compare-and-append: it succeeds only if the log has exactly `expected_len`
//! entries, which is how one writer per game is guaranteed across replicas.
//!
//! Backends, chosen by [`Store::open`]:
//! - [`memory::MemoryStore`] (`memory`): nothing survives a restart; tests and benchmarks;
//! - [`embedded::EmbeddedStore`] (a directory path): the durable default, an append-ordered
//!   journal with group commit (no reply before fsync) and compaction of finished games;
//! - [`redis::RedisStore`] (`redis://host:port/db`): several replicas sharing one Redis, with
//!   watch notifications across replicas.

pub mod embedded;
pub mod lease;
pub mod memory;
pub mod redis;
pub mod shard;
pub mod snapshots;

pub use snapshots::Snapshot;

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::broadcast;

/// Runs one operation on whichever backend this is, timed and observed under `$op`: `$memory`
/// for the memory store (it answers at once), `$awaited` awaited for the embedded and the Redis
/// store (the same call: both have it with the same signature).
macro_rules! on_backend {
    ($store:ident, $op:expr, |$m:pat_param| $memory:expr, |$s:ident| $awaited:expr) => {{
        let t = Instant::now();
        let r = match $store {
            Store::Memory($m) => $memory,
            Store::Embedded($s) => $awaited.await,
            Store::Redis($s) => $awaited.await,
        };
        $store.observe($op, t, &r);
        r
    }};
}

/// Which log entries a read returns: those after seq `after`, at most `limit` of them, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogPage {
    /// The seq the page starts after (0: from the first entry).
    pub after: u64,
    /// The most entries it holds (`usize::MAX`: to the log's end).
    pub limit: usize,
}

impl LogPage {
    /// Every entry after seq `after`.
    pub fn all_after(after: u64) -> LogPage {
        LogPage {
            after,
            limit: usize::MAX,
        }
    }
}

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
    /// The variant script the game pins, kept once per `hash` in the store's script table
    /// (`None`: the record carries no reference, as before the table).
    pub script: Option<PinnedScript>,
}

/// A variant script at one version: the text and the content hash that names it. The store
/// treats both as opaque and keeps the first text stored under a hash (the service's version
/// hashes are content hashes, checked again when a game is rebuilt).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PinnedScript {
    pub hash: String,
    pub text: Arc<str>,
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

/// Result of [`Store::append_or_read`]: a compare-and-append that brings back what a catch-up
/// read would have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AppendOrRead {
    /// The entry is durable.
    Appended,
    /// The log did not have `entry.seq - 1` entries; it has `current`, and `entries` are the
    /// ones after `entry.seq - 1` (empty if the log is not that long).
    Behind {
        current: u64,
        entries: Vec<LogEntry>,
    },
}

/// A store failure. The operation did not happen (or its outcome is unknown and the caller must
/// not acknowledge it).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("store {op} failed: {message}")]
pub struct StoreError {
    pub op: &'static str,
    pub message: String,
}

/// Which backend a store is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StoreKind {
    Memory,
    Embedded,
    Redis,
}

impl StoreKind {
    /// A short name for logs and metrics (`memory`, `embedded`, `redis`).
    pub const fn name(self) -> &'static str {
        match self {
            StoreKind::Memory => "memory",
            StoreKind::Embedded => "embedded",
            StoreKind::Redis => "redis",
        }
    }
}

/// A kind equals its name (`store.kind() == "redis"`).
impl PartialEq<&str> for StoreKind {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

impl std::fmt::Display for StoreKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Settings of [`Store::open_with`] beyond the spec.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// How long the embedded store keeps finished games (`None`: for ever); see
    /// [`embedded::Options::finished_retention`]. The Redis store's is in its spec.
    pub finished_retention: Option<Duration>,
}

/// Parses a retention period: a whole number with a unit, `s`, `m`, `h` or `d` (`30d`).
pub fn parse_retention(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{text:?} is not a period such as 30d, 12h, 90m or 3600s"))?;
    let unit_secs = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => {
            return Err(format!(
                "{text:?}: the unit must be s, m, h or d (as in 30d)"
            ));
        }
    };
    n.checked_mul(unit_secs)
        .map(Duration::from_secs)
        .ok_or_else(|| format!("{text:?} is too long"))
}

/// The configured store.
pub enum Store {
    Memory(memory::MemoryStore),
    Embedded(embedded::EmbeddedStore),
    Redis(redis::RedisStore),
}

impl Store {
    /// Opens the store described by `spec` (the `--store` option):
    /// - `memory`: the in-memory store;
    /// - `redis://host:port/db` (or `rediss://`, `redis+unix://`, or
    ///   `redis+cluster://host:port,host:port` for a Redis Cluster), with optional query
    ///   parameters `retention_secs` (finished games' lifetime, default 7 days, 0 keeps them),
    ///   `timeout_ms` (deadline of each call, default 2000) and `prefix` (default `sk:`);
    /// - anything else: a data directory for the embedded store (created if missing).
    ///
    /// The Redis store connects lazily (check with [`Store::ping`]); the embedded store opens
    /// (and if needed repairs) its file here, on the blocking pool, so a corrupt file fails here.
    /// Must run inside a Tokio runtime.
    pub async fn open(spec: &str) -> Result<Store, StoreError> {
        Store::open_with(spec, Settings::default()).await
    }

    /// [`Store::open`] with `settings`.
    pub async fn open_with(spec: &str, settings: Settings) -> Result<Store, StoreError> {
        let spec = spec.trim();
        if spec == "memory" {
            return Ok(Store::Memory(memory::MemoryStore::new()));
        }
        if [
            "redis://",
            "rediss://",
            "redis+unix://",
            redis::CLUSTER_SCHEME,
        ]
        .iter()
        .any(|p| spec.starts_with(p))
        {
            return redis::RedisStore::open(spec).map(Store::Redis);
        }
        if spec.is_empty() {
            return Err(StoreError {
                op: "open",
                message: "empty store spec".into(),
            });
        }
        if let Some((scheme, _)) = spec.split_once("://") {
            return Err(StoreError {
                op: "open",
                message: format!(
                    "unknown store scheme {scheme}:// (use memory, a directory path or redis://)"
                ),
            });
        }
        let dir = spec.to_string();
        let options = embedded::Options {
            finished_retention: settings.finished_retention,
            ..embedded::Options::default()
        };
        tokio::task::spawn_blocking(move || embedded::EmbeddedStore::open_with(dir, options))
            .await
            .map_err(|e| StoreError {
                op: "open",
                message: format!("open task failed: {e}"),
            })?
            .map(Store::Embedded)
    }

    /// Whether other processes may append to the same games (Redis): then a cached game must be
    /// revalidated against the log (`entries_after` its seq) before it is acted on.
    pub fn is_shared(&self) -> bool {
        matches!(self, Store::Redis(_))
    }

    /// Which backend this is.
    pub fn kind(&self) -> StoreKind {
        match self {
            Store::Memory(_) => StoreKind::Memory,
            Store::Embedded(_) => StoreKind::Embedded,
            Store::Redis(_) => StoreKind::Redis,
        }
    }

    /// Stores a new game record (idempotent on platform + request id).
    pub async fn create(&self, record: &GameRecord) -> Result<Created, StoreError> {
        on_backend!(self, "create", |s| s.create(record), |s| s.create(record))
    }

    /// A game's record and its whole log.
    pub async fn load(&self, id: &str) -> Result<Option<(GameRecord, Vec<LogEntry>)>, StoreError> {
        on_backend!(self, "load", |s| s.load(id), |s| s.load(id))
    }

    /// A game's record and its log's length, without the log: what a rebuild from a snapshot
    /// reads first (then the snapshots before the length, then the entries from the newest).
    pub async fn head(&self, id: &str) -> Result<Option<(GameRecord, u64)>, StoreError> {
        on_backend!(self, "head", |s| s.head(id), |s| s.head(id))
    }

    /// Several games' records and logs (recovery), in the order of `ids`: one read task for all
    /// of them on the embedded store.
    pub async fn load_many(
        &self,
        ids: &[String],
    ) -> Vec<Result<Option<(GameRecord, Vec<LogEntry>)>, StoreError>> {
        let t = Instant::now();
        let r = match self {
            Store::Embedded(s) => s.load_many(ids).await,
            _ => {
                let mut all = Vec::with_capacity(ids.len());
                for id in ids {
                    all.push(self.load(id).await);
                }
                all
            }
        };
        let ok: Result<(), StoreError> = Ok(());
        self.observe("load_many", t, &ok);
        r
    }

    /// The log entries after `after_seq`.
    pub async fn entries_after(
        &self,
        id: &str,
        after_seq: u64,
    ) -> Result<Vec<LogEntry>, StoreError> {
        self.entries("entries_after", id, LogPage::all_after(after_seq))
            .await
    }

    /// At most `limit` log entries after `after_seq`, in order: a page, for readers that walk a
    /// long log with bounded memory (a WatchGame from an old seq, an idempotent retry of an old
    /// action); every backend reads that range only.
    pub async fn entries_page(
        &self,
        id: &str,
        after_seq: u64,
        limit: usize,
    ) -> Result<Vec<LogEntry>, StoreError> {
        let page = LogPage {
            after: after_seq,
            limit,
        };
        self.entries("entries_page", id, page).await
    }

    /// The entries of `page`, from whichever backend this is; `op` labels the read's metrics.
    async fn entries(
        &self,
        op: &'static str,
        id: &str,
        page: LogPage,
    ) -> Result<Vec<LogEntry>, StoreError> {
        on_backend!(self, op, |s| s.entries(id, page), |s| s.entries(id, page))
    }

    /// Appends `entry` if the log has exactly `entry.seq - 1` entries. On `Ok` the entry is
    /// durable (as durable as the backend is).
    pub async fn append(&self, id: &str, entry: &LogEntry) -> Result<Appended, StoreError> {
        on_backend!(self, "append", |s| s.append(id, entry), |s| s
            .append(id, entry))
    }

    /// [`Store::append`], returning on a conflict the entries after `entry.seq - 1` (what
    /// [`Store::entries_after`] would): on Redis in the same script call, one round trip per
    /// play whether or not another replica moved the game on.
    pub async fn append_or_read(
        &self,
        id: &str,
        entry: &LogEntry,
    ) -> Result<AppendOrRead, StoreError> {
        let t = Instant::now();
        let r = match self {
            Store::Redis(s) => s.append_or_read(id, entry).await,
            local => match local.append(id, entry).await? {
                Appended::Ok => Ok(AppendOrRead::Appended),
                Appended::Conflict { current } => {
                    let after = entry.seq.saturating_sub(1);
                    let entries = if after < current {
                        local.entries_after(id, after).await?
                    } else {
                        Vec::new()
                    };
                    Ok(AppendOrRead::Behind { current, entries })
                }
            },
        };
        self.observe("append_or_read", t, &r);
        r
    }

    /// New seqs of a game as they are appended (by any replica sharing the store).
    ///
    /// A value is the log length at or after an append. Receivers fetch
    /// [`Store::entries_after`] their own seq and must tolerate repeated or stale values (the
    /// Redis store re-sends the current length after it (re)subscribes, so that an append made
    /// while it was subscribing or reconnecting is not missed); on `Lagged`, fetch likewise.
    /// Subscribe before reading the log to miss nothing.
    pub fn subscribe(&self, id: &str) -> broadcast::Receiver<u64> {
        match self {
            Store::Memory(s) => s.subscribe(id),
            Store::Embedded(s) => s.subscribe(id),
            Store::Redis(s) => s.subscribe(id),
        }
    }

    /// The length of each of `ids`' logs, in order (0 for a game not in the store): what a
    /// recovery reads before choosing how to read each game. One read for all of them (one
    /// pipelined round trip on Redis).
    pub async fn log_lengths(&self, ids: &[String]) -> Result<Vec<u64>, StoreError> {
        on_backend!(self, "log_lengths", |s| s.log_lengths(ids), |s| s
            .log_lengths(ids))
    }

    /// Ids of the games not finished (the games to rebuild at start).
    pub async fn unfinished(&self) -> Result<Vec<String>, StoreError> {
        on_backend!(self, "unfinished", |s| Ok(s.unfinished()), |s| s
            .unfinished())
    }

    /// Ids of the games of `shard` not finished (what a replica owning that shard recovers):
    /// one read on Redis (the shard's own set); the others filter [`Store::unfinished`].
    pub async fn unfinished_in(&self, shard: shard::Shard) -> Result<Vec<String>, StoreError> {
        let t = Instant::now();
        let r = match self {
            Store::Redis(s) => s.unfinished_in(shard).await,
            local => local.unfinished().await.map(|ids| {
                ids.into_iter()
                    .filter(|id| shard::shard_of(id) == shard)
                    .collect()
            }),
        };
        self.observe("unfinished_in", t, &r);
        r
    }

    /// Marks a game finished (archived; backends may expire it after a retention period).
    pub async fn finish(&self, id: &str) -> Result<(), StoreError> {
        on_backend!(
            self,
            "finish",
            |s| {
                s.finish(id);
                Ok(())
            },
            |s| s.finish(id)
        )
    }

    /// Checks that the store is reachable (readiness); sets the `store_up` gauge.
    pub async fn ping(&self) -> Result<(), StoreError> {
        let r = on_backend!(self, "ping", |_| Ok(()), |s| s.ping());
        crate::metrics::store_up(self.kind().name(), r.is_ok());
        r
    }

    /// Makes everything acknowledged durable (at shutdown).
    pub async fn flush(&self) -> Result<(), StoreError> {
        on_backend!(self, "flush", |_| Ok(()), |s| s.flush())
    }

    /// Records latency and errors; logs failures (never record or entry bodies).
    fn observe<T>(&self, op: &'static str, start: Instant, r: &Result<T, StoreError>) {
        crate::metrics::store_op(
            self.kind().name(),
            op,
            start.elapsed().as_secs_f64(),
            r.is_ok(),
        );
        if let Err(e) = r {
            tracing::warn!(store = self.kind().name(), op, error = %e.message, "store operation failed");
        }
    }
}
