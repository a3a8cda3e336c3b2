//! The recovery of every unfinished game at start. Short logs are read whole, in batches bounded
//! in games and in entries, and replayed on every core; a long log (a long match) is rebuilt like
//! an evicted game, from its newest snapshot and the entries after it ([`super::rebuild`]), so a
//! restart holds at most a batch's worth of entries in memory, whatever the matches' lengths,
//! and replays a long match from its last deal, not from its creation.

use super::{Games, LiveGame, rebuild};
use crate::service::live_games;
use crate::service::status::ApiError;

/// Most games read from the store per batch of a recovery.
const BATCH_GAMES: usize = 4096;

/// Most log entries read per batch (≈ 200 bytes each while a batch is replayed: ≈ 50 MB).
const BATCH_ENTRIES: u64 = 1 << 18;

/// A log longer than this is recovered from its snapshots, not read whole (an 8-deal match has
/// ≈ 1,000 entries; a snapshot is taken at each deal's end).
pub const WHOLE_LOG_MAX: u64 = 2048;

/// How a recovery reads the games: batches of short logs, each read whole, and the long logs,
/// each rebuilt from its snapshots.
#[derive(Debug, Default, PartialEq, Eq)]
struct Plan {
    batches: Vec<Vec<String>>,
    long: Vec<String>,
}

/// The plan for `ids` whose logs are `lengths` long: logs longer than `whole_max` are long; the
/// others go in order into batches of at most [`BATCH_GAMES`] games and [`BATCH_ENTRIES`]
/// entries (a batch holds at least one game).
fn plan(ids: Vec<String>, lengths: &[u64], whole_max: u64) -> Plan {
    let mut plan = Plan::default();
    let mut batch = Vec::new();
    let mut entries = 0u64;
    for (id, &len) in ids.into_iter().zip(lengths) {
        if len > whole_max {
            plan.long.push(id);
            continue;
        }
        if !batch.is_empty() && (batch.len() == BATCH_GAMES || entries + len > BATCH_ENTRIES) {
            plan.batches.push(std::mem::take(&mut batch));
            entries = 0;
        }
        entries += len;
        batch.push(id);
    }
    if !batch.is_empty() {
        plan.batches.push(batch);
    }
    plan
}

impl<G: LiveGame> Games<G> {
    /// Rebuilds every unfinished game from the store (replaying and verifying its log), long
    /// logs (over [`WHOLE_LOG_MAX`] entries) from their snapshots.
    pub async fn recover(&self) -> Result<(), String> {
        self.recover_with(WHOLE_LOG_MAX).await
    }

    /// [`Games::recover`], with logs over `whole_max` entries rebuilt from their snapshots.
    pub async fn recover_with(&self, whole_max: u64) -> Result<(), String> {
        let ids = self
            .store
            .unfinished()
            .await
            .map_err(|e| format!("cannot list unfinished {}games: {e}", G::LOG_NAME))?;
        self.recover_ids(ids, whole_max).await.map(drop)
    }

    /// Rebuilds the games `ids` (unfinished in the store) and caches them: the ids of those
    /// recovered.
    pub(super) async fn recover_ids(
        &self,
        ids: Vec<String>,
        whole_max: u64,
    ) -> Result<Vec<String>, String> {
        // Read [`BATCH_GAMES`] at a time: one Redis pipeline stays well within a call's deadline.
        let mut lengths = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(BATCH_GAMES) {
            let part =
                self.store.log_lengths(chunk).await.map_err(|e| {
                    format!("cannot read the {}games' log lengths: {e}", G::LOG_NAME)
                })?;
            lengths.extend(part);
        }
        let plan = plan(ids, &lengths, whole_max);
        let mut recovered = Vec::new();
        for batch in &plan.batches {
            for (id, live) in self.replay_batch(batch).await {
                if self.adopt_recovered(&id, live).await {
                    recovered.push(id);
                }
            }
        }
        let (keep, no_timers) = (self.config.backlog_actions, self.config.no_turn_timers);
        for id in &plan.long {
            let live = rebuild::rebuild::<G>(&self.store, &self.registry, id, keep, no_timers)
                .await
                .and_then(|g| g.ok_or_else(|| not_in_store(id)));
            if self.adopt_recovered(id, live).await {
                recovered.push(id.clone());
            }
        }
        if !recovered.is_empty() {
            tracing::info!(
                games = recovered.len(),
                long = plan.long.len(),
                family = G::LOG_NAME,
                "recovered unfinished games"
            );
        }
        Ok(recovered)
    }

    /// The games of `batch`, each read whole and replayed, on every core.
    async fn replay_batch(&self, batch: &[String]) -> Vec<(String, Result<G, ApiError>)> {
        let mut stored = Vec::with_capacity(batch.len());
        for (id, game) in batch.iter().zip(self.store.load_many(batch).await) {
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
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
        let per = stored.len().div_ceil(workers).max(1);
        std::thread::scope(|scope| {
            let handles: Vec<_> = stored
                .chunks(per)
                .map(|part| {
                    scope.spawn(move || {
                        part.iter()
                            .map(|(record, log)| {
                                let no_timers = self.config.no_turn_timers;
                                let live = G::restore(&self.registry, record, log, no_timers);
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
                        tracing::error!("a recovery thread panicked; its games are not recovered");
                        Vec::new()
                    })
                })
                .collect()
        })
    }

    /// Caches a recovered game (true), or logs why it is not recovered (false). A finished one
    /// (the process stopped between its last append and archiving it) is archived now, or it
    /// would be rebuilt at every start.
    async fn adopt_recovered(&self, id: &str, live: Result<G, ApiError>) -> bool {
        let live = match live {
            Ok(live) => live,
            Err(e) => {
                tracing::error!(game = %id, family = G::LOG_NAME, error = %e, "cannot recover game");
                return false;
            }
        };
        let finished = live.finished();
        if let Err(e) = self.adopt(id, live) {
            tracing::error!(game = %id, family = G::LOG_NAME, error = %e, "cannot recover game");
        }
        if finished {
            live_games::archive(&self.store, id).await;
        }
        true
    }
}

fn not_in_store(id: &str) -> ApiError {
    ApiError::new(
        crate::service::status::Reason::NoSuchGame,
        format!("no game {id} in the store"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("g{i}")).collect()
    }

    #[test]
    fn long_logs_are_set_apart_and_batches_keep_the_order() {
        let p = plan(ids(5), &[3, 2049, 0, 2048, 5000], 2048);
        assert_eq!(p.long, vec!["g1".to_string(), "g4".to_string()]);
        assert_eq!(p.batches, vec![vec!["g0", "g2", "g3"]]);
    }

    #[test]
    fn a_batch_holds_at_most_so_many_games_and_entries() {
        // 4,097 one-entry logs: a full batch and one game.
        let p = plan(ids(BATCH_GAMES + 1), &[1; BATCH_GAMES + 1], 2048);
        assert_eq!(
            p.batches.iter().map(Vec::len).collect::<Vec<_>>(),
            [BATCH_GAMES, 1]
        );
        // Logs of 2,048 entries: 128 fill a batch's 262,144 entries, the 129th starts the next.
        let p = plan(ids(300), &[2048; 300], 2048);
        assert_eq!(
            p.batches.iter().map(Vec::len).collect::<Vec<_>>(),
            [128, 128, 44]
        );
        assert!(p.long.is_empty());
        assert_eq!(plan(Vec::new(), &[], 2048), Plan::default());
    }
}
