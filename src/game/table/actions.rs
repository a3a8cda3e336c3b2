//! The table's actions: the check-then-apply step of each action, plays, passes and tricks,
//! timeouts and 托管, escapes, the deal's end and settlement, and the next deal.

use rand::seq::SliceRandom;
use rand::{Rng, RngCore};
use rand_chacha::ChaCha20Rng;

use super::{Action, DealResult, Entry, Event, Game, GameError, Phase, Top, best_bombs};
use crate::cards::{Card, CardSet, RankCounts};
use crate::classify;
use crate::determinism::{apply_atomically, deal_stream};
use crate::game::engine_error::EngineError;
use crate::game::flow::Turns;
use crate::game::hooks::{
    BombFact, DealFacts, EscapeFacts, EscapeReason, HookError, Outcome, PreviousDeal, SeatingFacts,
    Settlement, TableFacts, TimeoutFacts, VariantHooks,
};
use crate::hand::{Declared, Hand};
use crate::moves;
use crate::seat::Seat;

fn deal_rng(seed: &[u8; 32], deal_number: u32) -> ChaCha20Rng {
    deal_stream(b"shuangkou-deal", seed, deal_number)
}

/// The twin of a card: the same rank and suit in the other deck.
fn twin(card: Card) -> Card {
    let id = card.id();
    let other = if id >= 54 { id - 54 } else { id + 54 };
    Card::new(other).unwrap_or(card)
}

/// What every step of an action carries down the rules: the variant's hooks, the time the action
/// was accepted, and the events it emits, in order.
pub(super) struct Step<'a> {
    pub(super) hooks: &'a dyn VariantHooks,
    pub(super) now: u64,
    pub(super) events: &'a mut Vec<Event>,
}

impl Game {
    // ---- actions ----

    /// Applies an action (check, then apply). On error nothing changed.
    pub fn apply(
        &mut self,
        hooks: &dyn VariantHooks,
        entry: Entry,
    ) -> Result<Vec<Event>, GameError> {
        if self.phase == Phase::Finished {
            return Err(EngineError::GameOver.into());
        }
        if entry.player.index() >= self.players() as usize {
            return Err(GameError::NoSuchPlayer(entry.player));
        }
        let mut events = Vec::new();
        // Plays that do not go out and passes are fully checked before any change and call no
        // hook, so they apply in place. Anything that may call a hook (going out ends tricks and
        // deals, escapes, timeouts) works on a copy, so a hook failure half-way leaves `self`
        // untouched.
        let in_place = match entry.action {
            Action::Pass => true,
            Action::Play { cards, .. } => self
                .seat_of(entry.player)
                .is_some_and(|s| self.hand(s).difference(cards) != CardSet::EMPTY),
            _ => false,
        };
        apply_atomically(self, in_place, |g| {
            let mut step = Step {
                hooks,
                now: entry.at,
                events: &mut events,
            };
            g.apply_inner(entry, &mut step)?;
            g.seq += 1;
            Ok::<(), GameError>(())
        })?;
        Ok(events)
    }

    fn apply_inner(&mut self, entry: Entry, step: &mut Step<'_>) -> Result<(), GameError> {
        let seat = self
            .seat_of(entry.player)
            .ok_or(GameError::NoSuchPlayer(entry.player))?;
        let now = step.now;
        match entry.action {
            Action::Play { cards, declared } => {
                self.check_turn(seat)?;
                let hand = self.check_play(seat, cards, declared)?;
                self.timeouts[seat.index()] = 0;
                self.play(seat, cards, hand, false, step)
            }
            Action::Pass => {
                self.check_turn(seat)?;
                if self.top.is_none() {
                    return Err(GameError::MustLead);
                }
                self.timeouts[seat.index()] = 0;
                self.pass(seat, false, step);
                Ok(())
            }
            Action::Leave => self.escape(seat, EscapeReason::Left, step),
            Action::Timeout => {
                self.check_turn(seat)?;
                // A disconnected seat may be played for before its deadline (托管 at once).
                if !self.deadline_passed(now) && !self.is_disconnected(entry.player) {
                    return Err(GameError::NotDue);
                }
                if self.count_timeout(step.hooks, seat)? {
                    return self.escape(seat, EscapeReason::Timeouts, step);
                }
                self.auto_play(seat, step)
            }
            Action::Auto { cards, declared } => {
                self.check_turn(seat)?;
                if self.deadline_passed(now) {
                    if self.count_timeout(step.hooks, seat)? {
                        return self.escape(seat, EscapeReason::Timeouts, step);
                    }
                } else if !self.is_disconnected(entry.player) {
                    return Err(GameError::NotDue);
                }
                if cards.is_empty() {
                    if self.top.is_none() {
                        return Err(GameError::MustLead);
                    }
                    self.pass(seat, true, step);
                    return Ok(());
                }
                let hand = self.check_play(seat, cards, declared)?;
                self.play(seat, cards, hand, true, step)
            }
            Action::Disconnect => {
                if self.disconnected[entry.player.index()].is_none() {
                    self.disconnected[entry.player.index()] = Some(now);
                    step.events.push(Event::Disconnected { seat });
                }
                Ok(())
            }
            Action::Reconnect => {
                if self.disconnected[entry.player.index()].take().is_none() {
                    return Err(GameError::NotDisconnected);
                }
                step.events.push(Event::Reconnected { seat });
                Ok(())
            }
            Action::Abort => {
                self.phase = Phase::Finished;
                self.deadline = None;
                self.top = None;
                step.events.push(Event::Aborted);
                Ok(())
            }
            Action::ReconnectExpired => {
                let Some(since) = self.disconnected[entry.player.index()] else {
                    return Err(GameError::NotDisconnected);
                };
                if now < since.saturating_add(self.config.reconnect_ms) {
                    return Err(GameError::WindowOpen);
                }
                let facts = TimeoutFacts {
                    seat,
                    consecutive_timeouts: self.timeouts[seat.index()],
                    disconnected: true,
                };
                if step
                    .hooks
                    .timeout_is_escape(&facts)
                    .map_err(EngineError::Hook)?
                {
                    self.escape(seat, EscapeReason::Disconnected, step)
                } else {
                    Ok(())
                }
            }
        }
    }

    /// Counts a timeout of the seat to act; true when the variant rules it an escape.
    fn count_timeout(&mut self, hooks: &dyn VariantHooks, seat: Seat) -> Result<bool, GameError> {
        let count = self.timeouts[seat.index()] + 1;
        self.timeouts[seat.index()] = count;
        if count < self.config.max_consecutive_timeouts.max(1) {
            return Ok(false);
        }
        let facts = TimeoutFacts {
            seat,
            consecutive_timeouts: count,
            // `disconnected` means "the reconnect window ran out" (hooks.rs): a turn timeout of a
            // disconnected seat is not that; `ReconnectExpired` decides.
            disconnected: false,
        };
        Ok(hooks.timeout_is_escape(&facts).map_err(EngineError::Hook)?)
    }

    fn check_turn(&self, seat: Seat) -> Result<(), GameError> {
        if seat != self.turn {
            return Err(GameError::NotYourTurn {
                seat,
                turn: self.turn,
            });
        }
        Ok(())
    }

    fn check_play(
        &self,
        seat: Seat,
        cards: CardSet,
        declared: Option<Declared>,
    ) -> Result<Hand, GameError> {
        if cards.is_empty() || !cards.is_subset(self.hand(seat)) {
            return Err(GameError::CardsNotHeld);
        }
        let prev = self.top.as_ref().map(|t| t.hand);
        classify::resolve(cards.rank_counts(), prev.as_ref(), declared, &self.rules)
            .map_err(GameError::Play)
    }

    /// 托管: pass where passing is legal, otherwise the weakest legal lead.
    fn auto_play(&mut self, seat: Seat, step: &mut Step<'_>) -> Result<(), GameError> {
        if self.top.is_some() {
            self.pass(seat, true, step);
            return Ok(());
        }
        let hand = self.hand(seat);
        let lead = moves::weakest_lead(hand.rank_counts(), &self.rules)
            .ok_or_else(|| EngineError::Setup("the seat to act holds no card".into()))?;
        let cards = hand
            .take(lead.cards)
            .ok_or_else(|| EngineError::Setup("auto-play picked cards not held".into()))?;
        self.play(seat, cards, lead.hand, true, step)
    }

    fn set_turn(&mut self, seat: Seat, now: u64) {
        self.turn = seat;
        self.deadline = self.config.turn_ms.map(|ms| now.saturating_add(ms));
    }

    fn play(
        &mut self,
        seat: Seat,
        cards: CardSet,
        hand: Hand,
        auto: bool,
        step: &mut Step<'_>,
    ) -> Result<(), GameError> {
        let s = seat.index();
        self.hands[s] = self.hands[s].difference(cards);
        let left = self.hands[s].len() as u8;
        if hand.is_bomb() {
            self.bombs.push(bomb_fact(seat, cards.rank_counts(), &hand));
        }
        self.top = Some(Top { seat, cards, hand });
        self.passed = 0;
        step.events.push(Event::Played {
            seat,
            cards,
            hand,
            cards_left: left,
            auto,
        });
        if left == 0 {
            self.out.push(seat);
            step.events.push(Event::PlayerOut {
                seat,
                place: self.out.len() as u8,
            });
            if self.deal_is_over() {
                return self.end_deal(step);
            }
        }
        let next = self.next_active_after(seat);
        self.set_turn(next, step.now);
        Ok(())
    }

    fn pass(&mut self, seat: Seat, auto: bool, step: &mut Step<'_>) {
        self.passed |= seat.bit();
        step.events.push(Event::Passed { seat, auto });
        let Some(top) = self.top else { return };
        if self.trick_open(top.seat, self.passed) {
            let next = self.next_active_after(seat);
            self.set_turn(next, step.now);
            return;
        }
        // Everyone else passed: the trick goes to the top play (or by 接風 to its partner).
        let (leader, jie_feng) = self.leader_after_trick(top.seat);
        step.events.push(Event::TrickWon {
            winner: top.seat,
            leader,
            jie_feng,
        });
        self.top = None;
        self.passed = 0;
        self.trick_leader = leader;
        self.set_turn(leader, step.now);
    }

    /// Every seat in finishing order ([`Turns::finishing_places`]).
    pub(super) fn places(&self) -> Vec<Seat> {
        self.finishing_places(self.turn)
    }

    /// The table as the settlement hooks are told it, with the finishing order `places`; the
    /// bombs left in each hand are arranged for what the variant pays for them
    /// ([`VariantHooks::in_hand_worth`]).
    fn table_facts(
        &self,
        places: Vec<Seat>,
        hooks: &dyn VariantHooks,
    ) -> Result<TableFacts, HookError> {
        let worth = hooks.in_hand_worth()?;
        Ok(TableFacts {
            players: self.players(),
            deal_number: self.deal_number,
            places,
            cards_left: Seat::all(self.players())
                .map(|s| self.hand(s).len() as u8)
                .collect(),
            bombs_played: self.bombs.clone(),
            bombs_in_hand: Seat::all(self.players())
                .map(|s| best_bombs(s, self.hand(s).rank_counts(), &self.rules, worth.as_deref()))
                .collect(),
        })
    }

    fn end_deal(&mut self, step: &mut Step<'_>) -> Result<(), GameError> {
        let places = self.places();
        let outcome = self
            .deal_outcome(&places, &self.rules)
            .ok_or_else(|| EngineError::Setup("deal ended without an outcome".into()))?;
        let facts = DealFacts {
            table: self
                .table_facts(places.clone(), step.hooks)
                .map_err(EngineError::Hook)?,
            outcome,
        };
        let settlement = step.hooks.settle(&facts).map_err(EngineError::Hook)?;
        self.settle(Some(outcome), None, places, settlement, step)
    }

    fn escape(
        &mut self,
        seat: Seat,
        reason: EscapeReason,
        step: &mut Step<'_>,
    ) -> Result<(), GameError> {
        if self.out.contains(&seat) {
            // Gone out already (no cards, no more turns this deal): not an escape. The partner
            // plays on, the deal is settled as usual, and the match ends with this deal (the
            // player is gone). RULES.md says nothing on it; see docs/VARIANTS.md.
            self.config.deals = self.deal_number;
            step.events.push(Event::Left { seat });
            return Ok(());
        }
        // The escape path never traps the table: an escape settlement that fails (a script
        // error or a malformed result) ends the deal with no points exchanged and the failure
        // recorded in a `settlement_failed` line per seat.
        let players = self.players();
        let settlement = self
            .table_facts(self.out.clone(), step.hooks)
            .and_then(|table| {
                step.hooks.settle_escape(&EscapeFacts {
                    table,
                    escaper: seat,
                    reason,
                })
            })
            .and_then(|s| check_settlement(&s, players).map(|()| s))
            .unwrap_or_else(|e| failed_settlement(players, &EngineError::Hook(e)));
        step.events.push(Event::Escaped { seat, reason });
        let places = self.places();
        // An escape ends the deal and the match: the player is gone.
        self.config.deals = self.deal_number;
        self.settle(None, Some(seat), places, settlement, step)
    }

    fn settle(
        &mut self,
        outcome: Option<Outcome>,
        escaped: Option<Seat>,
        places: Vec<Seat>,
        settlement: Settlement,
        step: &mut Step<'_>,
    ) -> Result<(), GameError> {
        check_settlement(&settlement, self.players()).map_err(EngineError::Hook)?;
        for ((_, player), score) in self.seating.iter().zip(&settlement.scores) {
            let total = &mut self.totals[player.index()];
            *total = total.saturating_add(*score);
        }
        let result = DealResult {
            deal_number: self.deal_number,
            outcome,
            escaped,
            places,
            players: self.seating.clone(),
            settlement,
        };
        self.results.push(&result);
        step.events.push(Event::DealEnded(result));
        if self.deal_number >= self.config.deals {
            self.phase = Phase::Finished;
            self.deadline = None;
            self.top = None;
            step.events.push(Event::MatchEnded {
                totals: self.totals.clone(),
            });
            return Ok(());
        }
        self.start_deal(step)
    }

    /// Deals the next deal and seats it.
    pub(super) fn start_deal(&mut self, step: &mut Step<'_>) -> Result<(), GameError> {
        self.deal_number += 1;
        let n = self.players() as usize;
        let size = self.rules.hand_size as usize;
        let mut rng = deal_rng(&self.seed, self.deal_number);
        let hands: Vec<CardSet> = match (&self.preset, self.deal_number) {
            (Some(p), 1) => p.clone(),
            _ => {
                let mut deck: Vec<Card> = Card::all().collect();
                deck.shuffle(&mut rng);
                (0..n)
                    .map(|s| deck[s * size..(s + 1) * size].iter().copied().collect())
                    .collect()
            }
        };
        let dealt = hands.iter().fold(CardSet::EMPTY, |a, h| a.union(*h));
        let dealt_cards: Vec<Card> = dealt.iter().collect();
        let shown = *dealt_cards
            .get(rng.random_range(0..dealt_cards.len().max(1)))
            .ok_or_else(|| EngineError::Setup("nothing dealt".into()))?;
        let holder = |c: Card| hands.iter().position(|h| h.contains(c)).map(Seat::at);
        let previous = self.results.last().map(|r| PreviousDeal {
            outcome: r.outcome,
            // The previous deal's seats, mapped to the seats those players have now.
            places: r
                .places
                .iter()
                .filter_map(|&s| r.players.player_at(s).and_then(|p| self.seat_of(p)))
                .collect(),
            escaped: r
                .escaped
                .and_then(|s| r.players.player_at(s).and_then(|p| self.seat_of(p))),
        });
        let facts = SeatingFacts {
            players: n as u8,
            deal_number: self.deal_number,
            shown_card: shown,
            shown_holders: [holder(shown), holder(twin(shown))],
            previous,
            random: rng.next_u64(),
        };
        let decision = step.hooks.seating(&facts).map_err(EngineError::Hook)?;
        if decision.leader.index() >= n {
            return Err(EngineError::Hook(HookError::invalid(
                "seating",
                format!("leader {} is not a seat", decision.leader),
            ))
            .into());
        }
        let mut hands = hands;
        let mut leader = decision.leader;
        if let Some((a, b)) = decision.swap {
            if a.index() >= n || b.index() >= n || a == b {
                return Err(EngineError::Hook(HookError::invalid(
                    "seating",
                    format!("swap ({a}, {b}) is not two different seats"),
                ))
                .into());
            }
            self.seating.swap(a, b);
            hands.swap(a.index(), b.index());
            if leader == a {
                leader = b;
            } else if leader == b {
                leader = a;
            }
        }
        self.hands = hands;
        self.dealt = dealt;
        self.shown_card = shown;
        self.top = None;
        self.passed = 0;
        self.out.clear();
        self.bombs.clear();
        self.timeouts = vec![0; n];
        self.trick_leader = leader;
        self.set_turn(leader, step.now);
        step.events.push(Event::DealStarted {
            deal_number: self.deal_number,
            players: self.seating.clone(),
            leader,
            shown_card: shown,
            hands: self.hands.clone(),
        });
        Ok(())
    }
}

fn bomb_fact(seat: Seat, cards: RankCounts, hand: &Hand) -> BombFact {
    crate::game::bombs::fact(seat, cards, hand)
}

/// The label of the lines of a settlement the variant could not compute.
pub const SETTLEMENT_FAILED: &str = "settlement_failed";

/// The settlement recorded when the variant's escape settlement fails: no points, one
/// [`SETTLEMENT_FAILED`] line per seat saying why (at most 256 characters).
fn failed_settlement(players: u8, error: &EngineError) -> Settlement {
    let detail: String = format!("the variant's settlement failed, no points exchanged: {error}")
        .chars()
        .take(256)
        .collect();
    Settlement {
        scores: vec![0; players as usize],
        lines: Seat::all(players)
            .map(|seat| crate::game::hooks::LineItem {
                seat,
                label: SETTLEMENT_FAILED.to_string(),
                amount: 0,
                detail: detail.clone(),
            })
            .collect(),
    }
}

/// Checks a settlement's shape: one score per seat, and each seat's lines add up to its score.
fn check_settlement(s: &Settlement, players: u8) -> Result<(), HookError> {
    let bad = |message: String| HookError::invalid("settle", message);
    if s.scores.len() != players as usize {
        return Err(bad(format!(
            "{} scores for {players} seats",
            s.scores.len()
        )));
    }
    let mut sums = vec![0i64; players as usize];
    for l in &s.lines {
        let slot = sums
            .get_mut(l.seat.index())
            .ok_or_else(|| bad(format!("line for seat {}", l.seat)))?;
        *slot = slot.saturating_add(l.amount);
    }
    if s.lines.is_empty() {
        return Ok(());
    }
    for (seat, (sum, score)) in sums.iter().zip(&s.scores).enumerate() {
        if sum != score {
            return Err(bad(format!(
                "seat {seat}: lines add up to {sum}, score is {score}"
            )));
        }
    }
    Ok(())
}
