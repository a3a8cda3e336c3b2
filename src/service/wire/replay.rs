//! A [`Replay`] on the wire: `GetReplayResponse` pages from a replay ([`page`]), and a replay
//! from its pages ([`assemble`], or `Replay::try_from` a one-page response): what a client reads
//! and verifies with [`crate::service::replay::verify`].
//!
//! A page holds the replay's header (seed, variant, options, timing, final scores) and a run of
//! actions from `first` on, at most `max_actions` of them and at most `max_bytes` of encoded
//! actions (at least one action, so paging always advances): a match of any allowed length is
//! read in pages each within the message limit. The page token is the next seq (`s<seq>`).

use crate::cards::CardSet;
use crate::game::{Action, Entry, GameConfig};
use crate::seat::Player;
use crate::service::pb;
use crate::service::replay::Replay;
use crate::service::wire::request::{declared, declared_to};
use crate::service::wire::view::points;

/// The wire name of an action kind, and back.
const KINDS: [(&str, Option<Action>); 8] = [
    ("play", None),
    ("pass", Some(Action::Pass)),
    ("leave", Some(Action::Leave)),
    ("timeout", Some(Action::Timeout)),
    ("disconnect", Some(Action::Disconnect)),
    ("reconnect", Some(Action::Reconnect)),
    ("reconnect_expired", Some(Action::ReconnectExpired)),
    ("abort", Some(Action::Abort)),
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

/// Actions per page when the request does not say (`max_actions` 0).
pub const DEFAULT_PAGE_ACTIONS: usize = 2_000;
/// Most actions per page.
pub const MAX_PAGE_ACTIONS: usize = 5_000;

fn action(seq: u64, e: &Entry, hash: &str, abort_reason: Option<&String>) -> pb::ReplayAction {
    let (cards, declared) = match e.action {
        Action::Play { cards, declared } | Action::Auto { cards, declared } => {
            (cards.ids(), declared.map(declared_to))
        }
        _ => (Vec::new(), None),
    };
    pb::ReplayAction {
        seq,
        player: u32::from(e.player),
        kind: kind_name(&e.action).into(),
        cards,
        declared,
        at: e.at as i64,
        state_hash: hash.to_string(),
        reason: match e.action {
            Action::Abort => abort_reason.cloned().unwrap_or_default(),
            _ => String::new(),
        },
    }
}

/// The index (0-based) of the first action of the page a token names: `s<seq>`, with
/// `1 <= seq <= total` (an empty token: the first page).
pub fn page_start(token: &str, total: usize) -> Result<usize, String> {
    if token.is_empty() {
        return Ok(0);
    }
    let seq = token
        .strip_prefix('s')
        .filter(|t| t.len() <= 20)
        .and_then(|t| t.parse::<u64>().ok())
        .ok_or("the page token is malformed")?;
    if seq == 0 || seq > total as u64 {
        return Err(format!(
            "the page token names seq {seq}; the log has {total} actions"
        ));
    }
    Ok(seq as usize - 1)
}

/// The page of `r` from action index `first`: at most `max_actions` actions (0 = the default)
/// and `max_bytes` of encoded actions, but at least one when any is left.
pub fn page(
    r: &Replay,
    first: usize,
    max_actions: usize,
    max_bytes: usize,
) -> pb::GetReplayResponse {
    use prost::Message;
    let max_actions = match max_actions {
        0 => DEFAULT_PAGE_ACTIONS,
        n => n.min(MAX_PAGE_ACTIONS),
    };
    let mut actions = Vec::new();
    let mut bytes = 0usize;
    for (i, (e, hash)) in r.entries.iter().zip(&r.hashes).enumerate().skip(first) {
        let a = action(i as u64 + 1, e, hash, r.abort_reason.as_ref());
        // The field's tag and length prefix: at most 4 bytes for an action.
        bytes += a.encoded_len() + 4;
        if !actions.is_empty() && (actions.len() >= max_actions || bytes > max_bytes) {
            break;
        }
        actions.push(a);
    }
    let next = first + actions.len();
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
        next_page_token: match next < r.entries.len() {
            true => format!("s{}", next + 1),
            false => String::new(),
        },
        total_actions: r.entries.len() as u64,
        dealt: Vec::new(),
    }
}

/// Every deal's starting hands (`replay::dealt_hands`) as GetReplayResponse.dealt.
pub fn dealt(deals: &[crate::service::replay::Dealt]) -> Vec<pb::DealtHands> {
    deals
        .iter()
        .map(|d| pb::DealtHands {
            deal_number: d.deal_number,
            from_seq: d.from_seq,
            hands: d
                .hands
                .iter()
                .map(|h| pb::CardList { cards: h.ids() })
                .collect(),
            players: d.players.iter().map(|&p| u32::from(p)).collect(),
        })
        .collect()
}

/// The whole replay as one response (every action in one page; for tests and tools, not the
/// wire: a long match exceeds the message limit).
impl From<&Replay> for pb::GetReplayResponse {
    fn from(r: &Replay) -> pb::GetReplayResponse {
        page(r, 0, usize::MAX, usize::MAX)
    }
}

/// A replay from its pages, in order: the first page's header with every page's actions. The
/// pages must be of one replay (same header), chain (each page starts where the previous one's
/// token points) and end with the last page (no next token).
pub fn assemble(pages: &[pb::GetReplayResponse]) -> Result<Replay, String> {
    let (first, rest) = pages.split_first().ok_or("no page")?;
    let mut whole = first.clone();
    let mut token = first.next_page_token.clone();
    for p in rest {
        if token.is_empty() {
            return Err("a page after the last one".into());
        }
        let header = |r: &pb::GetReplayResponse| {
            let mut h = r.clone();
            h.actions.clear();
            h.next_page_token.clear();
            h.dealt.clear();
            h
        };
        if header(p) != header(first) {
            return Err("pages of different replays".into());
        }
        let expected = whole.actions.len() as u64 + 1;
        if token != format!("s{expected}") || p.actions.first().map(|a| a.seq) != Some(expected) {
            return Err(format!(
                "the page after {token:?} does not start at seq {expected}"
            ));
        }
        whole.actions.extend(p.actions.iter().cloned());
        token = p.next_page_token.clone();
    }
    whole.next_page_token = token;
    Replay::try_from(&whole)
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
        player: u8::try_from(a.player)
            .map(Player::new)
            .map_err(|_| "player out of range".to_string())?,
        action,
        at: u64::try_from(a.at).map_err(|_| format!("action {} has a negative time", a.seq))?,
    })
}

impl TryFrom<&pb::GetReplayResponse> for Replay {
    type Error = String;

    fn try_from(r: &pb::GetReplayResponse) -> Result<Replay, String> {
        if !r.next_page_token.is_empty() {
            return Err(
                "a page of a longer replay: assemble every page (wire::replay::assemble)".into(),
            );
        }
        if r.total_actions != r.actions.len() as u64 {
            return Err(format!(
                "{} actions of a log of {}",
                r.actions.len(),
                r.total_actions
            ));
        }
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
            abort_reason: r
                .actions
                .iter()
                .find(|a| a.kind == "abort")
                .map(|a| a.reason.clone()),
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
        assert_eq!(actions.len(), 11);
        let entries: Vec<Entry> = actions
            .iter()
            .enumerate()
            .map(|(i, &action)| Entry {
                player: Player::at(i % 4),
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
            abort_reason: Some("a test".into()),
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

        // In pages of 3 actions: 4 pages (3, 3, 3, 2) that chain and assemble into the replay.
        let pages: Vec<pb::GetReplayResponse> = [0, 3, 6, 9]
            .into_iter()
            .map(|first| page(&replay, first, 3, usize::MAX))
            .collect();
        assert_eq!(pages[0].next_page_token, "s4");
        assert_eq!(pages[2].next_page_token, "s10");
        assert_eq!(pages[3].actions.len(), 2);
        assert_eq!(pages[3].next_page_token, "");
        assert_eq!(page_start(&pages[0].next_page_token, 11), Ok(3));
        assert_eq!(assemble(&pages).unwrap(), replay);
        assert!(
            Replay::try_from(&pages[0]).is_err(),
            "one page is not a replay"
        );
        assert!(
            assemble(&[pages[0].clone(), pages[2].clone()]).is_err(),
            "a page missing"
        );
        assert!(assemble(&pages[..2]).is_err(), "the last page missing");
        // A byte budget below one action still gives one action a page.
        assert_eq!(page(&replay, 0, 0, 1).actions.len(), 1);
        for bad in ["s0", "s10", "x3", "s", "s99999999999999999999999"] {
            assert!(page_start(bad, 9).is_err(), "{bad}");
        }
    }
}
