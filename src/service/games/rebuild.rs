//! A game rebuilt from the store: its record, its log and the snapshots before the last
//! backlog's worth of entries (`store::snapshots`), read here; the replay (from the newest usable
//! snapshot, else from the creation: `LiveGame::restore_from_snapshots`) on a blocking thread, so a long
//! match's rebuild never occupies an async worker.

use std::sync::Arc;

use super::LiveGame;
use crate::service::status::{ApiError, Reason};
use crate::store::Store;

/// Game `id` rebuilt from `store` (`None`: no such game). `keep`: the actions the session's
/// backlog keeps (the snapshot is taken from before them, so the rebuilt backlog is full).
pub async fn rebuild<G: LiveGame>(
    store: &Store,
    registry: &Arc<G::Registry>,
    id: &str,
    keep: usize,
    no_timers: bool,
) -> Result<Option<G>, ApiError> {
    let Some((record, log)) = store.load(id).await? else {
        return Ok(None);
    };
    // The snapshots before the last `keep` entries (`Session::restore_from` uses those only).
    let before = (log.len() as u64).saturating_sub(keep as u64);
    let snapshots = if before == 0 {
        Vec::new()
    } else {
        // Only a shortcut: without them the whole log is replayed.
        store.snapshots(id, before).await.unwrap_or_default()
    };
    let registry = Arc::clone(registry);
    tokio::task::spawn_blocking(move || {
        G::restore_from_snapshots(&registry, &record, &log, &snapshots, keep, no_timers)
    })
    .await
    .map_err(|e| ApiError::new(Reason::Unavailable, format!("the rebuild failed: {e}")))?
    .map(Some)
}
