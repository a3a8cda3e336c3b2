//! Comparison: does a play beat the play on the table, and the total order of bombs.
//!
//! Owns `beats` and `bomb_key` (docs/rules/RULES.md §4): non-bombs need the same type and card count and a
//! strictly higher key; any bomb beats any non-bomb; bombs follow the variant's bomb order —
//! classic (天王 on top, then more cards, then rank) or the star system (higher star, then fewer
//! cards, then rank; 三王 the smallest 6★; 天王 where the settings put it; cyclic chain bombs the
//! smallest of their class). Under `equal_star_bombs = first_stands` (S1's note 「線數一樣,誰先出誰
//!大」) a bomb beats another only with a higher star level; the sort order stays total. Pure;
//! depends only on `cards`, `hand` and `rules`.

use std::cmp::Ordering;

use crate::hand::{Hand, HandType};
use crate::rules::{BombOrder, EqualStarBombs, EqualStarTieBreak, Rules, TianWang};

/// Bit position of the star level in a star-system `bomb_key` (everything below breaks ties
/// inside one level).
const LEVEL_SHIFT: u32 = 40;

/// A sort key that orders bombs from weakest to strongest under `rules` (0 for non-bombs).
///
/// Equal keys are bombs of equal strength (neither beats the other).
pub fn bomb_key(h: &Hand, rules: &Rules) -> u64 {
    if !h.is_bomb() {
        return 0;
    }
    let len = h.len as u64;
    let key = h.key.index() as u64;
    match rules.bomb_order {
        BombOrder::Classic => match h.kind {
            HandType::FourJokers => u64::MAX,
            // Classic has no 三王 or chain bombs; should settings allow them anyway, they rank by
            // card count like every other bomb.
            _ => 1 + (len << 8 | key),
        },
        BombOrder::Stars => {
            let level = h.stars.unwrap_or(h.len) as u64;
            // Position inside the star level: 0 below everything, 1 ordinary, 2 above everything.
            let (level, special) = match h.kind {
                HandType::ThreeJokers => (level, 0),
                HandType::FourJokers => match rules.tianwang {
                    TianWang::AboveAll => (255, 2),
                    TianWang::MaxOf7 | TianWang::MaxOf8 => (level, 2),
                    TianWang::MinOf7 => (level, 0),
                },
                _ => (level, 1),
            };
            let fewer = 255 - len.min(255);
            let plain = u64::from(!h.cyclic);
            let group = match rules.equal_star_tie_break {
                EqualStarTieBreak::TopRank => 0,
                EqualStarTieBreak::LargerGroup => h.group as u64,
            };
            // Cyclic chains rank by their top card with 2 below 3 (K-A-2 < A-2-3 < 2-3-4).
            let key = if h.cyclic { (key + 1) % 13 } else { key };
            1 + (level << LEVEL_SHIFT
                | special << 36
                | fewer << 24
                | plain << 20
                | group << 12
                | key)
        }
    }
}

/// What decides whether one bomb beats another (0 for non-bombs): the bomb key, or under
/// `equal_star_bombs = first_stands` only the star level (with 天王 above all kept on top), so
/// that a later bomb of the same level does not beat the one on the table.
///
/// A bomb beats a play exactly when its beat key is larger; this never contradicts the sort
/// order (`bomb_key` is larger whenever the beat key is).
pub fn beat_key(h: &Hand, rules: &Rules) -> u64 {
    let key = bomb_key(h, rules);
    match (rules.bomb_order, rules.equal_star_bombs) {
        (BombOrder::Stars, EqualStarBombs::FirstStands) if key > 0 => {
            ((key - 1) >> LEVEL_SHIFT) + 1
        }
        _ => key,
    }
}

/// Does `candidate` beat `previous` (the top play of the trick)?
///
/// A strict order: equal plays never beat, and a play never beats itself.
pub fn beats(previous: &Hand, candidate: &Hand, rules: &Rules) -> bool {
    match (previous.is_bomb(), candidate.is_bomb()) {
        (_, true) => beat_key(candidate, rules) > beat_key(previous, rules),
        (true, false) => false,
        (false, false) => {
            previous.kind == candidate.kind
                && previous.len == candidate.len
                && candidate.key > previous.key
        }
    }
}

/// The order of plays from weakest to strongest, as a hint button cycles through them:
/// non-bombs by type, card count and key; then bombs by the bomb order.
pub fn play_order(a: &Hand, b: &Hand, rules: &Rules) -> Ordering {
    order_key(a, rules).cmp(&order_key(b, rules))
}

/// The key behind `play_order`.
pub fn order_key(h: &Hand, rules: &Rules) -> (u8, u64) {
    if h.is_bomb() {
        (1, bomb_key(h, rules))
    } else {
        (
            0,
            (h.kind as u64) << 16 | (h.len as u64) << 8 | h.key.index() as u64,
        )
    }
}
