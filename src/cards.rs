//! Cards: ranks, suits, physical cards (ids 0..=107), card sets and rank counts.
//!
//! Owns the vocabulary every other module speaks and the text notation
//! (`3..9 T J Q K A 2 SJ BJ`, `10` for `T`, case-insensitive, separated by spaces or commas).
//! Depends on nothing but `std`, `thiserror` and `serde`.
//!
//! Card ids follow the public API (`shuangkou.v1`): `deck = id / 54`, `r = id % 54`; `r < 52` is a
//! suited card with `suit = r / 13` and rank index `r % 13` (0 → `3` … 12 → `2`); `r = 52` is the
//! small joker (小王), `r = 53` the big joker (大王).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Number of physical cards in the two decks.
pub const DECK_SIZE: usize = 108;
/// Number of distinct ranks: `3..=2` (13) plus small and big joker.
pub const RANK_COUNT: usize = 15;

/// Index of the highest rank in straights and chains (A): sequences run within 3..A.
pub const TOP_SEQ: usize = Rank::ACE.index();

/// Index of the highest rank that forms pairs, triples and bombs (2): a wild joker becomes at
/// most this rank, and chain bombs through it are cyclic.
pub const TOP_SET: usize = Rank::TWO.index();
/// Copies of each suited rank in the two decks.
pub const COPIES_PER_RANK: u8 = 8;
/// Copies of each joker in the two decks.
pub const COPIES_PER_JOKER: u8 = 2;

/// A rank, ordered from weakest to strongest: `3 < 4 < … < A < 2 < SJ < BJ`.
///
/// The index is 0 for `3`, 11 for `A`, 12 for `2`, 13 for the small joker (小王, 副司令) and 14
/// for the big joker (大王, 正司令).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rank(u8);

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
    const ALL: [Suit; 4] = [Suit::Spades, Suit::Hearts, Suit::Clubs, Suit::Diamonds];

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
pub struct Card(u8);

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

/// A set of physical cards: a 108-bit set in a `u128`.
///
/// Serialized as the list of its card ids (readable in logs and snapshots, and safe inside
/// internally tagged enums, whose buffering has no `u128`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CardSet(u128);

/// Human-readable formats (JSON: the API, stored logs, golden files) see a card set as the list of
/// its card ids; compact binary formats (the state hash's postcard) as its 128 bits.
impl Serialize for CardSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            s.collect_seq(self.iter().map(|c| c.0))
        } else {
            s.serialize_u128(self.0)
        }
    }
}

impl<'de> Deserialize<'de> for CardSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<CardSet, D::Error> {
        if d.is_human_readable() {
            d.deserialize_seq(CardIds)
        } else {
            let bits = u128::deserialize(d)?;
            let set = CardSet::from_bits(bits);
            if set.0 == bits {
                Ok(set)
            } else {
                Err(serde::de::Error::custom("card set bits beyond card 107"))
            }
        }
    }
}

/// A human-readable card set read id by id into the set, without a list in between (stored log
/// entries and replays hold one per play): what [`CardSet::from_ids`] makes of the whole list,
/// and its error (the first bad or repeated id) once the list is read.
struct CardIds;

impl<'de> serde::de::Visitor<'de> for CardIds {
    type Value = CardSet;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut ids: A) -> Result<CardSet, A::Error> {
        let mut set = CardSet::EMPTY;
        let mut error = None;
        while let Some(id) = ids.next_element::<u32>()? {
            if error.is_some() {
                continue;
            }
            match Card::new(id) {
                Ok(c) if set.contains(c) => error = Some(CardError::DuplicateCard(id)),
                Ok(c) => set.insert(c),
                Err(e) => error = Some(e),
            }
        }
        match error {
            Some(e) => Err(serde::de::Error::custom(e)),
            None => Ok(set),
        }
    }
}

/// Bit mask of the eight physical copies of each suited rank, and the two of each joker.
const fn rank_mask(rank: Rank) -> u128 {
    let mut m = 0u128;
    let mut deck = 0;
    while deck < 2 {
        let base = deck * 54;
        if rank.0 == 13 {
            m |= 1u128 << (base + 52);
        } else if rank.0 == 14 {
            m |= 1u128 << (base + 53);
        } else {
            let mut s = 0;
            while s < 4 {
                m |= 1u128 << (base + s * 13 + rank.0 as usize);
                s += 1;
            }
        }
        deck += 1;
    }
    m
}

const RANK_MASKS: [u128; RANK_COUNT] = {
    let mut a = [0u128; RANK_COUNT];
    let mut i = 0;
    while i < RANK_COUNT {
        a[i] = rank_mask(Rank(i as u8));
        i += 1;
    }
    a
};

/// `SPREAD_NIBBLES[b]` has nibble `i` set to bit `i` of the 7-bit value `b`.
const SPREAD_NIBBLES: [u64; 128] = {
    let mut t = [0u64; 128];
    let mut b = 0;
    while b < 128 {
        let mut i = 0;
        while i < 7 {
            t[b] |= ((b as u64 >> i) & 1) << (4 * i);
            i += 1;
        }
        b += 1;
    }
    t
};

impl CardSet {
    /// The empty set.
    pub const EMPTY: CardSet = CardSet(0);
    /// All 108 cards.
    pub const FULL: CardSet = CardSet((1u128 << DECK_SIZE) - 1);

    /// The raw bits (bit `id` set for each card).
    pub const fn bits(self) -> u128 {
        self.0
    }

    /// A set from raw bits; bits above 107 are dropped.
    pub const fn from_bits(bits: u128) -> CardSet {
        CardSet(bits & Self::FULL.0)
    }

    /// Builds a set from card ids; a bad id or a repeated id is an error naming it.
    pub fn from_ids(ids: &[u32]) -> Result<CardSet, CardError> {
        let mut set = CardSet::EMPTY;
        for &id in ids {
            let c = Card::new(id)?;
            if set.contains(c) {
                return Err(CardError::DuplicateCard(id));
            }
            set.insert(c);
        }
        Ok(set)
    }

    pub fn insert(&mut self, c: Card) {
        self.0 |= 1u128 << c.0;
    }

    pub fn remove(&mut self, c: Card) {
        self.0 &= !(1u128 << c.0);
    }

    pub const fn contains(self, c: Card) -> bool {
        self.0 & (1u128 << c.0) != 0
    }

    pub const fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub const fn is_subset(self, other: CardSet) -> bool {
        self.0 & !other.0 == 0
    }

    pub const fn union(self, other: CardSet) -> CardSet {
        CardSet(self.0 | other.0)
    }

    pub const fn intersection(self, other: CardSet) -> CardSet {
        CardSet(self.0 & other.0)
    }

    pub const fn difference(self, other: CardSet) -> CardSet {
        CardSet(self.0 & !other.0)
    }

    /// The cards of this set that have the given rank.
    pub const fn of_rank(self, rank: Rank) -> CardSet {
        CardSet(self.0 & RANK_MASKS[rank.0 as usize])
    }

    /// Cards in id order.
    pub fn iter(self) -> impl Iterator<Item = Card> {
        let mut bits = self.0;
        std::iter::from_fn(move || {
            if bits == 0 {
                None
            } else {
                let i = bits.trailing_zeros();
                bits &= bits - 1;
                Some(Card(i as u8))
            }
        })
    }

    /// Card ids in increasing order.
    pub fn ids(self) -> Vec<u32> {
        self.iter().map(Card::id).collect()
    }

    /// How many cards of each rank the set holds.
    ///
    /// Each of the eight (deck, suit) rows is 13 bits, one per rank `3..2`; spreading a row's bits
    /// into nibbles (two table lookups) and adding the eight rows counts every suited rank at once
    /// (at most 8 per nibble, so no carry). The jokers are the last two bits of each deck.
    #[inline]
    pub fn rank_counts(self) -> RankCounts {
        let mut packed = 0u64;
        for deck in 0..2 {
            let base = deck * 54;
            for suit in 0..4 {
                let row = (self.0 >> (base + suit * 13)) as u32 & 0x1FFF;
                packed += SPREAD_NIBBLES[(row & 0x7F) as usize]
                    + (SPREAD_NIBBLES[(row >> 7) as usize] << 28);
            }
            let jokers = (self.0 >> (base + 52)) as u64;
            packed += (jokers & 1) << 52;
            packed += ((jokers >> 1) & 1) << 56;
        }
        RankCounts(packed)
    }

    /// Picks, for each rank, the lowest-id cards of this set that make up `counts`; `None` if the
    /// set does not hold that many of some rank. This is how a rank-level play becomes physical
    /// cards.
    pub fn take(self, counts: RankCounts) -> Option<CardSet> {
        let mut out = 0u128;
        for (rank, n) in counts.iter() {
            let mut avail = self.0 & RANK_MASKS[rank.index()];
            for _ in 0..n {
                if avail == 0 {
                    return None;
                }
                let low = avail & avail.wrapping_neg();
                out |= low;
                avail &= avail - 1;
            }
        }
        Some(CardSet(out))
    }

    /// The lowest-id cards of the full two decks that make up `counts` (always possible for a
    /// valid `RankCounts`).
    pub fn from_counts(counts: RankCounts) -> CardSet {
        CardSet::FULL.take(counts).unwrap_or_default()
    }
}

impl FromIterator<Card> for CardSet {
    fn from_iter<I: IntoIterator<Item = Card>>(iter: I) -> CardSet {
        let mut s = CardSet::EMPTY;
        for c in iter {
            s.insert(c);
        }
        s
    }
}

impl fmt::Debug for CardSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl fmt::Display for CardSet {
    /// The rank notation of the set (suits dropped), weakest first.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.rank_counts(), f)
    }
}

/// A multiset of ranks: how many cards of each of the 15 ranks, four bits per rank in a `u64`.
///
/// This is the level at which plays are classified and compared (suits and deck copies never
/// matter). A valid value holds at most 8 of a suited rank and 2 of each joker.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct RankCounts(u64);

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

#[cfg(test)]
mod tests {
    use super::*;

    /// A card set read from its ids (JSON text, a JSON value, inside a buffered enum) is what
    /// `from_ids` makes of the list: the same set, or an error for a bad or repeated id
    /// wherever it is, or for anything but a list of ids.
    #[test]
    fn card_sets_read_from_ids_as_from_ids_makes_them() {
        let lists = [
            "[]",
            "[0]",
            "[107,0,53]",
            "[5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23]",
            "[108]",
            "[3,3]",
            "[1,200,1]",
            "[1,2,2,300]",
            "[-1]",
            "[1.5]",
            "[\"3\"]",
            "3",
            "{}",
            "null",
            "[1,",
        ];
        for text in lists {
            let oracle = serde_json::from_str::<Vec<u32>>(text)
                .ok()
                .map(|ids| CardSet::from_ids(&ids));
            let read = serde_json::from_str::<CardSet>(text);
            match oracle {
                Some(Ok(set)) => assert_eq!(read.unwrap(), set, "{text}"),
                Some(Err(e)) => {
                    let message = read.unwrap_err().to_string();
                    assert!(message.starts_with(&e.to_string()), "{text}: {message}");
                }
                None => assert!(read.is_err(), "{text}"),
            }
            if let Ok(value) = serde_json::from_str::<serde_json::Value>(text) {
                let from_value = serde_json::from_value::<CardSet>(value);
                assert_eq!(from_value.ok(), read_ok(text), "{text} as a value");
            }
        }
        #[derive(Debug, PartialEq, Deserialize)]
        #[serde(tag = "kind")]
        enum Tagged {
            Play { cards: CardSet },
        }
        let play: Tagged = serde_json::from_str(r#"{"kind":"Play","cards":[9,4]}"#).unwrap();
        let cards = CardSet::from_ids(&[4, 9]).unwrap();
        assert_eq!(play, Tagged::Play { cards });
        assert!(serde_json::from_str::<Tagged>(r#"{"kind":"Play","cards":[9,9]}"#).is_err());
    }

    fn read_ok(text: &str) -> Option<CardSet> {
        serde_json::from_str(text).ok()
    }

    #[test]
    fn card_ids_match_the_api_encoding() {
        let c = Card::new(0).unwrap();
        assert_eq!(
            (c.rank(), c.suit(), c.deck()),
            (Rank::THREE, Some(Suit::Spades), 0)
        );
        let c = Card::new(12).unwrap();
        assert_eq!(c.rank(), Rank::TWO);
        let c = Card::new(13 + 11).unwrap();
        assert_eq!((c.rank(), c.suit()), (Rank::ACE, Some(Suit::Hearts)));
        assert_eq!(Card::new(52).unwrap().rank(), Rank::SMALL_JOKER);
        assert_eq!(Card::new(53).unwrap().rank(), Rank::BIG_JOKER);
        let c = Card::new(54 + 51).unwrap();
        assert_eq!(
            (c.rank(), c.suit(), c.deck()),
            (Rank::TWO, Some(Suit::Diamonds), 1)
        );
        assert_eq!(Card::new(107).unwrap().rank(), Rank::BIG_JOKER);
        assert_eq!(Card::new(108), Err(CardError::BadCardId(108)));
        for c in Card::all() {
            let back = Card::from_parts(c.deck(), c.suit().unwrap_or(Suit::Spades), c.rank());
            assert_eq!(back, c);
        }
    }

    #[test]
    fn full_deck_counts() {
        assert_eq!(CardSet::FULL.len(), 108);
        assert_eq!(CardSet::FULL.rank_counts(), RankCounts::FULL);
        assert_eq!(RankCounts::FULL.total(), 108);
        for r in Rank::all() {
            assert_eq!(CardSet::FULL.of_rank(r).len() as u8, r.copies());
        }
    }

    #[test]
    fn notation_round_trips_and_accepts_variants() {
        let rc: RankCounts = "3 10 t,T j sj BJ bj 2 a".parse().unwrap();
        assert_eq!(rc.to_string(), "3 T T T J A 2 SJ BJ BJ");
        assert_eq!(rc.to_string().parse::<RankCounts>().unwrap(), rc);
        assert_eq!(rc.total(), 10);
    }

    #[test]
    fn notation_errors_name_the_token() {
        assert_eq!(
            "3 X 4".parse::<RankCounts>(),
            Err(CardError::UnknownToken("X".into()))
        );
        let e = "7 7 7 7 7 7 7 7 7".parse::<RankCounts>().unwrap_err();
        assert!(
            matches!(e, CardError::TooManyCopies { count: 9, .. }),
            "{e}"
        );
        let e = "sj SJ sj".parse::<RankCounts>().unwrap_err();
        assert!(
            matches!(
                e,
                CardError::TooManyCopies {
                    count: 3,
                    max: 2,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("sj"));
    }

    #[test]
    fn take_picks_lowest_ids() {
        let hand = CardSet::FULL;
        let play: RankCounts = "3 3 BJ".parse().unwrap();
        let cards = hand.take(play).unwrap();
        assert_eq!(cards.ids(), vec![0, 13, 53]);
        assert_eq!(cards.rank_counts(), play);
        let small = CardSet::from_ids(&[0, 1]).unwrap();
        assert_eq!(small.take("3 3".parse().unwrap()), None);
    }

    #[test]
    fn subset_and_arithmetic() {
        let a: RankCounts = "3 3 4".parse().unwrap();
        let b: RankCounts = "3 3 3 4 5".parse().unwrap();
        assert!(a.is_subset(b));
        assert!(!b.is_subset(a));
        assert_eq!(b.minus(a).unwrap().to_string(), "3 5");
        assert_eq!(a.minus(b), None);
        assert_eq!(a.plus(a).to_string(), "3 3 3 3 4 4");
        assert_eq!(
            RankCounts::from_bits(RankCounts::FULL.bits()),
            Some(RankCounts::FULL)
        );
        assert_eq!(RankCounts::from_bits(9), None);
    }

    #[test]
    fn rank_counts_match_a_count_per_rank() {
        let mut bits = 0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C834u128;
        for _ in 0..200 {
            bits = bits.rotate_left(7) ^ bits.wrapping_mul(0x2545_F491_4F6C_DD1D);
            let set = CardSet::from_bits(bits);
            let mut slow = RankCounts::EMPTY;
            for (i, m) in RANK_MASKS.iter().enumerate() {
                slow = slow.with(Rank(i as u8), (set.0 & m).count_ones() as u8);
            }
            assert_eq!(set.rank_counts(), slow, "{set:?}");
        }
        assert_eq!(CardSet::EMPTY.rank_counts(), RankCounts::EMPTY);
    }

    #[test]
    fn duplicate_ids_are_rejected() {
        assert_eq!(CardSet::from_ids(&[5, 5]), Err(CardError::DuplicateCard(5)));
        assert_eq!(CardSet::from_ids(&[200]), Err(CardError::BadCardId(200)));
    }
}
