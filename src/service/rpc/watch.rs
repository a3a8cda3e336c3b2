//! WatchGame: a stream of a game's events as the caller may see them, from a seq on, until the
//! match is over, the client goes away or the server drains (UNAVAILABLE, "resume from your
//! last seq elsewhere"). One task per stream; it wakes on this process's notifier and the
//! store's feed (plays on other replicas), or polls a shared store without a feed.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;
use tokio_stream::Stream;
use tonic::Status;

use super::rejected;
use crate::service::access::{self, Caller};
use crate::service::app::App;
use crate::service::pb;
use crate::service::status::{ApiError, Reason};
use crate::service::wire;

/// How often a watcher re-reads a shared store's log when it has no notification feed.
const WATCH_POLL: Duration = Duration::from_secs(1);

pub type EventStream = Pin<Box<dyn Stream<Item = Result<pb::GameEvent, Status>> + Send>>;

/// Opens the stream of `req.game_id` for `caller`.
pub async fn open(
    app: Arc<App>,
    caller: Caller,
    req: pb::WatchGameRequest,
) -> Result<EventStream, ApiError> {
    let (game, viewer) = access::authorize(app.games(), &caller, &req.game_id).await?;
    let mut notify = {
        let live = game.lock().await;
        live.subscribe()
    };
    let store = app.games().store();
    let mut store_notify = store.subscribe(&req.game_id);
    let (mut local_open, mut store_open) = (true, true);
    let shared = store.is_shared();
    let mut closing = app.streams_closing();
    // The last seq sent; `None` until something is sent when watching from the beginning
    // (`from_seq` 0 includes the creation events, seq 0, exactly once).
    let mut next = (req.from_seq > 0).then_some(req.from_seq);
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<pb::GameEvent, Status>>(64);
    crate::metrics::watch_streams(1.0);
    tokio::spawn(async move {
        loop {
            // Send everything after `next`, then wait for news.
            let batch: Vec<pb::GameEvent> = match app.games().current(&game).await {
                Err(_) => Vec::new(),
                Ok(live) => live
                    .events_after(next)
                    .map(|(seq, at, e)| wire::event(live.game(), seq, at, e, viewer))
                    .collect(),
            };
            for ev in batch {
                next = Some(next.map_or(ev.seq, |n| n.max(ev.seq)));
                if tx.send(Ok(ev)).await.is_err() {
                    crate::metrics::watch_streams(-1.0);
                    return;
                }
            }
            let finished = game.lock().await.finished_at(next.unwrap_or(0));
            if finished {
                break;
            }
            tokio::select! {
                r = notify.recv(), if local_open => {
                    local_open = !matches!(r, Err(RecvError::Closed));
                }
                // A closed receiver (the memory store's for a game it does not hold, or a
                // failed subscribe) answers at once, forever: stop selecting on it instead
                // of spinning (and, with a shared store, re-reading the log) in this loop.
                r = store_notify.recv(), if store_open => {
                    store_open = !matches!(r, Err(RecvError::Closed));
                }
                // Without the store's feed, plays made on other replicas are polled for.
                _ = tokio::time::sleep(WATCH_POLL), if shared && !store_open => {}
                _ = closing.changed() => {
                    let status = ApiError::new(
                        Reason::Unavailable,
                        "server shutting down; resume from your last seq elsewhere",
                    );
                    let _ = tx.send(Err(rejected(status))).await;
                    break;
                }
                _ = tx.closed() => break,
            }
        }
        crate::metrics::watch_streams(-1.0);
    });
    Ok(Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx)))
}
