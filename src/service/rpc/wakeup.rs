//! What a WatchGame stream of either game waits for between two batches: this process's
//! notifier of the game, the store's feed (plays on other replicas), a poll of a shared store
//! without a feed, the server draining, or the client going away. One piece for both games'
//! watch loops (`watch` for `shuangkou.v1`, `shengji` for `shengji.v1`), with what both do
//! around a batch: the stream counted in its gauge ([`Counted`]), a batch sent in order
//! ([`send_all`]), and after it the holder's presence and the end of the match ([`settle`]).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast::{self, error::RecvError};
use tokio::sync::{mpsc, watch};

use tonic::Status;

use crate::game::Viewer;
use crate::service::games::{Games, LiveGame, Shared};
use crate::service::ownership::Ownership;
use crate::service::presence;
use crate::service::status::{ApiError, Reason};
use crate::store::Store;

/// How often a watcher re-reads a shared store's log when it has no notification feed.
const WATCH_POLL: Duration = Duration::from_secs(1);

/// Why a watcher woke up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Woken {
    /// There may be news: send what is new, then wait again.
    News,
    /// The server is draining: tell the client to resume elsewhere and end the stream.
    Closing,
    /// The client went away: end the stream.
    Gone,
    /// The game's shard moved to another replica: tell the client to resume there (through any
    /// replica) and end the stream.
    Moved,
}

/// The wake-ups of one stream.
pub struct Wakeups {
    local: broadcast::Receiver<u64>,
    store: broadcast::Receiver<u64>,
    local_open: bool,
    store_open: bool,
    shared: bool,
    closing: watch::Receiver<bool>,
    /// The game's moves between replicas, when replicas divide the games.
    moves: Option<Moves>,
}

/// What tells a stream its game moved away: the ownership's moves, the game.
struct Moves {
    changed: watch::Receiver<u64>,
    ownership: Arc<Ownership>,
    id: String,
}

/// Resolves once the game of `moves` is no longer owned here (never without `moves`).
async fn moved_away(moves: &mut Option<Moves>) {
    let Some(m) = moves else {
        return std::future::pending().await;
    };
    loop {
        if m.changed.changed().await.is_err() {
            return std::future::pending().await;
        }
        if !m.ownership.owns_game(&m.id) {
            return;
        }
    }
}

impl Wakeups {
    /// The wake-ups of game `id`: `local` is its notifier in this process.
    pub fn new(
        local: broadcast::Receiver<u64>,
        store: &Store,
        id: &str,
        closing: watch::Receiver<bool>,
    ) -> Wakeups {
        Wakeups {
            local,
            store: store.subscribe(id),
            local_open: true,
            store_open: true,
            shared: store.is_shared(),
            closing,
            moves: None,
        }
    }

    /// The stream also ends (UNAVAILABLE: resume elsewhere) once game `id` moves to another
    /// replica (replicas dividing the games).
    pub fn moving(self, ownership: &Arc<Ownership>, id: &str) -> Wakeups {
        if !ownership.divided() {
            return self;
        }
        let moves = Moves {
            changed: ownership.moves(),
            ownership: Arc::clone(ownership),
            id: id.to_string(),
        };
        Wakeups {
            moves: Some(moves),
            ..self
        }
    }

    /// True once the server drains (a stream catching up from the store checks it between
    /// pages).
    pub fn closing(&self) -> bool {
        *self.closing.borrow()
    }

    /// Waits for news: true when there may be some (send what is new, then wait again), false
    /// when the stream ends: the client went away (`tx` closed), or the server drains, when
    /// the client is sent `drained` of an UNAVAILABLE rejection that says to resume from its
    /// last `resume_from` elsewhere.
    pub async fn wait<T>(
        &mut self,
        tx: &mpsc::Sender<T>,
        drained: impl FnOnce(ApiError) -> T,
        resume_from: &str,
    ) -> bool {
        match self.next(tx).await {
            Woken::News => true,
            Woken::Closing => {
                let e = ApiError::new(
                    Reason::Unavailable,
                    format!("server shutting down; resume from your last {resume_from} elsewhere"),
                );
                let _ = tx.send(drained(e)).await;
                false
            }
            Woken::Moved => {
                let e = ApiError::new(
                    Reason::Unavailable,
                    format!(
                        "the game moved to another replica; resume from your last {resume_from}"
                    ),
                );
                let _ = tx.send(drained(e)).await;
                false
            }
            Woken::Gone => false,
        }
    }

    async fn next<T>(&mut self, tx: &mpsc::Sender<T>) -> Woken {
        tokio::select! {
            r = self.local.recv(), if self.local_open => {
                self.local_open = !matches!(r, Err(RecvError::Closed));
                Woken::News
            }
            // A closed receiver (the memory store's for a game it does not hold, or a failed
            // subscribe) answers at once, forever: stop selecting on it instead of spinning (and,
            // with a shared store, re-reading the log) in this loop.
            r = self.store.recv(), if self.store_open => {
                self.store_open = !matches!(r, Err(RecvError::Closed));
                Woken::News
            }
            // Without the store's feed, plays made on other replicas are polled for.
            _ = tokio::time::sleep(WATCH_POLL), if self.shared && !self.store_open => Woken::News,
            _ = self.closing.changed() => Woken::Closing,
            _ = moved_away(&mut self.moves) => Woken::Moved,
            _ = tx.closed() => Woken::Gone,
        }
    }
}

/// A WatchGame stream, counted in the `watch_streams` gauge while it lives.
pub struct Counted(());

impl Counted {
    pub fn new() -> Counted {
        crate::metrics::watch_streams(1.0);
        Counted(())
    }
}

impl Default for Counted {
    fn default() -> Self {
        Counted::new()
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        crate::metrics::watch_streams(-1.0);
    }
}

/// Sends a batch of events in order, telling `sent` of each first; false when the client went
/// away.
pub async fn send_all<E>(
    tx: &mpsc::Sender<Result<E, Status>>,
    batch: Vec<E>,
    mut sent: impl FnMut(&E),
) -> bool {
    for ev in batch {
        sent(&ev);
        if tx.send(Ok(ev)).await.is_err() {
            return false;
        }
    }
    true
}

/// After a batch: the player holding the stream is connected (a disconnect logged by another
/// replica, or in the grace race, is undone); true when the stream is done: the match is over
/// and every action up to `seen` was sent.
pub async fn settle<G: LiveGame>(
    games: &Games<G>,
    game: &Shared<G>,
    viewer: Viewer,
    seen: u64,
) -> bool {
    if let Viewer::Player(p) = viewer
        && game.lock().await.is_disconnected(p)
        && let Err(e) = presence::reconnect(games, game, p).await
    {
        tracing::warn!(player = p.number(), error = %e, "logging a reconnect failed");
    }
    let live = game.lock().await;
    live.finished() && seen >= live.seq()
}
