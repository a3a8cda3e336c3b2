//! Sets of one rank: singles, pairs and triples (with wild jokers standing in).

use crate::cards::{Rank, RankCounts, TOP_SET};
use crate::classify;
use crate::hand::{Fill, Hand, HandType};

use super::{Gen, jokers};

impl Gen<'_> {
    pub(super) fn singles(&mut self) {
        let mut all = self.at_least[1];
        if self.ws > 0 {
            all |= 1 << Rank::SMALL_JOKER.index();
        }
        if self.wb > 0 {
            all |= 1 << Rank::BIG_JOKER.index();
        }
        let mut todo = all & self.keys_above(HandType::Single, 1);
        while todo != 0 {
            let i = todo.trailing_zeros() as usize;
            todo &= todo - 1;
            let r = Rank::at(i);
            let cards = RankCounts::EMPTY.with(r, 1);
            let h = Hand::set(HandType::Single, r, None, Fill::natural(cards));
            self.push(cards, h);
        }
    }

    /// Pairs rank by rank: the natural pair, then one natural card with a wild, then (for the
    /// jokers) the joker-only pairs.
    pub(super) fn pairs(&mut self) {
        let rules = self.rules;
        // Natural pairs, natural cards of 3..2 with a wild, and the two joker ranks.
        let mut todo = self.at_least[2] | 0b11 << Rank::SMALL_JOKER.index();
        if self.w >= 1 {
            todo |= self.at_least[1] & ((1 << (TOP_SET + 1)) - 1);
        }
        todo &= self.keys_above(HandType::Pair, 2);
        while todo != 0 {
            let i = todo.trailing_zeros() as usize;
            todo &= todo - 1;
            let r = Rank::at(i);
            let c = self.counts[i];
            if c >= 2 {
                let cards = RankCounts::EMPTY.with(r, 2);
                let h = Hand::set(HandType::Pair, r, None, Fill::natural(cards));
                self.push(cards, h);
            }
            if i <= TOP_SET {
                if c >= 1 && self.w >= 1 {
                    let nat = RankCounts::EMPTY.with(r, 1);
                    let target = RankCounts::EMPTY.with(r, 2);
                    for (a, b) in self.splits(1) {
                        let h = Hand::set(HandType::Pair, r, None, Fill::wild(nat, target, a, b));
                        self.push(nat.plus(jokers(a, b)), h);
                    }
                }
                continue;
            }
            // Joker-only pairs of wild jokers (natural joker pairs were produced above): a pair
            // of small jokers (no wild used) before a small joker with a big one standing in.
            let pure: [(bool, RankCounts); 2] = if r == Rank::SMALL_JOKER {
                [
                    (self.ws >= 2, jokers(2, 0)),
                    (
                        self.sj >= 1 && self.wb >= 1 && rules.big_joker_as_small,
                        jokers(1, 1),
                    ),
                ]
            } else {
                [(self.wb >= 2, jokers(0, 2)), (false, RankCounts::EMPTY)]
            };
            for (ok, cards) in pure {
                if ok {
                    for h in classify::classify(cards, rules) {
                        if h.kind == HandType::Pair && h.key == r {
                            self.push(cards, h);
                        }
                    }
                }
            }
        }
    }

    /// Triples rank by rank, fewest wilds first.
    pub(super) fn triples(&mut self) {
        let w = self.w;
        let mut todo = self.at_least[3usize.saturating_sub(w as usize).max(1)]
            & ((1 << (TOP_SET + 1)) - 1)
            & self.keys_above(HandType::Triple, 3);
        while todo != 0 {
            let i = todo.trailing_zeros() as usize;
            todo &= todo - 1;
            let have = self.counts[i];
            let r = Rank::at(i);
            let target = RankCounts::EMPTY.with(r, 3);
            for c in ((3u8.saturating_sub(w)).max(1)..=have.min(3)).rev() {
                let nat = RankCounts::EMPTY.with(r, c);
                for (a, b) in self.splits(3 - c) {
                    let h = Hand::set(HandType::Triple, r, None, Fill::wild(nat, target, a, b));
                    self.push(nat.plus(jokers(a, b)), h);
                }
            }
        }
    }
}
