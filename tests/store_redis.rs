//! The Redis store against a real `redis-server` started by each test on a free loopback port
//! (`--save "" --appendonly no`, in a temp dir): compare-and-append across two independent
//! `Store` instances (two replicas), watch notifications across them, idempotent create,
//! retention on finish, and behaviour while Redis is down and after it is back.
//!
//! The store contract (`tests/store_contract/`) runs here too, one server per test.
//!
//! Skipped (with a message) only when `redis-server` is not installed and
//! `SHUANGKOU_REQUIRE_REDIS` is unset; CI sets it, so there the tests must run.

#[macro_use]
mod store_contract;
#[path = "durability_support/redis.rs"]
pub mod redis_server;
#[path = "store_contract/durable.rs"]
mod store_contract_durable;
#[path = "common/temp.rs"]
pub mod temp;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use redis_server::RedisServer;
use shuangkou::store::shard::{hash_tag, shard_of};
use shuangkou::store::{Appended, Created, Store};
use store_contract::{
    Fixture, entry, ids_of_one_shard, pinned, race_creates, race_for_every_seq, record, script,
};
use store_contract_durable::Durable;

/// A fresh directory for the server of test `test`.
fn redis_dir(test: &str) -> PathBuf {
    temp::scratch_path("store-redis", test)
}

/// Stores on a test's server.
trait StoreOn {
    async fn open(&self, options: &str) -> Store;
    /// A plain connection for inspecting keys.
    async fn raw(&self) -> redis::aio::MultiplexedConnection;
}

impl StoreOn for RedisServer {
    async fn open(&self, options: &str) -> Store {
        let spec = format!("{}{options}", self.url());
        match Store::open(&spec).await {
            Ok(s) => s,
            Err(e) => panic!("open {spec}: {e}"),
        }
    }

    async fn raw(&self) -> redis::aio::MultiplexedConnection {
        redis::Client::open(self.url())
            .expect("client")
            .get_multiplexed_async_connection()
            .await
            .expect("raw connection")
    }
}

macro_rules! redis_or_skip {
    ($test:expr) => {
        match RedisServer::start($test, redis_dir($test)) {
            Some(server) => server,
            None => return,
        }
    };
}

/// One Redis store on its own server (the contract's fixture).
struct Redis {
    store: Arc<Store>,
    server: RedisServer,
}

impl Fixture for Redis {
    async fn start(name: &str) -> Option<Self> {
        let server = RedisServer::start(name, redis_dir(name))?;
        Some(Redis {
            store: Arc::new(server.open("").await),
            server,
        })
    }
    fn store(&self) -> &Arc<Store> {
        &self.store
    }
}

impl Durable for Redis {
    async fn reopen(&mut self) {
        self.store = Arc::new(self.server.open("").await);
    }
}

store_contract!(Redis, durable);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn compare_and_append_across_replicas() {
    const TASKS: usize = 16;
    const LEN: u64 = 100;
    let server = redis_or_skip!("cas");
    let replicas = [
        Arc::new(server.open("").await),
        Arc::new(server.open("").await),
    ];
    replicas[0].create(&record("g", None, None)).await.unwrap();

    // Same expected seq from both replicas at once: exactly one wins.
    for seq in 1..=20 {
        let (ea, eb) = (entry(seq, "a"), entry(seq, "b"));
        let (a, b) = tokio::join!(replicas[0].append("g", &ea), replicas[1].append("g", &eb));
        let wins = [&a, &b].iter().filter(|r| ***r == Ok(Appended::Ok)).count();
        assert_eq!(wins, 1, "seq {seq}: {a:?} {b:?}");
        let loser = if a == Ok(Appended::Ok) { b } else { a };
        assert_eq!(loser, Ok(Appended::Conflict { current: seq }));
    }

    // Many writers spread over both replicas race for every seq.
    let winners = race_for_every_seq(&replicas, "g", TASKS, 21, 20 + LEN).await;
    assert_eq!(winners.len() as u64, LEN);
    let (_, log) = replicas[1].load("g").await.unwrap().unwrap();
    assert_eq!(log.len() as u64, 20 + LEN);
    for (i, e) in log.iter().enumerate() {
        let seq = i as u64 + 1;
        assert_eq!(e.seq, seq);
        if seq > 20 {
            assert_eq!(e.body, format!("t{}/{seq}", winners[&seq]).into_bytes());
        }
    }
}

/// Waits until `rx` has reported a length of at least `len`.
async fn wait_for_len(rx: &mut tokio::sync::broadcast::Receiver<u64>, len: u64, within: Duration) {
    let deadline = tokio::time::Instant::now() + within;
    let mut seen = 0;
    while seen < len {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Ok(n)) => seen = seen.max(n),
            Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => {}
            Ok(Err(e)) => panic!("watch channel closed: {e}"),
            Err(_) => panic!("saw length {seen}, not {len}, within {within:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watchers_on_one_replica_see_appends_on_another() {
    let server = redis_or_skip!("watch");
    let a = server.open("").await;
    let b = server.open("").await;
    a.create(&record("g", None, None)).await.unwrap();
    a.create(&record("other", None, None)).await.unwrap();
    let mut rx = b.subscribe("g");
    let mut rx2 = b.subscribe("g");
    // Appended right away, possibly before B's subscription is active: the resync after
    // subscribing still reports it.
    assert_eq!(a.append("g", &entry(1, "x")).await, Ok(Appended::Ok));
    wait_for_len(&mut rx, 1, Duration::from_secs(5)).await;
    wait_for_len(&mut rx2, 1, Duration::from_secs(5)).await;
    // Once subscribed, each append is published.
    for seq in 2..=10 {
        assert_eq!(a.append("g", &entry(seq, "x")).await, Ok(Appended::Ok));
        assert_eq!(
            a.append("other", &entry(seq - 1, "x")).await,
            Ok(Appended::Ok)
        );
    }
    let mut seen = Vec::new();
    while seen.last() != Some(&10) {
        match tokio::time::timeout(Duration::from_secs(5), rx.recv()).await {
            Ok(Ok(n)) => seen.push(n),
            other => panic!("watch: {other:?} after {seen:?}"),
        }
    }
    // No value from the other game, in order.
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
    assert!(seen.iter().all(|n| *n >= 1 && *n <= 10), "{seen:?}");
    // A's own watchers see them too.
    let mut own = a.subscribe("g");
    assert_eq!(a.append("g", &entry(11, "x")).await, Ok(Appended::Ok));
    wait_for_len(&mut own, 11, Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn idempotent_create_across_replicas() {
    let server = redis_or_skip!("idem");
    let replicas = [
        Arc::new(server.open("").await),
        Arc::new(server.open("").await),
    ];
    let ids = ids_of_one_shard("g", 2);
    assert_eq!(
        replicas[0]
            .create(&record(&ids[0], Some("p"), Some("r")))
            .await,
        Ok(Created::New)
    );
    assert_eq!(
        replicas[1]
            .create(&record(&ids[1], Some("p"), Some("r")))
            .await,
        Ok(Created::Existing(ids[0].clone()))
    );
    let (new, existing) = race_creates(&replicas, 20, "h", "race").await;
    assert_eq!(new.len(), 1);
    assert_eq!(existing, HashSet::from([new[0].clone()]));
    let mut unfinished = replicas[1].unfinished().await.unwrap();
    unfinished.sort();
    let mut expected = vec![ids[0].clone(), new[0].clone()];
    expected.sort();
    assert_eq!(unfinished, expected);
}

/// `<prefix>{sN}:<kind>:<id>`: the name of game `id`'s key of `kind` (written out here from the
/// layout in `src/store/redis.rs`'s documentation).
fn key(prefix: &str, kind: &str, id: &str) -> String {
    format!("{prefix}{{s{}}}:{kind}:{id}", shard_of(id))
}

/// The script table is one key per version and shard, the game's hash names it, and a table that
/// lost the text (a flushed key) gets it again from the next create of that version, even from a
/// process that had stored it before (and so sends the hash alone first). Another replica reads
/// it.
#[tokio::test]
async fn a_script_is_one_key_per_version_and_is_restored_when_lost() {
    let server = redis_or_skip!("scripts");
    let mut raw = server.raw().await;
    let store = server.open("").await;
    let v1 = script("v1", 16);
    // Three games of one shard, one of another.
    let mut ids = ids_of_one_shard("a", 3);
    let other_shard = (0..)
        .map(|i| format!("b{i}"))
        .find(|id| shard_of(id) != shard_of(&ids[0]))
        .unwrap();
    ids.push(other_shard.clone());
    for id in &ids {
        assert_eq!(store.create(&pinned(id, &v1)).await, Ok(Created::New));
    }
    let mut keys: Vec<String> = query(&mut raw, "KEYS", &["sk:*script:*"]).await;
    keys.sort();
    let copy_of = |id: &str| format!("sk:{}:script:v1", hash_tag(shard_of(id)));
    let mut expected = vec![copy_of(&ids[0]), copy_of(&other_shard)];
    expected.sort();
    assert_eq!(keys, expected, "one copy per shard");
    let game = key("sk:", "game", &ids[1]);
    let named: Option<String> = query(&mut raw, "HGET", &[&game, "script"]).await;
    assert_eq!(named.as_deref(), Some("v1"));
    let body: Vec<u8> = query(&mut raw, "HGET", &[&game, "body"]).await;
    assert!(body.len() < 100, "the body holds no script text");

    let _: i64 = query(&mut raw, "DEL", &[&copy_of(&ids[0])]).await;
    let d = ids_of_one_shard("a", 4).pop().unwrap();
    assert_eq!(store.create(&pinned(&d, &v1)).await, Ok(Created::New));
    let other = server.open("").await;
    for id in [&ids[0], &d, &other_shard] {
        let (rec, _) = other.load(id).await.unwrap().unwrap();
        assert_eq!(rec, pinned(id, &v1), "game {id} read by another replica");
    }
}

async fn ttl(conn: &mut redis::aio::MultiplexedConnection, key: &str) -> i64 {
    redis::cmd("TTL").arg(key).query_async(conn).await.unwrap()
}

/// Redis command `cmd` with `args` on a plain connection.
async fn query<T: redis::FromRedisValue>(
    raw: &mut redis::aio::MultiplexedConnection,
    cmd: &str,
    args: &[&str],
) -> T {
    redis::cmd(cmd).arg(args).query_async(raw).await.unwrap()
}

#[tokio::test]
async fn finish_sets_the_retention() {
    let server = redis_or_skip!("retention");
    let mut raw = server.raw().await;

    let store = server.open("?retention_secs=100&prefix=t1:").await;
    store
        .create(&record("g", Some("acme"), Some("r")))
        .await
        .unwrap();
    store.append("g", &entry(1, "x")).await.unwrap();
    let game = key("t1:", "game", "g");
    assert_eq!(ttl(&mut raw, &game).await, -1);
    store.finish("g").await.unwrap();
    for key in [
        game.clone(),
        format!("t1:{}:req:4:acme:r", hash_tag(shard_of("g"))),
    ] {
        let t = ttl(&mut raw, &key).await;
        assert!((1..=100).contains(&t), "{key}: TTL {t}");
    }
    // The log list is gone: the game is compacted into its hash.
    let log_left: i64 = query(&mut raw, "EXISTS", &[&key("t1:", "log", "g")]).await;
    assert_eq!(log_left, 0);
    let unfinished = format!("t1:{}:unfinished", hash_tag(shard_of("g")));
    let members: Vec<String> = query(&mut raw, "SMEMBERS", &[&unfinished]).await;
    assert!(members.is_empty());
    let finished_at: Option<u64> = query(&mut raw, "HGET", &[&game, "finished_at"]).await;
    assert!(finished_at.is_some_and(|t| t > 0));

    // The default is 7 days.
    let store = server.open("").await;
    store.create(&record("g", None, None)).await.unwrap();
    store.finish("g").await.unwrap();
    let t = ttl(&mut raw, &key("sk:", "game", "g")).await;
    assert!(t > 6 * 24 * 3600 && t <= 7 * 24 * 3600, "TTL {t}");

    // retention_secs=0 keeps finished games.
    let store = server.open("?retention_secs=0&prefix=keep:").await;
    store.create(&record("g", None, None)).await.unwrap();
    store.finish("g").await.unwrap();
    assert_eq!(ttl(&mut raw, &key("keep:", "game", "g")).await, -1);

    // A short retention really expires the game.
    let store = server.open("?retention_secs=1&prefix=short:").await;
    store.create(&record("g", None, None)).await.unwrap();
    store.append("g", &entry(1, "x")).await.unwrap();
    store.finish("g").await.unwrap();
    tokio::time::sleep(Duration::from_millis(2200)).await;
    assert_eq!(store.load("g").await, Ok(None));

    assert!(
        Store::open(&format!("{}?retention_secs=soon", server.url()))
            .await
            .is_err()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_down_is_an_error_and_service_resumes() {
    let mut server = redis_or_skip!("outage");
    let a = server.open("?timeout_ms=500").await;
    let b = server.open("?timeout_ms=500").await;
    a.create(&record("g", None, None)).await.unwrap();
    assert_eq!(a.append("g", &entry(1, "x")).await, Ok(Appended::Ok));
    let mut rx = b.subscribe("w");
    b.ping().await.unwrap();

    server.stop();
    let t = Instant::now();
    let r = a.append("g", &entry(2, "x")).await;
    assert!(r.is_err(), "append with Redis down returned {r:?}");
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "took {:?}",
        t.elapsed()
    );
    assert!(a.create(&record("h", None, None)).await.is_err());
    assert!(a.load("g").await.is_err());
    assert!(a.ping().await.is_err());
    assert!(b.ping().await.is_err());

    // Back (empty: the test server keeps nothing): both replicas reconnect by themselves.
    server.launch();
    let deadline = Instant::now() + Duration::from_secs(20);
    while a.ping().await.is_err() || b.ping().await.is_err() {
        assert!(Instant::now() < deadline, "store did not reconnect");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(a.create(&record("w", None, None)).await, Ok(Created::New));
    assert_eq!(a.append("w", &entry(1, "x")).await, Ok(Appended::Ok));
    // B's pub/sub connection came back and resubscribed to "w".
    wait_for_len(&mut rx, 1, Duration::from_secs(20)).await;
    assert_eq!(a.append("w", &entry(2, "x")).await, Ok(Appended::Ok));
    wait_for_len(&mut rx, 2, Duration::from_secs(5)).await;
}

#[test]
fn spec_options() {
    use shuangkou::store::redis::{DEFAULT_RETENTION, parse_spec};
    let (url, options) = parse_spec("redis://h:1/2").unwrap();
    assert_eq!(url, "redis://h:1/2");
    assert_eq!(options.retention, Some(DEFAULT_RETENTION));
    assert_eq!(options.prefix, "sk:");
    // Our options are taken out; the client's own parameters stay in the URL.
    let (url, options) =
        parse_spec("redis://h:1/2?protocol=resp3&retention_secs=60&timeout_ms=250&prefix=x:")
            .unwrap();
    assert_eq!(url, "redis://h:1/2?protocol=resp3");
    assert_eq!(options.retention, Some(Duration::from_secs(60)));
    assert_eq!(options.timeout, Duration::from_millis(250));
    assert_eq!(options.prefix, "x:");
    assert_eq!(
        parse_spec("redis://h?retention_secs=0")
            .unwrap()
            .1
            .retention,
        None
    );
    assert!(parse_spec("redis://h?timeout_ms=0").is_err());
    assert!(parse_spec("redis://h?timeout_ms=fast").is_err());
    // A braced prefix would put every key in one cluster slot.
    assert!(parse_spec("redis://h?prefix={sk}:").is_err());
}

#[test]
fn cluster_spec_lists_its_nodes() {
    use shuangkou::store::redis::{cluster_nodes, parse_spec};
    let (url, options) =
        parse_spec("redis+cluster://a:7000,b:7001?timeout_ms=50&protocol=resp3").unwrap();
    assert_eq!(url, "redis+cluster://a:7000,b:7001?protocol=resp3");
    assert_eq!(options.timeout, Duration::from_millis(50));
    assert_eq!(
        cluster_nodes(&url),
        Some(Ok(vec![
            "redis://a:7000?protocol=resp3".to_string(),
            "redis://b:7001?protocol=resp3".to_string(),
        ]))
    );
    assert_eq!(
        cluster_nodes("redis+cluster://:pw@a:7000,b:7001/0"),
        Some(Ok(vec![
            "redis://:pw@a:7000".to_string(),
            "redis://:pw@b:7001".to_string(),
        ]))
    );
    assert!(matches!(
        cluster_nodes("redis+cluster://a:7000/1"),
        Some(Err(_))
    ));
    assert!(matches!(cluster_nodes("redis+cluster://"), Some(Err(_))));
    assert_eq!(cluster_nodes("redis://a:7000/0"), None);
}

/// Keys written by the layout before shards (no hash tag; as `src/store/redis.rs` documented
/// them up to commit `baed6e8`: `sk:game:<id>`, `sk:log:<id>`, `sk:snap:<id>`, `sk:unfinished`,
/// `sk:script:<hash>`, `sk:req:<len>:<platform>:<request id>`) are moved to their shards' keys
/// before the first read of the unfinished games, once, keeping their expiry; every read answers
/// as before, and a retry of the old create finds its game.
#[tokio::test]
async fn the_layout_before_shards_is_moved_once_at_start() {
    let server = redis_or_skip!("migrate");
    let mut raw = server.raw().await;
    let v1 = script("v1", 4);
    let old = pinned("old1", &v1);
    let old_body = String::from_utf8(old.body.clone()).unwrap();
    let setup: [&[&str]; 9] = [
        &[
            "HSET",
            "sk:game:old1",
            "body",
            &old_body,
            "platform",
            "acme",
            "request_id",
            "r1",
            "script",
            "v1",
        ],
        &["RPUSH", "sk:log:old1", "a1", "a2", "a3"],
        &["ZADD", "sk:snap:old1", "2", "\0\0\0\0\0\0\0\x02snap"],
        &["SET", "sk:script:v1", &v1.text],
        &["SET", "sk:req:4:acme:r1", "old1"],
        &["SADD", "sk:unfinished", "old1"],
        &[
            "HSET",
            "sk:game:old2",
            "body",
            "{\"game\":\"old2\"}",
            "finished_at",
            "1700000000",
        ],
        &["RPUSH", "sk:log:old2", "b1"],
        &["EXPIRE", "sk:game:old2", "5000"],
    ];
    for args in setup {
        let _: redis::Value = query(&mut raw, args[0], &args[1..]).await;
    }
    let _: i64 = query(&mut raw, "EXPIRE", &["sk:log:old2", "5000"]).await;

    let store = server.open("").await;
    assert_eq!(store.unfinished().await.unwrap(), vec!["old1".to_string()]);
    assert_eq!(
        store.unfinished_in(shard_of("old1")).await.unwrap(),
        vec!["old1".to_string()]
    );
    let (rec, log) = store.load("old1").await.unwrap().unwrap();
    assert_eq!(
        rec,
        shuangkou::store::GameRecord {
            platform: Some("acme".into()),
            request_id: Some("r1".into()),
            ..old.clone()
        }
    );
    let bodies: Vec<&[u8]> = log.iter().map(|e| e.body.as_slice()).collect();
    assert_eq!(bodies, [b"a1".as_slice(), b"a2", b"a3"]);
    assert_eq!(
        store.append("old1", &entry(4, "a4")).await,
        Ok(Appended::Ok)
    );
    let snaps = store.snapshots("old1", 10).await.unwrap();
    assert_eq!(
        (snaps.len(), snaps[0].seq, snaps[0].body.as_slice()),
        (1, 2, b"snap".as_slice())
    );
    // The old create's retry (same id, platform and request) finds its game.
    assert_eq!(
        store
            .create(&record("old1", Some("acme"), Some("r1")))
            .await,
        Ok(Created::Existing("old1".into()))
    );
    assert_eq!(store.head("old2").await.unwrap().map(|(_, n)| n), Some(1));
    let t = ttl(&mut raw, &key("sk:", "game", "old2")).await;
    assert!(
        (4000..=5000).contains(&t),
        "the expiry moved with the game: {t}"
    );
    let left: Vec<String> = query(&mut raw, "KEYS", &["sk:game:*"]).await;
    assert!(left.is_empty(), "untagged games left: {left:?}");
    let left: Vec<String> = query(&mut raw, "SMEMBERS", &["sk:unfinished"]).await;
    assert!(left.is_empty(), "untagged unfinished set: {left:?}");
    // A second store (another replica starting) finds nothing to move and reads the same.
    let again = server.open("").await;
    assert_eq!(again.unfinished().await.unwrap(), vec!["old1".to_string()]);
    assert_eq!(again.load("old1").await.unwrap().unwrap().1.len(), 4);
}

/// A finished game is compacted into one value (its hash: the archive frame, the entry count and
/// `finished_at`; no log list, no snapshots), and every read answers for it as it did before the
/// finish: load, head, pages of entries, log lengths, and a late append's conflict with its
/// catch-up read. Another replica reads it too.
#[tokio::test]
async fn a_finished_game_is_one_value_and_reads_as_before() {
    let server = redis_or_skip!("compact");
    let mut raw = server.raw().await;
    let store = server.open("").await;
    let v1 = script("v1", 2);
    let rec = shuangkou::store::GameRecord {
        platform: Some("acme".into()),
        request_id: Some("r9".into()),
        ..pinned("done", &v1)
    };
    store.create(&rec).await.unwrap();
    store.create(&record("live", None, None)).await.unwrap();
    for seq in 1..=40 {
        let body = format!("action {seq} {}", "x".repeat(seq as usize));
        assert_eq!(
            store.append("done", &entry(seq, &body)).await,
            Ok(Appended::Ok)
        );
    }
    store.append("live", &entry(1, "a")).await.unwrap();
    store
        .put_snapshot("done", 20, b"snap".to_vec())
        .await
        .unwrap();
    let before_load = store.load("done").await.unwrap();
    let before_head = store.head("done").await.unwrap();
    let before_page = store.entries_page("done", 10, 5).await.unwrap();
    let before_tail = store.entries_after("done", 35).await.unwrap();
    let before_behind = store
        .append_or_read("done", &entry(38, "late"))
        .await
        .unwrap();

    store.finish("done").await.unwrap();
    let mut kept: Vec<String> = query(&mut raw, "KEYS", &["*done*"]).await;
    kept.sort();
    assert_eq!(
        kept,
        vec![key("sk:", "game", "done")],
        "one value for the finished game"
    );
    let fields: Vec<String> = query(&mut raw, "HKEYS", &[&key("sk:", "game", "done")]).await;
    let mut fields = fields;
    fields.sort();
    assert_eq!(fields, ["compact", "entries", "finished_at"]);

    for reader in [&store, &server.open("").await] {
        assert_eq!(reader.load("done").await.unwrap(), before_load);
        assert_eq!(reader.head("done").await.unwrap(), before_head);
        assert_eq!(
            reader.entries_page("done", 10, 5).await.unwrap(),
            before_page
        );
        assert_eq!(reader.entries_after("done", 35).await.unwrap(), before_tail);
        assert_eq!(reader.entries_after("done", 40).await.unwrap(), vec![]);
        assert_eq!(
            reader
                .append_or_read("done", &entry(38, "late"))
                .await
                .unwrap(),
            before_behind
        );
        assert_eq!(
            reader.append("done", &entry(3, "late")).await,
            Ok(Appended::Conflict { current: 40 })
        );
        assert!(
            reader
                .append("done", &entry(41, "after the end"))
                .await
                .is_err()
        );
        let ids = ["live", "done", "nope"].map(String::from);
        assert_eq!(reader.log_lengths(&ids).await.unwrap(), vec![1, 40, 0]);
        assert_eq!(reader.snapshots("done", 40).await.unwrap(), vec![]);
    }
    // A retry of the create still finds it; finishing again changes nothing.
    assert_eq!(
        store.create(&rec).await,
        Ok(Created::Existing("done".into()))
    );
    store.finish("done").await.unwrap();
    assert_eq!(store.load("done").await.unwrap(), before_load);
    assert_eq!(store.unfinished().await.unwrap(), vec!["live".to_string()]);
}
