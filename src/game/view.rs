//! Views: what each viewer may see of a game, and of each event.
//!
//! A seat sees its own hand, its partner's hand only where the variant shows it (雙明, JJ), and
//! what everyone sees: card counts, the trick, places, scores. A spectator sees only the public
//! part; the admin also sees every hand. The seed and the deck order never appear in a view.

use serde::{Deserialize, Serialize};

use super::hooks::Centi;
use super::table::{Event, Game, Phase, Top};
use crate::cards::{Card, CardSet};
use crate::seat::{Player, Seat, Seating};

/// Who is looking.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Viewer {
    /// A player (index of its token).
    Player(Player),
    Spectator,
    Admin,
}

impl Viewer {
    /// The seat of this viewer in a seating (`players[seat]` = the player there), if it is a
    /// player seated in it.
    pub fn seat_in(self, seating: &Seating) -> Option<Seat> {
        match self {
            Viewer::Player(p) => seating.seat_of(p),
            Viewer::Spectator | Viewer::Admin => None,
        }
    }
}

/// One seat as everyone sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatView {
    pub seat: Seat,
    pub player: Player,
    pub card_count: u8,
    /// 1-based place this deal, 0 while playing.
    pub place: u8,
    pub team: u8,
    /// The player's cumulative score.
    pub total: Centi,
    pub disconnected: bool,
}

/// The state as one viewer may see it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct View {
    pub seq: u64,
    pub phase: Phase,
    pub deal_number: u32,
    pub deals: u32,
    pub turn: Option<Seat>,
    pub deadline: Option<u64>,
    pub your_seat: Option<Seat>,
    pub hand: CardSet,
    pub partner_hand: Option<CardSet>,
    /// Every hand, for the admin only.
    pub all_hands: Option<Vec<CardSet>>,
    pub seats: Vec<SeatView>,
    pub trick_leader: Seat,
    pub top: Option<Top>,
    pub passed: Vec<Seat>,
    pub shown_card: Card,
    pub finishing_order: Vec<Seat>,
    // The settled deals are not copied into a view (a long match has many): read them, a page
    // at a time, from `Game::results`.
    pub totals: Vec<Centi>,
}

impl Game {
    /// The seat whose hand `viewer` may see besides its own (the partner under 雙明).
    fn visible_partner(&self, seat: Seat) -> Option<Seat> {
        if self.partners_see_hands() {
            self.partner(seat)
        } else {
            None
        }
    }

    /// The state as `viewer` may see it.
    pub fn view(&self, viewer: Viewer) -> View {
        let n = self.players();
        let your_seat = match viewer {
            Viewer::Player(p) => self.seat_of(p),
            _ => None,
        };
        let hand = your_seat.map(|s| self.hand(s)).unwrap_or_default();
        let partner_hand = your_seat
            .and_then(|s| self.visible_partner(s))
            .map(|p| self.hand(p));
        let seats = Seat::all(n)
            .map(|s| {
                let player = self
                    .seating()
                    .player_at(s)
                    .unwrap_or(Player::new(s.number()));
                SeatView {
                    seat: s,
                    player,
                    card_count: self.hand(s).len() as u8,
                    place: self
                        .out()
                        .iter()
                        .position(|&o| o == s)
                        .map_or(0, |i| i as u8 + 1),
                    team: s.team(),
                    total: self.totals().get(player.index()).copied().unwrap_or(0),
                    disconnected: self.is_disconnected(player),
                }
            })
            .collect();
        View {
            seq: self.seq(),
            phase: self.phase(),
            deal_number: self.deal_number(),
            deals: self.config().deals,
            turn: self.turn(),
            deadline: self.deadline(),
            your_seat,
            hand,
            partner_hand,
            all_hands: (viewer == Viewer::Admin)
                .then(|| Seat::all(n).map(|s| self.hand(s)).collect()),
            seats,
            trick_leader: self.trick_leader(),
            top: self.top().copied(),
            passed: self.passed_seats(),
            shown_card: self.shown_card(),
            finishing_order: self.out().to_vec(),
            totals: self.totals().to_vec(),
        }
    }

    /// An event as `viewer` may see it: hidden hands of a deal start are removed.
    pub fn event_view(&self, event: &Event, viewer: Viewer) -> Event {
        let mut seen = event.clone();
        if let Event::DealStarted { players, hands, .. } = &mut seen {
            let seat = viewer.seat_in(players);
            let partner = seat.and_then(|s| self.visible_partner(s));
            for (s, hand) in hands.iter_mut().enumerate() {
                let s = Seat::at(s);
                if viewer != Viewer::Admin && Some(s) != seat && Some(s) != partner {
                    *hand = CardSet::EMPTY;
                }
            }
        }
        seen
    }
}
