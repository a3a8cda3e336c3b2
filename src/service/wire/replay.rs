//! A [`Replay`] on the wire: `GetReplayResponse` from a replay, and a replay from a
//! `GetReplayResponse` (what a client reads and verifies with [`crate::service::replay::verify`]).

use crate::cards::CardSet;
use crate::game::{Action, Entry, GameConfig};
use crate::service::pb;
use crate::service::replay::Replay;
use crate::service::wire::request::{declared, declared_to};
use crate::service::wire::view::points;

/// The wire name of an action kind, and back.
const KINDS: [(&str, Option<Action>); 7] = [
    ("play", None),
    ("pass", Some(Action::Pass)),
    ("leave", Some(Action::Leave)),
    ("timeout", Some(Action::Timeout)),
    ("disconnect", Some(Action::Disconnect)),
    ("reconnect", Some(Action::Reconnect)),
    ("reconnect_expired", Some(Action::ReconnectExpired)),
];

/// The wire name of the service's automatic play (托管 by a bot): its cards, none for a pass.
const AUTO: &str = "auto";

fn kind_name(a: &Action) -> &'static str {
    match a {
        Action::Play { .. } => "play",
        Action::Auto { .. } => AUTO,
        other => KINDS
            .iter()
            .find(|(_, k)| k.as_ref() == Some(other))
            .map_or("play", |(name, _)| name),
    }
}

impl From<&Replay> for pb::GetReplayResponse {
    fn from(r: &Replay) -> pb::GetReplayResponse {
        let actions = r
            .entries
            .iter()
            .zip(&r.hashes)
            .enumerate()
            .map(|(i, (e, hash))| {
                let (cards, declared) = match e.action {
                    Action::Play { cards, declared } | Action::Auto { cards, declared } => {
                        (cards.ids(), declared.map(declared_to))
                    }
                    _ => (Vec::new(), None),
                };
                pb::ReplayAction {
                    seq: i as u64 + 1,
                    player: u32::from(e.player),
                    kind: kind_name(&e.action).into(),
                    cards,
                    declared,
                    at: e.at as i64,
                    state_hash: hash.clone(),
                }
            })
            .collect();
        pb::GetReplayResponse {
            seed: hex::encode(r.seed),
            variant: r.config.variant.clone(),
            variant_version: r.config.version.clone(),
            actions,
            options: r.options.clone().into_iter().collect(),
            deals: r.config.deals,
            preset_hands: r.preset_hands.as_ref().map(|h| pb::PresetHands {
                hands: h
                    .iter()
                    .map(|c| pb::CardList { cards: c.clone() })
                    .collect(),
            }),
            final_scores: r.final_totals.iter().map(|c| points(*c)).collect(),
            engine_version: r.engine_version.clone(),
            created_at: r.created_at as i64,
            turn_ms: r.config.turn_ms.unwrap_or(0),
            max_consecutive_timeouts: r.config.max_consecutive_timeouts,
            reconnect_ms: r.config.reconnect_ms,
        }
    }
}

fn entry(a: &pb::ReplayAction) -> Result<Entry, String> {
    let cards = || CardSet::from_ids(&a.cards).map_err(|e| e.to_string());
    let declared = || match &a.declared {
        Some(d) => declared(d).map_err(|e| e.to_string()),
        None => Ok(None),
    };
    let action = match KINDS.iter().find(|(name, _)| *name == a.kind) {
        Some((_, Some(action))) => *action,
        Some((_, None)) => Action::Play {
            cards: cards()?,
            declared: declared()?,
        },
        None if a.kind == AUTO => Action::Auto {
            cards: cards()?,
            declared: declared()?,
        },
        None => return Err(format!("unknown action kind {:?}", a.kind)),
    };
    Ok(Entry {
        player: u8::try_from(a.player).map_err(|_| "player out of range".to_string())?,
        action,
        at: u64::try_from(a.at).map_err(|_| format!("action {} has a negative time", a.seq))?,
    })
}

impl TryFrom<&pb::GetReplayResponse> for Replay {
    type Error = String;

    fn try_from(r: &pb::GetReplayResponse) -> Result<Replay, String> {
        let seed: [u8; 32] = hex::decode(&r.seed)
            .map_err(|e| format!("seed: {e}"))?
            .try_into()
            .map_err(|_| "seed is not 256 bits".to_string())?;
        let mut entries = Vec::with_capacity(r.actions.len());
        let mut hashes = Vec::with_capacity(r.actions.len());
        for (i, a) in r.actions.iter().enumerate() {
            if a.seq != i as u64 + 1 {
                return Err(format!("action {} has seq {}", i + 1, a.seq));
            }
            entries.push(entry(a)?);
            hashes.push(a.state_hash.clone());
        }
        Ok(Replay {
            config: GameConfig {
                variant: r.variant.clone(),
                version: r.variant_version.clone(),
                deals: r.deals,
                turn_ms: (r.turn_ms > 0).then_some(r.turn_ms),
                max_consecutive_timeouts: r.max_consecutive_timeouts,
                reconnect_ms: r.reconnect_ms,
            },
            options: r.options.clone().into_iter().collect(),
            seed,
            preset_hands: r
                .preset_hands
                .as_ref()
                .map(|p| p.hands.iter().map(|h| h.cards.clone()).collect()),
            created_at: u64::try_from(r.created_at).map_err(|_| "negative created_at")?,
            entries,
            hashes,
            final_totals: r
                .final_scores
                .iter()
                .map(|p| (p * 100.0).round() as i64)
                .collect(),
            engine_version: r.engine_version.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hand::{Declared, HandType};

    /// Every action kind, a declared play, preset hands and the timing survive the wire both
    /// ways; a response a client got wrong is refused.
    #[test]
    fn a_replay_reads_back_as_written() {
        let cards = CardSet::from_ids(&[0, 53, 54, 107]).unwrap();
        let declared = Some(Declared {
            kind: HandType::Bomb,
            key: Some("5".parse().unwrap()),
        });
        // A declared play, an undeclared one, then every other kind.
        let plays = [declared, None].map(|declared| Action::Play { cards, declared });
        let autos = [
            Action::Auto { cards, declared },
            Action::Auto {
                cards: CardSet::EMPTY,
                declared: None,
            },
        ];
        let actions: Vec<Action> = plays
            .into_iter()
            .chain(KINDS.iter().filter_map(|(_, a)| *a))
            .chain(autos)
            .collect();
        assert_eq!(actions.len(), 10);
        let entries: Vec<Entry> = actions
            .iter()
            .enumerate()
            .map(|(i, &action)| Entry {
                player: (i % 4) as u8,
                action,
                at: 1_700_000_000_000 + i as u64,
            })
            .collect();
        let replay = Replay {
            config: GameConfig {
                variant: "classic".into(),
                version: "ab".repeat(32),
                deals: 3,
                turn_ms: Some(20_000),
                max_consecutive_timeouts: 1,
                reconnect_ms: 90_000,
            },
            options: [("deals_per_match".to_string(), "3".to_string())].into(),
            seed: [9; 32],
            preset_hands: Some(vec![vec![5, 1, 3], vec![], vec![107], vec![2]]),
            created_at: 1_699_999_999_000,
            hashes: (0..entries.len()).map(|i| format!("{i:064x}")).collect(),
            entries,
            final_totals: vec![-1250, 1250, 3, -3],
            engine_version: "test".into(),
        };
        let wire = pb::GetReplayResponse::from(&replay);
        assert_eq!(wire.actions[0].kind, "play");
        assert_eq!(wire.actions[3].kind, "leave");
        assert_eq!(wire.final_scores, vec![-12.5, 12.5, 0.03, -0.03]);
        assert_eq!(Replay::try_from(&wire).unwrap(), replay);

        let mut bad = wire.clone();
        bad.actions[2].seq = 9;
        assert!(Replay::try_from(&bad).is_err());
        let mut bad = wire.clone();
        bad.actions[1].kind = "fly".into();
        assert!(Replay::try_from(&bad).is_err());
        let mut bad = wire;
        bad.seed = "00".into();
        assert!(Replay::try_from(&bad).is_err());
    }
}
