//! The cache of live games: a game from the cache or rebuilt from the store (one rebuild per
//! game at a time, on a blocking thread), and a new game stored then cached.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::{Games, LiveGame, Shared, rebuild};
use crate::service::status::{ApiError, Reason};
use crate::store::Created;

impl<G: LiveGame> Games<G> {
    // ---- the cache ----

    /// The live game `id` if this process holds it.
    pub fn cached(&self, id: &str) -> Option<Shared<G>> {
        self.cache.get(id)
    }

    /// The live game `id`, from the cache or rebuilt from the store (replayed and verified).
    /// One rebuild per game at a time, shared by the readers that wait for it, and run on a
    /// blocking thread: a long match's replay never occupies an async worker.
    pub async fn load(&self, id: &str) -> Result<Shared<G>, ApiError> {
        if let Some(g) = self.cache.get(id) {
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
    async fn rebuild(&self, id: &str) -> Result<Shared<G>, ApiError> {
        if let Some(g) = self.cache.get(id) {
            return Ok(g);
        }
        let (keep, no_timers) = (self.config.backlog_actions, self.config.no_turn_timers);
        let rebuilt =
            rebuild::rebuild::<G>(&self.store, &self.registry, id, keep, no_timers).await?;
        let Some(live) = rebuilt else {
            return Err(ApiError::new(Reason::NoSuchGame, format!("no game {id}")));
        };
        self.rebuilds.fetch_add(1, Ordering::Relaxed);
        self.adopt(id, live)
    }

    /// Caches a game rebuilt from the store (the copy already cached wins, if another task
    /// rebuilt it meanwhile) and counts it if in progress.
    pub(super) fn adopt(&self, id: &str, mut live: G) -> Result<Shared<G>, ApiError> {
        live.keep_actions(self.config.backlog_actions);
        if !self.ownership.owns_game(id) {
            // Another replica's game (read for one request, or its shard lost meanwhile): not
            // kept, scheduled nor counted here.
            return Ok(std::sync::Arc::new(tokio::sync::Mutex::new(live)));
        }
        let finished = live.finished();
        let variant = live.variant().to_string();
        // Scheduled before it is shared (a duplicate entry, if another task loads it too, is
        // harmless: entries are checked when due).
        self.schedule_next(&live);
        self.cache.adopt(
            id,
            live,
            (!finished).then_some(variant.as_str()),
            &self.in_progress,
        )
    }

    /// Stores a new game and caches it; `Created::Existing` (the same idempotent request again)
    /// leaves the cache as it is. The game is built before anything is stored, so a record the
    /// engine refuses is never stored.
    pub async fn create(
        &self,
        record: G::Record,
        request_id: Option<String>,
    ) -> Result<Created, ApiError> {
        let mut live = G::create(&self.registry, record.clone(), self.config.no_turn_timers)?;
        live.keep_actions(self.config.backlog_actions);
        let stored = G::stored_record(record, request_id)?;
        let created = self.store.create(&stored).await?;
        if created == Created::New && self.ownership.owns_game(&stored.id) {
            let variant = live.variant().to_string();
            self.schedule_next(&live);
            self.cache.insert(&stored.id, live);
            self.in_progress.created(&variant);
            tracing::info!(game = %stored.id, variant = %variant, "{}game created", G::LOG_NAME);
        }
        Ok(created)
    }
}
