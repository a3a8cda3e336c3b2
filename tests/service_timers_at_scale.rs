//! Many games timing out at once (issue 21): the schedule plays every game's turn by 托管 when
//! its deadline passes, and the server keeps answering meanwhile (Health/Check and GetState),
//! on a one-worker runtime of its own, so a lost wake-up or a worker blocked by the schedule
//! shows as a deadline missed here, never as a test that hangs (the client runs on another
//! runtime, and every wait has a deadline).

pub mod common;

use std::time::Duration;

use common::*;
use shuangkou::service::pb::game_engine_client::GameEngineClient;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

/// Games created together, all left to time out (enough that their deadlines come due in the
/// same ticks of the schedule).
const GAMES: usize = 400;

#[test]
fn many_games_timing_out_together_are_all_played_and_the_server_keeps_answering() {
    // The server's runtime: one worker, as on a loaded machine.
    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("server runtime");
    let server = server_rt.block_on(TestServer::start(|c| {
        c.no_turn_timers = false;
        keyed(c);
    }));
    let addr = server.addr;
    let client_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("client runtime");
    client_rt.block_on(async move {
        let mut c = GameEngineClient::new(channel(addr).await);
        let mut ids = Vec::with_capacity(GAMES);
        for i in 0..GAMES {
            let mut req = create_req("baibian", 1, Some(1000 + i as u64));
            req.options.insert("turn_seconds".into(), "5".into());
            let g = within(
                Duration::from_secs(30),
                "CreateGame",
                create(&mut c, ADMIN_KEY, req),
            )
            .await;
            ids.push(g.game_id);
        }
        // Nobody plays. Each game's first deadline is 5 s after its creation: within 60 s every
        // game has an automatic play, and the server answers Health/Check all along.
        let mut health = HealthClient::new(channel(addr).await);
        for id in &ids {
            poll_until(
                Duration::from_secs(90),
                Duration::from_millis(500),
                &format!("an automatic play in game {id} (and Health/Check answering)"),
                async || {
                    let check = health.check(HealthCheckRequest {
                        service: String::new(),
                    });
                    tokio::time::timeout(Duration::from_secs(10), check)
                        .await
                        .expect("Health/Check answers within 10 s while games time out")
                        .expect("Health/Check");
                    Some(state(&mut c, id, ADMIN_KEY).await).filter(|s| s.seq > 0)
                },
            )
            .await;
        }
    });
    drop(server);
    // A hung server runtime must not hang the test's end.
    server_rt.shutdown_background();
}
