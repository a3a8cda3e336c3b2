//! The cache of live games: a game from the cache or rebuilt from the store (one rebuild per
//! game at a time, on a blocking thread), a new game stored then cached, and the recovery of
//! every unfinished game at start.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::{Games, LiveGame, Shared, rebuild};
use crate::service::live_games;
use crate::service::status::{ApiError, Reason};
use crate::store::Created;

/// Games read from the store per step of a recovery (then replayed on every core).
const RECOVER_CHUNK: usize = 4096;

impl<G: LiveGame> Games<G> {
    /// Rebuilds every unfinished game from the store (replaying and verifying its log): read in
    /// chunks, replayed on every core (the replay is the CPU of a restart).
    pub async fn recover(&self) -> Result<(), String> {
        let ids = self
            .store
            .unfinished()
            .await
            .map_err(|e| format!("cannot list unfinished {}games: {e}", G::LOG_NAME))?;
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut ok = 0usize;
        for chunk in ids.chunks(RECOVER_CHUNK) {
            let mut stored = Vec::with_capacity(chunk.len());
            for (id, game) in chunk.iter().zip(self.store.load_many(chunk).await) {
                match game {
                    Ok(Some(game)) => stored.push(game),
                    Ok(None) => {
                        tracing::error!(game = %id, family = G::LOG_NAME, "cannot recover game: not in the store")
                    }
                    Err(e) => {
                        tracing::error!(game = %id, family = G::LOG_NAME, error = %e, "cannot recover game")
                    }
                }
            }
            let per = stored.len().div_ceil(workers).max(1);
            let restored: Vec<(String, Result<G, ApiError>)> = std::thread::scope(|scope| {
                let handles: Vec<_> = stored
                    .chunks(per)
                    .map(|part| {
                        scope.spawn(move || {
                            part.iter()
                                .map(|(record, log)| {
                                    let live = G::restore(
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
                        tracing::error!(game = %id, family = G::LOG_NAME, error = %e, "cannot recover game");
                        continue;
                    }
                };
                ok += 1;
                let finished = live.finished();
                if let Err(e) = self.adopt(&id, live) {
                    tracing::error!(game = %id, family = G::LOG_NAME, error = %e, "cannot recover game");
                }
                // Finished, but the process stopped between its last append and archiving it:
                // archive it now, or it is rebuilt at every start.
                if finished {
                    live_games::archive(&self.store, &id).await;
                }
            }
        }
        if ok > 0 {
            tracing::info!(
                games = ok,
                family = G::LOG_NAME,
                "recovered unfinished games"
            );
        }
        Ok(())
    }

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
    fn adopt(&self, id: &str, mut live: G) -> Result<Shared<G>, ApiError> {
        live.keep_actions(self.config.backlog_actions);
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
        if created == Created::New {
            let variant = live.variant().to_string();
            self.schedule_next(&live);
            self.cache.insert(&stored.id, live);
            self.in_progress.created(&variant);
            tracing::info!(game = %stored.id, variant = %variant, "{}game created", G::LOG_NAME);
        }
        Ok(created)
    }
}
