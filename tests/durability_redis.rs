//! Several server processes sharing one real `redis-server` (started here on a free loopback
//! port, `--save '' --appendonly no`, in a temp dir), all with the same `SHUANGKOU_TOKEN_KEY`.
//!
//! - `any_replica_serves_any_request`: three replicas; every request of every game goes to a
//!   random replica. Games complete; a state read anywhere right after an OK play already shows
//!   it (cached games are revalidated); idempotent creates and play retries return the original
//!   result on any replica; a WatchGame watcher on one replica streams every play made on the
//!   others, in order, with no gap and no duplicate (the same events as a full stream read after
//!   the match).
//! - `concurrent_plays_on_replicas_exactly_one_wins`: at every turn of a game, the player to act
//!   sends one SubmitPlay to each of three replicas at once with the same `expected_seq`.
//!   With different request ids exactly one is OK (seq + 1) and every other is ABORTED with
//!   reason STALE_SEQ (never a second append; never judged on the newer state). The one
//!   exception is the first action, where `expected_seq` is 0, which means "no check": a
//!   loser that caught up before preparing is judged on the new state (FAILED_PRECONDITION,
//!   NOT_YOUR_TURN), one that prepared first loses the compare-and-append (ABORTED,
//!   STALE_SEQ). With the same request id every reply is OK with the same seq and play (one
//!   append).
//! - `killed_replica_mid_game`: a replica is killed with SIGKILL while a client plays on it; the
//!   client retries the same requests on another replica and finishes; nothing acknowledged is
//!   lost, nothing is applied twice; the killed replica, restarted, serves the same game (the
//!   same replay, and the same events as were streamed live).
//! - `readiness_follows_the_store`: while redis-server is down the health check reports
//!   NOT_SERVING (and requests fail, none is acknowledged); once it is back, SERVING again.
//!
//! Skipped (with a message) only when `redis-server` is absent and `SHUANGKOU_REQUIRE_REDIS` is
//! unset. `SHUANGKOU_TEST_SEED` replays a seed's choices; `SHUANGKOU_DURABILITY_HEAVY=1` plays
//! more games.

pub mod durability_support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use durability_support::leases::settled;
use durability_support::race::race_every_turn;
use durability_support::*;
use rand::Rng;
use shuangkou::service::pb;
use shuangkou::service::server::GAME_SERVICE;
use tokio::task::JoinHandle;

use tonic_health::pb::health_check_response::ServingStatus;

macro_rules! redis_or_skip {
    ($test:expr, $root:expr) => {
        match RedisServer::start($test, $root.join("redis")) {
            Some(server) => server,
            None => return,
        }
    };
}

/// The start of a test on `$n` replicas of one Redis: its seed, its directory, the Redis
/// server, the replicas and a client of each (or a return, when Redis is skipped). Keep the
/// directory and the Redis server bound until the end of the test.
macro_rules! on_replicas {
    ($test:expr, $dir:expr, $n:expr) => {{
        let seed = seed($test);
        let root = temp_dir($dir);
        let redis = redis_or_skip!($test, &root);
        let servers = replicas($n, &redis, &root).await;
        let clients: Vec<Client> = servers.iter().map(Server::client).collect();
        (seed, root, redis, servers, clients)
    }};
}

/// The replicas' lease TTL: a killed replica's games move after at most this long.
const LEASE_TTL: &str = "3s";

/// Starts `n` replicas on the Redis store, and waits until they have divided the shards (so no
/// game moves between replicas during the test).
async fn replicas(n: usize, redis: &RedisServer, root: &std::path::Path) -> Vec<Server> {
    let mut out = Vec::new();
    for i in 0..n {
        let env = [("SHUANGKOU_LEASE_TTL", LEASE_TTL)];
        out.push(Server::start_with(&format!("replica{i}"), &redis.url(), root, &env).await);
    }
    settled(
        redis,
        &out.iter().collect::<Vec<_>>(),
        Duration::from_secs(30),
    )
    .await;
    out
}

/// A WatchGame stream from seq 0, collected until the server ends it (the match is over). A
/// stream ended with a retryable error (its game's owner died or handed the game over) is
/// resumed after the last event received (its cursor), as clients do, for at most 60 s.
fn watch(mut c: Client, game_id: String, token: String) -> JoinHandle<Vec<pb::GameEvent>> {
    tokio::spawn(async move {
        let mut out: Vec<pb::GameEvent> = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        'resume: loop {
            let cursor = out.last().map(|ev| ev.cursor.clone()).unwrap_or_default();
            let req = pb::WatchGameRequest {
                cursor,
                ..watch_req(&game_id, 0)
            };
            let mut stream = match c.watch_game(authed(req, &token)).await {
                Ok(s) => s.into_inner(),
                Err(s) if transient(&s) && Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue 'resume;
                }
                Err(s) => panic!("WatchGame {game_id}: {s:?}"),
            };
            loop {
                match tokio::time::timeout(Duration::from_secs(60), stream.message()).await {
                    Ok(Ok(Some(ev))) => out.push(ev),
                    Ok(Ok(None)) => return out,
                    Ok(Err(s)) if transient(&s) && Instant::now() < deadline => continue 'resume,
                    Ok(Err(s)) => panic!("WatchGame {game_id} failed: {s:?}"),
                    Err(_) => panic!("WatchGame {game_id}: no event for 60 s"),
                }
            }
        }
    })
}

/// Checks a live stream against the full stream read after the match: the same events, and
/// the seqs in order with no gap from 0 to the final seq.
fn check_stream(live: &[pb::GameEvent], full: &[pb::GameEvent], final_seq: u64, what: &str) {
    let mut seqs: Vec<u64> = Vec::new();
    for ev in full {
        if seqs.last() != Some(&ev.seq) {
            seqs.push(ev.seq);
        }
    }
    assert_eq!(
        seqs,
        (0..=final_seq).collect::<Vec<_>>(),
        "{what}: seqs of the full stream"
    );
    if live != full {
        let first = live
            .iter()
            .zip(full)
            .position(|(a, b)| a != b)
            .unwrap_or(live.len().min(full.len()));
        panic!(
            "{what}: the live stream ({} events) differs from the full one ({} events) at event {first}: live {:?} / full {:?}",
            live.len(),
            full.len(),
            live.get(first),
            full.get(first)
        );
    }
}

/// Reads a whole finished game's stream (one batch, then the server ends it).
async fn full_stream(c: &Client, t: &Table) -> Vec<pb::GameEvent> {
    match tokio::time::timeout(
        Duration::from_secs(30),
        watch(c.clone(), t.game_id.clone(), t.spectator.clone()),
    )
    .await
    {
        Ok(Ok(events)) => events,
        other => panic!("full stream of {}: {other:?}", t.game_id),
    }
}

/// Checks the replay against the acknowledged plays: every seq acknowledged exactly once.
fn check_replay(
    replay: &pb::GetReplayResponse,
    acks: &BTreeMap<u64, pb::SubmitPlayRequest>,
    what: &str,
) {
    let seqs: Vec<u64> = replay.actions.iter().map(|a| a.seq).collect();
    assert_eq!(
        seqs,
        acks.keys().copied().collect::<Vec<_>>(),
        "{what}: log seqs vs acknowledged seqs"
    );
    for a in &replay.actions {
        let req = &acks[&a.seq];
        assert_eq!(Some(a.player), req.seat, "{what}: seq {} player", a.seq);
        if req.pass {
            assert_eq!(a.kind, "pass", "{what}: seq {}", a.seq);
        } else {
            assert_eq!(
                sorted(&a.cards),
                sorted(&req.cards),
                "{what}: seq {} cards",
                a.seq
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_replica_serves_any_request() {
    let (seed, _root, _redis, servers, clients) =
        on_replicas!("any_replica_serves_any_request", "replicas", 3);
    let games = if heavy() { 8 } else { 3 };
    let tasks: Vec<_> = (0..games)
        .map(|g| tokio::spawn(random_replica_game(clients.clone(), seed, g)))
        .collect();
    for t in tasks {
        if let Err(e) = tokio::time::timeout(Duration::from_secs(80), t)
            .await
            .expect("game timed out")
        {
            panic!("seed {seed}: {e}");
        }
    }
    for s in &servers {
        s.assert_clean_logs();
    }
}

async fn random_replica_game(clients: Vec<Client>, seed: u64, g: u64) {
    let mut rng = rng(seed, 10 + g);
    let what = |m: &str| format!("seed {seed} game {g}: {m}");
    let pick = |rng: &mut Rand| clients[rng.random_range(0..clients.len())].clone();
    let rid = format!("replicas-{seed}-{g}");
    // The same create sent to every replica at once, then again to each: one game, the same
    // tokens everywhere (they derive from the shared token key).
    let calls: Vec<_> = clients
        .iter()
        .map(|c| {
            let mut c = c.clone();
            let req = authed(create_request(&rid), ADMIN_KEY);
            tokio::spawn(async move { c.create_game(req).await.map(|r| r.into_inner()) })
        })
        .collect();
    let mut created = Vec::new();
    for call in calls {
        match call.await.expect("create task") {
            Ok(r) => created.push(r),
            Err(s) => panic!("{}", what(&format!("concurrent create: {s:?}"))),
        }
    }
    for c in &clients {
        created.push(
            c.clone()
                .create_game(authed(create_request(&rid), ADMIN_KEY))
                .await
                .unwrap_or_else(|s| panic!("{}", what(&format!("create again: {s:?}"))))
                .into_inner(),
        );
    }
    let first = created[0].clone();
    assert!(
        created.iter().all(|c| *c == first),
        "{}",
        what("idempotent creates on the replicas differ")
    );
    let created = first;
    let t = Table::from_response(&created);
    let watcher = watch(pick(&mut rng), t.game_id.clone(), t.spectator.clone());
    let mut acks: BTreeMap<u64, pb::SubmitPlayRequest> = BTreeMap::new();
    let mut acked = 0u64;
    loop {
        let state = pick(&mut rng)
            .get_state(authed(state_req(&t.game_id), &t.spectator))
            .await
            .unwrap_or_else(|s| panic!("{}", what(&format!("GetState: {s:?}"))))
            .into_inner();
        assert_eq!(
            state.seq,
            acked,
            "{}",
            what("a replica's state does not show the last acknowledged play (stale cache)")
        );
        let Some(player) = player_to_act(&state) else {
            break;
        };
        let token = t.seat_tokens[player as usize].clone();
        let hints = pick(&mut rng)
            .get_hints(authed(hints_req(&t.game_id), &token))
            .await
            .unwrap_or_else(|s| panic!("{}", what(&format!("GetHints: {s:?}"))))
            .into_inner();
        assert!(
            hints.your_turn,
            "{}",
            what("hints on a replica do not see the turn (stale cache)")
        );
        let req = choose(
            &mut rng,
            &t.game_id,
            player,
            state.seq,
            &hints,
            format!("{}-{}", t.game_id, state.seq + 1),
        );
        let resp = pick(&mut rng)
            .submit_play(authed(req.clone(), &token))
            .await
            .unwrap_or_else(|s| {
                panic!(
                    "{}",
                    what(&format!("SubmitPlay seq {}: {s:?}", state.seq + 1))
                )
            })
            .into_inner();
        assert_eq!(resp.seq, state.seq + 1, "{}", what("seq"));
        if rng.random_bool(0.2) {
            // A retry of the same request on any replica: the original result.
            let again = pick(&mut rng)
                .submit_play(authed(req.clone(), &token))
                .await
                .unwrap_or_else(|s| panic!("{}", what(&format!("retry: {s:?}"))))
                .into_inner();
            assert_eq!(again, resp, "{}", what("a retried request's reply differs"));
        }
        acked = resp.seq;
        acks.insert(resp.seq, req);
    }
    let live = tokio::time::timeout(Duration::from_secs(30), watcher)
        .await
        .unwrap_or_else(|_| panic!("{}", what("the watcher did not end after the match")))
        .unwrap_or_else(|e| panic!("{}", what(&format!("watcher: {e}"))));
    let mut replays = Vec::new();
    for c in &clients {
        replays.push(get_replay(&mut c.clone(), &t.game_id, ADMIN_KEY).await);
    }
    check_replay(&replays[0], &acks, &what("replay"));
    assert!(
        replays.iter().all(|r| *r == replays[0]),
        "{}",
        what("replicas' replays differ")
    );
    let full = full_stream(&pick(&mut rng), &t).await;
    check_stream(&live, &full, acked, &what("watcher on a random replica"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_plays_on_replicas_exactly_one_wins() {
    let (seed, _root, _redis, servers, clients) =
        on_replicas!("concurrent_plays_on_replicas_exactly_one_wins", "race", 3);
    race_every_turn(&clients, seed, "race").await;
    for s in &servers {
        s.assert_clean_logs();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_replica_mid_game() {
    let (seed, _root, redis, mut servers, clients) =
        on_replicas!("killed_replica_mid_game", "failover", 2);
    let mut rng = rng(seed, 2);
    let what = |m: &str| format!("seed {seed}: {m}");
    let created = clients[0]
        .clone()
        .create_game(authed(
            create_request(&format!("failover-{seed}")),
            ADMIN_KEY,
        ))
        .await
        .expect("create")
        .into_inner();
    let t = Table::from_response(&created);
    let watcher = watch(clients[1].clone(), t.game_id.clone(), t.spectator.clone());

    // The client plays on replica 0 and fails over to replica 1; replica 0 dies meanwhile,
    // after a random number of plays and a random delay (usually with a request in flight).
    let kill_at = rng.random_range(3..25u64);
    let delay = Duration::from_micros(rng.random_range(0..20_000));
    let (progress, mut acked) = tokio::sync::watch::channel(0u64);
    let player = {
        let clients = clients.clone();
        let t = t.clone();
        let mut rng = rng.clone();
        tokio::spawn(async move { failover_player(clients, t, &mut rng, seed, progress).await })
    };
    acked
        .wait_for(|n| *n >= kill_at)
        .await
        .expect("the player stopped early");
    tokio::time::sleep(delay).await;
    servers[0].kill();
    let (acks, switched) = player.await.expect("player");
    assert!(
        switched,
        "{}",
        what("the game ended before the replica was killed")
    );
    let final_seq = *acks.keys().last().expect("plays");
    let live = tokio::time::timeout(Duration::from_secs(30), watcher)
        .await
        .expect("watcher ends")
        .expect("watcher");
    let mut c1 = clients[1].clone();
    let replay = get_replay(&mut c1, &t.game_id, ADMIN_KEY).await;
    check_replay(&replay, &acks, &what("replay on the surviving replica"));
    let full = full_stream(&c1, &t).await;
    check_stream(
        &live,
        &full,
        final_seq,
        &what("watcher on the surviving replica"),
    );

    // The killed replica, restarted, serves the same game (once the two have divided the
    // shards again).
    servers[0].restart().await;
    settled(
        &redis,
        &servers.iter().collect::<Vec<_>>(),
        Duration::from_secs(30),
    )
    .await;
    let mut c0 = servers[0].client();
    assert_eq!(
        get_replay(&mut c0, &t.game_id, ADMIN_KEY).await,
        replay,
        "{}",
        what("restarted replica's replay")
    );
    // Its events, rebuilt by replay, are the ones streamed live.
    assert_eq!(
        full_stream(&c0, &t).await,
        full,
        "{}",
        what("restarted replica's events")
    );
    for s in &servers {
        s.assert_clean_logs();
    }
}

/// Plays a game on the first replica that answers, retrying each request (same request id) on
/// the next one when the outcome is unknown. Returns the acknowledged plays and whether it
/// failed over.
async fn failover_player(
    clients: Vec<Client>,
    t: Table,
    rng: &mut Rand,
    seed: u64,
    progress: tokio::sync::watch::Sender<u64>,
) -> (BTreeMap<u64, pb::SubmitPlayRequest>, bool) {
    let mut at = 0usize;
    let mut switched = false;
    let mut acks = BTreeMap::new();
    macro_rules! call {
        ($what:expr, |$c:ident| $call:expr) => {{
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                let mut $c = clients[at].clone();
                match $call.await {
                    Ok(r) => break r.into_inner(),
                    Err(s) if transient(&s) && Instant::now() < deadline => {
                        at = (at + 1) % clients.len();
                        switched = true;
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                    Err(s) => panic!("seed {seed}: {}: {s:?}", $what),
                }
            }
        }};
    }
    loop {
        let state = call!("GetState", |c| c
            .get_state(authed(state_req(&t.game_id), &t.spectator)));
        let Some(player) = player_to_act(&state) else {
            return (acks, switched);
        };
        let token = t.seat_tokens[player as usize].clone();
        let hints = call!("GetHints", |c| c
            .get_hints(authed(hints_req(&t.game_id), &token)));
        let req = choose(
            rng,
            &t.game_id,
            player,
            state.seq,
            &hints,
            format!("{}-{}", t.game_id, state.seq + 1),
        );
        let resp = call!("SubmitPlay", |c| c.submit_play(authed(req.clone(), &token)));
        assert_eq!(resp.seq, state.seq + 1, "seed {seed}: seq");
        acks.insert(resp.seq, req);
        progress.send_replace(acks.len() as u64);
    }
}

/// Asserts that the server's readiness turns `status` within `limit` (`failure` says what it
/// means when it does not).
async fn expect_health(server: &Server, status: ServingStatus, limit: Duration, failure: &str) {
    let got = wait_health(server, status, limit).await;
    assert_eq!(got, Some(status), "{failure}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_follows_the_store() {
    let root = temp_dir("readiness");
    let mut redis = redis_or_skip!("readiness_follows_the_store", &root);
    let server = Server::start("replica", &redis.url(), &root).await;
    let mut c = server.client();
    assert_eq!(
        health_of(&server.addr, GAME_SERVICE).await,
        Some(ServingStatus::Serving)
    );
    let created = c
        .create_game(authed(create_request("readiness-1"), ADMIN_KEY))
        .await
        .expect("create")
        .into_inner();

    // The play to try while Redis is down, chosen while it is up.
    let t = Table::from_response(&created);
    let state = c
        .get_state(authed(state_req(&t.game_id), &t.spectator))
        .await
        .expect("state while Redis is up")
        .into_inner();
    let player = player_to_act(&state).expect("playing");
    let token = &t.seat_tokens[player as usize];
    let hints = c
        .get_hints(authed(hints_req(&t.game_id), token))
        .await
        .expect("hints while Redis is up")
        .into_inner();
    let play = choose(
        &mut rng(1, 1),
        &t.game_id,
        player,
        state.seq,
        &hints,
        "down-1".into(),
    );

    redis.stop();
    expect_health(
        &server,
        ServingStatus::NotServing,
        Duration::from_secs(10),
        "readiness stayed true with Redis down",
    )
    .await;
    // Liveness (the whole server, `""`) stays SERVING: restarting the pod would not bring the
    // store back, and games already cached may still be read.
    assert_eq!(
        health_of(&server.addr, "").await,
        Some(ServingStatus::Serving),
        "liveness must not follow the store"
    );
    // Nothing is acknowledged while the store is down, and the refusal says why.
    match c
        .create_game(authed(create_request("readiness-2"), ADMIN_KEY))
        .await
    {
        Ok(r) => panic!("a create was acknowledged with Redis down: {r:?}"),
        Err(e) => assert_eq!(reason(&e), "STORE_FAILED", "create with Redis down: {e:?}"),
    }
    match c.submit_play(authed(play, token)).await {
        Ok(r) => panic!("a play was acknowledged with Redis down: {r:?}"),
        Err(e) => assert_eq!(reason(&e), "STORE_FAILED", "play with Redis down: {e:?}"),
    }
    // A read either serves the cached game, unchanged by the refused play, or fails for the
    // same reason.
    match c
        .get_state(authed(state_req(&t.game_id), &t.spectator))
        .await
    {
        Ok(r) => assert_eq!(
            r.into_inner().seq,
            state.seq,
            "the refused play changed the game"
        ),
        Err(e) => assert_eq!(reason(&e), "STORE_FAILED", "read with Redis down: {e:?}"),
    }

    redis.launch();
    expect_health(
        &server,
        ServingStatus::Serving,
        Duration::from_secs(15),
        "readiness did not come back with Redis",
    )
    .await;
    c.create_game(authed(create_request("readiness-3"), ADMIN_KEY))
        .await
        .expect("create after Redis is back");
    let lines = server.log_lines_with("store readiness changed");
    assert!(lines.len() >= 2, "readiness changes are logged: {lines:?}");
}

async fn wait_health(
    server: &Server,
    want: ServingStatus,
    within: Duration,
) -> Option<ServingStatus> {
    let deadline = Instant::now() + within;
    loop {
        let got = health_of(&server.addr, GAME_SERVICE).await;
        if got == Some(want) || Instant::now() >= deadline {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
