//! The binary's defaults are durable: `shuangkou serve` with no `--store` keeps its games in the
//! embedded store (`./shuangkou-data`), so a game created before a restart — even a SIGKILL — is
//! there after it, at the same seq, and play goes on.

pub mod deploy_support;

use std::time::Duration;

use deploy_support::{Server, create_game, state_req, temp_dir};
use shuangkou::service::pb;
use shuangkou::service::pb::game_engine_client::GameEngineClient;

fn authed<T>(token: &str, msg: T) -> tonic::Request<T> {
    deploy_support::authed(token, msg)
}

async fn state(
    game: &mut GameEngineClient<tonic::transport::Channel>,
    id: &str,
    token: &str,
) -> pb::GetStateResponse {
    game.get_state(authed(token, state_req(id)))
        .await
        .expect("GetState (the game survives a restart)")
        .into_inner()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_store_is_embedded_and_survives_a_kill() {
    let cwd = temp_dir("defaults");
    let mut server = Server::start_with_defaults(&cwd, &[]);
    let ch = server.ready(Duration::from_secs(60)).await;
    let mut game = GameEngineClient::new(ch);
    let created = create_game(&mut game, "classic", 4).await;
    let mut before = Vec::new();
    for token in &created.seat_tokens {
        before.push(state(&mut game, &created.game_id, token).await);
    }
    assert!(
        cwd.join("shuangkou-data").join("shuangkou.log").is_file(),
        "no store file in {}:\n{}",
        cwd.display(),
        server.log()
    );

    // SIGKILL: no drain, no flush. The acknowledged create must be in the file.
    drop(server);
    let mut server = Server::start_with_defaults(&cwd, &[]);
    let ch = server.ready(Duration::from_secs(60)).await;
    let mut game = GameEngineClient::new(ch);
    for (seat, token) in created.seat_tokens.iter().enumerate() {
        let after = state(&mut game, &created.game_id, token).await;
        assert_eq!(after.seq, before[seat].seq, "seat {seat}: seq");
        assert_eq!(after.turn_seat, before[seat].turn_seat, "seat {seat}: turn");
        assert_eq!(after.hand, before[seat].hand, "seat {seat}: hand");
        assert!(!after.hand.is_empty());
    }
    assert!(
        server.log().contains("recovered"),
        "the restart recovered the unfinished game:\n{}",
        server.log()
    );
    server.stop().await;
    let _ = std::fs::remove_dir_all(&cwd);
}
