//! Shard leases and replica membership on Redis (see `store::lease` for the protocol).
//!
//! Keys (under the store's prefix, `sk:` by default):
//! - `sk:{sN}:lease`: the holder of shard `N`'s lease (`<replica id> <internal address>`), with a
//!   TTL (`PX`): taken with `SET NX PX`, renewed with a compare-and-`PEXPIRE`, released with a
//!   compare-and-`DEL`. Each call touches one key (the shard's hash tag), so each is Redis
//!   Cluster-safe; several go in one pipelined round trip.
//! - `sk:members`: a sorted set of the live replicas, each scored with the Redis server's time
//!   (ms) at which its membership lapses. A heartbeat drops the lapsed ones, (re)adds its own and
//!   reads the rest, in one script on one key. TTLs and expiry are Redis's clock, never the
//!   replicas'.

use std::time::Duration;

use super::conn::{each_command, each_key};
use super::{RedisStore, store_error};
use crate::store::StoreError;
use crate::store::shard::{SHARDS, Shard, hash_tag};

/// Renews a lease still held by the caller. KEYS: lease. ARGV: holder, ttl ms. 1 | 0.
const RENEW_LUA: &str = r#"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"#;

/// Releases a lease still held by the caller. KEYS: lease. ARGV: holder. 1 | 0.
const RELEASE_LUA: &str = r#"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"#;

/// A replica's heartbeat. KEYS: members. ARGV: replica id, ttl ms (0: leave). Returns the live
/// members' ids. The time is the Redis server's (`TIME`).
const MEMBERS_LUA: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local ttl = tonumber(ARGV[2])
if ttl > 0 then
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
else
  redis.call('ZREM', KEYS[1], ARGV[1])
end
return redis.call('ZRANGE', KEYS[1], 0, -1)
"#;

fn millis(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl RedisStore {
    fn lease_key(&self, shard: Shard) -> String {
        format!("{}{}:lease", self.keys.prefix, hash_tag(shard))
    }

    /// The holder of every shard's lease (`None`: free), in shard order; one round trip (on a
    /// cluster, one per shard, concurrently: each lease key has its shard's slot).
    pub async fn lease_holders(&self) -> Result<Vec<Option<String>>, StoreError> {
        let keys = (0..SHARDS).map(|shard| self.lease_key(shard)).collect();
        self.call("lease_holders", each_key(&self.conn, "GET", keys, &[]))
            .await
    }

    /// Takes the free ones of `shards` for `holder` for `ttl` (`SET NX PX`): true for each taken.
    pub async fn take_leases(
        &self,
        shards: &[Shard],
        holder: &str,
        ttl: Duration,
    ) -> Result<Vec<bool>, StoreError> {
        if shards.is_empty() {
            return Ok(Vec::new());
        }
        let commands = shards
            .iter()
            .map(|&shard| {
                let key = self.lease_key(shard);
                let mut cmd = redis::cmd("SET");
                cmd.arg(&key)
                    .arg(holder)
                    .arg("NX")
                    .arg("PX")
                    .arg(millis(ttl));
                (key, cmd)
            })
            .collect();
        let answers: Vec<Option<String>> = self
            .call("take_leases", each_command(&self.conn, commands))
            .await?;
        Ok(answers.into_iter().map(|a| a.is_some()).collect())
    }

    /// Extends `holder`'s leases of `shards` to `ttl` from now: true for each still held.
    pub async fn renew_leases(
        &self,
        shards: &[Shard],
        holder: &str,
        ttl: Duration,
    ) -> Result<Vec<bool>, StoreError> {
        self.compare_each(
            "renew_leases",
            RENEW_LUA,
            shards,
            &[holder, &millis(ttl).to_string()],
        )
        .await
    }

    /// Ends `holder`'s leases of `shards` at once (a lease another replica holds is left).
    pub async fn release_leases(&self, shards: &[Shard], holder: &str) -> Result<(), StoreError> {
        self.compare_each("release_leases", RELEASE_LUA, shards, &[holder])
            .await
            .map(drop)
    }

    /// Runs `lua` on each shard's lease key with `args`, pipelined (per slot on a cluster): true
    /// where it returned 1.
    async fn compare_each(
        &self,
        op: &'static str,
        lua: &str,
        shards: &[Shard],
        args: &[&str],
    ) -> Result<Vec<bool>, StoreError> {
        if shards.is_empty() {
            return Ok(Vec::new());
        }
        let commands = shards
            .iter()
            .map(|&shard| {
                let key = self.lease_key(shard);
                let mut cmd = redis::cmd("EVAL");
                cmd.arg(lua).arg(1).arg(&key).arg(args);
                (key, cmd)
            })
            .collect();
        let answers: Vec<i64> = self.call(op, each_command(&self.conn, commands)).await?;
        Ok(answers.into_iter().map(|a| a == 1).collect())
    }

    /// A heartbeat of `replica` (its membership lasts `ttl`; `None`: it leaves): the live
    /// members' ids, sorted.
    pub async fn heartbeat(
        &self,
        replica: &str,
        ttl: Option<Duration>,
    ) -> Result<Vec<String>, StoreError> {
        let key = format!("{}members", self.keys.prefix);
        let ttl = ttl.map_or(0, millis);
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(MEMBERS_LUA).arg(1).arg(key).arg(replica).arg(ttl);
        let mut conn = self.conn.clone();
        let members: Vec<String> = self.call("heartbeat", cmd.query_async(&mut conn)).await?;
        if members.is_empty() && ttl > 0 {
            return Err(store_error("heartbeat", "the members set came back empty"));
        }
        Ok(members)
    }
}
