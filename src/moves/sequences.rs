//! Sequences over rank windows of 3..A: straights, pair chains and triple chains (with wild
//! jokers filling gaps).

use crate::cards::{Rank, RankCounts, TOP_SEQ};
use crate::hand::{Fill, Hand, HandType};

use super::{Gen, jokers, run};

impl Gen<'_> {
    /// Straights (group 1), pair chains (2) and triple chains (3) over every window of 3..A,
    /// shortest first, then lowest first.
    pub(super) fn sequences(&mut self, group: u8, min_links: u8, kind: HandType) {
        if self.w == 0 {
            self.natural_sequences(group, min_links, kind);
            return;
        }
        let w = self.w;
        let total = self.nat.total() as u8 + w;
        // Prefix sums of the cards each rank lacks for a full group.
        let mut lack = [0u8; TOP_SEQ + 2];
        for i in 0..=TOP_SEQ {
            lack[i + 1] = lack[i] + group.saturating_sub(self.counts[i]);
        }
        for links in min_links as usize..=TOP_SEQ + 1 {
            let len = links as u8 * group;
            if len > total {
                break;
            }
            if let Some(p) = self.previous {
                if p.kind != kind || p.len != len {
                    continue;
                }
            }
            for start in 0..=TOP_SEQ + 1 - links {
                let top = start + links - 1;
                if !self.key_can_beat(kind, len, top) {
                    continue;
                }
                // The window must be the highest one for its naturals (取大): below the top
                // window, the lowest rank must hold a natural card.
                let must_lowest = start < TOP_SEQ + 1 - links;
                if must_lowest && self.counts[start] == 0 {
                    continue;
                }
                let deficit = lack[top + 1] - lack[start];
                if deficit > w {
                    continue;
                }
                let seq = Seq {
                    group,
                    kind,
                    start,
                    links,
                    must_lowest,
                    target: run(start, links, group),
                    lack,
                };
                // The window's plays in order: fewest wilds first; for as many wilds, fewest big
                // jokers, then the natural cards in increasing order (compared from the top
                // rank down).
                for wild in deficit..=w {
                    let naturals = len - wild;
                    if naturals == 0 || naturals < self.rules.min_naturals_in_sequence {
                        continue;
                    }
                    if wild <= 1 {
                        self.one_wild_window(&seq, wild, deficit);
                        continue;
                    }
                    for (a, b) in self.splits(wild) {
                        self.sequence_rec(&seq, top, RankCounts::EMPTY, wild, (a, b));
                    }
                }
            }
        }
    }

    /// `sequences` for a hand without wilds: each window whose every rank holds a full group is
    /// one play, exactly those cards.
    fn natural_sequences(&mut self, group: u8, min_links: u8, kind: HandType) {
        let full = self.at_least[group as usize] & ((1 << (TOP_SEQ + 1)) - 1);
        // `starts`: bit s set when the `links` ranks from s all hold a full group.
        let mut starts = full;
        for links in 1..=TOP_SEQ + 1 {
            if links > 1 {
                starts &= full >> (links - 1);
            }
            if starts == 0 {
                break;
            }
            if links < min_links as usize {
                continue;
            }
            let len = links as u8 * group;
            if len < self.rules.min_naturals_in_sequence {
                continue;
            }
            // Keys above the previous play's: the window's top is start + links - 1.
            let mut todo = starts & (self.keys_above(kind, len) >> (links - 1));
            while todo != 0 {
                let start = todo.trailing_zeros() as usize;
                todo &= todo - 1;
                let top = start + links - 1;
                let target = run(start, links, group);
                let h = Hand::sequence(
                    kind,
                    Rank::at(top),
                    group,
                    links as u8,
                    Fill::natural(target),
                );
                self.push(target, h);
            }
        }
    }

    /// The plays of a sequence window with no wild or exactly one (`sequence_rec` for those
    /// cases, without the search): with a shortfall of one card, its rank takes the wild; with
    /// none, each rank in turn (the top first) gives up one natural card for it.
    fn one_wild_window(&mut self, seq: &Seq, wild: u8, deficit: u8) {
        let g = seq.group;
        let top = seq.start + seq.links - 1;
        let emit = |this: &mut Self, used: RankCounts, a: u8, b: u8| {
            let h = Hand::sequence(
                seq.kind,
                Rank::at(top),
                g,
                seq.links as u8,
                Fill::wild(used, seq.target, a, b),
            );
            this.push(used.plus(jokers(a, b)), h);
        };
        if wild == 0 {
            emit(self, seq.target, 0, 0);
            return;
        }
        for (a, b) in self.splits(1) {
            if deficit == 1 {
                let short = (seq.start..=top)
                    .find(|&i| self.counts[i] < g)
                    .unwrap_or(seq.start);
                if short != seq.start || !seq.must_lowest || g > 1 {
                    emit(self, seq.target.with(Rank::at(short), g - 1), a, b);
                }
                continue;
            }
            for i in (seq.start..=top).rev() {
                if i == seq.start && seq.must_lowest && g == 1 {
                    continue;
                }
                emit(self, seq.target.with(Rank::at(i), g - 1), a, b);
            }
        }
    }

    /// Chooses the natural cards of rank index `i` and below (down to the window's start) so
    /// that exactly `wild` cards are missing, each rank's count in increasing order; at the
    /// start, emits the play with `split` (small, big) jokers standing in.
    fn sequence_rec(&mut self, seq: &Seq, i: usize, used: RankCounts, wild: u8, split: (u8, u8)) {
        let g = seq.group as i16;
        let wild = wild as i16;
        let have = self.counts[i].min(seq.group) as i16;
        // Cards missing at this rank: d = g - u, with u natural cards (u <= have).
        let (d_min, d_max) = if i == seq.start {
            // The start takes whatever is left (keeping one natural card when it must).
            (wild, wild.min(g - seq.must_lowest as i16))
        } else {
            // The ranks below must miss at least their shortfall and can miss at most all their
            // cards (but the start's one natural card when it must).
            let min_below = (seq.lack[i] - seq.lack[seq.start]) as i16;
            let max_below = g * (i - seq.start) as i16 - seq.must_lowest as i16;
            ((g - have).max(wild - max_below), g.min(wild - min_below))
        };
        let d_min = d_min.max(g - have);
        if d_min > d_max {
            return;
        }
        for d in (d_min..=d_max).rev() {
            let used = used.with(Rank::at(i), (g - d) as u8);
            if i == seq.start {
                let (a, b) = split;
                let h = Hand::sequence(
                    seq.kind,
                    Rank::at(seq.start + seq.links - 1),
                    seq.group,
                    seq.links as u8,
                    Fill::wild(used, seq.target, a, b),
                );
                self.push(used.plus(jokers(a, b)), h);
            } else {
                self.sequence_rec(seq, i - 1, used, (wild - d) as u8, split);
            }
        }
    }
}

/// A sequence window being filled.
struct Seq {
    group: u8,
    kind: HandType,
    start: usize,
    links: usize,
    must_lowest: bool,
    target: RankCounts,
    /// Prefix sums of the cards each rank lacks for a full group (see `sequences`).
    lack: [u8; TOP_SEQ + 2],
}
