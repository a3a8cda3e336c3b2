//! What a seat of a 升級 table may do now (GetHints): the legal cards, the level cards it may
//! declare (each decided by the engine itself on a copy, so the hints never disagree with
//! SubmitAction), whether it may deal or must bury; and what a bot seat does now.

use super::table::{Command, Table};
use crate::cards::CardSet;
use crate::game::{EngineError, Viewer};
use crate::seat::{Player, Seat};
use crate::service::status::ApiError;
use crate::shengji::order::BOTTOM_SIZE;
use crate::shengji::{Action, Phase, ShengjiHooks};

/// What a seat may do now (GetHints).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hints {
    pub your_turn: bool,
    pub legal: CardSet,
    pub declarable: CardSet,
    pub can_deal: bool,
    pub must_bury: bool,
    pub bury_points_allowed: bool,
    pub phase: Phase,
    pub seq: u64,
}

impl Table {
    /// What `seat` may do now: the engine itself decides each declarable card (a trial on a
    /// copy), so the hints never disagree with SubmitAction.
    pub fn hints(&self, seat: u8) -> Result<Hints, ApiError> {
        let seat = Seat::new(seat);
        if self.finished() {
            return Err(EngineError::GameOver.into());
        }
        let game = self.game();
        let dealing = game.phase() == Phase::Dealing;
        let declarable: CardSet = if dealing && game.declaration().is_none() {
            game.hand(seat)
                .iter()
                .filter(|&card| {
                    game.clone()
                        .apply(self.hooks(), Action::Declare { seat, card })
                        .is_ok()
                })
                .collect()
        } else {
            CardSet::EMPTY
        };
        let your_turn = game.turn() == Some(seat);
        Ok(Hints {
            your_turn,
            legal: game.legal_cards(seat),
            declarable,
            can_deal: dealing,
            must_bury: your_turn && game.phase() == Phase::Exchange,
            bury_points_allowed: self.hooks().bury_points_allowed(),
            phase: game.phase(),
            seq: self.seq(),
        })
    }
}

impl Table {
    /// The next action of a bot seat, if one may act now: while dealing, a bot that wants to
    /// declare, else the dealing seat when it is a bot (it deals at once, as a bot plays at once:
    /// the rest of the cards in one step, then the close); in the exchange and play, the bot
    /// whose turn it is. Decided from its view only.
    ///
    /// The close (the step after the 48th card, which ends the declarations) waits while a
    /// connected person seat could still declare: that seat declares or deals the close itself,
    /// or the dealing seat's turn deadline closes it (托管).
    pub fn bot_action(&self) -> Result<Option<(u8, Command)>, ApiError> {
        if self.finished() || self.record.bot_seats.is_empty() {
            return Ok(None);
        }
        let decide = |seat: u8| -> Result<Option<Action>, ApiError> {
            let mut bot = self.record.bot(seat)?;
            bot.bury_points = self.hooks().bury_points_allowed();
            Ok(bot.decide(&self.game().view(Viewer::Player(Player::new(seat)))))
        };
        if self.game().phase() == Phase::Dealing {
            if self.game().declaration().is_none() {
                for &seat in &self.record.bot_seats {
                    if let Some(Action::Declare { card, .. }) = decide(seat)? {
                        return Ok(Some((seat, Command::Declare(card))));
                    }
                }
            }
            return self.bot_deal();
        }
        let turn = self.game().turn().map(Seat::number);
        let Some(seat) = turn.filter(|&s| self.record.is_bot(s)) else {
            return Ok(None);
        };
        Ok(match decide(seat)? {
            Some(Action::Bury { cards, .. }) => Some((seat, Command::Bury(cards))),
            Some(Action::Play { card, .. }) => Some((seat, Command::Play(card))),
            _ => None,
        })
    }

    /// The dealing seat's step when that seat is a bot (see [`Table::bot_action`]).
    fn bot_deal(&self) -> Result<Option<(u8, Command)>, ApiError> {
        let game = self.game();
        let dealing = game.first_seat().number();
        if !self.record.is_bot(dealing) {
            return Ok(None);
        }
        let stock = game.stock().len();
        if stock > BOTTOM_SIZE {
            return Ok(Some((dealing, Command::Deal((stock - BOTTOM_SIZE) as u32))));
        }
        let person_may_declare = game.declaration().is_none()
            && (0..4u8).any(|seat| {
                !self.record.is_bot(seat)
                    && !self.is_disconnected(Player::new(seat))
                    && self.hints(seat).is_ok_and(|h| !h.declarable.is_empty())
            });
        Ok((!person_may_declare).then_some((dealing, Command::Deal(1))))
    }
}
