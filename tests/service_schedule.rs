//! The service's schedule: turn deadlines drive the engine's auto-play (托管) over the wire, and
//! finished games leave the in-memory cache after their linger time while staying readable
//! (rebuilt from the store on the next call).

pub mod common;

use std::time::{Duration, Instant};

use common::*;
use shuangkou::service::pb;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missed_turn_deadline_is_played_by_the_engine() {
    let server = TestServer::start(|c| {
        c.no_turn_timers = false;
        keyed(c);
    })
    .await;
    let mut c = server.client().await;
    let mut req = create_req("classic", 1, Some(41));
    req.options.insert("turn_seconds".into(), "5".into());
    let g = create(&mut c, ADMIN_KEY, req).await;
    let st = state(&mut c, &g.game_id, ADMIN_KEY).await;
    assert_eq!(st.seq, 0);
    assert!(st.turn_deadline > 0, "turn timers are on: {st:?}");
    let leader = turn_player(&st);

    // Nobody plays: within the deadline plus the schedule's tick the engine acts for the leader.
    let start = Instant::now();
    let after = poll_until(
        Duration::from_secs(15),
        Duration::from_millis(250),
        "auto-play within 15 s of a 5 s deadline",
        async || Some(state(&mut c, &g.game_id, ADMIN_KEY).await).filter(|s| s.seq > 0),
    )
    .await;
    assert_eq!(after.seq, 1, "no auto-play within 15 s of a 5 s deadline");
    assert!(
        start.elapsed() >= Duration::from_secs(3),
        "auto-play came before the deadline ({:?})",
        start.elapsed()
    );
    assert_ne!(turn_player(&after), leader, "the turn moved on");
    assert!(after.turn_deadline > st.turn_deadline, "a new deadline");

    // End the match (an escape) and replay it independently: with the replay's created_at and
    // turn_ms, the deadlines and the 托管 action reproduce every state hash.
    let replay = escape_and_replay(&mut c, &g, &after).await;
    assert_eq!(replay.turn_ms, 5_000);
    assert!(replay.created_at > 0);
    assert_eq!(replay.actions[0].kind, "auto");
    let rebuilt = rebuild(&replay).expect("the replay verifies");
    assert_eq!(rebuilt.entries.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finished_games_leave_the_cache_and_stay_readable() {
    let dir = common::temp::TempDir::fresh("schedule-evict", "store");
    let store = dir.to_string_lossy().into_owned();
    let server = TestServer::start(|c| {
        c.finished_linger_seconds = 0;
        c.store = store;
        keyed(c);
    })
    .await;
    let app = server.app.clone().expect("app");
    let mut c = server.client().await;
    let g = create(&mut c, ADMIN_KEY, create_req("classic", 1, Some(42))).await;
    let running = create(&mut c, ADMIN_KEY, create_req("classic", 1, Some(43))).await;
    assert_eq!(app.cached_games(), 2);

    // An escape ends the one-deal match.
    let st = state(&mut c, &g.game_id, ADMIN_KEY).await;
    let leaver = (turn_player(&st) + 1) % 4;
    leave(&mut c, &g.game_id, &g.seat_tokens[leaver as usize])
        .await
        .expect("LeaveGame");
    let before = state(&mut c, &g.game_id, &g.spectator_token).await;
    assert_eq!(before.phase, pb::Phase::Finished as i32);
    let replay_before = get_replay(&mut c, &g.game_id, &g.spectator_token).await;

    // The finished game leaves the cache; the running one stays.
    poll_until(
        Duration::from_secs(30),
        Duration::from_millis(100),
        "the finished game to leave the cache (the running one stays)",
        async || (app.cached_games() == 1).then_some(()),
    )
    .await;
    let still = state(&mut c, &running.game_id, ADMIN_KEY).await;
    assert_eq!(still.phase, pb::Phase::Playing as i32);

    // Reading it again rebuilds it from the store, identical.
    let again = state(&mut c, &g.game_id, &g.spectator_token).await;
    assert_eq!(again, before);
    let replay_again = get_replay(&mut c, &g.game_id, &g.spectator_token).await;
    assert_eq!(replay_again, replay_before);
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
