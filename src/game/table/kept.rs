//! The settled deals a live game keeps in memory, held in their compact form
//! ([`super::packed`]: postcard with each line text once) in one buffer, and decoded where they
//! are read.
//!
//! A [`DealResult`] in memory is ≈ 600–900 B of heap (its score lines' label and detail text,
//! one `String` each and repeated for every seat, and the per-seat lists); packed, it is a
//! fraction of that, and one allocation holds all the deals kept. Readers (a GetState page, the
//! snapshot writer, the next deal's seating facts) decode the few they need.

use std::fmt;
use std::ops::Range;

use super::DealResult;
use super::packed::unpack;

/// Packed deal results, oldest first: their bytes one after the other and where each ends.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct KeptDeals {
    bytes: Vec<u8>,
    /// The end (exclusive) of each deal's encoding in `bytes`.
    ends: Vec<u32>,
}

impl KeptDeals {
    /// How many deals are kept.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// These deals without the oldest `drop` ones and with `encoded` (one deal, packed) after
    /// them, in buffers of exactly their size (a deal's end builds it once; the state copies of
    /// the actions in between share it).
    pub fn with_next(&self, drop: usize, encoded: &[u8]) -> KeptDeals {
        let drop = drop.min(self.len());
        let from = self.start(drop);
        let rest = self.bytes.get(from..).unwrap_or_default();
        let mut bytes = Vec::with_capacity(rest.len() + encoded.len());
        bytes.extend_from_slice(rest);
        bytes.extend_from_slice(encoded);
        let rest = self.ends.get(drop..).unwrap_or_default();
        let mut ends = Vec::with_capacity(rest.len() + 1);
        // Offsets fit in u32: a kept list is a few KB (every deal of a whole-list scheme's
        // match: well under 4 GiB).
        let shift = from as u32;
        ends.extend(rest.iter().map(|e| e.saturating_sub(shift)));
        ends.push(bytes.len() as u32);
        KeptDeals { bytes, ends }
    }

    /// Where the `i`th deal's bytes start.
    fn start(&self, i: usize) -> usize {
        match i.checked_sub(1) {
            Some(prev) => self
                .ends
                .get(prev)
                .map_or(self.bytes.len(), |&e| e as usize),
            None => 0,
        }
    }

    /// The bytes of the `i`th deal kept.
    fn encoded(&self, i: usize) -> Option<&[u8]> {
        let end = *self.ends.get(i)? as usize;
        self.bytes.get(self.start(i)..end)
    }

    /// The `i`th deal kept, decoded.
    pub fn get(&self, i: usize) -> Option<DealResult> {
        unpack(self.encoded(i)?)
    }

    /// The deals kept at positions `range`, decoded (`None` when the range reaches past them).
    pub fn decode(&self, range: Range<usize>) -> Option<Vec<DealResult>> {
        if range.start > range.end || range.end > self.len() {
            return None;
        }
        range.map(|i| self.get(i)).collect()
    }

    /// Every deal kept, decoded, oldest first.
    pub fn all(&self) -> Vec<DealResult> {
        (0..self.len()).filter_map(|i| self.get(i)).collect()
    }

    /// True when the latest deals kept are `tail`.
    pub fn ends_with(&self, tail: &[DealResult]) -> bool {
        let Some(first) = self.len().checked_sub(tail.len()) else {
            return false;
        };
        let same = |(k, r): (usize, &DealResult)| self.get(first + k).as_ref() == Some(r);
        tail.iter().enumerate().all(same)
    }
}

/// The deals, decoded (as the list of results they stand for).
impl fmt::Debug for KeptDeals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.all()).finish()
    }
}
