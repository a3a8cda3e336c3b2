//! The turn rules of a deal, over any table that knows its seats' card counts and who is out: the
//! one copy shared by the engine ([`super::Game`]) and the bots' sampled worlds
//! (`bot::world`).
//!
//! Turns skip seats that are out; a trick ends when every other active seat passed on the top
//! play, and its winner leads — or, when the winner went out on that unbeaten play, 接風: its
//! partner (docs/rules/RULES.md §1.4); the deal ends when a team is out (2 players: one player); places and
//! outcome as in docs/rules/RULES.md §1.5–§1.6. Pure.

use super::hooks::Outcome;
use crate::rules::Rules;
use crate::seat::Seat;

/// What the turn rules read of a deal in progress; the rules themselves are the provided
/// methods.
pub trait Turns {
    /// Seats at the table (2 or 4).
    fn seat_count(&self) -> u8;
    /// Cards left in a seat's hand.
    fn cards_left(&self, seat: Seat) -> u32;
    /// Seats out this deal, in the order they went out.
    fn out_order(&self) -> &[Seat];

    /// Still holding cards.
    fn is_active(&self, seat: Seat) -> bool {
        self.cards_left(seat) > 0 && !self.out_order().contains(&seat)
    }

    /// The next active seat after `seat` in turn order (`seat` itself if none).
    fn next_active_after(&self, seat: Seat) -> Seat {
        let n = self.seat_count();
        let mut s = seat;
        for _ in 0..n {
            s = s.next(n);
            if self.is_active(s) {
                return s;
            }
        }
        seat
    }

    /// True while an active seat other than the top play's has not passed on it (`passed`: a
    /// bit per seat).
    fn trick_open(&self, top_seat: Seat, passed: u8) -> bool {
        Seat::all(self.seat_count())
            .any(|s| s != top_seat && self.is_active(s) && passed & s.bit() == 0)
    }

    /// Who leads after the trick won by `top_seat`, and whether by 接風 (the partner of a
    /// winner who went out on the unbeaten play).
    fn leader_after_trick(&self, top_seat: Seat) -> (Seat, bool) {
        if self.is_active(top_seat) {
            return (top_seat, false);
        }
        match top_seat.partner(self.seat_count()) {
            Some(p) if self.is_active(p) => (p, true),
            _ => (self.next_active_after(top_seat), false),
        }
    }

    /// A team is out (2 players: one player is out).
    fn deal_is_over(&self) -> bool {
        let n = self.seat_count();
        let out = self.out_order();
        match n {
            2 => !out.is_empty(),
            _ => out
                .iter()
                .any(|&s| s.partner(n).is_some_and(|p| out.contains(&p))),
        }
    }

    /// Every seat in finishing order: those out first, then the others in turn order from the
    /// last player out (from `turn` when nobody is out) — after a 雙扣 by that order alone (S0-CL
    /// 「當雙扣的情況下按照出牌順序排定第三名和第四名」, docs/rules/RULES.md A2, §1.5, §8 #24), otherwise by cards
    /// left first (fewer first).
    fn finishing_places(&self, turn: Seat) -> Vec<Seat> {
        let out = self.out_order();
        let mut places = out.to_vec();
        let n = self.seat_count();
        let start = out.last().copied().unwrap_or(turn);
        let double = n == 4 && matches!(out, [a, b] if a.partner(n) == Some(*b));
        let mut rest: Vec<(u32, u8, Seat)> = (1..=n)
            .map(|k| Seat::new((start.number() + k) % n))
            .filter(|s| !places.contains(s))
            .enumerate()
            .map(|(order, s)| {
                let left = if double { 0 } else { self.cards_left(s) };
                (left, order as u8, s)
            })
            .collect();
        rest.sort();
        places.extend(rest.into_iter().map(|(_, _, s)| s));
        places
    }

    /// The outcome of a finished deal with these places.
    fn deal_outcome(&self, places: &[Seat], rules: &Rules) -> Option<Outcome> {
        if self.seat_count() == 2 {
            let left = self.cards_left(*places.get(1)?);
            return Some(Outcome::from_loser_cards(
                left.min(u32::from(u8::MAX)) as u8,
                rules,
            ));
        }
        Outcome::from_places(places)
    }
}
