//! A sampled world: one determinization of a player's view (the hidden hands dealt at random
//! from the cards it has not seen), played forward by the bots to the end of the deal and settled
//! by the variant.
//!
//! Sampling keeps everything the view knows: its own hand, the partner's shown hand (雙明), every
//! seat's card count, the cards played and the trick. The deal moves as the engine's
//! (`game::table`) does: turns skip seats that are out, a trick ends when every other active
//! seat passed, 接風 gives the lead to the partner of a player who went out on an unbeaten play,
//! the deal ends when a team is out (2 players: one player), places and outcome as in docs/rules/RULES.md
//! §1.6. Pure: ranks, rules, the hooks' settlement and a seeded RNG.

use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::{Decision, PlayerView};
use crate::cards::{Rank, RankCounts};
use crate::game::bombs;
use crate::game::hooks::{BombFact, DealFacts, Outcome};
use crate::hand::Hand;
use crate::rules::Rules;

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
    turn: u8,
    top: Option<(u8, Hand)>,
    passed: u8,
    out: Vec<u8>,
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
        hands[me as usize] = view.hand();
        let shown = view.partner_hand();
        let mut next = pool.into_iter();
        for s in 0..n {
            if s == me {
                continue;
            }
            if Some(s) == view.partner() {
                if let Some(h) = shown {
                    hands[s as usize] = h;
                    continue;
                }
            }
            let mut h = RankCounts::EMPTY;
            for r in next.by_ref().take(view.count(s) as usize) {
                h.add(r, 1);
            }
            hands[s as usize] = h;
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

    pub fn turn(&self) -> u8 {
        self.turn
    }

    pub fn hand(&self, seat: u8) -> RankCounts {
        self.hands.get(seat as usize).copied().unwrap_or_default()
    }

    fn partner(&self, seat: u8) -> Option<u8> {
        (self.n == 4).then_some((seat + 2) % 4)
    }

    /// What `seat` would see in this world.
    pub fn view_of(&self, seat: u8) -> PlayerView {
        let mut counts = [0u8; 4];
        for s in 0..self.n {
            counts[s as usize] = self.hand(s).total() as u8;
        }
        let partner_hand = self
            .partner(seat)
            .filter(|_| self.partners_see)
            .map(|p| self.hand(p));
        PlayerView::from_parts(
            self.rules,
            seat,
            self.hand(seat),
            partner_hand,
            counts,
            self.played,
            self.top,
            self.passed,
            &self.out,
        )
    }

    fn active(&self, s: u8) -> bool {
        !self.hand(s).is_empty() && !self.out.contains(&s)
    }

    fn next_active(&self, seat: u8) -> u8 {
        let mut s = seat;
        for _ in 0..self.n {
            s = (s + 1) % self.n;
            if self.active(s) {
                return s;
            }
        }
        seat
    }

    fn over(&self) -> bool {
        match self.n {
            2 => !self.out.is_empty(),
            _ => self
                .out
                .iter()
                .any(|&s| self.partner(s).is_some_and(|p| self.out.contains(&p))),
        }
    }

    /// Applies the decision of the seat to act; true when the deal is over. A decision the
    /// seat cannot make (cards not held, a pass while leading) plays its weakest card instead.
    pub fn apply(&mut self, d: Decision) -> bool {
        let seat = self.turn;
        let s = seat as usize;
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
                    if self.over() {
                        return true;
                    }
                }
                self.turn = self.next_active(seat);
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

    fn pass(&mut self, seat: u8) {
        self.passed |= 1 << seat;
        let Some((top_seat, _)) = self.top else {
            return;
        };
        let waiting =
            (0..self.n).any(|s| s != top_seat && self.active(s) && self.passed & (1 << s) == 0);
        if waiting {
            self.turn = self.next_active(seat);
            return;
        }
        let leader = if self.active(top_seat) {
            top_seat
        } else {
            match self.partner(top_seat) {
                Some(p) if self.active(p) => p,
                _ => self.next_active(top_seat),
            }
        };
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

    fn places(&self) -> Vec<u8> {
        let mut places = self.out.clone();
        let start = self.out.last().copied().unwrap_or(self.turn);
        let mut rest: Vec<(u32, u8, u8)> = (1..=self.n)
            .map(|k| (start + k) % self.n)
            .filter(|s| !places.contains(s))
            .enumerate()
            .map(|(order, s)| (self.hand(s).total(), order as u8, s))
            .collect();
        rest.sort();
        places.extend(rest.into_iter().map(|(_, _, s)| s));
        places
    }

    fn outcome(&self, places: &[u8]) -> Option<Outcome> {
        if self.n == 2 {
            let left = self.hand(*places.get(1)?).total();
            return Some(if left >= self.rules.two_player_double_min as u32 {
                Outcome::Double
            } else if left >= self.rules.two_player_single_min as u32 {
                Outcome::Single
            } else {
                Outcome::Draw
            });
        }
        let partner = self.partner(*places.first()?)?;
        match places.iter().position(|&s| s == partner)? {
            1 => Some(Outcome::Double),
            2 => Some(Outcome::Single),
            _ => Some(Outcome::Draw),
        }
    }

    /// The facts the settlement hook is told about this (finished) deal.
    pub fn facts(&self) -> Option<DealFacts> {
        let places = self.places();
        let outcome = self.outcome(&places)?;
        Some(DealFacts {
            players: self.n,
            deal_number: self.deal_number,
            outcome,
            places,
            cards_left: (0..self.n).map(|s| self.hand(s).total() as u8).collect(),
            bombs_played: self.bombs.clone(),
            bombs_in_hand: (0..self.n)
                .map(|s| bombs::in_hand(self.hand(s), s, &self.rules))
                .collect(),
        })
    }
}
