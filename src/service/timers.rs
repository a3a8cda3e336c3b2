//! The schedule's task ([`start`], run by `App::start_timers`): sleeps until the schedule's next
//! due entry (woken early when a bot seat's turn, or an entry earlier than every other, is
//! scheduled), takes what is due ([`Games::run_due`]) and hands the turns to a bounded set of
//! workers that play them ([`bots::play_due`]) in the order the schedule gives them: earliest
//! deadline first. When thousands of turns come due together, no task is spawned per turn, the
//! lateness is shared in deadline order, and up to [`Settings::workers`] commits reach the store
//! together (the embedded store commits them in one group).
//!
//! Depends on `games` and `bots`; what else the task does each round (presence) and whether the
//! service drains comes from its [`Host`] (the `App`).

use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::task::JoinHandle;

use super::bots;
use super::clock::now_ms;
use super::games::{DueTurn, Games};

/// What the schedule's task serves.
pub trait Host: Send + Sync + 'static {
    /// The live games whose schedule it runs.
    fn games(&self) -> &Games;
    /// True while the service drains: nothing due is started.
    fn draining(&self) -> bool;
    /// What else is due each round, after the games' entries (presence: disconnects; the other
    /// game family's schedule).
    fn run_other_due(&self, now: u64) -> impl Future<Output = ()> + Send;
    /// When the earliest entry of another schedule run by [`Host::run_other_due`] comes due.
    fn next_other_due(&self) -> Option<u64> {
        None
    }
    /// Plays a due turn (the service: [`bots::play_due`]).
    fn play(&self, turn: DueTurn) -> impl Future<Output = ()> + Send {
        bots::play_due(self.games(), turn)
    }
}

/// How the task runs.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// Turns played at once (each holds its game's lock while its play is decided and committed,
    /// most of that time waiting for the store).
    pub workers: usize,
    /// The longest sleep between two rounds: what is not in the games' schedule (presence) is
    /// looked at this often.
    pub max_sleep: Duration,
}

/// The service's settings: 128 workers (a group commit of up to 128 plays; a searching bot seat
/// holds a worker while it thinks), rounds at least every 250 ms.
pub const SETTINGS: Settings = Settings {
    workers: 128,
    max_sleep: Duration::from_millis(250),
};

/// Starts the schedule's task and its workers. Aborting the returned task (and awaiting it) closes
/// the queue and drops the task's hold on the host: each worker ends once its current play is done (a play is never cut in the middle of a commit), and
/// the turns still queued are dropped (entries are hints: a restart schedules them again).
pub fn start<H: Host>(host: Arc<H>, settings: Settings) -> JoinHandle<()> {
    let queue = Arc::new(Queue::default());
    for _ in 0..settings.workers.max(1) {
        // A waiting worker does not keep the host (the service and its store) alive: once the
        // schedule's task is gone, the host is dropped with the server.
        let (host, queue) = (Arc::downgrade(&host), Arc::clone(&queue));
        tokio::spawn(async move {
            while let Some(turn) = queue.pop().await {
                let Some(host) = host.upgrade() else {
                    return;
                };
                host.play(turn).await;
            }
        });
    }
    tokio::spawn(async move {
        let _close = CloseOnDrop(Arc::clone(&queue));
        loop {
            let games = host.games();
            let sleep = if host.draining() {
                settings.max_sleep
            } else {
                let next = match (games.next_due(), host.next_other_due()) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                until_due(next, now_ms(), settings.max_sleep)
            };
            tokio::select! {
                _ = tokio::time::sleep(sleep) => {}
                _ = games.woken() => {}
            }
            if host.draining() {
                continue;
            }
            queue.push(games.run_due(now_ms()).await);
            host.run_other_due(now_ms()).await;
        }
    })
}

/// How long to sleep at `now` when the schedule's next entry is due at `next` (Unix ms): until
/// then, at most `max`.
fn until_due(next: Option<u64>, now: u64, max: Duration) -> Duration {
    next.map_or(max, |at| {
        Duration::from_millis(at.saturating_sub(now)).min(max)
    })
}

/// The due turns waiting for a worker, in the order the schedule handed them (deadline order).
#[derive(Default)]
struct Queue {
    turns: Mutex<Turns>,
    ready: Notify,
}

#[derive(Default)]
struct Turns {
    waiting: VecDeque<DueTurn>,
    closed: bool,
}

impl Queue {
    fn push(&self, turns: Vec<DueTurn>) {
        let n = turns.len();
        if let Ok(mut q) = self.turns.lock() {
            q.waiting.extend(turns);
        }
        for _ in 0..n {
            self.ready.notify_one();
        }
    }

    /// The next turn to play, once there is one; `None` once the queue is closed.
    async fn pop(&self) -> Option<DueTurn> {
        loop {
            // Registered before the queue is looked at, so a push in between is not missed.
            let ready = self.ready.notified();
            tokio::pin!(ready);
            ready.as_mut().enable();
            {
                let mut q = self.turns.lock().ok()?;
                if q.closed {
                    return None;
                }
                if let Some(turn) = q.waiting.pop_front() {
                    return Some(turn);
                }
            }
            ready.await;
        }
    }

    fn close(&self) {
        if let Ok(mut q) = self.turns.lock() {
            q.closed = true;
            q.waiting.clear();
        }
        self.ready.notify_waiters();
    }
}

/// Closes the queue when the schedule's task ends (aborted at shutdown).
struct CloseOnDrop(Arc<Queue>);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.close();
    }
}

#[cfg(test)]
mod tests;
