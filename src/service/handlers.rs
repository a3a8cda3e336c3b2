//! The rpc handlers: thin over the live games (`live`), the variant registry and the store.
//!
//! Every handler: authenticate (bearer token → caller), convert the request (`convert`), act on
//! the one game under its lock (no `.await` on anything but the store while holding it), record
//! metrics, reply. Every rejection is an [`ApiError`] with a stable reason.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{Mutex as AsyncMutex, watch};
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

use super::auth::{self, GameToken, Keys, Role};
use super::convert;
use super::live::{Live, Prepared, Submitted};
use super::pb;
use super::record::Record;
use super::status::{ApiError, Reason};
use crate::config::ServeConfig;
use crate::store::{Appended, Created, GameRecord, Store};
use crate::variants::{DirWatcher, Registry, RegistryConfig};

/// Milliseconds since the Unix epoch (the only clock the service reads; the core gets it as data).
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Who is calling.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Caller {
    /// No credential, or the service runs open.
    Anonymous,
    /// A platform API key (its name).
    Platform(String),
    /// The admin key.
    Admin,
    /// A game token (not yet verified against the game's digests).
    Game(GameToken),
}

/// The service state shared by every handler.
pub struct App {
    config: ServeConfig,
    keys: Keys,
    token_key: [u8; 32],
    registry: Arc<Registry>,
    _watcher: Option<DirWatcher>,
    store: Store,
    games: Mutex<HashMap<String, Arc<AsyncMutex<Live>>>>,
    active: AtomicUsize,
    draining: AtomicBool,
    close_streams: watch::Sender<bool>,
    /// What the background task must do and when: turn deadlines (托管) and the eviction of
    /// finished games from the cache, earliest first. Entries are hints, checked against the
    /// game when they come due (a deadline met by a play in time is simply skipped), so the task
    /// never scans every game.
    schedule: Mutex<Schedule>,
}

/// Due time (Unix ms), what, which game; a min-heap.
type Schedule = BinaryHeap<Reverse<(u64, Due, Arc<str>)>>;

/// A scheduled task of one game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Due {
    /// Its turn deadline: play for the seat if it has passed (托管).
    Turn,
    /// Finished a while ago: drop it from the cache (the store still has it).
    Evict,
}

type Shared = Arc<AsyncMutex<Live>>;

impl App {
    /// Builds the service from its configuration: keys, store, variants (and the directory
    /// watcher), then recovers every unfinished game from the store.
    pub async fn open(config: ServeConfig) -> Result<Arc<App>, String> {
        let keys = Keys::new(&config.api_keys, config.admin_key.as_deref())?;
        if keys.open() {
            tracing::warn!(
                "no platform or admin key configured: the service is OPEN (local development only)"
            );
        }
        let token_key = match std::env::var("SHUANGKOU_TOKEN_KEY") {
            Ok(hexkey) => {
                let bytes = hex::decode(hexkey.trim())
                    .map_err(|_| "SHUANGKOU_TOKEN_KEY must be 64 hex digits".to_string())?;
                <[u8; 32]>::try_from(bytes.as_slice())
                    .map_err(|_| "SHUANGKOU_TOKEN_KEY must be 64 hex digits".to_string())?
            }
            Err(_) => {
                let mut k = [0u8; 32];
                getrandom::fill(&mut k).map_err(|e| format!("no OS randomness: {e}"))?;
                k
            }
        };
        let store = Store::open(&config.store)
            .await
            .map_err(|e| format!("store {}: {e}", config.store))?;
        let registry_config = RegistryConfig {
            dir: config.variants_dir.clone(),
            ..RegistryConfig::default()
        };
        let (registry, report) = Registry::open(registry_config).map_err(|e| e.to_string())?;
        for e in &report.rejected {
            tracing::error!(error = %e, "variant rejected at start");
        }
        for (id, hash) in &report.activated {
            tracing::info!(variant = %id, version = %&hash[..12.min(hash.len())], "variant active");
        }
        let registry = Arc::new(registry);
        let watcher = if config.variants_dir.is_some() {
            Some(
                registry
                    .watch(Duration::from_millis(300))
                    .map_err(|e| e.to_string())?,
            )
        } else {
            None
        };
        let (close_streams, _) = watch::channel(false);
        let app = Arc::new(App {
            config,
            keys,
            token_key,
            registry,
            _watcher: watcher,
            store,
            games: Mutex::new(HashMap::new()),
            active: AtomicUsize::new(0),
            draining: AtomicBool::new(false),
            close_streams,
            schedule: Mutex::new(BinaryHeap::new()),
        });
        app.recover().await?;
        Ok(app)
    }

    /// Rebuilds every unfinished game from the store (replaying and verifying its log).
    async fn recover(&self) -> Result<(), String> {
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

    pub fn config(&self) -> &ServeConfig {
        &self.config
    }

    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    pub fn store_kind(&self) -> &'static str {
        self.store.kind()
    }

    pub async fn store_ready(&self) -> bool {
        let ok = self.store.ping().await.is_ok();
        crate::metrics::store_up(self.store.kind(), ok);
        ok
    }

    pub fn draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    pub fn begin_drain(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    /// Ends every WatchGame stream (with UNAVAILABLE).
    pub fn close_streams(&self) {
        let _ = self.close_streams.send(true);
    }

    /// Final step of a shutdown: flush the store.
    pub async fn finish(&self) {
        if let Err(e) = self.store.flush().await {
            tracing::error!(error = %e, "store flush at shutdown failed");
        }
    }

    /// Starts the background task of the schedule: turn deadlines (托管 and escapes, when turn
    /// timers are on) and the eviction of finished games from the cache. It only visits the
    /// games whose entry is due, never all of them.
    pub fn start_timers(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let app = Arc::clone(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(250));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                if app.draining() {
                    continue;
                }
                let now = now_ms();
                for (what, id) in app.take_due(now) {
                    let game = match app.games.lock() {
                        Ok(g) => g.get(&*id).cloned(),
                        Err(_) => None,
                    };
                    let Some(game) = game else { continue };
                    match what {
                        Due::Turn => {
                            let mut live = game.lock().await;
                            if live.deadline_passed(now) {
                                if let Err(e) =
                                    app.commit(&mut live, |l| l.prepare_timeout(now)).await
                                {
                                    tracing::warn!(game = %id, error = %e, "timeout action failed");
                                }
                            }
                        }
                        Due::Evict => {
                            let finished = game.lock().await.finished();
                            if finished && let Ok(mut g) = app.games.lock() {
                                g.remove(&*id);
                            }
                        }
                    }
                }
            }
        })
    }

    // ---- authentication ----

    fn caller<T>(&self, request: &Request<T>) -> Caller {
        let Some(token) = auth::bearer(request.metadata()) else {
            return Caller::Anonymous;
        };
        if self.keys.is_admin(token) {
            return Caller::Admin;
        }
        if let Some(p) = self.keys.platform(token) {
            return Caller::Platform(p.to_string());
        }
        match GameToken::parse(token) {
            Some(t) => Caller::Game(t),
            None => Caller::Anonymous,
        }
    }

    /// A caller that may create games: a platform key, the admin key, or anyone when open.
    fn creator(&self, caller: &Caller) -> Result<Option<String>, ApiError> {
        match caller {
            Caller::Platform(p) => Ok(Some(p.clone())),
            Caller::Admin => Ok(None),
            _ if self.keys.open() => Ok(None),
            Caller::Game(_) => Err(ApiError::new(
                Reason::PermissionDenied,
                "a game token cannot create games; use a platform API key",
            )),
            Caller::Anonymous => Err(ApiError::new(
                Reason::Unauthenticated,
                "CreateGame needs a platform API key (authorization: Bearer <key>)",
            )),
        }
    }

    /// Resolves the game a request is about and the role the caller has in it.
    async fn authorize(
        &self,
        caller: &Caller,
        game_id: &str,
    ) -> Result<(Shared, Access), ApiError> {
        if game_id.is_empty() {
            return Err(ApiError::new(Reason::BadRequest, "game_id is required"));
        }
        match caller {
            Caller::Admin => Ok((self.load(game_id).await?, Access::Admin)),
            Caller::Game(token) => {
                // The token is verified against the game it names first: an unknown (forged,
                // expired) token is UNAUTHENTICATED whatever game it is used on, and only a
                // genuine token for another game is PERMISSION_DENIED, which says nothing about
                // whether the requested game exists.
                let game = self
                    .load(&token.game_id)
                    .await
                    .map_err(|e| match e.reason {
                        Reason::NoSuchGame => {
                            ApiError::new(Reason::Unauthenticated, "unknown or expired token")
                        }
                        _ => e,
                    })?;
                let ok = {
                    let live = game.lock().await;
                    live.record.verify(token)
                };
                if !ok {
                    return Err(ApiError::new(
                        Reason::Unauthenticated,
                        "unknown or expired token",
                    ));
                }
                if token.game_id != game_id {
                    return Err(ApiError::new(
                        Reason::PermissionDenied,
                        "the token is for another game",
                    ));
                }
                let access = match token.role {
                    Role::Player(p) => Access::Player(p),
                    Role::Spectator => Access::Spectator,
                };
                Ok((game, access))
            }
            Caller::Platform(_) => Err(ApiError::new(
                Reason::PermissionDenied,
                "a platform key cannot act in a game; use the seat or spectator token",
            )),
            Caller::Anonymous => Err(ApiError::new(
                Reason::Unauthenticated,
                "missing token (authorization: Bearer <token>)",
            )),
        }
    }

    // ---- games ----

    /// The live game `id`, from the cache or rebuilt from the store (replayed and verified).
    async fn load(&self, id: &str) -> Result<Shared, ApiError> {
        if let Some(g) = self.games.lock().ok().and_then(|g| g.get(id).cloned()) {
            return Ok(g);
        }
        let Some((record, log)) = self
            .store
            .load(id)
            .await
            .map_err(|e| ApiError::new(Reason::StoreFailed, e.to_string()))?
        else {
            return Err(ApiError::new(Reason::NoSuchGame, format!("no game {id}")));
        };
        let live = Live::restore(&self.registry, &record, &log, self.config.no_turn_timers)?;
        let finished = live.finished();
        // Scheduled before it is shared (a duplicate entry, if another task loads it too, is
        // harmless: entries are checked when due).
        self.schedule_next(&live);
        let shared = Arc::new(AsyncMutex::new(live));
        let mut games = self
            .games
            .lock()
            .map_err(|_| ApiError::new(Reason::Unavailable, "internal lock poisoned"))?;
        let entry = games.entry(id.to_string()).or_insert_with(|| {
            if !finished {
                self.active.fetch_add(1, Ordering::SeqCst);
            }
            Arc::clone(&shared)
        });
        Ok(Arc::clone(entry))
    }

    /// Schedules what comes next for a game after a change: its turn deadline (when turn timers
    /// are on), or its eviction from the cache once it has finished.
    fn schedule_next(&self, live: &Live) {
        let due = if live.finished() {
            let linger = self.config.finished_linger_seconds.saturating_mul(1000);
            Some((now_ms().saturating_add(linger), Due::Evict))
        } else if self.config.no_turn_timers {
            None
        } else {
            live.game().deadline().map(|d| (d, Due::Turn))
        };
        if let (Some((at, what)), Ok(mut q)) = (due, self.schedule.lock()) {
            q.push(Reverse((at, what, Arc::from(live.record.id.as_str()))));
        }
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

    /// Games cached in this process (in progress and recently finished).
    pub fn cached_games(&self) -> usize {
        self.games.lock().map(|g| g.len()).unwrap_or(0)
    }

    /// Applies an action to a game: prepared on a copy of the engine state, appended to the
    /// store (compare-and-append), then made current. A rejection or a store failure leaves the
    /// game exactly as it was. A concurrent append by another replica reloads the game and
    /// reports a stale seq.
    async fn commit(
        &self,
        live: &mut Live,
        prepare: impl FnOnce(&Live) -> Result<Prepared, ApiError>,
    ) -> Result<Submitted, ApiError> {
        // Catch up with appends made elsewhere (other replicas) before acting.
        self.catch_up(live).await?;
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
            self.active.fetch_sub(1, Ordering::SeqCst);
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
    async fn catch_up(&self, live: &mut Live) -> Result<(), ApiError> {
        if !self.store.is_shared() {
            return Ok(());
        }
        self.refresh(live).await
    }

    /// Applies the log entries after this copy's seq, whatever the store.
    async fn refresh(&self, live: &mut Live) -> Result<(), ApiError> {
        let entries = self
            .store
            .entries_after(&live.record.id, live.seq())
            .await
            .map_err(|e| ApiError::new(Reason::StoreFailed, e.to_string()))?;
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
            self.active.fetch_sub(1, Ordering::SeqCst);
        }
        self.schedule_next(live);
        Ok(())
    }

    /// Locks a game for a read, caught up with other replicas first (shared stores), so a read
    /// on any replica shows every action acknowledged anywhere (or fails, never stale).
    async fn read_lock<'a>(
        &self,
        game: &'a Shared,
    ) -> Result<tokio::sync::MutexGuard<'a, Live>, ApiError> {
        let mut live = game.lock().await;
        self.catch_up(&mut live).await?;
        Ok(live)
    }

    fn game_count(&self) -> usize {
        self.active.load(Ordering::SeqCst)
    }
}

/// What a caller may do in one game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Player(u8),
    Spectator,
    Admin,
}

/// Records an rpc's outcome in metrics and turns the result into a tonic response.
fn finish<T>(
    method: &'static str,
    start: Instant,
    r: Result<T, ApiError>,
) -> Result<Response<T>, Status> {
    let code = match &r {
        Ok(_) => "OK",
        Err(e) => code_name(e.reason.code()),
    };
    crate::metrics::rpc(method, code, start.elapsed().as_secs_f64());
    r.map(Response::new).map_err(Status::from)
}

fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code::*;
    match code {
        Ok => "OK",
        Cancelled => "CANCELLED",
        Unknown => "UNKNOWN",
        InvalidArgument => "INVALID_ARGUMENT",
        DeadlineExceeded => "DEADLINE_EXCEEDED",
        NotFound => "NOT_FOUND",
        AlreadyExists => "ALREADY_EXISTS",
        PermissionDenied => "PERMISSION_DENIED",
        ResourceExhausted => "RESOURCE_EXHAUSTED",
        FailedPrecondition => "FAILED_PRECONDITION",
        Aborted => "ABORTED",
        OutOfRange => "OUT_OF_RANGE",
        Unimplemented => "UNIMPLEMENTED",
        Internal => "INTERNAL",
        Unavailable => "UNAVAILABLE",
        DataLoss => "DATA_LOSS",
        Unauthenticated => "UNAUTHENTICATED",
    }
}

/// The `GameEngine` service.
pub struct GameApi {
    app: Arc<App>,
}

impl GameApi {
    pub fn new(app: Arc<App>) -> GameApi {
        GameApi { app }
    }
}

/// How often a watcher re-reads a shared store's log when it has no notification feed.
const WATCH_POLL: Duration = Duration::from_secs(1);

type EventStream = Pin<Box<dyn Stream<Item = Result<pb::GameEvent, Status>> + Send>>;

#[tonic::async_trait]
impl pb::game_engine_server::GameEngine for GameApi {
    async fn list_variants(
        &self,
        _request: Request<pb::ListVariantsRequest>,
    ) -> Result<Response<pb::ListVariantsResponse>, Status> {
        let start = Instant::now();
        let variants = self
            .app
            .registry
            .list()
            .iter()
            .map(convert::variant)
            .collect();
        finish(
            "ListVariants",
            start,
            Ok(pb::ListVariantsResponse { variants }),
        )
    }

    async fn create_game(
        &self,
        request: Request<pb::CreateGameRequest>,
    ) -> Result<Response<pb::CreateGameResponse>, Status> {
        let start = Instant::now();
        let caller = self.app.caller(&request);
        let r = self.create(&caller, request.into_inner()).await;
        finish("CreateGame", start, r)
    }

    async fn submit_play(
        &self,
        request: Request<pb::SubmitPlayRequest>,
    ) -> Result<Response<pb::SubmitPlayResponse>, Status> {
        let start = Instant::now();
        let caller = self.app.caller(&request);
        let req = request.into_inner();
        // A debug span: at the default `info` level it is disabled and costs nothing, where an
        // info span cost ~3.5% of the server's CPU under load (its fields formatted per play).
        let span = tracing::debug_span!("SubmitPlay", game = %req.game_id, seat = req.seat);
        let r = tracing::Instrument::instrument(self.submit(&caller, req), span).await;
        finish("SubmitPlay", start, r)
    }

    async fn get_state(
        &self,
        request: Request<pb::GetStateRequest>,
    ) -> Result<Response<pb::GetStateResponse>, Status> {
        let start = Instant::now();
        let caller = self.app.caller(&request);
        let req = request.into_inner();
        let r = async {
            let (game, access) = self.app.authorize(&caller, &req.game_id).await?;
            let live = self.app.read_lock(&game).await?;
            Ok(live.state(access))
        }
        .await;
        finish("GetState", start, r)
    }

    type WatchGameStream = EventStream;

    async fn watch_game(
        &self,
        request: Request<pb::WatchGameRequest>,
    ) -> Result<Response<Self::WatchGameStream>, Status> {
        let start = Instant::now();
        let caller = self.app.caller(&request);
        let req = request.into_inner();
        let r = self.watch(&caller, req).await;
        finish("WatchGame", start, r)
    }

    async fn get_hints(
        &self,
        request: Request<pb::GetHintsRequest>,
    ) -> Result<Response<pb::GetHintsResponse>, Status> {
        let start = Instant::now();
        let caller = self.app.caller(&request);
        let req = request.into_inner();
        let r = async {
            let (game, access) = self.app.authorize(&caller, &req.game_id).await?;
            let Access::Player(p) = access else {
                return Err(ApiError::new(
                    Reason::PermissionDenied,
                    "hints need a seat token",
                ));
            };
            let live = self.app.read_lock(&game).await?;
            live.hints(p)
        }
        .await;
        finish("GetHints", start, r)
    }

    async fn leave_game(
        &self,
        request: Request<pb::LeaveGameRequest>,
    ) -> Result<Response<pb::LeaveGameResponse>, Status> {
        let start = Instant::now();
        let caller = self.app.caller(&request);
        let req = request.into_inner();
        let r = async {
            let (game, access) = self.app.authorize(&caller, &req.game_id).await?;
            let Access::Player(p) = access else {
                return Err(ApiError::new(
                    Reason::PermissionDenied,
                    "leaving needs a seat token",
                ));
            };
            let mut live = game.lock().await;
            let now = now_ms();
            let submitted = self
                .app
                .commit(&mut live, |l| l.prepare_leave(p, now))
                .await?;
            live.leave_response(&submitted, p)
        }
        .await;
        finish("LeaveGame", start, r)
    }

    async fn get_replay(
        &self,
        request: Request<pb::GetReplayRequest>,
    ) -> Result<Response<pb::GetReplayResponse>, Status> {
        let start = Instant::now();
        let caller = self.app.caller(&request);
        let req = request.into_inner();
        let r = async {
            if req.game_id.is_empty() {
                return Err(ApiError::new(Reason::BadRequest, "game_id is required"));
            }
            let game = self.app.load(&req.game_id).await?;
            let live = self.app.read_lock(&game).await?;
            // A platform key sees its own games only: another platform's game answers exactly
            // as a game that does not exist.
            if let Caller::Platform(p) = &caller {
                if live.record.platform.as_deref() != Some(p.as_str()) {
                    return Err(ApiError::new(
                        Reason::NoSuchGame,
                        format!("no game {}", req.game_id),
                    ));
                }
            }
            if !live.finished() && caller != Caller::Admin {
                return Err(ApiError::new(
                    Reason::GameInProgress,
                    "the replay (with the seed) is available when the match is over",
                ));
            }
            Ok(live.replay())
        }
        .await;
        finish("GetReplay", start, r)
    }
}

impl GameApi {
    async fn create(
        &self,
        caller: &Caller,
        req: pb::CreateGameRequest,
    ) -> Result<pb::CreateGameResponse, ApiError> {
        let platform = self.app.creator(caller)?;
        let admin = *caller == Caller::Admin || self.app.keys.open();
        if self.app.draining() {
            return Err(ApiError::new(
                Reason::Unavailable,
                "the server is shutting down",
            ));
        }
        if self.app.game_count() >= self.app.config.max_games {
            return Err(ApiError::new(
                Reason::LimitExceeded,
                format!(
                    "this process holds its maximum of {} games",
                    self.app.config.max_games
                ),
            ));
        }
        let compiled = self.app.registry.active(&req.variant).ok_or_else(|| {
            ApiError::new(
                Reason::UnknownVariant,
                format!(
                    "no variant {:?} (known: {})",
                    req.variant,
                    self.app.registry.ids().join(", ")
                ),
            )
        })?;
        if (!req.seed.is_empty() || req.preset_hands.is_some()) && !admin {
            return Err(ApiError::new(
                Reason::PermissionDenied,
                "seed and preset_hands are admin-only",
            ));
        }
        let game_id = match req.request_id.is_empty() {
            true => auth::random_id()?,
            // An idempotent create derives its id from the platform and the request id.
            false => convert::derived_id(&self.app.token_key, platform.as_deref(), &req.request_id),
        };
        let (record, tokens) = Record::new(
            &compiled,
            &req,
            platform.clone(),
            &game_id,
            &self.app.token_key,
            now_ms(),
        )?;
        let live = Live::create(
            &self.app.registry,
            record.clone(),
            self.app.config.no_turn_timers,
        )?;
        let stored = GameRecord {
            id: game_id.clone(),
            platform: platform.clone(),
            request_id: (!req.request_id.is_empty()).then(|| req.request_id.clone()),
            body: if self.app.store_kind() != "memory" {
                record.encode()?
            } else {
                // Nothing in the memory store survives this process, and while a game lives here
                // its version is held (compiled) by the registry: its copy of the record leaves
                // out the script text (~17 KB per game).
                Record {
                    script: String::new(),
                    ..record.clone()
                }
                .encode()?
            },
        };
        match self
            .app
            .store
            .create(&stored)
            .await
            .map_err(|e| ApiError::new(Reason::StoreFailed, e.to_string()))?
        {
            Created::New => {
                let variant = live.record.variant.clone();
                self.app.schedule_next(&live);
                let shared = Arc::new(AsyncMutex::new(live));
                if let Ok(mut games) = self.app.games.lock() {
                    games.insert(game_id.clone(), shared);
                }
                self.app.active.fetch_add(1, Ordering::SeqCst);
                crate::metrics::game_created(&variant);
                tracing::info!(game = %game_id, variant = %variant, "game created");
                Ok(tokens.response(&record))
            }
            Created::Existing(existing) => {
                // The same request again: the same game and the same (derived) tokens.
                let game = self.app.load(&existing).await?;
                let live = game.lock().await;
                let again = live.record.tokens_again(&self.app.token_key)?;
                Ok(again.response(&live.record))
            }
        }
    }

    async fn submit(
        &self,
        caller: &Caller,
        req: pb::SubmitPlayRequest,
    ) -> Result<pb::SubmitPlayResponse, ApiError> {
        let (game, access) = self.app.authorize(caller, &req.game_id).await?;
        let player = match access {
            Access::Player(p) => p,
            _ => {
                return Err(ApiError::new(
                    Reason::PermissionDenied,
                    "playing needs a seat token",
                ));
            }
        };
        if req.seat != u32::from(player) {
            return Err(ApiError::new(
                Reason::PermissionDenied,
                format!("the token is for player {player}, not {}", req.seat),
            ));
        }
        let action = convert::action(&req)?;
        if self.app.draining() {
            return Err(ApiError::new(
                Reason::Unavailable,
                "the server is shutting down; retry elsewhere",
            ));
        }
        let mut live = game.lock().await;
        self.app.catch_up(&mut live).await?;
        let rid = (!req.request_id.is_empty()).then_some(req.request_id.as_str());
        if let Some(seq) = rid.and_then(|r| live.request_seq(player, r)) {
            return live.response_for(seq, player);
        }
        let now = now_ms();
        let expected = req.expected_seq;
        // `expected_seq` is checked inside the commit, against the state it acts on (after
        // catching up with other replicas), so a request that lost a race is STALE_SEQ, never
        // judged on a newer state (NOT_YOUR_TURN…).
        let committed = self
            .app
            .commit(&mut live, |l| {
                if expected != 0 && expected != l.seq() {
                    return Err(ApiError::new(
                        Reason::StaleSeq,
                        format!("expected seq {expected} but the game is at {}", l.seq()),
                    )
                    .with("current_seq", l.seq().to_string()));
                }
                l.prepare(player, action, now, rid)
            })
            .await;
        match committed {
            Ok(submitted) => live.response_for(submitted.seq, player),
            // The same request, applied meanwhile by another replica (a retry racing its
            // original): the original result.
            Err(e) => match rid.and_then(|r| live.request_seq(player, r)) {
                Some(seq) => live.response_for(seq, player),
                None => Err(e),
            },
        }
    }

    async fn watch(
        &self,
        caller: &Caller,
        req: pb::WatchGameRequest,
    ) -> Result<EventStream, ApiError> {
        let (game, access) = self.app.authorize(caller, &req.game_id).await?;
        if access == Access::Admin {
            // The admin may watch as a spectator.
        }
        let mut notify = {
            let live = game.lock().await;
            live.subscribe()
        };
        let mut store_notify = self.app.store.subscribe(&req.game_id);
        let (mut local_open, mut store_open) = (true, true);
        let shared = self.app.store.is_shared();
        let mut closing = self.app.close_streams.subscribe();
        let app = Arc::clone(&self.app);
        // The last seq sent; `None` until something is sent when watching from the beginning
        // (`from_seq` 0 includes the creation events, seq 0, exactly once).
        let mut next = (req.from_seq > 0).then_some(req.from_seq);
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<pb::GameEvent, Status>>(64);
        crate::metrics::watch_streams(1.0);
        tokio::spawn(async move {
            loop {
                // Send everything after `next`, then wait for news.
                let batch = {
                    let mut live = game.lock().await;
                    if app.catch_up(&mut live).await.is_err() {
                        Vec::new()
                    } else {
                        live.events_after(next, access)
                    }
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
                        let _ = tx.send(Err(status.into())).await;
                        break;
                    }
                    _ = tx.closed() => break,
                }
            }
            crate::metrics::watch_streams(-1.0);
        });
        Ok(Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx)))
    }
}

/// The `VariantAdmin` service (admin key only).
pub struct AdminApi {
    app: Arc<App>,
}

impl AdminApi {
    pub fn new(app: Arc<App>) -> AdminApi {
        AdminApi { app }
    }

    fn check<T>(&self, request: &Request<T>) -> Result<(), ApiError> {
        match self.app.caller(request) {
            Caller::Admin => Ok(()),
            _ if self.app.keys.open() => Ok(()),
            Caller::Anonymous => Err(ApiError::new(
                Reason::Unauthenticated,
                "the admin key is required",
            )),
            _ => Err(ApiError::new(
                Reason::PermissionDenied,
                "the admin key is required",
            )),
        }
    }
}

#[tonic::async_trait]
impl pb::variant_admin_server::VariantAdmin for AdminApi {
    async fn validate_variant(
        &self,
        request: Request<pb::ValidateVariantRequest>,
    ) -> Result<Response<pb::ValidateVariantResponse>, Status> {
        let start = Instant::now();
        let r = self.check(&request).map(|_| {
            let req = request.into_inner();
            let name = if req.file_name.is_empty() {
                "candidate.rhai".to_string()
            } else {
                req.file_name
            };
            let expected = name.strip_suffix(".rhai").map(str::to_string);
            let hash = crate::variants::content_hash(&req.source);
            match crate::variants::load(
                &name,
                &req.source,
                expected.as_deref(),
                crate::variants::check::DEFAULT_RANDOM_DEALS,
                crate::variants::check::DEFAULT_SEED,
            ) {
                Ok((v, _)) => pb::ValidateVariantResponse {
                    ok: true,
                    id: v.id().to_string(),
                    version: hash,
                    errors: Vec::new(),
                },
                Err(e) => pb::ValidateVariantResponse {
                    ok: false,
                    id: String::new(),
                    version: hash,
                    errors: vec![e.to_string()],
                },
            }
        });
        finish("ValidateVariant", start, r)
    }

    async fn reload_variants(
        &self,
        request: Request<pb::ReloadVariantsRequest>,
    ) -> Result<Response<pb::ReloadVariantsResponse>, Status> {
        let start = Instant::now();
        let r = match self.check(&request) {
            Err(e) => Err(e),
            Ok(()) => match self.app.registry.reload() {
                Err(e) => Err(ApiError::new(Reason::BadRequest, e.to_string())),
                Ok(report) => Ok(convert::reload_report(&report)),
            },
        };
        finish("ReloadVariants", start, r)
    }
}
