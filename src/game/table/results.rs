//! The settled deals a live game keeps: how many, their running digest, the latest ones, and
//! each player's losing streak.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{DealResult, HashScheme};

/// How many settled deals a live game keeps in memory (the latest ones: a default GetState
/// page, `service::wire::view::DEFAULT_RESULTS_LIMIT`); earlier ones are read back from the
/// store (`service::history::settled_deals`), so a game's memory does not grow with its match.
pub const RESULTS_KEPT: usize = 16;

/// The settled deals of a match: how many, a running digest of all of them for the chained
/// state hash (`digest_k = SHA-256(digest_{k-1} ‖ postcard(result_k))`, `digest_0` all zeros),
/// the latest [`RESULTS_KEPT`] in full, shared between copies of the state (the service prepares
/// each action on a copy: only a deal's end copies them), and each player's losing streak (the
/// bots' tilt, over the whole match). A game hashed with a whole-list scheme
/// ([`HashScheme::Json`], [`HashScheme::Compact`]) keeps every deal ([`Game::keep_every_result`]).
/// Serialized as the kept list; read back, the list is taken as the whole match (the digest and
/// streaks are recomputed from it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Results {
    pub(super) list: Arc<Vec<DealResult>>,
    pub(super) settled: u32,
    pub(super) digest: [u8; 32],
    /// Deals in a row each player's team has lost (first place on the other team), by player.
    pub(super) streaks: Vec<u32>,
    pub(super) keep_all: bool,
}

impl Results {
    /// Settles one more deal.
    pub fn push(&mut self, result: DealResult) {
        self.digest = chain(&self.digest, &result);
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
        let list = Arc::make_mut(&mut self.list);
        if !self.keep_all && list.len() >= RESULTS_KEPT {
            list.remove(0);
        }
        list.push(result);
    }

    /// How many deals are settled.
    pub fn settled(&self) -> u32 {
        self.settled
    }

    /// The deals kept in memory, oldest first: the last `settled()` − `first_kept()` ones.
    pub fn kept(&self) -> &[DealResult] {
        &self.list
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

/// The next link of the results digest.
fn chain(digest: &[u8; 32], result: &DealResult) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(digest);
    h.update(postcard::to_stdvec(result).unwrap_or_default());
    h.finalize().into()
}

impl Serialize for Results {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.list.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Results {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Results, D::Error> {
        let list = Vec::<DealResult>::deserialize(d)?;
        let mut results = Results::default();
        for r in list {
            results.push(r);
        }
        Ok(results)
    }
}
