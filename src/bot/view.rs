//! The player view a bot decides from: what one seat may know, and nothing else.
//!
//! Owns [`PlayerView`]. Outside `bot`, the only way to build one is [`PlayerView::new`] from a
//! game and a seat: it copies the seat's own hand, the partner's hand only where the variant shows
//! it (雙明, `partners_see_hands`), every seat's card count, the cards and bombs played this deal,
//! the trick, places and scores. Its fields are private and it holds no other hand, so a bot
//! cannot be handed the whole game. Inside `bot`, search playouts build views of their sampled
//! worlds the same way (own hand, shown partner hand, public facts). Pure: depends on the rules
//! core and the deal engine's read accessors only.

use crate::cards::RankCounts;
use crate::game::Game;
use crate::game::hooks::{BombFact, Centi};
use crate::hand::Hand;
use crate::rules::Rules;
use crate::seat::Seat;

/// What one seat may see of a deal in progress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlayerView {
    rules: Rules,
    players: u8,
    seat: Seat,
    hand: RankCounts,
    partner_hand: Option<RankCounts>,
    table: Table,
    bombs_played: Vec<BombFact>,
    deal_number: u32,
    /// Scores by seat of this deal (the players' match totals).
    totals: [Centi; 4],
    /// Deals in a row the seat's team lost, up to the last one.
    lost_streak: u32,
}

/// What every seat sees of the deal on the table: the card counts, the cards played, the trick
/// and who is out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Table {
    counts: [u8; 4],
    played: RankCounts,
    top: Option<(Seat, Hand)>,
    /// Seats that passed since the top play (bit per seat).
    passed: u8,
    out: [Seat; 4],
    out_len: u8,
}

impl Table {
    /// The table with these card counts (by seat), cards played, top play, passes (bit per
    /// seat) and seats out (in order).
    pub(super) fn new(
        counts: [u8; 4],
        played: RankCounts,
        top: Option<(Seat, Hand)>,
        passed: u8,
        out: &[Seat],
    ) -> Table {
        let mut order = [Seat::default(); 4];
        for (slot, s) in order.iter_mut().zip(out) {
            *slot = *s;
        }
        Table {
            counts,
            played,
            top,
            passed,
            out: order,
            out_len: out.len().min(4) as u8,
        }
    }
}

impl PlayerView {
    /// The view of `seat` (a seat of the current deal); `None` for a seat that does not exist.
    pub fn new(game: &Game, seat: Seat) -> Option<PlayerView> {
        let n = game.players();
        if seat.number() >= n {
            return None;
        }
        let mut counts = [0u8; 4];
        let mut totals = [0; 4];
        for s in Seat::all(n) {
            counts[s.index()] = game.hand(s).len() as u8;
            let player = game.seating().player_at(s)?;
            totals[s.index()] = game.totals().get(player.index()).copied().unwrap_or(0);
        }
        let partner_hand = match game.partner(seat) {
            Some(p) if game.partners_see_hands() => Some(game.hand(p).rank_counts()),
            _ => None,
        };
        let player = game.seating().player_at(seat)?;
        let lost_streak = game.lost_streak(player);
        let passed = game.passed_seats().iter().fold(0u8, |m, s| m | s.bit());
        let table = Table::new(
            counts,
            game.played().rank_counts(),
            game.top().map(|t| (t.seat, t.hand)),
            passed,
            game.out(),
        );
        let hand = game.hand(seat).rank_counts();
        let mut view = PlayerView::from_parts(*game.rules(), seat, hand, partner_hand, table);
        view.players = n;
        view.bombs_played = game.bombs_played().to_vec();
        view.deal_number = game.deal_number();
        view.totals = totals;
        view.lost_streak = lost_streak;
        Some(view)
    }

    /// A view of a sampled world inside the bot (search playouts): the same information.
    pub(super) fn from_parts(
        rules: Rules,
        seat: Seat,
        hand: RankCounts,
        partner_hand: Option<RankCounts>,
        table: Table,
    ) -> PlayerView {
        PlayerView {
            rules,
            players: rules.players,
            seat,
            hand,
            partner_hand,
            table,
            bombs_played: Vec::new(),
            deal_number: 1,
            totals: [0; 4],
            lost_streak: 0,
        }
    }

    pub fn rules(&self) -> &Rules {
        &self.rules
    }
    pub fn players(&self) -> u8 {
        self.players
    }
    pub fn seat(&self) -> Seat {
        self.seat
    }
    /// The seat's own hand, as ranks.
    pub fn hand(&self) -> RankCounts {
        self.hand
    }
    /// The partner's hand, where the variant shows it (雙明).
    pub fn partner_hand(&self) -> Option<RankCounts> {
        self.partner_hand
    }
    /// The partner seat (4 players).
    pub fn partner(&self) -> Option<Seat> {
        self.seat.partner(self.players)
    }
    /// The two opponents (one in the 2-player game).
    pub fn opponents(&self) -> impl Iterator<Item = Seat> + '_ {
        Seat::all(self.players).filter(move |&s| s != self.seat && Some(s) != self.partner())
    }
    /// Cards left in a seat's hand.
    pub fn count(&self, seat: Seat) -> u8 {
        self.table.counts.get(seat.index()).copied().unwrap_or(0)
    }
    pub fn counts(&self) -> [u8; 4] {
        self.table.counts
    }
    /// Cards played this deal.
    pub fn played(&self) -> RankCounts {
        self.table.played
    }
    /// The top play of the trick and who made it.
    pub fn top(&self) -> Option<(Seat, Hand)> {
        self.table.top
    }
    /// Seats that passed since the top play (bit per seat).
    pub fn passed_mask(&self) -> u8 {
        self.table.passed
    }
    /// Seats out this deal, in order.
    pub fn out(&self) -> &[Seat] {
        &self.table.out[..self.table.out_len as usize]
    }
    pub fn is_out(&self, seat: Seat) -> bool {
        self.out().contains(&seat)
    }
    /// Still holding cards.
    pub fn active(&self, seat: Seat) -> bool {
        self.count(seat) > 0 && !self.is_out(seat)
    }
    pub fn bombs_played(&self) -> &[BombFact] {
        &self.bombs_played
    }
    pub fn deal_number(&self) -> u32 {
        self.deal_number
    }
    /// Match totals by seat.
    pub fn totals(&self) -> [Centi; 4] {
        self.totals
    }
    /// Deals in a row the seat's team has lost (the tilt of 鬥氣型).
    pub fn lost_streak(&self) -> u32 {
        self.lost_streak
    }

    /// Cards this seat cannot see: the decks minus its hand, the cards played and the shown
    /// partner hand (in the 2-player game this includes the cards never dealt).
    pub fn unseen(&self) -> RankCounts {
        let known = self
            .hand
            .plus(self.table.played)
            .plus(self.partner_hand.unwrap_or_default());
        RankCounts::FULL.minus(known).unwrap_or_default()
    }

    /// The fewest cards held by an active opponent (`u8::MAX` when none is active).
    pub fn closest_opponent(&self) -> u8 {
        self.opponents()
            .filter(|&s| self.active(s))
            .map(|s| self.count(s))
            .min()
            .unwrap_or(u8::MAX)
    }
}
