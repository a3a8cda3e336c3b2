//! Classification: what combination (牌型) a multiset of cards is, with wild jokers.
//!
//! Owns `HandType`, `Hand` (one interpretation of a play) and `classify`. Implements RULES.md §2
//! (combination types), §3 (wild cards) and §5 (star levels) under the typed `Rules` settings.
//! Pure and allocation-free; depends only on `cards`, `rules` and `compare` (to pick the strongest
//! chain-bomb shape).
//!
//! The rules it follows:
//! - a lone joker is itself; a play made only of jokers is a joker play (pair of jokers, 三王,
//!   天王), never a wild-substituted rank;
//! - mixed with natural cards, each wild joker becomes whatever rank the combination needs
//!   (3..2 for pairs, triples and bombs; 3..A for straights and chains);
//! - of the interpretations of one type and length, the strongest is taken (取大);
//! - cards that fit several types return one interpretation per type, bombs first; the caller
//!   picks (see `resolve`).

use std::fmt;
use std::str::FromStr;

use arrayvec::ArrayVec;
use serde::{Deserialize, Serialize};

use crate::cards::{RANK_COUNT, Rank, RankCounts, TOP_SEQ, TOP_SET};
use crate::compare;
use crate::rules::{ChainBombs, Rules, TianWang, UnequalChainLevel};

/// The combination types. The names are stable: other tools consume them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandType {
    /// 單張
    Single,
    /// 對子
    Pair,
    /// 三張
    Triple,
    /// 順子, five or more consecutive ranks 3..A
    Straight,
    /// 連對, three or more consecutive pairs
    PairChain,
    /// 連三張, three or more consecutive triples
    TripleChain,
    /// 炸彈 / X相炸彈, four or more cards of one rank
    Bomb,
    /// 三王炸彈, any three jokers
    ThreeJokers,
    /// 天王炸彈, all four jokers
    FourJokers,
    /// X相Y連環炸彈, three or more consecutive bombs
    ChainBomb,
}

impl HandType {
    /// All types, in the order used for sorting non-bombs.
    pub const ALL: [HandType; 10] = [
        HandType::Single,
        HandType::Pair,
        HandType::Triple,
        HandType::Straight,
        HandType::PairChain,
        HandType::TripleChain,
        HandType::Bomb,
        HandType::ThreeJokers,
        HandType::FourJokers,
        HandType::ChainBomb,
    ];

    /// The stable name (`single`, `pair`, …, `chain_bomb`).
    pub const fn name(self) -> &'static str {
        match self {
            HandType::Single => "single",
            HandType::Pair => "pair",
            HandType::Triple => "triple",
            HandType::Straight => "straight",
            HandType::PairChain => "pair_chain",
            HandType::TripleChain => "triple_chain",
            HandType::Bomb => "bomb",
            HandType::ThreeJokers => "three_jokers",
            HandType::FourJokers => "four_jokers",
            HandType::ChainBomb => "chain_bomb",
        }
    }

    /// True for the bomb types (which beat every non-bomb).
    pub const fn is_bomb(self) -> bool {
        matches!(
            self,
            HandType::Bomb | HandType::ThreeJokers | HandType::FourJokers | HandType::ChainBomb
        )
    }
}

impl fmt::Display for HandType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for HandType {
    type Err = String;
    fn from_str(s: &str) -> Result<HandType, String> {
        HandType::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| format!("unknown hand type {s:?}"))
    }
}

/// Which rank each wild joker of a play became, in order (small jokers first, then big).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct WildUse {
    n: u8,
    from: [u8; 4],
    to: [u8; 4],
}

impl WildUse {
    /// The (joker, rank it became) pairs.
    pub fn iter(&self) -> impl Iterator<Item = (Rank, Rank)> + '_ {
        (0..self.n as usize).filter_map(|i| {
            Some((
                Rank::from_index(self.from[i])?,
                Rank::from_index(self.to[i])?,
            ))
        })
    }

    /// Number of wild jokers used as other ranks.
    pub const fn len(&self) -> usize {
        self.n as usize
    }

    pub const fn is_empty(&self) -> bool {
        self.n == 0
    }

    fn push(&mut self, from: Rank, to: Rank) {
        let i = self.n as usize;
        if i < 4 {
            self.from[i] = from.index() as u8;
            self.to[i] = to.index() as u8;
            self.n += 1;
        }
    }
}

impl fmt::Debug for WildUse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.iter().map(|(a, b)| format!("{a}={b}")))
            .finish()
    }
}

/// One interpretation of a play: its type, size, key and star level, and what the wilds became.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Hand {
    /// The combination type.
    pub kind: HandType,
    /// Number of cards.
    pub len: u8,
    /// The comparison rank: the highest rank after substitution (for chain bombs the top group's
    /// rank, for cyclic chains the top in cyclic order). Meaningless for 三王 / 天王, see `key()`.
    pub key: Rank,
    /// Star level (星級 / 線 / 相) of a bomb under a star system; `None` otherwise.
    pub stars: Option<u8>,
    /// Cards per group: 1 straight, 2 pair chain, 3 triple chain, X for bombs (the smallest group
    /// of a chain bomb).
    pub group: u8,
    /// Number of consecutive ranks (straight length, pairs, triples, chain-bomb links; 1 for sets).
    pub links: u8,
    /// A chain bomb running through 2 (循環炸彈).
    pub cyclic: bool,
    /// The ranks the play stands for after substitution.
    pub substituted: RankCounts,
    /// Which wild joker became which rank.
    pub wilds: WildUse,
}

impl Hand {
    /// The key rank, `None` for 三王 and 天王.
    pub fn key(&self) -> Option<Rank> {
        match self.kind {
            HandType::ThreeJokers | HandType::FourJokers => None,
            _ => Some(self.key),
        }
    }

    /// True for bombs.
    pub const fn is_bomb(&self) -> bool {
        self.kind.is_bomb()
    }
}

/// The interpretations of one play (at most one per type), bombs first, strongest bomb first.
pub type Interpretations = ArrayVec<Hand, 6>;

/// A declared interpretation for a play that fits several types: the type and, optionally, the
/// key rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Declared {
    pub kind: HandType,
    pub key: Option<Rank>,
}

/// Why a play cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlayError {
    #[error("the cards {0} are not a combination")]
    NotACombination(RankCounts),
    #[error("the cards {cards} fit several combinations ({}); declare one", names(.options))]
    Ambiguous {
        cards: RankCounts,
        options: Vec<Hand>,
    },
    #[error("the declared interpretation does not fit the cards {0}")]
    DeclaredMismatch(RankCounts),
    #[error("the cards {0} do not beat the play on the table")]
    DoesNotBeat(RankCounts),
}

/// A play with more cards than a hand holds: no combination can have them (RULES.md §2 item 2:
/// a chain bomb of X links of Y cards needs X·Y ≤ the hand size).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the play has {len} cards but a hand holds at most {hand_size} (hand_size): no combination is larger than a hand"
)]
pub struct LargerThanHand {
    pub len: u32,
    pub hand_size: u8,
}

/// Rejects a play with more cards than a hand of `rules` holds; `classify` gives such a play
/// no interpretation and `resolve` answers `NotACombination`.
pub fn check_size(cards: RankCounts, rules: &Rules) -> Result<(), LargerThanHand> {
    let len = cards.total();
    if len > u32::from(rules.hand_size) {
        return Err(LargerThanHand {
            len,
            hand_size: rules.hand_size,
        });
    }
    Ok(())
}

fn names(hands: &[Hand]) -> String {
    hands
        .iter()
        .map(|h| match h.key() {
            Some(k) => format!("{} {} key {}", h.kind, h.len, k),
            None => format!("{} {}", h.kind, h.len),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The cards of an interpretation: the natural cards, the ranks the play stands for after
/// substitution (`target`), and the wild jokers (`small`, `big`) that fill `target - nat`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fill {
    nat: RankCounts,
    target: RankCounts,
    small: u8,
    big: u8,
}

impl Fill {
    /// Cards that stand for themselves (no wild joker).
    #[inline]
    pub(crate) const fn natural(cards: RankCounts) -> Fill {
        Fill {
            nat: cards,
            target: cards,
            small: 0,
            big: 0,
        }
    }

    /// `nat` with `small` and `big` wild jokers standing for `target - nat`.
    #[inline]
    pub(crate) const fn wild(nat: RankCounts, target: RankCounts, small: u8, big: u8) -> Fill {
        Fill {
            nat,
            target,
            small,
            big,
        }
    }
}

impl Hand {
    /// A play of one rank, or of jokers only: single, pair, triple, bomb, 三王, 天王 (one group of
    /// all its cards).
    #[inline]
    pub(crate) fn set(kind: HandType, key: Rank, stars: Option<u8>, fill: Fill) -> Hand {
        build(kind, key, stars, fill.target.total() as u8, 1, false, fill)
    }

    /// A straight, pair chain or triple chain: `links` consecutive ranks of `group` cards each.
    #[inline]
    pub(crate) fn sequence(kind: HandType, key: Rank, group: u8, links: u8, fill: Fill) -> Hand {
        build(kind, key, None, group, links, false, fill)
    }

    /// A chain bomb (X相Y連環炸彈) of `links` groups, the smallest of `group` cards, at star level
    /// `stars`; `cyclic` when it runs through the 2 (循環炸彈).
    #[inline]
    pub(crate) fn chain_bomb(
        key: Rank,
        stars: u8,
        group: u8,
        links: u8,
        cyclic: bool,
        fill: Fill,
    ) -> Hand {
        build(
            HandType::ChainBomb,
            key,
            Some(stars),
            group,
            links,
            cyclic,
            fill,
        )
    }
}

/// Builds a hand whose ranks after substitution are `fill.target`; the wilds (small jokers
/// first, then big ones) fill `target - nat` in ascending rank order.
#[inline]
fn build(
    kind: HandType,
    key: Rank,
    stars: Option<u8>,
    group: u8,
    links: u8,
    cyclic: bool,
    fill: Fill,
) -> Hand {
    let Fill {
        nat,
        target,
        small: ws,
        big: wb,
    } = fill;
    let mut wilds = WildUse::default();
    if ws + wb > 0 {
        if let Some(fill) = target.minus(nat) {
            // The ranks to fill, weakest first, one wild each: small jokers, then big ones.
            let jokers = ws + wb;
            let mut used = 0u8;
            let mut rest = fill.bits();
            while rest != 0 && used < jokers {
                let shift = rest.trailing_zeros() & !3;
                let to = rank((shift / 4) as usize);
                let count = ((rest >> shift) & 0xF) as u8;
                rest &= !(0xF << shift);
                for _ in 0..count {
                    if used == jokers {
                        break;
                    }
                    let from = if used < ws {
                        Rank::SMALL_JOKER
                    } else {
                        Rank::BIG_JOKER
                    };
                    wilds.push(from, to);
                    used += 1;
                }
            }
        }
    }
    Hand {
        kind,
        len: target.total() as u8,
        key,
        stars,
        group,
        links,
        cyclic,
        substituted: target,
        wilds,
    }
}

/// Classifies a play: every interpretation it has under `rules` (empty if it is no combination).
///
/// Bomb interpretations come first, the strongest first; non-bombs follow in type order. A play
/// with more cards than the hand size is no combination (`check_size` says why).
pub fn classify(cards: RankCounts, rules: &Rules) -> Interpretations {
    let mut out = Interpretations::new();
    let n = cards.total() as u8;
    if n == 0 || !cards.is_subset(RankCounts::FULL) || check_size(cards, rules).is_err() {
        return out;
    }
    let sj = cards.get(Rank::SMALL_JOKER);
    let bj = cards.get(Rank::BIG_JOKER);
    let stars = rules.has_stars();

    // Joker-only plays are joker plays (RULES.md A2, §3.2 items 1–2).
    if sj + bj == n {
        match n {
            1 => out.push(Hand::set(
                HandType::Single,
                if sj == 1 {
                    Rank::SMALL_JOKER
                } else {
                    Rank::BIG_JOKER
                },
                None,
                Fill::natural(cards),
            )),
            2 if sj == 2 || bj == 2 => {
                let r = if sj == 2 {
                    Rank::SMALL_JOKER
                } else {
                    Rank::BIG_JOKER
                };
                out.push(Hand::set(HandType::Pair, r, None, Fill::natural(cards)));
            }
            2 if rules.is_wild(Rank::BIG_JOKER) && rules.big_joker_as_small => {
                // A wild big joker stands for the small joker (§8 #19).
                let nat = RankCounts::EMPTY.with(Rank::SMALL_JOKER, 1);
                let target = RankCounts::EMPTY.with(Rank::SMALL_JOKER, 2);
                out.push(Hand::set(
                    HandType::Pair,
                    Rank::SMALL_JOKER,
                    None,
                    Fill::wild(nat, target, 0, 1),
                ));
            }
            3 if rules.three_jokers => out.push(Hand::set(
                HandType::ThreeJokers,
                Rank::BIG_JOKER,
                stars.then_some(6),
                Fill::natural(cards),
            )),
            4 => {
                let level = match rules.tianwang {
                    TianWang::MaxOf8 => 8,
                    _ => 7,
                };
                out.push(Hand::set(
                    HandType::FourJokers,
                    Rank::BIG_JOKER,
                    stars.then_some(level),
                    Fill::natural(cards),
                ));
            }
            _ => {}
        }
        return out;
    }

    let (nat, ws, wb) = rules.split_wilds(cards);
    if n == 1 {
        out.push(Hand::set(
            HandType::Single,
            first_rank(nat),
            None,
            Fill::natural(nat),
        ));
        return out;
    }

    // Shape of the natural cards.
    let mut lo = usize::MAX;
    let mut hi = 0usize;
    let mut distinct = 0u8;
    let mut max_count = 0u8;
    let mut naturals = 0u8;
    for i in 0..RANK_COUNT {
        let c = nat.get(Rank::from_index(i as u8).unwrap_or(Rank::THREE));
        if c > 0 {
            lo = lo.min(i);
            hi = hi.max(i);
            distinct += 1;
            max_count = max_count.max(c);
            naturals += c;
        }
    }

    // Bombs first: a single-rank bomb, then chain bombs (strongest shape).
    if distinct == 1 && hi <= TOP_SET && n >= 4 {
        let r = rank(hi);
        let target = RankCounts::EMPTY.with(r, n);
        out.push(Hand::set(
            HandType::Bomb,
            r,
            stars.then_some(n),
            Fill::wild(nat, target, ws, wb),
        ));
    }
    if rules.chain_bombs != ChainBombs::None && hi <= TOP_SET && n >= 4 * rules.min_chain_links {
        let shape = Shape {
            lo,
            hi,
            distinct,
            max_count,
        };
        if let Some(h) = best_chain_bomb(nat, shape, ws, wb, n, rules) {
            out.push(h);
        }
    }

    // Sets of one rank.
    if distinct == 1 && hi <= TOP_SET {
        let r = rank(hi);
        let target = RankCounts::EMPTY.with(r, n);
        match n {
            2 => out.push(Hand::set(
                HandType::Pair,
                r,
                None,
                Fill::wild(nat, target, ws, wb),
            )),
            3 => out.push(Hand::set(
                HandType::Triple,
                r,
                None,
                Fill::wild(nat, target, ws, wb),
            )),
            _ => {}
        }
    }

    // Sequences (3..A only; every rank of the window the same number of cards).
    if hi <= TOP_SEQ && naturals >= rules.min_naturals_in_sequence {
        for (group, kind, min_links) in [
            (1u8, HandType::Straight, rules.min_straight),
            (2, HandType::PairChain, rules.min_pair_chain),
            (3, HandType::TripleChain, rules.min_triple_chain),
        ] {
            if n % group != 0 || max_count > group {
                continue;
            }
            let links = n / group;
            if links < min_links || links as usize > TOP_SEQ + 1 {
                continue;
            }
            // The highest window of `links` ranks that holds every natural card (取大).
            let start = lo.min(TOP_SEQ + 1 - links as usize);
            if start + links as usize - 1 < hi {
                continue;
            }
            let mut target = RankCounts::EMPTY;
            for i in start..start + links as usize {
                target = target.with(rank(i), group);
            }
            out.push(Hand::sequence(
                kind,
                rank(start + links as usize - 1),
                group,
                links,
                Fill::wild(nat, target, ws, wb),
            ));
        }
    }
    out
}

#[inline]
fn rank(i: usize) -> Rank {
    Rank::from_index(i as u8).unwrap_or(Rank::THREE)
}

fn first_rank(rc: RankCounts) -> Rank {
    rc.iter().next().map(|(r, _)| r).unwrap_or(Rank::THREE)
}

/// The shape of a play's natural cards: lowest and highest rank index, number of distinct ranks,
/// largest count of one rank.
#[derive(Clone, Copy)]
struct Shape {
    lo: usize,
    hi: usize,
    distinct: u8,
    max_count: u8,
}

/// The strongest chain-bomb interpretation of the cards, over every link count and window.
fn best_chain_bomb(
    nat: RankCounts,
    shape: Shape,
    ws: u8,
    wb: u8,
    n: u8,
    rules: &Rules,
) -> Option<Hand> {
    let Shape {
        lo,
        hi,
        distinct,
        max_count,
    } = shape;
    let w = ws + wb;
    let cycle = TOP_SET + 1; // 13 ranks 3..2 on the cycle
    if w == 0 && hi <= TOP_SEQ {
        // Without wilds every rank of the window needs natural cards (four or more), so the
        // window is exactly the natural ranks: lo..=hi if they are consecutive, and no cyclic
        // window (those hold the 2, which has no natural card here) fits.
        let links = hi + 1 - lo;
        if distinct as usize != links
            || links < rules.min_chain_links as usize
            || links > rules.max_chain_links as usize
        {
            return None;
        }
        return chain_bomb_in_window(nat, lo, links, false, ws, wb, n, rules);
    }
    let mut nat_mask = 0u32;
    for (r, _) in nat.iter() {
        nat_mask |= 1 << r.index();
    }
    let mut best: Option<(u64, Hand)> = None;
    for links in rules.min_chain_links..=rules.max_chain_links {
        let y = links as usize;
        if y > cycle || 4 * links > n {
            break;
        }
        if rules.chain_bombs == ChainBombs::Equal && (n % links != 0 || n / links < max_count) {
            continue;
        }
        // Non-cyclic windows [s, s+y-1] within 3..A; cyclic windows contain the 2 (index 12)
        // and run on the cycle 3..A,2,3..
        let plain = (0..=TOP_SEQ + 1 - y.min(TOP_SEQ + 1)).map(|s| (s, false));
        let cyclic = (cycle - y..cycle)
            .filter(|_| rules.cyclic_chain_bombs)
            .map(|s| (s, true));
        for (s, is_cyclic) in plain.chain(cyclic) {
            if !is_cyclic && (s > lo || s + y - 1 < hi || s + y - 1 > TOP_SEQ) {
                continue;
            }
            // Every natural must lie inside the window.
            let window_mask = (((1u32 << y) - 1) << s | ((1u32 << y) - 1) >> (cycle - s)) & 0x1FFF;
            if nat_mask & !window_mask != 0 {
                continue;
            }
            let Some(hand) = chain_bomb_in_window(nat, s, y, is_cyclic, ws, wb, n, rules) else {
                continue;
            };
            let strength = compare::bomb_key(&hand, rules);
            if best.is_none_or(|(b, _)| strength > b) {
                best = Some((strength, hand));
            }
        }
    }
    best.map(|(_, h)| h)
}

/// The chain bomb of the window of `y` ranks from index `s` (on the cycle 3..A,2 when cyclic),
/// if the cards fit it exactly.
#[allow(clippy::too_many_arguments)]
fn chain_bomb_in_window(
    nat: RankCounts,
    s: usize,
    y: usize,
    is_cyclic: bool,
    ws: u8,
    wb: u8,
    n: u8,
    rules: &Rules,
) -> Option<Hand> {
    let cycle = TOP_SET + 1;
    let links = y as u8;
    let mut counts = [0u8; 13];
    for (k, slot) in counts.iter_mut().enumerate().take(y) {
        *slot = nat.get(rank((s + k) % cycle));
    }
    let groups = chain_groups(&counts[..y], ws + wb, n, rules)?;
    let mut target = RankCounts::EMPTY;
    let mut min_g = u8::MAX;
    let mut max_g = 0;
    for (k, &g) in groups[..y].iter().enumerate() {
        target = target.with(rank((s + k) % cycle), g);
        min_g = min_g.min(g);
        max_g = max_g.max(g);
    }
    let level = match rules.unequal_chain_level {
        UnequalChainLevel::MaxWithLargestGroup if rules.chain_bombs == ChainBombs::Unequal => {
            (min_g + links).max(max_g)
        }
        _ => min_g + links,
    };
    let top = (s + y - 1) % cycle;
    Some(Hand::chain_bomb(
        rank(top),
        level,
        min_g,
        links,
        is_cyclic,
        Fill::wild(nat, target, ws, wb),
    ))
}

/// Group sizes for a chain-bomb window with natural counts `counts` and `w` wilds, or `None` if
/// the window cannot take exactly these cards. Equal chains need every group the same size;
/// unequal chains take the distribution with the highest level.
fn chain_groups(counts: &[u8], w: u8, n: u8, rules: &Rules) -> Option<[u8; 13]> {
    let y = counts.len();
    let mut groups = [0u8; 13];
    match rules.chain_bombs {
        ChainBombs::None => None,
        ChainBombs::Equal => {
            let x = n / y as u8;
            if x < 4 || x as usize * y != n as usize || counts.iter().any(|&c| c > x) {
                return None;
            }
            groups[..y].fill(x);
            Some(groups)
        }
        ChainBombs::Unequal => {
            let deficit: u8 = counts.iter().map(|&c| 4u8.saturating_sub(c)).sum();
            if deficit > w {
                return None;
            }
            let spare = w - deficit;
            for (g, &c) in groups.iter_mut().zip(counts) {
                *g = c.max(4);
            }
            // Water-fill: raise the smallest groups (highest smallest group X).
            let mut fill = groups;
            for _ in 0..spare {
                if let Some(m) = (0..y).min_by_key(|&i| (fill[i], std::cmp::Reverse(i))) {
                    fill[m] += 1;
                }
            }
            let level_of = |g: &[u8; 13]| {
                let min_g = g[..y].iter().copied().min().unwrap_or(0);
                let max_g = g[..y].iter().copied().max().unwrap_or(0);
                match rules.unequal_chain_level {
                    UnequalChainLevel::MinPlusLinks => min_g + y as u8,
                    UnequalChainLevel::MaxWithLargestGroup => (min_g + y as u8).max(max_g),
                }
            };
            // Dump: all spare wilds on the largest group (highest single group).
            let mut dump = groups;
            if let Some(m) = (0..y).max_by_key(|&i| (dump[i], i)) {
                dump[m] += spare;
            }
            if level_of(&dump) > level_of(&fill) {
                Some(dump)
            } else {
                Some(fill)
            }
        }
    }
}

/// Picks the interpretation a play is taken as.
///
/// `declared` narrows to a type (and key); when following, only interpretations that beat
/// `previous` count. Of what remains, a single option is taken; otherwise the strongest bomb is
/// taken (a bomb interpretation outranks non-bombs, RULES.md §3.2 item 5); otherwise the play is
/// ambiguous and must be declared.
pub fn resolve(
    cards: RankCounts,
    previous: Option<&Hand>,
    declared: Option<Declared>,
    rules: &Rules,
) -> Result<Hand, PlayError> {
    let all = classify(cards, rules);
    if all.is_empty() {
        return Err(PlayError::NotACombination(cards));
    }
    let mut options: ArrayVec<Hand, 6> = all
        .iter()
        .copied()
        .filter(|h| match declared {
            Some(d) => h.kind == d.kind && d.key.is_none_or(|k| h.key() == Some(k)),
            None => true,
        })
        .collect();
    if options.is_empty() {
        return Err(PlayError::DeclaredMismatch(cards));
    }
    if let Some(prev) = previous {
        options.retain(|h| compare::beats(prev, h, rules));
        if options.is_empty() {
            return Err(PlayError::DoesNotBeat(cards));
        }
    }
    if options.len() == 1 || options[0].is_bomb() {
        // Bombs come first in classification order, strongest first.
        return Ok(options[0]);
    }
    Err(PlayError::Ambiguous {
        cards,
        options: options.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(cards: &str, rules: &Rules) -> Hand {
        let rc: RankCounts = cards.parse().unwrap();
        let all = classify(rc, rules);
        assert_eq!(all.len(), 1, "{cards}: {all:?}");
        all[0]
    }

    #[test]
    fn wild_straight_takes_the_larger_value() {
        let h = one("4 5 6 7 8 BJ", &Rules::BAIBIAN);
        assert_eq!((h.kind, h.len, h.key), (HandType::Straight, 6, Rank::NINE));
        assert_eq!(
            h.wilds.iter().collect::<Vec<_>>(),
            vec![(Rank::BIG_JOKER, Rank::NINE)]
        );
    }

    #[test]
    fn pure_jokers_are_joker_plays() {
        assert_eq!(one("BJ", &Rules::BAIBIAN).kind, HandType::Single);
        assert_eq!(one("SJ BJ", &Rules::BAIBIAN).key, Rank::SMALL_JOKER);
        assert!(classify("SJ BJ".parse().unwrap(), &Rules::CLASSIC).is_empty());
        assert_eq!(
            one("SJ SJ BJ", &Rules::QIANBIAN).kind,
            HandType::ThreeJokers
        );
    }

    #[test]
    fn no_play_is_larger_than_the_hand() {
        // RULES.md §2 item 2: X·Y ≤ the hand size. 5 links of 6 cards = 30 > 27.
        let chain: RankCounts = "3 3 3 3 3 3 4 4 4 4 4 4 5 5 5 5 5 5 6 6 6 6 6 6 7 7 7 7 7 7"
            .parse()
            .unwrap();
        assert!(classify(chain, &Rules::BAIBIAN).is_empty());
        assert_eq!(
            check_size(chain, &Rules::BAIBIAN),
            Err(LargerThanHand {
                len: 30,
                hand_size: 27
            })
        );
        assert_eq!(
            resolve(chain, None, None, &Rules::BAIBIAN),
            Err(PlayError::NotACombination(chain))
        );
        // 4 links of 6 = 24 cards fit.
        let fits = chain.with(Rank::SEVEN, 0);
        assert!(check_size(fits, &Rules::BAIBIAN).is_ok());
        assert_eq!(classify(fits, &Rules::BAIBIAN)[0].stars, Some(10));
    }

    #[test]
    fn qianbian_three_wilds_fit_two_types() {
        let all = classify("3 4 5 SJ BJ BJ".parse().unwrap(), &Rules::QIANBIAN);
        let kinds: Vec<_> = all.iter().map(|h| (h.kind, h.key)).collect();
        assert_eq!(
            kinds,
            vec![
                (HandType::Straight, Rank::EIGHT),
                (HandType::PairChain, Rank::FIVE)
            ]
        );
        let e = resolve(
            "3 4 5 SJ BJ BJ".parse().unwrap(),
            None,
            None,
            &Rules::QIANBIAN,
        );
        assert!(matches!(e, Err(PlayError::Ambiguous { .. })));
    }
}
