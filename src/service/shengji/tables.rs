//! The live 升級 games of this process, and the only owner of them: the cache, the count of
//! games in progress (with its `games_active{game="shengji"}` gauge), recovery at start, and the
//! commit protocol — the same as Shuangkou's (`service::games`): lock a game, catch it up with
//! the store, prepare the request on a copy, compare-and-append it, then make it current.
//!
//! 升級 games live in their own store (`Tables::store_spec`): the same backend as Shuangkou's,
//! in a sub-directory (embedded), under another key prefix (Redis) or a second memory store, so
//! neither game's recovery ever meets the other's records.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::sync::{Mutex as AsyncMutex, MutexGuard};

use super::record::{GAME, ShengjiRecord};
use super::table::{Prepared, Table};
use crate::service::clock::now_ms;
use crate::service::live_games::{self, InProgress, LiveCache};
use crate::service::status::{ApiError, Reason};
use crate::store::{Appended, Created, GameRecord, Store};
use crate::variants::{Registry, ShengjiVariant};

/// A table shared between the rpcs acting on it; one lock per game.
pub type SharedTable = Arc<AsyncMutex<Table>>;

/// The live 升級 games.
pub struct Tables {
    registry: Arc<Registry<ShengjiVariant>>,
    store: Store,
    linger_ms: u64,
    cache: LiveCache<Table>,
    /// Finished games by finishing time, dropped from the cache after the linger time.
    finished: Mutex<VecDeque<(u64, String)>>,
    /// Games in progress in the cache, with their `games_active{game="shengji"}` gauge.
    in_progress: InProgress,
}

/// The store spec of the 升級 games beside Shuangkou's `spec`.
pub fn store_spec(spec: &str) -> String {
    let spec = spec.trim();
    if spec == "memory" {
        return spec.to_string();
    }
    if ["redis://", "rediss://", "redis+unix://"]
        .iter()
        .any(|p| spec.starts_with(p))
    {
        return match spec.find("prefix=") {
            // A configured prefix gets a 升級 sub-prefix.
            Some(i) => {
                let at = i + "prefix=".len();
                let end = spec[at..].find('&').map_or(spec.len(), |e| at + e);
                format!("{}{}shengji:{}", &spec[..at], &spec[at..end], &spec[end..])
            }
            None if spec.contains('?') => format!("{spec}&prefix=sk:shengji:"),
            None => format!("{spec}?prefix=sk:shengji:"),
        };
    }
    std::path::Path::new(spec).join(GAME).display().to_string()
}

impl Tables {
    pub fn new(
        registry: Arc<Registry<ShengjiVariant>>,
        store: Store,
        max_games: usize,
        linger_seconds: u64,
    ) -> Tables {
        Tables {
            registry,
            store,
            linger_ms: linger_seconds.saturating_mul(1000),
            cache: LiveCache::default(),
            finished: Mutex::new(VecDeque::new()),
            in_progress: InProgress::new(Some(GAME), max_games),
        }
    }

    pub fn registry(&self) -> &Arc<Registry<ShengjiVariant>> {
        &self.registry
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// True when this process holds its maximum of 升級 games in progress.
    pub fn full(&self) -> bool {
        self.in_progress.full()
    }

    /// Game `id` finished: dropped from the cache after the linger time.
    fn linger(&self, id: &str) {
        if let Ok(mut f) = self.finished.lock() {
            f.push_back((now_ms(), id.to_string()));
        }
    }

    /// Drops the games finished longer ago than the linger time from the cache.
    fn evict(&self, now: u64) {
        let Ok(mut f) = self.finished.lock() else {
            return;
        };
        while let Some((at, _)) = f.front() {
            if at.saturating_add(self.linger_ms) > now {
                break;
            }
            if let Some((_, id)) = f.pop_front() {
                self.cache.remove(&id);
            }
        }
    }

    /// Rebuilds every unfinished game from the store.
    pub async fn recover(&self) -> Result<(), String> {
        let ids = self
            .store
            .unfinished()
            .await
            .map_err(|e| format!("cannot list unfinished 升級 games: {e}"))?;
        for id in ids {
            match self.load(&id).await {
                Ok(t) => {
                    if t.lock().await.finished() {
                        live_games::archive(&self.store, &id).await;
                    }
                }
                Err(e) => tracing::error!(game = %id, error = %e, "cannot recover 升級 game"),
            }
        }
        Ok(())
    }

    /// The live game `id`, from the cache or rebuilt from the store.
    pub async fn load(&self, id: &str) -> Result<SharedTable, ApiError> {
        if let Some(t) = self.cache.get(id) {
            return Ok(t);
        }
        let Some((record, log)) = self.store.load(id).await? else {
            return Err(ApiError::new(Reason::NoSuchGame, format!("no game {id}")));
        };
        let table = Table::restore(&self.registry, &record.body, &log)?;
        let finished = table.finished();
        let variant = table.record.base.variant.clone();
        self.cache.adopt(
            id,
            table,
            (!finished).then_some(variant.as_str()),
            &self.in_progress,
        )
    }

    /// Stores a new game and caches it (`Created::Existing`: the same idempotent request again).
    pub async fn create(
        &self,
        record: ShengjiRecord,
        request_id: Option<String>,
    ) -> Result<Created, ApiError> {
        self.evict(now_ms());
        let table = Table::create(&self.registry, record.clone())?;
        let stored = GameRecord {
            id: record.base.id.clone(),
            platform: record.base.platform.clone(),
            request_id,
            body: record.encode()?,
            // The script text stays in the record's body (the script table serves Shuangkou's).
            script: None,
        };
        let created = self.store.create(&stored).await?;
        if created == Created::New {
            let variant = record.base.variant.clone();
            self.cache.insert(&stored.id, table);
            self.in_progress.created(&variant);
            tracing::info!(game = %stored.id, variant = %variant, "升級 game created");
        }
        Ok(created)
    }

    /// Locks a game, caught up with the store first (shared stores).
    pub async fn current<'a>(
        &self,
        table: &'a SharedTable,
    ) -> Result<MutexGuard<'a, Table>, ApiError> {
        let mut live = table.lock().await;
        if self.store.is_shared() {
            self.refresh(&mut live).await?;
        }
        Ok(live)
    }

    /// Applies a request to a game held from [`Tables::current`]: prepared on a copy, appended
    /// (compare-and-append), then made current. Returns its seq.
    pub async fn commit(
        &self,
        live: &mut Table,
        prepare: impl FnOnce(&Table) -> Result<Prepared, ApiError>,
    ) -> Result<u64, ApiError> {
        let prepared = prepare(live)?;
        let finished = prepared.finished();
        let id = live.record.base.id.clone();
        match self.store.append(&id, &prepared.log).await {
            Ok(Appended::Ok) => {}
            Ok(Appended::Conflict { current }) => {
                self.refresh(live).await?;
                return Err(live_games::stale(current));
            }
            Err(e) => return Err(live_games::not_stored(&id, &e)),
        }
        let seq = live.accept(prepared);
        if finished {
            let variant = live.record.base.variant.clone();
            self.linger(&id);
            self.in_progress.finished(&self.store, &id, &variant).await;
        }
        live.notify();
        Ok(seq)
    }

    /// Lets the bot seats act, each action committed on its own, until a player must act (at most
    /// a deal's worth of actions per call).
    pub async fn run_bots(&self, live: &mut Table) -> Result<(), ApiError> {
        for _ in 0..64 {
            let Some((seat, command)) = live.bot_action()? else {
                return Ok(());
            };
            let now = now_ms();
            self.commit(live, |t| t.prepare(seat, command, now, None))
                .await?;
        }
        Ok(())
    }

    /// Applies the log entries after this copy's seq.
    async fn refresh(&self, live: &mut Table) -> Result<(), ApiError> {
        let id = live.record.base.id.clone();
        let entries = self.store.entries_after(&id, live.seq()).await?;
        let was_finished = live.finished();
        for e in entries {
            live.apply_entry(&e)?;
        }
        if !was_finished && live.finished() {
            self.in_progress.count_out(&live.record.base.variant);
            self.linger(&id);
        }
        Ok(())
    }
}
