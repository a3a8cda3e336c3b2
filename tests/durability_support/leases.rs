//! The shard leases of replicas on one Redis (`sk:{sN}:lease`, issue 39), read directly from
//! Redis: who holds each shard, and a wait until replicas hold a fair share each.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use shuangkou::store::shard::SHARDS;

use super::{RedisServer, Server};

/// The lease holders' addresses per shard, read from Redis (`None`: free).
pub fn lease_addrs(redis: &RedisServer) -> Vec<Option<String>> {
    let client = ::redis::Client::open(redis.url()).expect("redis url");
    let mut conn = client.get_connection().expect("redis connection");
    (0..SHARDS)
        .map(|s| {
            let v: Option<String> = ::redis::cmd("GET")
                .arg(format!("sk:{{s{s}}}:lease"))
                .query(&mut conn)
                .expect("GET lease");
            v.and_then(|v| v.split_once(' ').map(|(_, addr)| addr.to_string()))
        })
        .collect()
}

/// Shards held per address.
pub fn held(leases: &[Option<String>]) -> HashMap<String, usize> {
    let mut n = HashMap::new();
    for a in leases.iter().flatten() {
        *n.entry(a.clone()).or_insert(0) += 1;
    }
    n
}

/// Waits (at most `limit`) until every shard is held and the `servers` hold a fair share each
/// (`ceil` or `floor` of 128 / their number); returns the leases.
pub async fn balanced(
    redis: &RedisServer,
    servers: &[&Server],
    limit: Duration,
) -> Vec<Option<String>> {
    let deadline = Instant::now() + limit;
    let n = servers.len();
    let (lo, hi) = (usize::from(SHARDS) / n, usize::from(SHARDS).div_ceil(n));
    loop {
        let leases = lease_addrs(redis);
        let counts = held(&leases);
        let fair = servers.iter().all(|s| {
            let c = counts.get(&s.addr.to_string()).copied().unwrap_or(0);
            (lo..=hi).contains(&c)
        });
        if fair && leases.iter().all(Option::is_some) {
            return leases;
        }
        assert!(
            Instant::now() < deadline,
            "the shards were not divided fairly within {limit:?}: {counts:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// [`balanced`], then two rounds of the lease loop (TTL 3 s: 1 s each), so that every replica's
/// routing table names the final holders (a request forwarded on a table one round old is
/// refused with a retryable UNAVAILABLE).
pub async fn settled(
    redis: &RedisServer,
    servers: &[&Server],
    limit: Duration,
) -> Vec<Option<String>> {
    balanced(redis, servers, limit).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    balanced(redis, servers, limit).await
}
