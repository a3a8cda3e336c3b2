//! Replicas that divide the work (issue 39): server processes sharing one real `redis-server`,
//! each owning a share of the 128 shards through leases, forwarding the rpcs of the games it does
//! not own to their owner.
//!
//! - `three_replicas_divide_the_games`: three replicas split the shards' leases (42 or 43 each, as
//!   Redis holds them); games created and played through random replicas all succeed, and each
//!   game in progress is counted by exactly one replica: the one holding its shard's lease
//!   (each replica's `shuangkou_games_active` gauge equals the games of its shards, and the
//!   three sum to the total). A WatchGame stream opened on a replica that does not own the game
//!   is proxied to the owner and streams a play made through a third replica.
//! - `a_killed_replicas_games_go_on_elsewhere`: with a 3 s lease TTL, 5 s turns, a 1 s grace and
//!   a 10 s reconnect window, the replica owning a game is killed (SIGKILL) while a player
//!   watches on it. Another replica takes the shard within the TTL and a few seconds, plays the
//!   turn whose deadline passed (托管), logs the disconnect of every player (their streams died
//!   with the replica), and once the window ends the escape ends the match. The replay (verified
//!   by the server's replay of every state hash) has every seq once.
//! - `sigterm_hands_the_shards_over_at_once`: with a 12 s TTL, a replica stopped with SIGTERM
//!   releases its leases: the other replica holds every shard within 10 s of the stop (inside the
//!   TTL: one round of its lease loop) and the game is played through it.
//!
//! Skipped (with a message) only when `redis-server` is absent and `SHUANGKOU_REQUIRE_REDIS` is
//! unset. Waits are bounded polls; `SHUANGKOU_TEST_SEED` replays a seed's choices.

pub mod durability_support;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use durability_support::leases::{balanced, held, lease_addrs, settled};
use durability_support::*;
use rand::Rng;
use shuangkou::service::pb;
use shuangkou::store::shard::{SHARDS, shard_of};
use tonic::Code;

/// The sum of a server's `shuangkou_games_active` gauges (its games in progress).
fn games_active(metrics: SocketAddr) -> f64 {
    let mut s = TcpStream::connect_timeout(&metrics, Duration::from_secs(2)).expect("metrics");
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    s.write_all(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
        .expect("metrics request");
    let mut body = String::new();
    let _ = s.read_to_string(&mut body);
    body.lines()
        .filter(|l| l.starts_with("shuangkou_games_active{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// A replica with a 3 s lease TTL (or `ttl`) and metrics on their own port; `extra` env.
async fn replica(
    name: &str,
    redis: &RedisServer,
    root: &std::path::Path,
    ttl: &str,
    extra: &[(&str, &str)],
) -> (Server, SocketAddr) {
    let metrics = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let m = metrics.to_string();
    let mut env = vec![
        ("SHUANGKOU_LEASE_TTL", ttl),
        ("SHUANGKOU_METRICS_LISTEN", m.as_str()),
    ];
    env.extend_from_slice(extra);
    let server = Server::start_with(name, &redis.url(), root, &env).await;
    (server, metrics)
}

/// Retries `call` while it fails with UNAVAILABLE (a shard changing hands), at most `limit`.
async fn retrying<T, F, Fut>(limit: Duration, what: &str, mut call: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, tonic::Status>>,
{
    let deadline = Instant::now() + limit;
    loop {
        match call().await {
            Ok(v) => return v,
            Err(s) if transient(&s) && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(s) => panic!("{what}: {s:?}"),
        }
    }
}

async fn create_on(c: &Client, request_id: &str, options: &[(&str, &str)]) -> Table {
    let mut req = create_request(request_id);
    for (k, v) in options {
        req.options.insert((*k).into(), (*v).into());
    }
    let r = retrying(Duration::from_secs(10), "CreateGame", || {
        let (mut c, req) = (c.clone(), req.clone());
        async move { c.create_game(authed(req, ADMIN_KEY)).await }
    })
    .await;
    Table::from_response(&r.into_inner())
}

async fn state_on(c: &Client, t: &Table) -> pb::GetStateResponse {
    retrying(Duration::from_secs(15), "GetState", || {
        let c = c.clone();
        async move { spectated(&c, &t.game_id, &t.spectator).await }
    })
    .await
}

/// Plays one turn of `t` with requests spread over `clients` at random (GetState, GetHints and
/// SubmitPlay each to its own replica); false once the match is over.
async fn play_turn(clients: &[Client], t: &Table, rng: &mut Rand, turn: u64) -> bool {
    let pick = |rng: &mut Rand| clients[rng.random_range(0..clients.len())].clone();
    let st = state_on(&pick(rng), t).await;
    let Some(player) = player_to_act(&st) else {
        return false;
    };
    let token = &t.seat_tokens[player as usize];
    let mut c = pick(rng);
    let hints = c
        .get_hints(authed(hints_req(&t.game_id), token))
        .await
        .unwrap_or_else(|s| panic!("GetHints: {s:?}"))
        .into_inner();
    let rid = format!("{}-{turn}", t.game_id);
    let req = choose(rng, &t.game_id, player, st.seq, &hints, rid);
    let mut c = pick(rng);
    let r = c.submit_play(authed(req, token)).await;
    let r = r.unwrap_or_else(|s| panic!("SubmitPlay on a replica: {s:?}"));
    assert_eq!(r.into_inner().seq, st.seq + 1, "one action per play");
    true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_replicas_divide_the_games() {
    let test = "three_replicas_divide_the_games";
    let root = temp_dir(test);
    let Some(redis) = RedisServer::start(test, root.join("redis")) else {
        return;
    };
    let seed = seed(test);
    let mut rng = rng(seed, 0);
    let (a, ma) = replica("a", &redis, &root, "3s", &[]).await;
    let (b, mb) = replica("b", &redis, &root, "3s", &[]).await;
    let (c, mc) = replica("c", &redis, &root, "3s", &[]).await;
    let servers = [&a, &b, &c];
    settled(&redis, &servers, Duration::from_secs(30)).await;
    let clients: Vec<Client> = servers.iter().map(|s| s.client()).collect();

    // Games created through every replica, some idempotent (routed to the derived id's owner).
    let mut tables = Vec::new();
    for i in 0..12 {
        let rid = if i % 2 == 0 {
            format!("replicas-{seed}-{i}")
        } else {
            String::new()
        };
        tables.push(create_on(&clients[i % 3], &rid, &[]).await);
    }
    // A stream on a replica that does not own the first game, proxied to its owner.
    let leases = balanced(&redis, &servers, Duration::from_secs(10)).await;
    let first = &tables[0];
    let owner = leases[usize::from(shard_of(&first.game_id))]
        .clone()
        .unwrap();
    let watcher_at = servers
        .iter()
        .position(|s| s.addr.to_string() != owner)
        .unwrap();
    let mut stream = clients[watcher_at]
        .clone()
        .watch_game(authed(watch_req(&first.game_id, 0), &first.spectator))
        .await
        .expect("WatchGame through a replica that does not own the game")
        .into_inner();
    for (n, t) in tables.iter().enumerate() {
        for turn in 0..3 {
            assert!(play_turn(&clients, t, &mut rng, (n * 10 + turn) as u64).await);
        }
    }
    let mut seqs = Vec::new();
    while !seqs.contains(&3) {
        let ev = tokio::time::timeout(Duration::from_secs(10), stream.message())
            .await
            .expect("the proxied stream streams")
            .expect("no stream error")
            .expect("the stream goes on");
        if !seqs.contains(&ev.seq) {
            seqs.push(ev.seq);
        }
    }
    assert_eq!(
        seqs,
        vec![0, 1, 2, 3],
        "the deal, then the first game's plays, in order"
    );

    // Every game in progress is counted by the replica holding its shard, and by no other.
    let leases = lease_addrs(&redis);
    let mut expected: HashMap<String, f64> = HashMap::new();
    for t in &tables {
        let holder = leases[usize::from(shard_of(&t.game_id))]
            .clone()
            .expect("held");
        *expected.entry(holder).or_insert(0.0) += 1.0;
    }
    let mut total = 0.0;
    for (s, m) in [(&a, ma), (&b, mb), (&c, mc)] {
        let counted = games_active(m);
        let want = expected.get(&s.addr.to_string()).copied().unwrap_or(0.0);
        assert_eq!(counted, want, "{}'s games in progress", s.name);
        total += counted;
    }
    assert_eq!(total, tables.len() as f64, "each game counted once");
    for s in servers {
        s.assert_clean_logs();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_replicas_games_go_on_elsewhere() {
    let test = "a_killed_replicas_games_go_on_elsewhere";
    let root = temp_dir(test);
    let Some(redis) = RedisServer::start(test, root.join("redis")) else {
        return;
    };
    let timed = [
        ("SHUANGKOU_NO_TURN_TIMERS", "false"),
        ("SHUANGKOU_PRESENCE_GRACE_MS", "1000"),
    ];
    let (a, _) = replica("a", &redis, &root, "3s", &timed).await;
    let (b, _) = replica("b", &redis, &root, "3s", &timed).await;
    let (c, _) = replica("c", &redis, &root, "3s", &timed).await;
    let mut servers = [a, b, c];
    let leases = settled(
        &redis,
        &servers.iter().collect::<Vec<_>>(),
        Duration::from_secs(30),
    )
    .await;
    let options = [("turn_seconds", "5"), ("reconnect_seconds", "10")];
    let t = create_on(&servers[0].client(), "", &options).await;
    let owner = leases[usize::from(shard_of(&t.game_id))].clone().unwrap();
    let victim = servers
        .iter()
        .position(|s| s.addr.to_string() == owner)
        .expect("an owner");
    let survivor = servers[(victim + 1) % 3].client();
    // A player watches on the owner: connected there.
    let st = state_on(&survivor, &t).await;
    let to_act = player_to_act(&st).expect("a player to act");
    let mut stream = servers[victim]
        .client()
        .watch_game(authed(
            watch_req(&t.game_id, 0),
            &t.seat_tokens[to_act as usize],
        ))
        .await
        .expect("WatchGame on the owner")
        .into_inner();
    let _ = tokio::time::timeout(Duration::from_secs(2), stream.message()).await;
    assert_eq!(st.seq, 0);

    servers[victim].kill();
    let killed = Instant::now();
    // The turn (5 s from the creation) is played by the new owner: within the lease TTL, a
    // round of renewal and a few seconds (the deadline itself is at most 5 s away).
    let deadline = killed + Duration::from_secs(3 + 1 + 5 + 6);
    loop {
        let st = state_on(&survivor, &t).await;
        if st.seq > 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no action after the owner died: {st:?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let leases = lease_addrs(&redis);
    let new_owner = leases[usize::from(shard_of(&t.game_id))].clone();
    assert!(
        new_owner.as_deref().is_some_and(|o| o != owner),
        "the shard moved: {new_owner:?}"
    );
    // The players' streams died with the replica: disconnects, then (nobody returns) the escape
    // at the window's end finishes the one-deal match.
    let deadline = Instant::now() + Duration::from_secs(10 + 3 + 15);
    let mut saw_disconnected = false;
    let finished = loop {
        let st = state_on(&survivor, &t).await;
        saw_disconnected |= st.seats.iter().any(|p| !p.connected);
        if st.phase == pb::Phase::Finished as i32 {
            break st;
        }
        assert!(
            Instant::now() < deadline,
            "no escape after the window: {st:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert!(saw_disconnected || finished.seats.iter().any(|p| !p.connected));
    let mut client = survivor.clone();
    let replay = get_replay(&mut client, &t.game_id, ADMIN_KEY).await;
    let kinds: Vec<&str> = replay.actions.iter().map(|a| a.kind.as_str()).collect();
    let seqs: Vec<u64> = replay.actions.iter().map(|a| a.seq).collect();
    assert_eq!(
        seqs,
        (1..=seqs.len() as u64).collect::<Vec<_>>(),
        "every seq once"
    );
    assert!(
        kinds.contains(&"timeout") || kinds.contains(&"auto"),
        "托管 played: {kinds:?}"
    );
    assert!(
        kinds.contains(&"disconnect"),
        "disconnects logged: {kinds:?}"
    );
    assert_eq!(
        kinds.iter().filter(|k| **k == "reconnect_expired").count(),
        1,
        "one escape ends the deal: {kinds:?}"
    );
    for (i, s) in servers.iter().enumerate() {
        if i != victim {
            s.assert_clean_logs();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_hands_the_shards_over_at_once() {
    let test = "sigterm_hands_the_shards_over_at_once";
    let root = temp_dir(test);
    let Some(redis) = RedisServer::start(test, root.join("redis")) else {
        return;
    };
    let (a, _) = replica("a", &redis, &root, "12s", &[]).await;
    let (b, _) = replica("b", &redis, &root, "12s", &[]).await;
    let mut servers = [a, b];
    balanced(
        &redis,
        &servers.iter().collect::<Vec<_>>(),
        Duration::from_secs(60),
    )
    .await;
    let mut rng = rng(seed(test), 0);
    let t = create_on(&servers[0].client(), "", &[]).await;
    let leases = lease_addrs(&redis);
    let owner = leases[usize::from(shard_of(&t.game_id))].clone().unwrap();
    let leaving = servers
        .iter()
        .position(|s| s.addr.to_string() == owner)
        .unwrap();
    let staying = 1 - leaving;
    let clients = vec![servers[staying].client()];
    assert!(play_turn(&clients, &t, &mut rng, 1).await);
    let stopped = Instant::now();
    let status = servers[leaving].terminate();
    assert!(
        status.is_some_and(|s| s.success()),
        "a clean exit: {status:?}"
    );
    let left = owner;
    // Inside the 12 s TTL: the leases were released, and the survivor takes them all at its
    // next round (every 4 s). Leases left to lapse would take 12 s, plus a round.
    let deadline = stopped + Duration::from_secs(10);
    loop {
        let leases = lease_addrs(&redis);
        let counts = held(&leases);
        if counts.get(&servers[staying].addr.to_string()) == Some(&usize::from(SHARDS)) {
            break;
        }
        assert!(
            !counts.contains_key(&left) || Instant::now() < deadline,
            "still held by the stopped replica: {counts:?}"
        );
        assert!(Instant::now() < deadline, "not taken over: {counts:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for turn in 2..5 {
        assert!(play_turn(&clients, &t, &mut rng, turn).await);
    }
    let err = servers[staying]
        .client()
        .submit_play(authed(
            pb::SubmitPlayRequest {
                game_id: t.game_id.clone(),
                ..Default::default()
            },
            "bad",
        ))
        .await
        .unwrap_err();
    assert_ne!(
        err.code(),
        Code::Unavailable,
        "served, not routed away: {err:?}"
    );
    servers[staying].assert_clean_logs();
}
