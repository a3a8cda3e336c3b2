//! The generator of legal plays: the hand split into natural cards and wild jokers, what a play
//! must beat, and the output; the kinds of play are generated in `sets`, `sequences`, `bombs`.

use crate::cards::{RANK_COUNT, Rank, RankCounts};
use crate::compare;
use crate::hand::{Hand, HandType};
use crate::rules::Rules;

use super::{Play, at_least};

/// The generator: the hand split into naturals and wild jokers, and the output.
pub(super) struct Gen<'a> {
    pub(super) rules: &'a Rules,
    pub(super) previous: Option<&'a Hand>,
    /// What a bomb must exceed (`compare::beat_key`) to beat the previous play: 0 when following
    /// a non-bomb or leading (every bomb's key is at least 1).
    pub(super) floor: u64,
    /// Natural (non-wild) cards of the hand.
    pub(super) nat: RankCounts,
    /// Natural cards per rank index.
    pub(super) counts: [u8; 15],
    /// `at_least[k]`: bit `i` set when rank index `i` has at least `k` natural cards (k ≤ 4).
    pub(super) at_least: [u16; 5],
    /// Wild small and big jokers in the hand, and their sum.
    pub(super) ws: u8,
    pub(super) wb: u8,
    pub(super) w: u8,
    /// All small and big jokers in the hand (wild or not).
    pub(super) sj: u8,
    pub(super) bj: u8,
    pub(super) out: &'a mut Vec<Play>,
}
impl<'a> Gen<'a> {
    pub(super) fn new(
        hand: RankCounts,
        previous: Option<&'a Hand>,
        rules: &'a Rules,
        out: &'a mut Vec<Play>,
    ) -> Gen<'a> {
        let sj = hand.get(Rank::SMALL_JOKER);
        let bj = hand.get(Rank::BIG_JOKER);
        let (nat, ws, wb) = rules.split_wilds(hand);
        let mut counts = [0u8; 15];
        for (i, c) in counts.iter_mut().enumerate() {
            *c = (nat.bits() >> (4 * i)) as u8 & 0xF;
        }
        let at_least = [
            (1 << RANK_COUNT) - 1,
            at_least(nat, 1),
            at_least(nat, 2),
            at_least(nat, 3),
            at_least(nat, 4),
        ];
        Gen {
            rules,
            previous,
            floor: previous.map_or(0, |p| compare::beat_key(p, rules)),
            nat,
            counts,
            at_least,
            ws,
            wb,
            w: ws + wb,
            sj,
            bj,
            out,
        }
    }

    /// Pushes a non-bomb whose type, length and key were checked against the previous play
    /// (`key_can_beat`).
    #[inline]
    pub(super) fn push(&mut self, cards: RankCounts, hand: Hand) {
        debug_assert!(
            self.previous
                .is_none_or(|p| compare::beats(p, &hand, self.rules))
        );
        self.out.push(Play { cards, hand });
    }

    /// Pushes a bomb if it beats the previous play (or there is none).
    #[inline]
    pub(super) fn emit_bomb(&mut self, cards: RankCounts, hand: Hand) {
        if compare::beat_key(&hand, self.rules) > self.floor {
            self.out.push(Play { cards, hand });
        }
    }

    /// For `k` wilds, every split into (small, big) the hand can supply, most small jokers
    /// first (the same natural cards with fewer big jokers sort first).
    #[inline]
    pub(super) fn splits(&self, k: u8) -> impl Iterator<Item = (u8, u8)> + use<> {
        let (ws, wb) = (self.ws, self.wb);
        let lo = k.saturating_sub(wb);
        let hi = k.min(ws);
        (lo..=hi)
            .rev()
            .filter(move |_| k <= ws + wb)
            .map(move |a| (a, k - a))
    }

    /// Does a play of this type and key (non-bomb) have a chance against the previous play?
    #[inline]
    pub(super) fn key_can_beat(&self, kind: HandType, len: u8, key: usize) -> bool {
        match self.previous {
            None => true,
            Some(p) => p.kind == kind && p.len == len && key > p.key.index(),
        }
    }

    /// The ranks (bit per rank index) a non-bomb of this type and length may have as its key to
    /// beat the previous play: all when leading, those above the previous key when it has the
    /// same type and length, none otherwise.
    #[inline]
    pub(super) fn keys_above(&self, kind: HandType, len: u8) -> u16 {
        match self.previous {
            None => u16::MAX,
            Some(p) if p.kind == kind && p.len == len => u16::MAX << (p.key.index() + 1),
            Some(_) => 0,
        }
    }
}
