//! The settled deals a live game keeps: how many, their running digest, the latest ones, and
//! each player's losing streak.

use std::sync::Arc;

use serde::ser::SerializeSeq;
use serde::{Deserialize, Serialize};

use super::kept::KeptDeals;
use super::packed::pack;
use super::{DealResult, HashScheme};

/// How many settled deals a live game keeps in memory (the latest ones: a default GetState
/// page, `service::wire::view::DEFAULT_RESULTS_LIMIT`); earlier ones are read back from the
/// store (`service::history::settled_deals`), so a game's memory does not grow with its match.
pub const RESULTS_KEPT: usize = 16;

/// The settled deals of a match: how many, a running digest of all of them for the chained
/// state hash (`digest_k = SHA-256(digest_{k-1} ‖ postcard(result_k))`, `digest_0` all zeros),
/// the latest [`RESULTS_KEPT`] in a compact form ([`KeptDeals`], decoded where read),
/// shared between copies of the state (the service prepares each action on a copy: only a
/// deal's end builds a new list), and each player's losing streak (the
/// bots' tilt, over the whole match). A game hashed with a whole-list scheme
/// ([`HashScheme::Json`], [`HashScheme::Compact`]) keeps every deal ([`Game::keep_every_result`]).
/// Serialized as the kept list; read back, the list is taken as the whole match (the digest and
/// streaks are recomputed from it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Results {
    pub(super) list: Arc<KeptDeals>,
    pub(super) settled: u32,
    pub(super) digest: [u8; 32],
    /// Deals in a row each player's team has lost (first place on the other team), by player.
    pub(super) streaks: Vec<u32>,
    pub(super) keep_all: bool,
}

impl Results {
    /// Settles one more deal.
    pub fn push(&mut self, result: &DealResult) {
        // Encoding a result cannot fail (no map, every length known).
        let encoded = postcard::to_stdvec(result).unwrap_or_default();
        self.digest = chain(&self.digest, &encoded);
        self.settled = self.settled.saturating_add(1);
        let players = result.players.iter().count();
        self.streaks.resize(self.streaks.len().max(players), 0);
        let first = result.places.first().copied();
        for (seat, player) in result.players.iter() {
            let lost = first.is_some_and(|f| seat.team() != f.team());
            if let Some(n) = self.streaks.get_mut(player.index()) {
                *n = if lost { n.saturating_add(1) } else { 0 };
            }
        }
        let full = !self.keep_all && self.list.len() >= RESULTS_KEPT;
        // Packing cannot fail either; empty bytes would only make the deal unreadable from
        // memory (a reader then goes to the store).
        self.list = Arc::new(self.list.with_next(usize::from(full), &pack(result)));
    }

    /// How many deals are settled.
    pub fn settled(&self) -> u32 {
        self.settled
    }

    /// The deals kept in memory, oldest first, decoded: the last `settled()` − `first_kept()`
    /// ones.
    pub fn kept(&self) -> Vec<DealResult> {
        self.list.all()
    }

    /// The deals kept at positions `range` (0 = the first kept), decoded; `None` when the range
    /// reaches past them.
    pub fn kept_at(&self, range: std::ops::Range<usize>) -> Option<Vec<DealResult>> {
        self.list.decode(range)
    }

    /// The latest deal settled, decoded (`None` before the first deal's end).
    pub fn last(&self) -> Option<DealResult> {
        self.list
            .len()
            .checked_sub(1)
            .and_then(|i| self.list.get(i))
    }

    /// True when the latest deals kept are `tail` (a rebuild's check that a snapshot repeats
    /// the deals it has).
    pub fn ends_with(&self, tail: &[DealResult]) -> bool {
        self.list.ends_with(tail)
    }

    /// The index (0-based, deal number − 1) of the first deal kept in memory.
    pub fn first_kept(&self) -> u32 {
        self.settled - self.list.len() as u32
    }

    /// No deal settled yet, for a game hashed with `scheme` (a whole-list scheme keeps every
    /// deal in memory: [`Game::keep_every_result`]).
    pub fn for_scheme(scheme: HashScheme) -> Results {
        Results {
            keep_all: scheme != HashScheme::Chained,
            ..Results::default()
        }
    }
}

/// The next link of the results digest, from the result's postcard encoding.
fn chain(digest: &[u8; 32], encoded: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(digest);
    h.update(encoded);
    h.finalize().into()
}

/// As the list of the deals kept (decoded one at a time).
impl Serialize for Results {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.list.len()))?;
        for i in 0..self.list.len() {
            let result = self
                .list
                .get(i)
                .ok_or_else(|| serde::ser::Error::custom("a kept deal does not decode"))?;
            seq.serialize_element(&result)?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for Results {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Results, D::Error> {
        let list = Vec::<DealResult>::deserialize(d)?;
        let mut results = Results::default();
        for r in &list {
            results.push(r);
        }
        Ok(results)
    }
}
