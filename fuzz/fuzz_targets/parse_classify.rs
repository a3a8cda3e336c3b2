//! Fuzz target: card parsing, classification, `resolve`, `beats` and `legal_plays`.
//!
//! Input layout: byte 0 picks the rule settings for the legal-play checks and which lead to follow;
//! the rest is read twice:
//! - as UTF-8 text notation, split on `|` into a play on the table and a new play;
//! - as card ids (each byte modulo 108, repeats dropped) forming a hand, and strictly through
//!   `CardSet::from_ids` (which must reject bad and repeated ids without panicking).
//!
//! Invariants checked: notation round-trips; errors name the offending token; every
//! interpretation accounts for exactly the cards played (wild jokers substituted); bombs come
//! first and carry stars exactly under a star system; `resolve` agrees with `classify`; `beats` is
//! irreflexive and antisymmetric; every legal play is in the hand, classifies as it says, appears
//! once, in weakest-first order; the plays following a lead are exactly the leads that beat it;
//! and for hands with few sub-multisets, the leads are exactly the classified sub-multisets.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shuangkou::cards::{Card, CardError, CardSet, Rank, RankCounts};
use shuangkou::compare;
use shuangkou::classify;
use shuangkou::hand::{Hand, PlayError};
use shuangkou::moves::{self, Play};
use shuangkou::rules::{ChainBombs, EqualStarTieBreak, Rules, TianWang, UnequalChainLevel};

/// The presets plus the options of docs/rules/RULES.md §8 that change classification or order.
fn all_rules() -> Vec<Rules> {
    let mut v: Vec<Rules> = Rules::PRESET_IDS
        .iter()
        .filter_map(|id| Rules::preset(id).ok())
        .collect();
    v.push(Rules {
        cyclic_chain_bombs: true,
        ..Rules::BAIBIAN
    });
    v.push(Rules {
        cyclic_chain_bombs: true,
        unequal_chain_level: UnequalChainLevel::MinPlusLinks,
        ..Rules::QIANBIAN
    });
    v.push(Rules {
        tianwang: TianWang::MaxOf8,
        equal_star_tie_break: EqualStarTieBreak::LargerGroup,
        ..Rules::QIANBIAN
    });
    v.push(Rules {
        tianwang: TianWang::AboveAll,
        min_naturals_in_sequence: 2,
        big_joker_as_small: false,
        ..Rules::BAIBIAN
    });
    v.push(Rules {
        chain_bombs: ChainBombs::Unequal,
        wild_jokers: shuangkou::rules::WildJokers::Big,
        ..Rules::BAIBIAN
    });
    v
}

/// Largest hand whose legal plays are enumerated (a dealt hand).
const MAX_HAND: u32 = 27;
/// Largest number of sub-multisets brute-forced against `legal_plays`.
const MAX_SUBSETS: u64 = 3000;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, payload)) = data.split_first() else {
        return;
    };
    let rules = all_rules();
    let chosen = &rules[selector as usize % rules.len()];

    // Text notation.
    if let Ok(text) = std::str::from_utf8(payload) {
        let mut parts = text.splitn(2, '|');
        let first = parts.next().map(parse_text);
        let second = parts.next().map(parse_text);
        for rc in [first, second].into_iter().flatten().flatten() {
            for r in &rules {
                check_classify(rc, r);
            }
        }
        if let (Some(Some(a)), Some(Some(b))) = (first, second) {
            for r in &rules {
                check_pair(a, b, r);
            }
            if b.total() <= MAX_HAND {
                // Follow the first play with the second as a hand.
                if let Ok(prev) = classify::resolve(a, None, None, chosen) {
                    check_follow(b, &moves::legal_plays(b, None, chosen), &prev, chosen);
                }
            }
        } else if let Some(Some(a)) = first {
            if a.total() <= MAX_HAND {
                check_moves(a, selector, chosen);
            }
        }
    }

    // Card ids, strictly.
    let ids: Vec<u32> = payload.iter().map(|&b| u32::from(b)).collect();
    match CardSet::from_ids(&ids) {
        Ok(set) => {
            assert_eq!(set.len(), ids.len());
            assert_eq!(set.rank_counts().total() as usize, ids.len());
        }
        Err(CardError::BadCardId(id)) => assert!(id >= 108 && ids.contains(&id)),
        Err(CardError::DuplicateCard(id)) => {
            assert!(ids.iter().filter(|&&x| x == id).count() >= 2)
        }
        Err(e) => panic!("from_ids gave {e:?}"),
    }

    // Card ids, leniently: a hand.
    let mut set = CardSet::EMPTY;
    for &b in payload.iter().take(MAX_HAND as usize) {
        if let Ok(c) = Card::new(u32::from(b) % 108) {
            set.insert(c);
        }
    }
    let hand_counts = set.rank_counts();
    assert_eq!(hand_counts, CardSet::from_counts(hand_counts).rank_counts());
    for r in &rules {
        check_classify(hand_counts, r);
    }
    check_moves(hand_counts, selector, chosen);
});

/// Parses notation; checks round trip and that errors name a token of the input.
fn parse_text(text: &str) -> Option<RankCounts> {
    match text.parse::<RankCounts>() {
        Ok(rc) => {
            let back: RankCounts = rc.to_string().parse().expect("printed notation parses");
            assert_eq!(back, rc, "round trip of {text:?}");
            Some(rc)
        }
        Err(CardError::UnknownToken(t)) => {
            assert!(text.contains(&t), "{t:?} not in {text:?}");
            None
        }
        Err(CardError::TooManyCopies {
            token, count, max, ..
        }) => {
            assert!(text.contains(&token), "{token:?} not in {text:?}");
            assert!(count > max);
            None
        }
        Err(e) => panic!("parsing text gave {e:?}"),
    }
}

/// Every interpretation accounts for the cards; resolve agrees with classify.
fn check_classify(cards: RankCounts, rules: &Rules) {
    let all = classify::classify(cards, rules);
    let mut seen_non_bomb = false;
    for (i, h) in all.iter().enumerate() {
        assert_eq!(u32::from(h.len), cards.total(), "{cards} {h:?}");
        assert_eq!(h.substituted.total(), cards.total(), "{cards} {h:?}");
        let mut sub = cards;
        for (joker, became) in h.wilds.iter() {
            assert!(
                rules.is_wild(joker),
                "{cards}: non-wild {joker} substituted"
            );
            sub = sub
                .minus(RankCounts::EMPTY.with(joker, 1))
                .expect("a substituted joker is in the play");
            sub.add(became, 1);
        }
        assert_eq!(sub, h.substituted, "{cards}: wilds do not explain {h:?}");
        assert_eq!(
            h.stars.is_some(),
            h.is_bomb() && rules.has_stars(),
            "{cards} {h:?}"
        );
        if h.is_bomb() {
            assert!(!seen_non_bomb, "{cards}: bomb after a non-bomb");
        } else {
            seen_non_bomb = true;
        }
        assert!(
            all[..i].iter().all(|o| o.kind != h.kind),
            "{cards}: two interpretations of one type {all:?}"
        );
        assert!(!compare::beats(h, h, rules), "{cards}: {h:?} beats itself");
    }
    match classify::resolve(cards, None, None, rules) {
        Ok(h) => assert!(all.contains(&h)),
        Err(PlayError::NotACombination(_)) => assert!(all.is_empty()),
        Err(PlayError::Ambiguous { options, .. }) => {
            assert!(options.len() >= 2 && options.iter().all(|o| all.contains(o)))
        }
        Err(e) => panic!("{cards}: resolve without previous gave {e:?}"),
    }
}

/// `beats` is antisymmetric; `resolve` following agrees with `beats`.
fn check_pair(a: RankCounts, b: RankCounts, rules: &Rules) {
    let ia = classify::classify(a, rules);
    let ib = classify::classify(b, rules);
    for x in &ia {
        for y in &ib {
            assert!(
                !(compare::beats(x, y, rules) && compare::beats(y, x, rules)),
                "{x:?} and {y:?} beat each other"
            );
        }
    }
    for x in &ia {
        match classify::resolve(b, Some(x), None, rules) {
            Ok(h) => assert!(ib.contains(&h) && compare::beats(x, &h, rules)),
            Err(PlayError::DoesNotBeat(_)) => {
                assert!(ib.iter().all(|y| !compare::beats(x, y, rules)))
            }
            Err(PlayError::NotACombination(_)) => assert!(ib.is_empty()),
            Err(PlayError::Ambiguous { options, .. }) => {
                assert!(options.iter().all(|h| compare::beats(x, h, rules)))
            }
            Err(e) => panic!("resolve gave {e:?}"),
        }
    }
}

/// Legal leads, and following one of them.
fn check_moves(hand_counts: RankCounts, selector: u8, rules: &Rules) {
    if hand_counts.total() > MAX_HAND {
        return;
    }
    let leads = moves::legal_plays(hand_counts, None, rules);
    let mut keys = Vec::with_capacity(leads.len());
    for (i, p) in leads.iter().enumerate() {
        assert!(
            p.cards.is_subset(hand_counts),
            "{hand_counts}: {p:?} not in hand"
        );
        let all = classify::classify(p.cards, rules);
        assert!(
            all.contains(&p.hand),
            "{hand_counts}: play {} as {:?} is not a classification {all:?}",
            p.cards,
            p.hand
        );
        if i > 0 {
            let a = compare::order_key(&leads[i - 1].hand, rules);
            let b = compare::order_key(&p.hand, rules);
            assert!(a <= b, "{hand_counts}: not weakest first at {i}");
        }
        keys.push((p.cards.bits(), p.hand.kind));
    }
    keys.sort_unstable();
    let n = keys.len();
    keys.dedup();
    assert_eq!(keys.len(), n, "{hand_counts}: a play is listed twice");

    // Complete: every classified sub-multiset is a lead (small hands only).
    let subsets: u64 = hand_counts
        .iter()
        .map(|(_, c)| u64::from(c) + 1)
        .try_fold(1u64, |acc, x| {
            acc.checked_mul(x).filter(|&v| v <= MAX_SUBSETS)
        })
        .unwrap_or(u64::MAX);
    if subsets <= MAX_SUBSETS {
        let mut slow = Vec::new();
        sub_multisets(hand_counts, &mut |play| {
            for h in classify::classify(play, rules) {
                slow.push((play.bits(), h.kind));
            }
        });
        slow.sort_unstable();
        assert_eq!(
            keys, slow,
            "{hand_counts}: legal leads differ from brute force"
        );
    }

    if !leads.is_empty() {
        let prev = leads[selector as usize * 7919 % leads.len()].hand;
        check_follow(hand_counts, &leads, &prev, rules);
    }
}

/// The plays following `prev` are exactly the leads that beat it, in the same order.
fn check_follow(hand_counts: RankCounts, leads: &[Play], prev: &Hand, rules: &Rules) {
    let follows = moves::legal_plays(hand_counts, Some(prev), rules);
    for p in &follows {
        assert!(
            compare::beats(prev, &p.hand, rules),
            "{hand_counts}: {p:?} does not beat {prev:?}"
        );
    }
    let mut expected: Vec<(u64, Hand)> = leads
        .iter()
        .filter(|p| compare::beats(prev, &p.hand, rules))
        .map(|p| (p.cards.bits(), p.hand))
        .collect();
    let mut got: Vec<(u64, Hand)> = follows.iter().map(|p| (p.cards.bits(), p.hand)).collect();
    let key = |x: &(u64, Hand)| (x.0, x.1.kind);
    expected.sort_unstable_by_key(key);
    got.sort_unstable_by_key(key);
    assert_eq!(got, expected, "{hand_counts}: following {prev:?}");
}

/// Calls `f` with every non-empty sub-multiset of `counts`.
fn sub_multisets(counts: RankCounts, f: &mut impl FnMut(RankCounts)) {
    let ranks: Vec<(Rank, u8)> = counts.iter().collect();
    let mut cur = vec![0u8; ranks.len()];
    loop {
        let mut i = 0;
        loop {
            if i == ranks.len() {
                return;
            }
            if cur[i] < ranks[i].1 {
                cur[i] += 1;
                break;
            }
            cur[i] = 0;
            i += 1;
        }
        let mut play = RankCounts::EMPTY;
        for (k, &(r, _)) in ranks.iter().enumerate() {
            play = play.with(r, cur[k]);
        }
        f(play);
    }
}
