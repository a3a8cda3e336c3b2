//! A plain-Rust implementation of [`VariantHooks`] for tests, simulations and benchmarks that
//! must run without the script host. Production games always use the variant scripts.
//!
//! Rules: the shown-card seating of 百變 (the holder leads; the holder of the twin swaps with the
//! seat opposite) or the classic previous-winner rule; base points 4/2/0 (2 players: 3/2/1 by the
//! loser's cards left), zero-sum; an escaper pays 3 to every other seat; a seat is an escaper
//! after three consecutive timeouts or an expired reconnect window.

use rand::Rng;
use rand::seq::IndexedRandom;

use super::hooks::{
    Centi, DealFacts, EscapeFacts, HookError, LineItem, Outcome, SeatingDecision, SeatingFacts,
    Settlement, SumRule, TimeoutFacts, VariantHooks,
};
use super::table::{Action, Game};
use crate::hand::Declared;
use crate::rules::Rules;
use crate::seat::Seat;

/// The test double.
#[derive(Clone, Debug)]
pub struct PlainHooks {
    pub rules: Rules,
    /// 雙明: partners see each other's hands.
    pub partners_see_hands: bool,
    /// Shown-card seating (true) or the classic previous-winner rule (false).
    pub shown_card_seating: bool,
    /// A seat that leads every deal, nobody swapping (scenario tests that control the table);
    /// `None`: the seating rule above.
    pub fixed_leader: Option<Seat>,
}

impl PlainHooks {
    pub fn new(rules: Rules) -> PlainHooks {
        PlainHooks {
            rules,
            partners_see_hands: false,
            shown_card_seating: rules.players == 2
                || rules.wild_jokers != crate::rules::WildJokers::None,
            fixed_leader: None,
        }
    }

    /// These hooks with `seat` leading every deal and nobody swapping.
    pub fn led_by(self, seat: Seat) -> PlainHooks {
        PlainHooks {
            fixed_leader: Some(seat),
            ..self
        }
    }
}

/// The random player of tests and simulations: `seat`'s turn in `game` as a pass (where passing
/// is allowed: always when nothing can be played, else with probability 0.4) or one of its legal
/// plays chosen uniformly, with the interpretation declared. `None`: the seat has neither.
pub fn random_turn<R: Rng + ?Sized>(game: &Game, seat: Seat, rng: &mut R) -> Option<Action> {
    let (plays, can_pass) = game.legal_plays(seat);
    if can_pass && (plays.is_empty() || rng.random_bool(0.4)) {
        return Some(Action::Pass);
    }
    let p = plays.choose(rng)?;
    Some(Action::Play {
        cards: game.hand(seat).take(p.cards)?,
        declared: Some(Declared {
            kind: p.hand.kind,
            key: p.hand.key(),
        }),
    })
}

fn line(seat: Seat, label: &str, amount: Centi, detail: &str) -> LineItem {
    LineItem {
        seat,
        label: label.into(),
        amount,
        detail: detail.into(),
    }
}

impl VariantHooks for PlainHooks {
    fn rules(&self) -> &Rules {
        &self.rules
    }

    fn partners_see_hands(&self) -> bool {
        self.partners_see_hands
    }

    fn sum_rule(&self) -> SumRule {
        SumRule::Zero
    }

    fn seating(&self, f: &SeatingFacts) -> Result<SeatingDecision, HookError> {
        if let Some(leader) = self.fixed_leader {
            return Ok(SeatingDecision { leader, swap: None });
        }
        let n = f.players;
        let random = Seat::new((f.random % u64::from(n)) as u8);
        if !self.shown_card_seating {
            let leader = match &f.previous {
                Some(p) if p.escaped.is_none() && p.outcome != Some(Outcome::Double) => {
                    p.places.first().copied().unwrap_or(random)
                }
                _ => random,
            };
            return Ok(SeatingDecision { leader, swap: None });
        }
        let leader = f.shown_holders[0].unwrap_or(random);
        let swap = match (n, f.shown_holders[1]) {
            (4, Some(twin)) if twin != leader && Some(twin) != leader.partner(4) => {
                leader.partner(4).map(|opposite| (twin, opposite))
            }
            _ => None,
        };
        Ok(SeatingDecision { leader, swap })
    }

    fn settle(&self, f: &DealFacts) -> Result<Settlement, HookError> {
        let n = f.table.players as usize;
        let mut scores = vec![0; n];
        let mut lines = Vec::new();
        let first = *f
            .table
            .places
            .first()
            .ok_or_else(|| HookError::invalid("settle", "no places".into()))?;
        if n == 2 {
            let units = match f.outcome {
                Outcome::Double => 3,
                Outcome::Single => 2,
                Outcome::Draw => 1,
            } * 100;
            let loser = first.next(2);
            scores[first.index()] = units;
            scores[loser.index()] = -units;
        } else {
            let base = match f.outcome {
                Outcome::Double => 400,
                Outcome::Single => 200,
                Outcome::Draw => 0,
            };
            for s in Seat::all(4) {
                scores[s.index()] = if s.team() == first.team() {
                    base
                } else {
                    -base
                };
            }
        }
        for (s, &v) in scores.iter().enumerate() {
            lines.push(line(Seat::at(s), "base", v, "plain test scoring"));
        }
        Ok(Settlement { scores, lines })
    }

    fn settle_escape(&self, f: &EscapeFacts) -> Result<Settlement, HookError> {
        let n = f.table.players as usize;
        let mut scores = vec![300; n];
        scores[f.escaper.index()] = -300 * (n as Centi - 1);
        let lines = scores
            .iter()
            .enumerate()
            .map(|(s, &v)| line(Seat::at(s), "escape", v, "escape penalty"))
            .collect();
        Ok(Settlement { scores, lines })
    }

    fn timeout_is_escape(&self, f: &TimeoutFacts) -> Result<bool, HookError> {
        Ok(f.disconnected || f.consecutive_timeouts >= 3)
    }
}
