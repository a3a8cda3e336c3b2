//! Legal plays checked by hand-worked cases and against a brute force over every sub-multiset.

use crate::cards::{Rank, RankCounts};
use crate::classify;
use crate::compare;
use crate::hand::{Hand, HandType};
use crate::rules::Rules;

use super::legal_plays;

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
fn brute_force(hand: RankCounts, previous: Option<&Hand>, rules: &Rules) -> Vec<(u64, HandType)> {
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
