//! `hints::page` against its oracle, `moves::legal_plays`: for the worst hands of every variant
//! (the 千變 hand of issue 14 with its 24,205 leads, and for each variant the hand with the most
//! leads a seeded random search finds), walking every page (by offset and by token, with and
//! without a type filter) yields exactly the legal plays in their order, and every count agrees
//! with counting the full list.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use shuangkou::cards::RankCounts;
use shuangkou::hand::{Hand, HandType};
use shuangkou::hints::{self, HintError, MAX_LIMIT, Query, Start};
use shuangkou::moves::{self, Play};
use shuangkou::rules::Rules;

/// Issue 14: eleven pairs 3..K, an ace and the four jokers (wild in 千變).
const ISSUE_HAND: &str = "3 3 4 4 5 5 6 6 7 7 8 8 9 9 T T J J Q Q K K A SJ SJ BJ BJ";
const SEED: u64 = 14;

fn rules(id: &str) -> Rules {
    shuangkou::variants::builtin_rules(id).expect("embedded variant")
}

fn hand(text: &str) -> RankCounts {
    text.parse().expect("card notation")
}

/// Every page of `types` (empty = all) from offset 0, following the tokens; the concatenation.
fn walk_tokens(
    h: RankCounts,
    prev: Option<&Hand>,
    r: &Rules,
    types: &[HandType],
    limit: usize,
) -> (Vec<Play>, hints::Page) {
    let mut got = Vec::new();
    let mut start = Start::Offset(0);
    let mut pages = 0;
    loop {
        let q = Query {
            limit,
            start,
            types: types.to_vec(),
        };
        let p = hints::page(h, prev, r, &q).unwrap_or_else(|e| panic!("{h}: {e}"));
        assert!(p.plays.len() <= limit, "a page over its limit");
        assert_eq!(p.offset, got.len(), "the page starts where the last ended");
        got.extend(p.plays.iter().copied());
        pages += 1;
        assert!(pages <= 100_000, "paging does not end");
        match p.next_token.clone() {
            Some(t) => {
                assert_eq!(p.next_offset, Some(got.len()));
                assert_eq!(p.plays.len(), limit, "only the last page is short");
                start = Start::Token(t);
            }
            None => {
                assert_eq!(p.next_offset, None);
                return (got, p);
            }
        }
    }
}

/// Every page by offset, with `limit` (not a divisor of the counts, usually).
fn walk_offsets(h: RankCounts, prev: Option<&Hand>, r: &Rules, limit: usize) -> Vec<Play> {
    let mut got = Vec::new();
    loop {
        let q = Query {
            limit,
            start: Start::Offset(got.len()),
            types: vec![],
        };
        let p = hints::page(h, prev, r, &q).unwrap_or_else(|e| panic!("{h}: {e}"));
        got.extend(p.plays.iter().copied());
        if p.next_offset.is_none() {
            return got;
        }
    }
}

/// Every check of one hand (leading, or following `prev`) against the full list.
fn check_hand(variant: &str, h: RankCounts, prev: Option<&Hand>) -> usize {
    let r = rules(variant);
    let all = moves::legal_plays(h, prev, &r);
    let ctx = format!("{variant} hand {h} prev {prev:?}");
    let (got, last) = walk_tokens(h, prev, &r, &[], MAX_LIMIT);
    assert!(got == all, "{ctx}: pages differ from legal_plays");
    assert_eq!(last.total, all.len(), "{ctx}");
    assert_eq!(last.total_all, all.len(), "{ctx}");
    assert!(walk_offsets(h, prev, &r, 97) == all, "{ctx}: offsets");
    // The counts per type, and every type's pages, against filtering the full list.
    let mut sum = 0;
    for t in HandType::ALL {
        let of_type: Vec<Play> = all.iter().filter(|p| p.hand.kind == t).copied().collect();
        let claimed = last.by_type.iter().find(|(k, _)| *k == t).map(|(_, n)| *n);
        assert_eq!(claimed.unwrap_or(0), of_type.len(), "{ctx}: count of {t:?}");
        if of_type.is_empty() {
            assert_eq!(claimed, None, "{ctx}: a zero count is listed");
        }
        sum += of_type.len();
        let (got, p) = walk_tokens(h, prev, &r, &[t], MAX_LIMIT);
        assert!(got == of_type, "{ctx}: pages of {t:?}");
        assert_eq!(p.total, of_type.len(), "{ctx}: total of {t:?}");
        assert_eq!(p.total_all, all.len(), "{ctx}");
    }
    assert_eq!(sum, all.len(), "{ctx}: the types partition the plays");
    // Two types at once keep the global order.
    let two = [HandType::Bomb, HandType::Pair];
    let both: Vec<Play> = all
        .iter()
        .filter(|p| two.contains(&p.hand.kind))
        .copied()
        .collect();
    assert!(
        walk_tokens(h, prev, &r, &two, 33).0 == both,
        "{ctx}: two types"
    );
    // The default page, and the bounds.
    let first = hints::page(h, prev, &r, &Query::default()).unwrap();
    assert_eq!(
        first.plays.len(),
        all.len().min(hints::DEFAULT_LIMIT),
        "{ctx}"
    );
    let past = Query {
        start: Start::Offset(all.len() + 1),
        ..Query::default()
    };
    assert!(matches!(
        hints::page(h, prev, &r, &past),
        Err(HintError::OffsetPastEnd { .. })
    ));
    all.len()
}

fn is_joker(card: &str) -> bool {
    card == "SJ" || card == "BJ"
}

/// The 108 cards as tokens.
fn deck() -> Vec<&'static str> {
    let mut d = Vec::new();
    for r in [
        "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K", "A", "2",
    ] {
        d.extend(std::iter::repeat_n(r, 8));
    }
    d.extend(["SJ", "SJ", "BJ", "BJ"]);
    d
}

/// A seeded hill climb over hands holding the four jokers, from the issue hand: the hand with
/// the most legal leads it finds for `variant` (a swap of one card with one of the rest of the
/// deck is kept unless the count shrinks).
fn worst_hand(variant: &str, seed: u64, steps: usize) -> (RankCounts, usize) {
    let r = rules(variant);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut held: Vec<&str> = ISSUE_HAND.split(' ').filter(|c| !is_joker(c)).collect();
    let mut rest: Vec<&str> = deck().into_iter().filter(|c| !is_joker(c)).collect();
    for c in &held {
        let at = rest
            .iter()
            .position(|x| x == c)
            .expect("a card of the deck");
        rest.swap_remove(at);
    }
    rest.shuffle(&mut rng);
    let count = |held: &[&str]| {
        let text = format!("{} SJ SJ BJ BJ", held.join(" "));
        let h = hand(&text);
        (h, moves::legal_plays(h, None, &r).len())
    };
    let mut best = count(&held);
    for _ in 0..steps {
        let i = rng.random_range(0..held.len());
        let j = rng.random_range(0..rest.len());
        std::mem::swap(&mut held[i], &mut rest[j]);
        // Equal counts are kept too, so the climb walks across plateaus.
        let c = count(&held);
        if c.1 >= best.1 {
            best = c;
        } else {
            std::mem::swap(&mut held[i], &mut rest[j]);
        }
    }
    best
}

#[test]
fn the_issue_hand_pages_to_its_24205_leads() {
    let n = check_hand("qianbian", hand(ISSUE_HAND), None);
    assert_eq!(n, 24_205, "issue 14 counts 24,205 legal leads");
}

#[test]
fn the_worst_hands_of_every_variant_page_exactly() {
    for (i, (variant, _)) in shuangkou::variants::EMBEDDED.iter().enumerate() {
        let seed = SEED + i as u64;
        let issue = check_hand(variant, hand(ISSUE_HAND), None);
        let (worst, leads) = worst_hand(variant, seed, 40);
        eprintln!("{variant}: {issue} leads for the issue hand; seed {seed}: {leads} for {worst}");
        assert!(
            leads >= issue,
            "seed {seed}: the climb starts at the issue hand"
        );
        if worst != hand(ISSUE_HAND) {
            assert_eq!(check_hand(variant, worst, None), leads, "seed {seed}");
        }
        // Following: a pair and a small bomb on the table.
        let r = rules(variant);
        for prev in ["4 4", "5 5 5 5"] {
            let p = shuangkou::classify::resolve(hand(prev), None, None, &r).unwrap();
            check_hand(variant, worst, Some(&p));
        }
    }
}
