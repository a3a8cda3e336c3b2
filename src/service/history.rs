//! A game's past beyond what its live session keeps (`backlog`), re-derived from the store's
//! log: the events of old actions for a WatchGame from an old seq, the entry of an old action
//! for an idempotent retry, the whole log for GetReplay.
//!
//! The events are re-derived by replaying the log from the creation, or from the newest stored
//! snapshot before the first action wanted (`session::snapshot`: a deal's end), a page of entries at a
//! time (each read from the store, replayed on a blocking thread and checked against its
//! recorded state hash), so a reader holds one page and one engine state, never the match: a
//! stream the client does not read stops after its page, holding O(page) memory.

use crate::seat::Player;

use super::log_pages::{self, LogPages, Paged};
use super::session::snapshot;
use super::status::{ApiError, Reason};
use super::stored::{Stored, decode, replay_entry};
use crate::game::{DealResult, Event, Game};
use crate::store::Store;

pub use super::log_pages::PAGE;

/// The events of one action: (seq, accepted at, events).
pub type Action = Paged<Event>;

/// Where it was, so that this path names it still.
pub use super::stored::Origin;

/// A replay of one game's log, a page at a time: from its creation, or from the newest stored
/// snapshot before the first action wanted.
pub struct History {
    origin: Origin,
    id: String,
    /// The state after the last action replayed; `None` before the creation.
    game: Option<Game>,
    /// The first action whose events are wanted: the replay may start after the creation, at a
    /// snapshot before it.
    wanted: u64,
    done: bool,
}

impl History {
    /// A replay from the creation (its first page is the creation's events, seq 0).
    pub fn new(origin: Origin, id: &str) -> History {
        History::starting_at(origin, id, 0)
    }

    /// A replay whose pages hold at least the actions from `wanted` on: it starts at the newest
    /// usable snapshot before `wanted` (proved by the log's state hash at its seq), so a
    /// reader far behind replays one deal, not the match; from the creation when there is none.
    pub fn starting_at(origin: Origin, id: &str, wanted: u64) -> History {
        History {
            origin,
            id: id.to_string(),
            game: None,
            wanted,
            done: false,
        }
    }

    /// The state at the newest usable snapshot before the action `self.wanted`, if any.
    async fn snapshot_state(&self, store: &Store) -> Option<Game> {
        let before = self.wanted.checked_sub(1).filter(|&s| s > 0)?;
        let snapshots = store.snapshots(&self.id, before).await.ok()?;
        if snapshots.is_empty() {
            return None;
        }
        let scheme = self.origin.scheme;
        let resumed = blocking(move || Ok(snapshot::newest(&snapshots, scheme).newest))
            .await
            .ok()??;
        if !in_log(store, &self.id, resumed.seq, &resumed.hash).await {
            return None;
        }
        crate::metrics::snapshot("used");
        Some(resumed.game)
    }

    /// The state after the last action replayed (the game's rules and seating for the views).
    pub fn game(&self) -> Option<&Game> {
        self.game.as_ref()
    }

    /// The seq of the last action replayed (`None` before the creation).
    pub fn seq(&self) -> Option<u64> {
        self.game.as_ref().map(Game::seq)
    }

    /// The events of the action at `seq` (accepted at, events), replayed from the newest
    /// snapshot before it (else from the creation).
    pub async fn action_at(
        mut self,
        store: &Store,
        seq: u64,
    ) -> Result<(u64, Vec<Event>), ApiError> {
        self.wanted = seq;
        log_pages::action_at(self, store, seq).await
    }
}

impl LogPages for History {
    type Event = Event;

    /// The next actions' events, in order (the creation, seq 0, first): at most [`PAGE`]
    /// actions; empty once the stored log has no more.
    async fn next_page(&mut self, store: &Store) -> Result<Vec<Action>, ApiError> {
        if self.done {
            return Ok(Vec::new());
        }
        let origin = self.origin.clone();
        if self.game.is_none() {
            self.game = self.snapshot_state(store).await;
        }
        let Some(game) = self.game.take() else {
            let (game, events) = blocking(move || {
                let (mut game, events) = Game::new(
                    origin.config,
                    origin.hooks.as_ref(),
                    origin.seed,
                    origin.preset,
                    origin.created_at,
                )?;
                game.keep_every_result(origin.scheme);
                Ok((game, events))
            })
            .await?;
            self.game = Some(game);
            return Ok(vec![(0, self.origin.created_at, events)]);
        };
        let entries = store.entries_page(&self.id, game.seq(), PAGE).await;
        let entries = match entries {
            Ok(e) => e,
            Err(e) => {
                self.game = Some(game);
                return Err(e.into());
            }
        };
        if entries.is_empty() {
            self.done = true;
            self.game = Some(game);
            return Ok(Vec::new());
        }
        let (game, actions) = blocking(move || {
            let mut game = game;
            let mut actions = Vec::with_capacity(entries.len());
            let prefix = game.hash_prefix();
            for e in &entries {
                let hash = (origin.scheme, &prefix);
                let (stored, events) = replay_entry(&mut game, origin.hooks.as_ref(), hash, e)?;
                actions.push((e.seq, stored.entry.at, events));
            }
            Ok((game, actions))
        })
        .await?;
        self.game = Some(game);
        Ok(actions)
    }
}

/// True when the log recorded `hash` after the action `seq` (a snapshot's state is the log's).
async fn in_log(store: &Store, id: &str, seq: u64, hash: &str) -> bool {
    let Some(before) = seq.checked_sub(1) else {
        return false;
    };
    let entry = store.entries_page(id, before, 1).await.unwrap_or_default();
    let recorded = entry.first().and_then(|e| decode(e).ok());
    let same = recorded.is_some_and(|r| r.hash == hash);
    if !same {
        crate::metrics::snapshot("not_in_log");
    }
    same
}

/// The settled deals of a game with indexes (deal number − 1) in `range` (a GetState page
/// before the deals its live session keeps, `game::RESULTS_KEPT`): from the stored snapshots,
/// which hold each deal's result once, when their chain covers `range` and its newest state is
/// the log's; else re-derived by replaying the log from the creation to the page's last deal, a
/// page of entries at a time. Either way the deals are the ones the log proves. Deals past the
/// log's are not returned.
pub async fn settled_deals(
    store: &Store,
    id: &str,
    origin: Origin,
    range: std::ops::Range<u32>,
) -> Result<Vec<DealResult>, ApiError> {
    if range.is_empty() {
        return Ok(Vec::new());
    }
    let snapshots = store.snapshots(id, u64::MAX).await.unwrap_or_default();
    let (scheme, wanted) = (origin.scheme, range.clone());
    let (chain, picked) =
        blocking(move || Ok(snapshot::newest_keeping(&snapshots, scheme, wanted))).await?;
    if let Some(resumed) = chain.newest {
        if picked.len() == range.len() && in_log(store, id, resumed.seq, &resumed.hash).await {
            return Ok(picked);
        }
    }
    let mut history = History::new(origin, id);
    let mut deals = Vec::with_capacity(range.len());
    let mut settled = 0u32;
    while settled < range.end {
        let page = history.next_page(store).await?;
        if page.is_empty() {
            break;
        }
        for event in page.into_iter().flat_map(|(_, _, events)| events) {
            if let Event::DealEnded(result) = event {
                if range.contains(&settled) {
                    deals.push(result);
                }
                settled += 1;
            }
        }
    }
    Ok(deals)
}

/// The seq of the action `player` caused with `request_id` among the log's entries after
/// `after` and before `before`, and its request's digest (an idempotent retry of an action
/// older than the backlog). Reads the log a page at a time, decoding only.
pub async fn find_request(
    store: &Store,
    id: &str,
    player: Player,
    request_id: &str,
    range: (u64, u64),
) -> Result<Option<(u64, Option<String>)>, ApiError> {
    log_pages::find_entry(store, id, range, |e| {
        let s = decode(e)?;
        let mine = s.entry.player == player && s.request_id.as_deref() == Some(request_id);
        Ok(mine.then_some((e.seq, s.request_digest)))
    })
    .await
}

/// Every stored log entry of a game, decoded (GetReplay).
pub async fn stored_log(store: &Store, id: &str) -> Result<Vec<Stored>, ApiError> {
    log_pages::decoded_log(store, id, decode).await
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::new(Reason::Unavailable, format!("the replay failed: {e}")))?
}
