//! A slow, independent reference for classification and legal-play enumeration, written directly
//! from docs/rules/RULES.md (Part A; Part B §1–§5, §8), used by the agreement tests to check the fast code in
//! `src/hand.rs` and `src/moves/`.
//!
//! Nothing here mirrors the structure of the fast code:
//! - the classifier tries every value of every wild joker (brute force), and tests each resulting
//!   multiset of ranks against the definition of each combination type;
//! - the enumerator builds the candidate plays of a hand from the *definition* of each type (the
//!   multiset a play stands for after substitution) and classifies every candidate with the
//!   reference classifier; a plain brute force over small sub-multisets checks that generator.
//!
//! The only crate logic used is the bomb order (`compare::bomb_key`) to pick the strongest bomb
//! interpretation and to decide whether one bomb beats another; the bomb order is checked on its
//! own by the rule vectors (`tests/vectors.rs`).

#[path = "../common/flags.rs"]
pub mod flags;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::rc::Rc;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use shuangkou::cards::{Card, CardSet, Rank, RankCounts};
use shuangkou::classify;
use shuangkou::compare;
use shuangkou::hand::{Hand, HandType, WildUse};
use shuangkou::rules::{
    BombOrder, ChainBombs, EqualStarBombs, EqualStarTieBreak, Rules, TianWang, UnequalChainLevel,
    WildJokers,
};

/// Rank indices (docs/rules/RULES.md §1.1: 3..A are 0..=11, 2 is 12, small joker 13, big joker 14).
pub const ACE: usize = 11;
pub const TWO: usize = 12;
pub const SJ: usize = 13;
pub const BJ: usize = 14;

/// Counts per rank index.
pub type Counts = [u8; 15];

pub fn rank(i: usize) -> Rank {
    Rank::from_index(i as u8).expect("rank index 0..=14")
}

pub fn counts(rc: RankCounts) -> Counts {
    let mut c = [0u8; 15];
    for (i, slot) in c.iter_mut().enumerate() {
        *slot = rc.get(rank(i));
    }
    c
}

pub fn from_counts(c: &Counts) -> RankCounts {
    let mut rc = RankCounts::EMPTY;
    for (i, &n) in c.iter().enumerate() {
        assert!(n <= 15, "count {n} does not fit a RankCounts nibble");
        rc = rc.with(rank(i), n);
    }
    rc
}

pub fn parse(text: &str) -> RankCounts {
    text.parse()
        .unwrap_or_else(|e| panic!("bad cards {text:?}: {e}"))
}

/// The rule sets every agreement test runs: the six presets plus variants that switch on the
/// options no preset uses (cyclic chain bombs, the larger-group tie-break, 天王 as 8★ or above all
/// bombs in the star system, the S2 unequal-chain level, a minimum of natural cards in sequences,
/// a wild big joker that may not stand for the small joker, the first bomb of a star level
/// standing).
pub fn rule_sets() -> Vec<(String, Rules)> {
    let mut v: Vec<(String, Rules)> = Rules::PRESET_IDS
        .iter()
        .map(|id| (id.to_string(), Rules::preset(id).expect("preset")))
        .collect();
    v.push((
        "baibian+cyclic".into(),
        Rules {
            cyclic_chain_bombs: true,
            ..Rules::BAIBIAN
        },
    ));
    v.push((
        "qianbian+cyclic+larger_group+tianwang_max_of_8".into(),
        Rules {
            cyclic_chain_bombs: true,
            equal_star_tie_break: EqualStarTieBreak::LargerGroup,
            tianwang: TianWang::MaxOf8,
            ..Rules::QIANBIAN
        },
    ));
    v.push((
        "erren+min_plus_links+min_naturals_2+tianwang_above_all".into(),
        Rules {
            unequal_chain_level: UnequalChainLevel::MinPlusLinks,
            min_naturals_in_sequence: 2,
            tianwang: TianWang::AboveAll,
            ..Rules::ERREN
        },
    ));
    v.push((
        "huopin+first_stands".into(),
        Rules {
            equal_star_bombs: EqualStarBombs::FirstStands,
            ..Rules::HUOPIN
        },
    ));
    v.push((
        "jj+larger_group+no_bj_as_sj".into(),
        Rules {
            equal_star_tie_break: EqualStarTieBreak::LargerGroup,
            big_joker_as_small: false,
            ..Rules::JJ
        },
    ));
    for (name, r) in &v {
        r.validate()
            .unwrap_or_else(|e| panic!("rule set {name} is invalid: {e}"));
    }
    v
}

// ---------------------------------------------------------------------------------------------
// Classification
// ---------------------------------------------------------------------------------------------

/// One interpretation of a play, as the reference derives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefHand {
    pub kind: HandType,
    /// Number of cards.
    pub len: u8,
    /// Highest rank after substitution (top of the cyclic order for cyclic chains); `None` for
    /// 三王 and 天王.
    pub key: Option<Rank>,
    /// Star level under the star system, `None` otherwise and for non-bombs.
    pub stars: Option<u8>,
    /// A chain bomb through the 2 (循環炸彈).
    pub cyclic: bool,
    /// Every (links, group, substituted multiset) that gives this strongest interpretation: the
    /// rules fix the strength, not which of several equally strong substitutions is recorded.
    /// Unequal chain bombs have such ties: `Q×4 K×4 A×4` + 4 wilds is 5+5+6 over Q–A or 4×4 over
    /// J–A, both 8★ with 16 cards and top A. `links` is the number of consecutive ranks (1 for
    /// sets of one rank); `group` the cards per rank: 1 straight, 2 pair chain, 3 triple chain,
    /// the smallest group for chain bombs, the count for sets and bombs.
    pub options: Vec<Shape>,
}

/// How an interpretation lays the cards out (see `RefHand::options`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Shape {
    pub links: u8,
    pub group: u8,
    pub substituted: RankCounts,
}

impl RefHand {
    pub fn is_bomb(&self) -> bool {
        self.kind.is_bomb()
    }

    /// The crate's `Hand` for this interpretation (first option), for `compare` calls.
    pub fn to_hand(&self) -> Hand {
        to_hand(self, self.options[0])
    }
}

fn to_hand(h: &RefHand, shape: Shape) -> Hand {
    Hand {
        kind: h.kind,
        len: h.len,
        key: h.key.unwrap_or(Rank::BIG_JOKER),
        stars: h.stars,
        group: shape.group,
        links: shape.links,
        cyclic: h.cyclic,
        substituted: shape.substituted,
        wilds: WildUse::default(),
    }
}

fn small_is_wild(rules: &Rules) -> bool {
    rules.wild_jokers == WildJokers::All
}

fn big_is_wild(rules: &Rules) -> bool {
    rules.wild_jokers != WildJokers::None
}

fn star_system(rules: &Rules) -> bool {
    rules.bomb_order == BombOrder::Stars
}

/// Strength used to keep the strongest interpretation of one type: the key for non-bombs (one
/// type means one length, so the key decides, docs/rules/RULES.md §4.1), the bomb order for bombs (§4.3–4.4).
fn strength(h: &RefHand, shape: Shape, rules: &Rules) -> u64 {
    if h.is_bomb() {
        compare::bomb_key(&to_hand(h, shape), rules)
    } else {
        h.key.map_or(0, |k| k.index() as u64)
    }
}

/// Every interpretation of `cards` under `rules`, one per type (the strongest), sorted by type.
pub fn classify(cards: RankCounts, rules: &Rules) -> Vec<RefHand> {
    let n = cards.total() as u8;
    if n == 0 || !cards.is_subset(RankCounts::FULL) {
        return Vec::new();
    }
    // §2 item 2: a chain bomb of X links of Y cards needs X·Y ≤ the hand size; no play of any
    // type can hold more cards than a hand.
    if cards.total() > u32::from(rules.hand_size) {
        return Vec::new();
    }
    let c = counts(cards);
    // A2 / §3.2 items 1–2: a play made only of jokers is a joker play, never a substituted rank.
    if c[SJ] + c[BJ] == n {
        return joker_only(c[SJ], c[BJ], rules);
    }
    let ws = if small_is_wild(rules) { c[SJ] } else { 0 };
    let wb = if big_is_wild(rules) { c[BJ] } else { 0 };
    let mut nat = c;
    nat[SJ] -= ws;
    nat[BJ] -= wb;
    let naturals = n - ws - wb;
    let bj_as_sj = rules.big_joker_as_small;

    let mut best: BTreeMap<HandType, (u64, RefHand)> = BTreeMap::new();
    // §3.2 item 3: every wild becomes one rank 3..2 (a big joker may also become the small joker
    // when `big_joker_as_small`). Wilds are interchangeable, so trying every multiset of values
    // is the same as trying every value of every wild.
    for to_sj in 0..=(if bj_as_sj { wb } else { 0 }) {
        let mut t = nat;
        t[SJ] += to_sj;
        let rest = ws + wb - to_sj;
        let mask = (0..15).filter(|&i| t[i] > 0).fold(0u32, |m, i| m | 1 << i);
        for_each_multiset(rest, 0, &mut t, mask, &mut |t, mask| {
            if !may_be_a_combination(mask) {
                return;
            }
            for h in interpretations(t, n, naturals, rules) {
                let s = strength(&h, h.options[0], rules);
                match best.get_mut(&h.kind) {
                    None => {
                        best.insert(h.kind, (s, h));
                    }
                    Some((bs, bh)) => {
                        if s > *bs {
                            *bs = s;
                            *bh = h;
                        } else if s == *bs {
                            assert_eq!(
                                (bh.len, bh.key, bh.stars, bh.cyclic),
                                (h.len, h.key, h.stars, h.cyclic),
                                "equal strength must mean the same interpretation of {cards}"
                            );
                            if !bh.options.contains(&h.options[0]) {
                                bh.options.push(h.options[0]);
                                bh.options.sort();
                            }
                        }
                    }
                }
            }
        });
    }
    best.into_values().map(|(_, h)| h).collect()
}

/// A necessary condition, only to save time: every type of docs/rules/RULES.md §2 uses one rank, or a run
/// of consecutive ranks within 3..A, or (cyclic chain bombs) a run on the cycle 3..A, 2, 3, …
/// `RUNS` accepts every run on the 13-rank cycle (a superset whatever the options) and leaves the
/// real decision to `interpretations`. `mask` has bit i set when rank i is present.
fn may_be_a_combination(mask: u32) -> bool {
    if mask.count_ones() <= 1 {
        return true;
    }
    // A joker next to another rank is no type.
    mask >> 13 == 0 && RUNS[mask as usize]
}

/// `RUNS[m]`: the 13-bit rank set `m` is one run on the cycle 3, 4, …, A, 2, 3, …
const RUNS: [bool; 1 << 13] = {
    let mut table = [false; 1 << 13];
    let mut start = 0;
    while start < 13 {
        let mut len = 1;
        while len <= 13 {
            let mut m = 0usize;
            let mut k = 0;
            while k < len {
                m |= 1 << ((start + k) % 13);
                k += 1;
            }
            table[m] = true;
            len += 1;
        }
        start += 1;
    }
    table
};

/// Adds every multiset of `k` ranks from `from..=TWO` to `t` in turn and calls `f` with it and
/// its rank mask.
fn for_each_multiset(
    k: u8,
    from: usize,
    t: &mut Counts,
    mask: u32,
    f: &mut impl FnMut(&Counts, u32),
) {
    if k == 0 {
        f(t, mask);
        return;
    }
    for i in from..=TWO {
        t[i] += 1;
        for_each_multiset(k - 1, i, t, mask | 1 << i, f);
        t[i] -= 1;
    }
}

fn joker_only(sj: u8, bj: u8, rules: &Rules) -> Vec<RefHand> {
    let n = sj + bj;
    let mut cards = [0u8; 15];
    cards[SJ] = sj;
    cards[BJ] = bj;
    let cards = from_counts(&cards);
    let set = |kind, key: Option<usize>, stars, group, substituted| RefHand {
        kind,
        len: n,
        key: key.map(rank),
        stars,
        cyclic: false,
        options: vec![Shape {
            links: 1,
            group,
            substituted,
        }],
    };
    let stars = star_system(rules);
    match n {
        // A lone joker is itself (§3.2 item 1).
        1 => vec![set(
            HandType::Single,
            Some(if sj == 1 { SJ } else { BJ }),
            None,
            1,
            cards,
        )],
        2 if sj == 2 => vec![set(HandType::Pair, Some(SJ), None, 2, cards)],
        2 if bj == 2 => vec![set(HandType::Pair, Some(BJ), None, 2, cards)],
        // SJ + BJ: a pair of small jokers only if the big joker is wild and may stand for the
        // small joker (§2 item 7, §8 #19); otherwise two different ranks, no combination.
        2 if big_is_wild(rules) && rules.big_joker_as_small => {
            let mut sub = [0u8; 15];
            sub[SJ] = 2;
            vec![set(HandType::Pair, Some(SJ), None, 2, from_counts(&sub))]
        }
        // 三王: any three jokers, 6★ (§2, §5); only where the variant has it.
        3 if rules.three_jokers => vec![set(
            HandType::ThreeJokers,
            None,
            stars.then_some(6),
            3,
            cards,
        )],
        // 天王: all four jokers; 7★ unless the variant makes it 8★ (§5, §4.4, §8 #1).
        4 => {
            let level = if rules.tianwang == TianWang::MaxOf8 {
                8
            } else {
                7
            };
            vec![set(
                HandType::FourJokers,
                None,
                stars.then_some(level),
                4,
                cards,
            )]
        }
        _ => Vec::new(),
    }
}

/// The types a fully substituted multiset `t` (no wild left) is, by the definitions of docs/rules/RULES.md
/// §2 and the star levels of §5.
fn interpretations(t: &Counts, n: u8, naturals: u8, rules: &Rules) -> Vec<RefHand> {
    let mut out = Vec::new();
    let mut present = [(0usize, 0u8); 15];
    let mut y = 0;
    for (i, &c) in t.iter().enumerate() {
        if c > 0 {
            present[y] = (i, c);
            y += 1;
        }
    }
    let present = &present[..y];
    let stars = star_system(rules);
    let mk = |kind, key: usize, stars, group, links, cyclic| RefHand {
        kind,
        len: n,
        key: Some(rank(key)),
        stars,
        cyclic,
        options: vec![Shape {
            links,
            group,
            substituted: from_counts(t),
        }],
    };

    // Sets of one rank.
    if present.len() == 1 {
        let (i, c) = present[0];
        match c {
            1 => out.push(mk(HandType::Single, i, None, 1, 1, false)),
            // Pairs of any rank (2, jokers included).
            2 => out.push(mk(HandType::Pair, i, None, 2, 1, false)),
            // No joker triple exists.
            3 if i <= TWO => out.push(mk(HandType::Triple, i, None, 3, 1, false)),
            // Bombs: one rank 3..2, four cards or more; X cards = X★.
            _ if c >= 4 && i <= TWO => {
                out.push(mk(HandType::Bomb, i, stars.then_some(c), c, 1, false))
            }
            _ => {}
        }
    }

    let (lowest, highest) = (present[0].0, present[y - 1].0);
    let plain_window = highest <= ACE && highest - lowest + 1 == y;

    // Sequences: consecutive ranks within 3..A, the same number of cards on each.
    if plain_window && naturals >= rules.min_naturals_in_sequence {
        let top = highest;
        let links = y as u8;
        for (group, kind, min_links) in [
            (1u8, HandType::Straight, rules.min_straight),
            (2, HandType::PairChain, rules.min_pair_chain),
            (3, HandType::TripleChain, rules.min_triple_chain),
        ] {
            if present.iter().all(|&(_, c)| c == group) && links >= min_links {
                out.push(mk(kind, top, None, group, links, false));
            }
        }
    }

    // Chain bombs: Y consecutive ranks, each a bomb (≥ 4 cards); equal group sizes unless the
    // variant allows unequal ones; through the 2 only with the cyclic option (then the key is the
    // top in cyclic order).
    if rules.chain_bombs != ChainBombs::None
        && y as u8 >= rules.min_chain_links
        && y as u8 <= rules.max_chain_links
        && present.iter().all(|&(i, c)| i <= TWO && c >= 4)
        && (rules.chain_bombs == ChainBombs::Unequal
            || present.iter().all(|&(_, c)| c == present[0].1))
    {
        let window = if plain_window {
            Some((highest, false))
        } else if rules.cyclic_chain_bombs && t[TWO] > 0 && y < 13 {
            // A window on the cycle 3, 4, …, A, 2, 3, …: some start s with {s, …, s+y-1} mod 13
            // equal to the ranks present.
            (0..13)
                .find(|&s| (0..y).all(|k| t[(s + k) % 13] > 0))
                .map(|s| ((s + y - 1) % 13, true))
        } else {
            None
        };
        if let Some((top, cyclic)) = window {
            let x = present.iter().map(|&(_, c)| c).min().unwrap_or(0);
            let largest = present.iter().map(|&(_, c)| c).max().unwrap_or(0);
            let level = match (rules.chain_bombs, rules.unequal_chain_level) {
                (ChainBombs::Unequal, UnequalChainLevel::MaxWithLargestGroup) => {
                    (x + y as u8).max(largest)
                }
                _ => x + y as u8,
            };
            out.push(mk(
                HandType::ChainBomb,
                top,
                stars.then_some(level),
                x,
                y as u8,
                cyclic,
            ));
        }
    }
    out
}

/// Compares the fast classifier with the reference on one play; `Err` describes every
/// difference.
pub fn check_classify(
    cards: RankCounts,
    rules: &Rules,
    reference: &[RefHand],
) -> Result<(), String> {
    let fast = classify::classify(cards, rules);
    let mut errors = Vec::new();
    let fast_kinds: Vec<HandType> = fast.iter().map(|h| h.kind).collect();
    let ref_kinds: BTreeSet<HandType> = reference.iter().map(|h| h.kind).collect();
    let fast_set: BTreeSet<HandType> = fast_kinds.iter().copied().collect();
    if fast_set.len() != fast_kinds.len() {
        errors.push(format!("fast returns a type twice: {fast_kinds:?}"));
    }
    if fast_set != ref_kinds {
        errors.push(format!("types: fast {fast_set:?}, reference {ref_kinds:?}"));
    }
    // Documented order: bombs first, strongest first; then non-bombs in type order.
    let order: Vec<(bool, std::cmp::Reverse<u64>, HandType)> = fast
        .iter()
        .map(|h| {
            (
                !h.is_bomb(),
                std::cmp::Reverse(compare::bomb_key(h, rules)),
                h.kind,
            )
        })
        .collect();
    if !order.is_sorted() {
        errors.push(format!("interpretations out of order: {fast_kinds:?}"));
    }
    let wild_jokers = {
        let mut w = [0u8; 15];
        if small_is_wild(rules) {
            w[SJ] = cards.get(Rank::SMALL_JOKER);
        }
        if big_is_wild(rules) {
            w[BJ] = cards.get(Rank::BIG_JOKER);
        }
        from_counts(&w)
    };
    let joker_only =
        cards.get(Rank::SMALL_JOKER) + cards.get(Rank::BIG_JOKER) == cards.total() as u8;
    for h in &fast {
        let Some(r) = reference.iter().find(|r| r.kind == h.kind) else {
            continue;
        };
        let joker_bomb = matches!(h.kind, HandType::ThreeJokers | HandType::FourJokers);
        let mut diff = Vec::new();
        if h.len != r.len {
            diff.push(format!("len {} vs {}", h.len, r.len));
        }
        if h.key() != r.key {
            diff.push(format!("key {:?} vs {:?}", h.key(), r.key));
        }
        if h.stars != r.stars {
            diff.push(format!("stars {:?} vs {:?}", h.stars, r.stars));
        }
        if h.cyclic != r.cyclic {
            diff.push(format!("cyclic {} vs {}", h.cyclic, r.cyclic));
        }
        // Group and links of 三王 / 天王 are not defined by the rules.
        let fits = r.options.iter().any(|o| {
            o.substituted == h.substituted
                && (joker_bomb || (o.group == h.group && o.links == h.links))
        });
        if !fits {
            diff.push(format!(
                "(links {}, group {}, substituted {}) not among the reference's strongest {:?}",
                h.links, h.group, h.substituted, r.options
            ));
        }
        if h.is_bomb() {
            let (fk, rk) = (
                compare::bomb_key(h, rules),
                compare::bomb_key(&r.to_hand(), rules),
            );
            if fk != rk {
                diff.push(format!("bomb_key {fk:#x} vs {rk:#x}"));
            }
        }
        // The wild record: jokers it names are wild jokers of the play, and the play with them
        // replaced is the substituted multiset; mixed plays use every wild joker.
        let mut from = RankCounts::EMPTY;
        let mut to = RankCounts::EMPTY;
        for (f, t) in h.wilds.iter() {
            from.add(f, 1);
            to.add(t, 1);
        }
        let consistent = from.is_subset(wild_jokers)
            && (joker_only || from == wild_jokers)
            && cards.minus(from).map(|rest| rest.plus(to)) == Some(h.substituted);
        if !consistent {
            diff.push(format!(
                "wild record {:?} inconsistent with {}",
                h.wilds, h.substituted
            ));
        }
        if !diff.is_empty() {
            errors.push(format!("{}: {}", h.kind, diff.join("; ")));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "classify({cards}) disagrees: {}\n  fast: {:?}\n  reference: {:?}",
            errors.join(" | "),
            fast,
            reference
        ))
    }
}

// ---------------------------------------------------------------------------------------------
// Enumeration
// ---------------------------------------------------------------------------------------------

/// Does `candidate` beat `previous` (docs/rules/RULES.md A2, §4): any bomb beats a non-bomb; bombs by the
/// bomb order; non-bombs need the same type and card count and a strictly higher key.
pub fn ref_beats(previous: &Hand, candidate: &RefHand, rules: &Rules) -> bool {
    match (previous.is_bomb(), candidate.is_bomb()) {
        (false, true) => true,
        // §8 #27, S1's note 「線數一樣,誰先出誰大」: the first bomb of a star level stands.
        (true, true)
            if star_system(rules) && rules.equal_star_bombs == EqualStarBombs::FirstStands =>
        {
            first_stands_level(candidate.kind, candidate.stars, rules)
                > first_stands_level(previous.kind, previous.stars, rules)
        }
        (true, true) => {
            compare::bomb_key(&candidate.to_hand(), rules) > compare::bomb_key(previous, rules)
        }
        (true, false) => false,
        (false, false) => {
            candidate.kind == previous.kind
                && candidate.len == previous.len
                && candidate.key.is_some_and(|k| k > previous.key)
        }
    }
}

/// The star level a bomb is compared by when the first bomb of a level stands: its stars (§5),
/// with 天王 above every level when the settings put it above all bombs (§4.4).
fn first_stands_level(kind: HandType, stars: Option<u8>, rules: &Rules) -> u16 {
    match kind {
        HandType::FourJokers if rules.tianwang == TianWang::AboveAll => u16::MAX,
        _ => u16::from(stars.expect("a bomb under the star system has a star level")),
    }
}

/// A legal play as the reference identifies it: the ranks played and the type they are taken as.
pub type PlayId = (RankCounts, HandType);

/// The reference classifier with a cache (the same small plays recur in every hand).
pub struct Reference {
    pub rules: Rules,
    cache: HashMap<RankCounts, Rc<Vec<RefHand>>>,
}

impl Reference {
    pub fn new(rules: Rules) -> Reference {
        Reference {
            rules,
            cache: HashMap::new(),
        }
    }

    pub fn classify(&mut self, cards: RankCounts) -> Rc<Vec<RefHand>> {
        let rules = self.rules;
        self.cache
            .entry(cards)
            .or_insert_with(|| Rc::new(classify(cards, &rules)))
            .clone()
    }

    /// Brute force: every sub-multiset of `hand` with at most `max_cards` cards, classified.
    pub fn brute_force_plays(&mut self, hand: RankCounts, max_cards: u32) -> BTreeSet<PlayId> {
        let ranks: Vec<(Rank, u8)> = hand.iter().collect();
        let mut subs = Vec::new();
        sub_multisets(&ranks, 0, RankCounts::EMPTY, max_cards, &mut subs);
        let mut out = BTreeSet::new();
        for s in subs {
            for h in self.classify(s).iter() {
                out.insert((s, h.kind));
            }
        }
        out
    }

    /// Every legal lead of `hand` (all sizes) with its reference interpretation.
    ///
    /// Why this is complete. Let (S, h) be a legal play: S ⊆ hand, h an interpretation of S.
    /// - If S is only jokers, it is one of the sub-multisets of the hand's jokers, all of which
    ///   are candidates.
    /// - Otherwise every wild joker of S stands for a rank (a wild left as itself never forms a
    ///   type next to a natural card: jokers are excluded from sequences, chain bombs, triples and
    ///   bombs, and a pair or single with a natural non-joker card has no joker in it). So the
    ///   substituted multiset T = (S − J) + values(J), where J are the wild jokers of S, and T is
    ///   one of the shapes of docs/rules/RULES.md §2: one rank 3..2 with k cards (single, pair, triple,
    ///   bomb), or a run of consecutive ranks (3..A, or through the 2 on the cycle) with a count on
    ///   each (sequences with 1/2/3 per rank, chain bombs with ≥ 4 per rank). With D =
    ///   values(J) ⊆ T we have S = (T − D) + J, where T − D = S − J holds only natural cards of the
    ///   hand, and |D| = |J|. The generator enumerates every shape T the hand can reach (the
    ///   natural cards plus at most all the wilds), every D ⊆ T with T − D within the hand's
    ///   naturals and |D| at most the hand's wilds, and every choice of |D| wild jokers of the
    ///   hand; so S is among the candidates.
    /// - Every candidate is classified in full by the reference classifier, so every
    ///   interpretation h of S is found, whichever shape produced S.
    ///
    /// Shapes are generated for every rank, window position, window length and group count the
    /// hand allows, not only those the rules accept (e.g. two-link "chain bombs", five-card
    /// runs of pairs); the classifier rejects what is not a combination.
    pub fn lead_plays(&mut self, hand: RankCounts) -> BTreeMap<PlayId, RefHand> {
        let mut out = BTreeMap::new();
        for s in self.candidates(hand) {
            for h in self.classify(s).iter() {
                out.insert((s, h.kind), h.clone());
            }
        }
        out
    }

    /// The candidate plays of `hand` (see `lead_plays`).
    pub fn candidates(&self, hand: RankCounts) -> BTreeSet<RankCounts> {
        let h = counts(hand);
        let ws = if small_is_wild(&self.rules) { h[SJ] } else { 0 };
        let wb = if big_is_wild(&self.rules) { h[BJ] } else { 0 };
        let w = ws + wb;
        let mut nat = h;
        nat[SJ] -= ws;
        nat[BJ] -= wb;
        let total = hand.total() as u8;
        let mut out = BTreeSet::new();

        // Joker-only plays.
        for s in 0..=h[SJ] {
            for b in 0..=h[BJ] {
                if s + b > 0 {
                    let mut c = [0u8; 15];
                    c[SJ] = s;
                    c[BJ] = b;
                    out.insert(from_counts(&c));
                }
            }
        }

        let mut shapes: Vec<Counts> = Vec::new();
        // One rank 3..2, k cards.
        for i in 0..=TWO {
            for k in 1..=(nat[i] + w).min(total) {
                let mut t = [0u8; 15];
                t[i] = k;
                shapes.push(t);
            }
        }
        // Runs over 3..A with 1, 2 or 3 cards per rank, any length ≥ 2.
        for group in 1..=3u8 {
            for start in 0..=ACE {
                for end in start + 1..=ACE {
                    let mut t = [0u8; 15];
                    for slot in &mut t[start..=end] {
                        *slot = group;
                    }
                    shapes.push(t);
                }
            }
        }
        // Runs of ≥ 4 cards per rank, any counts, on plain windows of 3..A and on cyclic windows
        // through the 2, lengths 2..=12.
        for len in 2..=12usize {
            for start in 0..13usize {
                let window: Vec<usize> = (0..len).map(|k| (start + k) % 13).collect();
                let plain = start + len - 1 <= ACE;
                let through_two = window.contains(&TWO);
                if !plain && !through_two {
                    continue;
                }
                let mut t = [0u8; 15];
                run_counts(&window, 0, &nat, w, total, 0, &mut t, &mut shapes);
            }
        }

        for t in &shapes {
            let deficit: u8 = (0..15).map(|i| t[i].saturating_sub(nat[i])).sum();
            if deficit > w {
                continue;
            }
            for d in deficit..=w {
                let mut removed = [0u8; 15];
                removals(t, &nat, 0, d, &mut removed, &mut |removed| {
                    let mut s = *t;
                    for i in 0..15 {
                        s[i] -= removed[i];
                    }
                    for a in 0..=ws.min(d) {
                        let b = d - a;
                        if b <= wb {
                            let mut s = s;
                            s[SJ] += a;
                            s[BJ] += b;
                            out.insert(from_counts(&s));
                        }
                    }
                });
            }
        }
        out
    }
}

/// Every sub-multiset of `ranks[i..]` added to `acc`, at most `max` cards in total.
fn sub_multisets(
    ranks: &[(Rank, u8)],
    i: usize,
    acc: RankCounts,
    max: u32,
    out: &mut Vec<RankCounts>,
) {
    if i == ranks.len() {
        if !acc.is_empty() {
            out.push(acc);
        }
        return;
    }
    let (r, have) = ranks[i];
    for k in 0..=have {
        if acc.total() + k as u32 > max {
            break;
        }
        sub_multisets(ranks, i + 1, acc.with(r, k), max, out);
    }
}

/// Counts ≥ 4 for each rank of `window`, reachable with the naturals and `w` wilds, total at most
/// `total`.
#[allow(clippy::too_many_arguments)]
fn run_counts(
    window: &[usize],
    pos: usize,
    nat: &Counts,
    w: u8,
    total: u8,
    used: u8,
    t: &mut Counts,
    out: &mut Vec<Counts>,
) {
    if pos == window.len() {
        out.push(*t);
        return;
    }
    let i = window[pos];
    let deficit_so_far: u8 = window[..pos]
        .iter()
        .map(|&j| t[j].saturating_sub(nat[j]))
        .sum();
    for k in 4..=nat[i] + w {
        let deficit = deficit_so_far + k.saturating_sub(nat[i]);
        if deficit > w || used + k > total {
            break;
        }
        t[i] = k;
        run_counts(window, pos + 1, nat, w, total, used + k, t, out);
        t[i] = 0;
    }
}

/// Every multiset `removed` ⊆ `t` of `d` cards with `t − removed` ⊆ `nat` (ranks `i..`).
fn removals(
    t: &Counts,
    nat: &Counts,
    i: usize,
    d: u8,
    removed: &mut Counts,
    f: &mut impl FnMut(&Counts),
) {
    if i == 15 {
        if d == 0 {
            f(removed);
        }
        return;
    }
    let must = t[i].saturating_sub(nat[i]);
    for k in must..=t[i].min(d) {
        removed[i] = k;
        removals(t, nat, i + 1, d - k, removed, f);
    }
    removed[i] = 0;
}

// ---------------------------------------------------------------------------------------------
// Deals
// ---------------------------------------------------------------------------------------------

/// Shuffles the 108 physical cards with a seeded ChaCha8 and deals `players` hands of 27.
pub fn deal(seed: u64, players: usize) -> Vec<CardSet> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut deck: Vec<Card> = Card::all().collect();
    deck.shuffle(&mut rng);
    deck.chunks(27)
        .take(players)
        .map(|c| c.iter().copied().collect())
        .collect()
}

/// A stacked 27-card hand: a run of 3–5 consecutive ranks (possibly through the 2) with 4–8
/// copies each, some jokers, filled up with random cards. Chain bombs, big bombs and long
/// chains are rare in uniform deals; these hands exercise them.
pub fn stacked_hand(seed: u64) -> RankCounts {
    use rand::Rng;
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed_57ac_4ed0_0000);
    let mut hand = RankCounts::EMPTY;
    let links = rng.random_range(3..=5usize);
    let start = rng.random_range(0..13usize);
    for k in 0..links {
        let r = rank((start + k) % 13);
        let n = rng.random_range(3..=8u8);
        hand = hand.with(r, n);
    }
    hand = hand
        .with(Rank::SMALL_JOKER, rng.random_range(0..=2))
        .with(Rank::BIG_JOKER, rng.random_range(0..=2));
    let mut rest: Vec<Rank> = RankCounts::FULL
        .minus(hand)
        .expect("subset of the decks")
        .ranks()
        .collect();
    rest.shuffle(&mut rng);
    let mut it = rest.into_iter();
    while hand.total() < 27 {
        let r = it.next().expect("enough cards");
        hand.add(r, 1);
    }
    while hand.total() > 27 {
        // Too many stacked cards: drop from the lowest rank present.
        let (r, n) = hand.iter().next().expect("non-empty");
        hand = hand.with(r, n - 1);
    }
    hand
}

/// Whether the long (thorough) runs were asked for (`SHUANGKOU_THOROUGH=1`).
pub use flags::thorough;
