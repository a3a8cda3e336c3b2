//! The live games of this process, and the only owner of them: the cache of sessions, the count
//! of games in progress (and its `games_active` gauge, both moved in one place), the schedule of
//! turn deadlines (托管, also of disconnected seats), reconnect windows (derived from the log, so
//! they survive restarts) and evictions, recovery at start, and the commit protocol.
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
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{Mutex as AsyncMutex, MutexGuard, OnceCell};

use super::clock::now_ms;
use super::record::Record;
use super::session::{Prepared, Session, Submitted};
use super::status::{ApiError, Reason};
use crate::bot::BotSpec;
use crate::seat::Player;
use crate::store::{AppendOrRead, Created, GameRecord, LogEntry, PinnedScript, Store};
use crate::variants::Registry;

/// Games read from the store per step of a recovery (then replayed on every core).
const RECOVER_CHUNK: usize = 4096;

/// A game shared between the rpcs acting on it; one lock per game.
pub type Shared = Arc<AsyncMutex<Session>>;

/// Due time (Unix ms), what, which game; a min-heap.
type Schedule = BinaryHeap<Reverse<(u64, Due, Arc<str>)>>;

/// A scheduled task of one game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Due {
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

/// What the cache needs from the configuration.
#[derive(Clone, Copy, Debug)]
pub struct GamesConfig {
    /// Turn deadlines are not enforced (tests, load runs).
    pub no_turn_timers: bool,
    /// Seconds a finished game stays cached.
    pub finished_linger_seconds: u64,
    /// Most games in progress in this process.
    pub max_games: usize,
    /// A disconnected seat's turns are played at once, not at its turn deadline (always so
    /// without turn timers).
    pub disconnected_turns_immediate: bool,
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
    /// Rebuilds under way, by game: one per game at a time; readers that arrive meanwhile await
    /// the same one (the entry is dropped once the game is in the cache).
    loading: Mutex<HashMap<String, Arc<OnceCell<Shared>>>>,
    /// Games rebuilt from the store so far.
    rebuilds: AtomicU64,
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
            loading: Mutex::new(HashMap::new()),
            rebuilds: AtomicU64::new(0),
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

    /// Rebuilds every unfinished game from the store (replaying and verifying its log): read in
    /// chunks, replayed on every core (the replay is the CPU of a restart).
    pub async fn recover(&self) -> Result<(), String> {
        let ids = self
            .store
            .unfinished()
            .await
            .map_err(|e| format!("cannot list unfinished games: {e}"))?;
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut ok = 0usize;
        for chunk in ids.chunks(RECOVER_CHUNK) {
            let mut stored = Vec::with_capacity(chunk.len());
            for (id, game) in chunk.iter().zip(self.store.load_many(chunk).await) {
                match game {
                    Ok(Some(game)) => stored.push(game),
                    Ok(None) => {
                        tracing::error!(game = %id, "cannot recover game: not in the store")
                    }
                    Err(e) => tracing::error!(game = %id, error = %e, "cannot recover game"),
                }
            }
            let per = stored.len().div_ceil(workers).max(1);
            let restored: Vec<(String, Result<Session, ApiError>)> = std::thread::scope(|scope| {
                let handles: Vec<_> = stored
                    .chunks(per)
                    .map(|part| {
                        scope.spawn(move || {
                            part.iter()
                                .map(|(record, log)| {
                                    let live = Session::restore(
                                        &self.registry,
                                        record,
                                        log,
                                        self.config.no_turn_timers,
                                    );
                                    (record.id.clone(), live)
                                })
                                .collect::<Vec<_>>()
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .flat_map(|h| {
                        h.join().unwrap_or_else(|_| {
                            tracing::error!(
                                "a recovery thread panicked; its games are not recovered"
                            );
                            Vec::new()
                        })
                    })
                    .collect()
            });
            for (id, live) in restored {
                let live = match live {
                    Ok(live) => live,
                    Err(e) => {
                        tracing::error!(game = %id, error = %e, "cannot recover game");
                        continue;
                    }
                };
                ok += 1;
                let finished = live.finished();
                if let Err(e) = self.adopt(&id, live) {
                    tracing::error!(game = %id, error = %e, "cannot recover game");
                }
                // Finished, but the process stopped between its last append and archiving it:
                // archive it now, or it is rebuilt at every start.
                if finished {
                    if let Err(e) = self.store.finish(&id).await {
                        tracing::warn!(game = %id, error = %e, "archiving a finished game failed");
                    }
                }
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

    /// Games rebuilt from the store (replayed) so far by this process.
    pub fn rebuilds(&self) -> u64 {
        self.rebuilds.load(Ordering::Relaxed)
    }

    // ---- the cache ----

    /// The live game `id` if this process holds it.
    pub fn cached(&self, id: &str) -> Option<Shared> {
        self.cache.lock().ok().and_then(|g| g.get(id).cloned())
    }

    /// The live game `id`, from the cache or rebuilt from the store (replayed and verified).
    /// One rebuild per game at a time, shared by the readers that wait for it, and run on a
    /// blocking thread: a long match's replay never occupies an async worker.
    pub async fn load(&self, id: &str) -> Result<Shared, ApiError> {
        if let Some(g) = self.cache.lock().ok().and_then(|g| g.get(id).cloned()) {
            return Ok(g);
        }
        let flight = {
            let mut loading = self
                .loading
                .lock()
                .map_err(|_| ApiError::new(Reason::Unavailable, "internal lock poisoned"))?;
            Arc::clone(loading.entry(id.to_string()).or_default())
        };
        let result = flight.get_or_try_init(|| self.rebuild(id)).await.cloned();
        if let Ok(mut loading) = self.loading.lock()
            && loading.get(id).is_some_and(|f| Arc::ptr_eq(f, &flight))
        {
            loading.remove(id);
        }
        result
    }

    /// Rebuilds game `id` from the store (the replay on a blocking thread) and caches it.
    async fn rebuild(&self, id: &str) -> Result<Shared, ApiError> {
        if let Some(g) = self.cache.lock().ok().and_then(|g| g.get(id).cloned()) {
            return Ok(g);
        }
        let Some((record, log)) = self.store.load(id).await? else {
            return Err(ApiError::new(Reason::NoSuchGame, format!("no game {id}")));
        };
        self.rebuilds.fetch_add(1, Ordering::Relaxed);
        let registry = Arc::clone(&self.registry);
        let no_timers = self.config.no_turn_timers;
        let live = tokio::task::spawn_blocking(move || {
            Session::restore(&registry, &record, &log, no_timers)
        })
        .await
        .map_err(|e| ApiError::new(Reason::Unavailable, format!("the rebuild failed: {e}")))??;
        self.adopt(id, live)
    }

    /// Caches a game rebuilt from the store (the copy already cached wins, if another task
    /// rebuilt it meanwhile) and counts it if in progress.
    fn adopt(&self, id: &str, live: Session) -> Result<Shared, ApiError> {
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
        // The script text goes to the store's script table (once per version), not into the
        // record's body (≈ 17 KB per game otherwise).
        let mut record = record;
        let text = std::mem::take(&mut record.script);
        let stored = GameRecord {
            id: record.id.clone(),
            platform: record.platform.clone(),
            request_id,
            body: record.encode()?,
            script: Some(PinnedScript {
                hash: record.version,
                text: Arc::from(text),
            }),
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
            if live.turn_is_away() && self.away_turns_immediate() {
                due.push((now, Due::Turn));
            } else if !self.config.no_turn_timers
                && let Some(d) = live.game().deadline()
            {
                due.push((d, Due::Turn));
            }
            if live.bot_to_act().is_some() {
                let delay = u64::from(live.record.bot_delay_ms);
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
        if let Ok(mut q) = self.schedule.lock() {
            for (at, what) in due {
                q.push(Reverse((at, what, Arc::from(live.record.id.as_str()))));
            }
        }
        if bot {
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

    /// Resolves when a bot turn was scheduled (the schedule's task then runs early).
    pub async fn woken(&self) {
        self.wake.notified().await;
    }

    /// A disconnected seat's turns are played as soon as they come (configured, or without turn
    /// timers), not at its deadline.
    pub fn away_turns_immediate(&self) -> bool {
        self.config.disconnected_turns_immediate || self.config.no_turn_timers
    }

    /// Logs what `next` says a game needs now (a player and the service's action for it;
    /// `None`: nothing). A concurrent append by another replica (STALE) re-reads the game and
    /// asks `next` again, so a decision is taken once whichever replica takes it. True when
    /// something was logged here.
    pub async fn commit_due(
        &self,
        game: &Shared,
        now: u64,
        next: impl Fn(&Session) -> Option<(Player, crate::game::Action)>,
    ) -> Result<bool, ApiError> {
        for _ in 0..3 {
            let mut live = self.current(game).await?;
            let Some((player, action)) = next(&live) else {
                return Ok(false);
            };
            match self
                .commit(&mut live, |l| l.prepare_action(player, action, now))
                .await
            {
                Ok(_) => return Ok(true),
                Err(e) if e.reason == Reason::StaleSeq => continue,
                Err(e) => return Err(e),
            }
        }
        Ok(false)
    }

    /// Logs `ReconnectExpired` for every reconnect window of the game that ran out by `now`.
    async fn expire_windows(&self, game: &Shared, now: u64) -> Result<(), ApiError> {
        let expired = |l: &Session| {
            l.open_windows()
                .into_iter()
                .find(|&(_, at)| at <= now)
                .map(|(p, _)| (p, crate::game::Action::ReconnectExpired))
        };
        while self.commit_due(game, now, expired).await? {}
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

    // ---- the commit protocol ----

    /// Locks a game, caught up with the store first (shared stores), so a read on any replica
    /// shows every action acknowledged anywhere (or fails, never stale), and an action is
    /// prepared on the current state.
    pub async fn current<'a>(&self, game: &'a Shared) -> Result<MutexGuard<'a, Session>, ApiError> {
        let mut live = game.lock().await;
        self.catch_up(&mut live).await?;
        Ok(live)
    }

    /// Locks a game without reading the store, for an action committed with
    /// [`Games::commit_cached`], whose compare-and-append is the catch-up: one store round trip
    /// per action when the copy is current, on a shared store too.
    pub async fn locked<'a>(&self, game: &'a Shared) -> MutexGuard<'a, Session> {
        game.lock().await
    }

    /// Applies an action to a game the caller holds from [`Games::current`] (caught up under
    /// the same lock): prepared on a copy of the engine state, appended to the store
    /// (compare-and-append), then made current. A concurrent append by another replica brings
    /// the missing entries in the same store call; the copy applies them and the action is
    /// refused as a stale seq.
    pub async fn commit(
        &self,
        live: &mut Session,
        prepare: impl FnMut(&Session) -> Result<Prepared, ApiError>,
    ) -> Result<Submitted, ApiError> {
        self.commit_with(live, prepare, false).await
    }

    /// [`Games::commit`] for a game held from [`Games::locked`], which may be behind the store
    /// (shared stores): a rejection, or entries the compare-and-append brings back, are judged
    /// again once on the caught-up copy, as if it had been caught up first. `prepare` must refuse
    /// an action whose request is already in the log it is given (or the caller must check after
    /// an error): an action whose request id the catch-up brought in is never prepared again.
    pub async fn commit_cached(
        &self,
        live: &mut Session,
        prepare: impl FnMut(&Session) -> Result<Prepared, ApiError>,
    ) -> Result<Submitted, ApiError> {
        let behind = self.store.is_shared();
        self.commit_with(live, prepare, behind).await
    }

    async fn commit_with(
        &self,
        live: &mut Session,
        mut prepare: impl FnMut(&Session) -> Result<Prepared, ApiError>,
        mut may_be_behind: bool,
    ) -> Result<Submitted, ApiError> {
        let prepared = loop {
            let prepared = match prepare(live) {
                Ok(p) => p,
                Err(e) if may_be_behind => {
                    may_be_behind = false;
                    if self.refresh(live).await? {
                        continue;
                    }
                    return Err(e);
                }
                Err(e) => return Err(e),
            };
            match self
                .store
                .append_or_read(&live.record.id, &prepared.log)
                .await
            {
                Ok(AppendOrRead::Appended) => break prepared,
                Ok(AppendOrRead::Behind { current, entries }) => {
                    // Read even with an unshared store: after an append whose outcome was unknown
                    // (a failed commit that did reach the disk) this copy is behind, and without
                    // this every later append would conflict again.
                    self.apply_entries(live, &entries)?;
                    let repeated = prepared
                        .request()
                        .is_some_and(|(p, rid)| live.request_seq(p, rid).is_some());
                    if may_be_behind && !entries.is_empty() && !repeated {
                        may_be_behind = false;
                        continue;
                    }
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
        };
        let finished = prepared.finished();
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
        self.refresh(live).await.map(drop)
    }

    /// Applies the log entries after this copy's seq, whatever the store; true if there were any.
    async fn refresh(&self, live: &mut Session) -> Result<bool, ApiError> {
        let entries = self
            .store
            .entries_after(&live.record.id, live.seq())
            .await?;
        self.apply_entries(live, &entries)?;
        Ok(!entries.is_empty())
    }

    /// Applies log entries read from the store (those at or before this copy's seq are skipped).
    fn apply_entries(&self, live: &mut Session, entries: &[LogEntry]) -> Result<(), ApiError> {
        if entries.is_empty() {
            return Ok(());
        }
        let was_finished = live.finished();
        for e in entries {
            live.apply_entry(e)?;
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
            disconnected_turns_immediate: false,
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
                    .commit(&mut live, |l| {
                        l.prepare_leave(Player::new(0), now_ms(), None)
                    })
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

    /// Readers of a game that is not in the cache share one rebuild: four concurrent loads
    /// replay the game once and get the same live game.
    #[test]
    fn concurrent_readers_of_an_evicted_game_share_one_rebuild() {
        let registry = Arc::new(Registry::embedded().unwrap());
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let compiled = registry.active("classic").unwrap();
            let new = NewGame {
                variant: "classic".into(),
                ..NewGame::default()
            };
            let (record, _) = Record::new(&compiled, &new, None, "g1", &[7; 32], now_ms()).unwrap();
            let games = Arc::new(games(&registry, Store::open("memory").await.unwrap()));
            games.create(record, None).await.unwrap();
            games.cache.lock().unwrap().clear();
            let readers: Vec<_> = (0..4)
                .map(|_| {
                    let games = Arc::clone(&games);
                    tokio::spawn(async move { games.load("g1").await.unwrap() })
                })
                .collect();
            let mut loaded = Vec::new();
            for r in readers {
                loaded.push(
                    tokio::time::timeout(std::time::Duration::from_secs(60), r)
                        .await
                        .expect("a load within 60 s")
                        .unwrap(),
                );
            }
            assert_eq!(games.rebuilds(), 1, "one rebuild for four readers");
            assert!(loaded.iter().all(|g| Arc::ptr_eq(g, &loaded[0])));
            assert!(games.loading.lock().unwrap().is_empty());
        });
    }
}
