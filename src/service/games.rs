//! The live games of this process, and the only owner of them: the cache of sessions, the count
//! of games in progress (and its `games_active` gauge, both moved in one place), the schedule of
//! turn deadlines and evictions, recovery at start, and the commit protocol.
//!
//! The commit protocol: the caller locks a game and catches it up with the store once
//! ([`Games::current`]: one read of the log on a shared store, none otherwise); the action is
//! prepared on a copy of the engine state, appended to the store (compare-and-append), and only
//! then made current ([`Games::commit`]). A rejection or a store failure leaves the game exactly
//! as it was.
//!
//! Depends on `session`, `record`, `status`, the store and the variant registry; never on the
//! wire types or the rpc modules.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{Mutex as AsyncMutex, MutexGuard};

use super::clock::now_ms;
use super::record::Record;
use super::session::{Prepared, Session, Submitted};
use super::status::{ApiError, Reason};
use crate::bot::BotSpec;
use crate::store::{Appended, Created, GameRecord, Store, StoreKind};
use crate::variants::Registry;

/// A game shared between the rpcs acting on it; one lock per game.
pub type Shared = Arc<AsyncMutex<Session>>;

/// Due time (Unix ms), what, which game; a min-heap.
type Schedule = BinaryHeap<Reverse<(u64, Due, Arc<str>)>>;

/// A scheduled task of one game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Due {
    /// Its turn deadline: play for the seat if it has passed (托管).
    Turn,
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

/// What the cache needs from the configuration.
#[derive(Clone, Copy, Debug)]
pub struct GamesConfig {
    /// Turn deadlines are not enforced (tests, load runs).
    pub no_turn_timers: bool,
    /// Seconds a finished game stays cached.
    pub finished_linger_seconds: u64,
    /// Most games in progress in this process.
    pub max_games: usize,
    /// The bot that plays 托管 (a seat past its deadline, or a disconnected player's).
    pub auto_bot: BotSpec,
}

/// The live games.
pub struct Games {
    config: GamesConfig,
    registry: Arc<Registry>,
    store: Store,
    cache: Mutex<HashMap<String, Shared>>,
    /// Games in progress in the cache; moved only by `count_in`/`count_out`, with the gauge.
    active: AtomicUsize,
    /// What the background task must do and when: turn deadlines (托管) and the eviction of
    /// finished games from the cache, earliest first. Entries are hints, checked against the
    /// game when they come due (a deadline met by a play in time is simply skipped), so the task
    /// never scans every game.
    schedule: Mutex<Schedule>,
    /// Wakes the schedule's task early (a bot seat to act with no delay).
    wake: tokio::sync::Notify,
}

impl Games {
    pub fn new(config: GamesConfig, registry: Arc<Registry>, store: Store) -> Games {
        Games {
            config,
            registry,
            store,
            cache: Mutex::new(HashMap::new()),
            active: AtomicUsize::new(0),
            schedule: Mutex::new(BinaryHeap::new()),
            wake: tokio::sync::Notify::new(),
        }
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The bot that plays 托管.
    pub fn auto_bot(&self) -> BotSpec {
        self.config.auto_bot
    }

    /// Rebuilds every unfinished game from the store (replaying and verifying its log).
    pub async fn recover(&self) -> Result<(), String> {
        let ids = self
            .store
            .unfinished()
            .await
            .map_err(|e| format!("cannot list unfinished games: {e}"))?;
        let mut ok = 0usize;
        for id in ids {
            match self.load(&id).await {
                Ok(game) => {
                    ok += 1;
                    // Finished, but the process stopped between its last append and archiving
                    // it: archive it now, or it is rebuilt at every start.
                    if game.lock().await.finished() {
                        if let Err(e) = self.store.finish(&id).await {
                            tracing::warn!(game = %id, error = %e, "archiving a finished game failed");
                        }
                    }
                }
                Err(e) => tracing::error!(game = %id, error = %e, "cannot recover game"),
            }
        }
        if ok > 0 {
            tracing::info!(games = ok, "recovered unfinished games");
        }
        Ok(())
    }

    // ---- the count of games in progress ----

    fn count_in(&self, variant: &str) {
        self.active.fetch_add(1, Ordering::SeqCst);
        crate::metrics::games_active(variant, 1.0);
    }

    fn count_out(&self, variant: &str) {
        let was = self
            .active
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        if was.is_ok() {
            crate::metrics::games_active(variant, -1.0);
        }
    }

    /// True when this process holds its maximum of games in progress.
    pub fn full(&self) -> bool {
        self.active.load(Ordering::SeqCst) >= self.config.max_games
    }

    /// Games cached in this process (in progress and recently finished).
    pub fn cached_games(&self) -> usize {
        self.cache.lock().map(|g| g.len()).unwrap_or(0)
    }

    // ---- the cache ----

    /// The live game `id`, from the cache or rebuilt from the store (replayed and verified).
    pub async fn load(&self, id: &str) -> Result<Shared, ApiError> {
        if let Some(g) = self.cache.lock().ok().and_then(|g| g.get(id).cloned()) {
            return Ok(g);
        }
        let Some((record, log)) = self.store.load(id).await? else {
            return Err(ApiError::new(Reason::NoSuchGame, format!("no game {id}")));
        };
        let live = Session::restore(&self.registry, &record, &log, self.config.no_turn_timers)?;
        let finished = live.finished();
        let variant = live.record.variant.clone();
        // Scheduled before it is shared (a duplicate entry, if another task loads it too, is
        // harmless: entries are checked when due).
        self.schedule_next(&live);
        let shared = Arc::new(AsyncMutex::new(live));
        let mut games = self
            .cache
            .lock()
            .map_err(|_| ApiError::new(Reason::Unavailable, "internal lock poisoned"))?;
        let entry = games.entry(id.to_string()).or_insert_with(|| {
            if !finished {
                self.count_in(&variant);
            }
            Arc::clone(&shared)
        });
        Ok(Arc::clone(entry))
    }

    /// Stores a new game and caches it; `Created::Existing` (the same idempotent request again)
    /// leaves the cache as it is. The game is built before anything is stored, so a record the
    /// engine refuses is never stored.
    pub async fn create(
        &self,
        record: Record,
        request_id: Option<String>,
    ) -> Result<Created, ApiError> {
        let live = Session::create(&self.registry, record.clone(), self.config.no_turn_timers)?;
        let stored = GameRecord {
            id: record.id.clone(),
            platform: record.platform.clone(),
            request_id,
            body: if self.store.kind() != StoreKind::Memory {
                record.encode()?
            } else {
                // Nothing in the memory store survives this process, and while a game lives here
                // its version is held (compiled) by the registry: its copy of the record leaves
                // out the script text (~17 KB per game).
                Record {
                    script: String::new(),
                    ..record
                }
                .encode()?
            },
        };
        let created = self.store.create(&stored).await?;
        if created == Created::New {
            let variant = live.record.variant.clone();
            self.schedule_next(&live);
            if let Ok(mut games) = self.cache.lock() {
                games.insert(stored.id.clone(), Arc::new(AsyncMutex::new(live)));
            }
            self.count_in(&variant);
            crate::metrics::game_created(&variant);
            tracing::info!(game = %stored.id, variant = %variant, "game created");
        }
        Ok(created)
    }

    // ---- the schedule ----

    /// Schedules what comes next for a game after a change: its turn deadline (when turn timers
    /// are on) and a bot seat's turn (after the game's bot delay), or its eviction from the cache
    /// once it has finished.
    fn schedule_next(&self, live: &Session) {
        let now = now_ms();
        let mut due = Vec::with_capacity(2);
        if live.finished() {
            let linger = self.config.finished_linger_seconds.saturating_mul(1000);
            due.push((now.saturating_add(linger), Due::Evict));
        } else {
            if !self.config.no_turn_timers
                && let Some(d) = live.game().deadline()
            {
                due.push((d, Due::Turn));
            }
            if live.bot_to_act().is_some() {
                let delay = u64::from(live.record.bot_delay_ms);
                due.push((now.saturating_add(delay), Due::Bot(live.seq())));
            }
        }
        if due.is_empty() {
            return;
        }
        let bot = due.iter().any(|(_, d)| matches!(d, Due::Bot(_)));
        if let Ok(mut q) = self.schedule.lock() {
            for (at, what) in due {
                q.push(Reverse((at, what, Arc::from(live.record.id.as_str()))));
            }
        }
        if bot {
            self.wake.notify_one();
        }
    }

    /// Resolves when a bot turn was scheduled (the schedule's task then runs early).
    pub async fn woken(&self) {
        self.wake.notified().await;
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
                Due::Evict => {
                    let game = match self.cache.lock() {
                        Ok(g) => g.get(&*id).cloned(),
                        Err(_) => None,
                    };
                    let Some(game) = game else { continue };
                    let finished = game.lock().await.finished();
                    if finished && let Ok(mut g) = self.cache.lock() {
                        g.remove(&*id);
                    }
                }
            }
        }
        turns
    }

    /// The cached game `id` (turns are played only for games in the cache).
    pub fn cached(&self, id: &str) -> Option<Shared> {
        self.cache.lock().ok().and_then(|g| g.get(id).cloned())
    }

    // ---- the commit protocol ----

    /// Locks a game, caught up with the store first (shared stores), so a read on any replica
    /// shows every action acknowledged anywhere (or fails, never stale), and an action is
    /// prepared on the current state.
    pub async fn current<'a>(&self, game: &'a Shared) -> Result<MutexGuard<'a, Session>, ApiError> {
        let mut live = game.lock().await;
        self.catch_up(&mut live).await?;
        Ok(live)
    }

    /// Applies an action to a game the caller holds from [`Games::current`] (caught up under
    /// the same lock): prepared on a copy of the engine state, appended to the store
    /// (compare-and-append), then made current. A concurrent append by another replica reloads
    /// the game and reports a stale seq.
    pub async fn commit(
        &self,
        live: &mut Session,
        prepare: impl FnOnce(&Session) -> Result<Prepared, ApiError>,
    ) -> Result<Submitted, ApiError> {
        let prepared = prepare(live)?;
        let finished = prepared.finished();
        match self.store.append(&live.record.id, &prepared.log).await {
            Ok(Appended::Ok) => {}
            Ok(Appended::Conflict { current }) => {
                // Read what the log has even with an unshared store: after an append whose
                // outcome was unknown (a failed commit that did reach the disk) this copy is
                // behind, and without this every later append would conflict again.
                self.refresh(live).await?;
                return Err(ApiError::new(
                    Reason::StaleSeq,
                    format!("the game moved on (seq {current}); read the state and retry"),
                )
                .with("current_seq", current.to_string()));
            }
            Err(e) => {
                tracing::error!(game = %live.record.id, error = %e, "append failed; action not acknowledged");
                // Not "it did not happen": a write cut off mid-way (a Redis timeout, a failed
                // commit) may still have been stored, and a retry with the same request id
                // returns it.
                return Err(ApiError::new(
                    Reason::StoreFailed,
                    "the action could not be stored and is not acknowledged; retry with the same request_id",
                ));
            }
        }
        let submitted = live.accept(prepared);
        if finished {
            self.count_out(&live.record.variant);
            crate::metrics::game_finished(&live.record.variant);
            if let Err(e) = self.store.finish(&live.record.id).await {
                tracing::warn!(game = %live.record.id, error = %e, "archiving a finished game failed");
            }
        }
        self.schedule_next(live);
        live.notify();
        Ok(submitted)
    }

    /// Applies the log entries another replica appended since this copy's seq (shared stores;
    /// with an unshared store this process is the only writer and the copy is current).
    pub async fn catch_up(&self, live: &mut Session) -> Result<(), ApiError> {
        if !self.store.is_shared() {
            return Ok(());
        }
        self.refresh(live).await
    }

    /// Applies the log entries after this copy's seq, whatever the store.
    async fn refresh(&self, live: &mut Session) -> Result<(), ApiError> {
        let entries = self
            .store
            .entries_after(&live.record.id, live.seq())
            .await?;
        if entries.is_empty() {
            return Ok(());
        }
        let was_finished = live.finished();
        for e in entries {
            live.apply_entry(&e)?;
        }
        if !was_finished && live.finished() {
            // Finished by another replica (or by an append whose reply was lost): no longer
            // counts against this process's limit of games in progress.
            self.count_out(&live.record.variant);
        }
        self.schedule_next(live);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex as StdMutex;

    use metrics::{Counter, Gauge, GaugeFn, Histogram, Key, KeyName, Metadata, SharedString, Unit};

    use super::*;
    use crate::service::record::NewGame;

    /// The `games_active` gauge's value, as the service moved it (a recorder of that one gauge).
    #[derive(Default)]
    struct ActiveGauge(Arc<StdMutex<f64>>);

    struct Cell(Arc<StdMutex<f64>>);

    impl GaugeFn for Cell {
        fn increment(&self, v: f64) {
            *self.0.lock().unwrap() += v;
        }
        fn decrement(&self, v: f64) {
            *self.0.lock().unwrap() -= v;
        }
        fn set(&self, v: f64) {
            *self.0.lock().unwrap() = v;
        }
    }

    impl metrics::Recorder for ActiveGauge {
        fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn register_counter(&self, _: &Key, _: &Metadata<'_>) -> Counter {
            Counter::noop()
        }
        fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
            if key.name() == crate::metrics::GAMES_ACTIVE {
                Gauge::from_arc(Arc::new(Cell(Arc::clone(&self.0))))
            } else {
                Gauge::noop()
            }
        }
        fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> Histogram {
            Histogram::noop()
        }
    }

    fn games(registry: &Arc<Registry>, store: Store) -> Games {
        let config = GamesConfig {
            no_turn_timers: true,
            finished_linger_seconds: 120,
            max_games: 1,
            auto_bot: crate::bot::styles::spec("heuristic").unwrap(),
        };
        Games::new(config, Arc::clone(registry), store)
    }

    /// A game created before a restart is counted after it (recovered), and finishing it brings
    /// the count and the gauge back to zero, never below.
    #[test]
    fn the_count_and_gauge_of_games_in_progress_survive_a_restart() {
        let recorder = ActiveGauge::default();
        let gauge = Arc::clone(&recorder.0);
        let dir = std::env::temp_dir().join(format!(
            "shuangkou-games-test-{}-{}",
            std::process::id(),
            now_ms()
        ));
        let registry = Arc::new(Registry::embedded().unwrap());
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let spec = dir.display().to_string();
        metrics::with_local_recorder(&recorder, || {
            rt.block_on(async {
                let compiled = registry.active("classic").unwrap();
                let new = NewGame {
                    variant: "classic".into(),
                    ..NewGame::default()
                };
                let (record, _) =
                    Record::new(&compiled, &new, None, "g1", &[7; 32], now_ms()).unwrap();
                let first = games(&registry, Store::open(&spec).await.unwrap());
                assert_eq!(first.create(record, None).await.unwrap(), Created::New);
                assert!(first.full());
                first.store().flush().await.unwrap();
                drop(first);
                // The restart: a new process's gauge starts at zero.
                *gauge.lock().unwrap() = 0.0;
                let second = games(&registry, Store::open(&spec).await.unwrap());
                second.recover().await.unwrap();
                assert!(second.full(), "the recovered game counts");
                assert_eq!(*gauge.lock().unwrap(), 1.0);
                let game = second.load("g1").await.unwrap();
                let mut live = second.current(&game).await.unwrap();
                second
                    .commit(&mut live, |l| l.prepare_leave(0, now_ms()))
                    .await
                    .unwrap();
                assert!(live.finished(), "a leave (escape) ends a one-deal match");
                assert!(!second.full());
                assert_eq!(*gauge.lock().unwrap(), 0.0);
                // Finished again elsewhere (a stale copy catching up) does not count twice.
                second.count_out("classic");
                assert_eq!(*gauge.lock().unwrap(), 0.0);
            })
        });
        let _ = std::fs::remove_dir_all(&dir);
    }
}
