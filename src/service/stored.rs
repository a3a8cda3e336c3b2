//! A game's stored log entry (the JSON body of a `store::LogEntry`): the action, what an
//! idempotent retry needs (its key and request digest), an abort's reason, and the engine's
//! state hash after it; and its replay onto an engine state, checked against that hash.

use serde::{Deserialize, Serialize};

use super::status::{ApiError, Reason};
use crate::game::{Entry, Event, Game, HashScheme};
use crate::store::LogEntry;
use crate::variants::ScriptVariant;

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

/// Decodes a stored log entry, applies it to `game` and checks the state hash it recorded.
pub fn replay_entry(
    game: &mut Game,
    hooks: &ScriptVariant,
    scheme: HashScheme,
    e: &LogEntry,
) -> Result<(Stored, Vec<Event>), ApiError> {
    let stored = decode(e)?;
    let events = game.apply(hooks, stored.entry).map_err(|err| {
        ApiError::new(
            Reason::StoreFailed,
            format!("replay of entry {} failed: {err}", e.seq),
        )
    })?;
    if game.state_hash_with(scheme) != stored.hash {
        return Err(ApiError::new(
            Reason::StoreFailed,
            format!("replay of entry {} diverged (state hash mismatch)", e.seq),
        ));
    }
    Ok((stored, events))
}

/// A stored log entry's body.
pub fn decode(e: &LogEntry) -> Result<Stored, ApiError> {
    serde_json::from_slice(&e.body).map_err(|err| {
        ApiError::new(
            Reason::StoreFailed,
            format!("log entry {} unreadable: {err}", e.seq),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cards::CardSet;
    use crate::game::{Action, Entry};
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
                    player: crate::seat::Player::new(3),
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
