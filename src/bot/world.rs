//! A sampled world: one determinization of a player's view (the hidden hands dealt at random
//! from the cards it has not seen), played forward by the bots to the end of the deal and settled
//! by the variant.
//!
//! Sampling keeps everything the view knows: its own hand, the partner's shown hand (雙明), every
//! seat's card count, the cards played and the trick. The deal moves by the engine's own turn
//! rules ([`crate::game::flow`]: turn order, trick end, 接風, deal end, places and outcome), which
//! a world implements [`Turns`] for. Pure: ranks, rules, the hooks' settlement and a seeded RNG.

use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::view::Table;
use super::{Decision, PlayerView};
use crate::cards::{Rank, RankCounts};
use crate::game::bombs;
use crate::game::flow::Turns;
use crate::game::hooks::{BombFact, DealFacts, InHandWorth, TableFacts};
use crate::hand::Hand;
use crate::rules::Rules;
use crate::seat::Seat;

/// Most steps a playout may take (far above any deal; a guard, not a rule).
const MAX_STEPS: u32 = 2_000;

/// One determinized deal in progress.
#[derive(Clone, Debug)]
pub struct World {
    rules: Rules,
    n: u8,
    partners_see: bool,
    hands: [RankCounts; 4],
    played: RankCounts,
    turn: Seat,
    top: Option<(Seat, Hand)>,
    passed: u8,
    out: Vec<Seat>,
    bombs: Vec<BombFact>,
    deal_number: u32,
}

impl World {
    /// Deals the cards `view` has not seen at random to the seats whose hands it cannot see,
    /// each receiving its known number of cards.
    pub fn sample(view: &PlayerView, rng: &mut ChaCha8Rng) -> World {
        let n = view.players();
        let me = view.seat();
        let mut pool: Vec<Rank> = view.unseen().ranks().collect();
        pool.shuffle(rng);
        let mut hands = [RankCounts::EMPTY; 4];
        hands[me.index()] = view.hand();
        let shown = view.partner_hand();
        let mut next = pool.into_iter();
        for s in Seat::all(n) {
            if s == me {
                continue;
            }
            if Some(s) == view.partner() {
                if let Some(h) = shown {
                    hands[s.index()] = h;
                    continue;
                }
            }
            let mut h = RankCounts::EMPTY;
            for r in next.by_ref().take(view.count(s) as usize) {
                h.add(r, 1);
            }
            hands[s.index()] = h;
        }
        World {
            rules: *view.rules(),
            n,
            partners_see: shown.is_some(),
            hands,
            played: view.played(),
            turn: me,
            top: view.top(),
            passed: view.passed_mask(),
            out: view.out().to_vec(),
            bombs: view.bombs_played().to_vec(),
            deal_number: view.deal_number(),
        }
    }

    pub fn turn(&self) -> Seat {
        self.turn
    }

    pub fn hand(&self, seat: Seat) -> RankCounts {
        self.hands.get(seat.index()).copied().unwrap_or_default()
    }

    fn partner(&self, seat: Seat) -> Option<Seat> {
        seat.partner(self.n)
    }

    /// What `seat` would see in this world.
    pub fn view_of(&self, seat: Seat) -> PlayerView {
        let mut counts = [0u8; 4];
        for s in Seat::all(self.n) {
            counts[s.index()] = self.hand(s).total() as u8;
        }
        let partner_hand = self
            .partner(seat)
            .filter(|_| self.partners_see)
            .map(|p| self.hand(p));
        let table = Table::new(counts, self.played, self.top, self.passed, &self.out);
        PlayerView::from_parts(self.rules, seat, self.hand(seat), partner_hand, table)
    }

    /// Applies the decision of the seat to act; true when the deal is over. A decision the
    /// seat cannot make (cards not held, a pass while leading) plays its weakest card instead.
    pub fn apply(&mut self, d: Decision) -> bool {
        let seat = self.turn;
        let s = seat.index();
        match d {
            Decision::Play(p) if p.cards.is_subset(self.hands[s]) => {
                self.hands[s] = self.hands[s].minus(p.cards).unwrap_or_default();
                self.played = self.played.plus(p.cards);
                if p.hand.is_bomb() {
                    self.bombs.push(bombs::fact(seat, p.cards, &p.hand));
                }
                self.top = Some((seat, p.hand));
                self.passed = 0;
                if self.hands[s].is_empty() {
                    self.out.push(seat);
                    if self.deal_is_over() {
                        return true;
                    }
                }
                self.turn = self.next_active_after(seat);
                false
            }
            Decision::Pass if self.top.is_some() => {
                self.pass(seat);
                false
            }
            _ => match crate::moves::weakest_lead(self.hands[s], &self.rules) {
                Some(p) => self.apply(Decision::Play(p)),
                None => true,
            },
        }
    }

    fn pass(&mut self, seat: Seat) {
        self.passed |= seat.bit();
        let Some((top_seat, _)) = self.top else {
            return;
        };
        if self.trick_open(top_seat, self.passed) {
            self.turn = self.next_active_after(seat);
            return;
        }
        let (leader, _) = self.leader_after_trick(top_seat);
        self.top = None;
        self.passed = 0;
        self.turn = leader;
    }

    /// Plays the deal to its end with `policy` deciding for every seat; false if it did not end
    /// within the guard.
    pub fn play_out(&mut self, mut policy: impl FnMut(&PlayerView) -> Decision) -> bool {
        for _ in 0..MAX_STEPS {
            let view = self.view_of(self.turn);
            if self.apply(policy(&view)) {
                return true;
            }
        }
        false
    }

    /// The facts the settlement hook is told about this (finished) deal, the bombs left in each
    /// hand arranged for what the variant pays for them (`worth`, as the deal engine does).
    pub fn facts(&self, worth: Option<&InHandWorth>) -> Option<DealFacts> {
        let places = self.finishing_places(self.turn);
        let outcome = self.deal_outcome(&places, &self.rules)?;
        Some(DealFacts {
            table: TableFacts {
                players: self.n,
                deal_number: self.deal_number,
                places,
                cards_left: Seat::all(self.n)
                    .map(|s| self.hand(s).total() as u8)
                    .collect(),
                bombs_played: self.bombs.clone(),
                bombs_in_hand: Seat::all(self.n)
                    .map(|s| bombs::in_hand(self.hand(s), s, &self.rules, worth))
                    .collect(),
            },
            outcome,
        })
    }
}

/// A sampled world for the engine's turn rules.
impl Turns for World {
    fn seat_count(&self) -> u8 {
        self.n
    }
    fn cards_left(&self, seat: Seat) -> u32 {
        self.hand(seat).total()
    }
    fn out_order(&self) -> &[Seat] {
        &self.out
    }
}
