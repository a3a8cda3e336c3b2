//! The snapshot methods of every store backend (`store::snapshots`): a snapshot reads back at
//! or before its seq, oldest first; one at the same seq replaces it; games do not see each
//! other's; `put_snapshot_later` lands without being awaited; an oversized one is refused.
//! Memory, embedded (a temp directory) and Redis (a private `redis-server`, skipped when not
//! installed unless `SHUANGKOU_REQUIRE_REDIS` is set).

#[path = "durability_support/redis.rs"]
pub mod redis_server;
#[path = "common/temp.rs"]
pub mod temp;

use std::time::{Duration, Instant};

use shuangkou::store::{Snapshot, Store, snapshots::MAX_SNAPSHOT_BYTES};

fn snap(seq: u64, body: &str) -> Snapshot {
    Snapshot {
        seq,
        body: body.as_bytes().to_vec(),
    }
}

async fn contract(store: &Store) {
    assert!(store.snapshots("g1", u64::MAX).await.unwrap().is_empty());
    for (seq, body) in [(30, "thirty"), (10, "ten"), (20, "twenty")] {
        store.put_snapshot("g1", seq, body.into()).await.unwrap();
    }
    store
        .put_snapshot("g2", 15, b"other".to_vec())
        .await
        .unwrap();
    store
        .put_snapshot("g1", 20, b"twenty again".to_vec())
        .await
        .unwrap();
    assert_eq!(
        store.snapshots("g1", u64::MAX).await.unwrap(),
        vec![
            snap(10, "ten"),
            snap(20, "twenty again"),
            snap(30, "thirty")
        ]
    );
    assert_eq!(
        store.snapshots("g1", 29).await.unwrap(),
        vec![snap(10, "ten"), snap(20, "twenty again")]
    );
    assert_eq!(store.snapshots("g1", 9).await.unwrap(), vec![]);
    assert_eq!(
        store.snapshots("g2", 15).await.unwrap(),
        vec![snap(15, "other")]
    );
    // Binary bodies, empty ones included, come back byte for byte.
    let binary: Vec<u8> = (0..=255u8).rev().collect();
    store.put_snapshot("g3", 1, Vec::new()).await.unwrap();
    store.put_snapshot("g3", 2, binary.clone()).await.unwrap();
    let back = store.snapshots("g3", 2).await.unwrap();
    assert_eq!(back[0].body, Vec::<u8>::new());
    assert_eq!(back[1].body, binary);
    // Not awaited: it lands on its own task (within a deadline).
    store.put_snapshot_later("g1", 40, b"forty".to_vec());
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let all = store.snapshots("g1", u64::MAX).await.unwrap();
        if all.last() == Some(&snap(40, "forty")) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the snapshot never landed: {all:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        store
            .put_snapshot("g1", 50, vec![0; MAX_SNAPSHOT_BYTES + 1])
            .await
            .is_err()
    );
    assert_eq!(store.snapshots("g1", u64::MAX).await.unwrap().len(), 4);
}

#[tokio::test]
async fn memory_store_snapshots() {
    contract(&Store::open("memory").await.unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_store_snapshots() {
    let dir = temp::TempDir::created("store-snapshots", "embedded");
    {
        let store = Store::open(&dir.display().to_string()).await.unwrap();
        let g1 = shuangkou::store::GameRecord {
            id: "g1".into(),
            platform: None,
            request_id: None,
            body: b"{}".to_vec(),
            script: None,
        };
        store.create(&g1).await.unwrap();
        contract(&store).await;
    }
    // They are in files of their own and survive a reopen (not fsynced: a crash may lose them);
    // those of games not in the store (g2 was never created) are swept at open.
    let store = Store::open(&dir.display().to_string()).await.unwrap();
    assert_eq!(store.snapshots("g1", u64::MAX).await.unwrap().len(), 4);
    assert!(store.snapshots("g2", u64::MAX).await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_store_snapshots() {
    let name = "store_snapshots_redis";
    let Some(server) =
        redis_server::RedisServer::start(name, temp::scratch_path("store-snapshots", name))
    else {
        return;
    };
    let store = Store::open(&server.url()).await.unwrap();
    contract(&store).await;
}
