//! The commit protocol: the caller locks a game and catches it up with the store once
//! ([`Games::current`]: one read of the log on a shared store, none otherwise); the action is
//! prepared on a copy of the engine state, appended to the store (compare-and-append), and only
//! then made current ([`Games::commit`]). A rejection or a store failure leaves the game exactly
//! as it was.

use tokio::sync::MutexGuard;

use super::{Games, LiveGame, Shared};
use crate::service::live_games;
use crate::service::status::{ApiError, Reason};
use crate::store::{AppendOrRead, LogEntry};

impl<G: LiveGame> Games<G> {
    /// Locks a game, caught up with the store first (shared stores), so a read on any replica
    /// shows every action acknowledged anywhere (or fails, never stale), and an action is
    /// prepared on the current state.
    pub async fn current<'a>(&self, game: &'a Shared<G>) -> Result<MutexGuard<'a, G>, ApiError> {
        let mut live = game.lock().await;
        self.catch_up(&mut live).await?;
        Ok(live)
    }

    /// Locks a game without reading the store, for an action committed with
    /// [`Games::commit_cached`], whose compare-and-append is the catch-up: one store round trip
    /// per action when the copy is current, on a shared store too.
    pub async fn locked<'a>(&self, game: &'a Shared<G>) -> MutexGuard<'a, G> {
        game.lock().await
    }

    /// Applies an action to a game the caller holds from [`Games::current`] (caught up under
    /// the same lock): prepared on a copy of the engine state, appended to the store
    /// (compare-and-append), then made current. A concurrent append by another replica brings
    /// the missing entries in the same store call; the copy applies them and the action is
    /// refused as a stale seq.
    pub async fn commit(
        &self,
        live: &mut G,
        prepare: impl FnMut(&G) -> Result<G::Prepared, ApiError>,
    ) -> Result<G::Submitted, ApiError> {
        self.commit_with(live, prepare, false).await
    }

    /// [`Games::commit`] for a game held from [`Games::locked`], which may be behind the store
    /// (shared stores): a rejection, or entries the compare-and-append brings back, are judged
    /// again once on the caught-up copy, as if it had been caught up first. `prepare` must refuse
    /// an action whose request is already in the log it is given (or the caller must check after
    /// an error): an action whose request id the catch-up brought in is never prepared again.
    pub async fn commit_cached(
        &self,
        live: &mut G,
        prepare: impl FnMut(&G) -> Result<G::Prepared, ApiError>,
    ) -> Result<G::Submitted, ApiError> {
        let behind = !self.single_writer(live.id());
        self.commit_with(live, prepare, behind).await
    }

    async fn commit_with(
        &self,
        live: &mut G,
        mut prepare: impl FnMut(&G) -> Result<G::Prepared, ApiError>,
        mut may_be_behind: bool,
    ) -> Result<G::Submitted, ApiError> {
        if !self.ownership.owns_game(live.id()) {
            // Another replica owns it (its shard moved, or a read-only copy): only the owner
            // writes, or its cached copy would fall behind.
            return Err(ApiError::new(
                Reason::Unavailable,
                "another replica owns this game now; retry",
            ));
        }
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
                .append_or_read(live.id(), G::log_entry(&prepared))
                .await
            {
                Ok(AppendOrRead::Appended) => break prepared,
                Ok(AppendOrRead::Behind { current, entries }) => {
                    // Read even with an unshared store: after an append whose outcome was unknown
                    // (a failed commit that did reach the disk) this copy is behind, and without
                    // this every later append would conflict again.
                    self.apply_entries(live, &entries)?;
                    let repeated =
                        G::request_of(&prepared).is_some_and(|(p, rid)| live.has_request(p, rid));
                    if may_be_behind && !entries.is_empty() && !repeated {
                        may_be_behind = false;
                        continue;
                    }
                    return Err(live_games::stale(current));
                }
                Err(e) => return Err(live_games::not_stored(live.id(), &e)),
            }
        };
        let finished = G::finishes(&prepared);
        let submitted = live.accept(prepared);
        if let Some((seq, snapshot)) = live.take_snapshot() {
            self.store.put_snapshot_later(live.id(), seq, snapshot);
        }
        if finished {
            self.in_progress
                .finished(&self.store, live.id(), live.variant())
                .await;
        }
        self.schedule_next(live);
        live.notify();
        Ok(submitted)
    }

    /// Applies the log entries another replica appended since this copy's seq (a shared store's
    /// game this replica does not own; its only writer's copy is current).
    pub async fn catch_up(&self, live: &mut G) -> Result<(), ApiError> {
        if self.single_writer(live.id()) {
            return Ok(());
        }
        self.refresh(live).await.map(drop)
    }

    /// Applies the log entries after this copy's seq, whatever the store; true if there were any.
    async fn refresh(&self, live: &mut G) -> Result<bool, ApiError> {
        let entries = self.store.entries_after(live.id(), live.seq()).await?;
        self.apply_entries(live, &entries)?;
        Ok(!entries.is_empty())
    }

    /// Applies log entries read from the store (those at or before this copy's seq are skipped).
    fn apply_entries(&self, live: &mut G, entries: &[LogEntry]) -> Result<(), ApiError> {
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
            self.in_progress.count_out(live.variant());
        }
        self.schedule_next(live);
        Ok(())
    }
}
