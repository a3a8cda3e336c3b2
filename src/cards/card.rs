//! One physical card (id `0..=107`), its notation, and the errors of the card vocabulary.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{DECK_SIZE, Rank, Suit};

/// Errors of the card vocabulary: bad ids and bad notation. Each names the offending input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CardError {
    #[error("card id {0} is out of range 0..=107")]
    BadCardId(u32),
    #[error("unknown card token {0:?} (expected 3..9, T or 10, J, Q, K, A, 2, SJ, BJ)")]
    UnknownToken(String),
    #[error(
        "too many copies of {rank}: token {token:?} would be copy {count}, the decks hold {max}"
    )]
    TooManyCopies {
        token: String,
        rank: Rank,
        count: u8,
        max: u8,
    },
    #[error("card id {0} appears twice")]
    DuplicateCard(u32),
}

/// One physical card, id `0..=107`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Card(pub(super) u8);

impl Card {
    /// The card with this id, or `BadCardId`.
    pub const fn new(id: u32) -> Result<Card, CardError> {
        if id < DECK_SIZE as u32 {
            Ok(Card(id as u8))
        } else {
            Err(CardError::BadCardId(id))
        }
    }

    /// The card of this deck (0 or 1), suit and rank. Jokers ignore `suit`.
    pub const fn from_parts(deck: u8, suit: Suit, rank: Rank) -> Card {
        let deck = (deck & 1) as u32;
        let r = if rank.0 == 13 {
            52
        } else if rank.0 == 14 {
            53
        } else {
            suit as u32 * 13 + rank.0 as u32
        };
        Card((deck * 54 + r) as u8)
    }

    /// The id, `0..=107`.
    pub const fn id(self) -> u32 {
        self.0 as u32
    }

    /// Which of the two decks (0 or 1).
    pub const fn deck(self) -> u8 {
        self.0 / 54
    }

    /// The rank.
    pub const fn rank(self) -> Rank {
        let r = self.0 % 54;
        match r {
            52 => Rank::SMALL_JOKER,
            53 => Rank::BIG_JOKER,
            _ => Rank(r % 13),
        }
    }

    /// The suit, `None` for jokers.
    pub const fn suit(self) -> Option<Suit> {
        let r = self.0 % 54;
        if r >= 52 {
            None
        } else {
            Some(Suit::ALL[(r / 13) as usize])
        }
    }

    /// Every card, by id.
    pub fn all() -> impl Iterator<Item = Card> {
        (0..DECK_SIZE as u8).map(Card)
    }
}

impl fmt::Display for Card {
    /// Rank then suit letter (`7H`, `TS`); jokers print as `SJ` / `BJ`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.suit() {
            Some(s) => write!(f, "{}{}", self.rank(), s.letter()),
            None => write!(f, "{}", self.rank()),
        }
    }
}

impl fmt::Debug for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", self, self.0)
    }
}

impl TryFrom<u32> for Card {
    type Error = CardError;
    fn try_from(id: u32) -> Result<Card, CardError> {
        Card::new(id)
    }
}

impl Serialize for Card {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(self.0)
    }
}

impl<'de> Deserialize<'de> for Card {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Card, D::Error> {
        let id = u32::deserialize(d)?;
        Card::new(id).map_err(serde::de::Error::custom)
    }
}
