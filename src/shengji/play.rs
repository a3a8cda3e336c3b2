//! Tricks and the end of a deal (docs/rules/SHENGJI.md A2.6–A2.10): the follow rule, trick winners and
//! points, 摳底, the upgrade, the next dealer and the match end, through the platform hooks.
//!
//! Hook output is validated before it is applied; the caller runs the deal's last card on a copy,
//! so a failing hook leaves the game unchanged. Pure: no async, wire, script or store types.

use super::game::{DealResult, Event, Game, GameError, Phase};
use super::hooks::{
    BottomFacts, HookError, MatchFacts, NextDealerFacts, ShengjiHooks, Side, UpgradeFacts,
};
use super::order::{HAND_SIZE, SEATS, points_of};
use crate::cards::{Card, CardSet};
use crate::game::engine_error::EngineError;
use crate::seat::Seat;

/// The most a 摳底 multiplier may be.
pub const MAX_MULTIPLIER: u32 = 100;

fn bad_hook(hook: &str, message: String) -> GameError {
    EngineError::Hook(HookError::invalid(hook, message)).into()
}

impl Game {
    pub(super) fn check_play(&self, seat: Seat, card: Card) -> Result<(), GameError> {
        Game::check_seat(seat)?;
        if card.id() >= 54 {
            return Err(GameError::NotInDeck(card.id()));
        }
        self.check_phase("play", Phase::Playing)?;
        if seat != self.turn {
            return Err(GameError::NotYourTurn {
                seat,
                turn: self.turn,
            });
        }
        if !self.hand(seat).contains(card) {
            return Err(GameError::CardNotHeld { seat, card });
        }
        let legal = self.legal_cards(seat);
        if !legal.contains(card) {
            let led = match (self.order(), self.trick.first()) {
                (Some(o), Some(&(_, lead))) => o.effective_suit(lead),
                _ => return Err(EngineError::Setup("no order or lead in play".into()).into()),
            };
            return Err(GameError::MustFollow { seat, led, legal });
        }
        Ok(())
    }

    /// True when the next card played ends the deal (the fourth card of the 12th trick).
    pub(super) fn ends_deal(&self) -> bool {
        self.trick.len() == 3 && self.tricks_played as usize + 1 == HAND_SIZE
    }

    /// Plays a checked card; completes the trick after the fourth card.
    pub(super) fn play(
        &mut self,
        hooks: &dyn ShengjiHooks,
        seat: Seat,
        card: Card,
        events: &mut Vec<Event>,
    ) -> Result<(), GameError> {
        self.hands[seat.index()].remove(card);
        self.trick.push((seat, card));
        events.push(Event::Played { seat, card });
        if self.trick.len() < 4 {
            self.turn = seat.next(SEATS);
            return Ok(());
        }
        let order = self
            .order()
            .ok_or_else(|| EngineError::Setup("a trick without a trump suit".into()))?;
        let cards: Vec<Card> = self.trick.iter().map(|&(_, c)| c).collect();
        let winner_index = order.trick_winner(&cards).unwrap_or(0);
        let (winner, _) = self.trick[winner_index];
        let set: CardSet = cards.iter().copied().collect();
        let points = points_of(set);
        let team = winner.team() as usize;
        self.won[team] = self.won[team].union(set);
        self.tricks_played += 1;
        self.last_trick = std::mem::take(&mut self.trick);
        events.push(Event::TrickWon {
            winner,
            cards,
            points,
        });
        self.turn = winner;
        if self.tricks_played as usize == HAND_SIZE {
            let last = self.last_trick[winner_index];
            return self.end_deal(hooks, last, events);
        }
        Ok(())
    }

    /// Scores the deal (摳底, upgrade), asks the hooks who deals next and whether the match is
    /// over, and starts the next deal. `last` is the play that won the last trick.
    fn end_deal(
        &mut self,
        hooks: &dyn ShengjiHooks,
        last: (Seat, Card),
        events: &mut Vec<Event>,
    ) -> Result<(), GameError> {
        let (last_winner, winning_card) = last;
        let dealer = self.dealer.unwrap_or(self.first_seat);
        let dealer_team = dealer.team();
        let opp_team = 1 - dealer_team;
        let trick_points = [points_of(self.won[0]), points_of(self.won[1])];
        let buried_points = points_of(self.bottom);
        let multiplier = if last_winner.team() == opp_team {
            let m = hooks
                .bottom_multiplier(&BottomFacts {
                    buried_points,
                    last_trick_winner: last_winner,
                    winning_card,
                })
                .map_err(EngineError::Hook)?;
            if !(1..=MAX_MULTIPLIER).contains(&m) {
                return Err(bad_hook(
                    "bottom_multiplier",
                    format!("multiplier {m} outside 1..={MAX_MULTIPLIER}"),
                ));
            }
            m
        } else {
            0
        };
        let bottom_bonus = buried_points * multiplier;
        let opponents_points = trick_points[opp_team as usize] + bottom_bonus;
        let level = self.level();
        let upgrade = hooks
            .upgrade(&UpgradeFacts {
                opponents_points,
                level,
                opponents_level: self.levels[opp_team as usize],
            })
            .map_err(EngineError::Hook)?;
        if upgrade.levels > 12 {
            return Err(bad_hook(
                "upgrade",
                format!("{} levels (at most 12)", upgrade.levels),
            ));
        }
        let dealer_kept = upgrade.side == Side::Dealer;
        let up_team = if dealer_kept { dealer_team } else { opp_team };
        let levels_before = self.levels;
        let mut levels_after = levels_before;
        levels_after[up_team as usize] = levels_before[up_team as usize].raised(upgrade.levels);
        let winner = hooks
            .match_winner(&MatchFacts {
                dealer_team,
                level_played: level,
                levels_before,
                levels_after,
                dealer_kept,
            })
            .map_err(EngineError::Hook)?;
        if let Some(t) = winner.filter(|&t| t > 1) {
            return Err(bad_hook(
                "match_winner",
                format!("team {t} (teams are 0 and 1)"),
            ));
        }
        let next_dealer = match winner {
            Some(_) => None,
            None => {
                let d = hooks
                    .next_dealer(&NextDealerFacts {
                        dealer,
                        dealer_kept,
                    })
                    .map_err(EngineError::Hook)?;
                if d.number() >= SEATS {
                    return Err(bad_hook(
                        "next_dealer",
                        format!("seat {d} (seats are 0..4)"),
                    ));
                }
                Some(d)
            }
        };
        let result = DealResult {
            deal_number: self.deal_number,
            dealer,
            level,
            trump: self.trump.unwrap_or(crate::cards::Suit::Spades),
            buried: self.bottom,
            buried_points,
            trick_points,
            last_trick_winner: last_winner,
            multiplier,
            bottom_bonus,
            opponents_points,
            upgrade,
            levels_after,
            next_dealer,
            winner,
        };
        self.levels = levels_after;
        self.results.push(result.clone());
        events.push(Event::DealEnded(result));
        match next_dealer {
            Some(d) => self.start_deal(Some(d), events),
            None => {
                self.winner = winner;
                self.phase = Phase::Finished;
                if let Some(w) = winner {
                    events.push(Event::MatchEnded { winner: w });
                }
            }
        }
        Ok(())
    }
}
