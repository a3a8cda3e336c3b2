//! Shard leases and replica membership: how replicas sharing a store divide the games
//! (`service::ownership` runs the protocol; docs/OPERATIONS.md, "Replicas and shard leases").
//!
//! Only a shared store (Redis) has leases: with the memory or the embedded store the one process
//! owns every shard and never calls these. On Redis (`store::redis::lease`):
//! - a shard's lease is one key holding `<replica id> <internal address>` with a TTL kept by
//!   Redis (`PX`): taken only when free, renewed and released only by its holder (compare then
//!   act, in one script), so two replicas never hold one shard at once as Redis sees it;
//! - membership is a heartbeat in one sorted set, lapsing after its TTL by Redis's clock: every
//!   replica sees the same live members and computes the same fair share.
//!
//! A lease is a promise about who acts, not a lock on the data: a replica paused past its TTL may
//! still send an append, and the log's compare-and-append refuses it once the new owner has
//! appended (never applied twice).

use std::time::Duration;

use super::shard::Shard;
use super::{Store, StoreError};

fn unshared(op: &'static str) -> StoreError {
    StoreError {
        op,
        message: "leases are kept only by a shared (Redis) store".to_string(),
    }
}

impl Store {
    /// The holder of every shard's lease (`None`: free), in shard order.
    pub async fn lease_holders(&self) -> Result<Vec<Option<String>>, StoreError> {
        match self {
            Store::Redis(s) => s.lease_holders().await,
            _ => Err(unshared("lease_holders")),
        }
    }

    /// Takes the free ones of `shards` for `holder` for `ttl`: true for each taken.
    pub async fn take_leases(
        &self,
        shards: &[Shard],
        holder: &str,
        ttl: Duration,
    ) -> Result<Vec<bool>, StoreError> {
        match self {
            Store::Redis(s) => s.take_leases(shards, holder, ttl).await,
            _ => Err(unshared("take_leases")),
        }
    }

    /// Extends `holder`'s leases of `shards` to `ttl` from now: true for each it still held.
    pub async fn renew_leases(
        &self,
        shards: &[Shard],
        holder: &str,
        ttl: Duration,
    ) -> Result<Vec<bool>, StoreError> {
        match self {
            Store::Redis(s) => s.renew_leases(shards, holder, ttl).await,
            _ => Err(unshared("renew_leases")),
        }
    }

    /// Ends `holder`'s leases of `shards` at once (a handover: no TTL to wait).
    pub async fn release_leases(&self, shards: &[Shard], holder: &str) -> Result<(), StoreError> {
        match self {
            Store::Redis(s) => s.release_leases(shards, holder).await,
            _ => Err(unshared("release_leases")),
        }
    }

    /// A heartbeat of `replica`, a member for `ttl` more (`None`: it leaves now): the ids of
    /// the live members, sorted.
    pub async fn heartbeat(
        &self,
        replica: &str,
        ttl: Option<Duration>,
    ) -> Result<Vec<String>, StoreError> {
        match self {
            Store::Redis(s) => s.heartbeat(replica, ttl).await,
            _ => Err(unshared("heartbeat")),
        }
    }
}
