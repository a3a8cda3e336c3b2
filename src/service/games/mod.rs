//! The live games of this process, and the only owner of them, for both game families (one
//! [`Games`] per family: `Games<Session>` for Shuangkou, `Games<Table>` for 升級): the cache of
//! live games, the count of games in progress (and its `games_active` gauge, both moved in one
//! place), the schedule of turn deadlines (托管, also of disconnected seats), bot seats' turns,
//! reconnect windows (derived from the log, so they survive restarts) and evictions, recovery at
//! start, and the commit protocol.
//!
//! - this file: the owner ([`Games`]), its configuration and the count of games in progress;
//! - [`family`]: what the owner needs from a game family ([`LiveGame`]);
//! - [`shuangkou`]: Shuangkou's family (a `Session`); 升級's is `shengji::family`;
//! - [`cache`]: the cache of games, one rebuild per game at a time, creation, recovery;
//! - [`schedule`]: turn deadlines, bot turns, reconnect windows and evictions, earliest first;
//! - [`commit`]: the commit protocol (one store call per play);
//! - [`shards`]: the games of the shards this replica gains and loses (`ownership`).
//!
//! Depends on `session` (Shuangkou's family), `record`, `status`, the store and the variant
//! registry; never on the wire types or the rpc modules.

mod cache;
mod commit;
pub mod family;
pub mod rebuild;
pub mod recovery;
mod schedule;
mod shards;
mod shuangkou;
#[cfg(test)]
mod tests;

use std::collections::{BinaryHeap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{Mutex as AsyncMutex, OnceCell};

use super::live_games::{InProgress, LiveCache};
use super::ownership::Ownership;
use super::session::Session;
use crate::bot::BotSpec;
use crate::store::Store;

pub use family::{LiveGame, PresenceStep};
pub use schedule::DueTurn;
use schedule::Schedule;

/// A game shared between the rpcs acting on it; one lock per game.
pub type Shared<G = Session> = Arc<AsyncMutex<G>>;

/// What the cache needs from the configuration.
#[derive(Clone, Copy, Debug)]
pub struct GamesConfig {
    /// Turn deadlines are not enforced (tests, load runs).
    pub no_turn_timers: bool,
    /// Seconds a finished game stays cached.
    pub finished_linger_seconds: u64,
    /// Actions whose events and idempotency keys a live game keeps (`backlog`).
    pub backlog_actions: usize,
    /// Most games in progress in this process.
    pub max_games: usize,
    /// A disconnected seat's turns are played at once, not at its turn deadline (always so
    /// without turn timers).
    pub disconnected_turns_immediate: bool,
    /// The bot that plays 托管 (a seat past its deadline, or a disconnected player's).
    pub auto_bot: BotSpec,
}

#[cfg(test)]
impl GamesConfig {
    /// The configuration of the unit tests: no turn timers, at most `max_games` in progress,
    /// finished games cached `linger_seconds`.
    pub(crate) fn for_tests(max_games: usize, linger_seconds: u64) -> GamesConfig {
        GamesConfig {
            no_turn_timers: true,
            finished_linger_seconds: linger_seconds,
            backlog_actions: crate::service::backlog::DEFAULT_ACTIONS,
            max_games,
            disconnected_turns_immediate: false,
            auto_bot: crate::bot::styles::spec("heuristic").expect("a known bot"),
        }
    }
}

/// The live games of one family.
pub struct Games<G: LiveGame = Session> {
    config: GamesConfig,
    registry: Arc<G::Registry>,
    store: Store,
    cache: LiveCache<G>,
    /// Games in progress in the cache, with their gauge.
    in_progress: InProgress,
    /// What the background task must do and when: turn deadlines (托管) and the eviction of
    /// finished games from the cache, earliest first. Entries are hints, checked against the
    /// game when they come due (a deadline met by a play in time is simply skipped), so the task
    /// never scans every game.
    schedule: Mutex<Schedule>,
    /// Wakes the schedule's task early (a bot seat to act with no delay); shared by the families
    /// whose schedules one task runs ([`Games::waking`]).
    wake: Arc<tokio::sync::Notify>,
    /// Rebuilds under way, by game: one per game at a time; readers that arrive meanwhile await
    /// the same one (the entry is dropped once the game is in the cache).
    loading: Mutex<HashMap<String, Arc<OnceCell<Shared<G>>>>>,
    /// Games rebuilt from the store so far.
    rebuilds: AtomicU64,
    /// Which games are this replica's (all of them but on a shared store): only those are
    /// cached past one request, scheduled and counted.
    ownership: Arc<Ownership>,
}

impl<G: LiveGame> Games<G> {
    pub fn new(config: GamesConfig, registry: Arc<G::Registry>, store: Store) -> Games<G> {
        Games {
            config,
            registry,
            store,
            cache: LiveCache::default(),
            in_progress: InProgress::new(G::METRIC_LABEL, config.max_games),
            schedule: Mutex::new(BinaryHeap::new()),
            wake: Arc::new(tokio::sync::Notify::new()),
            loading: Mutex::new(HashMap::new()),
            rebuilds: AtomicU64::new(0),
            ownership: Ownership::all(),
        }
    }

    /// These games are owned as `ownership` says (replicas on a shared store divide them).
    pub fn owned_by(self, ownership: Arc<Ownership>) -> Games<G> {
        Games { ownership, ..self }
    }

    /// Which games are this replica's.
    pub fn ownership(&self) -> &Arc<Ownership> {
        &self.ownership
    }

    /// True when this process is the only writer of game `id`: the store is not shared, or this
    /// replica holds the game's shard lease. Its cached copy is then current: no catch-up read
    /// before an action or a read (a former owner's late append is refused by the log's
    /// compare-and-append, or brought in by the next append's conflict).
    pub fn single_writer(&self, id: &str) -> bool {
        !self.store.is_shared() || (self.ownership.divided() && self.ownership.owns_game(id))
    }

    /// These games wake the schedule's task through `wake` (another family's, so one task
    /// waiting on either runs both schedules).
    pub fn waking(self, wake: Arc<tokio::sync::Notify>) -> Games<G> {
        Games { wake, ..self }
    }

    /// What wakes the schedule's task of these games.
    pub fn wake(&self) -> Arc<tokio::sync::Notify> {
        Arc::clone(&self.wake)
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn registry(&self) -> &Arc<G::Registry> {
        &self.registry
    }

    /// The bot that plays 托管.
    pub fn auto_bot(&self) -> BotSpec {
        self.config.auto_bot
    }

    // ---- the count of games in progress ----

    /// True when this process holds its maximum of games in progress.
    pub fn full(&self) -> bool {
        self.in_progress.full()
    }

    /// Games cached in this process (in progress and recently finished).
    pub fn cached_games(&self) -> usize {
        self.cache.len()
    }

    /// Games rebuilt from the store (replayed) so far by this process.
    pub fn rebuilds(&self) -> u64 {
        self.rebuilds.load(Ordering::Relaxed)
    }
}
