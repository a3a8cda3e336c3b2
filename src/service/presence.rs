//! Presence: which players of this process's games are connected, and the log entries that
//! follow from it (seed 002, 掉線逃跑: a dropped player has 90 s to come back).
//!
//! A player is connected while it holds at least one WatchGame stream with its seat token. Only
//! a drop after a stream makes a player disconnected: a player that never opened one (clients
//! that only poll, the load generator, grpcurl) never is, but at a takeover by another replica
//! (below), where its next call with its seat token logs its reconnect. When a player's last stream on this
//! process closes, [`Presence::run_due`] waits the grace (a network blip) and then logs the
//! engine's `Disconnect`; a new stream, or any other call with the seat token, while the player
//! is disconnected logs `Reconnect` ([`reconnect`]). The end of the window (`ReconnectExpired`)
//! and the 托管 of a disconnected seat's turns are scheduled by `games` from the log, so they
//! are decided once across replicas and keep their deadlines across restarts.
//!
//! A replica that takes a game over from another (`ownership`) starts every seated player's
//! grace at the takeover ([`Presence::taken_over`]): streams lost with a dead replica become
//! disconnects here unless their clients come back.
//!
//! Streams are counted per process: a replica whose watcher learns of a disconnect of a player
//! that still holds a stream on it logs the reconnect (WatchGame calls [`reconnect`] after every
//! batch). The number of streams per token is bounded here too.
//!
//! One `Presence` per game family: its streams and its players' graces; what is logged is the
//! family's ([`LiveGame::presence_entry`]).
//!
//! Depends on `games` (the commit protocol and the game-family trait), `status` and the clock.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::{Arc, Mutex};

use super::clock::now_ms;
use super::games::{Games, LiveGame, PresenceStep, Shared};
use super::status::{ApiError, Reason};
use crate::game::Viewer;
use crate::seat::Player;

/// What presence needs from the configuration.
#[derive(Clone, Copy, Debug)]
pub struct PresenceConfig {
    /// Milliseconds after a player's last stream closed before its disconnect is logged.
    pub grace_ms: u64,
    /// Most WatchGame streams open at once with one token (one viewer of one game).
    pub max_streams_per_token: usize,
}

/// A token's identity: its game and viewer (a seat or spectator token names exactly one).
type Holder = (Arc<str>, Viewer);

/// When a player's grace ends (Unix ms), its game and the player; a min-heap.
type Graces = BinaryHeap<Reverse<(u64, Arc<str>, Player)>>;

/// The streams of this process, by token, and the players whose last stream closed.
pub struct Presence {
    config: PresenceConfig,
    streams: Mutex<HashMap<Holder, usize>>,
    /// (when the grace ends, game, player), earliest first.
    dropped: Mutex<Graces>,
}

/// An open WatchGame stream; dropping it closes it.
pub struct StreamGuard {
    presence: Arc<Presence>,
    holder: Holder,
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.presence.release(&self.holder);
    }
}

impl Presence {
    pub fn new(config: PresenceConfig) -> Arc<Presence> {
        Arc::new(Presence {
            config,
            streams: Mutex::new(HashMap::new()),
            dropped: Mutex::new(BinaryHeap::new()),
        })
    }

    /// Counts a new stream of `viewer` in game `id`: `LIMIT_EXCEEDED` beyond the per-token
    /// bound.
    pub fn open(self: &Arc<Self>, id: &str, viewer: Viewer) -> Result<StreamGuard, ApiError> {
        let holder: Holder = (Arc::from(id), viewer);
        let mut streams = self
            .streams
            .lock()
            .map_err(|_| ApiError::new(Reason::Unavailable, "internal lock poisoned"))?;
        let n = streams.entry(holder.clone()).or_insert(0);
        if *n >= self.config.max_streams_per_token {
            let max = self.config.max_streams_per_token;
            return Err(ApiError::new(
                Reason::LimitExceeded,
                format!("at most {max} WatchGame streams at once per token; close one first"),
            ));
        }
        *n += 1;
        Ok(StreamGuard {
            presence: Arc::clone(self),
            holder,
        })
    }

    fn release(&self, holder: &Holder) {
        let last = match self.streams.lock() {
            Ok(mut streams) => match streams.get_mut(holder) {
                Some(n) if *n > 1 => {
                    *n -= 1;
                    false
                }
                Some(_) => {
                    streams.remove(holder);
                    true
                }
                None => false,
            },
            Err(_) => false,
        };
        if let (true, Viewer::Player(p)) = (last, holder.1)
            && let Ok(mut q) = self.dropped.lock()
        {
            let at = now_ms().saturating_add(self.config.grace_ms);
            q.push(Reverse((at, Arc::clone(&holder.0), p)));
        }
    }

    /// Game `id` was taken over by this replica (its shard's former owner died or handed it
    /// over): `players` hold no stream here yet, so each is treated as if its last stream closed
    /// now. Unless it comes back (a stream here, forwarded or not) within the grace, its
    /// disconnect is logged, and the reconnect window and the escape follow as on one replica.
    pub fn taken_over(&self, id: &str, players: &[Player]) {
        let Ok(mut q) = self.dropped.lock() else {
            return;
        };
        let at = now_ms().saturating_add(self.config.grace_ms);
        let id: Arc<str> = Arc::from(id);
        for &p in players {
            q.push(Reverse((at, Arc::clone(&id), p)));
        }
    }

    /// True while `player` holds a stream of game `id` on this process.
    pub fn holds(&self, id: &str, player: Player) -> bool {
        let holder: Holder = (Arc::from(id), Viewer::Player(player));
        self.streams
            .lock()
            .is_ok_and(|s| s.get(&holder).is_some_and(|n| *n > 0))
    }

    fn take_due(&self, now: u64) -> Vec<(Arc<str>, Player)> {
        let Ok(mut q) = self.dropped.lock() else {
            return Vec::new();
        };
        let mut due = Vec::new();
        while q.peek().is_some_and(|Reverse((at, _, _))| *at <= now) {
            if let Some(Reverse((_, id, p))) = q.pop() {
                due.push((id, p));
            }
        }
        due
    }

    /// Logs the disconnect of every player whose last stream closed a grace ago and has not
    /// come back (on this process). Games already over are left alone.
    pub async fn run_due<G: LiveGame>(&self, games: &Games<G>, now: u64) {
        for (id, player) in self.take_due(now) {
            if self.holds(&id, player) {
                continue;
            }
            let Some(game) = games.cached(&id) else {
                continue;
            };
            let away = |l: &G| l.presence_entry(player, PresenceStep::Disconnect, now);
            match games.commit_due(&game, away).await {
                Ok(true) => {
                    tracing::info!(game = %id, player = player.number(), "player disconnected")
                }
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(game = %id, player = player.number(), error = %e, "logging a disconnect failed")
                }
            }
        }
    }
}

/// Logs the reconnect of `player` if the game has it disconnected (a new stream, a seat call,
/// or a stream this process holds while another replica logged the disconnect).
pub async fn reconnect<G: LiveGame>(
    games: &Games<G>,
    game: &Shared<G>,
    player: Player,
) -> Result<(), ApiError> {
    let now = now_ms();
    let back = |l: &G| l.presence_entry(player, PresenceStep::Reconnect, now);
    if games.commit_due(game, back).await? {
        tracing::info!(player = player.number(), "player reconnected");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Streams are counted per token and bounded; only a player's last close starts its grace,
    /// and a spectator's never does.
    #[test]
    fn the_last_close_of_a_player_starts_its_grace() {
        let p = Presence::new(PresenceConfig {
            grace_ms: 60_000,
            max_streams_per_token: 2,
        });
        let a = p.open("g", Viewer::Player(Player::new(0))).unwrap();
        let b = p.open("g", Viewer::Player(Player::new(0))).unwrap();
        let third = p
            .open("g", Viewer::Player(Player::new(0)))
            .err()
            .map(|e| e.reason);
        assert_eq!(third, Some(Reason::LimitExceeded));
        let spectator = p.open("g", Viewer::Spectator).unwrap();
        let other_game = p.open("h", Viewer::Player(Player::new(0))).unwrap();
        drop(a);
        assert!(p.holds("g", Player::new(0)));
        assert!(p.take_due(u64::MAX).is_empty(), "not the last stream");
        drop(b);
        assert!(!p.holds("g", Player::new(0)) && p.holds("h", Player::new(0)));
        assert!(p.take_due(now_ms()).is_empty(), "within the grace");
        assert_eq!(p.take_due(u64::MAX), vec![(Arc::from("g"), Player::new(0))]);
        drop(spectator);
        assert!(
            p.take_due(u64::MAX).is_empty(),
            "spectators have no presence"
        );
        // A closed stream frees its place.
        let _again = p.open("g", Viewer::Player(Player::new(0))).unwrap();
        drop(other_game);
    }
}
