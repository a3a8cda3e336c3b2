//! Sets of physical cards (`CardSet`, a 108-bit set) and their serialized form (a list of ids).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{Card, CardError, DECK_SIZE, RANK_COUNT, Rank, RankCounts};

/// A set of physical cards: a 108-bit set in a `u128`.
///
/// Serialized as the list of its card ids (readable in logs and snapshots, and safe inside
/// internally tagged enums, whose buffering has no `u128`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CardSet(pub(super) u128);

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

pub(super) const RANK_MASKS: [u128; RANK_COUNT] = {
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
