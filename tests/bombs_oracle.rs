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

/// The best value of one bomb made of exactly `cards`, if they form one.
fn bomb_value(cards: RankCounts, rules: &Rules) -> Option<u64> {
    classify::classify(cards, rules)
        .iter()
        .filter(|h| h.is_bomb())
        .map(|h| value(h, rules))
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
    bomb: HashMap<u64, Option<u64>>,
    best: HashMap<u64, u64>,
}

impl Brute<'_> {
    fn best(&mut self, hand: RankCounts) -> u64 {
        if let Some(&v) = self.best.get(&hand.bits()) {
            return v;
        }
        let mut best = 0;
        for s in sub_multisets(hand) {
            let rules = self.rules;
            let Some(v) = *self
                .bomb
                .entry(s.bits())
                .or_insert_with(|| bomb_value(s, rules))
            else {
                continue;
            };
            let rest = hand.minus(s).expect("a sub-multiset");
            best = best.max(v + self.best(rest));
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
            let mut brute = Brute {
                rules: &rules,
                bomb: HashMap::new(),
                best: HashMap::new(),
            };
            for seed in 0..120u64 {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let hand = small_hand(&mut rng, 1_500);
                let want = brute.best(hand);
                let got = bombs::in_hand(hand, Seat::new(1), &rules);
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
