//! Presence over a real socket (issue 14; seed 002, 掉線逃跑: a dropped player has the reconnect
//! window to come back, else it has escaped and the game ends at once):
//!
//! - a seat drops its only WatchGame stream → the other viewers get `seat_disconnected` within
//!   the grace plus one second; without a return the deal ends by escape at the window's end,
//!   scored by the variant's escape hook (erren: seed 002's 雙扣/單扣/平扣 by the cards left);
//! - it comes back within the window (a new stream, or a seat call) → `seat_reconnected`, no
//!   escape, play goes on; a player that never opened a stream is never disconnected;
//! - `auto_play` (state and events) is true exactly while the engine plays the seat;
//! - two replicas on one Redis: the expiry is logged exactly once;
//! - SIGKILL during a window → after the restart the escape comes at the original deadline;
//! - the WatchGame cursor: resuming after any event (in the middle of a seq carrying several)
//!   gets exactly the rest; a cursor or seq beyond the game is an error, not a silent wait;
//! - at most `--max-watch-streams-per-token` streams per token.
//!
//! Reconnect windows are the variants' shortest (`reconnect_seconds` 10) and the grace 1 s.

pub mod common;
// The binary-level helpers (a server child process, a real Redis) include the request builders
// and scratch dirs of `common` by path: one small second copy in this binary.
#[allow(clippy::duplicate_mod)]
pub mod durability_support;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::{
    ADMIN_KEY, TestServer, authed, channel, config, create, create_req, expect_reject, get_replay,
    hints, keyed, play_req, poll_until, state, test_seed, turn_player, within,
};
use shuangkou::service::pb;
use shuangkou::service::pb::game_engine_client::GameEngineClient;
use shuangkou::service::pb::game_event::Event as E;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tonic::Code;
use tonic::transport::Channel;

const GRACE_MS: u64 = 1000;
const WINDOW_S: u64 = 10;
type Client = GameEngineClient<Channel>;

/// A keyed in-process server with a 1 s grace and `tweak`.
async fn server(tweak: impl FnOnce(&mut shuangkou::config::ServeConfig)) -> TestServer {
    TestServer::try_start(config(|c| {
        keyed(c);
        c.presence_grace_ms = GRACE_MS;
        tweak(c);
    }))
    .await
    .expect("server starts")
}

/// A game of `variant` with a 10 s reconnect window.
async fn game(c: &mut Client, variant: &str, seed: u64) -> pb::CreateGameResponse {
    let mut req = create_req(variant, 1, Some(seed));
    req.options
        .insert("reconnect_seconds".into(), WINDOW_S.to_string());
    create(c, ADMIN_KEY, req).await
}

/// An open WatchGame stream read by a task into a channel; dropping it closes the stream.
struct Watcher {
    rx: mpsc::UnboundedReceiver<pb::GameEvent>,
    task: JoinHandle<Result<(), tonic::Status>>,
    /// Everything received so far, in order.
    seen: Vec<pb::GameEvent>,
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// [`watch`] from the start; panics with `what` when the stream does not open.
async fn watch_all(addr: SocketAddr, game_id: &str, token: &str, what: &str) -> Watcher {
    watch(addr, game_id, token, (0, ""))
        .await
        .unwrap_or_else(|s| panic!("{what}: {s:?}"))
}

async fn watch(
    addr: SocketAddr,
    game_id: &str,
    token: &str,
    from: (u64, &str),
) -> Result<Watcher, tonic::Status> {
    let mut c = GameEngineClient::new(channel(addr).await);
    let req = pb::WatchGameRequest {
        game_id: game_id.into(),
        from_seq: from.0,
        cursor: from.1.into(),
    };
    let mut stream = c.watch_game(authed(req, token)).await?.into_inner();
    let (tx, rx) = mpsc::unbounded_channel();
    let task = tokio::spawn(async move {
        let _client = c;
        while let Some(ev) = stream.message().await? {
            if tx.send(ev).is_err() {
                break;
            }
        }
        Ok(())
    });
    Ok(Watcher {
        rx,
        task,
        seen: Vec::new(),
    })
}

impl Watcher {
    /// Waits (at most `limit`) for an event matching `want`; returns it.
    async fn until(
        &mut self,
        limit: Duration,
        what: &str,
        want: impl Fn(&pb::GameEvent) -> bool,
    ) -> pb::GameEvent {
        within(limit, what, async {
            loop {
                let ev =
                    self.rx.recv().await.unwrap_or_else(|| {
                        panic!("{what}: the stream ended; seen {:#?}", self.seen)
                    });
                self.seen.push(ev.clone());
                if want(&ev) {
                    return ev;
                }
            }
        })
        .await
    }

    /// Every event up to the end of the stream (a finished game), at most `limit`.
    async fn rest(mut self, limit: Duration) -> Vec<pb::GameEvent> {
        within(limit, "the rest of the stream", async {
            while let Some(ev) = self.rx.recv().await {
                self.seen.push(ev);
            }
        })
        .await;
        std::mem::take(&mut self.seen)
    }
}

fn disconnected(seat: u32) -> impl Fn(&pb::GameEvent) -> bool {
    move |e| matches!(&e.event, Some(E::SeatDisconnected(d)) if d.seat == seat)
}

fn reconnected(seat: u32) -> impl Fn(&pb::GameEvent) -> bool {
    move |e| matches!(&e.event, Some(E::SeatReconnected(d)) if d.seat == seat)
}

fn escaped(e: &pb::GameEvent) -> bool {
    matches!(&e.event, Some(E::Escaped(_)))
}

fn seat_of(st: &pb::GetStateResponse, player: u32) -> &pb::SeatState {
    st.seats
        .iter()
        .find(|s| s.player == player)
        .expect("player seated")
}

/// `auto_play` exactly while the engine plays the seat, from the events a viewer got: every
/// play or pass the engine made is by a seat between its disconnect and its return, every
/// play or pass of such a seat is the engine's, and the 托管 flag changes with the presence.
fn check_auto_play(events: &[pb::GameEvent]) {
    let mut away: HashMap<u32, bool> = HashMap::new();
    for (i, e) in events.iter().enumerate() {
        let next = events.get(i + 1).and_then(|n| n.event.as_ref());
        match &e.event {
            Some(E::SeatDisconnected(d)) => {
                away.insert(d.seat, true);
                assert!(
                    matches!(next, Some(E::AutoPlayChanged(a)) if a.on && a.seat == d.seat),
                    "a disconnect turns 托管 on: {next:?}"
                );
            }
            Some(E::SeatReconnected(d)) => {
                away.insert(d.seat, false);
                assert!(
                    matches!(next, Some(E::AutoPlayChanged(a)) if !a.on && a.seat == d.seat),
                    "a reconnect turns 托管 off: {next:?}"
                );
            }
            Some(E::Played(p)) => {
                let a = away.get(&p.seat).copied().unwrap_or(false);
                assert_eq!(p.auto, a, "play of seat {} at {}", p.seat, e.cursor);
            }
            Some(E::Passed(p)) => {
                let a = away.get(&p.seat).copied().unwrap_or(false);
                assert_eq!(p.auto, a, "pass of seat {} at {}", p.seat, e.cursor);
            }
            _ => {}
        }
    }
}

/// The player to act plays its first hint, if it is `player`; true when it did.
async fn play_first_hint(c: &mut Client, g: &pb::CreateGameResponse, player: u32) -> bool {
    let st = state(c, &g.game_id, ADMIN_KEY).await;
    if st.phase != pb::Phase::Playing as i32 || turn_player(&st) != player {
        return false;
    }
    let token = &g.seat_tokens[player as usize];
    let h = hints(c, &g.game_id, token).await;
    let req = if h.can_pass {
        common::pass_req(&g.game_id, player, st.seq)
    } else {
        play_req(&g.game_id, player, &h.plays[0], st.seq)
    };
    c.submit_play(authed(req, token)).await.expect("SubmitPlay");
    true
}

/// Seed 002's escape rule for erren with the default options: 3 units (雙扣) for 12 cards or
/// more left, 2 (單扣) for 7 to 11, 1 (平扣) below; one unit is one point.
fn erren_escape_units(cards_left: u32) -> f64 {
    match cards_left {
        12.. => 3.0,
        7..=11 => 2.0,
        _ => 1.0,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_seat_is_disconnected_and_escapes_at_the_end_of_its_window() {
    let seed = test_seed(1402);
    let srv = server(|_| {}).await;
    let mut c = srv.client().await;
    let g = game(&mut c, "erren", seed).await;
    let mut spectator =
        watch_all(srv.addr, &g.game_id, &g.spectator_token, "spectator stream").await;
    let p0 = watch_all(srv.addr, &g.game_id, &g.seat_tokens[0], "player 0 stream").await;
    let st = state(&mut c, &g.game_id, ADMIN_KEY).await;
    let s0 = seat_of(&st, 0).seat;
    let s1 = seat_of(&st, 1).seat;
    assert!(seat_of(&st, 0).connected && !seat_of(&st, 0).auto_play);
    drop(p0);
    let limit = Duration::from_millis(GRACE_MS + 1000);
    let d = spectator
        .until(
            limit,
            "seat_disconnected within grace + 1 s",
            disconnected(s0),
        )
        .await;
    let Some(E::SeatDisconnected(info)) = &d.event else {
        unreachable!()
    };
    assert_eq!(info.reconnect_deadline, d.at + 1000 * WINDOW_S as i64);
    let st = state(&mut c, &g.game_id, ADMIN_KEY).await;
    let (away, other) = (seat_of(&st, 0), seat_of(&st, 1));
    assert!(!away.connected && away.auto_play);
    assert_eq!(away.reconnect_deadline, info.reconnect_deadline);
    // Player 1 never opened a stream and only polls: it stays connected.
    assert!(other.connected && !other.auto_play && other.reconnect_deadline == 0);
    // Play goes on with the engine playing seat 0 (no turn timers: at once).
    for _ in 0..3 {
        let played = within(Duration::from_secs(10), "player 1 plays", async {
            loop {
                if play_first_hint(&mut c, &g, 1).await {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        played.await;
    }
    let window = Duration::from_secs(WINDOW_S + 5);
    let e = spectator.until(window, "the escape", escaped).await;
    let Some(E::Escaped(esc)) = &e.event else {
        unreachable!()
    };
    assert_eq!((esc.seat, esc.reason.as_str()), (s0, "disconnected"));
    assert!(
        e.at >= info.reconnect_deadline,
        "not before the window's end"
    );
    let ended = spectator
        .until(Duration::from_secs(5), "the deal result", |e| {
            matches!(e.event, Some(E::DealEnded(_)))
        })
        .await;
    let Some(E::DealEnded(r)) = &ended.event else {
        unreachable!()
    };
    assert_eq!(r.outcome, pb::Outcome::Escape as i32);
    assert_eq!(r.escaped, Some(s0));
    let st = state(&mut c, &g.game_id, ADMIN_KEY).await;
    assert_eq!(
        st.phase,
        pb::Phase::Finished as i32,
        "有玩家逃跑則游戲立即結束"
    );
    let left = seat_of(&st, 0).card_count;
    let line = r
        .lines
        .iter()
        .find(|l| l.label == "escape")
        .expect("an escape line");
    assert_eq!(line.seat, s0);
    assert_eq!(line.amount, -erren_escape_units(left), "{line:?}");
    let events = spectator.rest(Duration::from_secs(5)).await;
    assert!(!events.iter().any(disconnected(s1)));
    check_auto_play(&events);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_back_within_its_window_plays_on() {
    let seed = test_seed(1403);
    let srv = server(|_| {}).await;
    let mut c = srv.client().await;
    let g = game(&mut c, "classic", seed).await;
    let mut spectator =
        watch_all(srv.addr, &g.game_id, &g.spectator_token, "spectator stream").await;
    let st = state(&mut c, &g.game_id, ADMIN_KEY).await;
    let s0 = seat_of(&st, 0).seat;
    let limit = Duration::from_millis(GRACE_MS + 1000);
    // Back by a new stream.
    let p0 = watch_all(srv.addr, &g.game_id, &g.seat_tokens[0], "player 0 stream").await;
    drop(p0);
    let d = spectator
        .until(limit, "seat_disconnected", disconnected(s0))
        .await;
    let Some(E::SeatDisconnected(info)) = &d.event else {
        unreachable!()
    };
    let deadline = info.reconnect_deadline;
    let back = watch_all(srv.addr, &g.game_id, &g.seat_tokens[0], "player 0 back").await;
    spectator
        .until(Duration::from_secs(5), "seat_reconnected", reconnected(s0))
        .await;
    let st = state(&mut c, &g.game_id, ADMIN_KEY).await;
    let p = seat_of(&st, 0);
    assert!(p.connected && !p.auto_play && p.reconnect_deadline == 0);
    // The window's end passes without an escape.
    let wait = (deadline - d.at) as u64 + 2000;
    tokio::time::sleep(Duration::from_millis(wait)).await;
    let st = state(&mut c, &g.game_id, ADMIN_KEY).await;
    assert_eq!(st.phase, pb::Phase::Playing as i32);
    // Play goes on: every player plays its own turns (no 托管 of player 0).
    for _ in 0..6 {
        let st = state(&mut c, &g.game_id, ADMIN_KEY).await;
        assert!(play_first_hint(&mut c, &g, turn_player(&st)).await);
    }
    // Back by a seat call: drop the stream again, then GetHints with the seat token.
    drop(back);
    spectator
        .until(limit, "a second seat_disconnected", disconnected(s0))
        .await;
    hints(&mut c, &g.game_id, &g.seat_tokens[0]).await;
    spectator
        .until(
            Duration::from_secs(5),
            "seat_reconnected by a call",
            reconnected(s0),
        )
        .await;
    let st = state(&mut c, &g.game_id, ADMIN_KEY).await;
    assert!(seat_of(&st, 0).connected);
    assert_eq!(st.phase, pb::Phase::Playing as i32);
    drop(spectator);
    // Everything a viewer got from the beginning, checked for the 托管 flag.
    let mut all = watch_all(srv.addr, &g.game_id, &g.spectator_token, "spectator again").await;
    let off = |e: &pb::GameEvent| matches!(&e.event, Some(E::AutoPlayChanged(a)) if !a.on);
    let limit = Duration::from_secs(5);
    all.until(limit, "托管 off", off).await;
    let last = all.until(limit, "托管 off again", off).await;
    let seen = all.seen.clone();
    assert!(!seen.iter().any(escaped), "no escape");
    check_auto_play(&seen);
    assert!(last.seq > 0);
}

/// Plays a classic game a few turns, then player 0 leaves: a finished game whose last seq
/// carries several events (the escape, the deal result, the match result).
async fn finished_game(c: &mut Client, seed: u64) -> pb::CreateGameResponse {
    let g = game(c, "classic", seed).await;
    for _ in 0..5 {
        let st = state(c, &g.game_id, ADMIN_KEY).await;
        assert!(play_first_hint(c, &g, turn_player(&st)).await);
    }
    common::leave(c, &g.game_id, &g.seat_tokens[0])
        .await
        .expect("leave");
    g
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cursor_resumes_exactly_after_its_event() {
    let seed = test_seed(1404);
    let srv = server(|_| {}).await;
    let mut c = srv.client().await;
    let g = finished_game(&mut c, seed).await;
    let token = &g.seat_tokens[1];
    let limit = Duration::from_secs(10);
    let all = watch_all(srv.addr, &g.game_id, token, "stream")
        .await
        .rest(limit)
        .await;
    let last = all.last().expect("events").seq;
    assert!(
        all.iter().filter(|e| e.seq == last).count() >= 3,
        "the leave's seq carries several events"
    );
    let mut cursors = std::collections::HashSet::new();
    for (i, e) in all.iter().enumerate() {
        assert!(cursors.insert(e.cursor.clone()), "cursors are unique");
        let rest = watch(srv.addr, &g.game_id, token, (0, &e.cursor))
            .await
            .expect("resume")
            .rest(limit)
            .await;
        assert_eq!(rest, all[i + 1..], "resumed after {}", e.cursor);
    }
    // from_seq: everything of later seqs.
    let later = watch(srv.addr, &g.game_id, token, (last - 1, ""))
        .await
        .expect("from_seq")
        .rest(limit)
        .await;
    assert_eq!(
        later,
        all.iter()
            .filter(|e| e.seq == last)
            .cloned()
            .collect::<Vec<_>>()
    );
    // Beyond the game: an error, not a silent wait.
    let n = all.iter().filter(|e| e.seq == last).count();
    for (from_seq, cursor) in [
        (0, format!("{}.0", last + 1)),
        (0, format!("{last}.{n}")),
        (last + 1, String::new()),
    ] {
        let r = watch(srv.addr, &g.game_id, token, (from_seq, &cursor)).await;
        expect_reject(
            r.map(|_| tonic::Response::new(())),
            Code::OutOfRange,
            "CURSOR_OUT_OF_RANGE",
        );
    }
    for bad in ["seven", "1.x", &format!("{}.0", "9".repeat(70))] {
        let r = watch(srv.addr, &g.game_id, token, (0, bad)).await;
        expect_reject(
            r.map(|_| tonic::Response::new(())),
            Code::InvalidArgument,
            "BAD_REQUEST",
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_per_token_are_bounded() {
    let seed = test_seed(1405);
    let srv = server(|c| c.max_watch_streams_per_token = 2).await;
    let mut c = srv.client().await;
    let g = game(&mut c, "classic", seed).await;
    let (addr, id) = (srv.addr, g.game_id.clone());
    let open = move |t: String| {
        let id = id.clone();
        async move { watch(addr, &id, &t, (0, "")).await }
    };
    let a = open(g.seat_tokens[0].clone()).await.expect("first");
    let _b = open(g.seat_tokens[0].clone()).await.expect("second");
    let r = open(g.seat_tokens[0].clone()).await;
    expect_reject(
        r.map(|_| tonic::Response::new(())),
        Code::ResourceExhausted,
        "LIMIT_EXCEEDED",
    );
    // Another token has its own bound.
    let _other = open(g.seat_tokens[1].clone()).await.expect("another token");
    // A closed stream frees its place (the server notices the close shortly).
    drop(a);
    poll_until(
        Duration::from_secs(5),
        Duration::from_millis(50),
        "a place after a close",
        async || open(g.seat_tokens[0].clone()).await.ok(),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_on_one_redis_decide_the_expiry_once() {
    let root = durability_support::temp_dir("presence_redis");
    let Some(redis) = durability_support::RedisServer::start("presence_redis", root.join("redis"))
    else {
        return;
    };
    let seed = test_seed(1406);
    let lease = |c: &mut shuangkou::config::ServeConfig| {
        c.store = redis.url();
        c.lease_ttl = Duration::from_secs(3);
    };
    let a = server(lease).await;
    let b = server(lease).await;
    // The two split the shards (64 each) before the game is made, so it does not move mid-test
    // (a move ends the game's streams on the former owner).
    let owned = |s: &TestServer| {
        s.app
            .as_ref()
            .map_or(0, |a| a.ownership().owned_shards().len())
    };
    poll_until(
        Duration::from_secs(20),
        Duration::from_millis(100),
        "the two replicas to split the shards",
        async || (owned(&a) == 64 && owned(&b) == 64).then_some(()),
    )
    .await;
    let mut ca = a.client().await;
    let mut cb = b.client().await;
    let g = game(&mut ca, "erren", seed).await;
    let mut on_a = watch_all(a.addr, &g.game_id, &g.spectator_token, "spectator on A").await;
    let mut on_b = watch_all(b.addr, &g.game_id, &g.spectator_token, "spectator on B").await;
    let p0 = watch_all(a.addr, &g.game_id, &g.seat_tokens[0], "player 0 on A").await;
    let st = state(&mut cb, &g.game_id, ADMIN_KEY).await;
    let s0 = seat_of(&st, 0).seat;
    drop(p0);
    let limit = Duration::from_millis(GRACE_MS + 1000);
    on_a.until(limit, "disconnect seen on A", disconnected(s0))
        .await;
    on_b.until(
        Duration::from_secs(5),
        "disconnect seen on B",
        disconnected(s0),
    )
    .await;
    let window = Duration::from_secs(WINDOW_S + 5);
    on_a.until(window, "escape on A", escaped).await;
    on_b.until(Duration::from_secs(5), "escape on B", escaped)
        .await;
    let replay = get_replay(&mut cb, &g.game_id, ADMIN_KEY).await;
    let kinds: Vec<&str> = replay.actions.iter().map(|a| a.kind.as_str()).collect();
    let count = |k: &str| kinds.iter().filter(|x| **x == k).count();
    assert_eq!(count("disconnect"), 1, "{kinds:?}");
    assert_eq!(count("reconnect_expired"), 1, "{kinds:?}");
    let st = state(&mut cb, &g.game_id, ADMIN_KEY).await;
    assert_eq!(st.phase, pb::Phase::Finished as i32);
    let events = on_b.rest(Duration::from_secs(5)).await;
    assert_eq!(events.iter().filter(|e| escaped(e)).count(), 1);
    check_auto_play(&events);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_keeps_the_window_deadline() {
    use durability_support::Server;
    let root = durability_support::temp_dir("presence_restart");
    let data = &root.join("data");
    let grace = GRACE_MS.to_string();
    let env = [("SHUANGKOU_PRESENCE_GRACE_MS", grace.as_str())];
    let mut srv = Server::start_with("presence", &data.display().to_string(), &root, &env).await;
    let seed = test_seed(1407);
    let mut c = GameEngineClient::new(channel(srv.addr).await);
    let mut req = create_req("classic", 1, Some(seed));
    req.options
        .insert("reconnect_seconds".into(), WINDOW_S.to_string());
    let g = c
        .create_game(authed(req, durability_support::ADMIN_KEY))
        .await
        .expect("CreateGame")
        .into_inner();
    let mut spectator =
        watch_all(srv.addr, &g.game_id, &g.spectator_token, "spectator stream").await;
    let p0 = watch_all(srv.addr, &g.game_id, &g.seat_tokens[0], "player 0 stream").await;
    drop(p0);
    let d = spectator
        .until(
            Duration::from_millis(GRACE_MS + 1000),
            "seat_disconnected",
            |e| matches!(e.event, Some(E::SeatDisconnected(_))),
        )
        .await;
    let Some(E::SeatDisconnected(info)) = &d.event else {
        unreachable!()
    };
    let killed = Instant::now();
    srv.kill();
    drop(spectator);
    srv.restart().await;
    let restarted = killed.elapsed();
    let mut again = within(Duration::from_secs(10), "stream after restart", async {
        loop {
            if let Ok(w) = watch(srv.addr, &g.game_id, &g.spectator_token, (d.seq, "")).await {
                return w;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    let e = again
        .until(Duration::from_secs(WINDOW_S + 5), "the escape", escaped)
        .await;
    let Some(E::Escaped(esc)) = &e.event else {
        unreachable!()
    };
    assert_eq!(esc.reason, "disconnected");
    // At the original deadline (the 250 ms schedule plus a margin), not a new window from the
    // restart (which would be at least WINDOW_S after it).
    assert!(e.at >= info.reconnect_deadline);
    assert!(
        e.at < info.reconnect_deadline + 3000,
        "escape at {} for a deadline of {} (restart took {restarted:?})",
        e.at,
        info.reconnect_deadline
    );
    srv.assert_clean_logs();
}
