//! The lease loop of a replica on a shared store. Every [`LeaseSettings::renew_every`] (a third
//! of the TTL) it:
//! 1. sends its membership heartbeat (the live members come back: the fair share is
//!    `ceil(SHARDS / members)`);
//! 2. reads every shard's holder (for routing, and to see the free shards);
//! 3. renews its own leases: one it no longer holds is lost (its games are dropped);
//! 4. takes free shards up to its share, and releases those beyond it (a handover: the games are
//!    dropped here first, then the lease is deleted, so the next owner may take it at once).
//!
//! A replica that cannot reach the store keeps its shards only while its last successful renewal
//! is younger than the TTL (by the monotonic clock, less a margin): then it drops them all, before
//! Redis lets another replica take them. Once the service drains (SIGTERM), the next round hands
//! every shard over and leaves the membership ([`stop`], also run at the end of the drain).

use std::future::Future;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use super::{Ownership, parse_lease};
use crate::store::Store;
use crate::store::shard::{SHARDS, Shard};

/// What the lease loop serves.
pub trait Host: Send + Sync + 'static {
    /// The store holding the leases.
    fn lease_store(&self) -> &Store;
    fn ownership(&self) -> &Ownership;
    /// True once the service drains: its shards are handed over, none is taken.
    fn draining(&self) -> bool;
    /// Shards newly owned here: recover their unfinished games.
    fn gained(&self, shards: Vec<Shard>) -> impl Future<Output = ()> + Send;
    /// Shards no longer owned here: drop their games from memory (timers included).
    fn lost(&self, shards: Vec<Shard>) -> impl Future<Output = ()> + Send;
}

/// What one round decided from what it read.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Free shards to try to take.
    pub take: Vec<Shard>,
    /// Owned shards to hand over.
    pub release: Vec<Shard>,
}

/// The fair share of each of `members` live replicas.
pub fn share(members: usize) -> usize {
    usize::from(SHARDS).div_ceil(members.max(1))
}

/// The round's plan for the replica at `rank` among `members` live replicas that holds `owned`
/// (after renewal), given each shard's holder (`free[s]`: nobody holds shard `s`). Free shards
/// are tried from the replica's own part of the ring (`rank × SHARDS / members`), so replicas
/// starting together mostly ask for different shards; the shards released are the last owned.
pub fn plan(owned: &[Shard], free: &[bool], rank: usize, members: usize) -> Plan {
    let share = share(members);
    let mut plan = Plan::default();
    if owned.len() > share {
        plan.release = owned[share..].to_vec();
        return plan;
    }
    let want = share - owned.len();
    let start = rank.min(members.max(1) - 1) * usize::from(SHARDS) / members.max(1);
    let n = usize::from(SHARDS);
    plan.take = (0..n)
        .map(|i| ((start + i) % n) as Shard)
        .filter(|&s| free.get(usize::from(s)).copied().unwrap_or(false))
        .take(want)
        .collect();
    plan
}

/// The loop's memory between rounds.
struct Round {
    /// Until when the leases renewed last are surely still ours (monotonic clock).
    valid_until: Option<Instant>,
    /// A store failure was logged (not again until it recovers).
    failing: bool,
    /// The replica left at the drain's start (its shards handed over).
    left: bool,
}

/// Runs one round (see the module's steps). Returns how long to wait before the next.
async fn round<H: Host>(host: &H, state: &mut Round) -> Duration {
    let own = host.ownership();
    let Some((me, settings)) = own.lease().cloned() else {
        return Duration::from_secs(3600);
    };
    let store = host.lease_store();
    let every = settings.renew_every();
    if host.draining() {
        // SIGTERM: hand every shard over now, not at the drain's end, and leave the membership
        // (the others' share then covers these shards too): moves are refused here while the
        // service drains, and the new owners take them at their next round.
        if !state.left {
            stop(host).await;
            state.left = true;
        }
        return every;
    }
    let sent = Instant::now();
    let read = async {
        let members = store.heartbeat(&me.replica, Some(settings.ttl)).await?;
        let holders = store.lease_holders().await?;
        let owned = own.owned_shards();
        let renewed = store
            .renew_leases(&owned, &me.lease_value(), settings.ttl)
            .await?;
        Ok::<_, crate::store::StoreError>((members, holders, owned, renewed))
    };
    let (members, holders, owned, renewed) = match read.await {
        Ok(r) => r,
        Err(e) => {
            if !state.failing {
                tracing::warn!(error = %e, "shard leases: the store does not answer; keeping the shards until their leases would lapse");
                state.failing = true;
            }
            if state.valid_until.is_some_and(|t| Instant::now() >= t) {
                let all = own.owned_shards();
                if !all.is_empty() {
                    tracing::warn!(
                        shards = all.len(),
                        "shard leases lapsed without renewal: dropping their games"
                    );
                    own.set(&all, false);
                    host.lost(all).await;
                }
                state.valid_until = None;
            }
            return every;
        }
    };
    if state.failing {
        tracing::info!("shard leases: the store answers again");
        state.failing = false;
    }
    // Redis counts the TTL from when it ran the renewal, after `sent`; a tenth is kept as a
    // margin for the two clocks' rates.
    state.valid_until = Some(sent + settings.ttl - settings.ttl / 10);
    own.set_holders(&holders);
    let lost: Vec<Shard> = owned
        .iter()
        .zip(&renewed)
        .filter(|(_, ok)| !**ok)
        .map(|(s, _)| *s)
        .collect();
    if !lost.is_empty() {
        tracing::warn!(shards = ?lost, "shard leases lost to another replica or lapsed: dropping their games");
        own.set(&lost, false);
        host.lost(lost).await;
    }
    let kept: Vec<Shard> = own.owned_shards();
    let free: Vec<bool> = holders.iter().map(Option::is_none).collect();
    let rank = members.iter().position(|m| *m == me.replica).unwrap_or(0);
    let plan = plan(&kept, &free, rank, members.len());
    if !plan.release.is_empty() {
        own.set(&plan.release, false);
        host.lost(plan.release.clone()).await;
        if let Err(e) = store.release_leases(&plan.release, &me.lease_value()).await {
            tracing::warn!(error = %e, "releasing shard leases failed: they lapse after their TTL");
        }
        tracing::info!(
            shards = plan.release.len(),
            members = members.len(),
            "shards handed over"
        );
    }
    if !plan.take.is_empty() {
        match store
            .take_leases(&plan.take, &me.lease_value(), settings.ttl)
            .await
        {
            Ok(taken) => {
                let gained: Vec<Shard> = plan
                    .take
                    .iter()
                    .zip(&taken)
                    .filter(|(_, ok)| **ok)
                    .map(|(s, _)| *s)
                    .collect();
                if !gained.is_empty() {
                    own.set(&gained, true);
                    // Holders for routing: this replica now.
                    let mut values: Vec<Option<String>> = holders.clone();
                    for &s in &gained {
                        values[usize::from(s)] = Some(me.lease_value());
                    }
                    own.set_holders(&values);
                    tracing::info!(
                        shards = gained.len(),
                        owned = own.owned_shards().len(),
                        members = members.len(),
                        "shards taken"
                    );
                    host.gained(gained).await;
                }
            }
            Err(e) => tracing::warn!(error = %e, "taking shard leases failed"),
        }
    }
    let others = holders
        .iter()
        .flatten()
        .filter(|v| parse_lease(v).is_some_and(|(r, _)| r != me.replica))
        .count();
    tracing::debug!(
        owned = own.owned_shards().len(),
        others,
        members = members.len(),
        "lease round"
    );
    every
}

/// Runs the first round now (the shards taken are recovered before this returns), then starts
/// the loop. The loop holds the host weakly: it ends once the service is dropped, or at [`stop`].
pub async fn start<H: Host>(host: &Arc<H>) -> tokio::task::JoinHandle<()> {
    let mut state = Round {
        valid_until: None,
        failing: false,
        left: false,
    };
    let mut wait = round(host.as_ref(), &mut state).await;
    let weak: Weak<H> = Arc::downgrade(host);
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(wait).await;
            let Some(host) = weak.upgrade() else {
                return;
            };
            wait = round(host.as_ref(), &mut state).await;
        }
    })
}

/// Hands every shard over at once (a SIGTERM, once the drain is done): the games are dropped,
/// the leases deleted and the membership left, so the other replicas take the shards at their
/// next round, not after a TTL. The loop must be stopped first.
pub async fn stop<H: Host>(host: &H) {
    let own = host.ownership();
    let Some((me, _)) = own.lease().cloned() else {
        return;
    };
    let store = host.lease_store();
    let owned = own.owned_shards();
    own.set(&owned, false);
    host.lost(owned.clone()).await;
    if let Err(e) = store.release_leases(&owned, &me.lease_value()).await {
        tracing::warn!(error = %e, "releasing the shard leases at shutdown failed: they lapse after their TTL");
    }
    if let Err(e) = store.heartbeat(&me.replica, None).await {
        tracing::warn!(error = %e, "leaving the replica membership failed: it lapses after its TTL");
    }
    tracing::info!(shards = owned.len(), "shard leases released");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_free() -> Vec<bool> {
        vec![true; usize::from(SHARDS)]
    }

    #[test]
    fn the_share_is_the_ceiling_of_shards_over_members() {
        assert_eq!(share(1), 128);
        assert_eq!(share(3), 43);
        assert_eq!(share(0), 128, "no member read: this replica alone");
        // Shares cover every shard: 3 × 43 ≥ 128, 5 × 26 ≥ 128.
        for n in 1..=40 {
            assert!(share(n) * n >= usize::from(SHARDS));
            assert!((share(n) - 1) * n < usize::from(SHARDS));
        }
    }

    #[test]
    fn a_replica_takes_free_shards_from_its_part_of_the_ring_up_to_its_share() {
        let p = plan(&[], &all_free(), 1, 3);
        assert_eq!(p.take.len(), 43);
        assert_eq!(p.take[0], 42, "rank 1 of 3 starts at 128/3");
        assert!(p.release.is_empty());
        // Holding 40 already, 3 more of the free ones (skipping the taken).
        let owned: Vec<Shard> = (0..40).collect();
        let mut free = all_free();
        for f in free.iter_mut().take(50) {
            *f = false;
        }
        let p = plan(&owned, &free, 0, 3);
        assert_eq!(p.take, vec![50, 51, 52]);
    }

    #[test]
    fn a_replica_over_its_share_releases_its_last_shards() {
        let owned: Vec<Shard> = (0..SHARDS).collect();
        let p = plan(&owned, &[false; 128], 0, 3);
        assert!(p.take.is_empty());
        assert_eq!(p.release, (43..128).collect::<Vec<Shard>>());
        assert_eq!(plan(&owned, &[], 0, 1), Plan::default(), "alone: keeps all");
    }
}
