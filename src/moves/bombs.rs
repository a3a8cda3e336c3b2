//! Bombs: single-rank bombs, joker bombs and chain bombs (equal or unequal groups, cyclic through
//! 2 where the rules allow).

use crate::cards::{Rank, RankCounts, TOP_SEQ, TOP_SET};
use crate::classify;
use crate::hand::{Fill, Hand, HandType};
use crate::rules::ChainBombs;

use super::{Gen, jokers};

impl Gen<'_> {
    /// Single-rank bombs, joker bombs and chain bombs (in no particular order).
    pub(super) fn bombs(&mut self) {
        let rules = self.rules;
        let w = self.w;
        let mut todo =
            self.at_least[4usize.saturating_sub(w as usize).max(1)] & ((1 << (TOP_SET + 1)) - 1);
        while todo != 0 {
            let i = todo.trailing_zeros() as usize;
            todo &= todo - 1;
            let have = self.counts[i];
            let r = Rank::at(i);
            for c in 1..=have {
                for k in 4u8.saturating_sub(c)..=w {
                    let n = c + k;
                    let nat = RankCounts::EMPTY.with(r, c);
                    let target = RankCounts::EMPTY.with(r, n);
                    let stars = rules.has_stars().then_some(n);
                    for (a, b) in self.splits(k) {
                        let h = Hand::set(HandType::Bomb, r, stars, Fill::wild(nat, target, a, b));
                        self.emit_bomb(nat.plus(jokers(a, b)), h);
                    }
                }
            }
        }
        // 三王 and 天王: any three jokers, all four.
        if self.sj + self.bj >= 3 {
            for s in 0..=self.sj {
                for b in 0..=self.bj {
                    if s + b >= 3 {
                        let cards = jokers(s, b);
                        for h in classify::classify(cards, rules) {
                            if h.is_bomb() {
                                self.emit_bomb(cards, h);
                            }
                        }
                    }
                }
            }
        }
        if rules.chain_bombs != ChainBombs::None {
            self.chain_bombs();
        }
    }

    fn chain_bombs(&mut self) {
        let rules = self.rules;
        let w = self.w;
        let cycle = TOP_SET + 1;
        // Ranks that can hold a group of four (with every wild).
        let able = (self.at_least[4usize.saturating_sub(w as usize)] & ((1 << cycle) - 1)) as u32;
        if able.count_ones() < rules.min_chain_links as u32 {
            return;
        }
        let total = self.nat.total() as u8 + w;
        for links in rules.min_chain_links as usize..=(rules.max_chain_links as usize).min(cycle) {
            if 4 * links as u8 > total {
                break;
            }
            let plain = (0..=TOP_SEQ + 1 - links).map(|s| (s, false));
            let cyclic = (cycle - links..cycle)
                .filter(|_| rules.cyclic_chain_bombs)
                .map(|s| (s, true));
            for (start, is_cyclic) in plain.chain(cyclic) {
                let ones = (1u32 << links) - 1;
                let window_mask = (ones << start | ones >> (cycle - start)) & 0x1FFF;
                if window_mask & !able != 0 {
                    continue;
                }
                let mut window = [Rank::THREE; 13];
                let mut deficit = 0u8;
                for (k, slot) in window.iter_mut().enumerate().take(links) {
                    *slot = Rank::at((start + k) % cycle);
                    deficit += 4u8.saturating_sub(self.nat.get(*slot));
                }
                if deficit > w {
                    continue;
                }
                let window = &window[..links];
                let top = (start + links - 1) % cycle;
                let at = Window {
                    ranks: window,
                    top,
                    cyclic: is_cyclic,
                };
                match rules.chain_bombs {
                    ChainBombs::Equal => {
                        let max_x = 8 + w;
                        for x in 4..=max_x {
                            let need: u8 = window
                                .iter()
                                .map(|&r| x.saturating_sub(self.nat.get(r)))
                                .sum();
                            if need > w {
                                break;
                            }
                            self.chain_rec(&at, 0, x, RankCounts::EMPTY, 0);
                        }
                    }
                    _ => self.chain_rec(&at, 0, 0, RankCounts::EMPTY, 0),
                }
            }
        }
    }

    /// Chooses the natural count of each group of a chain-bomb window; `x` > 0 fixes every group
    /// at `x` cards (equal chains), `x` = 0 lets groups differ (at least four each).
    fn chain_rec(&mut self, at: &Window, pos: usize, x: u8, used: RankCounts, need: u8) {
        let w = self.w;
        if pos == at.ranks.len() {
            if x > 0 {
                for (a, b) in self.splits(need) {
                    self.chain_candidate(at, used.plus(jokers(a, b)));
                }
            } else {
                for k in need..=w {
                    for (a, b) in self.splits(k) {
                        self.chain_candidate(at, used.plus(jokers(a, b)));
                    }
                }
            }
            return;
        }
        let r = at.ranks[pos];
        let have = self.nat.get(r);
        let floor = if x > 0 { x } else { 4 };
        let later: u8 = at.ranks[pos + 1..]
            .iter()
            .map(|&q| floor.saturating_sub(self.nat.get(q)))
            .sum();
        let cap = if x > 0 { have.min(x) } else { have };
        for u in 0..=cap {
            let n = need + floor.saturating_sub(u);
            if n + later > w {
                continue;
            }
            self.chain_rec(at, pos + 1, x, used.with(r, u), n);
        }
    }

    /// Emits the chain-bomb interpretation of a candidate, once: only from the window that
    /// interpretation uses (other windows may produce the same cards).
    fn chain_candidate(&mut self, at: &Window, cards: RankCounts) {
        for h in classify::classify(cards, self.rules) {
            if h.kind == HandType::ChainBomb
                && h.links as usize == at.ranks.len()
                && h.cyclic == at.cyclic
                && h.key.index() == at.top
            {
                self.emit_bomb(cards, h);
            }
        }
    }
}

/// A chain-bomb window being filled: its ranks, its top rank index, whether it runs through 2.
struct Window<'w> {
    ranks: &'w [Rank],
    top: usize,
    cyclic: bool,
}
