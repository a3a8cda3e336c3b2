//! Requests of the shuangkou.v1 service shared by the in-process tests (`common`) and the
//! binary-level ones (`durability_support` and `deploy_support` include this file by path): the
//! bearer token, one builder per request of one game with every other field at its default (a
//! test that needs another field sets it with struct update syntax,
//! `pb::GetReplayRequest { page_token, ..replay_req(id) }`), and the `GetReplay` call.

use shuangkou::service::pb;
use shuangkou::service::pb::game_engine_client::GameEngineClient;
use tonic::Request;
use tonic::transport::Channel;

/// A request with `authorization: Bearer <token>` (no header for an empty token).
pub fn authed<T>(message: T, token: &str) -> Request<T> {
    let mut r = Request::new(message);
    if !token.is_empty() {
        r.metadata_mut().insert(
            "authorization",
            format!("Bearer {token}").parse().expect("ascii token"),
        );
    }
    r
}

/// `GetState` of `game_id` (all results, no paging).
pub fn state_req(game_id: &str) -> pb::GetStateRequest {
    pb::GetStateRequest {
        game_id: game_id.into(),
        ..Default::default()
    }
}

/// `GetHints` of `game_id` (the first page).
pub fn hints_req(game_id: &str) -> pb::GetHintsRequest {
    pb::GetHintsRequest {
        game_id: game_id.into(),
        ..Default::default()
    }
}

/// `LeaveGame` of `game_id` (no request id).
pub fn leave_req(game_id: &str) -> pb::LeaveGameRequest {
    pb::LeaveGameRequest {
        game_id: game_id.into(),
        ..Default::default()
    }
}

/// `WatchGame` of `game_id` from `from_seq` (no cursor).
pub fn watch_req(game_id: &str, from_seq: u64) -> pb::WatchGameRequest {
    pb::WatchGameRequest {
        game_id: game_id.into(),
        from_seq,
        cursor: String::new(),
    }
}

/// `GetReplay` of `game_id` (the first page, the server's page size).
pub fn replay_req(game_id: &str) -> pb::GetReplayRequest {
    pb::GetReplayRequest {
        game_id: game_id.into(),
        ..Default::default()
    }
}

/// `GetReplay` of `game_id` with `token` (the first page); panics naming the game on a
/// rejection.
pub async fn get_replay(
    client: &mut GameEngineClient<Channel>,
    game_id: &str,
    token: &str,
) -> pb::GetReplayResponse {
    client
        .get_replay(authed(replay_req(game_id), token))
        .await
        .unwrap_or_else(|s| panic!("GetReplay {game_id}: {s:?}"))
        .into_inner()
}
