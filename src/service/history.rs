//! A game's past beyond what its live session keeps (`backlog`), re-derived from the store's
//! log: the events of old actions for a WatchGame from an old seq, the entry of an old action
//! for an idempotent retry, the whole log for GetReplay.
//!
//! The events are re-derived by replaying the log from the creation, a page of entries at a
//! time (each read from the store, replayed on a blocking thread and checked against its
//! recorded state hash), so a reader holds one page and one engine state, never the match: a
//! stream the client does not read stops after its page, holding O(page) memory.

use crate::seat::Player;
use std::sync::Arc;

use super::status::{ApiError, Reason};
use super::stored::{Stored, decode, replay_entry};
use crate::cards::CardSet;
use crate::game::{Event, Game, GameConfig, HashScheme};
use crate::store::Store;
use crate::variants::ScriptVariant;

/// Log entries read (and replayed) per step.
pub const PAGE: usize = 64;

/// The events of one action: (seq, accepted at, events).
pub type Action = (u64, u64, Vec<Event>);

/// What a replay from the creation needs (cloned from a live session: no store read).
#[derive(Clone)]
pub struct Origin {
    pub config: GameConfig,
    pub hooks: Arc<ScriptVariant>,
    pub seed: [u8; 32],
    pub preset: Option<Vec<CardSet>>,
    pub created_at: u64,
    pub scheme: HashScheme,
}

/// A replay of one game's log from its creation, a page at a time.
pub struct History {
    origin: Origin,
    id: String,
    /// The state after the last action replayed; `None` before the creation.
    game: Option<Game>,
    done: bool,
}

impl History {
    pub fn new(origin: Origin, id: &str) -> History {
        History {
            origin,
            id: id.to_string(),
            game: None,
            done: false,
        }
    }

    /// The state after the last action replayed (the game's rules and seating for the views).
    pub fn game(&self) -> Option<&Game> {
        self.game.as_ref()
    }

    /// The seq of the last action replayed (`None` before the creation).
    pub fn seq(&self) -> Option<u64> {
        self.game.as_ref().map(Game::seq)
    }

    /// The next actions' events, in order (the creation, seq 0, first): at most [`PAGE`]
    /// actions; empty once the stored log has no more.
    pub async fn next_page(&mut self, store: &Store) -> Result<Vec<Action>, ApiError> {
        if self.done {
            return Ok(Vec::new());
        }
        let origin = self.origin.clone();
        let Some(game) = self.game.take() else {
            let (game, events) = blocking(move || {
                Game::new(
                    origin.config,
                    origin.hooks.as_ref(),
                    origin.seed,
                    origin.preset,
                    origin.created_at,
                )
                .map_err(ApiError::from)
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
            for e in &entries {
                let (stored, events) =
                    replay_entry(&mut game, origin.hooks.as_ref(), origin.scheme, e)?;
                actions.push((e.seq, stored.entry.at, events));
            }
            Ok((game, actions))
        })
        .await?;
        self.game = Some(game);
        Ok(actions)
    }

    /// The events of the action at `seq` (accepted at, events), replayed from the creation.
    pub async fn action_at(
        mut self,
        store: &Store,
        seq: u64,
    ) -> Result<(u64, Vec<Event>), ApiError> {
        loop {
            let page = self.next_page(store).await?;
            if page.is_empty() {
                return Err(ApiError::new(
                    Reason::BadRequest,
                    format!("no action {seq}"),
                ));
            }
            if let Some((_, at, events)) = page.into_iter().find(|(s, _, _)| *s == seq) {
                return Ok((at, events));
            }
        }
    }
}

/// The seq of the action `player` caused with `request_id` among the log's entries after
/// `after` and before `before`, and its request's digest (an idempotent retry of an action
/// older than the backlog). Reads the log a page at a time, decoding only.
pub async fn find_request(
    store: &Store,
    id: &str,
    player: Player,
    request_id: &str,
    (mut after, before): (u64, u64),
) -> Result<Option<(u64, Option<String>)>, ApiError> {
    while after < before {
        let limit = PAGE.min(usize::try_from(before - after).unwrap_or(PAGE));
        let page = store.entries_page(id, after, limit).await?;
        let Some(last) = page.last() else {
            return Ok(None);
        };
        after = last.seq;
        for e in &page {
            let s = decode(e)?;
            if s.entry.player == player && s.request_id.as_deref() == Some(request_id) {
                return Ok(Some((e.seq, s.request_digest)));
            }
        }
    }
    Ok(None)
}

/// Every stored log entry of a game, decoded (GetReplay).
pub async fn stored_log(store: &Store, id: &str) -> Result<Vec<Stored>, ApiError> {
    store
        .entries_after(id, 0)
        .await?
        .iter()
        .map(decode)
        .collect()
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::new(Reason::Unavailable, format!("the replay failed: {e}")))?
}
