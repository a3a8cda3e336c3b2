//! The drain the Kubernetes manifests of `deploy/` rely on, on the real binary: on SIGTERM the
//! health service turns NOT_SERVING first (the readiness probe fails, load balancers stop
//! routing), calls made during the drain delay still complete, open WatchGame streams end with
//! UNAVAILABLE (clients resume elsewhere from their last seq), the store is flushed, and the
//! process exits 0 well within the pod's grace period.
//!
//! The manifests use a drain delay of 5 s and a drain of 20 s within a 40 s grace period; this
//! test uses 5 s and 5 s. It checks the order of what happens (NOT_SERVING, then calls still
//! served with the stream still open, then the stream's end, then the exit), not how fast: every
//! wait has a deadline of seconds, none a sub-second window.

pub mod deploy_support;

use std::time::{Duration, Instant};

use deploy_support::{
    GAME_SERVICE, Game, Server, authed, create_game, health, state_req, temp_dir, turn, watch_req,
};
use shuangkou::service::pb;
use tonic::Code;
use tonic_health::pb::health_check_response::ServingStatus;

const DRAIN_DELAY: Duration = Duration::from_secs(5);
const DRAIN: Duration = Duration::from_secs(5);
/// What the test allows on top of delay + drain before calling the exit late (the manifests
/// allow 10 s on top of 5 s + 5 s + 20 s).
const MARGIN: Duration = Duration::from_secs(10);

fn get_state(token: &str, game_id: &str) -> tonic::Request<pb::GetStateRequest> {
    authed(token, state_req(game_id))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_turns_health_not_serving_first_finishes_calls_and_exits_in_time() {
    let store = temp_dir("drain");
    let store_arg = store.to_str().expect("utf-8 path").to_string();
    let args = [
        "--store",
        store_arg.as_str(),
        "--drain-delay-seconds",
        "5",
        "--drain-seconds",
        "5",
    ];
    let mut server = Server::start(&args);
    let channel = server.ready(Duration::from_secs(120)).await;
    let mut game = Game::new(channel.clone());

    // A game with one acknowledged play, and a player watching it (a long in-flight call).
    let created = create_game(&mut game, "classic", 4).await;
    let token0 = created.seat_tokens[0].clone();
    let mut watch = game
        .watch_game(authed(&token0, watch_req(&created.game_id, 0)))
        .await
        .expect("WatchGame")
        .into_inner();
    let (_, player, hints) = turn(&mut game, &created).await;
    let token = created.seat_tokens[player as usize].clone();
    let played = game
        .submit_play(authed(
            &token,
            pb::SubmitPlayRequest {
                game_id: created.game_id.clone(),
                seat: Some(player),
                cards: hints.plays[0].cards.clone(),
                request_id: "drain-1".into(),
                ..Default::default()
            },
        ))
        .await
        .expect("SubmitPlay")
        .into_inner();
    assert_eq!(played.seq, 1);
    // The watcher has seen the play.
    let mut seen = 0;
    while seen < 1 {
        let ev = tokio::time::timeout(Duration::from_secs(10), watch.message())
            .await
            .expect("an event within 10 s")
            .expect("an event")
            .expect("the stream is open");
        seen = ev.seq;
    }
    assert_eq!(
        health(&channel, GAME_SERVICE).await,
        Some(ServingStatus::Serving)
    );

    // SIGTERM, as the kubelet sends it after the preStop hook.
    let t0 = Instant::now();
    server.sigterm();

    // 1. Health turns NOT_SERVING first, while the listener still accepts (a health call that
    //    fails instead means the listener closed before health turned): the readiness probe
    //    fails before anything else happens.
    let not_serving = loop {
        match health(&channel, GAME_SERVICE).await {
            Some(ServingStatus::NotServing) => break t0.elapsed(),
            Some(ServingStatus::Serving) => {}
            other => panic!(
                "health must answer NOT_SERVING during the drain delay, got {other:?}:\n{}",
                server.log()
            ),
        }
        assert!(
            t0.elapsed() < DRAIN_DELAY + DRAIN + MARGIN,
            "health still SERVING {:?} after SIGTERM:\n{}",
            t0.elapsed(),
            server.log()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    eprintln!("NOT_SERVING {not_serving:?} after SIGTERM");
    for service in ["", "shuangkou.v1.VariantAdmin"] {
        assert_eq!(
            health(&channel, service).await,
            Some(ServingStatus::NotServing),
            "service {service:?}"
        );
    }

    // 2. Calls made during the drain delay complete: on the open connection and on a new one.
    let state = game
        .get_state(get_state(&token0, &created.game_id))
        .await
        .expect("GetState during the drain delay")
        .into_inner();
    assert_eq!(state.seq, 1);
    let mut fresh = Game::new(
        server
            .channel()
            .await
            .expect("a new connection during the delay"),
    );
    let listed = fresh
        .list_variants(pb::ListVariantsRequest {})
        .await
        .expect("ListVariants on a new connection during the drain delay")
        .into_inner();
    assert!(listed.variants.iter().any(|v| v.id == "classic"));
    // Order: the stream is still open after those calls (one poll finds no message and no end).
    assert!(
        tokio::time::timeout(Duration::ZERO, watch.message())
            .await
            .is_err(),
        "the watch stream ended (or sent) before the drain delay's calls were served"
    );

    // 3. The open WatchGame stream ends with UNAVAILABLE (a status, not a dropped connection)
    //    once the delay is over.
    let end = tokio::time::timeout(DRAIN_DELAY + DRAIN, watch.message())
        .await
        .expect("the stream ends within the drain");
    match end {
        Err(status) => assert_eq!(status.code(), Code::Unavailable, "{status:?}"),
        other => panic!("the stream must end with UNAVAILABLE, got {other:?}"),
    }
    let closed = t0.elapsed();

    // 4. The process exits 0 within delay + drain (+ margin).
    let status = server.wait_exit(DRAIN_DELAY + DRAIN + MARGIN).await;
    let exited = t0.elapsed();
    assert!(
        status.is_some_and(|s| s.success()),
        "the server must exit 0 within {:?}, got {status:?} after {exited:?}:\n{}",
        DRAIN_DELAY + DRAIN + MARGIN,
        server.log()
    );
    eprintln!("streams closed {closed:?}, exited {exited:?} after SIGTERM");
    drop(server);

    // 5. Nothing acknowledged was lost: a new process on the same store has the play.
    let mut again = Server::start(&args);
    let channel = again.ready(Duration::from_secs(120)).await;
    let mut game = Game::new(channel);
    let state = game
        .get_state(get_state(&token0, &created.game_id))
        .await
        .expect("GetState after the restart")
        .into_inner();
    assert_eq!(state.seq, 1, "the acknowledged play survived the drain");
    again.stop().await;
    let _ = std::fs::remove_dir_all(&store);
}
