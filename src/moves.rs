//! Legal plays: every distinct play a hand can make, leading or following, weakest first.
//!
//! Owns `legal_plays` (what hints, auto-play, bots and simulators use). A play is distinct by the
//! multiset of ranks it uses and its interpretation; the same cards with two interpretations (千變:
//! `3 4 5 SJ BJ BJ` as a straight or a pair chain) are two plays. Generation is structured by type
//! (sets, sequences over rank windows, chain bombs) rather than by sub-multisets, and each play is
//! produced once, already in its canonical (strongest) interpretation, so the result agrees with
//! `hand::classify`. Pure; depends only on `cards`, `hand`, `compare` and `rules`.

use crate::cards::{Rank, RankCounts};
use crate::compare;
use crate::hand::{self, Hand, HandType};
use crate::rules::{ChainBombs, Rules};

/// A legal play: the ranks it uses and how it is interpreted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Play {
    /// The cards played, as ranks (jokers included as themselves).
    pub cards: RankCounts,
    /// The interpretation the play is taken as.
    pub hand: Hand,
}

/// Highest index of a rank in straights and chains (A).
const TOP_SEQ: usize = 11;
/// Highest index of a rank that forms sets and bombs (2).
const TOP_SET: usize = 12;

/// Every distinct legal play of `hand`, weakest first. With `previous`, only the plays that beat
/// it (passing is the caller's concern).
pub fn legal_plays(hand: RankCounts, previous: Option<&Hand>, rules: &Rules) -> Vec<Play> {
    let mut out = Vec::new();
    legal_plays_into(hand, previous, rules, &mut out);
    out
}

/// As `legal_plays`, into a reused buffer (cleared first).
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
            g.bombs();
        }
        Some(HandType::Single) => {
            g.singles();
            g.bombs();
        }
        Some(HandType::Pair) => {
            g.pairs();
            g.bombs();
        }
        Some(HandType::Triple) => {
            g.triples();
            g.bombs();
        }
        Some(HandType::Straight) => {
            g.sequences(1, rules.min_straight, HandType::Straight);
            g.bombs();
        }
        Some(HandType::PairChain) => {
            g.sequences(2, rules.min_pair_chain, HandType::PairChain);
            g.bombs();
        }
        Some(HandType::TripleChain) => {
            g.sequences(3, rules.min_triple_chain, HandType::TripleChain);
            g.bombs();
        }
        Some(_) => g.bombs(),
    }
    sort_weakest_first(out, rules);
}

/// Sorts plays weakest first: by `compare::order_key`, then fewer wild jokers, then by cards.
pub fn sort_weakest_first(plays: &mut [Play], rules: &Rules) {
    plays.sort_unstable_by_key(|p| {
        let (bomb, strength) = compare::order_key(&p.hand, rules);
        (bomb, strength, p.hand.wilds.len() as u8, p.cards.bits())
    });
}

/// The weakest legal lead of a hand (what auto-play (托管) leads), if the hand is not empty.
pub fn weakest_lead(hand: RankCounts, rules: &Rules) -> Option<Play> {
    legal_plays(hand, None, rules).into_iter().next()
}

#[inline]
fn rank(i: usize) -> Rank {
    Rank::from_index(i as u8).unwrap_or(Rank::THREE)
}

#[inline]
fn jokers(small: u8, big: u8) -> RankCounts {
    RankCounts::EMPTY
        .with(Rank::SMALL_JOKER, small)
        .with(Rank::BIG_JOKER, big)
}

/// The generator: the hand split into naturals and wild jokers, and the output.
struct Gen<'a> {
    rules: &'a Rules,
    previous: Option<&'a Hand>,
    /// Natural (non-wild) cards of the hand.
    nat: RankCounts,
    /// Wild small and big jokers in the hand.
    ws: u8,
    wb: u8,
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
        let ws = if rules.is_wild(Rank::SMALL_JOKER) {
            sj
        } else {
            0
        };
        let wb = if rules.is_wild(Rank::BIG_JOKER) {
            bj
        } else {
            0
        };
        let nat = hand
            .with(Rank::SMALL_JOKER, sj - ws)
            .with(Rank::BIG_JOKER, bj - wb);
        Gen {
            rules,
            previous,
            nat,
            ws,
            wb,
            sj,
            bj,
            out,
        }
    }

    fn wilds(&self) -> u8 {
        self.ws + self.wb
    }

    /// Pushes the play if it beats the previous play (or there is none).
    #[inline]
    fn emit(&mut self, cards: RankCounts, hand: Hand) {
        if self
            .previous
            .is_none_or(|p| compare::beats(p, &hand, self.rules))
        {
            self.out.push(Play { cards, hand });
        }
    }

    /// For `k` wilds, every split into (small, big) the hand can supply.
    #[inline]
    fn splits(&self, k: u8) -> impl Iterator<Item = (u8, u8)> + use<> {
        let (ws, wb) = (self.ws, self.wb);
        let lo = k.saturating_sub(wb);
        let hi = k.min(ws);
        (lo..=hi)
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

    fn singles(&mut self) {
        let all = self.nat.plus(jokers(self.ws, self.wb));
        for (r, _) in all.iter() {
            if !self.key_can_beat(HandType::Single, 1, r.index()) {
                continue;
            }
            let cards = RankCounts::EMPTY.with(r, 1);
            let h = hand::make(HandType::Single, r, None, 1, 1, false, cards, cards, 0, 0);
            self.emit(cards, h);
        }
    }

    fn pairs(&mut self) {
        let rules = self.rules;
        // Natural pairs (any rank, natural jokers included).
        for (r, c) in self.nat.iter() {
            if c >= 2 && self.key_can_beat(HandType::Pair, 2, r.index()) {
                let cards = RankCounts::EMPTY.with(r, 2);
                let h = hand::make(HandType::Pair, r, None, 2, 1, false, cards, cards, 0, 0);
                self.emit(cards, h);
            }
        }
        // A natural card of 3..2 with one wild.
        for i in 0..=TOP_SET {
            let r = rank(i);
            if self.nat.get(r) == 0 || !self.key_can_beat(HandType::Pair, 2, i) {
                continue;
            }
            let nat = RankCounts::EMPTY.with(r, 1);
            let target = RankCounts::EMPTY.with(r, 2);
            for (a, b) in self.splits(1) {
                let h = hand::make(HandType::Pair, r, None, 2, 1, false, nat, target, a, b);
                self.emit(nat.plus(jokers(a, b)), h);
            }
        }
        // Joker-only pairs of wild jokers (natural joker pairs were produced above).
        let pure = [
            (self.ws >= 2, jokers(2, 0)),
            (self.wb >= 2, jokers(0, 2)),
            (
                self.sj >= 1 && self.wb >= 1 && rules.big_joker_as_small,
                jokers(1, 1),
            ),
        ];
        for (ok, cards) in pure {
            if ok {
                for h in hand::classify(cards, rules) {
                    if h.kind == HandType::Pair {
                        self.emit(cards, h);
                    }
                }
            }
        }
    }

    fn triples(&mut self) {
        let w = self.wilds();
        for i in 0..=TOP_SET {
            let r = rank(i);
            let have = self.nat.get(r);
            if have == 0 || !self.key_can_beat(HandType::Triple, 3, i) {
                continue;
            }
            let target = RankCounts::EMPTY.with(r, 3);
            for c in (3u8.saturating_sub(w)).max(1)..=have.min(3) {
                let nat = RankCounts::EMPTY.with(r, c);
                for (a, b) in self.splits(3 - c) {
                    let h = hand::make(HandType::Triple, r, None, 3, 1, false, nat, target, a, b);
                    self.emit(nat.plus(jokers(a, b)), h);
                }
            }
        }
    }

    /// Straights (group 1), pair chains (2) and triple chains (3) over every window of 3..A.
    fn sequences(&mut self, group: u8, min_links: u8, kind: HandType) {
        let total = self.nat.total() as u8 + self.wilds();
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
                if must_lowest && self.nat.get(rank(start)) == 0 {
                    continue;
                }
                let deficit: u8 = (start..=top)
                    .map(|i| group.saturating_sub(self.nat.get(rank(i))))
                    .sum();
                if deficit > self.wilds() {
                    continue;
                }
                let mut target = RankCounts::EMPTY;
                for i in start..=top {
                    target = target.with(rank(i), group);
                }
                let seq = Seq {
                    group,
                    kind,
                    start,
                    links,
                    must_lowest,
                    target,
                };
                self.sequence_rec(&seq, 0, RankCounts::EMPTY, 0);
            }
        }
    }

    fn sequence_rec(&mut self, seq: &Seq, pos: usize, used: RankCounts, wild: u8) {
        if pos == seq.links {
            let naturals = used.total() as u8;
            if naturals == 0 || naturals < self.rules.min_naturals_in_sequence {
                return;
            }
            for (a, b) in self.splits(wild) {
                let h = hand::make(
                    seq.kind,
                    rank(seq.start + seq.links - 1),
                    None,
                    seq.group,
                    seq.links as u8,
                    false,
                    used,
                    seq.target,
                    a,
                    b,
                );
                self.emit(used.plus(jokers(a, b)), h);
            }
            return;
        }
        let r = rank(seq.start + pos);
        let budget = self.wilds() - wild;
        let max_nat = self.nat.get(r).min(seq.group);
        let mut min_nat = seq.group.saturating_sub(budget);
        if pos == 0 && seq.must_lowest {
            min_nat = min_nat.max(1);
        }
        // Remaining positions need their deficits covered too.
        let later: u8 = (pos + 1..seq.links)
            .map(|k| seq.group.saturating_sub(self.nat.get(rank(seq.start + k))))
            .sum();
        for u in (min_nat..=max_nat).rev() {
            let need = wild + (seq.group - u);
            if need + later > self.wilds() {
                continue;
            }
            self.sequence_rec(seq, pos + 1, used.with(r, u), need);
        }
    }

    /// Single-rank bombs, joker bombs and chain bombs.
    fn bombs(&mut self) {
        let rules = self.rules;
        let w = self.wilds();
        for i in 0..=TOP_SET {
            let r = rank(i);
            let have = self.nat.get(r);
            for c in 1..=have {
                for k in 4u8.saturating_sub(c)..=w {
                    let n = c + k;
                    let nat = RankCounts::EMPTY.with(r, c);
                    let target = RankCounts::EMPTY.with(r, n);
                    let stars = rules.has_stars().then_some(n);
                    for (a, b) in self.splits(k) {
                        let h =
                            hand::make(HandType::Bomb, r, stars, n, 1, false, nat, target, a, b);
                        self.emit(nat.plus(jokers(a, b)), h);
                    }
                }
            }
        }
        // 三王 and 天王: any three jokers, all four.
        for s in 0..=self.sj {
            for b in 0..=self.bj {
                if s + b >= 3 {
                    let cards = jokers(s, b);
                    for h in hand::classify(cards, rules) {
                        if h.is_bomb() {
                            self.emit(cards, h);
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
        let w = self.wilds();
        let cycle = TOP_SET + 1;
        let mut candidates: Vec<RankCounts> = Vec::new();
        let total = self.nat.total() as u8 + w;
        for links in rules.min_chain_links as usize..=(rules.max_chain_links as usize).min(cycle) {
            if 4 * links as u8 > total {
                break;
            }
            let plain = (0..=TOP_SEQ + 1 - links).map(|s| (s, false));
            let cyclic = (cycle - links..cycle)
                .filter(|_| rules.cyclic_chain_bombs)
                .map(|s| (s, true));
            for (start, _) in plain.chain(cyclic) {
                let mut window = [Rank::THREE; 13];
                let mut deficit = 0u8;
                for (k, slot) in window.iter_mut().enumerate().take(links) {
                    *slot = rank((start + k) % cycle);
                    deficit += 4u8.saturating_sub(self.nat.get(*slot));
                }
                if deficit > w {
                    continue;
                }
                let window = &window[..links];
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
                            self.chain_rec(window, 0, x, RankCounts::EMPTY, 0, &mut candidates);
                        }
                    }
                    _ => self.chain_rec(window, 0, 0, RankCounts::EMPTY, 0, &mut candidates),
                }
            }
        }
        candidates.sort_unstable();
        candidates.dedup();
        for cards in candidates {
            for h in hand::classify(cards, rules) {
                if h.kind == HandType::ChainBomb {
                    self.emit(cards, h);
                }
            }
        }
    }

    /// Chooses the natural count of each group of a chain-bomb window; `x` > 0 fixes every group
    /// at `x` cards (equal chains), `x` = 0 lets groups differ (at least four each).
    fn chain_rec(
        &self,
        window: &[Rank],
        pos: usize,
        x: u8,
        used: RankCounts,
        need: u8,
        out: &mut Vec<RankCounts>,
    ) {
        let w = self.wilds();
        if pos == window.len() {
            if x > 0 {
                for (a, b) in self.splits(need) {
                    out.push(used.plus(jokers(a, b)));
                }
            } else {
                for k in need..=w {
                    for (a, b) in self.splits(k) {
                        out.push(used.plus(jokers(a, b)));
                    }
                }
            }
            return;
        }
        let r = window[pos];
        let have = self.nat.get(r);
        let floor = if x > 0 { x } else { 4 };
        let later: u8 = window[pos + 1..]
            .iter()
            .map(|&q| floor.saturating_sub(self.nat.get(q)))
            .sum();
        let cap = if x > 0 { have.min(x) } else { have };
        for u in 0..=cap {
            let n = need + floor.saturating_sub(u);
            if n + later > w {
                continue;
            }
            self.chain_rec(window, pos + 1, x, used.with(r, u), n, out);
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plays(hand: &str, prev: Option<&str>, rules: &Rules) -> Vec<String> {
        let prev = prev.map(|p| hand::resolve(p.parse().unwrap(), None, None, rules).unwrap());
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
        let every = plays("3 3 3 3 BJ", None, &Rules::QIANBIAN);
        for p in &every {
            assert!(!p.is_empty());
        }
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
            for h in hand::classify(play, rules) {
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
