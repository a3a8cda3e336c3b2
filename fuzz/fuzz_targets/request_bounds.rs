//! Fuzz target: every request message of both game services and the variant admin service,
//! decoded from arbitrary bytes, through the checks that run before any handler
//! (`wire::bounds::Bounded`, the size bound of every field) and the pure wire conversions of the
//! requests that have one (`wire::action`, `wire::request::hint_query`, `wire::parse_cursor`,
//! `wire::replay::page_start`, `wire::shengji::new_game`, `wire::shengji::command`).
//!
//! Byte 0 picks the message (18 of them); the rest is decoded as that protobuf message (bytes
//! that do not decode are what tonic refuses before any handler runs, so they are skipped).
//! Checked: nothing panics; every refusal has a reason a malformed request may have (never a
//! store, script or availability cause); and every refusal, as the status the client receives
//! (`Status::from`, both domains), keeps its trailers under 1 KB: `grpc-message`
//! percent-encoded, `grpc-status-details-bin` base64, whatever the request held.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prost::Message;
use shuangkou::service::pb;
use shuangkou::service::pb::shengji as sj;
use shuangkou::service::status::{ApiError, Reason, status_in};
use shuangkou::service::wire;
use shuangkou::service::wire::bounds::Bounded;

/// The reasons a malformed request may be refused with before it reaches a game.
const REQUEST_REASONS: [Reason; 7] = [
    Reason::BadRequest,
    Reason::BadCardId,
    Reason::DuplicateCard,
    Reason::BadOption,
    Reason::UnknownVariant,
    Reason::NoSuchGame,
    Reason::DeclaredMismatch,
];

/// A rejection's trailers in bytes, as a server sends them.
fn trailer_bytes(e: &ApiError) -> usize {
    [
        tonic::Status::from(e.clone()),
        status_in(e, "shengji.v1", e.reason.name()),
    ]
    .iter()
    .map(|s| {
        let message: usize = s
            .message()
            .bytes()
            .map(|b| if (0x20..=0x7e).contains(&b) && b != b'%' { 1 } else { 3 })
            .sum();
        "grpc-status: 3".len() + "grpc-message".len() + message
            + "grpc-status-details-bin".len()
            + s.details().len().div_ceil(3) * 4
    })
    .max()
    .unwrap_or(0)
}

fn judged<T>(what: &str, r: Result<T, ApiError>) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            assert!(
                REQUEST_REASONS.contains(&e.reason),
                "{what} refused with {:?}: {}",
                e.reason,
                e.message
            );
            let size = trailer_bytes(&e);
            assert!(size < 1024, "{what}: trailers of {size} bytes: {e}");
            None
        }
    }
}

/// Decodes `bytes` as `M` and checks its bounds; the message when they hold.
fn bounded<M: Message + Default + Bounded>(what: &str, bytes: &[u8]) -> Option<M> {
    let req = M::decode(bytes).ok()?;
    judged(what, req.bounds()).map(|()| req)
}

fuzz_target!(|data: &[u8]| {
    let [kind, rest @ ..] = data else {
        return;
    };
    match kind % 18 {
        0 => {
            if let Some(r) = bounded::<pb::SubmitPlayRequest>("SubmitPlay", rest) {
                judged("SubmitPlay action", wire::action(&r));
            }
        }
        1 => {
            if let Some(r) = bounded::<pb::CreateGameRequest>("CreateGame", rest) {
                let _ = wire::new_game(r);
            }
        }
        2 => {
            bounded::<pb::GetStateRequest>("GetState", rest);
        }
        3 => {
            if let Some(r) = bounded::<pb::WatchGameRequest>("WatchGame", rest) {
                let _ = wire::parse_cursor(&r.cursor);
            }
        }
        4 => {
            if let Some(r) = bounded::<pb::GetHintsRequest>("GetHints", rest) {
                judged("GetHints query", wire::request::hint_query(&r));
            }
        }
        5 => {
            bounded::<pb::LeaveGameRequest>("LeaveGame", rest);
        }
        6 => {
            if let Some(r) = bounded::<pb::GetReplayRequest>("GetReplay", rest) {
                let page = wire::replay::page_start(&r.page_token, 1000);
                judged(
                    "GetReplay page token",
                    page.map_err(|e| ApiError::new(Reason::BadRequest, e)),
                );
            }
        }
        7 => {
            bounded::<pb::ListGamesRequest>("ListGames", rest);
        }
        8 => {
            bounded::<pb::AbortGameRequest>("AbortGame", rest);
        }
        9 => {
            bounded::<pb::ListVariantsRequest>("ListVariants", rest);
        }
        10 => {
            bounded::<pb::ValidateVariantRequest>("ValidateVariant", rest);
        }
        11 => {
            bounded::<pb::ReloadVariantsRequest>("ReloadVariants", rest);
        }
        12 => {
            if let Some(r) = bounded::<sj::CreateGameRequest>("升級 CreateGame", rest) {
                judged("升級 CreateGame", wire::shengji::new_game(r));
            }
        }
        13 => {
            if let Some(r) = bounded::<sj::SubmitActionRequest>("升級 SubmitAction", rest) {
                judged("升級 SubmitAction", wire::shengji::command(&r));
            }
        }
        14 => {
            bounded::<sj::GetStateRequest>("升級 GetState", rest);
        }
        15 => {
            bounded::<sj::WatchGameRequest>("升級 WatchGame", rest);
        }
        16 => {
            bounded::<sj::GetHintsRequest>("升級 GetHints", rest);
        }
        _ => {
            bounded::<sj::LeaveGameRequest>("升級 LeaveGame", rest);
            bounded::<sj::GetReplayRequest>("升級 GetReplay", rest);
        }
    }
});
