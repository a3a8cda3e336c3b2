//! Property tests (proptest) of the rules core: classification is a function of the ranks only,
//! `beats` is a strict partial order consistent with the sort order, and the legal-play
//! enumerator returns only legal, distinct, correctly ordered plays that beat what they follow.
//!
//! Every property runs under every rule set of `reference::rule_sets()` (the six presets and
//! variants with the options no preset uses); the rule set is part of the generated case, so a
//! failure report names it.

pub mod reference;

use std::collections::BTreeSet;

use proptest::prelude::*;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use shuangkou::cards::{Card, CardSet, Rank, RankCounts};
use shuangkou::classify;
use shuangkou::compare;
use shuangkou::hand::Hand;
use shuangkou::moves::{self, Play};
use shuangkou::rules::Rules;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        // Keep failure persistence out of the source tree; proptest prints the failing case
        // and its seed.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// A rule set by index into `reference::rule_sets()`.
fn rules_strategy() -> impl Strategy<Value = (String, Rules)> {
    let sets = reference::rule_sets();
    (0..sets.len()).prop_map(move |i| sets[i].clone())
}

/// A multiset of ranks within the two decks: uniformly random ranks, or a stacked run of
/// consecutive ranks (possibly through the 2) with 1..=8 copies each, jokers and a few random
/// cards (bombs, chain bombs, long chains).
fn cards_strategy(max: usize) -> impl Strategy<Value = RankCounts> {
    let uniform = prop::collection::vec(0u8..15, 1..=max).prop_map(|v| v.into_iter().collect());
    let stacked = (
        0usize..13,
        prop::collection::vec(1u8..=8, 1..=5),
        0u8..=2,
        0u8..=2,
        prop::collection::vec(0u8..15, 0..=6),
    )
        .prop_map(|(start, copies, sj, bj, extra)| {
            let mut v = Vec::new();
            for (k, &n) in copies.iter().enumerate() {
                v.extend(std::iter::repeat_n(((start + k) % 13) as u8, n as usize));
            }
            v.extend(std::iter::repeat_n(13, sj as usize));
            v.extend(std::iter::repeat_n(14, bj as usize));
            v.extend(extra);
            v
        });
    prop_oneof![uniform, stacked].prop_map(move |v| {
        // At most `max` cards (the run first) and no more copies of a rank than the decks hold.
        let mut rc = RankCounts::EMPTY;
        for r in v.iter().filter_map(|&i| Rank::from_index(i)) {
            if rc.total() as usize == max {
                break;
            }
            if rc.get(r) < r.copies() {
                rc.add(r, 1);
            }
        }
        rc
    })
}

/// `counts` as physical cards, choosing the copies of each rank with `seed`.
fn physical(counts: RankCounts, seed: u64) -> CardSet {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut set = CardSet::EMPTY;
    for (rank, n) in counts.iter() {
        let mut copies: Vec<Card> = CardSet::FULL.of_rank(rank).iter().collect();
        copies.shuffle(&mut rng);
        for &c in copies.iter().take(n as usize) {
            set.insert(c);
        }
    }
    set
}

/// Every lead of `hand`; the plays of this list serve as sampled plays and previous plays.
fn leads(hand: RankCounts, rules: &Rules) -> Vec<Play> {
    moves::legal_plays(hand, None, rules)
}

proptest! {
    #![proptest_config(config(512))]

    /// Classification ignores card order, suits and deck copies: physical card sets built with
    /// different copies, inserted in different orders, from shuffled ids, or taken out of a
    /// larger hand with `CardSet::take`, all have the same rank counts and classify the same.
    #[test]
    fn classification_ignores_order_suits_and_copies(
        (name, rules) in rules_strategy(),
        cards in cards_strategy(16),
        seeds in any::<(u64, u64, u64)>(),
    ) {
        let expected = classify::classify(cards, &rules);
        let a = physical(cards, seeds.0);
        let b = physical(cards, seeds.1);
        // The same cards as `a`, from ids in a shuffled order.
        let mut ids = a.ids();
        ids.shuffle(&mut ChaCha8Rng::seed_from_u64(seeds.2));
        let c = CardSet::from_ids(&ids).unwrap();
        prop_assert_eq!(c, a);
        // Out of a larger hand: `take` picks some copies; any copies must do.
        let pool = physical(RankCounts::FULL, seeds.2);
        let d = pool.take(cards).unwrap();
        prop_assert!(d.is_subset(pool));
        // Ranks listed in a shuffled order.
        let mut ranks: Vec<Rank> = cards.ranks().collect();
        ranks.shuffle(&mut ChaCha8Rng::seed_from_u64(seeds.0 ^ seeds.1));
        let e = RankCounts::from_ranks(ranks).unwrap();
        for (what, rc) in [
            ("copies a", a.rank_counts()),
            ("copies b", b.rank_counts()),
            ("shuffled ids", c.rank_counts()),
            ("take", d.rank_counts()),
            ("shuffled ranks", e),
        ] {
            prop_assert_eq!(rc, cards, "[{}] {}", name, what);
            prop_assert_eq!(&classify::classify(rc, &rules), &expected, "[{}] {}", name, what);
        }
        // And the reference agrees with the fast classifier on these cards.
        let r = reference::classify(cards, &rules);
        if let Err(e) = reference::check_classify(cards, &rules, &r) {
            prop_assert!(false, "[{}] {}", name, e);
        }
    }

    /// `beats` is irreflexive, antisymmetric and transitive, and agrees with the sort order
    /// (whatever beats a play sorts after it), on triples of plays sampled from hands' leads —
    /// one uniformly, the other two either uniformly or close to it in the sorted list (where
    /// plays of the same type and length are).
    #[test]
    fn beats_is_a_strict_order(
        (name, rules) in rules_strategy(),
        hand_a in cards_strategy(27),
        hand_b in cards_strategy(27),
        picks in any::<(usize, usize, usize)>(),
        near in any::<bool>(),
    ) {
        let mut plays = leads(hand_a, &rules);
        plays.extend(leads(hand_b, &rules));
        plays.sort_by_key(|p| compare::order_key(&p.hand, &rules));
        prop_assume!(!plays.is_empty());
        let n = plays.len();
        let i = picks.0 % n;
        let (j, k) = if near {
            ((i + picks.1 % 4) % n, (i + picks.1 % 4 + picks.2 % 4) % n)
        } else {
            (picks.1 % n, picks.2 % n)
        };
        let (a, b, c) = (&plays[i].hand, &plays[j].hand, &plays[k].hand);
        // `x > y`: x beats y.
        let gt = |x: &Hand, y: &Hand| compare::beats(y, x, &rules);
        for (x, y) in [(a, b), (b, c), (a, c), (b, a), (c, b), (c, a)] {
            prop_assert!(!gt(x, x), "[{}] {:?} beats itself", name, x);
            prop_assert!(!(gt(x, y) && gt(y, x)), "[{}] {:?} and {:?} beat each other", name, x, y);
            if gt(x, y) {
                prop_assert!(
                    compare::order_key(x, &rules) > compare::order_key(y, &rules),
                    "[{}] {:?} beats {:?} but does not sort after it", name, x, y
                );
            }
        }
        for (x, y, z) in [(a, b, c), (a, c, b), (b, a, c), (b, c, a), (c, a, b), (c, b, a)] {
            if gt(x, y) && gt(y, z) {
                prop_assert!(gt(x, z), "[{}] {:?} > {:?} > {:?} but not {:?} > {:?}", name, x, y, z, x, z);
            }
        }
    }

    /// Every enumerated play is a sub-multiset of the hand, one of `classify`'s interpretations of
    /// its cards, and beats the play it follows; the list has no duplicates and is sorted weakest
    /// first (then fewer wild jokers); following gives exactly the leads that beat the previous
    /// play, in the same order.
    #[test]
    fn enumerated_plays_are_legal_distinct_and_sorted(
        (name, rules) in rules_strategy(),
        hand in cards_strategy(27),
        other in cards_strategy(27),
        pick in any::<prop::sample::Index>(),
        follow in any::<bool>(),
    ) {
        let other_leads = leads(other, &rules);
        let previous = if follow && !other_leads.is_empty() {
            Some(other_leads[pick.index(other_leads.len())].hand)
        } else {
            None
        };
        let plays = moves::legal_plays(hand, previous.as_ref(), &rules);
        let mut seen = BTreeSet::new();
        for p in &plays {
            prop_assert!(p.cards.is_subset(hand), "[{}] {:?} not in the hand", name, p);
            prop_assert!(
                classify::classify(p.cards, &rules).contains(&p.hand),
                "[{}] {:?} is not an interpretation of its cards", name, p
            );
            if let Some(prev) = &previous {
                prop_assert!(compare::beats(prev, &p.hand, &rules), "[{}] {:?} does not beat {:?}", name, p, prev);
            }
            prop_assert!(seen.insert((p.cards, p.hand.kind)), "[{}] duplicate {:?}", name, p);
        }
        let keys: Vec<_> = plays
            .iter()
            .map(|p| (compare::order_key(&p.hand, &rules), p.hand.wilds.len()))
            .collect();
        prop_assert!(keys.is_sorted(), "[{}] not weakest first", name);
        if let Some(prev) = &previous {
            let filtered: Vec<Play> = leads(hand, &rules)
                .into_iter()
                .filter(|p| compare::beats(prev, &p.hand, &rules))
                .collect();
            let as_set = |v: &[Play]| v.iter().map(|p| (p.cards, p.hand.kind)).collect::<BTreeSet<_>>();
            prop_assert_eq!(as_set(&plays), as_set(&filtered), "[{}] follows differ from the beating leads", name);
        }
    }
}

/// Transitivity with a count: the proptest above checks the law only on the triples that happen
/// to form a chain `x > y > z`; here seeded 27-card hands give sorted leads, and neighbouring
/// triples (where chains occur: the same type and length, and bombs) are checked until every rule
/// set has met at least `MIN_CHAINS` chains and `MIN_BOMB_CHAINS` chains of three bombs, so a law that never ran cannot pass.
#[test]
fn beats_is_transitive_on_counted_chains() {
    const MIN_CHAINS: usize = 2_000;
    const MIN_BOMB_CHAINS: usize = 200;
    let deck: Vec<Rank> = RankCounts::FULL
        .iter()
        .flat_map(|(r, n)| std::iter::repeat_n(r, n as usize))
        .collect();
    for (name, rules) in reference::rule_sets() {
        let (mut chains, mut bomb_chains) = (0usize, 0usize);
        let mut seed = 0u64;
        while chains < MIN_CHAINS || bomb_chains < MIN_BOMB_CHAINS {
            assert!(
                seed < 400,
                "[{name}] only {chains} chains ({bomb_chains} of bombs) in {seed} seeds"
            );
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut d = deck.clone();
            d.shuffle(&mut rng);
            let mut plays = Vec::new();
            for h in d.chunks(27).take(2) {
                let hand = RankCounts::from_ranks(h.iter().copied()).expect("a hand of the decks");
                plays.extend(leads(hand, &rules));
            }
            plays.sort_by_key(|p| compare::order_key(&p.hand, &rules));
            let gt = |x: &Hand, y: &Hand| compare::beats(y, x, &rules);
            for i in 0..plays.len() {
                for j in (i + 1)..plays.len().min(i + 6) {
                    for k in (j + 1)..plays.len().min(j + 6) {
                        let (z, y, x) = (&plays[i].hand, &plays[j].hand, &plays[k].hand);
                        if gt(x, y) && gt(y, z) {
                            chains += 1;
                            bomb_chains += usize::from(z.is_bomb());
                            assert!(
                                gt(x, z),
                                "[{name}] seed {seed}: {x:?} > {y:?} > {z:?} but not {x:?} > {z:?}"
                            );
                        }
                    }
                }
            }
            seed += 1;
        }
    }
}
