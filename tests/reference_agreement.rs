//! The fast rules core against the slow reference in `tests/reference/`.
//!
//! - Classification, exhaustive over small plays: every multiset of up to 6 cards over the ranks
//!   3 4 5 6 7 A 2 SJ BJ (up to 6 copies of a rank, 2 of a joker) and every multiset of up to 5
//!   cards over all fifteen ranks, under every rule set of `reference::rule_sets()` (the six
//!   presets and variants with the options no preset uses).
//! - Classification of large plays: every combination shape of docs/rules/RULES.md §2 (runs of 1/2/3 cards
//!   per rank, bombs, chain bombs incl. cyclic windows and unequal groups), with one of its cards
//!   (two for shapes of up to 12 cards) replaced by jokers in every way, and with one card of any
//!   rank removed or added; each play under five of the rule sets (all of them when thorough).
//! - Enumeration: seeded 27-card hands (uniform deals of the 108 cards and stacked hands rich in
//!   bombs and chain bombs); for every hand and rule set the fast `moves::legal_plays` must equal
//!   the reference's play set exactly (leads, and follows of plays taken from another hand), every
//!   play it returns must classify the same under the reference, and the reference's generator is
//!   itself checked against a brute force over all sub-multisets of up to N cards.
//!
//! Default run (debug, two cores: about 15–30 s): 216 hands per rule set with at most two wild
//! jokers and 72 per rule set with four (60/180 uniform deals, 12/36 stacked hands), N = 4 on
//! every third hand, six previous plays per hand. `SHUANGKOU_THOROUGH=1`: 1000 hands per rule
//! set (800 dealt, 200 stacked), N = 6 on every fourth hand, twelve previous plays per hand,
//! every large play under every rule set, and a third four-wild hand (about 17 minutes).

pub mod reference;

use std::collections::{BTreeMap, BTreeSet};

use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use reference::{
    ACE, BJ, Counts, PlayId, Reference, SJ, TWO, check_classify, from_counts, parse, ref_beats,
    rule_sets,
};
use shuangkou::cards::{Rank, RankCounts};
use shuangkou::classify;
use shuangkou::compare;
use shuangkou::hand::{Hand, HandType};
use shuangkou::moves::{self, Play};
use shuangkou::rules::{Rules, WildJokers};

/// Collects disagreements (at most a few per test) and fails with all of them at the end.
#[derive(Default)]
struct Failures {
    list: Vec<String>,
    count: usize,
}

impl Failures {
    fn push(&mut self, msg: String) {
        self.count += 1;
        if self.list.len() < 12 {
            self.list.push(msg);
        }
    }

    fn finish(self, what: &str) {
        assert!(
            self.count == 0,
            "{what}: {} disagreement(s); the first {}:\n\n{}",
            self.count,
            self.list.len(),
            self.list.join("\n\n")
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Classification
// ---------------------------------------------------------------------------------------------

/// Every multiset of `1..=max` cards over `alphabet` with per-rank limits.
fn small_multisets(alphabet: &[(usize, u8)], max: u8) -> Vec<RankCounts> {
    fn rec(
        alphabet: &[(usize, u8)],
        i: usize,
        left: u8,
        acc: &mut Counts,
        out: &mut Vec<RankCounts>,
    ) {
        if i == alphabet.len() {
            if acc.iter().any(|&c| c > 0) {
                out.push(from_counts(acc));
            }
            return;
        }
        let (r, limit) = alphabet[i];
        for k in 0..=limit.min(left) {
            acc[r] = k;
            rec(alphabet, i + 1, left - k, acc, out);
        }
        acc[r] = 0;
    }
    let mut out = Vec::new();
    rec(alphabet, 0, max, &mut [0; 15], &mut out);
    out
}

#[test]
fn classify_agrees_on_every_small_play() {
    // 3 4 5 6 7 (straights, pair chains), A and 2 (the top of sequences, 2 excluded from them),
    // the jokers (wild or natural depending on the rules).
    let alphabet = [
        (0, 6),
        (1, 6),
        (2, 6),
        (3, 6),
        (4, 6),
        (ACE, 6),
        (TWO, 6),
        (SJ, 2),
        (BJ, 2),
    ];
    let mut plays = small_multisets(&alphabet, 6);
    // And every multiset of up to 5 cards over all fifteen ranks.
    let all_ranks: Vec<(usize, u8)> = (0..15).map(|i| (i, if i >= SJ { 2 } else { 5 })).collect();
    plays.extend(small_multisets(&all_ranks, 5));
    plays.sort();
    plays.dedup();
    let mut failures = Failures::default();
    let mut summary = Vec::new();
    for (name, rules) in rule_sets() {
        let mut kinds: BTreeMap<HandType, usize> = BTreeMap::new();
        for &cards in &plays {
            let reference = reference::classify(cards, &rules);
            for h in &reference {
                *kinds.entry(h.kind).or_default() += 1;
            }
            if let Err(e) = check_classify(cards, &rules, &reference) {
                failures.push(format!("[{name}] {e}"));
            }
        }
        summary.push(format!("{name}: {kinds:?}"));
    }
    println!(
        "{} plays × {} rule sets; interpretations found:\n{}",
        plays.len(),
        summary.len(),
        summary.join("\n")
    );
    failures.finish("small plays");
}

/// Every substituted multiset the large combination types can stand for: runs of 1, 2, 3 cards
/// per rank over 3..A (lengths 2..=12, at most 27 cards), bombs of every rank and size 4..=12,
/// and runs of bombs of 2..=6 ranks with group sizes from {4, 5, 8} (at most 27 cards) on windows
/// at the bottom, middle and top of 3..A and on every window through the 2.
fn large_shapes() -> Vec<Counts> {
    let mut shapes = Vec::new();
    for group in 1..=3u8 {
        for start in 0..=ACE {
            for end in start + 1..=ACE {
                if (end - start + 1) * group as usize > 27 {
                    continue;
                }
                let mut t = [0; 15];
                t[start..=end].fill(group);
                shapes.push(t);
            }
        }
    }
    for i in 0..=TWO {
        for k in 4..=12 {
            let mut t = [0; 15];
            t[i] = k;
            shapes.push(t);
        }
    }
    fn runs(window: &[usize], pos: usize, used: u8, t: &mut Counts, out: &mut Vec<Counts>) {
        if pos == window.len() {
            out.push(*t);
            return;
        }
        for k in [4u8, 5, 8] {
            if used + k <= 27 {
                t[window[pos]] = k;
                runs(window, pos + 1, used + k, t, out);
            }
        }
        t[window[pos]] = 0;
    }
    for len in 2..=6usize {
        let plain = [0, 3, ACE + 1 - len];
        for start in 0..13 {
            let window: Vec<usize> = (0..len).map(|k| (start + k) % 13).collect();
            if plain.contains(&start) || window.contains(&TWO) {
                runs(&window, 0, 0, &mut [0; 15], &mut shapes);
            }
        }
    }
    shapes
}

/// Replaces `d` cards of `t` by jokers in every way (which ranks, how many small and big).
fn with_jokers(t: &Counts, d: u8, out: &mut BTreeSet<RankCounts>) {
    fn rec(t: &Counts, i: usize, d: u8, s: &mut Counts, out: &mut BTreeSet<RankCounts>, k: u8) {
        if i > TWO {
            if d == 0 {
                for small in 0..=k.min(2) {
                    let big = k - small;
                    if big <= 2 {
                        let mut c = *s;
                        c[SJ] += small;
                        c[BJ] += big;
                        if c.iter()
                            .enumerate()
                            .all(|(r, &n)| n <= if r >= SJ { 2 } else { 8 })
                        {
                            out.insert(from_counts(&c));
                        }
                    }
                }
            }
            return;
        }
        for take in 0..=t[i].min(d) {
            s[i] = t[i] - take;
            rec(t, i + 1, d - take, s, out, k);
        }
        s[i] = t[i];
    }
    let mut s = *t;
    rec(t, 0, d, &mut s, out, d);
}

#[test]
fn classify_agrees_on_large_shapes_and_their_neighbours() {
    let shapes = large_shapes();
    let mut plays: BTreeSet<RankCounts> = BTreeSet::new();
    for t in &shapes {
        let size: u8 = t.iter().sum();
        // The shape with one card replaced by a joker in every way, two cards for the smaller
        // shapes.
        let mut base = BTreeSet::new();
        with_jokers(t, 0, &mut base);
        with_jokers(t, 1, &mut base);
        if size <= 12 {
            with_jokers(t, 2, &mut base);
        }
        // Neighbours: one card more or less (any rank, jokers included).
        let mut near = BTreeSet::new();
        for &p in base
            .iter()
            .filter(|p| size <= 16 || p.get(Rank::BIG_JOKER) + p.get(Rank::SMALL_JOKER) == 0)
        {
            for r in Rank::all() {
                if p.get(r) > 0 {
                    near.insert(p.with(r, p.get(r) - 1));
                }
                if p.get(r) < r.copies() && p.total() < 27 {
                    near.insert(p.with(r, p.get(r) + 1));
                }
            }
        }
        plays.extend(base);
        plays.extend(near);
    }
    plays.retain(|p| !p.is_empty());
    let sets = rule_sets();
    // Default run: each play under five of the rule sets (rotating); thorough: under all.
    let per_play = if reference::thorough() { sets.len() } else { 5 };
    let mut failures = Failures::default();
    let mut checked = 0usize;
    let start = std::time::Instant::now();
    for (i, &cards) in plays.iter().enumerate() {
        for k in 0..per_play {
            let (name, rules) = &sets[(i + k * 3) % sets.len()];
            checked += 1;
            let reference = reference::classify(cards, rules);
            if let Err(e) = check_classify(cards, rules, &reference) {
                failures.push(format!("[{name}] {e}"));
            }
        }
    }
    println!(
        "{} shapes, {} plays, {checked} classifications checked, {:.1?}",
        shapes.len(),
        plays.len(),
        start.elapsed()
    );
    failures.finish("large plays");
}

/// Expected classification: type, card count, key (`""` for 三王 / 天王), stars; `None` for invalid.
type Expected = Option<(HandType, u8, &'static str, Option<u8>)>;

/// The examples of docs/rules/RULES.md §3.3 and docs/rules/VECTORS.md part A, through the reference: the reference
/// itself must read the rules as the vectors do (a check on the checker).
#[test]
fn reference_reads_the_rule_vectors() {
    let cyclic = Rules {
        cyclic_chain_bombs: true,
        ..Rules::BAIBIAN
    };
    let cases: &[(&Rules, &str, Expected)] = &[
        (
            &Rules::CLASSIC,
            "3 4 5 6 7",
            Some((HandType::Straight, 5, "7", None)),
        ),
        (&Rules::CLASSIC, "J Q K A 2", None),
        (&Rules::CLASSIC, "A 2 3 4 5", None),
        (&Rules::CLASSIC, "3 3 4 4", None),
        (&Rules::CLASSIC, "3 3 3 4 4", None),
        (
            &Rules::CLASSIC,
            "SJ SJ",
            Some((HandType::Pair, 2, "SJ", None)),
        ),
        (&Rules::CLASSIC, "SJ BJ", None),
        (&Rules::CLASSIC, "SJ SJ BJ", None),
        (
            &Rules::CLASSIC,
            "SJ SJ BJ BJ",
            Some((HandType::FourJokers, 4, "", None)),
        ),
        (&Rules::CLASSIC, "3 3 3 3 4 4 4 4 5 5 5 5", None),
        (&Rules::CLASSIC, "3 4 5 6 BJ", None),
        (
            &Rules::BAIBIAN,
            "7 7 7 7 BJ",
            Some((HandType::Bomb, 5, "7", Some(5))),
        ),
        (
            &Rules::BAIBIAN,
            "4 5 6 7 8 BJ",
            Some((HandType::Straight, 6, "9", None)),
        ),
        (
            &Rules::BAIBIAN,
            "7 7 8 9 9 BJ",
            Some((HandType::PairChain, 6, "9", None)),
        ),
        (
            &Rules::BAIBIAN,
            "7 7 8 9 BJ BJ",
            Some((HandType::PairChain, 6, "9", None)),
        ),
        (
            &Rules::BAIBIAN,
            "5 6 7 8 9 BJ",
            Some((HandType::Straight, 6, "T", None)),
        ),
        (
            &Rules::BAIBIAN,
            "T J Q K A BJ",
            Some((HandType::Straight, 6, "A", None)),
        ),
        (
            &Rules::BAIBIAN,
            "BJ",
            Some((HandType::Single, 1, "BJ", None)),
        ),
        (
            &Rules::BAIBIAN,
            "BJ BJ",
            Some((HandType::Pair, 2, "BJ", None)),
        ),
        (
            &Rules::BAIBIAN,
            "SJ BJ",
            Some((HandType::Pair, 2, "SJ", None)),
        ),
        (&Rules::BAIBIAN, "SJ 3 4 5 6", None),
        (
            &Rules::QIANBIAN,
            "SJ 3 4 5 6",
            Some((HandType::Straight, 5, "7", None)),
        ),
        (
            &Rules::BAIBIAN,
            "SJ SJ BJ",
            Some((HandType::ThreeJokers, 3, "", Some(6))),
        ),
        (
            &Rules::BAIBIAN,
            "SJ BJ BJ",
            Some((HandType::ThreeJokers, 3, "", Some(6))),
        ),
        (
            &Rules::BAIBIAN,
            "SJ SJ BJ BJ",
            Some((HandType::FourJokers, 4, "", Some(7))),
        ),
        (
            &Rules::BAIBIAN,
            "7 7 7 7 7 8 8 8 8 8 9 9 9 9 9",
            Some((HandType::ChainBomb, 15, "9", Some(8))),
        ),
        (
            &Rules::BAIBIAN,
            "3 3 3 3 4 4 4 4 5 5 5 5 6 6 6 6 7 7 7 7 8 8 8 8",
            Some((HandType::ChainBomb, 24, "8", Some(10))),
        ),
        (&Rules::BAIBIAN, "3 3 3 3 4 4 4 4", None),
        (&Rules::BAIBIAN, "3 3 3 3 4 4 4 4 5 5 5 5 5", None),
        (
            &Rules::QIANBIAN,
            "3 3 3 3 4 4 4 4 4 5 5 5 5 5 5",
            Some((HandType::ChainBomb, 15, "5", Some(7))),
        ),
        (
            &Rules::ERREN,
            "3 3 3 3 3 4 4 4 4 4 4 5 5 5 5 5",
            Some((HandType::ChainBomb, 16, "5", Some(8))),
        ),
        (
            &Rules::QIANBIAN,
            "3 3 3 3 4 4 4 4 5 5 5 5 5 5 5 5",
            Some((HandType::ChainBomb, 16, "5", Some(8))),
        ),
        (
            &Rules::ERREN,
            "4 4 4 BJ",
            Some((HandType::Bomb, 4, "4", Some(4))),
        ),
        (
            &Rules::ERREN,
            "4 4 4 4 4 4 4 4 BJ",
            Some((HandType::Bomb, 9, "4", Some(9))),
        ),
        (
            &Rules::ERREN,
            "3 3 3 3 4 4 4 4 5 5 5 BJ",
            Some((HandType::ChainBomb, 12, "5", Some(7))),
        ),
        (
            &Rules::ERREN,
            "3 3 4 4 5 BJ",
            Some((HandType::PairChain, 6, "5", None)),
        ),
        (
            &Rules::ERREN,
            "5 6 7 9 BJ",
            Some((HandType::Straight, 5, "9", None)),
        ),
        (&Rules::ERREN, "3 3 4 4 BJ", None),
        (
            &Rules::ERREN,
            "5 6 7 8 BJ",
            Some((HandType::Straight, 5, "9", None)),
        ),
        (&Rules::BAIBIAN, "K K K K A A A A 2 2 2 2", None),
        (
            &cyclic,
            "K K K K A A A A 2 2 2 2",
            Some((HandType::ChainBomb, 12, "2", Some(7))),
        ),
        (
            &cyclic,
            "A A A A 2 2 2 2 3 3 3 3",
            Some((HandType::ChainBomb, 12, "3", Some(7))),
        ),
        (
            &Rules::BAIBIAN,
            "2 2 2 BJ",
            Some((HandType::Bomb, 4, "2", Some(4))),
        ),
        (
            &Rules::BAIBIAN,
            "8 8 8 8 8 8 8 8 BJ BJ",
            Some((HandType::Bomb, 10, "8", Some(10))),
        ),
        (
            &Rules::QIANBIAN,
            "3 3 SJ BJ",
            Some((HandType::Bomb, 4, "3", Some(4))),
        ),
    ];
    for &(rules, cards, expected) in cases {
        let got = reference::classify(parse(cards), rules);
        match expected {
            None => assert!(got.is_empty(), "{cards}: expected invalid, got {got:?}"),
            Some((kind, len, key, stars)) => {
                assert_eq!(got.len(), 1, "{cards}: {got:?}");
                let h = &got[0];
                let key = (!key.is_empty()).then(|| key.parse::<Rank>().unwrap());
                assert_eq!(
                    (h.kind, h.len, h.key, h.stars),
                    (kind, len, key, stars),
                    "{cards}"
                );
            }
        }
    }
    // V62: 千變 3 wilds + 3 4 5 is a straight 3–8 or a pair chain 3–5.
    let got = reference::classify(parse("3 4 5 SJ BJ BJ"), &Rules::QIANBIAN);
    let kinds: Vec<_> = got.iter().map(|h| (h.kind, h.key)).collect();
    assert_eq!(
        kinds,
        vec![
            (HandType::Straight, Some(Rank::EIGHT)),
            (HandType::PairChain, Some(Rank::FIVE))
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Enumeration
// ---------------------------------------------------------------------------------------------

fn play_ids(plays: &[Play]) -> BTreeSet<PlayId> {
    plays.iter().map(|p| (p.cards, p.hand.kind)).collect()
}

fn describe(ids: &BTreeSet<PlayId>, limit: usize) -> String {
    let mut v: Vec<String> = ids
        .iter()
        .take(limit)
        .map(|(c, k)| format!("{k} [{c}]"))
        .collect();
    if ids.len() > limit {
        v.push(format!("… {} more", ids.len() - limit));
    }
    v.join(", ")
}

/// Checks what any list from `legal_plays` must satisfy: sub-multisets of the hand, each play's
/// interpretation one of `classify::classify`'s for its cards (and agreeing with the reference),
/// beats `previous`, no duplicates, weakest first (then fewer wild jokers).
fn check_list(
    hand: RankCounts,
    previous: Option<&Hand>,
    plays: &[Play],
    reference: &mut Reference,
    checked: &mut BTreeSet<RankCounts>,
) -> Result<(), String> {
    let rules = reference.rules;
    let mut errors = Vec::new();
    let ids = play_ids(plays);
    if ids.len() != plays.len() {
        errors.push(format!("{} duplicate plays", plays.len() - ids.len()));
    }
    for p in plays {
        if !p.cards.is_subset(hand) {
            errors.push(format!("[{}] is not in the hand", p.cards));
        }
        if !classify::classify(p.cards, &rules).contains(&p.hand) {
            errors.push(format!(
                "{} [{}] is not an interpretation classify gives: {:?}",
                p.hand.kind, p.cards, p.hand
            ));
        }
        if let Some(prev) = previous {
            if !compare::beats(prev, &p.hand, &rules) {
                errors.push(format!(
                    "{} [{}] does not beat the previous play",
                    p.hand.kind, p.cards
                ));
            }
        }
        if checked.insert(p.cards) {
            let r = reference.classify(p.cards);
            if let Err(e) = check_classify(p.cards, &rules, &r) {
                errors.push(e);
            }
        }
    }
    let keys: Vec<_> = plays
        .iter()
        .map(|p| (compare::order_key(&p.hand, &rules), p.hand.wilds.len()))
        .collect();
    if let Some(i) = keys.windows(2).position(|w| w[0] > w[1]) {
        errors.push(format!(
            "not weakest first at {i}: {:?} [{}] before {:?} [{}]",
            plays[i].hand.kind,
            plays[i].cards,
            plays[i + 1].hand.kind,
            plays[i + 1].cards
        ));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        errors.truncate(6);
        Err(errors.join("\n  "))
    }
}

/// Compares a fast play set with the expected one.
fn compare_sets(fast: &BTreeSet<PlayId>, expected: &BTreeSet<PlayId>) -> Result<(), String> {
    if fast == expected {
        return Ok(());
    }
    let missing: BTreeSet<PlayId> = expected.difference(fast).copied().collect();
    let extra: BTreeSet<PlayId> = fast.difference(expected).copied().collect();
    Err(format!(
        "missing from legal_plays ({}): {}\n  not legal but returned ({}): {}",
        missing.len(),
        describe(&missing, 8),
        extra.len(),
        describe(&extra, 8)
    ))
}

/// Settings of one enumeration run.
struct Run {
    uniform_deals: u64,
    stacked_hands: u64,
    /// Brute force over sub-multisets up to this many cards ...
    brute_max: u32,
    /// ... on every this-many-th hand.
    brute_every: u64,
    follows_per_hand: usize,
}

impl Run {
    fn get() -> Run {
        if reference::thorough() {
            Run {
                uniform_deals: 800,
                stacked_hands: 200,
                brute_max: 6,
                brute_every: 4,
                follows_per_hand: 12,
            }
        } else {
            Run {
                uniform_deals: 60,
                stacked_hands: 12,
                brute_max: 4,
                brute_every: 3,
                follows_per_hand: 6,
            }
        }
    }
}

/// One hand: leads and follows against the reference. `others` are hands whose leads serve as
/// previous plays.
fn check_hand(
    hand: RankCounts,
    others: &[RankCounts],
    rng: &mut ChaCha8Rng,
    brute_max: Option<u32>,
    follows: usize,
    reference: &mut Reference,
    checked: &mut BTreeSet<RankCounts>,
) -> Result<usize, String> {
    let rules = reference.rules;
    let fast = moves::legal_plays(hand, None, &rules);
    check_list(hand, None, &fast, reference, checked).map_err(|e| format!("leads: {e}"))?;
    let fast_ids = play_ids(&fast);
    let lead_plays = reference.lead_plays(hand);
    let expected: BTreeSet<PlayId> = lead_plays.keys().copied().collect();
    compare_sets(&fast_ids, &expected).map_err(|e| format!("leads: {e}"))?;
    let mut compared = fast.len();

    if let Some(max) = brute_max {
        let brute = reference.brute_force_plays(hand, max);
        let small = |s: &BTreeSet<PlayId>| -> BTreeSet<PlayId> {
            s.iter()
                .filter(|(c, _)| c.total() <= max)
                .copied()
                .collect()
        };
        compare_sets(&small(&expected), &brute)
            .map_err(|e| format!("REFERENCE GENERATOR vs brute force ≤ {max} cards: {e}"))?;
        compare_sets(&small(&fast_ids), &brute)
            .map_err(|e| format!("leads vs brute force ≤ {max} cards: {e}"))?;
    }

    // Follows: previous plays from other hands' lead lists (uniformly, plus one bomb).
    let mut previous: Vec<Hand> = Vec::new();
    for _ in 0..follows {
        let other = others.choose(rng).copied().unwrap_or(hand);
        let leads = moves::legal_plays(other, None, &rules);
        if let Some(p) = leads.choose(rng) {
            previous.push(p.hand);
        }
        let bombs: Vec<&Play> = leads.iter().filter(|p| p.hand.is_bomb()).collect();
        if rng.random_bool(0.3) {
            if let Some(p) = bombs.choose(rng) {
                previous.push(p.hand);
            }
        }
    }
    for prev in &previous {
        let what = || {
            format!(
                "following {} len {} key {:?} stars {:?}",
                prev.kind,
                prev.len,
                prev.key(),
                prev.stars
            )
        };
        let fast = moves::legal_plays(hand, Some(prev), &rules);
        check_list(hand, Some(prev), &fast, reference, checked)
            .map_err(|e| format!("{}: {e}", what()))?;
        let expected: BTreeSet<PlayId> = lead_plays
            .iter()
            .filter(|(_, h)| ref_beats(prev, h, &rules))
            .map(|(id, _)| *id)
            .collect();
        compare_sets(&play_ids(&fast), &expected).map_err(|e| format!("{}: {e}", what()))?;
        compared += fast.len();
    }
    Ok(compared)
}

fn enumeration_run(name: &str) {
    let (_, rules) = rule_sets()
        .into_iter()
        .find(|(n, _)| n == name)
        .expect("rule set");
    let mut run = Run::get();
    // Variants with at most two wild jokers are cheap: three times the hands in the default run.
    if rules.wild_jokers != WildJokers::All && !reference::thorough() {
        run.uniform_deals *= 3;
        run.stacked_hands *= 3;
    }
    let players = rules.players as usize;
    let mut reference = Reference::new(rules);
    let mut checked = BTreeSet::new();
    let mut failures = Failures::default();
    let mut hands = 0u64;
    let mut plays = 0usize;
    let start = std::time::Instant::now();
    let name_salt = name
        .bytes()
        .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
    for i in 0..run.uniform_deals + run.stacked_hands {
        let seed = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ name_salt;
        let (hand, others, kind) = if i < run.uniform_deals {
            let deal: Vec<RankCounts> = reference::deal(seed, players)
                .iter()
                .map(|s| s.rank_counts())
                .collect();
            (deal[0], deal[1..].to_vec(), "deal")
        } else {
            let others = reference::deal(seed, players)[1..]
                .iter()
                .map(|s| s.rank_counts())
                .chain([reference::stacked_hand(seed.wrapping_add(1))])
                .collect();
            (reference::stacked_hand(seed), others, "stacked hand")
        };
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let brute = (i % run.brute_every == 0).then_some(run.brute_max);
        hands += 1;
        match check_hand(
            hand,
            &others,
            &mut rng,
            brute,
            run.follows_per_hand,
            &mut reference,
            &mut checked,
        ) {
            Ok(n) => plays += n,
            Err(e) => failures.push(format!(
                "[{name}] {kind} seed {seed:#x} (i = {i}), hand [{hand}]:\n  {e}"
            )),
        }
    }
    println!(
        "[{name}] {hands} hands, {plays} fast plays compared, {} distinct plays classified, {:.1?}",
        checked.len(),
        start.elapsed()
    );
    failures.finish(&format!("enumeration under {name}"));
}

#[test]
fn enumeration_classic() {
    enumeration_run("classic");
}

#[test]
fn enumeration_baibian() {
    enumeration_run("baibian");
}

#[test]
fn enumeration_huopin() {
    enumeration_run("huopin");
}

#[test]
fn enumeration_qianbian() {
    enumeration_run("qianbian");
}

#[test]
fn enumeration_erren() {
    enumeration_run("erren");
}

#[test]
fn enumeration_baibian_cyclic() {
    enumeration_run("baibian+cyclic");
}

#[test]
fn enumeration_qianbian_options() {
    enumeration_run("qianbian+cyclic+larger_group+tianwang_max_of_8");
}

#[test]
fn enumeration_erren_options() {
    enumeration_run("erren+min_plus_links+min_naturals_2+tianwang_above_all");
}

/// Following a bomb under S1's note 「線數一樣,誰先出誰大」: no bomb of the same star level is offered.
#[test]
fn enumeration_huopin_first_stands() {
    enumeration_run("huopin+first_stands");
}

#[test]
fn enumeration_jj_options() {
    enumeration_run("jj+larger_group+no_bj_as_sj");
}

/// A hand with all four jokers and long runs: the most wild combinations a hand can have.
#[test]
fn enumeration_four_wilds() {
    let hands = [
        "3 3 3 3 4 4 4 4 5 5 5 6 6 7 8 9 T J Q K A 2 2 SJ SJ BJ BJ",
        "Q Q Q Q K K K K A A A A 2 2 2 2 3 3 3 3 4 5 6 SJ SJ BJ BJ",
        "3 4 5 6 7 8 9 T J Q K A 3 4 5 6 7 8 9 T J Q K SJ SJ BJ BJ",
    ];
    // The third hand has ~24 000 plays under 千變 rules: thorough runs only.
    let count = if reference::thorough() { 3 } else { 2 };
    let mut failures = Failures::default();
    for (name, rules) in rule_sets() {
        let mut reference = Reference::new(rules);
        let mut checked = BTreeSet::new();
        for (i, text) in hands.iter().enumerate().take(count) {
            let hand = parse(text);
            let others = [parse(hands[(i + 1) % hands.len()])];
            let mut rng = ChaCha8Rng::seed_from_u64(i as u64);
            if let Err(e) = check_hand(
                hand,
                &others,
                &mut rng,
                Some(3),
                8,
                &mut reference,
                &mut checked,
            ) {
                failures.push(format!("[{name}] hand [{hand}]:\n  {e}"));
            }
        }
    }
    failures.finish("four-wild hands");
}

/// The reference enumerator finds the same plays as a brute force over every sub-multiset of a
/// small hand (all sizes), so its generator is exact where the brute force is affordable.
#[test]
fn reference_generator_equals_full_brute_force_on_small_hands() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let deck: Vec<Rank> = RankCounts::FULL.ranks().collect();
    for (name, rules) in rule_sets() {
        let mut reference = Reference::new(rules);
        for _ in 0..30 {
            let size = rng.random_range(1..=12usize);
            let mut ranks: Vec<Rank> = deck.choose_multiple(&mut rng, size).copied().collect();
            if rng.random_bool(0.5) {
                ranks.extend([Rank::BIG_JOKER, Rank::SMALL_JOKER]);
            }
            let Ok(hand) = RankCounts::from_ranks(ranks) else {
                continue;
            };
            let generated: BTreeSet<PlayId> = reference.lead_plays(hand).keys().copied().collect();
            let brute = reference.brute_force_plays(hand, u32::MAX);
            assert_eq!(generated, brute, "[{name}] hand [{hand}]");
        }
    }
}
