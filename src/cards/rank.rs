//! Ranks (`3 < … < 2 < SJ < BJ`, their notation) and suits.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::{COPIES_PER_JOKER, COPIES_PER_RANK, CardError, RANK_COUNT};

/// A rank, ordered from weakest to strongest: `3 < 4 < … < A < 2 < SJ < BJ`.
///
/// The index is 0 for `3`, 11 for `A`, 12 for `2`, 13 for the small joker (小王, 副司令) and 14
/// for the big joker (大王, 正司令).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rank(pub(super) u8);

const SYMBOLS: [&str; RANK_COUNT] = [
    "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K", "A", "2", "SJ", "BJ",
];

impl Rank {
    pub const THREE: Rank = Rank(0);
    pub const FOUR: Rank = Rank(1);
    pub const FIVE: Rank = Rank(2);
    pub const SIX: Rank = Rank(3);
    pub const SEVEN: Rank = Rank(4);
    pub const EIGHT: Rank = Rank(5);
    pub const NINE: Rank = Rank(6);
    pub const TEN: Rank = Rank(7);
    pub const JACK: Rank = Rank(8);
    pub const QUEEN: Rank = Rank(9);
    pub const KING: Rank = Rank(10);
    pub const ACE: Rank = Rank(11);
    pub const TWO: Rank = Rank(12);
    pub const SMALL_JOKER: Rank = Rank(13);
    pub const BIG_JOKER: Rank = Rank(14);

    /// The rank with this index (0 = `3` … 14 = big joker), if any.
    pub const fn from_index(index: u8) -> Option<Rank> {
        if (index as usize) < RANK_COUNT {
            Some(Rank(index))
        } else {
            None
        }
    }

    /// The rank at index `index` of a rank window (0 = `3` … 14 = big joker). The windows of
    /// classification and enumeration stay within `0..RANK_COUNT`; an index past the big joker
    /// gives `3` (use [`Rank::from_index`] where an index may be out of range).
    #[inline]
    pub const fn at(index: usize) -> Rank {
        if index < RANK_COUNT {
            Rank(index as u8)
        } else {
            Rank::THREE
        }
    }

    /// Index 0..=14, weakest first.
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// All fifteen ranks, weakest first.
    pub fn all() -> impl DoubleEndedIterator<Item = Rank> + Clone {
        (0..RANK_COUNT as u8).map(Rank)
    }

    /// True for the two jokers.
    pub const fn is_joker(self) -> bool {
        self.0 >= 13
    }

    /// How many copies of this rank the two decks hold (8, or 2 for a joker).
    pub const fn copies(self) -> u8 {
        if self.is_joker() {
            COPIES_PER_JOKER
        } else {
            COPIES_PER_RANK
        }
    }

    /// The notation symbol: `3`..`9`, `T`, `J`, `Q`, `K`, `A`, `2`, `SJ`, `BJ`.
    pub const fn symbol(self) -> &'static str {
        SYMBOLS[self.0 as usize]
    }
}

impl fmt::Display for Rank {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

/// The symbol, as Display (transcripts and golden files print it).
impl fmt::Debug for Rank {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for Rank {
    type Err = CardError;
    fn from_str(token: &str) -> Result<Rank, CardError> {
        let up = token.trim().to_ascii_uppercase();
        let up = if up == "10" { "T".to_string() } else { up };
        SYMBOLS
            .iter()
            .position(|s| *s == up)
            .map(|i| Rank(i as u8))
            .ok_or_else(|| CardError::UnknownToken(token.to_string()))
    }
}

impl Serialize for Rank {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.symbol())
    }
}

impl<'de> Deserialize<'de> for Rank {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Rank, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A suit. Suits never matter for comparing plays; they matter only for the shown card (明牌)
/// and for display.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
pub enum Suit {
    Spades,
    Hearts,
    Clubs,
    Diamonds,
}

impl Suit {
    pub(super) const ALL: [Suit; 4] = [Suit::Spades, Suit::Hearts, Suit::Clubs, Suit::Diamonds];

    /// Suit index as in the card id (0 ♠, 1 ♥, 2 ♣, 3 ♦).
    pub const fn index(self) -> u8 {
        self as u8
    }

    /// The one-letter name used in logs: `S`, `H`, `C`, `D`.
    pub const fn letter(self) -> char {
        match self {
            Suit::Spades => 'S',
            Suit::Hearts => 'H',
            Suit::Clubs => 'C',
            Suit::Diamonds => 'D',
        }
    }
}
