//! Bombs as scoring facts: the record of a bomb played, and the best arrangement of the bombs
//! still in a hand at the end of a deal (S2: "手中牌貢獻分按最大計算" — wild jokers are assigned
//! so that the hand's bombs are worth the most).
//!
//! "Best" is what the variant pays for bombs in hand: when it names a contribution by star level
//! (an [`InHandWorth`], the script's `contribution(stars, opts)`, under the game's options:
//! RULES.md §6.5 counts bombs from `contribution_from_xiang` on and no higher than `cap_xiang`),
//! the arrangement maximises Σ contribution(stars) first. Among arrangements paying the same (and
//! for variants that pay nothing by level), it maximises Σ 2^stars over disjoint bombs under a
//! star system (a bomb one star higher is worth two of the lower one, as in every contribution
//! table), or Σ 2^cards under the classic bomb order (天王 counted as 9 cards), so that the
//! bombs shown are the largest the hand can make. The search is exhaustive with memoisation: it walks the
//! ranks from the lowest natural one upwards and, at each, either leaves that rank's remaining
//! natural cards out of every bomb or takes one bomb whose lowest natural rank it is; joker-only
//! bombs (三王, 天王) are taken last from the jokers left. Pure; depends on `moves` for the
//! bomb enumeration.

use std::collections::HashMap;

use super::hooks::{BombFact, InHandWorth, Seat};
use crate::cards::{Rank, RankCounts, TOP_SET};
use crate::hand::{Fill, Hand, HandType};
use crate::moves::{self, Play};
use crate::rules::{ChainBombs, Rules};

/// The fact of a bomb: who, which cards (as ranks) and its shape.
pub fn fact(seat: Seat, cards: RankCounts, h: &Hand) -> BombFact {
    BombFact {
        seat,
        kind: h.kind,
        cards,
        len: h.len,
        stars: h.stars,
        group: h.group,
        links: h.links,
    }
}

/// The value of a bomb in the arrangement search: what the variant pays for it, then its size.
type Weight = (u64, u64);

fn add(a: Weight, b: Weight) -> Weight {
    (a.0.saturating_add(b.0), a.1.saturating_add(b.1))
}

/// The value of a bomb in the arrangement search.
fn weight(h: &Hand, rules: &Rules, worth: Option<&InHandWorth>) -> Weight {
    let exp = match (rules.has_stars(), h.kind) {
        (true, _) => h.stars.unwrap_or(h.len),
        (false, HandType::FourJokers) => 9,
        (false, _) => h.len,
    };
    let pays = match (worth, h.stars) {
        (Some(w), Some(s)) if !w.is_empty() => w[usize::from(s).min(w.len() - 1)],
        _ => 0,
    };
    (pays, 1u64 << exp.min(40))
}

/// A bomb below every real bomb, so that "every play that beats it" is "every bomb".
fn floor_bomb(rules: &Rules) -> Hand {
    Hand::set(
        HandType::Bomb,
        Rank::THREE,
        rules.has_stars().then_some(0),
        Fill::natural(RankCounts::EMPTY),
    )
}

/// The wild jokers of a hand, as counts.
fn wild_part(hand: RankCounts, rules: &Rules) -> RankCounts {
    let (_, ws, wb) = rules.split_wilds(hand);
    RankCounts::EMPTY
        .with(Rank::SMALL_JOKER, ws)
        .with(Rank::BIG_JOKER, wb)
}

/// Could this multiset hold any bomb at all? (A cheap test that prunes most of the search.)
fn may_hold_bomb(hand: RankCounts, rules: &Rules) -> bool {
    let wilds = wild_part(hand, rules).total() as u8;
    let jokers = hand.get(Rank::SMALL_JOKER) + hand.get(Rank::BIG_JOKER);
    if jokers == 4 || (jokers == 3 && rules.three_jokers) {
        return true;
    }
    (0..=TOP_SET).any(|i| {
        let c = Rank::from_index(i as u8).map_or(0, |r| hand.get(r));
        c > 0 && c + wilds >= 4
    })
}

/// The lowest suited rank present.
fn lowest_suited(hand: RankCounts) -> Option<Rank> {
    hand.iter().map(|(r, _)| r).find(|r| r.index() <= TOP_SET)
}

#[derive(Clone, Copy)]
struct Memo {
    weight: Weight,
    /// The bomb taken here, and the state after it (or after dropping the lowest rank).
    take: Option<Play>,
    next: Option<RankCounts>,
}

struct Search<'a> {
    rules: &'a Rules,
    worth: Option<&'a InHandWorth>,
    floor: Hand,
    memo: HashMap<u64, Memo>,
}

impl Search<'_> {
    /// The bombs worth considering at `state`: those whose lowest natural rank is `r` (or, with
    /// no suited rank left, the joker bombs).
    fn candidates(&self, state: RankCounts, r: Option<Rank>) -> Vec<Play> {
        let rules = self.rules;
        let sub = match r {
            None => state,
            Some(r) => {
                // Only ranks a bomb starting at r can reach, plus the wild jokers.
                let reach = match rules.chain_bombs {
                    ChainBombs::None => 1,
                    _ if rules.cyclic_chain_bombs => TOP_SET + 1,
                    _ => rules.max_chain_links as usize,
                };
                let mut sub = wild_part(state, rules);
                for i in r.index()..=TOP_SET.min(r.index() + reach.saturating_sub(1)) {
                    if let Some(q) = Rank::from_index(i as u8) {
                        sub = sub.with(q, state.get(q));
                    }
                }
                if rules.cyclic_chain_bombs {
                    sub = state;
                }
                sub
            }
        };
        let mut plays = moves::legal_plays(sub, Some(&self.floor), rules);
        if let Some(r) = r {
            plays.retain(|p| p.cards.get(r) > 0);
        }
        // With both jokers wild, which joker stands in makes no difference to what the rest of
        // the hand can still form (三王 and 天王 take any jokers): keep one bomb per shape.
        if rules.is_wild(Rank::SMALL_JOKER) && rules.is_wild(Rank::BIG_JOKER) {
            let merged = |p: &Play| {
                let j = p.cards.get(Rank::SMALL_JOKER) + p.cards.get(Rank::BIG_JOKER);
                let key = p.cards.with(Rank::SMALL_JOKER, 0).with(Rank::BIG_JOKER, j);
                (key, p.hand.kind, p.hand.stars)
            };
            let mut seen = Vec::with_capacity(plays.len());
            plays.retain(|p| {
                let k = merged(p);
                if seen.contains(&k) {
                    false
                } else {
                    seen.push(k);
                    true
                }
            });
        }
        plays
    }

    fn best(&mut self, state: RankCounts) -> Weight {
        if let Some(m) = self.memo.get(&state.bits()) {
            return m.weight;
        }
        let mut memo = Memo {
            weight: (0, 0),
            take: None,
            next: None,
        };
        if may_hold_bomb(state, self.rules) {
            let r = lowest_suited(state);
            if let Some(r) = r {
                let rest = state.with(r, 0);
                memo.weight = self.best(rest);
                memo.next = Some(rest);
            }
            for p in self.candidates(state, r) {
                let Some(rest) = state.minus(p.cards) else {
                    continue;
                };
                let w = add(weight(&p.hand, self.rules, self.worth), self.best(rest));
                if w > memo.weight {
                    memo = Memo {
                        weight: w,
                        take: Some(p),
                        next: Some(rest),
                    };
                }
            }
        }
        self.memo.insert(state.bits(), memo);
        memo.weight
    }
}

/// The best arrangement of the bombs in `hand` (disjoint, wild jokers assigned) for a variant
/// paying `worth` for them (`None`: nothing by level), as facts of `seat`, in the order found
/// (lowest rank first, joker bombs last).
pub fn in_hand(
    hand: RankCounts,
    seat: Seat,
    rules: &Rules,
    worth: Option<&InHandWorth>,
) -> Vec<BombFact> {
    if !may_hold_bomb(hand, rules) {
        return Vec::new();
    }
    let mut search = Search {
        rules,
        worth,
        floor: floor_bomb(rules),
        memo: HashMap::new(),
    };
    search.best(hand);
    let mut out = Vec::new();
    let mut state = hand;
    while let Some(m) = search.memo.get(&state.bits()).copied() {
        if let Some(p) = m.take {
            out.push(fact(seat, p.cards, &p.hand));
        }
        match m.next {
            Some(next) if next != state => state = next,
            _ => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stars(hand: &str, rules: &Rules) -> Vec<(HandType, Option<u8>, String)> {
        in_hand(hand.parse().unwrap(), Seat::new(0), rules, None)
            .into_iter()
            .map(|b| (b.kind, b.stars, b.cards.to_string()))
            .collect()
    }

    #[test]
    fn no_bombs() {
        assert!(stars("3 4 5 6 7 8 9", &Rules::BAIBIAN).is_empty());
        assert!(stars("", &Rules::BAIBIAN).is_empty());
    }

    #[test]
    fn wild_goes_where_it_is_worth_most() {
        // 7777 + 8888 + BJ: one 5★ (32) + one 4★ (16) = 48 either way; the search keeps both.
        let got = stars("7 7 7 7 8 8 8 8 BJ", &Rules::BAIBIAN);
        assert_eq!(got.len(), 2, "{got:?}");
        // 33 3 + BJ is a 4★ only with the wild; with 9999 the wild makes 99999 (5★ + nothing)
        // or 3333 (4★) + 9999 (4★): 32 vs 32; both are best, the total is what counts.
        let total: u64 = in_hand(
            "3 3 3 9 9 9 9 BJ".parse().unwrap(),
            Seat::new(0),
            &Rules::BAIBIAN,
            None,
        )
        .iter()
        .map(|b| 1u64 << b.stars.unwrap())
        .sum();
        assert_eq!(total, 32);
    }

    #[test]
    fn chain_bombs_and_joker_bombs() {
        let got = stars("3 3 3 3 4 4 4 4 5 5 5 5 SJ SJ BJ", &Rules::BAIBIAN);
        assert_eq!(
            got,
            vec![
                (
                    HandType::ChainBomb,
                    Some(7),
                    "3 3 3 3 4 4 4 4 5 5 5 5".to_string()
                ),
                (HandType::ThreeJokers, Some(6), "SJ SJ BJ".to_string())
            ]
        );
        let got = stars("SJ SJ BJ BJ", &Rules::CLASSIC);
        assert_eq!(
            got,
            vec![(HandType::FourJokers, None, "SJ SJ BJ BJ".to_string())]
        );
        // Eight of a kind is one 8★ bomb, not two 4★.
        let got = stars("6 6 6 6 6 6 6 6", &Rules::ERREN);
        assert_eq!(
            got,
            vec![(HandType::Bomb, Some(8), "6 6 6 6 6 6 6 6".to_string())]
        );
    }

    #[test]
    fn full_hands_finish_quickly() {
        // A bomb-heavy 27-card hand with four wild jokers (qianbian).
        let h = "3 3 3 3 4 4 4 4 5 5 5 5 6 6 6 6 7 7 7 7 8 8 9 SJ SJ BJ BJ";
        let got = in_hand(h.parse().unwrap(), Seat::new(1), &Rules::QIANBIAN, None);
        assert!(!got.is_empty());
        let mut used = RankCounts::EMPTY;
        for b in &got {
            used = used.plus(b.cards);
            assert_eq!(b.seat, Seat::new(1));
        }
        assert!(used.is_subset(h.parse().unwrap()), "bombs are disjoint");
    }
}
