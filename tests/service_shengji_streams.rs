//! 升級's WatchGame streams are registered with presence as Shuangkou's are: the streams one
//! seat token holds at once are bounded (RESOURCE_EXHAUSTED/LIMIT_EXCEEDED in domain
//! `shengji.v1`), each token has its own bound, and a closed stream frees its place.

pub mod common;

use std::time::Duration;

use common::shengji::create_shengji;
use common::{ADMIN_KEY, TestServer, authed, channel, poll_until, test_seed};
use shuangkou::service::pb::shengji as pb;
use shuangkou::service::pb::shengji::shengji_engine_client::ShengjiEngineClient;
use tonic::{Code, Status};
use tonic_types::StatusExt;

/// Opens a WatchGame stream of `game_id` with `token` (from the creation on).
async fn watch(
    addr: std::net::SocketAddr,
    game_id: &str,
    token: &str,
) -> Result<tonic::Streaming<pb::GameEvent>, Status> {
    let mut c = ShengjiEngineClient::new(channel(addr).await);
    let req = pb::WatchGameRequest {
        game_id: game_id.to_string(),
        ..Default::default()
    };
    c.watch_game(authed(req, token))
        .await
        .map(|r| r.into_inner())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shengji_streams_per_token_are_bounded() {
    let server = TestServer::start(|c| {
        c.admin_key = Some(ADMIN_KEY.into());
        c.max_watch_streams_per_token = 2;
    })
    .await;
    let mut c = ShengjiEngineClient::new(channel(server.addr).await);
    let g = create_shengji(&mut c, test_seed(2001), &[]).await;
    let (addr, id, seat0) = (server.addr, g.game_id.clone(), g.seat_tokens[0].clone());
    let a = watch(addr, &id, &seat0).await.expect("first");
    let _b = watch(addr, &id, &seat0).await.expect("second");
    let e = watch(addr, &id, &seat0)
        .await
        .expect_err("a third is over the bound");
    let info = e.get_details_error_info().expect("ErrorInfo detail");
    assert_eq!(
        (e.code(), info.domain.as_str(), info.reason.as_str()),
        (Code::ResourceExhausted, "shengji.v1", "LIMIT_EXCEEDED")
    );
    // Another token has its own bound.
    let _other = watch(addr, &id, &g.seat_tokens[1])
        .await
        .expect("another token");
    // A closed stream frees its place (the server notices the close shortly).
    drop(a);
    poll_until(
        Duration::from_secs(10),
        Duration::from_millis(50),
        "a place after a close",
        async || watch(addr, &id, &seat0).await.ok(),
    )
    .await;
}
