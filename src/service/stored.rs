//! A game's stored log entry (the JSON body of a `store::LogEntry`): the action, what an
//! idempotent retry needs (its key and request digest), an abort's reason, and the engine's
//! state hash after it; and its replay onto an engine state, checked against that hash, from
//! what a replay from the creation needs (`Origin`).

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::status::{ApiError, Reason};
use crate::cards::CardSet;
use crate::determinism::HashPrefix;
use crate::game::{Action, Entry, Event, Game, GameConfig, HashScheme};
use crate::hand::Declared;
use crate::seat::Player;
use crate::store::LogEntry;
use crate::variants::ScriptVariant;

/// A stored log entry (read through [`Body`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(try_from = "Body")]
pub struct Stored {
    pub entry: Entry,
    /// The idempotency key of the request that caused it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The digest of that request (`rpc::digest`: a SubmitPlay's XXH3-128 with its `x3:` prefix,
    /// or a SHA-256, `record::request_digest`, as every other rpc's and a SubmitPlay's stored by
    /// earlier servers): a retry under the same key must be the same request. Entries written
    /// before digests have none (any retry is taken as the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_digest: Option<String>,
    /// Why an operator aborted the match (an `Abort` entry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The engine's state hash after it.
    pub hash: String,
}

impl Stored {
    /// The entry's body (JSON, the derived format [`Body`] reads), written into a buffer sized
    /// for it: `serde_json::to_vec` starts at 128 bytes and grows twice for a keyed play, on
    /// every action.
    ///
    /// Written field by field, byte for byte what the derived `Serialize` writes (the format
    /// [`Body`] reads; `tests::stored_entries_read_back` compares the two for every action):
    /// through serde, `serde_json` escaped each of the ten keys and the action's kind, most of
    /// the cost of writing an entry. Every value (numbers, the request id, the digest, the
    /// reason, the hash, a declared type) is still written by `serde_json`.
    pub fn encode(&self) -> Result<Vec<u8>, ApiError> {
        let mut body = Vec::with_capacity(self.body_capacity());
        self.write(&mut body)
            .map_err(|e| ApiError::new(Reason::StoreFailed, e.to_string()))?;
        Ok(body)
    }

    fn write(&self, body: &mut Vec<u8>) -> serde_json::Result<()> {
        let Entry { player, action, at } = self.entry;
        body.extend_from_slice(b"{\"entry\":{\"player\":");
        serde_json::to_writer(&mut *body, &player.number())?;
        body.extend_from_slice(b",\"action\":{\"kind\":\"");
        body.extend_from_slice(kind_name(&action).as_bytes());
        body.push(b'"');
        if let Action::Play { cards, declared } | Action::Auto { cards, declared } = action {
            body.extend_from_slice(b",\"cards\":[");
            for (i, card) in cards.iter().enumerate() {
                if i > 0 {
                    body.push(b',');
                }
                serde_json::to_writer(&mut *body, &card.id())?;
            }
            body.extend_from_slice(b"],\"declared\":");
            serde_json::to_writer(&mut *body, &declared)?;
        }
        body.extend_from_slice(b"},\"at\":");
        serde_json::to_writer(&mut *body, &at)?;
        body.push(b'}');
        let texts = [
            (&b",\"request_id\":"[..], &self.request_id),
            (b",\"request_digest\":", &self.request_digest),
            (b",\"reason\":", &self.reason),
        ];
        for (key, text) in texts {
            if let Some(text) = text {
                body.extend_from_slice(key);
                serde_json::to_writer(&mut *body, text)?;
            }
        }
        body.extend_from_slice(b",\"hash\":");
        serde_json::to_writer(&mut *body, &self.hash)?;
        body.push(b'}');
        Ok(())
    }

    /// At least the body's length, for an entry whose strings need no escapes (a few do not
    /// fit: a request id or an abort reason with many escaped characters grows the buffer).
    fn body_capacity(&self) -> usize {
        // The keys and punctuation of the longest entry, the player and the time are under 150
        // bytes; a card id at most 4 with its comma; a string its key, quotes and comma.
        let text = |s: &Option<String>| s.as_ref().map_or(0, |s| s.len() + 20);
        let action = match self.entry.action {
            Action::Play { cards, declared } | Action::Auto { cards, declared } => {
                4 * cards.len() + declared.map_or(0, |_| 64)
            }
            _ => 0,
        };
        150 + action
            + text(&self.request_id)
            + text(&self.request_digest)
            + text(&self.reason)
            + self.hash.len()
    }
}

/// `action`'s `kind` as its derived format names it (`#[serde(rename_all = "snake_case")]`).
fn kind_name(action: &Action) -> &'static str {
    match action {
        Action::Play { .. } => "play",
        Action::Pass => "pass",
        Action::Leave => "leave",
        Action::Timeout => "timeout",
        Action::Auto { .. } => "auto",
        Action::Disconnect => "disconnect",
        Action::Reconnect => "reconnect",
        Action::ReconnectExpired => "reconnect_expired",
        Action::Abort => "abort",
    }
}

/// How a [`Stored`] is read: the same fields, with the action as a plain struct (its `kind` and
/// the fields a play has) instead of through `Action`'s internally tagged enum, which serde
/// reads by first buffering the whole action into a tree of its content (about half the cost
/// of decoding an entry, and GetReplay decodes the whole log). It reads what `Action`'s
/// derived format writes, nothing else (`tests::stored_entries_read_back`).
#[derive(Deserialize)]
struct Body {
    entry: BodyEntry,
    #[serde(default)]
    request_id: Option<String>,
    #[serde(default)]
    request_digest: Option<String>,
    #[serde(default)]
    reason: Option<String>,
    hash: String,
}

#[derive(Deserialize)]
struct BodyEntry {
    player: Player,
    action: BodyAction,
    at: u64,
}

#[derive(Deserialize)]
struct BodyAction {
    kind: Kind,
    #[serde(default)]
    cards: Option<CardSet>,
    #[serde(default)]
    declared: Option<Declared>,
}

/// `Action`'s variants, as its `kind` names them.
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Kind {
    Play,
    Pass,
    Leave,
    Timeout,
    Auto,
    Disconnect,
    Reconnect,
    ReconnectExpired,
    Abort,
}

impl TryFrom<Body> for Stored {
    type Error = &'static str;

    fn try_from(b: Body) -> Result<Stored, &'static str> {
        let BodyAction {
            kind,
            cards,
            declared,
        } = b.entry.action;
        let action = match kind {
            Kind::Play => Action::Play {
                cards: cards.ok_or("missing field `cards`")?,
                declared,
            },
            Kind::Auto => Action::Auto {
                cards: cards.ok_or("missing field `cards`")?,
                declared,
            },
            Kind::Pass => Action::Pass,
            Kind::Leave => Action::Leave,
            Kind::Timeout => Action::Timeout,
            Kind::Disconnect => Action::Disconnect,
            Kind::Reconnect => Action::Reconnect,
            Kind::ReconnectExpired => Action::ReconnectExpired,
            Kind::Abort => Action::Abort,
        };
        Ok(Stored {
            entry: Entry {
                player: b.entry.player,
                action,
                at: b.entry.at,
            },
            request_id: b.request_id,
            request_digest: b.request_digest,
            reason: b.reason,
            hash: b.hash,
        })
    }
}

/// Decodes a stored log entry, applies it to `game` and checks the state hash it recorded
/// (computed from `prefix` when it is the game's: [`Game::hash_prefix`]).
pub fn replay_entry(
    game: &mut Game,
    hooks: &ScriptVariant,
    (scheme, prefix): (HashScheme, &HashPrefix),
    e: &LogEntry,
) -> Result<(Stored, Vec<Event>), ApiError> {
    let stored = decode(e)?;
    let events = game.apply(hooks, stored.entry).map_err(|err| {
        ApiError::new(
            Reason::StoreFailed,
            format!("replay of entry {} failed: {err}", e.seq),
        )
    })?;
    if game.state_hash_from(scheme, prefix) != stored.hash {
        return Err(ApiError::new(
            Reason::StoreFailed,
            format!("replay of entry {} diverged (state hash mismatch)", e.seq),
        ));
    }
    Ok((stored, events))
}

/// A stored log entry's body. Read as text, checked as UTF-8 once: read from bytes, serde_json
/// checks every string (each key and value) on its own, which cost a sixth of the decoding
/// (GetReplay and every rebuild decode whole logs). Both refuse a body that is not UTF-8.
pub fn decode(e: &LogEntry) -> Result<Stored, ApiError> {
    let unreadable = |err: &dyn std::fmt::Display| {
        ApiError::new(
            Reason::StoreFailed,
            format!("log entry {} unreadable: {err}", e.seq),
        )
    };
    let text = std::str::from_utf8(&e.body).map_err(|err| unreadable(&err))?;
    serde_json::from_str(text).map_err(|err| unreadable(&err))
}

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
            let encoded = stored.encode().unwrap();
            assert_eq!(encoded, bytes, "the derived format");
            assert_eq!(encoded.capacity(), stored.body_capacity(), "sized at once");
            let back: Stored = serde_json::from_slice(&bytes)
                .unwrap_or_else(|e| panic!("{}: {e}", String::from_utf8_lossy(&bytes)));
            // The same entry as `Entry`'s own (derived) reading of it.
            let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            let derived: Entry = serde_json::from_value(value["entry"].clone()).unwrap();
            assert_eq!(back.entry, derived);
            assert_eq!(back.entry, stored.entry);
            assert_eq!(back.request_id, stored.request_id);
            assert_eq!(back.request_digest, stored.request_digest);
            assert_eq!(back.hash, stored.hash);
            let decoded = decode(&LogEntry {
                seq: 1,
                body: bytes,
            })
            .unwrap();
            assert_eq!(
                serde_json::to_vec(&decoded).unwrap(),
                encoded,
                "decode reads it"
            );
        }
        // The largest entry the service writes: 27 three-digit card ids, a declared type with
        // its key, every string at its longest, the largest numbers.
        let declared = Some(Declared {
            kind: HandType::ChainBomb,
            key: Some(crate::cards::Rank::BIG_JOKER),
        });
        let cards = CardSet::from_ids(&(81..108).collect::<Vec<u32>>()).unwrap();
        let largest = Stored {
            entry: Entry {
                player: crate::seat::Player::new(u8::MAX),
                action: Action::Play { cards, declared },
                at: u64::MAX,
            },
            request_id: Some("r".repeat(crate::service::record::MAX_REQUEST_ID_BYTES)),
            request_digest: Some(format!("x3:{}", "f".repeat(64))),
            reason: Some("a".repeat(512)),
            hash: "ab".repeat(32),
        };
        let encoded = largest.encode().unwrap();
        assert_eq!(encoded, serde_json::to_vec(&largest).unwrap());
        assert_eq!(encoded.capacity(), largest.body_capacity(), "sized at once");
        // Strings that JSON escapes are escaped as serde_json does.
        let escaped = Stored {
            request_id: Some("quote \" backslash \\ newline \n bell \u{7} 雙扣".into()),
            reason: Some("\u{1f}\t/</script>".into()),
            ..largest
        };
        let encoded = escaped.encode().unwrap();
        assert_eq!(encoded, serde_json::to_vec(&escaped).unwrap());
        let decoded = decode(&LogEntry {
            seq: 1,
            body: encoded,
        })
        .unwrap();
        assert_eq!(decoded.request_id, escaped.request_id);
        assert_eq!(decoded.reason, escaped.reason);
        for bad in [
            &b"{\"entry\":{\"player\":0,\"action\":{\"kind\":\"pass\"},\"at\":1},\"hash\":\"\xff\"}"[..],
            b"{\"entry\":{\"player\":0,\"action\":{\"kind\":\"pass\"},\"at\":1},\"hash\":\"\"}\xff",
            br#"{"entry":{"player":0,"action":{"kind":"fly"},"at":1},"hash":""}"#,
            br#"{"entry":{"player":0,"action":{"kind":"play"},"at":1},"hash":""}"#,
            br#"{"entry":{"player":0,"action":{"kind":"auto","declared":null},"at":1},"hash":""}"#,
            br#"{"entry":{"player":0,"action":{"kind":"pass"},"at":1}}"#,
        ] {
            let text = String::from_utf8_lossy(bad);
            assert!(serde_json::from_slice::<Stored>(bad).is_err(), "{text}");
            assert!(decode(&LogEntry { seq: 1, body: bad.to_vec() }).is_err(), "{text}");
        }
    }
}
