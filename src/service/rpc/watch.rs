//! WatchGame: a stream of a game's events as the caller may see them, from a seq or a cursor on,
//! until the match is over, the client goes away or the server drains (UNAVAILABLE, "resume from
//! your last cursor elsewhere"). One task per stream; it wakes on this process's notifier and
//! the store's feed (plays on other replicas), or polls a shared store without a feed.
//!
//! A seat token's stream keeps its player connected (`presence`): the stream holds a
//! [`presence::StreamGuard`] while it lives, and after every batch a player the game has as
//! disconnected (a disconnect logged by another replica) is reconnected.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;
use tokio_stream::Stream;
use tonic::Status;

use super::rejected;
use crate::game::Viewer;
use crate::service::access::{self, Caller};
use crate::service::app::App;
use crate::service::pb;
use crate::service::presence;
use crate::service::session::Session;
use crate::service::status::{ApiError, Reason};
use crate::service::wire;

/// How often a watcher re-reads a shared store's log when it has no notification feed.
const WATCH_POLL: Duration = Duration::from_secs(1);

/// The longest cursor accepted.
const MAX_CURSOR: usize = 64;

pub type EventStream = Pin<Box<dyn Stream<Item = Result<pb::GameEvent, Status>> + Send>>;

/// The last event a watcher has: (seq, index among the events of that seq); `None` = nothing
/// yet (from the beginning: the creation events, seq 0, come first).
type Position = Option<(u64, usize)>;

/// The events of the action at `seq` as `viewer` sees them.
fn action(live: &Session, seq: u64, viewer: Viewer) -> Vec<pb::GameEvent> {
    match live.action_at(seq) {
        Ok((at, events)) => wire::action_events(live.game(), seq, at, events, viewer),
        Err(_) => Vec::new(),
    }
}

/// Every event after `pos`, in order.
fn after(live: &Session, pos: Position, viewer: Viewer) -> Vec<pb::GameEvent> {
    let from = pos.map_or(0, |(seq, _)| seq);
    (from..=live.seq())
        .flat_map(|seq| {
            action(live, seq, viewer)
                .into_iter()
                .enumerate()
                .filter(move |(i, _)| pos.is_none_or(|(s, n)| seq > s || *i > n))
                .map(|(_, e)| e)
        })
        .collect()
}

/// Where a request starts, checked against the game: a cursor or seq beyond its last event is
/// `CURSOR_OUT_OF_RANGE` (never a silent wait), a malformed cursor `BAD_REQUEST`.
fn start(live: &Session, req: &pb::WatchGameRequest, viewer: Viewer) -> Result<Position, ApiError> {
    let beyond = |what: String| {
        ApiError::new(
            Reason::CursorOutOfRange,
            format!(
                "{what} is beyond the game (seq {}); resume from GetState's seq",
                live.seq()
            ),
        )
        .with("current_seq", live.seq().to_string())
    };
    if req.cursor.is_empty() {
        if req.from_seq > live.seq() {
            return Err(beyond(format!("from_seq {}", req.from_seq)));
        }
        return Ok((req.from_seq > 0).then_some((req.from_seq, usize::MAX)));
    }
    let parsed = (req.cursor.len() <= MAX_CURSOR)
        .then(|| wire::parse_cursor(&req.cursor))
        .flatten();
    let Some((seq, index)) = parsed else {
        return Err(ApiError::new(
            Reason::BadRequest,
            "cursor is not one a GameEvent carried (`seq.index`, at most 64 bytes)",
        ));
    };
    if seq > live.seq() || index >= action(live, seq, viewer).len() {
        return Err(beyond(format!("cursor {}", req.cursor)));
    }
    Ok(Some((seq, index)))
}

/// Opens the stream of `req.game_id` for `caller`.
pub async fn open(
    app: Arc<App>,
    caller: Caller,
    req: pb::WatchGameRequest,
) -> Result<EventStream, ApiError> {
    let (game, viewer) = access::authorize(app.games(), &caller, &req.game_id).await?;
    let guard = app.presence().open(&req.game_id, viewer)?;
    let (mut notify, mut pos) = {
        let live = app.games().current(&game).await?;
        (live.subscribe(), start(&live, &req, viewer)?)
    };
    let store = app.games().store();
    let mut store_notify = store.subscribe(&req.game_id);
    let (mut local_open, mut store_open) = (true, true);
    let shared = store.is_shared();
    let mut closing = app.streams_closing();
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<pb::GameEvent, Status>>(64);
    crate::metrics::watch_streams(1.0);
    tokio::spawn(async move {
        // Held while the stream lives: the player is connected (presence).
        let _guard = guard;
        loop {
            // Send everything after `pos`, then wait for news.
            let (batch, away) = match app.games().current(&game).await {
                Err(_) => (Vec::new(), None),
                Ok(live) => {
                    let away = match viewer {
                        Viewer::Player(p) if live.game().is_disconnected(p) => Some(p),
                        _ => None,
                    };
                    (after(&live, pos, viewer), away)
                }
            };
            for ev in batch {
                let index = wire::parse_cursor(&ev.cursor).map_or(0, |(_, i)| i);
                pos = Some((ev.seq, index));
                if tx.send(Ok(ev)).await.is_err() {
                    crate::metrics::watch_streams(-1.0);
                    return;
                }
            }
            // The player holds this stream: a disconnect logged elsewhere (or in the grace
            // race) is undone.
            if let Some(p) = away
                && let Err(e) = presence::reconnect(app.games(), &game, p).await
            {
                tracing::warn!(player = p.number(), error = %e, "logging a reconnect failed");
            }
            let finished = game.lock().await.finished_at(pos.map_or(0, |(seq, _)| seq));
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
                        "server shutting down; resume from your last cursor elsewhere",
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
