//! A game's log as the service stores it: one stored entry per accepted action (the engine's
//! entry, the idempotency key and request digest that caused it, the state hash after it), an
//! action prepared on a copy and waiting for the store, and what an accepted action produced.

use serde::{Deserialize, Serialize};

use crate::game::{Entry, Event, Game, Phase};
use crate::store::LogEntry;

/// A stored log entry.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Stored {
    pub entry: Entry,
    /// The idempotency key of the request that caused it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The digest of that request (`record::request_digest`): a retry under the same key must be
    /// the same request. Entries written before have none (any retry is taken as the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_digest: Option<String>,
    /// Why an operator aborted the match (an `Abort` entry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The engine's state hash after it.
    pub hash: String,
}

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

    /// The player and request id of the action, if it came with one.
    pub fn request(&self) -> Option<(u8, &str)> {
        let rid = self.stored.request_id.as_deref()?;
        Some((self.stored.entry.player, rid))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cards::CardSet;
    use crate::game::Action;
    use crate::hand::{Declared, HandType};

    #[test]
    fn stored_entries_read_back() {
        let cards = CardSet::from_ids(&[0, 53, 54, 107]).unwrap();
        let actions = [
            Action::Play {
                cards,
                declared: None,
            },
            Action::Play {
                cards,
                declared: Some(Declared {
                    kind: HandType::Bomb,
                    key: None,
                }),
            },
            Action::Pass,
            Action::Leave,
            Action::Timeout,
            Action::Auto {
                cards,
                declared: None,
            },
            Action::Auto {
                cards: CardSet::EMPTY,
                declared: None,
            },
            Action::Disconnect,
            Action::Reconnect,
            Action::ReconnectExpired,
            Action::Abort,
        ];
        for (i, action) in actions.into_iter().enumerate() {
            let stored = Stored {
                entry: Entry {
                    player: 3,
                    action,
                    at: 1_700_000_000_000 + i as u64,
                },
                request_id: (i % 2 == 0).then(|| format!("r{i}")),
                request_digest: (i % 4 == 0).then(|| format!("d{i}")),
                reason: (i == 8).then(|| "aborted".to_string()),
                hash: "ab".repeat(32),
            };
            let bytes = serde_json::to_vec(&stored).unwrap();
            let back: Stored = serde_json::from_slice(&bytes)
                .unwrap_or_else(|e| panic!("{}: {e}", String::from_utf8_lossy(&bytes)));
            assert_eq!(back.entry, stored.entry);
            assert_eq!(back.request_id, stored.request_id);
            assert_eq!(back.request_digest, stored.request_digest);
            assert_eq!(back.hash, stored.hash);
        }
        let bad: Result<Stored, _> = serde_json::from_slice(
            br#"{"entry":{"player":0,"action":{"kind":"fly"},"at":1},"hash":""}"#,
        );
        assert!(bad.is_err());
    }
}
