//! Legal plays: every distinct play a hand can make, leading or following, weakest first.
//!
//! Owns `legal_plays` (what hints, auto-play, bots and simulators use). A play is distinct by the
//! multiset of ranks it uses and its interpretation; the same cards with two interpretations (千變:
//! `3 4 5 SJ BJ BJ` as a straight or a pair chain) are two plays. Generation is structured by type
//! (sets, sequences over rank windows, chain bombs) rather than by sub-multisets, and each play is
//! produced once, already in its canonical (strongest) interpretation, so the result agrees with
//! `classify::classify`. Pure; depends only on `cards`, `hand`, `compare` and `rules`.
//!
//! Split by the kind of play generated: `generator.rs` (the generator: the hand split into
//! naturals and wild jokers, the output, what a play must beat), `sets.rs` (singles, pairs,
//! triples), `sequences.rs` (straights, pair chains, triple chains), `bombs.rs` (single-rank,
//! joker and chain bombs).

mod bombs;
mod generator;
mod sequences;
mod sets;
#[cfg(test)]
mod tests;

use crate::cards::{RANK_COUNT, Rank, RankCounts};
use crate::compare;
use crate::hand::{Hand, HandType};
use crate::rules::Rules;
use generator::Gen;

/// A legal play: the ranks it uses and how it is interpreted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Play {
    /// The cards played, as ranks (jokers included as themselves).
    pub cards: RankCounts,
    /// The interpretation the play is taken as.
    pub hand: Hand,
}

/// Every distinct legal play of `hand`, weakest first. With `previous`, only the plays that beat
/// it (passing is the caller's concern).
pub fn legal_plays(hand: RankCounts, previous: Option<&Hand>, rules: &Rules) -> Vec<Play> {
    let mut out = Vec::new();
    legal_plays_into(hand, previous, rules, &mut out);
    out
}

/// As `legal_plays`, into a reused buffer (cleared first).
///
/// The generators emit the non-bombs already in order (by type, then length, then key, then
/// fewer wilds, then cards), so only the bombs at the end are sorted.
pub fn legal_plays_into(
    hand: RankCounts,
    previous: Option<&Hand>,
    rules: &Rules,
    out: &mut Vec<Play>,
) {
    out.clear();
    if !hand.is_subset(RankCounts::FULL) {
        return;
    }
    let mut g = Gen::new(hand, previous, rules, out);
    match previous.map(|p| p.kind) {
        None => {
            g.singles();
            g.pairs();
            g.triples();
            g.sequences(1, rules.min_straight, HandType::Straight);
            g.sequences(2, rules.min_pair_chain, HandType::PairChain);
            g.sequences(3, rules.min_triple_chain, HandType::TripleChain);
        }
        Some(HandType::Single) => g.singles(),
        Some(HandType::Pair) => g.pairs(),
        Some(HandType::Triple) => g.triples(),
        Some(HandType::Straight) => g.sequences(1, rules.min_straight, HandType::Straight),
        Some(HandType::PairChain) => g.sequences(2, rules.min_pair_chain, HandType::PairChain),
        Some(HandType::TripleChain) => {
            g.sequences(3, rules.min_triple_chain, HandType::TripleChain)
        }
        Some(_) => {}
    }
    let bombs_from = g.out.len();
    g.bombs();
    sort_weakest_first(&mut out[bombs_from..], rules);
    debug_assert!(
        out.windows(2)
            .all(|w| order(&w[0], rules) < order(&w[1], rules)),
        "plays out of order"
    );
}

/// The sort key of `sort_weakest_first`.
#[inline]
fn order(p: &Play, rules: &Rules) -> (u8, u64, u8, u64) {
    let (bomb, strength) = compare::order_key(&p.hand, rules);
    (bomb, strength, p.hand.wilds.len() as u8, p.cards.bits())
}

/// Sorts plays weakest first: by `compare::order_key`, then fewer wild jokers, then by cards.
pub fn sort_weakest_first(plays: &mut [Play], rules: &Rules) {
    if plays.len() > 1 {
        plays.sort_unstable_by_key(|p| order(p, rules));
    }
}

/// The weakest legal lead of a hand (what auto-play (托管) leads), if the hand is not empty.
pub fn weakest_lead(hand: RankCounts, rules: &Rules) -> Option<Play> {
    legal_plays(hand, None, rules).into_iter().next()
}

#[inline]
fn jokers(small: u8, big: u8) -> RankCounts {
    RankCounts::EMPTY
        .with(Rank::SMALL_JOKER, small)
        .with(Rank::BIG_JOKER, big)
}

/// The ranks (bit per rank index) holding at least `k` cards, 1 ≤ k ≤ 8.
#[inline]
fn at_least(counts: RankCounts, k: u8) -> u16 {
    const ONES: u64 = 0x1111_1111_1111_1111;
    // A count c ≤ 8 plus 8 - k sets its nibble's high bit exactly when c ≥ k, with no carry
    // into the next nibble.
    let mut m = ((counts.bits() + (8 - k as u64) * ONES) >> 3) & ONES;
    // Gather the bits at 4i into bit i.
    m = (m | m >> 3) & 0x0303_0303_0303_0303;
    m = (m | m >> 6) & 0x000F_000F_000F_000F;
    m = (m | m >> 12) & 0x0000_00FF_0000_00FF;
    m = (m | m >> 24) & 0xFFFF;
    m as u16 & ((1 << RANK_COUNT) - 1)
}

/// `group` cards of each rank `start..start + links`.
#[inline]
fn run(start: usize, links: usize, group: u8) -> RankCounts {
    let ones = ((1u64 << (4 * links)) / 15) << (4 * start);
    RankCounts::from_bits(ones * group as u64).unwrap_or_default()
}
