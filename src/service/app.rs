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
use super::bots;
use super::clock::now_ms;
use super::games::{Games, GamesConfig};
use crate::config::ServeConfig;
use crate::store::{Store, StoreKind};
use crate::variants::{DirWatcher, Registry, RegistryConfig};

/// The service state shared by every rpc.
pub struct App {
    config: ServeConfig,
    keys: Keys,
    token_key: [u8; 32],
    games: Games,
    _watcher: Option<DirWatcher>,
    draining: AtomicBool,
    close_streams: watch::Sender<bool>,
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
        let store = Store::open(&config.store)
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
        let watcher = if config.variants_dir.is_some() {
            Some(
                registry
                    .watch(Duration::from_millis(300))
                    .map_err(|e| e.to_string())?,
            )
        } else {
            None
        };
        let auto_bot = crate::bot::styles::spec(&config.auto_policy)
            .map_err(|e| format!("--auto-policy: {e}"))?;
        let games = Games::new(
            GamesConfig {
                auto_bot,
                no_turn_timers: config.no_turn_timers,
                finished_linger_seconds: config.finished_linger_seconds,
                max_games: config.max_games,
            },
            registry,
            store,
        );
        let (close_streams, _) = watch::channel(false);
        let app = Arc::new(App {
            config,
            keys,
            token_key,
            games,
            _watcher: watcher,
            draining: AtomicBool::new(false),
            close_streams,
        });
        app.games.recover().await?;
        Ok(app)
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

    /// Resolves when the streams are to close.
    pub fn streams_closing(&self) -> watch::Receiver<bool> {
        self.close_streams.subscribe()
    }

    /// Final step of a shutdown: flush the store.
    pub async fn finish(&self) {
        if let Err(e) = self.games.store().flush().await {
            tracing::error!(error = %e, "store flush at shutdown failed");
        }
    }

    /// Starts the background task of the schedule (`Games::run_due`): turn deadlines (托管 and
    /// escapes, when turn timers are on), bot seats' turns (woken at once when one is
    /// scheduled) and the eviction of finished games from the cache. Each due turn is played by
    /// `bots` in its own task, so a thinking bot holds up no other game.
    pub fn start_timers(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let app = Arc::clone(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(250));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = tick.tick() => {}
                    _ = app.games.woken() => {}
                }
                if app.draining() {
                    continue;
                }
                for turn in app.games.run_due(now_ms()).await {
                    let app = Arc::clone(&app);
                    tokio::spawn(async move { bots::play_due(&app.games, turn).await });
                }
            }
        })
    }
}
