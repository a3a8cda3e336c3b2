//! An independent reference for `bombs::in_hand`, the best arrangement of the bombs left in a
//! hand (S2 "手中牌貢獻分按最大計算"), which feeds the settlements' 貢獻分 and escape penalties.
//!
//! The reference is the definition itself, by brute force: the best value of a hand is the
//! largest of "no bomb" and, over every sub-multiset that `classify::classify` reads as a bomb, that
//! bomb's value plus the best value of the rest — every way of cutting disjoint bombs out of the
//! hand, memoised on the multiset. It shares neither the search order (lowest rank first) nor the
//! candidate enumeration (`moves::legal_plays`) of the code under test. A bomb's value is
//! 2^stars under a star system and 2^cards under the classic order with 天王 counted as 9 cards
//! (the module's documented objective).
//!
//! Hands are small (at most a few thousand sub-multisets) and seeded; a failure prints the rule
//! set, the seed and the hand.

use std::collections::HashMap;

use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shuangkou::cards::{Rank, RankCounts};
use shuangkou::classify;
use shuangkou::game::bombs;
use shuangkou::hand::{Hand, HandType};
use shuangkou::rules::Rules;
use shuangkou::seat::Seat;

fn value(h: &Hand, rules: &Rules) -> u64 {
    let exp = if rules.has_stars() {
        h.stars.expect("a bomb under a star system has stars")
    } else if h.kind == HandType::FourJokers {
        9
    } else {
        h.len
    };
    1u64 << exp
}

/// 貢獻分 of one 二人 bomb of `stars`相 in units, from docs/rules/RULES.md §6.5 alone ("6相 2,
/// 7相 4, 8相 8 … 12相 128", S2 "12相封頂") with the start and the cap as options (erren's
/// `contribution_from_xiang`, `cap_xiang`): `from`相 earns 2, each 相 more doubles it, levels
/// above `cap` earn what `cap` earns; below `from` (and a cap below the start) nothing.
fn erren_units(stars: u8, from: u8, cap: u8) -> u64 {
    let top = stars.min(cap);
    if stars < from || top < from {
        0
    } else {
        2u64 << (top - from)
    }
}

/// What a bomb is worth in a search: (what the variant pays for it, its size 2^stars). Sums of
/// such pairs compare by the first, then the second, as the engine's objective does.
type Pair = (u64, u64);

/// The best value of one bomb made of exactly `cards`, if they form one.
fn bomb_value(cards: RankCounts, rules: &Rules, pays: &dyn Fn(&Hand) -> Pair) -> Option<Pair> {
    classify::classify(cards, rules)
        .iter()
        .filter(|h| h.is_bomb())
        .map(pays)
        .max()
}

/// Every non-empty sub-multiset of `hand` (odometer over the ranks' counts).
fn sub_multisets(hand: RankCounts) -> Vec<RankCounts> {
    let ranks: Vec<(Rank, u8)> = hand.iter().collect();
    let mut counts = vec![0u8; ranks.len()];
    let mut out = Vec::new();
    loop {
        let mut i = 0;
        loop {
            if i == ranks.len() {
                return out;
            }
            if counts[i] < ranks[i].1 {
                counts[i] += 1;
                break;
            }
            counts[i] = 0;
            i += 1;
        }
        let mut s = RankCounts::EMPTY;
        for (k, &(r, _)) in ranks.iter().enumerate() {
            s = s.with(r, counts[k]);
        }
        out.push(s);
    }
}

struct Brute<'a> {
    rules: &'a Rules,
    pays: &'a dyn Fn(&Hand) -> Pair,
    bomb: HashMap<u64, Option<Pair>>,
    best: HashMap<u64, Pair>,
}

impl<'a> Brute<'a> {
    fn new(rules: &'a Rules, pays: &'a dyn Fn(&Hand) -> Pair) -> Brute<'a> {
        Brute {
            rules,
            pays,
            bomb: HashMap::new(),
            best: HashMap::new(),
        }
    }

    fn best(&mut self, hand: RankCounts) -> Pair {
        if let Some(&v) = self.best.get(&hand.bits()) {
            return v;
        }
        let mut best = (0, 0);
        for s in sub_multisets(hand) {
            let (rules, pays) = (self.rules, self.pays);
            let Some(v) = *self
                .bomb
                .entry(s.bits())
                .or_insert_with(|| bomb_value(s, rules, pays))
            else {
                continue;
            };
            let rest = hand.minus(s).expect("a sub-multiset");
            let r = self.best(rest);
            best = best.max((v.0 + r.0, v.1 + r.1));
        }
        self.best.insert(hand.bits(), best);
        best
    }
}

fn size(hand: RankCounts) -> u64 {
    hand.iter().map(|(_, n)| u64::from(n) + 1).product()
}

/// A seeded bomb-heavy small hand: a run of 1–4 consecutive ranks with 2–6 copies each, 0–4
/// jokers, and a few random cards, within the decks' copies and at most `max_subsets`
/// sub-multisets.
fn small_hand(rng: &mut ChaCha8Rng, max_subsets: u64) -> RankCounts {
    let mut hand = RankCounts::EMPTY;
    let add = |hand: &mut RankCounts, r: Rank| {
        if hand.get(r) < r.copies() && size(hand.with(r, hand.get(r) + 1)) <= max_subsets {
            hand.add(r, 1);
        }
    };
    let links = rng.random_range(1..=4u8);
    let start = rng.random_range(0..13u8);
    for k in 0..links {
        let r = Rank::from_index((start + k) % 13).expect("a suited rank");
        for _ in 0..rng.random_range(2..=6) {
            add(&mut hand, r);
        }
    }
    for _ in 0..rng.random_range(0..=4) {
        let j = *[Rank::SMALL_JOKER, Rank::BIG_JOKER]
            .choose(rng)
            .expect("two jokers");
        add(&mut hand, j);
    }
    for _ in 0..rng.random_range(0..=3) {
        let r = Rank::from_index(rng.random_range(0..15)).expect("a rank");
        add(&mut hand, r);
    }
    hand
}

#[test]
fn in_hand_is_the_best_arrangement_over_all_partitions() {
    let mut checked = 0usize;
    let mut with_bombs = 0usize;
    for id in Rules::PRESET_IDS {
        let rules = Rules::preset(id).expect("preset");
        // Also the options that change bombs: cyclic chain bombs through the 2 (百變 family).
        let variants = if rules.has_stars() {
            let mut cyclic = rules;
            cyclic.cyclic_chain_bombs = true;
            vec![(id.to_string(), rules), (format!("{id}+cyclic"), cyclic)]
        } else {
            vec![(id.to_string(), rules)]
        };
        for (name, rules) in variants {
            let size_only = |h: &Hand| (0, value(h, &rules));
            let mut brute = Brute::new(&rules, &size_only);
            for seed in 0..120u64 {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let hand = small_hand(&mut rng, 1_500);
                let want = brute.best(hand).1;
                let got = bombs::in_hand(hand, Seat::new(1), &rules, None);
                let why = format!("[{name}] seed {seed} hand {hand}: {got:?}");
                let mut used = RankCounts::EMPTY;
                let mut total = 0u64;
                for b in &got {
                    assert_eq!(b.seat, Seat::new(1), "{why}");
                    used = used.plus(b.cards);
                    // Each fact is one of the classifier's bomb readings of its cards.
                    let h = classify::classify(b.cards, &rules)
                        .into_iter()
                        .filter(|h| h.is_bomb())
                        .find(|h| h.kind == b.kind && h.stars == b.stars && h.len == b.len)
                        .unwrap_or_else(|| panic!("{why}: {} is not such a bomb", b.cards));
                    total += value(&h, &rules);
                }
                assert!(
                    used.is_subset(hand),
                    "{why}: bombs overlap or exceed the hand"
                );
                assert_eq!(total, want, "{why}: value {total}, best is {want}");
                checked += 1;
                with_bombs += usize::from(want > 0);
            }
        }
    }
    // The sample is not vacuous: most hands hold bombs.
    assert!(
        with_bombs * 2 > checked,
        "{with_bombs} of {checked} hands hold bombs"
    );
}

/// The 二人 hands of the issue, by hand (docs/rules/RULES.md §6.5, "手中牌貢獻分按最大計算"):
/// the engine's arrangement under the contribution the options pay.
#[test]
fn erren_in_hand_arrangement_follows_the_options_by_hand() {
    let rules = Rules::ERREN;
    let units = |hand: &str, from: u8, cap: u8| -> u64 {
        let worth: Vec<u64> = (0..=24).map(|s| erren_units(s, from, cap)).collect();
        bombs::in_hand(hand.parse().unwrap(), Seat::new(1), &rules, Some(&worth))
            .iter()
            .map(|b| erren_units(b.stars.unwrap(), from, cap))
            .sum()
    };
    // From 5相: 8 8 8 8 + SJ + 9 9 9 → 8 8 8 8 8 (5相: 2 units), not 8 8 8 8 + 9 9 9 9 (4相 + 4相:
    // nothing), though both make Σ 2^stars = 32.
    assert_eq!(units("8 8 8 8 9 9 9 SJ", 5, 12), 2);
    // Cap 10: 8×8 9×8 + 4 jokers → 10相 + 10相 (32 + 32 units), not 8相 + 12相 (8 + 32, the
    // largest Σ 2^stars) nor 9相 + 11相 (16 + 32).
    let hand = "8 8 8 8 8 8 8 8 9 9 9 9 9 9 9 9 SJ SJ BJ BJ";
    assert_eq!(units(hand, 6, 10), 64);
    // Without the cap, 8相 + 12相 (8 + 128) is the most.
    assert_eq!(units(hand, 6, 12), 136);
}

/// The brute force of the first test, scored by the 二人 contribution rule (`erren_units`, from
/// the rules text) under random `contribution_from_xiang` / `cap_xiang`: the engine's arrangement,
/// given the same rule as its worth table, pays the most any arrangement pays (and, among those,
/// is as large by Σ 2^stars). Hands are bomb-heavy with 0–4 wild jokers.
#[test]
fn erren_in_hand_arrangement_pays_the_most_under_random_options() {
    let rules = Rules::ERREN;
    let mut differs = 0usize;
    for seed in 0..160u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(1_000 + seed);
        let from = rng.random_range(4..=8u8);
        let cap = rng.random_range(6..=12u8);
        let hand = small_hand(&mut rng, 1_500);
        let worth: Vec<u64> = (0..=24).map(|s| erren_units(s, from, cap)).collect();
        let pays = |h: &Hand| {
            let s = h.stars.expect("二人 bombs have stars");
            (erren_units(s, from, cap), 1u64 << s)
        };
        let want = Brute::new(&rules, &pays).best(hand);
        let got = bombs::in_hand(hand, Seat::new(0), &rules, Some(&worth));
        let why = format!("seed {seed} from {from} cap {cap} hand {hand}: {got:?}");
        let mut used = RankCounts::EMPTY;
        let mut total = (0u64, 0u64);
        for b in &got {
            used = used.plus(b.cards);
            let h = classify::classify(b.cards, &rules)
                .into_iter()
                .filter(|h| h.is_bomb())
                .find(|h| h.kind == b.kind && h.stars == b.stars && h.len == b.len)
                .unwrap_or_else(|| panic!("{why}: {} is not such a bomb", b.cards));
            let v = pays(&h);
            total = (total.0 + v.0, total.1 + v.1);
        }
        assert!(
            used.is_subset(hand),
            "{why}: bombs overlap or exceed the hand"
        );
        assert_eq!(total, want, "{why}: paid {total:?}, best is {want:?}");
        // How often the options change the answer from the largest Σ 2^stars.
        let size_pick: u64 = bombs::in_hand(hand, Seat::new(0), &rules, None)
            .iter()
            .map(|b| erren_units(b.stars.unwrap(), from, cap))
            .sum();
        differs += usize::from(size_pick < want.0);
    }
    // The sample exercises the difference: some hands pay more arranged by the options.
    assert!(
        differs > 0,
        "no hand where the options change the arrangement"
    );
}
