//! The pieces of the owner of live games (`games`, one per game family) that know no family: the
//! cache of live games by id (a rebuilt copy adopted once), the count of games in progress with
//! its `games_active` gauge (moved in one place), the commit protocol's two refusals (the game moved on; the append was
//! not acknowledged) and its epilogue when an action finishes a game (counted out, the
//! `games_finished` counter, archived in the store).
//!
//! Depends on `status`, the store and the metrics; never on a game's session type.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Mutex as AsyncMutex;

use super::status::{ApiError, Reason};
use crate::store::Store;

/// The games in progress of one family in this process, with their gauge.
pub struct InProgress {
    /// The family's metric label (`None`: Shuangkou's metrics, which have no `game` label).
    game: Option<&'static str>,
    max: usize,
    active: AtomicUsize,
}

impl InProgress {
    pub fn new(game: Option<&'static str>, max: usize) -> InProgress {
        InProgress {
            game,
            max,
            active: AtomicUsize::new(0),
        }
    }

    fn gauge(&self, variant: &str, delta: f64) {
        match self.game {
            None => crate::metrics::games_active(variant, delta),
            Some(game) => crate::metrics::family_games_active(game, variant, delta),
        }
    }

    /// A game of `variant` in progress joins the count (created, recovered or loaded).
    pub fn count_in(&self, variant: &str) {
        self.active.fetch_add(1, Ordering::SeqCst);
        self.gauge(variant, 1.0);
    }

    /// A game of `variant` is no longer in progress (finished here or elsewhere); the count
    /// never goes below zero. True if it was counted out.
    pub fn count_out(&self, variant: &str) -> bool {
        let was = self
            .active
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        if was.is_ok() {
            self.gauge(variant, -1.0);
        }
        was.is_ok()
    }

    /// True when this process holds its maximum of games in progress.
    pub fn full(&self) -> bool {
        self.active.load(Ordering::SeqCst) >= self.max
    }

    /// A new game of `variant` was stored: counted in, and the `games_created` counter.
    pub fn created(&self, variant: &str) {
        self.count_in(variant);
        match self.game {
            None => crate::metrics::game_created(variant),
            Some(game) => crate::metrics::family_game_created(game, variant),
        }
    }

    /// An action this process committed finished game `id`: counted out, the `games_finished`
    /// counter, and the game archived in the store (a failure is logged: the game is finished
    /// either way, and recovery archives it at the next start).
    pub async fn finished(&self, store: &Store, id: &str, variant: &str) {
        self.count_out(variant);
        match self.game {
            None => crate::metrics::game_finished(variant),
            Some(game) => crate::metrics::family_game_finished(game, variant),
        }
        archive(store, id).await;
    }
}

/// Archives finished game `id` in the store; a failure is logged (the game is finished either
/// way, and recovery archives it at the next start).
pub async fn archive(store: &Store, id: &str) {
    if let Err(e) = store.finish(id).await {
        tracing::warn!(game = %id, error = %e, "archiving a finished game failed");
    }
}

/// The refusal of an action prepared on a copy that another writer moved on (compare-and-append
/// found the log at `current`).
pub fn stale(current: u64) -> ApiError {
    ApiError::new(
        Reason::StaleSeq,
        format!("the game moved on (seq {current}); read the state and retry"),
    )
    .with("current_seq", current.to_string())
}

/// The refusal of an action whose append to game `id` failed (logged here). Not "it did not
/// happen": a write cut off mid-way (a Redis timeout, a failed commit) may still have been
/// stored, and a retry with the same request id returns it.
pub fn not_stored(id: &str, error: &dyn std::fmt::Display) -> ApiError {
    tracing::error!(game = %id, error = %error, "append failed; action not acknowledged");
    ApiError::new(
        Reason::StoreFailed,
        "the action could not be stored and is not acknowledged; retry with the same request_id",
    )
}

/// The live games of one family in this process, by id, each behind its own lock.
pub struct LiveCache<T> {
    games: Mutex<HashMap<String, Arc<AsyncMutex<T>>>>,
}

impl<T> Default for LiveCache<T> {
    fn default() -> Self {
        LiveCache {
            games: Mutex::new(HashMap::new()),
        }
    }
}

impl<T> LiveCache<T> {
    /// Game `id`, if cached.
    pub fn get(&self, id: &str) -> Option<Arc<AsyncMutex<T>>> {
        self.games.lock().ok().and_then(|g| g.get(id).cloned())
    }

    /// Games cached (in progress and recently finished).
    pub fn len(&self) -> usize {
        self.games.lock().map(|g| g.len()).unwrap_or(0)
    }

    /// True when no game is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Caches a new game.
    pub fn insert(&self, id: &str, game: T) {
        if let Ok(mut games) = self.games.lock() {
            games.insert(id.to_string(), Arc::new(AsyncMutex::new(game)));
        }
    }

    /// Drops the games whose id `drop` picks from the cache (the store still has them), and
    /// hands them back.
    pub fn remove_where(&self, drop: impl Fn(&str) -> bool) -> Vec<Arc<AsyncMutex<T>>> {
        let Ok(mut games) = self.games.lock() else {
            return Vec::new();
        };
        let ids: Vec<String> = games.keys().filter(|id| drop(id)).cloned().collect();
        ids.iter().filter_map(|id| games.remove(id)).collect()
    }

    /// Drops game `id` from the cache (the store still has it).
    pub fn remove(&self, id: &str) {
        if let Ok(mut games) = self.games.lock() {
            games.remove(id);
        }
    }

    /// Caches a game rebuilt from the store; the copy already cached wins, if another task
    /// rebuilt it meanwhile. A game newly cached that is in progress (`in_progress` names its
    /// variant) joins the count.
    pub fn adopt(
        &self,
        id: &str,
        game: T,
        in_progress: Option<&str>,
        count: &InProgress,
    ) -> Result<Arc<AsyncMutex<T>>, ApiError> {
        let shared = Arc::new(AsyncMutex::new(game));
        let mut games = self
            .games
            .lock()
            .map_err(|_| ApiError::new(Reason::Unavailable, "internal lock poisoned"))?;
        let entry = games.entry(id.to_string()).or_insert_with(|| {
            if let Some(variant) = in_progress {
                count.count_in(variant);
            }
            Arc::clone(&shared)
        });
        Ok(Arc::clone(entry))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A copy rebuilt while another is cached is dropped: the cached one is shared and the game
    /// counted once; a finished game is cached but not counted; the count never goes below zero.
    #[test]
    fn a_game_adopted_twice_is_cached_and_counted_once() {
        let cache = LiveCache::<u32>::default();
        let count = InProgress::new(None, 1);
        let first = cache.adopt("g", 1, Some("classic"), &count).unwrap();
        assert!(count.full());
        let second = cache.adopt("g", 2, Some("classic"), &count).unwrap();
        assert!(Arc::ptr_eq(&first, &second));
        assert_eq!(*second.try_lock().unwrap(), 1);
        assert!(count.count_out("classic"));
        assert!(
            !count.count_out("classic"),
            "counted once, never below zero"
        );
        cache.adopt("h", 3, None, &count).unwrap();
        assert!(!count.full(), "a finished game is not counted");
        assert_eq!(cache.len(), 2);
        cache.remove("g");
        assert!(cache.get("g").is_none() && cache.get("h").is_some());
    }
}
