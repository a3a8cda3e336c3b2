//! Multisets of ranks (`RankCounts`, four bits per rank): the level plays are classified at.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::{CardError, RANK_COUNT, Rank};

/// A multiset of ranks: how many cards of each of the 15 ranks, four bits per rank in a `u64`.
///
/// This is the level at which plays are classified and compared (suits and deck copies never
/// matter). A valid value holds at most 8 of a suited rank and 2 of each joker.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct RankCounts(pub(super) u64);

impl RankCounts {
    pub const EMPTY: RankCounts = RankCounts(0);

    /// The full two decks.
    pub const FULL: RankCounts = {
        let mut v = 0u64;
        let mut i = 0;
        while i < RANK_COUNT {
            let n = if i >= 13 { 2u64 } else { 8u64 };
            v |= n << (4 * i);
            i += 1;
        }
        RankCounts(v)
    };

    /// The packed representation (4 bits per rank, rank 0 lowest).
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// From packed bits; `None` unless every rank is within its number of copies.
    pub fn from_bits(bits: u64) -> Option<RankCounts> {
        let rc = RankCounts(bits);
        if bits >> 60 == 0 && rc.is_subset(RankCounts::FULL) {
            Some(rc)
        } else {
            None
        }
    }

    /// How many cards of `rank`.
    #[inline]
    pub const fn get(self, rank: Rank) -> u8 {
        ((self.0 >> (4 * rank.0)) & 0xF) as u8
    }

    /// A copy with `rank` set to `n` (`n` is masked to four bits).
    #[inline]
    #[must_use]
    pub const fn with(self, rank: Rank, n: u8) -> RankCounts {
        let shift = 4 * rank.0;
        RankCounts((self.0 & !(0xF << shift)) | (((n & 0xF) as u64) << shift))
    }

    /// Adds `n` cards of `rank` (saturating at 15; validity is the caller's concern).
    #[inline]
    pub fn add(&mut self, rank: Rank, n: u8) {
        let cur = self.get(rank);
        *self = self.with(rank, cur.saturating_add(n).min(15));
    }

    /// Total number of cards.
    #[inline]
    pub const fn total(self) -> u32 {
        // Sum of nibbles: fold pairs of nibbles into bytes, then multiply to sum the bytes.
        let x = self.0;
        let pairs = (x & 0x0F0F_0F0F_0F0F_0F0F) + ((x >> 4) & 0x0F0F_0F0F_0F0F_0F0F);
        (pairs.wrapping_mul(0x0101_0101_0101_0101) >> 56) as u32
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// True if every rank of `self` is at most as frequent as in `other`.
    #[inline]
    pub const fn is_subset(self, other: RankCounts) -> bool {
        // Spread the nibbles into bytes (even and odd ranks apart), then compare all bytes at
        // once: (o | 0x80) - s keeps the byte's high bit exactly when o >= s.
        const LOW: u64 = 0x0F0F_0F0F_0F0F_0F0F;
        const HIGH: u64 = 0x8080_8080_8080_8080;
        const fn le(s: u64, o: u64) -> bool {
            ((o | HIGH) - s) & HIGH == HIGH
        }
        le(self.0 & LOW, other.0 & LOW) && le((self.0 >> 4) & LOW, (other.0 >> 4) & LOW)
    }

    /// `self + other` per rank (caller guarantees no rank exceeds 15).
    #[inline]
    #[must_use]
    pub const fn plus(self, other: RankCounts) -> RankCounts {
        RankCounts(self.0 + other.0)
    }

    /// `self - other` per rank; `None` unless `other` is a subset of `self`.
    #[inline]
    pub const fn minus(self, other: RankCounts) -> Option<RankCounts> {
        if other.is_subset(self) {
            Some(RankCounts(self.0 - other.0))
        } else {
            None
        }
    }

    /// The (rank, count) pairs with a non-zero count, weakest rank first.
    pub fn iter(self) -> impl Iterator<Item = (Rank, u8)> {
        Rank::all().filter_map(move |r| {
            let n = self.get(r);
            (n > 0).then_some((r, n))
        })
    }

    /// The ranks one by one with repetition, weakest first.
    pub fn ranks(self) -> impl Iterator<Item = Rank> {
        self.iter()
            .flat_map(|(r, n)| std::iter::repeat_n(r, n as usize))
    }

    /// Builds counts from ranks; a rank beyond its number of copies is an error.
    pub fn from_ranks<I: IntoIterator<Item = Rank>>(ranks: I) -> Result<RankCounts, CardError> {
        let mut rc = RankCounts::EMPTY;
        for r in ranks {
            let n = rc.get(r) + 1;
            if n > r.copies() {
                return Err(CardError::TooManyCopies {
                    token: r.symbol().to_string(),
                    rank: r,
                    count: n,
                    max: r.copies(),
                });
            }
            rc = rc.with(r, n);
        }
        Ok(rc)
    }
}

impl fmt::Display for RankCounts {
    /// Space-separated notation, weakest first (`3 3 4 5 SJ`); the empty multiset prints nothing.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for r in self.ranks() {
            if !first {
                f.write_str(" ")?;
            }
            first = false;
            f.write_str(r.symbol())?;
        }
        Ok(())
    }
}

impl fmt::Debug for RankCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{self}]")
    }
}

impl FromStr for RankCounts {
    type Err = CardError;
    /// Parses the text notation. Tokens are separated by spaces or commas; `10` means `T`; case is
    /// ignored. An unknown token, a ninth copy of a suited rank or a third joker of a kind is an
    /// error naming the token.
    fn from_str(text: &str) -> Result<RankCounts, CardError> {
        let mut rc = RankCounts::EMPTY;
        for token in text
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|t| !t.is_empty())
        {
            let r: Rank = token.parse()?;
            let n = rc.get(r) + 1;
            if n > r.copies() {
                return Err(CardError::TooManyCopies {
                    token: token.to_string(),
                    rank: r,
                    count: n,
                    max: r.copies(),
                });
            }
            rc = rc.with(r, n);
        }
        Ok(rc)
    }
}

/// Human-readable formats see rank counts in rank notation (`"3 3 BJ"`); compact binary formats
/// (the state hash's postcard) as the packed 64 bits.
impl Serialize for RankCounts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            s.collect_str(self)
        } else {
            s.serialize_u64(self.0)
        }
    }
}

impl<'de> Deserialize<'de> for RankCounts {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RankCounts, D::Error> {
        if d.is_human_readable() {
            let s = String::deserialize(d)?;
            s.parse().map_err(serde::de::Error::custom)
        } else {
            RankCounts::from_bits(u64::deserialize(d)?)
                .ok_or_else(|| serde::de::Error::custom("rank counts beyond two decks"))
        }
    }
}
