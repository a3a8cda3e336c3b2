//! Seats and players, two numbers that are not interchangeable.
//!
//! A [`Player`] is a person at the match: its index is its seat in the first deal and its token
//! (the API speaks of players). A [`Seat`] is a place at the table for the current deal, in turn
//! order (the rules speak of seats). They differ as soon as the shown-card rule (雙明) swaps two
//! seats: [`Seating`] is the map between them, kept by the deal engine.
//!
//! Both serialize as a plain number, so logs, snapshots and golden files read the same as when
//! they were raw `u8`. Pure.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A place at the table for the current deal, `0..players`, in turn order; in 4-player games the
/// partner of seat `s` is `(s + 2) % 4` and the teams are {0, 2} and {1, 3}.
#[derive(Copy, Clone, Eq, PartialEq, Ord, PartialOrd, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Seat(u8);

/// A person at the match, `0..players`: the seat they took in the first deal, and their token.
#[derive(Copy, Clone, Eq, PartialEq, Ord, PartialOrd, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Player(u8);

macro_rules! numbered {
    ($t:ident) => {
        impl $t {
            /// The one with this number (unchecked: the caller knows it is at the table).
            pub const fn new(number: u8) -> $t {
                $t(number)
            }

            /// The one with this number at a table of `players`, if it is there.
            pub fn checked(number: u32, players: u8) -> Option<$t> {
                u8::try_from(number).ok().filter(|&n| n < players).map($t)
            }

            /// Its number, `0..players`.
            pub const fn number(self) -> u8 {
                self.0
            }

            /// Its number as an index into a per-seat (or per-player) list.
            pub const fn index(self) -> usize {
                self.0 as usize
            }

            /// Every one at a table of `players`, in order.
            pub fn all(players: u8) -> impl DoubleEndedIterator<Item = $t> + Clone {
                (0..players).map($t)
            }

            /// These numbers as a list (a fixed finishing order or seating in a test or a
            /// probe).
            pub fn list(numbers: &[u8]) -> Vec<$t> {
                numbers.iter().copied().map($t).collect()
            }

            /// The one at `index` of a per-seat (or per-player) list (lists are at most a
            /// table long).
            pub fn at(index: usize) -> $t {
                $t(u8::try_from(index).unwrap_or(u8::MAX))
            }
        }

        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        /// The plain number, as when it was a `u8` (transcripts and golden files print it).
        impl fmt::Debug for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl From<$t> for u32 {
            fn from(x: $t) -> u32 {
                u32::from(x.0)
            }
        }

        impl From<$t> for i64 {
            fn from(x: $t) -> i64 {
                i64::from(x.0)
            }
        }
    };
}

numbered!(Seat);
numbered!(Player);

impl Seat {
    /// The next seat in turn order at a table of `players`.
    pub const fn next(self, players: u8) -> Seat {
        Seat((self.0 + 1) % players)
    }

    /// The partner seat (4 players; none in the 2-player game).
    pub const fn partner(self, players: u8) -> Option<Seat> {
        if players == 4 {
            Some(Seat((self.0 + 2) % 4))
        } else {
            None
        }
    }

    /// The team of this seat: 0 for seats 0 and 2, 1 for seats 1 and 3 (2 players: the seat
    /// itself).
    pub const fn team(self) -> u8 {
        self.0 % 2
    }

    /// This seat's bit in a per-seat bit set.
    pub const fn bit(self) -> u8 {
        1 << self.0
    }
}

/// The player at each seat of a deal (the deal's player → seat assignment, read either way).
#[derive(Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Seating(Vec<Player>);

/// The players by seat as a plain list (`[0, 2, 1, 3]`), as when it was a `Vec<u8>`.
impl fmt::Debug for Seating {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Seating {
    /// Every player at the seat of their number (the first deal).
    pub fn identity(players: u8) -> Seating {
        Seating(Player::all(players).collect())
    }

    /// The seating with these players at seats `0, 1, …`.
    pub fn from_players(players: Vec<Player>) -> Seating {
        Seating(players)
    }

    /// The player at `seat`, if the seat is at the table.
    pub fn player_at(&self, seat: Seat) -> Option<Player> {
        self.0.get(seat.index()).copied()
    }

    /// The seat of `player`, if the player is at the table.
    pub fn seat_of(&self, player: Player) -> Option<Seat> {
        self.0.iter().position(|&p| p == player).map(Seat::at)
    }

    /// The players by seat.
    pub fn players(&self) -> &[Player] {
        &self.0
    }

    /// Seats at the table.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True for a table of no seats.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The two seats trade players.
    pub fn swap(&mut self, a: Seat, b: Seat) {
        self.0.swap(a.index(), b.index());
    }

    /// (seat, player) pairs in seat order.
    pub fn iter(&self) -> impl Iterator<Item = (Seat, Player)> + '_ {
        self.0.iter().enumerate().map(|(s, &p)| (Seat::at(s), p))
    }
}

/// The player at a seat of the table (panics for a seat that is not at it, as a slice does).
impl std::ops::Index<Seat> for Seating {
    type Output = Player;

    fn index(&self, seat: Seat) -> &Player {
        &self.0[seat.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partner_and_next_follow_the_rules() {
        // RULES.md §1.1: teams {0, 2} and {1, 3}; turns go 0 → 1 → 2 → 3 → 0.
        let partners: Vec<_> = Seat::all(4)
            .map(|s| s.partner(4).map(Seat::number))
            .collect();
        assert_eq!(partners, [Some(2), Some(3), Some(0), Some(1)]);
        assert_eq!(Seat::new(1).partner(2), None);
        let next: Vec<_> = Seat::all(4).map(|s| s.next(4).number()).collect();
        assert_eq!(next, [1, 2, 3, 0]);
        assert_eq!(Seat::new(1).next(2), Seat::new(0));
    }

    #[test]
    fn checked_numbers_stay_at_the_table() {
        assert_eq!(Player::checked(3, 4), Some(Player::new(3)));
        assert_eq!(Player::checked(4, 4), None);
        assert_eq!(Seat::checked(256, 4), None);
        assert_eq!(Seat::checked(u32::MAX, 4), None);
    }

    #[test]
    fn seating_reads_both_ways_after_a_swap() {
        let mut s = Seating::identity(4);
        s.swap(Seat::new(1), Seat::new(2));
        assert_eq!(s.player_at(Seat::new(1)), Some(Player::new(2)));
        assert_eq!(s.seat_of(Player::new(1)), Some(Seat::new(2)));
        assert_eq!(s.seat_of(Player::new(0)), Some(Seat::new(0)));
        assert_eq!(s.seat_of(Player::new(4)), None);
    }

    #[test]
    fn serializes_as_plain_numbers() {
        let mut s = Seating::identity(4);
        s.swap(Seat::new(0), Seat::new(3));
        assert_eq!(serde_json::to_string(&s).unwrap(), "[3,1,2,0]");
        assert_eq!(serde_json::to_string(&Seat::new(2)).unwrap(), "2");
        let plain: Vec<u8> = vec![3, 1, 2, 0];
        assert_eq!(
            postcard::to_stdvec(&s).unwrap(),
            postcard::to_stdvec(&plain).unwrap()
        );
        let back: Seating = serde_json::from_str("[3,1,2,0]").unwrap();
        assert_eq!(back, s);
        // Transcripts (tests/data golden files) print them as the numbers they were.
        assert_eq!(
            format!("{s:?} {:?}", Some(Seat::new(2))),
            "[3, 1, 2, 0] Some(2)"
        );
    }
}
