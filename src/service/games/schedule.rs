//! The schedule of the live games: turn deadlines (托管, also of disconnected seats), bot seats'
//! turns, reconnect windows (derived from the log, so they survive restarts) and the eviction of
//! finished games from the cache, earliest first. Entries are hints, checked against the game
//! when they come due.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

use super::{Games, LiveGame, PresenceStep, Shared};
use crate::service::clock::now_ms;
use crate::service::status::{ApiError, Reason};

/// Milliseconds before a bot turn whose commit failed on the store is tried again.
const BOT_RETRY_MS: u64 = 1_000;

/// Due time (Unix ms), what, which game; a min-heap.
pub(super) type Schedule = BinaryHeap<Reverse<(u64, Due, Arc<str>)>>;

/// A scheduled task of one game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Due {
    /// Its turn deadline: play for the seat if it has passed, or at once for a disconnected
    /// seat when so configured (托管).
    Turn,
    /// A reconnect window runs out: log `ReconnectExpired` (the variant's escape rule).
    Expire,
    /// A bot seat's turn at this seq (人機): the bot plays if the game is still there.
    Bot(u64),
    /// Finished a while ago: drop it from the cache (the store still has it).
    Evict,
}

/// A turn due now that `bots` plays (what [`Games::run_due`] hands back).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DueTurn {
    /// The turn deadline of game `0` passed (托管).
    Deadline(Arc<str>),
    /// A bot seat of game `0` is to act at seq `1`.
    Bot(Arc<str>, u64),
}

impl<G: LiveGame> Games<G> {
    /// Schedules what comes next for a game after a change: its turn deadline (when turn timers
    /// are on) and a bot seat's turn (after the game's bot delay), or its eviction from the cache
    /// once it has finished.
    pub(super) fn schedule_next(&self, live: &G) {
        let now = now_ms();
        let mut due = Vec::with_capacity(2);
        if live.finished() {
            let linger = self.config.finished_linger_seconds.saturating_mul(1000);
            due.push((now.saturating_add(linger), Due::Evict));
        } else {
            if live.turn_is_away() && self.away_turns_immediate() {
                due.push((now, Due::Turn));
            } else if !self.config.no_turn_timers
                && let Some(d) = live.deadline()
            {
                due.push((d, Due::Turn));
            }
            if live.bot_to_act().is_some() {
                let delay = live.bot_delay_ms();
                due.push((now.saturating_add(delay), Due::Bot(live.seq())));
            }
        }
        due.extend(
            live.open_windows()
                .into_iter()
                .map(|(_, at)| (at, Due::Expire)),
        );
        if due.is_empty() {
            return;
        }
        // A bot's turn, or a disconnected seat's played at once: the schedule's task runs early.
        let bot = due
            .iter()
            .any(|&(at, d)| matches!(d, Due::Bot(_)) || (d == Due::Turn && at <= now));
        let mut wake = bot;
        if let Ok(mut q) = self.schedule.lock() {
            // An entry earlier than every other: the task may be asleep until a later one.
            let head = q.peek().map(|Reverse((at, _, _))| *at);
            wake |= due.iter().any(|&(at, _)| head.is_none_or(|h| at < h));
            for (at, what) in due {
                q.push(Reverse((at, what, Arc::from(live.id()))));
            }
        }
        if wake {
            self.wake.notify_one();
        }
    }

    /// Schedules a bot seat's turn at `seq` again in `after_ms` (its commit failed on the store:
    /// the bot must not stall the game).
    pub fn retry_bot_turn(&self, id: Arc<str>, seq: u64, after_ms: u64) {
        if let Ok(mut q) = self.schedule.lock() {
            q.push(Reverse((
                now_ms().saturating_add(after_ms),
                Due::Bot(seq),
                id,
            )));
        }
    }

    /// When the schedule's earliest entry comes due (Unix ms), if it has any: the schedule's
    /// task sleeps until then.
    pub fn next_due(&self) -> Option<u64> {
        let q = self.schedule.lock().ok()?;
        q.peek().map(|Reverse((at, _, _))| *at)
    }

    /// Tries a bot seat's turn at `seq` again shortly when `result` says the store did not
    /// acknowledge it (the bot must not stall the game).
    pub fn retry_unacknowledged<T>(&self, id: &Arc<str>, seq: u64, result: &Result<T, ApiError>) {
        if let Err(e) = result
            && matches!(e.reason, Reason::StoreFailed | Reason::Unavailable)
        {
            self.retry_bot_turn(Arc::clone(id), seq, BOT_RETRY_MS);
        }
    }

    /// Resolves when a bot turn was scheduled (the schedule's task then runs early).
    pub async fn woken(&self) {
        self.wake.notified().await;
    }

    /// A disconnected seat's turns are played as soon as they come (configured, or without turn
    /// timers), not at its deadline.
    pub fn away_turns_immediate(&self) -> bool {
        self.config.disconnected_turns_immediate || self.config.no_turn_timers
    }

    /// Logs what `next` says a game needs now (the service's action, prepared; `None`:
    /// nothing). A concurrent append by another replica (STALE) re-reads the game and asks
    /// `next` again, so a decision is taken once whichever replica takes it. True when something
    /// was logged here.
    pub async fn commit_due(
        &self,
        game: &Shared<G>,
        next: impl Fn(&G) -> Option<Result<G::Prepared, ApiError>>,
    ) -> Result<bool, ApiError> {
        for _ in 0..3 {
            let mut live = self.current(game).await?;
            match self.commit_next(&mut live, &next).await {
                Ok(logged) => return Ok(logged),
                Err(e) if e.reason == Reason::StaleSeq => continue,
                Err(e) => return Err(e),
            }
        }
        Ok(false)
    }

    /// Logs what `next` says a game the caller holds (caught up, from [`Games::current`]) needs
    /// now; false when nothing.
    pub async fn commit_next(
        &self,
        live: &mut G,
        next: impl Fn(&G) -> Option<Result<G::Prepared, ApiError>>,
    ) -> Result<bool, ApiError> {
        let Some(first) = next(live) else {
            return Ok(false);
        };
        // `commit` (never behind: the game is caught up) prepares exactly once.
        let mut first = Some(first);
        let prepare = |l: &G| first.take().or_else(|| next(l)).unwrap_or_else(nothing_due);
        self.commit(live, prepare).await.map(|_| true)
    }

    /// Logs `ReconnectExpired` for every reconnect window of the game that ran out by `now`.
    async fn expire_windows(&self, game: &Shared<G>, now: u64) -> Result<(), ApiError> {
        let expired = |l: &G| {
            let (player, _) = l.open_windows().into_iter().find(|&(_, at)| at <= now)?;
            l.presence_entry(player, PresenceStep::Expire, now)
        };
        while self.commit_due(game, expired).await? {}
        Ok(())
    }

    /// The entries due at `now`, removed from the schedule.
    fn take_due(&self, now: u64) -> Vec<(Due, Arc<str>)> {
        let Ok(mut q) = self.schedule.lock() else {
            return Vec::new();
        };
        let mut due = Vec::new();
        while let Some(Reverse((at, _, _))) = q.peek() {
            if *at > now {
                break;
            }
            if let Some(Reverse((_, what, id))) = q.pop() {
                due.push((what, id));
            }
        }
        due
    }

    /// Does what is due at `now`: drops finished games from the cache, and hands back the turns
    /// to play (deadlines passed, bot seats to act) for `bots` to play. Visits only the games
    /// whose entry is due.
    pub async fn run_due(&self, now: u64) -> Vec<DueTurn> {
        let mut turns = Vec::new();
        for (what, id) in self.take_due(now) {
            match what {
                Due::Turn => turns.push(DueTurn::Deadline(id)),
                Due::Bot(seq) => turns.push(DueTurn::Bot(id, seq)),
                Due::Expire => {
                    let Some(game) = self.cached(&id) else {
                        continue;
                    };
                    if let Err(e) = self.expire_windows(&game, now).await {
                        tracing::warn!(game = %id, error = %e, "reconnect expiry failed");
                    }
                }
                Due::Evict => {
                    let Some(game) = self.cached(&id) else {
                        continue;
                    };
                    if game.lock().await.finished() {
                        self.cache.remove(&id);
                    }
                }
            }
        }
        turns
    }
}

/// The refusal of a due action that is no longer due (never reached: `commit_next` prepares
/// once).
fn nothing_due<P>() -> Result<P, ApiError> {
    Err(ApiError::new(Reason::StaleSeq, "nothing is due any more"))
}
