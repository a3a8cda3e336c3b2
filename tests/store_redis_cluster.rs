//! The Redis store on a real Redis Cluster of three masters (`redis-server --cluster-enabled yes`
//! joined by `redis-cli --cluster create`, started by each test on free loopback ports, see
//! `durability_support/redis.rs`), through `redis+cluster://`:
//! - the store contract (`tests/store_contract/`), durable cases included;
//! - 1,000 games spread their keys over all three masters (each 20–45 % of the keys);
//! - watch notifications across two stores for games on every master (the cluster propagates
//!   PUBLISH to all nodes; the subscriber listens on one);
//! - shard leases taken, read, renewed and released over all three masters;
//! - a service on the cluster: create, play a match to its end with a spectator watching,
//!   GetState and a verified replay.
//!
//! Skipped (with a message) only when `redis-server` is not installed and
//! `SHUANGKOU_REQUIRE_REDIS` is unset; CI sets it, so there the tests must run.

#[macro_use]
mod store_contract;
pub mod common;
#[path = "durability_support/redis.rs"]
pub mod redis_server;
#[path = "store_contract/durable.rs"]
mod store_contract_durable;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use redis_server::RedisCluster;
use shuangkou::store::shard::shard_of;
use shuangkou::store::{Appended, Store};
use store_contract::{Fixture, entry, record};
use store_contract_durable::Durable;

/// A fresh directory for the cluster of test `test`.
fn cluster_dir(test: &str) -> PathBuf {
    common::temp::scratch_path("store-redis-cluster", test)
}

async fn open(cluster: &RedisCluster) -> Store {
    let spec = cluster.url();
    match Store::open(&spec).await {
        Ok(s) => s,
        Err(e) => panic!("open {spec}: {e}"),
    }
}

/// One Redis store on its own cluster (the contract's fixture).
struct Cluster {
    store: Arc<Store>,
    cluster: RedisCluster,
}

impl Fixture for Cluster {
    async fn start(name: &str) -> Option<Self> {
        let cluster = RedisCluster::start(name, cluster_dir(name))?;
        Some(Cluster {
            store: Arc::new(open(&cluster).await),
            cluster,
        })
    }
    fn store(&self) -> &Arc<Store> {
        &self.store
    }
}

impl Durable for Cluster {
    async fn reopen(&mut self) {
        self.store = Arc::new(open(&self.cluster).await);
    }
}

store_contract!(Cluster, durable);

/// 1,000 games (a create and three appends each) put their keys on all three masters, none with
/// under 20 % or over 45 % of them (an even spread is 33 %; the 128 shards fall on the masters'
/// slot ranges).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_games_spread_over_all_masters() {
    let Some(cluster) = RedisCluster::start("spread", cluster_dir("spread")) else {
        return;
    };
    let store = Arc::new(open(&cluster).await);
    let mut tasks = tokio::task::JoinSet::new();
    for t in 0..8 {
        let store = Arc::clone(&store);
        tasks.spawn(async move {
            for i in (t..1000).step_by(8) {
                let id = format!("spread-{i}");
                store.create(&record(&id, None, None)).await.unwrap();
                for seq in 1..=3 {
                    let appended = store.append(&id, &entry(seq, "x")).await;
                    assert_eq!(appended, Ok(Appended::Ok), "{id} seq {seq}");
                }
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.unwrap();
    }
    assert_eq!(store.unfinished().await.unwrap().len(), 1000);
    let per_node = cluster.keys_per_node();
    let total: u64 = per_node.iter().sum();
    // Each game has a hash and a log; each shard holding a game has an unfinished set.
    let shards: BTreeSet<u16> = (0..1000)
        .map(|i| shard_of(&format!("spread-{i}")))
        .collect();
    assert_eq!(total, 2000 + shards.len() as u64, "{per_node:?}");
    for (node, keys) in per_node.iter().enumerate() {
        let share = *keys as f64 / total as f64;
        assert!(
            (0.20..=0.45).contains(&share),
            "node {node} holds {keys} of {total} keys ({:.1} %): {per_node:?}",
            share * 100.0
        );
    }
}

/// A watcher on one store sees the appends another store makes to games on every master.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watchers_see_appends_to_games_on_every_master() {
    let Some(cluster) = RedisCluster::start("watch", cluster_dir("watch")) else {
        return;
    };
    let (a, b) = (open(&cluster).await, open(&cluster).await);
    // 24 games: shards spread over the three masters' slot ranges.
    let ids: Vec<String> = (0..24).map(|i| format!("w{i}")).collect();
    let mut watching = Vec::new();
    for id in &ids {
        a.create(&record(id, None, None)).await.unwrap();
        watching.push(b.subscribe(id));
    }
    for round in 1..=3u64 {
        for id in &ids {
            assert_eq!(a.append(id, &entry(round, "x")).await, Ok(Appended::Ok));
        }
        for (id, rx) in ids.iter().zip(watching.iter_mut()) {
            within(
                Duration::from_secs(10),
                &format!("{id} at {round}"),
                async {
                    loop {
                        match rx.recv().await {
                            Ok(n) if n >= round => break,
                            Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                            Err(e) => panic!("{id}: {e}"),
                        }
                    }
                },
            )
            .await;
        }
    }
}

/// Shard leases on the cluster: the lease keys of the 128 shards lie in the slots of all three
/// masters, and each lease call (take, read, renew, release) answers for every shard, so a
/// pipeline over two slots (answered `MOVED` by the cluster) would fail it. The oracle is the
/// holders read back: what one replica took, another sees, renews nothing of, and finds free
/// after the release.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shard_leases_work_across_the_masters() {
    let Some(cluster) = RedisCluster::start("leases", cluster_dir("leases")) else {
        return;
    };
    let (a, b) = (open(&cluster).await, open(&cluster).await);
    let all: Vec<u16> = shuangkou::store::shard::all_shards().collect();
    let ttl = Duration::from_secs(30);
    let taken = a.take_leases(&all, "replica-a", ttl).await.unwrap();
    assert!(
        taken.iter().all(|&t| t),
        "a takes every free lease: {taken:?}"
    );
    let again = b.take_leases(&all, "replica-b", ttl).await.unwrap();
    assert!(again.iter().all(|&t| !t), "b takes none of a's leases");
    let holders = b.lease_holders().await.unwrap();
    assert_eq!(holders.len(), all.len());
    assert!(
        holders.iter().all(|h| h.as_deref() == Some("replica-a")),
        "{holders:?}"
    );
    let renewed = b.renew_leases(&all, "replica-b", ttl).await.unwrap();
    assert!(renewed.iter().all(|&r| !r), "b renews none of a's leases");
    let renewed = a.renew_leases(&all, "replica-a", ttl).await.unwrap();
    assert!(renewed.iter().all(|&r| r), "a renews all of its own");
    let half: Vec<u16> = all.iter().copied().filter(|s| s % 2 == 0).collect();
    a.release_leases(&half, "replica-a").await.unwrap();
    let holders = b.lease_holders().await.unwrap();
    for (shard, holder) in holders.iter().enumerate() {
        let expected = (shard % 2 == 1).then_some("replica-a");
        assert_eq!(holder.as_deref(), expected, "shard {shard}");
    }
    let members = a
        .heartbeat("replica-a", Some(Duration::from_secs(30)))
        .await
        .unwrap();
    assert_eq!(members, vec!["replica-a".to_string()]);
}

/// A server on the cluster serves a whole match: created, played by one task per seat with a
/// spectator watching to the end, its state and its verified replay read back.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_service_on_the_cluster_plays_watches_and_replays() {
    let seed = test_seed(3901);
    let Some(cluster) = RedisCluster::start("service", cluster_dir("service")) else {
        return;
    };
    let spec = cluster.url();
    let server = TestServer::start(|c| {
        c.store = spec;
        keyed(c);
    })
    .await;
    let mut c = server.client().await;
    let g = create(&mut c, ADMIN_KEY, create_req("erren", 1, Some(seed))).await;
    let policy = Policy {
        seed,
        pass_prob: 0.3,
        stop_at_seq: None,
    };
    let (_, spectator) = play_match(server.addr, &g, policy, Duration::from_secs(300))
        .await
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    let (replay, rebuilt) = verified_replay(&mut c, &g.game_id, ADMIN_KEY).await;
    let last = replay.actions.len() as u64;
    assert!(last > 10, "seed {seed}: a whole deal, {last} actions");
    let st = state(&mut c, &g.game_id, &g.seat_tokens[0]).await;
    assert_eq!(st.seq, last, "seed {seed}");
    assert_eq!(
        rebuilt.last().phase(),
        shuangkou::game::Phase::Finished,
        "seed {seed}: the match ended"
    );
    let seen = spectator.states.iter().map(|s| s.seq).max();
    assert_eq!(seen, Some(last), "seed {seed}: the spectator saw the end");
}
