//! Views of a 升級 match: what each viewer may see of the state and of each event.
//!
//! A seat sees its own hand and the cards dealt to it; the dealer also sees the bottom it took and
//! the cards it buried, until the deal ends (then the buried cards are public in the deal's
//! result). Everyone sees the public part: levels, the dealer, the declaration (the shown card),
//! the bottom as turned over by the no-declaration rule, card counts, the trick, the cards won and
//! the results. A spectator sees only the public part; the admin sees every card. The seed and the
//! deck order never appear in a view. Viewers are Shuangkou's [`Viewer`] (a player is its seat).
//! Pure: depends on the game state only.

use serde::{Deserialize, Serialize};

use super::game::{DealResult, Event, Game, Phase};
use super::order::Level;
use super::order::SEATS;
use crate::cards::{Card, CardSet, Suit};
pub use crate::game::Viewer;
use crate::seat::Seat;

/// The state as one viewer may see it.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct View {
    pub seq: u64,
    pub phase: Phase,
    pub deal_number: u32,
    pub levels: [Level; 2],
    pub level: Level,
    pub dealer: Option<Seat>,
    pub first_seat: Seat,
    pub trump: Option<Suit>,
    pub declaration: Option<(Seat, Card)>,
    pub your_seat: Option<Seat>,
    pub hand: CardSet,
    /// Cards held by each seat.
    pub hand_counts: [u8; 4],
    /// Cards still to be dealt (bottom included) while dealing.
    pub stock_count: u8,
    /// The bottom the dealer took, then the cards it buried: the dealer (and the admin) only.
    pub bottom: Option<CardSet>,
    /// The bottom as turned over when nobody declared (public).
    pub turned: Vec<Card>,
    /// The seat to act (exchange and play).
    pub turn: Option<Seat>,
    pub trick: Vec<(Seat, Card)>,
    pub last_trick: Vec<(Seat, Card)>,
    pub tricks_played: u8,
    /// Cards won in tricks by each team, and their points.
    pub won: [CardSet; 2],
    pub points: [u32; 2],
    /// The cards the viewer may play now.
    pub legal: CardSet,
    pub results: Vec<DealResult>,
    /// The winning team, once the match is over.
    pub winner: Option<u8>,
    /// Every hand: the admin only.
    pub all_hands: Option<[CardSet; 4]>,
}

impl Game {
    /// The seat a viewer plays at (nobody changes seats: a player sits at the seat of its
    /// number).
    fn viewer_seat(viewer: Viewer) -> Option<Seat> {
        match viewer {
            Viewer::Player(p) if p.number() < SEATS => Some(Seat::new(p.number())),
            _ => None,
        }
    }

    /// True when the viewer may see the bottom now (the dealer after taking it, the admin).
    fn sees_bottom(&self, viewer: Viewer) -> bool {
        let taken = matches!(self.phase, Phase::Exchange | Phase::Playing);
        match viewer {
            Viewer::Admin => true,
            _ => taken && Game::viewer_seat(viewer).is_some_and(|s| Some(s) == self.dealer),
        }
    }

    /// The state as `viewer` may see it.
    pub fn view(&self, viewer: Viewer) -> View {
        let your_seat = Game::viewer_seat(viewer);
        let hand = your_seat.map(|s| self.hand(s)).unwrap_or_default();
        let won = self.won();
        View {
            seq: self.seq(),
            phase: self.phase(),
            deal_number: self.deal_number(),
            levels: self.levels(),
            level: self.level(),
            dealer: self.dealer(),
            first_seat: self.first_seat(),
            trump: self.trump(),
            declaration: self.declaration(),
            your_seat,
            hand,
            hand_counts: self.hands.map(|h| h.len() as u8),
            stock_count: self.stock().len() as u8,
            bottom: self.sees_bottom(viewer).then(|| self.bottom()),
            turned: self.turned().to_vec(),
            turn: self.turn(),
            trick: self.trick().to_vec(),
            last_trick: self.last_trick().to_vec(),
            tricks_played: self.tricks_played(),
            won,
            points: won.map(super::order::points_of),
            legal: your_seat.map(|s| self.legal_cards(s)).unwrap_or_default(),
            results: self.results().to_vec(),
            winner: self.winner(),
            all_hands: (viewer == Viewer::Admin).then_some(self.hands),
        }
    }
}

/// An event as `viewer` may see it: a dealt card only to its seat, the taken and buried bottom
/// only to the dealer (everything to the admin).
pub fn event_view(event: &Event, viewer: Viewer) -> Event {
    let own = |seat: Seat| viewer == Viewer::Admin || Game::viewer_seat(viewer) == Some(seat);
    match *event {
        Event::CardDealt { seat, card } => Event::CardDealt {
            seat,
            card: card.filter(|_| own(seat)),
        },
        Event::BottomTaken { seat, cards } => Event::BottomTaken {
            seat,
            cards: cards.filter(|_| own(seat)),
        },
        Event::Buried { seat, cards } => Event::Buried {
            seat,
            cards: cards.filter(|_| own(seat)),
        },
        _ => event.clone(),
    }
}
