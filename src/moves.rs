//! Legal plays: every distinct play a hand can make, leading or following, weakest first.
//!
//! Owns `legal_plays` (what hints, auto-play, bots and simulators use). A play is distinct by the
//! multiset of ranks it uses and its interpretation; the same cards with two interpretations (千變:
//! `3 4 5 SJ BJ BJ` as a straight or a pair chain) are two plays. Generation is structured by type
//! (sets, sequences over rank windows, chain bombs) rather than by sub-multisets, and each play is
//! produced once, already in its canonical (strongest) interpretation, so the result agrees with
//! `classify::classify`. Pure; depends only on `cards`, `hand`, `compare` and `rules`.

use crate::cards::{RANK_COUNT, Rank, RankCounts, TOP_SEQ, TOP_SET};
use crate::classify;
use crate::compare;
use crate::hand::{Fill, Hand, HandType};
use crate::rules::{ChainBombs, Rules};

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

/// The generator: the hand split into naturals and wild jokers, and the output.
struct Gen<'a> {
    rules: &'a Rules,
    previous: Option<&'a Hand>,
    /// What a bomb must exceed (`compare::beat_key`) to beat the previous play: 0 when following
    /// a non-bomb or leading (every bomb's key is at least 1).
    floor: u64,
    /// Natural (non-wild) cards of the hand.
    nat: RankCounts,
    /// Natural cards per rank index.
    counts: [u8; 15],
    /// `at_least[k]`: bit `i` set when rank index `i` has at least `k` natural cards (k ≤ 4).
    at_least: [u16; 5],
    /// Wild small and big jokers in the hand, and their sum.
    ws: u8,
    wb: u8,
    w: u8,
    /// All small and big jokers in the hand (wild or not).
    sj: u8,
    bj: u8,
    out: &'a mut Vec<Play>,
}

impl<'a> Gen<'a> {
    fn new(
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
    fn push(&mut self, cards: RankCounts, hand: Hand) {
        debug_assert!(
            self.previous
                .is_none_or(|p| compare::beats(p, &hand, self.rules))
        );
        self.out.push(Play { cards, hand });
    }

    /// Pushes a bomb if it beats the previous play (or there is none).
    #[inline]
    fn emit_bomb(&mut self, cards: RankCounts, hand: Hand) {
        if compare::beat_key(&hand, self.rules) > self.floor {
            self.out.push(Play { cards, hand });
        }
    }

    /// For `k` wilds, every split into (small, big) the hand can supply, most small jokers
    /// first (the same natural cards with fewer big jokers sort first).
    #[inline]
    fn splits(&self, k: u8) -> impl Iterator<Item = (u8, u8)> + use<> {
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
    fn key_can_beat(&self, kind: HandType, len: u8, key: usize) -> bool {
        match self.previous {
            None => true,
            Some(p) => p.kind == kind && p.len == len && key > p.key.index(),
        }
    }

    /// The ranks (bit per rank index) a non-bomb of this type and length may have as its key to
    /// beat the previous play: all when leading, those above the previous key when it has the
    /// same type and length, none otherwise.
    #[inline]
    fn keys_above(&self, kind: HandType, len: u8) -> u16 {
        match self.previous {
            None => u16::MAX,
            Some(p) if p.kind == kind && p.len == len => u16::MAX << (p.key.index() + 1),
            Some(_) => 0,
        }
    }

    fn singles(&mut self) {
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
    fn pairs(&mut self) {
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
    fn triples(&mut self) {
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

    /// Straights (group 1), pair chains (2) and triple chains (3) over every window of 3..A,
    /// shortest first, then lowest first.
    fn sequences(&mut self, group: u8, min_links: u8, kind: HandType) {
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

    /// Single-rank bombs, joker bombs and chain bombs (in no particular order).
    fn bombs(&mut self) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn plays(hand: &str, prev: Option<&str>, rules: &Rules) -> Vec<String> {
        let prev = prev.map(|p| classify::resolve(p.parse().unwrap(), None, None, rules).unwrap());
        legal_plays(hand.parse().unwrap(), prev.as_ref(), rules)
            .iter()
            .map(|p| format!("{}:{}", p.hand.kind, p.cards))
            .collect()
    }

    #[test]
    fn small_hand_leads() {
        let got = plays("3 3 4", None, &Rules::CLASSIC);
        assert_eq!(got, vec!["single:3", "single:4", "pair:3 3"]);
    }

    #[test]
    fn wild_plays_are_distinct_by_cards() {
        let got = plays("7 7 7 7 BJ", None, &Rules::BAIBIAN);
        assert!(got.contains(&"bomb:7 7 7 7".to_string()));
        assert!(got.contains(&"bomb:7 7 7 7 BJ".to_string()));
        assert!(got.contains(&"bomb:7 7 7 BJ".to_string()));
        assert!(got.contains(&"pair:7 BJ".to_string()));
        assert!(got.contains(&"single:BJ".to_string()));
    }

    #[test]
    fn follows_beat_the_previous_play() {
        let got = plays("3 4 5 6 7 8 9 9 9 9", Some("4 5 6 7 8"), &Rules::CLASSIC);
        assert_eq!(
            got,
            vec!["straight:5 6 7 8 9", "bomb:9 9 9 9"],
            "only the higher straight of length 5 and the bomb"
        );
        // Worked by hand (docs/rules/RULES.md §2, §3.2): a lone joker is itself; the wild joker joins the
        // 3s as a pair, a triple and bombs of 4 and 5; nothing else fits five cards of two ranks.
        let mut every = plays("3 3 3 3 BJ", None, &Rules::QIANBIAN);
        every.sort();
        let mut want = vec![
            "single:3",
            "single:BJ",
            "pair:3 3",
            "pair:3 BJ",
            "triple:3 3 3",
            "triple:3 3 BJ",
            "bomb:3 3 3 3",
            "bomb:3 3 3 BJ",
            "bomb:3 3 3 3 BJ",
        ];
        want.sort();
        assert_eq!(every, want);
    }

    #[test]
    fn qianbian_ambiguous_cards_give_two_plays() {
        let got = plays("3 4 5 SJ BJ BJ", None, &Rules::QIANBIAN);
        assert!(
            got.contains(&"straight:3 4 5 SJ BJ BJ".to_string()),
            "{got:?}"
        );
        assert!(
            got.contains(&"pair_chain:3 4 5 SJ BJ BJ".to_string()),
            "{got:?}"
        );
    }

    /// Every sub-multiset of `hand`, classified: the plain definition of "legal lead".
    fn brute_force(
        hand: RankCounts,
        previous: Option<&Hand>,
        rules: &Rules,
    ) -> Vec<(u64, HandType)> {
        let ranks: Vec<(Rank, u8)> = hand.iter().collect();
        let mut out = Vec::new();
        let mut counts = vec![0u8; ranks.len()];
        loop {
            let mut play = RankCounts::EMPTY;
            for (i, &(r, _)) in ranks.iter().enumerate() {
                play = play.with(r, counts[i]);
            }
            for h in classify::classify(play, rules) {
                if previous.is_none_or(|p| compare::beats(p, &h, rules)) {
                    out.push((play.bits(), h.kind));
                }
            }
            // Next combination (odometer).
            let mut i = 0;
            loop {
                if i == ranks.len() {
                    out.sort_unstable();
                    return out;
                }
                if counts[i] < ranks[i].1 {
                    counts[i] += 1;
                    break;
                }
                counts[i] = 0;
                i += 1;
            }
        }
    }

    #[test]
    fn agrees_with_classifying_every_sub_multiset() {
        use rand::seq::SliceRandom;
        use rand::{Rng, SeedableRng};
        let deck: Vec<Rank> = RankCounts::FULL.ranks().collect();
        for seed in 0..120u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let mut d = deck.clone();
            d.shuffle(&mut rng);
            let size = rng.random_range(1..=11);
            let mut hand_ranks: Vec<Rank> = d.into_iter().take(size).collect();
            if seed % 3 == 0 {
                hand_ranks.truncate(size.saturating_sub(2));
                hand_ranks.push(Rank::BIG_JOKER);
                hand_ranks.push(Rank::SMALL_JOKER);
            }
            if seed % 2 == 1 {
                // Few consecutive ranks with many copies plus jokers: bombs and chain bombs.
                hand_ranks.clear();
                let links = rng.random_range(2..=4usize);
                let start = rng.random_range(0..=13 - links);
                for k in 0..links {
                    let r = Rank::from_index(((start + k) % 13) as u8).unwrap();
                    for _ in 0..rng.random_range(2..=5) {
                        hand_ranks.push(r);
                    }
                }
                for _ in 0..rng.random_range(0..=2) {
                    hand_ranks.push(Rank::BIG_JOKER);
                }
                for _ in 0..rng.random_range(0..=2) {
                    hand_ranks.push(Rank::SMALL_JOKER);
                }
            }
            let Ok(hand) = RankCounts::from_ranks(hand_ranks) else {
                continue;
            };
            let extra = [
                (
                    "baibian+cyclic",
                    Rules {
                        cyclic_chain_bombs: true,
                        ..Rules::BAIBIAN
                    },
                ),
                (
                    "qianbian+cyclic",
                    Rules {
                        cyclic_chain_bombs: true,
                        ..Rules::QIANBIAN
                    },
                ),
            ];
            let presets = Rules::PRESET_IDS.map(|id| (id, Rules::preset(id).unwrap()));
            for (id, rules) in presets.into_iter().chain(extra) {
                let fast: Vec<(u64, HandType)> = {
                    let mut v: Vec<_> = legal_plays(hand, None, &rules)
                        .iter()
                        .map(|p| (p.cards.bits(), p.hand.kind))
                        .collect();
                    v.sort_unstable();
                    v
                };
                let slow = brute_force(hand, None, &rules);
                assert_eq!(fast, slow, "seed {seed} variant {id} hand {hand}");
                // Following the hand's own plays.
                for p in legal_plays(hand, None, &rules).iter().step_by(13) {
                    let mut fast: Vec<_> = legal_plays(hand, Some(&p.hand), &rules)
                        .iter()
                        .map(|q| (q.cards.bits(), q.hand.kind))
                        .collect();
                    fast.sort_unstable();
                    let slow = brute_force(hand, Some(&p.hand), &rules);
                    assert_eq!(
                        fast, slow,
                        "seed {seed} variant {id} hand {hand} prev {}",
                        p.cards
                    );
                }
            }
        }
    }
}
