//! The heaviest deals a variant's deck allows, for the worst-case settlement check: every card
//! played (or still held) as bombs — the most bombs, the highest star levels, the longest chain
//! bombs — under every outcome and with every seat escaping. Depends on the core and `input`'s
//! bomb classification.

use super::input::bomb_fact;
use crate::cards::{Rank, RankCounts};
use crate::game::hooks::{
    BombFact, DealFacts, EscapeFacts, EscapeReason, Outcome, Seat, TableFacts,
};
use crate::rules::Rules;

/// Sets of bombs that together use at most the cards dealt: 8-card bombs of every rank (the
/// highest star level of a single rank), 6-card bombs (the most ≥ 6★ bombs), 4-card bombs (the
/// most bombs), chain bombs of the most links, each with the joker bomb the rules allow.
pub fn heavy_bomb_sets(rules: &Rules) -> Vec<Vec<BombFact>> {
    let mut sets: Vec<Vec<String>> = Vec::new();
    let ranks: Vec<String> = (0..13u8)
        .filter_map(Rank::from_index)
        .map(|r| r.symbol().to_string())
        .collect();
    let of = |r: &str, n: usize| vec![r; n].join(" ");
    for size in [8, 6, 4] {
        let mut set: Vec<String> = ranks.iter().map(|r| of(r, size)).collect();
        if size == 4 {
            set.extend(ranks.iter().map(|r| of(r, 4)));
        }
        set.push("SJ SJ BJ BJ".into());
        set.push("SJ BJ BJ".into());
        sets.push(set);
    }
    for group in [8, 6, 4] {
        let links = rules.max_chain_links.max(3) as usize;
        let set: Vec<String> = ranks
            .chunks(links)
            .map(|chunk| {
                chunk
                    .iter()
                    .map(|r| of(r, group))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        sets.push(set);
    }
    let room = rules.players as u32 * rules.hand_size as u32;
    sets.iter()
        .map(|set| {
            let mut used = 0;
            let mut out = Vec::new();
            for text in set {
                let Ok(cards) = text.parse::<RankCounts>() else {
                    continue;
                };
                let seat = Seat::at(out.len() % rules.players as usize);
                if used + cards.total() > room {
                    continue;
                }
                if let Ok(b) = bomb_fact(seat, cards, rules) {
                    used += cards.total();
                    out.push(b);
                }
            }
            out
        })
        .filter(|set| !set.is_empty())
        .collect()
}

/// The bombs of `set` grouped by the seat that holds them (for `bombs_in_hand`).
fn by_seat(set: &[BombFact], players: u8) -> Vec<Vec<BombFact>> {
    Seat::all(players)
        .map(|s| set.iter().filter(|b| b.seat == s).copied().collect())
        .collect()
}

/// The bombs of `set` both ways, as (played, in hand by seat): first all played (none left in
/// hand), then all still in hand (none played).
fn both_ways(set: &[BombFact], players: u8) -> [(Vec<BombFact>, Vec<Vec<BombFact>>); 2] {
    [
        (set.to_vec(), vec![Vec::new(); players as usize]),
        (Vec::new(), by_seat(set, players)),
    ]
}

/// Deal facts for every outcome with the bombs of `set` played, then with them still in hand.
pub fn heavy_deals(rules: &Rules, set: &[BombFact]) -> Vec<DealFacts> {
    let players = rules.players;
    let hand = rules.hand_size.max(1);
    let endings: Vec<(Outcome, Vec<Seat>, Vec<u8>)> = if players == 2 {
        [1, rules.two_player_single_min, hand]
            .into_iter()
            .map(|left| {
                let left = left.clamp(1, hand);
                (
                    Outcome::from_loser_cards(left, rules),
                    Seat::list(&[0, 1]),
                    vec![0, left],
                )
            })
            .collect()
    } else {
        vec![
            (
                Outcome::Double,
                Seat::list(&[0, 2, 1, 3]),
                vec![0, hand, 0, hand],
            ),
            (
                Outcome::Single,
                Seat::list(&[1, 0, 3, 2]),
                vec![0, 0, hand, 0],
            ),
            (
                Outcome::Draw,
                Seat::list(&[3, 0, 2, 1]),
                vec![0, hand, 0, 0],
            ),
        ]
    };
    let mut out = Vec::new();
    for (outcome, places, cards_left) in endings {
        for (bombs_played, bombs_in_hand) in both_ways(set, players) {
            out.push(DealFacts {
                table: TableFacts {
                    players,
                    deal_number: 1000,
                    places: places.clone(),
                    cards_left: cards_left.clone(),
                    bombs_played,
                    bombs_in_hand,
                },
                outcome,
            });
        }
    }
    out
}

/// Escape facts for every escaper with the bombs of `set` played, then with them in hand.
pub fn heavy_escapes(rules: &Rules, set: &[BombFact]) -> Vec<EscapeFacts> {
    let players = rules.players;
    let hand = rules.hand_size.max(1);
    let mut out = Vec::new();
    for escaper in Seat::all(players) {
        for (bombs_played, bombs_in_hand) in both_ways(set, players) {
            out.push(EscapeFacts {
                table: TableFacts {
                    players,
                    deal_number: 1000,
                    places: Vec::new(),
                    cards_left: vec![hand; players as usize],
                    bombs_played,
                    bombs_in_hand,
                },
                escaper,
                reason: EscapeReason::Left,
            });
        }
    }
    out
}
