//! The service as one value ([`App`]) and its bootstrap: configuration → keys → store →
//! variant registry (and its directory watcher) → recovery of unfinished games. `server` then
//! serves it and drains it.
//!
//! Holds what every rpc shares: the configuration, the keys and the token key (from
//! [`ServeConfig`]: no handler reads the environment), the live games ([`Games`]), the drain
//! state and the signal that ends WatchGame streams.
//!
//! Depends on `games`, `auth` and the configuration; never on the wire types or the rpc modules.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::watch;

use super::auth::Keys;
use super::games::{Games, GamesConfig};
use super::heap::give_back_free_heap;
use super::ownership::{Identity, LeaseSettings, Ownership, leases};
use super::presence::{Presence, PresenceConfig};
use super::shengji::family::{self as shengji_family, Tables};
use super::shengji::store::store_spec;
use super::timers;
use crate::config::{DisconnectedTurns, ServeConfig};
use crate::store::shard::Shard;
use crate::store::{Store, StoreKind};
use crate::variants::{DirWatcher, Registry, RegistryConfig};

/// The service state shared by every rpc.
pub struct App {
    config: ServeConfig,
    keys: Keys,
    token_key: [u8; 32],
    games: Games,
    presence: Arc<Presence>,
    /// The 升級 games (`shengji.v1`) and their presence.
    shengji: Arc<Tables>,
    shengji_presence: Arc<Presence>,
    _watcher: Option<DirWatcher>,
    _shengji_watcher: Option<DirWatcher>,
    draining: AtomicBool,
    close_streams: watch::Sender<bool>,
    /// The WatchGame catch-up pages replayed at once by all streams: one per core.
    catch_up_replays: tokio::sync::Semaphore,
    /// The games this replica owns (all of them but on a shared store), for both families.
    ownership: Arc<Ownership>,
    /// The lease loop (a shared store), stopped at shutdown before the leases are released.
    lease_loop: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// The token key of the configuration (64 hex digits), or 256 random bits when none is set.
fn token_key(config: &ServeConfig) -> Result<[u8; 32], String> {
    match &config.token_key {
        Some(hexkey) => {
            let bytes = hex::decode(hexkey.trim())
                .map_err(|_| "SHUANGKOU_TOKEN_KEY must be 64 hex digits".to_string())?;
            <[u8; 32]>::try_from(bytes.as_slice())
                .map_err(|_| "SHUANGKOU_TOKEN_KEY must be 64 hex digits".to_string())
        }
        None => {
            tracing::warn!(
                "no SHUANGKOU_TOKEN_KEY: a random token key for this process only; tokens already issued keep verifying after a restart and on other replicas (the store keeps their digests), but an idempotent CreateGame retry after a restart (or on another replica) cannot re-issue them: FAILED_PRECONDITION/TOKEN_KEY_CHANGED. Set a fixed key in production"
            );
            let mut k = [0u8; 32];
            getrandom::fill(&mut k).map_err(|e| format!("no OS randomness: {e}"))?;
            Ok(k)
        }
    }
}

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
        let token_key = token_key(&config)?;
        let store = Store::open_with(&config.store, config.store_settings())
            .await
            .map_err(|e| format!("store {}: {e}", config.store))?;
        let registry_config = RegistryConfig {
            dir: config.variants_dir.clone(),
            ..RegistryConfig::default()
        };
        // Compiling and checking every variant is seconds of CPU: off the async workers.
        let (registry, report) =
            tokio::task::spawn_blocking(move || Registry::open(registry_config))
                .await
                .map_err(|e| format!("variant loading failed: {e}"))?
                .map_err(|e| e.to_string())?;
        for e in &report.rejected {
            tracing::error!(error = %e, "variant rejected at start");
        }
        for (id, hash) in &report.activated {
            tracing::info!(variant = %id, version = %&hash[..12.min(hash.len())], "variant active");
        }
        let registry = Arc::new(registry);
        let watcher = watch_dir(&registry, config.variants_dir.is_some())?;
        let auto_bot = crate::bot::styles::spec(&config.auto_policy)
            .map_err(|e| format!("--auto-policy: {e}"))?;
        let games_config = GamesConfig {
            auto_bot,
            no_turn_timers: config.no_turn_timers,
            finished_linger_seconds: config.finished_linger_seconds,
            backlog_actions: config.backlog_actions,
            max_games: config.max_games,
            disconnected_turns_immediate: config.disconnected_turns == DisconnectedTurns::Immediate,
        };
        let ownership = if store.is_shared() {
            let identity = Identity::new(config.advertised_addr())?;
            tracing::info!(replica = %identity.replica, addr = %identity.addr, ttl = ?config.lease_ttl, "shared store: games are divided between replicas by shard leases");
            let settings = LeaseSettings {
                ttl: config.lease_ttl,
            };
            Ownership::leased(identity, settings)
        } else {
            Ownership::all()
        };
        let games = Games::new(games_config, registry, store).owned_by(Arc::clone(&ownership));
        let presence_config = PresenceConfig {
            grace_ms: config.presence_grace_ms,
            max_streams_per_token: config.max_watch_streams_per_token.max(1),
        };
        let presence = Presence::new(presence_config);
        let (shengji, shengji_watcher) = open_shengji(&config, games_config).await?;
        // One task runs both schedules: a 升級 bot turn wakes it too.
        let shengji = shengji
            .waking(games.wake())
            .owned_by(Arc::clone(&ownership));
        let (close_streams, _) = watch::channel(false);
        let app = Arc::new(App {
            config,
            keys,
            token_key,
            games,
            presence,
            shengji: Arc::new(shengji),
            shengji_presence: Presence::new(presence_config),
            _watcher: watcher,
            _shengji_watcher: shengji_watcher,
            draining: AtomicBool::new(false),
            close_streams,
            catch_up_replays: tokio::sync::Semaphore::new(
                std::thread::available_parallelism().map_or(2, std::num::NonZero::get),
            ),
            ownership,
            lease_loop: std::sync::Mutex::new(None),
        });
        if app.ownership.divided() {
            // The first round takes this replica's share and recovers its games.
            let handle = leases::start(&app).await;
            if let Ok(mut slot) = app.lease_loop.lock() {
                *slot = Some(handle);
            }
        } else {
            app.games.recover().await?;
            app.shengji.recover().await?;
        }
        // The replay's temporaries (the records and logs read, the replayed states' scratch)
        // are freed by now, but the allocator keeps their pages until it is asked.
        if give_back_free_heap() {
            tracing::info!("recovery's freed heap given back to the OS");
        }
        Ok(app)
    }

    /// The 升級 games.
    pub fn shengji(&self) -> &Tables {
        &self.shengji
    }

    /// The 升級 games' presence (their WatchGame streams).
    pub fn shengji_presence(&self) -> &Arc<Presence> {
        &self.shengji_presence
    }

    /// What is due for the 升級 games at `now` (the schedule's task runs it each round after
    /// Shuangkou's): bot seats' turns and turn deadlines (托管), each played in its own task,
    /// reconnect windows and evictions, then presence (disconnects).
    async fn run_shengji_due(&self, now: u64) {
        for turn in self.shengji.run_due(now).await {
            let tables = Arc::clone(&self.shengji);
            tokio::spawn(async move { shengji_family::play_due(&tables, turn).await });
        }
        self.shengji_presence.run_due(&self.shengji, now).await;
    }

    pub fn config(&self) -> &ServeConfig {
        &self.config
    }

    pub fn keys(&self) -> &Keys {
        &self.keys
    }

    pub fn token_key(&self) -> &[u8; 32] {
        &self.token_key
    }

    pub fn presence(&self) -> &Arc<Presence> {
        &self.presence
    }

    pub fn games(&self) -> &Games {
        &self.games
    }

    pub fn registry(&self) -> &Arc<Registry> {
        self.games.registry()
    }

    pub fn store_kind(&self) -> StoreKind {
        self.games.store().kind()
    }

    /// Games cached in this process (in progress and recently finished).
    pub fn cached_games(&self) -> usize {
        self.games.cached_games()
    }

    pub async fn store_ready(&self) -> bool {
        let store = self.games.store();
        let ok = store.ping().await.is_ok();
        crate::metrics::store_up(store.kind().name(), ok);
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

    /// The WatchGame catch-up replays in flight: one per core. Fifty streams from seq 0 would
    /// otherwise replay fifty pages at once on fifty blocking threads, each page's memory at its
    /// peak together and left in as many allocator arenas; a stream waits here only while it
    /// replays, not while its client is slow.
    pub fn catch_up_replays(&self) -> &tokio::sync::Semaphore {
        &self.catch_up_replays
    }

    /// Resolves when the streams are to close.
    pub fn streams_closing(&self) -> watch::Receiver<bool> {
        self.close_streams.subscribe()
    }

    /// The games this replica owns.
    pub fn ownership(&self) -> &Arc<Ownership> {
        &self.ownership
    }

    /// Final step of a shutdown: hand the shards over (a shared store: the lease loop stops,
    /// and any lease it has not released at the drain's start is released now), then flush the
    /// store.
    pub async fn finish(&self) {
        let lease_loop = self.lease_loop.lock().ok().and_then(|mut l| l.take());
        if let Some(handle) = lease_loop {
            handle.abort();
            let _ = handle.await;
            leases::stop(self).await;
        }
        if let Err(e) = self.games.store().flush().await {
            tracing::error!(error = %e, "store flush at shutdown failed");
        }
        if let Err(e) = self.shengji.store().flush().await {
            tracing::error!(error = %e, "升級 store flush at shutdown failed");
        }
    }

    /// Starts the background task of the schedule (`Games::run_due`): turn deadlines (托管 and
    /// escapes, when turn timers are on), reconnect windows, bot seats' turns (woken at once when
    /// one is scheduled), the eviction of finished games from the cache, and presence (the
    /// disconnects of players whose streams closed). It sleeps until the next entry is due, and
    /// the due turns are played by `bots` on a bounded set of workers, earliest deadline first
    /// (`timers`), so a thinking bot holds up no other game.
    pub fn start_timers(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        timers::start(Arc::clone(self), timers::SETTINGS)
    }
}

/// The schedule's task serves the service: its games, its drain, and presence each round.
impl timers::Host for App {
    fn games(&self) -> &Games {
        &self.games
    }

    fn draining(&self) -> bool {
        App::draining(self)
    }

    async fn run_other_due(&self, now: u64) {
        self.presence.run_due(&self.games, now).await;
        self.run_shengji_due(now).await;
    }

    fn next_other_due(&self) -> Option<u64> {
        self.shengji.next_due()
    }
}

/// The lease loop serves the service: what it gains is recovered for both families (with every
/// seated player's presence from the takeover), what it loses is dropped from both.
impl leases::Host for App {
    fn lease_store(&self) -> &Store {
        self.games.store()
    }

    fn ownership(&self) -> &Ownership {
        &self.ownership
    }

    fn draining(&self) -> bool {
        App::draining(self)
    }

    async fn gained(&self, shards: Vec<Shard>) {
        for (id, players) in self.games.recover_shards(&shards).await {
            self.presence.taken_over(&id, &players);
        }
        for (id, players) in self.shengji.recover_shards(&shards).await {
            self.shengji_presence.taken_over(&id, &players);
        }
        if give_back_free_heap() {
            tracing::debug!("recovery's freed heap given back to the OS");
        }
    }

    async fn lost(&self, shards: Vec<Shard>) {
        self.games.drop_shards(&shards).await;
        self.shengji.drop_shards(&shards).await;
    }
}

/// The 升級 side: its registry (the `shengji` scripts of the variants directory, or the embedded
/// one when the directory has none) with its watcher, and its games in their own store.
async fn open_shengji(
    config: &ServeConfig,
    games_config: GamesConfig,
) -> Result<(Tables, Option<DirWatcher>), String> {
    use crate::variants::{Registry, ShengjiVariant};
    let dir_config = RegistryConfig {
        dir: config.variants_dir.clone(),
        ..RegistryConfig::default()
    };
    let opened = tokio::task::spawn_blocking(move || {
        match Registry::<ShengjiVariant>::open_family(dir_config) {
            Ok((r, _)) => Ok((r, true)),
            Err(e) => {
                tracing::warn!(error = %e, "no 升級 script in the variants directory: the embedded one serves");
                Registry::<ShengjiVariant>::embedded_family().map(|r| (r, false))
            }
        }
    })
    .await
    .map_err(|e| format!("升級 variant loading failed: {e}"))?
    .map_err(|e| e.to_string())?;
    let (registry, from_dir) = opened;
    let registry = Arc::new(registry);
    let watcher = watch_dir(&registry, from_dir && config.variants_dir.is_some())?;
    let spec = store_spec(&config.store);
    let store = Store::open_with(&spec, config.store_settings())
        .await
        .map_err(|e| format!("升級 store {spec}: {e}"))?;
    Ok((Tables::new(games_config, registry, store), watcher))
}

/// The directory watcher of a registry (any game family), when it serves a directory.
fn watch_dir<V: crate::variants::Family>(
    registry: &Arc<crate::variants::Registry<V>>,
    from_dir: bool,
) -> Result<Option<DirWatcher>, String> {
    if !from_dir {
        return Ok(None);
    }
    registry
        .watch(Duration::from_millis(300))
        .map(Some)
        .map_err(|e| e.to_string())
}
