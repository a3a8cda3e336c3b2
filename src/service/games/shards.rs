//! The games of the shards this replica gains and loses (`service::ownership`): a gained shard's
//! unfinished games are recovered (cached, scheduled, counted), a lost shard's are dropped from
//! memory with their schedule (entries are hints: a game no longer cached is skipped when due)
//! and their count of games in progress.

use super::{Games, LiveGame, recovery};
use crate::seat::Player;
use crate::service::status::{ApiError, Reason};
use crate::store::shard::{Shard, shard_of};

impl<G: LiveGame> Games<G> {
    /// Recovers the unfinished games of `shards` (newly owned here): each game recovered, with
    /// the players whose presence is unknown here (every seated human: their streams, if any,
    /// were on the former owner).
    pub async fn recover_shards(&self, shards: &[Shard]) -> Vec<(String, Vec<Player>)> {
        let mut ids = Vec::new();
        for &shard in shards {
            match self.store.unfinished_in(shard).await {
                Ok(part) => ids.extend(part),
                Err(e) => {
                    tracing::error!(shard, family = G::LOG_NAME, error = %e, "cannot list a gained shard's games; they load on their next request")
                }
            }
        }
        let recovered = match self.recover_ids(ids, recovery::WHOLE_LOG_MAX).await {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(family = G::LOG_NAME, error = %e, "cannot recover a gained shard's games; they load on their next request");
                return Vec::new();
            }
        };
        let mut out = Vec::with_capacity(recovered.len());
        for id in recovered {
            let Some(game) = self.cached(&id) else {
                continue;
            };
            let live = game.lock().await;
            if !live.finished() {
                out.push((id, live.human_players()));
            }
        }
        out
    }

    /// True when a failed automatic action on game `id` lost an expected race: another writer
    /// moved the game on (a former owner's late append, refused by the compare-and-append), or
    /// its shard moved away meanwhile. Logged at debug, not as a warning.
    pub fn expected_race(&self, id: &str, e: &ApiError) -> bool {
        e.reason == Reason::StaleSeq || !self.ownership.owns_game(id)
    }

    /// Drops the games of `shards` (no longer owned here) from memory: not scheduled, not
    /// counted. Each is locked once, so an action under way here ends first.
    pub async fn drop_shards(&self, shards: &[Shard]) {
        let dropped = self.cache.remove_where(|id| shards.contains(&shard_of(id)));
        let n = dropped.len();
        for game in dropped {
            let live = game.lock().await;
            if !live.finished() {
                self.in_progress.count_out(live.variant());
            }
            // Its watchers look again (and end: the game moved).
            live.notify();
        }
        if n > 0 {
            tracing::info!(
                games = n,
                shards = shards.len(),
                family = G::LOG_NAME,
                "games of lost shards dropped"
            );
        }
    }
}
