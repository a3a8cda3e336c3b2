//! Crash test: the server binary with the embedded store is killed with SIGKILL at random
//! (seeded) moments while clients play concurrent games, and restarted on the same data
//! directory, many times.
//!
//! After every restart: every play that got an OK reply is in the log at its seq (admin
//! GetReplay), the log has no gap, every game loads (the server replays each log verifying the
//! recorded state hashes; a failure is logged as "cannot recover game" and fails the test), and
//! re-sending acknowledged requests with their request ids returns the original results
//! (idempotency across restarts: the request id → seq map is rebuilt from the log). Play then
//! continues, and at the end every game is finished and every seq of every log was acknowledged
//! exactly once (no action applied twice for one request, none lost).
//!
//! Default: 8 kills, 6 client tasks (bounded well under 60 s in a debug build).
//! `SHUANGKOU_DURABILITY_HEAVY=1`: 30 kills, 16 clients; or set `SHUANGKOU_CRASH_KILLS` and
//! `SHUANGKOU_CRASH_CLIENTS`. `SHUANGKOU_TEST_SEED` replays a seed's choices.

pub mod durability_support;

use std::collections::{BTreeMap, HashSet};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use durability_support::*;
use rand::Rng;
use shuangkou::service::pb;

/// A play that got an OK reply.
#[derive(Clone, Debug)]
struct Ack {
    seq: u64,
    token: String,
    req: pb::SubmitPlayRequest,
}

#[derive(Default)]
struct Shared {
    acks: Mutex<Vec<Ack>>,
    games: Mutex<Vec<Table>>,
    /// Games seen finished by their client.
    done: Mutex<HashSet<String>>,
    stop: AtomicBool,
    finished: AtomicU64,
    retries: AtomicU64,
}

/// Awaits an rpc, retrying the same request while the outcome is unknown (server down or
/// restarting); any other rejection fails the test.
macro_rules! retry {
    ($shared:expr, $what:expr, $call:expr) => {{
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            match $call.await {
                Ok(r) => break r.into_inner(),
                Err(s) if transient(&s) && Instant::now() < deadline => {
                    $shared.retries.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(40)).await;
                }
                Err(s) => panic!("{}: {:?} {}", $what, s.code(), s.message()),
            }
        }
    }};
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_loses_no_acknowledged_play() {
    let seed = seed("sigkill_loses_no_acknowledged_play");
    let started = Instant::now();
    let kills = env_num("SHUANGKOU_CRASH_KILLS", if heavy() { 30 } else { 8 });
    let clients = env_num("SHUANGKOU_CRASH_CLIENTS", if heavy() { 16 } else { 6 });
    let root = temp_dir("crash");
    let data = root.join("data");
    let mut server = Server::start("server", &data.display().to_string(), &root).await;
    let addr = server.addr;
    let shared = Arc::new(Shared::default());

    let tasks: Vec<_> = (0..clients)
        .map(|i| tokio::spawn(player(i, addr, Arc::clone(&shared), seed)))
        .collect();

    let mut rng = rng(seed, 0);
    let mut settled: HashSet<String> = HashSet::new();
    for k in 0..kills {
        tokio::time::sleep(Duration::from_millis(rng.random_range(250..1200))).await;
        server.kill();
        // Every reply the clients will ever get from the killed process has been received.
        let acked: Vec<Ack> = shared.acks.lock().unwrap().clone();
        let games: Vec<Table> = shared.games.lock().unwrap().clone();
        let done: HashSet<String> = shared.done.lock().unwrap().clone();
        tokio::time::sleep(Duration::from_millis(rng.random_range(0..200))).await;
        server.restart().await;
        server.assert_clean_logs();
        // Every game not finished at the last check (the server rebuilt each at start), and a
        // sample of the older finished ones (their logs no longer change; all are checked at
        // the end).
        let (old, mut check): (Vec<Table>, Vec<Table>) = games
            .iter()
            .cloned()
            .partition(|t| settled.contains(&t.game_id));
        for _ in 0..old.len().min(4) {
            check.push(old[rng.random_range(0..old.len())].clone());
        }
        verify(
            &addr,
            &check,
            &acked,
            &mut rng,
            seed,
            &format!("after kill {}", k + 1),
        )
        .await;
        settled.extend(done);
        println!(
            "kill {}: {} games ({} checked), {} acknowledged plays, verified",
            k + 1,
            games.len(),
            check.len(),
            acked.len()
        );
    }

    shared.stop.store(true, Ordering::SeqCst);
    println!(
        "{:.1}s: kills done; clients finish their games",
        started.elapsed().as_secs_f64()
    );
    for t in tasks {
        match tokio::time::timeout(Duration::from_secs(60), t).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => panic!("seed {seed}: a client failed: {e}"),
            Err(_) => panic!("seed {seed}: a client did not finish its game"),
        }
    }

    // Every game is finished, and its log is exactly the acknowledged plays.
    let acked: Vec<Ack> = shared.acks.lock().unwrap().clone();
    let games: Vec<Table> = shared.games.lock().unwrap().clone();
    verify(&addr, &games, &acked, &mut rng, seed, "at the end").await;
    let mut c = client(&addr);
    let mut by_game: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for a in &acked {
        by_game
            .entry(a.req.game_id.as_str())
            .or_default()
            .push(a.seq);
    }
    for t in &games {
        let state = retry!(
            shared,
            "final GetState",
            c.get_state(authed(state_req(&t.game_id), &t.spectator))
        );
        assert_eq!(
            state.phase,
            pb::Phase::Finished as i32,
            "seed {seed}: game {} not finished",
            t.game_id
        );
        let mut seqs = by_game.remove(t.game_id.as_str()).unwrap_or_default();
        seqs.sort_unstable();
        let expected: Vec<u64> = (1..=state.seq).collect();
        assert_eq!(
            seqs, expected,
            "seed {seed}: game {}: the acknowledged seqs are not exactly the log (a request applied twice or an action nobody acknowledged)",
            t.game_id
        );
    }
    assert!(
        by_game.is_empty(),
        "seed {seed}: acknowledged plays of unknown games"
    );
    server.assert_clean_logs();
    let recovered = server.log_lines_with("recovered unfinished games").len();
    assert!(recovered > 0, "seed {seed}: no restart recovered a game");
    println!(
        "seed {seed}: {kills} kills, {} games ({} finished), {} acknowledged plays, {} retried calls, {recovered} recoveries, {:.1}s",
        games.len(),
        shared.finished.load(Ordering::Relaxed),
        acked.len(),
        shared.retries.load(Ordering::Relaxed),
        started.elapsed().as_secs_f64()
    );
}

/// A client task: plays games one after another until told to stop (then finishes its game).
async fn player(index: u64, addr: SocketAddr, shared: Arc<Shared>, seed: u64) {
    let mut rng = rng(seed, 100 + index);
    let mut c = client(&addr);
    let mut n = 0u64;
    while !shared.stop.load(Ordering::SeqCst) {
        let rid = format!("crash-{seed}-{index}-{n}");
        let created = retry!(
            shared,
            "CreateGame",
            c.create_game(authed(create_request(&rid), ADMIN_KEY))
        );
        let table = Table::from_response(&created);
        if rng.random_bool(0.3) {
            // An idempotent create again: the same game and tokens (even after a restart).
            let again = retry!(
                shared,
                "CreateGame again",
                c.create_game(authed(create_request(&rid), ADMIN_KEY))
            );
            assert_eq!(again, created, "seed {seed}: idempotent create differs");
        }
        shared.games.lock().unwrap().push(table.clone());
        play(&mut c, &table, &mut rng, &shared, seed).await;
        shared.finished.fetch_add(1, Ordering::Relaxed);
        n += 1;
    }
}

async fn play(c: &mut Client, t: &Table, rng: &mut Rand, shared: &Shared, seed: u64) {
    let game_id = t.game_id.clone();
    loop {
        let state = retry!(
            shared,
            "GetState",
            c.get_state(authed(state_req(&game_id), &t.spectator))
        );
        let Some(player) = player_to_act(&state) else {
            shared.done.lock().unwrap().insert(game_id);
            return;
        };
        let token = t.seat_tokens[player as usize].clone();
        let hints = retry!(
            shared,
            "GetHints",
            c.get_hints(authed(hints_req(&game_id), &token))
        );
        assert!(
            hints.your_turn,
            "seed {seed}: game {game_id}: player {player} to act but hints say no"
        );
        let req = choose(
            rng,
            &game_id,
            player,
            state.seq,
            &hints,
            format!("{game_id}-{}", state.seq + 1),
        );
        let resp = retry!(
            shared,
            format!("SubmitPlay {game_id} seq {}", state.seq + 1),
            c.submit_play(authed(req.clone(), &token))
        );
        assert_eq!(
            resp.seq,
            state.seq + 1,
            "seed {seed}: game {game_id}: unexpected seq"
        );
        if !req.pass {
            let played = resp.play.as_ref().map(|p| sorted(&p.cards));
            assert_eq!(
                played,
                Some(sorted(&req.cards)),
                "seed {seed}: game {game_id}: reply play differs"
            );
        }
        shared.acks.lock().unwrap().push(Ack {
            seq: resp.seq,
            token,
            req,
        });
    }
}

/// Checks every game against the plays acknowledged before the kill: present at their seqs, no
/// gap, the game loads (replayed and verified by the server), and re-sent requests return their
/// original results.
async fn verify(
    addr: &SocketAddr,
    games: &[Table],
    acked: &[Ack],
    rng: &mut Rand,
    seed: u64,
    when: &str,
) {
    let shared = Shared::default();
    let mut c = client(addr);
    let ids: HashSet<&str> = games.iter().map(|t| t.game_id.as_str()).collect();
    let mut by_game: BTreeMap<&str, Vec<&Ack>> = BTreeMap::new();
    for a in acked
        .iter()
        .filter(|a| ids.contains(a.req.game_id.as_str()))
    {
        by_game.entry(a.req.game_id.as_str()).or_default().push(a);
    }
    for t in games {
        let replay = retry!(
            shared,
            "GetReplay",
            c.get_replay(authed(replay_req(&t.game_id), ADMIN_KEY))
        );
        for (i, a) in replay.actions.iter().enumerate() {
            assert_eq!(
                a.seq,
                i as u64 + 1,
                "seed {seed} {when}: game {}: log gap",
                t.game_id
            );
            assert!(
                !a.state_hash.is_empty(),
                "seed {seed} {when}: no state hash"
            );
        }
        let n = replay.actions.len() as u64;
        let acks = by_game.remove(t.game_id.as_str()).unwrap_or_default();
        for a in &acks {
            assert!(
                a.seq <= n,
                "seed {seed} {when}: game {}: acknowledged seq {} lost (log has {n})",
                t.game_id,
                a.seq
            );
            let action = &replay.actions[a.seq as usize - 1];
            assert_eq!(
                Some(action.player),
                a.req.seat,
                "seed {seed} {when}: seq {} player",
                a.seq
            );
            if a.req.pass {
                assert_eq!(
                    action.kind, "pass",
                    "seed {seed} {when}: seq {} kind",
                    a.seq
                );
            } else {
                assert_eq!(
                    action.kind, "play",
                    "seed {seed} {when}: seq {} kind",
                    a.seq
                );
                assert_eq!(
                    sorted(&action.cards),
                    sorted(&a.req.cards),
                    "seed {seed} {when}: seq {} cards",
                    a.seq
                );
            }
        }
        // Idempotency across the restart: the last acknowledged request and a random one.
        let mut again: Vec<&Ack> = acks.last().copied().into_iter().collect();
        if !acks.is_empty() {
            again.push(acks[rng.random_range(0..acks.len())]);
        }
        for a in again {
            let resp = retry!(
                shared,
                format!("SubmitPlay retry {} seq {}", t.game_id, a.seq),
                c.submit_play(authed(a.req.clone(), &a.token))
            );
            assert_eq!(
                resp.seq, a.seq,
                "seed {seed} {when}: a retried request did not return its original seq"
            );
            if !a.req.pass {
                let played = resp.play.as_ref().map(|p| sorted(&p.cards));
                assert_eq!(
                    played,
                    Some(sorted(&a.req.cards)),
                    "seed {seed} {when}: retried play differs"
                );
            }
        }
    }
}
