//! Which games this replica owns: the shards (`store::shard`) whose leases it holds, and where
//! the others are. Only the owner of a game keeps it in memory past one request, recovers it,
//! runs its turn timers, bot seats and reconnect windows, and counts it against `--max-games`;
//! a replica that does not own a game forwards its rpcs to the owner (`rpc::forward`).
//!
//! - this file: [`Ownership`], the owned set (an atomic bitset, read on every request) and the
//!   internal address of each other shard's holder (from the last scan of the leases);
//! - [`leases`]: the loop that takes, renews and releases leases (a fair share per live replica)
//!   and tells its [`leases::Host`] which shards it gained and lost.
//!
//! With the memory or the embedded store the one process owns every shard and no lease is ever
//! read ([`Ownership::all`]).
//!
//! Depends on the store (leases, shards) only; `games` and `app` depend on it.

pub mod leases;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;

use crate::store::shard::{SHARDS, Shard, shard_of};

/// This replica as its leases name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// Unique per process start (a restarted replica is a new member).
    pub replica: String,
    /// The internal gRPC address other replicas forward to (`host:port`).
    pub addr: String,
}

impl Identity {
    /// A fresh identity advertising `addr`.
    pub fn new(addr: String) -> Result<Identity, String> {
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).map_err(|e| format!("no OS randomness: {e}"))?;
        Ok(Identity {
            replica: hex::encode(bytes),
            addr,
        })
    }

    /// The value of a lease this replica holds: `<replica id> <address>`.
    pub fn lease_value(&self) -> String {
        format!("{} {}", self.replica, self.addr)
    }
}

/// A lease's value split into the holder's replica id and address.
pub fn parse_lease(value: &str) -> Option<(&str, &str)> {
    let (replica, addr) = value.split_once(' ')?;
    (!replica.is_empty() && !addr.is_empty()).then_some((replica, addr))
}

/// How the leases are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaseSettings {
    /// A lease (and a membership) lasts this long without renewal.
    pub ttl: Duration,
}

impl LeaseSettings {
    /// Leases are renewed every third of their TTL: two renewals may fail before one lapses.
    pub fn renew_every(&self) -> Duration {
        self.ttl / 3
    }
}

/// Where the rpcs of a game are served.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// This replica owns the game.
    Here,
    /// Another replica does, at this internal address.
    There(Arc<str>),
    /// Nobody is known to (a lease lapsed and is not taken yet): retry shortly.
    Unknown,
}

/// The shards this replica owns, and who holds the others.
pub struct Ownership {
    /// `None`: the one process owns every shard (memory, embedded store).
    leased: Option<(Identity, LeaseSettings)>,
    /// Bit `s` set: shard `s` is owned here.
    owned: [AtomicU64; 2],
    /// The internal address of each shard's holder, as last read (`None`: free or unknown).
    holders: Mutex<Vec<Option<Arc<str>>>>,
    /// Bumped whenever shards are lost: WatchGame streams of a game that moved end, so their
    /// clients resume on its new owner.
    moves: watch::Sender<u64>,
}

impl Ownership {
    fn with(leased: Option<(Identity, LeaseSettings)>, all: bool) -> Arc<Ownership> {
        let bits = if all { u64::MAX } else { 0 };
        Arc::new(Ownership {
            leased,
            owned: [AtomicU64::new(bits), AtomicU64::new(bits)],
            holders: Mutex::new(vec![None; usize::from(SHARDS)]),
            moves: watch::channel(0).0,
        })
    }

    /// The one process owns every shard, with no lease (memory, embedded store).
    pub fn all() -> Arc<Ownership> {
        Ownership::with(None, true)
    }

    /// Shards are owned through leases in a shared store; none yet.
    pub fn leased(identity: Identity, settings: LeaseSettings) -> Arc<Ownership> {
        Ownership::with(Some((identity, settings)), false)
    }

    /// This replica's identity and lease settings, when it holds leases.
    pub fn lease(&self) -> Option<&(Identity, LeaseSettings)> {
        self.leased.as_ref()
    }

    /// True when replicas divide the shards (a shared store): games not owned are elsewhere.
    pub fn divided(&self) -> bool {
        self.leased.is_some()
    }

    fn word_bit(shard: Shard) -> (usize, u64) {
        (usize::from(shard / 64), 1u64 << (shard % 64))
    }

    /// True while shard `shard` is owned here.
    pub fn owns(&self, shard: Shard) -> bool {
        let (w, bit) = Ownership::word_bit(shard);
        self.owned
            .get(w)
            .is_some_and(|word| word.load(Ordering::Acquire) & bit != 0)
    }

    /// True while game `id` is owned here.
    pub fn owns_game(&self, id: &str) -> bool {
        !self.divided() || self.owns(shard_of(id))
    }

    /// The shards owned here, in order.
    pub fn owned_shards(&self) -> Vec<Shard> {
        (0..SHARDS).filter(|&s| self.owns(s)).collect()
    }

    /// Marks shards owned (true) or not.
    fn set(&self, shards: &[Shard], owned: bool) {
        for &shard in shards {
            let (w, bit) = Ownership::word_bit(shard);
            if let Some(word) = self.owned.get(w) {
                if owned {
                    word.fetch_or(bit, Ordering::AcqRel);
                } else {
                    word.fetch_and(!bit, Ordering::AcqRel);
                }
            }
        }
        if !owned && !shards.is_empty() {
            self.moves.send_modify(|n| *n += 1);
        }
    }

    /// Where game `id`'s rpcs are served.
    pub fn route(&self, id: &str) -> Route {
        let shard = shard_of(id);
        if !self.divided() || self.owns(shard) {
            return Route::Here;
        }
        let holder = self
            .holders
            .lock()
            .ok()
            .and_then(|h| h.get(usize::from(shard)).cloned().flatten());
        match holder {
            Some(addr) if self.leased.as_ref().is_none_or(|(me, _)| *addr != *me.addr) => {
                Route::There(addr)
            }
            _ => Route::Unknown,
        }
    }

    /// Records the holders read from the store (lease values in shard order).
    fn set_holders(&self, values: &[Option<String>]) {
        if let Ok(mut holders) = self.holders.lock() {
            for (slot, value) in holders.iter_mut().zip(values) {
                *slot = value
                    .as_deref()
                    .and_then(parse_lease)
                    .map(|(_, addr)| Arc::from(addr));
            }
        }
    }

    /// Changes whenever shards are lost here (a WatchGame stream then checks its game).
    pub fn moves(&self) -> watch::Receiver<u64> {
        self.moves.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leased() -> Arc<Ownership> {
        let me = Identity {
            replica: "aa".into(),
            addr: "10.0.0.1:50051".into(),
        };
        Ownership::leased(
            me,
            LeaseSettings {
                ttl: Duration::from_secs(3),
            },
        )
    }

    #[test]
    fn the_one_process_owns_every_game() {
        let o = Ownership::all();
        assert!(!o.divided());
        assert_eq!(o.owned_shards().len(), usize::from(SHARDS));
        assert_eq!(o.route("any"), Route::Here);
    }

    #[test]
    fn a_leased_replica_owns_what_it_marks_and_routes_the_rest() {
        let o = leased();
        let id = "game-1"; // shard 37 (pinned in store::shard)
        assert_eq!(shard_of(id), 37);
        assert!(!o.owns_game(id));
        assert_eq!(o.route(id), Route::Unknown, "nobody known");
        let mut values = vec![None; usize::from(SHARDS)];
        values[37] = Some("bb 10.0.0.2:50051".to_string());
        values[64] = Some("aa 10.0.0.1:50051".to_string());
        o.set_holders(&values);
        assert_eq!(o.route(id), Route::There(Arc::from("10.0.0.2:50051")));
        let moved = o.moves();
        o.set(&[37, 64, 127], true);
        assert!(o.owns(37) && o.owns(64) && o.owns(127) && !o.owns(63));
        assert_eq!(o.owned_shards(), vec![37, 64, 127]);
        assert_eq!(o.route(id), Route::Here);
        assert!(!moved.has_changed().unwrap(), "gains move nothing away");
        o.set(&[37], false);
        assert!(moved.has_changed().unwrap());
        assert_eq!(o.owned_shards(), vec![64, 127]);
        // The store still names this replica for a shard it no longer counts as its own: unknown.
        values[37] = Some("aa 10.0.0.1:50051".to_string());
        o.set_holders(&values);
        assert_eq!(o.route(id), Route::Unknown);
    }

    #[test]
    fn lease_values_name_the_replica_and_its_address() {
        assert_eq!(parse_lease("ab 1.2.3.4:5"), Some(("ab", "1.2.3.4:5")));
        assert_eq!(parse_lease("ab"), None);
        assert_eq!(parse_lease(" 1.2.3.4:5"), None);
    }
}
