//! A deal up to the first trick (docs/rules/SHENGJI.md A2.2–A2.5): the shuffle, dealing one card at a time
//! as logged steps, 亮主 between the steps, the no-declaration rule on the bottom, and the
//! exchange (the dealer takes the 6 底牌 and buries 6).
//!
//! Each `check_*` validates an action without changing anything; the matching method applies it.
//! Pure: depends on the card order and the determinism helpers only.

use rand::RngCore;
use rand::seq::SliceRandom;

use super::game::{Event, Game, GameError, Phase, STREAM_DOMAIN};
use super::hooks::ShengjiHooks;
use super::order::{BOTTOM_SIZE, HAND_SIZE, ONE_DECK, SEATS, bottom_trump, points_of};
use crate::cards::{Card, CardSet};
use crate::determinism::deal_stream;
use crate::seat::Seat;

/// Cards dealt to the seats (4 × 12).
pub const DEALT_TO_SEATS: u8 = SEATS * HAND_SIZE as u8;

impl Game {
    /// Begins the next deal: a fresh deck (the preset one for deal 1, if any) from the deal's
    /// stream. `dealer` is `None` for a contested deal 1, whose first seat the stream picks.
    pub(super) fn start_deal(&mut self, dealer: Option<Seat>, events: &mut Vec<Event>) {
        self.deal_number += 1;
        let mut rng = deal_stream(STREAM_DOMAIN, &self.setup.seed, self.deal_number);
        // Drawn first in every deal, so the shuffle below uses the same stream position always.
        let seed_seat = Seat::new((rng.next_u32() % u32::from(SEATS)) as u8);
        self.deck = match (&self.setup.deck, self.deal_number) {
            (Some(d), 1) => d.clone(),
            _ => {
                let mut d: Vec<Card> = ONE_DECK.iter().collect();
                d.shuffle(&mut rng);
                d
            }
        };
        self.dealer = dealer;
        self.first_seat = dealer.unwrap_or(seed_seat);
        self.phase = Phase::Dealing;
        self.dealt = 0;
        self.hands = [CardSet::EMPTY; 4];
        self.declaration = None;
        self.trump = None;
        self.turned.clear();
        self.bottom = self
            .deck
            .iter()
            .skip(DEALT_TO_SEATS as usize)
            .copied()
            .collect();
        self.turn = self.first_seat;
        self.trick.clear();
        self.tricks_played = 0;
        self.won = [CardSet::EMPTY; 2];
        self.last_trick.clear();
        events.push(Event::DealStarted {
            deal_number: self.deal_number,
            dealer: self.dealer,
            first_seat: self.first_seat,
            levels: self.levels,
            level: self.level(),
        });
    }

    /// One step of the deal: the next card to the next seat in turn order from the first seat,
    /// or, after the 48th card, the end of the deal.
    pub(super) fn deal_step(&mut self, events: &mut Vec<Event>) {
        if self.dealt < DEALT_TO_SEATS {
            let seat = Seat::new((self.first_seat.number() + self.dealt % SEATS) % SEATS);
            if let Some(&card) = self.deck.get(self.dealt as usize) {
                self.hands[seat.index()].insert(card);
                events.push(Event::CardDealt {
                    seat,
                    card: Some(card),
                });
            }
            self.dealt += 1;
            return;
        }
        self.close_deal(events);
    }

    pub(super) fn check_declare(&self, seat: Seat, card: Card) -> Result<(), GameError> {
        Game::check_seat(seat)?;
        self.check_phase("declare", Phase::Dealing)?;
        if let Some((seat, card)) = self.declaration {
            return Err(GameError::AlreadyDeclared { seat, card });
        }
        if !self.hand(seat).contains(card) {
            return Err(GameError::CardNotHeld { seat, card });
        }
        // Jokers have no suit and are never level cards.
        if card.suit().is_none() || card.rank() != self.level().rank() {
            return Err(GameError::NotALevelCard {
                card,
                level: self.level(),
            });
        }
        Ok(())
    }

    /// 亮主 (checked): the card's suit becomes trump; in a contested deal the seat becomes the
    /// dealer (「哪一方先叫主則為莊家」).
    pub(super) fn declare(&mut self, seat: Seat, card: Card, events: &mut Vec<Event>) {
        let Some(trump) = card.suit() else { return };
        let becomes_dealer = self.dealer.is_none();
        if becomes_dealer {
            self.dealer = Some(seat);
        }
        self.declaration = Some((seat, card));
        self.trump = Some(trump);
        events.push(Event::Declared {
            seat,
            card,
            trump,
            becomes_dealer,
        });
    }

    /// The end of the deal: without a declaration the bottom is turned over and fixes the trump
    /// suit; the dealer (the first seat if still undecided) takes the bottom.
    fn close_deal(&mut self, events: &mut Vec<Event>) {
        let dealer = *self.dealer.get_or_insert(self.first_seat);
        if self.trump.is_none() {
            let turned: Vec<Card> = self
                .deck
                .iter()
                .skip(DEALT_TO_SEATS as usize)
                .copied()
                .collect();
            // Six cards hold at least four suited ones; the fallback is never taken.
            let trump = bottom_trump(&turned, self.level()).unwrap_or(crate::cards::Suit::Spades);
            self.trump = Some(trump);
            events.push(Event::BottomTurned {
                cards: turned.clone(),
                trump,
            });
            self.turned = turned;
        }
        let bottom = self.bottom;
        self.hands[dealer.index()] = self.hands[dealer.index()].union(bottom);
        self.phase = Phase::Exchange;
        self.turn = dealer;
        events.push(Event::BottomTaken {
            seat: dealer,
            cards: Some(bottom),
        });
    }

    pub(super) fn check_bury(
        &self,
        hooks: &dyn ShengjiHooks,
        seat: Seat,
        cards: CardSet,
    ) -> Result<(), GameError> {
        Game::check_seat(seat)?;
        self.check_phase("bury", Phase::Exchange)?;
        let dealer = self.dealer.unwrap_or(self.first_seat);
        if seat != dealer {
            return Err(GameError::NotTheDealer { seat, dealer });
        }
        if cards.len() != BOTTOM_SIZE {
            return Err(GameError::BuryCount(cards.len()));
        }
        if !cards.is_subset(self.hand(seat)) {
            return Err(GameError::BuryNotHeld);
        }
        let points = points_of(cards);
        if points > 0 && !hooks.bury_points_allowed() {
            return Err(GameError::PointsBuried(points));
        }
        Ok(())
    }

    /// The exchange (checked): the six cards leave the dealer's hand as the new bottom; the dealer
    /// leads the first trick.
    pub(super) fn bury(&mut self, seat: Seat, cards: CardSet, events: &mut Vec<Event>) {
        self.hands[seat.index()] = self.hands[seat.index()].difference(cards);
        self.bottom = cards;
        self.phase = Phase::Playing;
        self.turn = seat;
        events.push(Event::Buried {
            seat,
            cards: Some(cards),
        });
    }
}
