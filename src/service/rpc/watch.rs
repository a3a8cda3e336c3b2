//! WatchGame: a stream of a game's events as the caller may see them, from a seq or a cursor on,
//! until the match is over, the client goes away or the server drains (UNAVAILABLE, "resume from
//! your last cursor elsewhere"). One task per stream; it wakes on this process's notifier and
//! the store's feed (plays on other replicas), or polls a shared store without a feed.
//!
//! A stream behind what the live game keeps (`backlog`: from an old seq or cursor, or a client
//! that read slowly) catches up from the store's log (`history`), a page at a time: the client's
//! pace bounds what the server holds for it: at most [`BUFFER`] events queued for the transport
//! ([`Watch`] counts them) and one page being sent, and the catch-up pages of all streams are
//! replayed at most one per core at a time (`App::catch_up_replays`).
//!
//! A seat token's stream keeps its player connected (`presence`): the stream holds a
//! [`crate::service::presence::StreamGuard`] while it lives, and after every batch a player the game has as
//! disconnected (a disconnect logged by another replica) is reconnected.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::sync::mpsc;
use tokio_stream::Stream;
use tonic::Status;

use super::rejected;
use super::wakeup::{Counted, Wakeups, send_all, settle};
use crate::game::Viewer;
use crate::service::access::{self, Caller};
use crate::service::app::App;
use crate::service::history::History;
use crate::service::log_pages::LogPages;
use crate::service::pb;
use crate::service::session::Session;
use crate::service::status::{ApiError, Reason};
use crate::service::wire;

/// The longest cursor accepted.
const MAX_CURSOR: usize = 64;

/// Events queued for one stream's transport (tonic's encoder, then HTTP/2) that it has not
/// taken yet: what a stream the client does not read holds beyond the page being sent.
pub const BUFFER: usize = 8;

pub type EventStream = Pin<Box<dyn Stream<Item = Result<pb::GameEvent, Status>> + Send>>;

type Item = Result<pb::GameEvent, Status>;

/// One WatchGame stream as the transport reads it: the events its task queued, at most
/// [`BUFFER`], and how many the transport took.
pub struct Watch {
    rx: mpsc::Receiver<Item>,
    taken: u64,
}

impl Watch {
    /// Events queued and not yet taken by the transport.
    pub fn queued(&self) -> usize {
        self.rx.len()
    }

    /// Events the stream's task has yielded so far: taken by the transport or queued.
    pub fn yielded(&self) -> u64 {
        self.taken + self.queued() as u64
    }
}

impl Stream for Watch {
    type Item = Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Item>> {
        let next = self.rx.poll_recv(cx);
        if let Poll::Ready(Some(_)) = next {
            self.taken += 1;
        }
        next
    }
}

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

/// Drops the events at or before `pos` (events in order, of one action or more).
fn keep_after(pos: Position, events: Vec<pb::GameEvent>) -> impl Iterator<Item = pb::GameEvent> {
    events.into_iter().filter(move |ev| {
        let index = wire::parse_cursor(&ev.cursor).map_or(0, |(_, i)| i);
        pos.is_none_or(|(s, n)| ev.seq > s || index > n)
    })
}

/// The first seq a stream at `pos` still needs events of.
fn needed(pos: Position) -> u64 {
    match pos {
        None => 0,
        Some((seq, usize::MAX)) => seq.saturating_add(1),
        Some((seq, _)) => seq,
    }
}

/// Every kept event after `pos`, in order (`pos` within the backlog).
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
    // An action older than the backlog is not re-derived to check the index: an index beyond
    // its events resumes at the next action.
    let kept = seq >= live.first_kept();
    if seq > live.seq() || (kept && index >= action(live, seq, viewer).len()) {
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
    Ok(Box::pin(watch(app, caller, req).await?))
}

/// Opens the stream of `req.game_id` for `caller`, as the transport reads it.
pub async fn watch(
    app: Arc<App>,
    caller: Caller,
    req: pb::WatchGameRequest,
) -> Result<Watch, ApiError> {
    let (game, viewer) =
        access::authorize(app.games(), &caller, &req.game_id, access::SHUANGKOU_TOKENS).await?;
    let guard = app.presence().open(&req.game_id, viewer)?;
    let (notify, mut pos) = {
        let live = app.games().current(&game).await?;
        (live.subscribe(), start(&live, &req, viewer)?)
    };
    let mut wakeups = Wakeups::new(
        notify,
        app.games().store(),
        &req.game_id,
        app.streams_closing(),
    )
    .moving(app.ownership(), &req.game_id);
    let (tx, rx) = mpsc::channel::<Item>(BUFFER);
    let counted = Counted::new();
    tokio::spawn(async move {
        // Held while the stream lives: the player is connected (presence), the stream counted.
        let _guard = (guard, counted);
        // The replay of the store's log while the stream is behind the backlog.
        let mut behind: Option<History> = None;
        loop {
            // Send everything after `pos`, then wait for news.
            let batch = match app.games().current(&game).await {
                Err(_) => Vec::new(),
                Ok(live) if needed(pos) < live.first_kept() => {
                    if behind.is_none() {
                        match live.origin() {
                            Ok(origin) => {
                                let (id, wanted) = (&live.record.id, needed(pos));
                                behind = Some(History::starting_at(origin, id, wanted));
                            }
                            Err(e) => {
                                let _ = tx.send(Err(rejected(e))).await;
                                break;
                            }
                        }
                    }
                    Vec::new()
                }
                Ok(live) => {
                    behind = None;
                    after(&live, pos, viewer)
                }
            };
            if let Some(h) = behind.as_mut() {
                // One page of the store's log, then the game is looked at again.
                if wakeups.closing() {
                    let status = ApiError::new(
                        Reason::Unavailable,
                        "server shutting down; resume from your last cursor elsewhere",
                    );
                    let _ = tx.send(Err(rejected(status))).await;
                    break;
                }
                match catch_up(h, &app, pos, viewer, &tx).await {
                    Ok(Some(p)) => pos = p,
                    Ok(None) => return,
                    Err(e) => {
                        let _ = tx.send(Err(rejected(e))).await;
                        break;
                    }
                }
                continue;
            }
            let sent = send_all(&tx, batch, |ev| {
                let index = wire::parse_cursor(&ev.cursor).map_or(0, |(_, i)| i);
                pos = Some((ev.seq, index));
            })
            .await;
            if !sent {
                return;
            }
            let seen = pos.map_or(0, |(seq, _)| seq);
            if settle(app.games(), &game, viewer, seen).await {
                break;
            }
            if !wakeups.wait(&tx, |e| Err(rejected(e)), "cursor").await {
                break;
            }
        }
    });
    Ok(Watch { rx, taken: 0 })
}

/// Sends the events after `pos` of the next page of the store's log; the new position, or
/// `None` when the client went away.
async fn catch_up(
    history: &mut History,
    app: &App,
    mut pos: Position,
    viewer: Viewer,
    tx: &mpsc::Sender<Item>,
) -> Result<Option<Position>, ApiError> {
    let page = {
        // Never closed: a permit always comes.
        let _replaying = app.catch_up_replays().acquire().await.ok();
        history.next_page(app.games().store()).await?
    };
    if page.is_empty() {
        return Err(ApiError::new(
            Reason::StoreFailed,
            format!(
                "the store's log ends at seq {} before the live game's backlog",
                history.seq().unwrap_or(0)
            ),
        ));
    }
    let Some(game) = history.game() else {
        return Ok(Some(pos));
    };
    for (seq, at, events) in page {
        if seq < needed(pos) {
            continue;
        }
        let all = wire::action_events(game, seq, at, &events, viewer);
        for ev in keep_after(pos, all) {
            let index = wire::parse_cursor(&ev.cursor).map_or(0, |(_, i)| i);
            pos = Some((ev.seq, index));
            if tx.send(Ok(ev)).await.is_err() {
                return Ok(None);
            }
        }
        // An action with no event for this viewer still moves the stream on.
        if pos.is_none_or(|(s, _)| s < seq) {
            pos = Some((seq, usize::MAX));
        }
    }
    Ok(Some(pos))
}
