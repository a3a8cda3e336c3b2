//! What the variant's settlement pays, as the bots use it: the score of a finished (sampled) deal
//! for one seat, and a profile of what playing a bomb of each star level is worth.
//!
//! The settlement is the variant's own ([`VariantHooks::settle`]): the arena passes the script
//! hooks, unit tests the plain test double. The profile is probed once per bot from synthetic
//! deals (the same deal with a bomb played or kept, won and lost), so a rule bot knows, without
//! calling a script per decision, that a 6★ bomb played is worth points in 百變 and nothing in
//! the plain test scoring. Pure: facts in, numbers out.

use crate::cards::{Rank, RankCounts};
use crate::classify;
use crate::game::bombs;
use crate::game::hooks::{BombFact, Centi, DealFacts, Outcome, TableFacts, VariantHooks};
use crate::hand::Hand;
use crate::rules::Rules;
use crate::seat::Seat;

/// Star levels (or card counts under the classic order) the profile covers.
pub const LEVELS: usize = 16;

/// What playing a bomb is worth to its player, by level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ScoringProfile {
    /// Hundredths of a point the player's team gains by playing (rather than keeping) a bomb of
    /// this level, the mean of a won and a lost deal.
    pub bomb_played: [Centi; LEVELS],
    /// The winning team's score of a 雙扣 (double) deal, for scale.
    pub double: Centi,
}

/// The level of a bomb: its star level, or its card count under the classic order.
pub fn level(h: &Hand) -> usize {
    (h.stars.unwrap_or(h.len) as usize).min(LEVELS - 1)
}

fn synthetic_bomb(len: u8, rules: &Rules) -> Option<(RankCounts, Hand)> {
    let cards = RankCounts::EMPTY.with(Rank::SEVEN, len);
    let h = *classify::classify(cards, rules)
        .iter()
        .find(|h| h.is_bomb())?;
    Some((cards, h))
}

fn seat0_score(hooks: &dyn VariantHooks, facts: &DealFacts) -> Option<Centi> {
    deal_score(hooks, facts, Seat::new(0))
}

impl ScoringProfile {
    /// Probes the settlement with synthetic deals; a level the probe cannot price is worth 0.
    pub fn probe(hooks: &dyn VariantHooks) -> ScoringProfile {
        let rules = *hooks.rules();
        let n = rules.players;
        let mut profile = ScoringProfile::default();
        let base = |won: bool| -> DealFacts {
            let (places, cards_left): (Vec<u8>, _) = match (n, won) {
                (2, true) => (vec![0, 1], vec![0, 13]),
                (2, false) => (vec![1, 0], vec![13, 0]),
                (_, true) => (vec![0, 2, 1, 3], vec![0, 0, 6, 6]),
                (_, false) => (vec![1, 3, 0, 2], vec![6, 0, 6, 0]),
            };
            DealFacts {
                table: TableFacts {
                    players: n,
                    deal_number: 1,
                    places: places.into_iter().map(Seat::new).collect(),
                    cards_left,
                    bombs_played: Vec::new(),
                    bombs_in_hand: vec![Vec::new(); n as usize],
                },
                outcome: Outcome::Double,
            }
        };
        profile.double = seat0_score(hooks, &base(true)).unwrap_or(0);
        let mut last = 0;
        for len in 4..=8u8 {
            let Some((cards, h)) = synthetic_bomb(len, &rules) else {
                continue;
            };
            let fact: BombFact = bombs::fact(Seat::new(0), cards, &h);
            let mut sum = 0;
            for won in [true, false] {
                let mut played = base(won);
                played.table.bombs_played.push(fact);
                let mut kept = base(won);
                if let Some(k) = kept.table.bombs_in_hand.first_mut() {
                    k.push(fact);
                }
                sum += seat0_score(hooks, &played).unwrap_or(0)
                    - seat0_score(hooks, &kept).unwrap_or(0);
            }
            let lvl = level(&h);
            profile.bomb_played[lvl] = sum / 2;
            last = lvl;
        }
        // Levels above the largest probed bomb (chain bombs) are worth at least as much.
        for l in last + 1..LEVELS {
            profile.bomb_played[l] = profile.bomb_played[last];
        }
        profile
    }

    /// What playing this bomb is worth (0 for a non-bomb).
    pub fn bomb_worth(&self, h: &Hand) -> Centi {
        if h.is_bomb() {
            self.bomb_played[level(h)]
        } else {
            0
        }
    }
}

/// The finished deal's score for the team of `seat` (the seat and its partner; 2 players: the
/// seat) under the variant's settlement (`None` if the hook fails).
pub fn deal_score(hooks: &dyn VariantHooks, facts: &DealFacts, seat: Seat) -> Option<Centi> {
    let scores = hooks.settle(facts).ok()?.scores;
    let mine = *scores.get(seat.index())?;
    let partner = seat
        .partner(facts.table.players)
        .map_or(0, |p| scores.get(p.index()).copied().unwrap_or(0));
    Some(mine + partner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::testing::PlainHooks;

    #[test]
    fn plain_scoring_pays_nothing_for_bombs() {
        let p = ScoringProfile::probe(&PlainHooks::new(Rules::BAIBIAN));
        assert_eq!(p.double, 800);
        assert!(p.bomb_played.iter().all(|&v| v == 0));
    }
}
