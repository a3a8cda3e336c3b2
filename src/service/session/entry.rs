//! An action on its way to the log: prepared on a copy and waiting for the store (its stored
//! entry is `service::stored`), the idempotency key it came with, and what an accepted action
//! produced.

use crate::game::{Event, Game, Phase};
use crate::seat::Player;
use crate::service::stored::Stored;
use crate::store::LogEntry;

/// What one accepted action produced.
#[derive(Clone, Debug)]
pub struct Submitted {
    pub seq: u64,
}

/// An idempotency key and the digest of the request it was sent with.
#[derive(Clone, Copy, Debug)]
pub struct Idempotent<'a> {
    pub id: &'a str,
    pub digest: &'a str,
}

/// An action applied to a copy, waiting for the store.
pub struct Prepared {
    pub log: LogEntry,
    pub(super) game: Game,
    pub(super) events: Vec<Event>,
    pub(super) stored: Stored,
}

impl Prepared {
    pub fn finished(&self) -> bool {
        self.game.phase() == Phase::Finished
    }

    /// The state and events the action would lead to (a dry run shows them uncommitted).
    pub fn outcome(&self) -> (&Game, &[Event]) {
        (&self.game, &self.events)
    }

    /// The player and request id of the action, if it came with one.
    pub fn request(&self) -> Option<(Player, &str)> {
        let rid = self.stored.request_id.as_deref()?;
        Some((self.stored.entry.player, rid))
    }
}
