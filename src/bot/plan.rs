//! Hand planning for the rule bots: how many plays a hand still needs, what its bombs are worth,
//! and whether a play can still be beaten by the cards a seat has not seen (記牌).
//!
//! The plan cost is a cheap stand-in for "split the hand into the fewest plays": every rank of
//! 3..2 holding one to three cards is a group still to be played (ranks below J cost the most),
//! A and 2 are strong groups, as is a non-wild joker, four or more cards of a rank are a bomb (no cost, and
//! worth keeping). A play that sheds several groups at once (a straight, a pair chain) lowers the
//! cost the most, so choosing the play that leaves the cheapest hand plans the hand into few
//! plays. Pure: ranks and rules only.

use crate::cards::{Rank, RankCounts, TOP_SEQ, TOP_SET};
use crate::hand::{Hand, HandType};
use crate::rules::Rules;

/// Roughly twice the number of plays `h` still needs, weak groups counted heavier.
pub fn plan_cost(h: RankCounts, rules: &Rules) -> i32 {
    let mut cost = 0;
    for i in 0..=TOP_SET {
        let c = h.get(Rank::at(i));
        if (1..=3).contains(&c) {
            // Weak groups are hard to get rid of; A and 2 win tricks by themselves.
            cost += match i {
                0..=7 => 3,
                8..=10 => 2,
                _ => 1,
            };
        }
    }
    for r in [Rank::SMALL_JOKER, Rank::BIG_JOKER] {
        if h.get(r) > 0 && !rules.is_wild(r) {
            cost += 1;
        }
    }
    cost
}

/// What the bombs of a hand are worth: one per card beyond three in every rank of four or more
/// (a bigger bomb is a higher star level), three for a joker bomb.
pub fn bomb_value(h: RankCounts, rules: &Rules) -> i32 {
    let mut v = 0;
    for i in 0..=TOP_SET {
        let c = h.get(Rank::at(i)) as i32;
        if c >= 4 {
            v += c - 3;
        }
    }
    let jokers = (h.get(Rank::SMALL_JOKER) + h.get(Rank::BIG_JOKER)) as i32;
    if jokers == 4 || (jokers == 3 && rules.three_jokers) {
        v += 3;
    }
    v
}

/// The value of the hand left after a play (lower is better): plays still needed, bombs kept.
pub fn leftover_score(after: RankCounts, rules: &Rules) -> i32 {
    plan_cost(after, rules) * 4 - bomb_value(after, rules) * 3
}

/// Can no non-bomb play made of `unseen` cards beat `h`? Wild jokers among the unseen cards fill
/// any gap. Bombs are not considered (any bomb beats a non-bomb).
pub fn is_boss(h: &Hand, unseen: RankCounts, rules: &Rules) -> bool {
    if h.is_bomb() {
        return false;
    }
    let wilds = (13..15)
        .map(Rank::at)
        .filter(|&r| rules.is_wild(r))
        .map(|r| unseen.get(r) as i32)
        .sum::<i32>();
    let key = h.key.index();
    let group = h.group.max(1) as i32;
    match h.kind {
        HandType::Single | HandType::Pair | HandType::Triple => {
            let group = match h.kind {
                HandType::Single => 1,
                HandType::Pair => 2,
                _ => 3,
            };
            // Natural higher ranks, plus wilds standing for 3..2; jokers as themselves.
            for i in key + 1..15 {
                let natural = unseen.get(Rank::at(i)) as i32;
                let usable = if i <= TOP_SET {
                    natural + wilds
                } else {
                    natural
                };
                if usable >= group && (i <= TOP_SET || natural >= group) {
                    return false;
                }
            }
            true
        }
        HandType::Straight | HandType::PairChain | HandType::TripleChain => {
            let links = h.links.max(1) as usize;
            for top in key + 1..=TOP_SEQ {
                if top + 1 < links {
                    continue;
                }
                let deficit: i32 = (top + 1 - links..=top)
                    .map(|i| (group - unseen.get(Rank::at(i)) as i32).max(0))
                    .sum();
                if deficit <= wilds {
                    return false;
                }
            }
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::classify;

    fn rc(s: &str) -> RankCounts {
        s.parse().unwrap()
    }

    #[test]
    fn a_straight_lowers_the_plan_cost_more_than_a_single() {
        let r = Rules::CLASSIC;
        let h = rc("3 4 5 6 7 K");
        let straight = plan_cost(h.minus(rc("3 4 5 6 7")).unwrap(), &r);
        let single = plan_cost(h.minus(rc("3")).unwrap(), &r);
        assert!(straight < single, "{straight} vs {single}");
        assert_eq!(plan_cost(rc("8 8 8 8"), &r), 0);
        assert_eq!(bomb_value(rc("8 8 8 8 8 8"), &r), 3);
    }

    #[test]
    fn boss_follows_the_unseen_cards() {
        let r = Rules::CLASSIC;
        let single_a = classify(rc("A"), &r)[0];
        assert!(!is_boss(&single_a, rc("2"), &r));
        assert!(is_boss(&single_a, rc("3 4 K"), &r));
        let pair_k = classify(rc("K K"), &r)[0];
        assert!(is_boss(&pair_k, rc("A 2"), &r));
        assert!(!is_boss(&pair_k, rc("2 2"), &r));
        let straight = classify(rc("9 T J Q K"), &r)[0];
        assert!(!is_boss(&straight, rc("T J Q K A"), &r));
        assert!(is_boss(&straight, rc("T J Q A A"), &r));
    }
}
