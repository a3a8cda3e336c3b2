//! Snapshots of a game's state, kept beside its log: opaque bytes at a seq (the service writes
//! one at each deal's end, `service::session::snapshot`), so a rebuild or a reader from an old
//! seq starts from the newest snapshot before where it must be and replays only the entries
//! after it.
//!
//! A snapshot is a cache of the log, never a source of truth: the service checks each one
//! against the state hash the log recorded at its seq and ignores one that fails. Losing one is
//! harmless, so a write is not made durable (no fsync) and [`Store::put_snapshot_later`] runs off
//! the caller's path (a failure is logged and counted, never reported to a player).
//!
//! Every backend keeps them its own way: the memory store in a map ([`SnapshotMap`]), the
//! embedded store in a file per game under its directory (`embedded::snapshots`), Redis in a
//! sorted set per game scored by seq (`redis::snapshots`).

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Instant;

use super::{Store, StoreError};

/// One snapshot: the seq of the state it holds and the bytes the service wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    pub seq: u64,
    pub body: Vec<u8>,
}

/// Largest snapshot body a store accepts (a bigger one is dropped: it is only a cache).
pub const MAX_SNAPSHOT_BYTES: usize = 1 << 20;

/// The memory store's snapshots: by game, by seq.
#[derive(Default)]
pub struct SnapshotMap {
    games: Mutex<HashMap<String, BTreeMap<u64, Vec<u8>>>>,
}

impl SnapshotMap {
    pub fn put(&self, id: &str, seq: u64, body: Vec<u8>) -> Result<(), StoreError> {
        let mut games = self.games.lock().map_err(|_| StoreError {
            op: "put_snapshot",
            message: "internal lock poisoned".into(),
        })?;
        games.entry(id.to_string()).or_default().insert(seq, body);
        Ok(())
    }

    pub fn at_or_before(&self, id: &str, seq: u64) -> Result<Vec<Snapshot>, StoreError> {
        let games = self.games.lock().map_err(|_| StoreError {
            op: "snapshots",
            message: "internal lock poisoned".into(),
        })?;
        Ok(games
            .get(id)
            .map(|s| {
                s.range(..=seq)
                    .map(|(&seq, body)| Snapshot {
                        seq,
                        body: body.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default())
    }
}

fn too_big(len: usize) -> StoreError {
    StoreError {
        op: "put_snapshot",
        message: format!("snapshot of {len} bytes over the {MAX_SNAPSHOT_BYTES}-byte limit"),
    }
}

impl Store {
    /// Stores the snapshot of game `id` at `seq` (replacing one at the same seq) and waits for
    /// it. Not durable: a snapshot lost in a crash is rebuilt from the log.
    pub async fn put_snapshot(&self, id: &str, seq: u64, body: Vec<u8>) -> Result<(), StoreError> {
        let t = Instant::now();
        let r = if body.len() > MAX_SNAPSHOT_BYTES {
            Err(too_big(body.len()))
        } else {
            match self {
                Store::Memory(s) => s.snapshots().put(id, seq, body),
                Store::Embedded(s) => s.put_snapshot(id, seq, body).await,
                Store::Redis(s) => s.put_snapshot(id, seq, body).await,
            }
        };
        self.observe("put_snapshot", t, &r);
        r
    }

    /// [`Store::put_snapshot`] without waiting: the write runs on its own task (the memory
    /// store's at once), after the caller has answered; a failure is logged and counted in the
    /// store's error metric. Needs a Tokio runtime for the embedded and Redis stores (without
    /// one the snapshot is dropped).
    pub fn put_snapshot_later(&self, id: &str, seq: u64, body: Vec<u8>) {
        let kind = self.kind().name();
        let done = move |t: Instant, r: Result<(), StoreError>| {
            crate::metrics::store_op(kind, "put_snapshot", t.elapsed().as_secs_f64(), r.is_ok());
            if let Err(e) = r {
                tracing::warn!(store = kind, error = %e.message, "storing a snapshot failed");
            }
        };
        let t = Instant::now();
        if body.len() > MAX_SNAPSHOT_BYTES {
            return done(t, Err(too_big(body.len())));
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            if let Store::Memory(s) = self {
                done(t, s.snapshots().put(id, seq, body));
            }
            return;
        };
        match self {
            Store::Memory(s) => done(t, s.snapshots().put(id, seq, body)),
            Store::Embedded(s) => {
                let write = s.snapshot_writer(id, seq, body);
                runtime.spawn_blocking(move || done(t, write()));
            }
            Store::Redis(s) => {
                let write = s.snapshot_writer(id, seq, body);
                runtime.spawn(async move { done(t, write.await) });
            }
        }
    }

    /// The snapshots of game `id` at or before `seq`, oldest first (none for a game without
    /// any, or an unknown one).
    pub async fn snapshots(&self, id: &str, seq: u64) -> Result<Vec<Snapshot>, StoreError> {
        let t = Instant::now();
        let r = match self {
            Store::Memory(s) => s.snapshots().at_or_before(id, seq),
            Store::Embedded(s) => s.snapshots(id, seq).await,
            Store::Redis(s) => s.snapshots(id, seq).await,
        };
        self.observe("snapshots", t, &r);
        r
    }
}
