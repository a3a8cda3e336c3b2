//! A game rebuilt from the store, reading only what the rebuild needs: the record and the log's
//! length (`Store::head`), the snapshots before the last backlog's worth of entries
//! (`store::snapshots`), and the log's entries from the newest of them on (its own entry checks
//! its recorded hash). The replay (from the newest usable snapshot: `LiveGame::restore_from_snapshots`)
//! runs on a blocking thread, so a long match's rebuild never occupies an async worker. When the
//! newest snapshot is not usable, the entries from an older one are read; when none is, the whole
//! log (`Store::load`).

use std::sync::Arc;

use super::LiveGame;
use crate::service::restored::Restored;
use crate::service::status::{ApiError, Reason};
use crate::store::{GameRecord, Store};

/// Game `id` rebuilt from `store` (`None`: no such game). `keep`: the actions the session's
/// backlog keeps (the snapshot is taken from before them, so the rebuilt backlog is full).
pub async fn rebuild<G: LiveGame>(
    store: &Store,
    registry: &Arc<G::Registry>,
    id: &str,
    keep: usize,
    no_timers: bool,
) -> Result<Option<G>, ApiError> {
    let Some((record, len)) = store.head(id).await? else {
        return Ok(None);
    };
    // The snapshots before the last `keep` entries of the log as long as it was read (entries
    // appended since come with the tail: the tail's end, not `len`, is the log's end).
    let before = len.saturating_sub(keep as u64);
    let mut snapshots = if before == 0 {
        Vec::new()
    } else {
        // Only a shortcut: without them the whole log is replayed.
        store.snapshots(id, before).await.unwrap_or_default()
    };
    let record = Arc::new(record);
    let mut from = snapshots.last().map_or(0, |s| s.seq.saturating_sub(1));
    loop {
        let tail = store.entries_after(id, from).await?;
        let (restored, kept) = blocking(registry, &record, move |registry, record| {
            let r = G::restore_from_snapshots(
                registry, record, from, &tail, &snapshots, keep, no_timers,
            );
            (r, snapshots)
        })
        .await?;
        snapshots = kept;
        match restored? {
            Restored::Game(live) => return Ok(Some(live)),
            // An older snapshot is the newest usable one: the entries from it on.
            Restored::EntriesAfter(after) if after < from => {
                snapshots.truncate(snapshots.partition_point(|s| s.seq <= after + 1));
                from = after;
            }
            Restored::EntriesAfter(_) => {
                return whole::<G>(store, registry, id, keep, 0, no_timers).await;
            }
            Restored::WholeLog { covered } => {
                return whole::<G>(store, registry, id, keep, covered, no_timers).await;
            }
        }
    }
}

/// The whole log read and replayed (no snapshot serves).
async fn whole<G: LiveGame>(
    store: &Store,
    registry: &Arc<G::Registry>,
    id: &str,
    keep: usize,
    covered: u32,
    no_timers: bool,
) -> Result<Option<G>, ApiError> {
    let Some((record, log)) = store.load(id).await? else {
        return Ok(None);
    };
    let record = Arc::new(record);
    blocking(registry, &record, move |registry, record| {
        G::restore_whole(registry, record, &log, keep, covered, no_timers)
    })
    .await?
    .map(Some)
}

/// `f` on a blocking thread.
async fn blocking<R: Send + Sync + 'static, T: Send + 'static>(
    registry: &Arc<R>,
    record: &Arc<GameRecord>,
    f: impl FnOnce(&R, &GameRecord) -> T + Send + 'static,
) -> Result<T, ApiError> {
    let (registry, record) = (Arc::clone(registry), Arc::clone(record));
    tokio::task::spawn_blocking(move || f(&registry, &record))
        .await
        .map_err(|e| ApiError::new(Reason::Unavailable, format!("the rebuild failed: {e}")))
}
