//! 升級 turn timers, 托管 and presence over a real socket: a seat that does not act within its
//! `turn_seconds` (at its minimum, 5 s) is played by the rule bot (event `auto_acted`, replay
//! step `auto`); a seat whose WatchGame stream drops is logged disconnected after the grace, and
//! when its reconnect window (`reconnect_seconds` at its minimum, 10 s) runs out it leaves: the
//! match ends and its team loses.
//!
//! The table decides these (`tests/shengji_turns.rs`); the shared schedule and presence of
//! `service::games` call it at deadlines and on dropped streams, as for Shuangkou. Every wait has
//! a deadline.

pub mod common;

use std::time::Duration;

use common::shengji::create_shengji;
use common::{ADMIN_KEY, TestServer, authed, channel, test_seed};
use shuangkou::service::pb::shengji as pb;
use shuangkou::service::pb::shengji::shengji_engine_client::ShengjiEngineClient;
use tokio_stream::StreamExt;
use tonic::transport::Channel;

type Client = ShengjiEngineClient<Channel>;

/// Turn timers on (the test configuration turns them off), a short presence grace.
fn timers_on(c: &mut shuangkou::config::ServeConfig) {
    c.admin_key = Some(ADMIN_KEY.into());
    c.no_turn_timers = false;
    c.presence_grace_ms = 200;
}

async fn state(c: &mut Client, id: &str, token: &str) -> pb::GameState {
    let req = pb::GetStateRequest {
        game_id: id.to_string(),
    };
    c.get_state(authed(req, token))
        .await
        .expect("state")
        .into_inner()
        .state
        .expect("a state")
}

/// Polls the spectator's state until `done` holds, for at most `limit`.
async fn state_until(
    c: &mut Client,
    id: &str,
    spectator: &str,
    limit: Duration,
    done: impl Fn(&pb::GameState) -> bool,
) -> pb::GameState {
    let poll = async {
        loop {
            let s = state(c, id, spectator).await;
            if done(&s) {
                return s;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    };
    tokio::time::timeout(limit, poll)
        .await
        .expect("the state came within its deadline")
}

/// The events of a WatchGame stream until `done` says so, for at most `limit`.
async fn events_until(
    c: &mut Client,
    id: &str,
    token: &str,
    limit: Duration,
    done: impl Fn(&pb::GameEvent) -> bool,
) -> Vec<pb::GameEvent> {
    let req = pb::WatchGameRequest {
        game_id: id.to_string(),
        from_seq: 0,
    };
    let mut stream = c
        .watch_game(authed(req, token))
        .await
        .expect("watch")
        .into_inner();
    let read = async {
        let mut seen = Vec::new();
        while let Some(e) = stream.next().await {
            let e = e.expect("an event");
            let last = done(&e);
            seen.push(e);
            if last {
                break;
            }
        }
        seen
    };
    tokio::time::timeout(limit, read)
        .await
        .expect("the events came within their deadline")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_that_does_not_act_by_its_deadline_is_played_by_the_rule_bot() {
    use pb::game_event::Kind;
    let server = TestServer::start(timers_on).await;
    let mut c = ShengjiEngineClient::new(channel(server.addr).await);
    let t = create_shengji(&mut c, test_seed(70), &[("turn_seconds", "5")]).await;
    let s = state(&mut c, &t.game_id, &t.spectator_token).await;
    let to_act = s.to_act.expect("the seat that deals");
    assert!(s.turn_deadline > 0, "a turn deadline");
    assert!(
        s.presence
            .iter()
            .all(|p| p.connected && p.reconnect_deadline == 0)
    );
    // Nobody deals: at the deadline the engine deals for that seat.
    let events = events_until(
        &mut c,
        &t.game_id,
        &t.spectator_token,
        Duration::from_secs(30),
        |e| matches!(e.kind, Some(Kind::AutoActed(_))),
    )
    .await;
    let Some(Kind::AutoActed(a)) = events.last().and_then(|e| e.kind.clone()) else {
        panic!("no auto_acted event");
    };
    assert_eq!((a.seat, a.reason.as_str()), (to_act, "timeout"));
    state_until(
        &mut c,
        &t.game_id,
        &t.spectator_token,
        Duration::from_secs(10),
        |s| s.seq >= 1,
    )
    .await;
    // The replay shows the auto steps, and the core re-executes it.
    let replay = c
        .get_replay(authed(
            pb::GetReplayRequest {
                game_id: t.game_id.clone(),
            },
            ADMIN_KEY,
        ))
        .await
        .expect("replay (admin)")
        .into_inner();
    let dealt: Vec<_> = replay.steps.iter().take(48).collect();
    assert_eq!(dealt.len(), 48, "the 48 cards dealt for the seat");
    assert!(
        dealt
            .iter()
            .all(|s| s.auto && s.player == to_act && s.seq == 1)
    );
    assert_eq!(replay.turn_ms, 5_000);
    shuangkou::service::wire::shengji_client::verify_replay(&replay).expect("it replays");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_stream_is_a_disconnect_and_the_end_of_the_window_ends_the_match() {
    use pb::game_event::Kind;
    let server = TestServer::start(timers_on).await;
    let mut c = ShengjiEngineClient::new(channel(server.addr).await);
    let t = create_shengji(
        &mut c,
        test_seed(71),
        &[("turn_seconds", "600"), ("reconnect_seconds", "10")],
    )
    .await;
    // Seat 1 watches, then its stream drops.
    {
        let req = pb::WatchGameRequest {
            game_id: t.game_id.clone(),
            from_seq: 0,
        };
        let mut stream = c
            .watch_game(authed(req, &t.seat_tokens[1]))
            .await
            .expect("watch")
            .into_inner();
        let first = tokio::time::timeout(Duration::from_secs(10), stream.next()).await;
        assert!(matches!(first, Ok(Some(Ok(_)))), "the creation events");
    }
    // After the grace: logged disconnected, with its window's end (the spectator's view: a call
    // with seat 1's token would reconnect it).
    let s = state_until(
        &mut c,
        &t.game_id,
        &t.spectator_token,
        Duration::from_secs(10),
        |s| s.presence.get(1).is_some_and(|p| !p.connected),
    )
    .await;
    let window_end = s.presence[1].reconnect_deadline;
    assert!(window_end > 0);
    // The window runs out: seat 1 leaves, its team (1) loses.
    let events = events_until(
        &mut c,
        &t.game_id,
        &t.spectator_token,
        Duration::from_secs(30),
        |e| matches!(e.kind, Some(Kind::SeatLeft(_))),
    )
    .await;
    assert!(events.iter().any(|e| matches!(
        &e.kind,
        Some(Kind::SeatDisconnected(d)) if d.seat == 1 && d.reconnect_deadline == window_end
    )));
    let Some(Kind::SeatLeft(left)) = events.last().and_then(|e| e.kind.clone()) else {
        panic!("no seat_left event");
    };
    assert_eq!(
        (left.seat, left.winner, left.reason.as_str()),
        (1, 0, "disconnected")
    );
    let s = state(&mut c, &t.game_id, &t.spectator_token).await;
    assert_eq!((s.left, s.winner), (Some(1), Some(0)));
    assert!(events.last().is_some_and(|e| e.at_ms >= window_end as u64));
}
