//! Every rejection reason of the service (`status::Reason`, the proto's `ErrorReason`), driven
//! over gRPC on a real socket, each with its gRPC code. `drive` is a `match` without a wildcard:
//! a new reason does not compile until it has a scenario here, and the test walks every value of
//! the proto's enum, so a reason the proto gains without a `Reason` (or the reverse) fails.
//!
//! Most scenarios use the shared keyed server; SCRIPT_FAILED (a script that fails under an
//! option the activation checks never try), STORE_FAILED (a Redis store nobody listens for),
//! LIMIT_EXCEEDED (at most one game) and UNAVAILABLE_SERVER (a draining server) start their own.

pub mod common;

use std::time::Duration;

use common::*;
use shuangkou::service::pb;
use shuangkou::service::status::Reason;
use tonic::{Code, Status};

/// Every reason, in the enum's order.
const ALL: [Reason; 26] = [
    Reason::BadCardId,
    Reason::DuplicateCard,
    Reason::NotACombination,
    Reason::AmbiguousPlay,
    Reason::DeclaredMismatch,
    Reason::UnknownVariant,
    Reason::BadOption,
    Reason::BadRequest,
    Reason::NotYourTurn,
    Reason::CardsNotHeld,
    Reason::DoesNotBeat,
    Reason::MustLead,
    Reason::GameOver,
    Reason::GameInProgress,
    Reason::StaleSeq,
    Reason::NoSuchGame,
    Reason::Unauthenticated,
    Reason::PermissionDenied,
    Reason::LimitExceeded,
    Reason::ScriptFailed,
    Reason::StoreFailed,
    Reason::Unavailable,
    Reason::IdempotencyConflict,
    Reason::InvalidToken,
    Reason::TokenKeyChanged,
    Reason::CursorOutOfRange,
];

/// A seeded classic game on the shared server, the state and the player to act.
async fn game(c: &mut Client, seed: u64) -> (pb::CreateGameResponse, pb::GetStateResponse, u32) {
    let g = create(c, ADMIN_KEY, create_req("classic", 1, Some(seed))).await;
    let st = state(c, &g.game_id, ADMIN_KEY).await;
    let p = turn_player(&st);
    (g, st, p)
}

async fn submit(
    c: &mut Client,
    token: &str,
    req: pb::SubmitPlayRequest,
) -> Result<tonic::Response<pb::SubmitPlayResponse>, Status> {
    c.submit_play(authed(req, token)).await
}

/// The rank index of a card id (0..=12 suited, 52/53 jokers), as the proto numbers cards.
fn rank_of(id: u32) -> u32 {
    let r = id % 54;
    if r >= 52 { r } else { r % 13 }
}

/// A qianbian game where player 0 holds 3♠ 4♠ 5♠ SJ BJ BJ and leads: the play is a straight
/// 3–8 or the pair chain 33 44 55 (docs/rules/RULES.md §3.2 rule 5).
async fn ambiguous_game(c: &mut Client) -> (pb::CreateGameResponse, Vec<u32>) {
    let held = vec![0, 1, 2, 52, 53, 107];
    (preset_game(c, "qianbian", &held).await, held)
}

/// The classic script with an extra option under which its seating hook throws. The activation
/// checks run the defaults and the examples' options only, so the script loads; a game created
/// with the option fails in the hook.
fn exploding_classic() -> String {
    let src = shuangkou::variants::EMBEDDED
        .iter()
        .find(|(id, _)| *id == "classic")
        .expect("classic is embedded")
        .1;
    let with_option = src.replacen(
        "fn options() {\n    #{",
        "fn options() {\n    #{\n        explode_seating: #{ type: \"bool\", \"default\": false, doc: \"test only: seating throws\" },",
        1,
    );
    assert_ne!(with_option, src, "options() of classic.rhai changed shape");
    let renamed = with_option.replacen("fn seating(", "fn seating_original(", 1);
    format!(
        "{renamed}\nfn seating(facts, opts) {{\n    if opts.explode_seating {{ throw \"seating exploded (test)\"; }}\n    seating_original(facts, opts)\n}}\n"
    )
}

/// Bytes of one complete RESP command (an array of bulk strings) at the start of `buf`.
fn resp_command_len(buf: &[u8]) -> Option<usize> {
    fn line(buf: &[u8], at: usize) -> Option<(i64, usize)> {
        let end = at + buf.get(at..)?.windows(2).position(|w| w == b"\r\n")?;
        let n = std::str::from_utf8(buf.get(at + 1..end)?)
            .ok()?
            .parse()
            .ok()?;
        Some((n, end + 2))
    }
    let (items, mut at) = line(buf, 0)?;
    for _ in 0..items {
        let (len, next) = line(buf, at)?;
        at = next + usize::try_from(len).ok()? + 2;
        if at > buf.len() {
            return None;
        }
    }
    Some(at)
}

/// A TCP server speaking just enough RESP to be a broken Redis: every command is answered with
/// an empty array (`*0`). Serves until the test process exits.
async fn empty_array_redis() -> std::net::SocketAddr {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                while let Ok(n) = sock.read(&mut chunk).await {
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    while let Some(len) = resp_command_len(&buf) {
                        buf.drain(..len);
                        if sock.write_all(b"*0\r\n").await.is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    addr
}

/// The gRPC code each reason documents in the proto (the comment above the `ErrorReason` value
/// starts with it): the contract, read from proto/, not from `Reason::code`.
fn documented_code(name: &str) -> Code {
    const PROTO: &str = include_str!("../proto/shuangkou/v1/shuangkou.proto");
    let block = PROTO
        .split("enum ErrorReason {")
        .nth(1)
        .and_then(|b| b.split('}').next())
        .expect("enum ErrorReason in the proto");
    let mut comment = None;
    for line in block.lines().map(str::trim) {
        let is_code = |k: &str| k.chars().all(|ch| ch.is_ascii_uppercase() || ch == '_');
        if let Some(c) = line.strip_prefix("// ") {
            // A comment's first line names the code; its continuation lines do not.
            if let Some((code, _)) = c.split_once(':').filter(|(k, _)| is_code(k)) {
                comment = Some(code);
            }
        } else if line.starts_with(&format!("{name} =")) {
            let code = comment.unwrap_or_else(|| panic!("{name} has no documented code"));
            return match code {
                "INVALID_ARGUMENT" => Code::InvalidArgument,
                "FAILED_PRECONDITION" => Code::FailedPrecondition,
                "ABORTED" => Code::Aborted,
                "NOT_FOUND" => Code::NotFound,
                "ALREADY_EXISTS" => Code::AlreadyExists,
                "UNAUTHENTICATED" => Code::Unauthenticated,
                "PERMISSION_DENIED" => Code::PermissionDenied,
                "RESOURCE_EXHAUSTED" => Code::ResourceExhausted,
                "INTERNAL" => Code::Internal,
                "UNAVAILABLE" => Code::Unavailable,
                "OUT_OF_RANGE" => Code::OutOfRange,
                other => panic!("{name}: unknown code {other} in the proto"),
            };
        } else if line.contains(" = ") {
            comment = None;
        }
    }
    panic!("{name} is not in the proto's ErrorReason");
}

/// Any answer as the one type the reasons are compared in (only the status matters).
fn erased<T>(_: tonic::Response<T>) -> tonic::Response<pb::SubmitPlayResponse> {
    tonic::Response::new(pb::SubmitPlayResponse::default())
}

/// GetState of a new game (from `seed`) with `token`, erased.
async fn state_with(
    c: &mut Client,
    seed: u64,
    token: &str,
) -> Result<tonic::Response<pb::SubmitPlayResponse>, Status> {
    let (g, _, _) = game(c, seed).await;
    c.get_state(authed(state_req(&g.game_id), token))
        .await
        .map(erased)
}

/// Makes the service answer with `reason`, and checks the answer's code (as the proto
/// documents it) and reason.
async fn drive(reason: Reason) {
    let name = reason.name();
    let code = documented_code(name);
    let mut c = shared_client().await;
    let got = match reason {
        Reason::BadCardId => {
            let (g, _, p) = game(&mut c, 901).await;
            submit(
                &mut c,
                &g.seat_tokens[p as usize],
                cards_req(&g, p, vec![108]),
            )
            .await
        }
        Reason::DuplicateCard => {
            let (g, _, p) = game(&mut c, 902).await;
            let t = &g.seat_tokens[p as usize];
            let own = state(&mut c, &g.game_id, t).await.hand;
            submit(&mut c, t, cards_req(&g, p, vec![own[0], own[0]])).await
        }
        Reason::NotACombination => {
            let (g, _, p) = game(&mut c, 903).await;
            let t = &g.seat_tokens[p as usize];
            let own = state(&mut c, &g.game_id, t).await.hand;
            let a = *own.iter().find(|&&id| rank_of(id) < 12).expect("a card");
            let b = *own
                .iter()
                .find(|&&id| rank_of(id) < 12 && rank_of(id).abs_diff(rank_of(a)) >= 2)
                .expect("a card two ranks away");
            submit(&mut c, t, cards_req(&g, p, vec![a, b])).await
        }
        Reason::AmbiguousPlay => {
            let (g, held) = ambiguous_game(&mut c).await;
            submit(&mut c, &g.seat_tokens[0], cards_req(&g, 0, held)).await
        }
        Reason::DeclaredMismatch => {
            let (g, held) = ambiguous_game(&mut c).await;
            let mut req = cards_req(&g, 0, held);
            req.declared = Some(pb::Declared {
                r#type: pb::HandType::TypeTripleChain as i32,
                key: String::new(),
            });
            submit(&mut c, &g.seat_tokens[0], req).await
        }
        Reason::UnknownVariant => c
            .create_game(authed(create_req("no_such_variant", 1, None), ADMIN_KEY))
            .await
            .map(erased),
        Reason::BadOption => {
            let mut req = create_req("classic", 1, None);
            req.options.insert("no_such_option".into(), "1".into());
            c.create_game(authed(req, ADMIN_KEY)).await.map(erased)
        }
        Reason::BadRequest => {
            // A pass that also carries cards.
            let (g, st, p) = game(&mut c, 904).await;
            let t = &g.seat_tokens[p as usize];
            let own = state(&mut c, &g.game_id, t).await.hand;
            let mut req = pass_req(&g.game_id, p, st.seq);
            req.cards = vec![own[0]];
            submit(&mut c, t, req).await
        }
        Reason::NotYourTurn => {
            let (g, _, p) = game(&mut c, 905).await;
            let o = (p + 1) % 4;
            let t = &g.seat_tokens[o as usize];
            let own = state(&mut c, &g.game_id, t).await.hand;
            submit(&mut c, t, cards_req(&g, o, vec![own[0]])).await
        }
        Reason::CardsNotHeld => {
            let (g, _, p) = game(&mut c, 906).await;
            let other = state(&mut c, &g.game_id, &g.seat_tokens[((p + 1) % 4) as usize])
                .await
                .hand;
            submit(
                &mut c,
                &g.seat_tokens[p as usize],
                cards_req(&g, p, vec![other[0]]),
            )
            .await
        }
        Reason::DoesNotBeat => {
            // The leader leads a pair; the next player follows with a single suited card.
            let (g, st, p) = game(&mut c, 907).await;
            let t = &g.seat_tokens[p as usize];
            let pair = hints(&mut c, &g.game_id, t)
                .await
                .plays
                .into_iter()
                .find(|pl| pl.type_name == "pair")
                .expect("a pair to lead");
            submit(&mut c, t, play_req(&g.game_id, p, &pair, st.seq))
                .await
                .expect("lead a pair");
            let n = turn_player(&state(&mut c, &g.game_id, ADMIN_KEY).await);
            let tn = &g.seat_tokens[n as usize];
            let own = state(&mut c, &g.game_id, tn).await.hand;
            submit(&mut c, tn, cards_req(&g, n, vec![own[0]])).await
        }
        Reason::MustLead => {
            let (g, st, p) = game(&mut c, 908).await;
            let t = &g.seat_tokens[p as usize];
            submit(&mut c, t, pass_req(&g.game_id, p, st.seq)).await
        }
        Reason::GameOver => {
            let (g, _, p) = game(&mut c, 909).await;
            let leaver = (p + 1) % 4;
            leave(&mut c, &g.game_id, &g.seat_tokens[leaver as usize])
                .await
                .expect("LeaveGame");
            let t = &g.seat_tokens[p as usize];
            let own = state(&mut c, &g.game_id, t).await.hand;
            submit(&mut c, t, cards_req(&g, p, vec![own[0]])).await
        }
        Reason::GameInProgress => {
            let (g, _, _) = game(&mut c, 910).await;
            c.get_replay(authed(replay_req(&g.game_id), &g.seat_tokens[0]))
                .await
                .map(erased)
        }
        Reason::StaleSeq => {
            let (g, st, p) = game(&mut c, 911).await;
            let t = &g.seat_tokens[p as usize];
            let h = hints(&mut c, &g.game_id, t).await;
            submit(&mut c, t, play_req(&g.game_id, p, &h.plays[0], st.seq + 7)).await
        }
        Reason::NoSuchGame => {
            let req = state_req("0123456789abcdef01234567");
            c.get_state(authed(req, ADMIN_KEY)).await.map(erased)
        }
        Reason::Unauthenticated => {
            // No credential at all.
            state_with(&mut c, 912, "").await
        }
        Reason::InvalidToken => {
            // A credential that is neither a key nor a game token.
            state_with(&mut c, 914, "not-a-token").await
        }
        Reason::IdempotencyConflict => {
            // A pass under the key of the player's lead.
            let (g, st, p) = game(&mut c, 915).await;
            let t = &g.seat_tokens[p as usize];
            let h = hints(&mut c, &g.game_id, t).await;
            let mut lead = play_req(&g.game_id, p, &h.plays[0], st.seq);
            lead.request_id = "lead-1".into();
            submit(&mut c, t, lead).await.expect("the lead");
            let mut pass = pass_req(&g.game_id, p, 0);
            pass.request_id = "lead-1".into();
            submit(&mut c, t, pass).await
        }
        Reason::TokenKeyChanged => {
            // An idempotent CreateGame retried after a restart with another token key.
            let dir = temp_dir("shuangkou-reasons-token-key");
            let store = dir.to_string_lossy().into_owned();
            let keyed = |key: &'static str| {
                let store = store.clone();
                move |c: &mut shuangkou::config::ServeConfig| {
                    c.store = store;
                    c.token_key = Some(key.repeat(64));
                }
            };
            let mut req = create_req("classic", 1, Some(916));
            req.request_id = "create-916".into();
            let mut first = TestServer::start(keyed("a")).await;
            create(&mut first.client().await, "", req.clone()).await;
            first.begin_shutdown();
            first.stopped().await.expect("the first server stops");
            first.app.take();
            drop(first);
            // The first server's store closes when its last task lets go: retry the opening.
            let second = within(
                Duration::from_secs(60),
                "the second server to start",
                async {
                    loop {
                        match TestServer::try_start(config(keyed("b"))).await {
                            Ok(s) => return s,
                            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
                        }
                    }
                },
            )
            .await;
            let r = second
                .client()
                .await
                .create_game(authed(req, ""))
                .await
                .map(erased);
            let _ = std::fs::remove_dir_all(&dir);
            r
        }
        Reason::PermissionDenied => {
            // A seat token acting for another seat.
            let (g, st, p) = game(&mut c, 913).await;
            let other = &g.seat_tokens[(p as usize + 1) % 4];
            submit(&mut c, other, pass_req(&g.game_id, p, st.seq)).await
        }
        Reason::LimitExceeded => {
            let server = TestServer::start(|c| c.max_games = 1).await;
            let mut c = server.client().await;
            create(&mut c, "", create_req("classic", 1, None)).await;
            c.create_game(authed(create_req("classic", 1, None), ""))
                .await
                .map(erased)
        }
        Reason::ScriptFailed => {
            let dir = temp_dir("shuangkou-reasons-script");
            std::fs::write(dir.join("classic.rhai"), exploding_classic()).expect("write script");
            let vdir = dir.clone();
            let server = TestServer::start(move |c| c.variants_dir = Some(vdir)).await;
            let mut c = server.client().await;
            // The defaults work; the option makes the seating hook throw at creation.
            create(&mut c, "", create_req("classic", 1, None)).await;
            let mut req = create_req("classic", 1, None);
            req.options.insert("explode_seating".into(), "true".into());
            let r = c.create_game(authed(req, "")).await.map(erased);
            let _ = std::fs::remove_dir_all(&dir);
            r
        }
        Reason::StoreFailed => {
            // A "Redis" that answers every command with an empty array: the server starts (no
            // unfinished games), and the first write gets a reply of the wrong shape.
            let addr = empty_array_redis().await;
            let server = TestServer::start(move |c| c.store = format!("redis://{addr}/0")).await;
            let mut c = server.client().await;
            within(
                Duration::from_secs(120),
                "CreateGame on a broken store",
                c.create_game(authed(create_req("classic", 1, None), "")),
            )
            .await
            .map(erased)
        }
        Reason::Unavailable => {
            let mut server = TestServer::start(|c| c.drain_delay_seconds = 30).await;
            let mut c = server.client().await;
            server.begin_shutdown();
            c.create_game(authed(create_req("classic", 1, None), ""))
                .await
                .map(erased)
        }
        Reason::CursorOutOfRange => {
            // WatchGame from a seq the game has not reached.
            let (g, st, _) = game(&mut c, 923).await;
            let req = watch_req(&g.game_id, st.seq + 5);
            c.watch_game(authed(req, &g.spectator_token))
                .await
                .map(erased)
        }
    };
    expect_reject(got, code, name);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_reason_is_driven_over_grpc_with_its_code() {
    // The proto's ErrorReason and `Reason` list the same names.
    let proto: Vec<&str> = (1..128)
        .filter_map(|i| pb::ErrorReason::try_from(i).ok())
        .map(|r| r.as_str_name())
        .collect();
    let ours: Vec<&str> = ALL.iter().map(|r| r.name()).collect();
    assert_eq!(
        {
            let mut p = proto.clone();
            p.sort_unstable();
            p
        },
        {
            let mut o = ours.clone();
            o.sort_unstable();
            o
        },
        "the proto's ErrorReason and status::Reason differ"
    );
    for r in ALL {
        eprintln!("driving {}", r.name());
        within(Duration::from_secs(180), r.name(), drive(r)).await;
    }
}

/// The gRPC message-size limit: a request over `max_message_bytes` is refused before it is
/// decoded, and the game does not change; the same request, small, reaches the service.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_over_the_message_size_limit_is_refused() {
    let server = TestServer::start(|c| c.max_message_bytes = 4096).await;
    let mut c = server.client().await;
    let g = create(&mut c, "", create_req("classic", 1, None)).await;
    let st = state(&mut c, &g.game_id, &g.seat_tokens[0]).await;
    let p = turn_player(&st);
    let t = &g.seat_tokens[p as usize];
    let mut req = pass_req(&g.game_id, p, st.seq);
    req.request_id = "x".repeat(8192);
    let s = submit(&mut c, t, req.clone())
        .await
        .expect_err("an 8 KiB request over a 4 KiB limit");
    assert!(
        s.message().contains("message size limit"),
        "refused for its size: {s:?}"
    );
    assert_eq!(state(&mut c, &g.game_id, t).await.seq, st.seq);
    // Small, it is judged on its content: the leader may not pass.
    req.request_id = "small".into();
    expect_reject(
        submit(&mut c, t, req).await,
        Code::FailedPrecondition,
        "MUST_LEAD",
    );
}

/// API.md's error table puts "message size" under RESOURCE_EXHAUSTED / LIMIT_EXCEEDED: an
/// oversized request is refused so, before it is decoded (`rpc::limit`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_request_is_limit_exceeded_as_api_md_says() {
    let server = TestServer::start(|c| c.max_message_bytes = 4096).await;
    let mut c = server.client().await;
    let g = create(&mut c, "", create_req("classic", 1, None)).await;
    let req = pb::SubmitPlayRequest {
        game_id: g.game_id.clone(),
        request_id: "x".repeat(8192),
        ..Default::default()
    };
    let s = expect_reject(
        submit(&mut c, &g.seat_tokens[0], req).await,
        Code::ResourceExhausted,
        "LIMIT_EXCEEDED",
    );
    assert!(s.message().contains("message size limit"), "{s:?}");
}
