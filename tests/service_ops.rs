//! Transport and operations over a real socket: gRPC-Web over HTTP/1.1 on the gRPC port,
//! server reflection v1 and v1alpha, health, and a graceful shutdown during play that loses no
//! acknowledged play (checked by reopening the embedded store).

pub mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use prost::Message;
use shuangkou::service::pb;
use shuangkou::service::pb::game_engine_client::GameEngineClient;
use shuangkou::service::status::reason_of;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tonic::Code;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

/// Decodes an HTTP/1.1 chunked body.
fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = body
            .windows(2)
            .position(|w| w == b"\r\n")
            .expect("chunk size line");
        let size_text = std::str::from_utf8(&body[..line_end]).expect("ascii chunk size");
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .expect("hex chunk size");
        body = &body[line_end + 2..];
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&body[..size]);
        body = &body[size + 2..];
    }
}

/// One unary call through the gRPC-Web protocol, written by hand: an HTTP/1.1 POST with
/// `application/grpc-web+proto` and a length-prefixed message; returns the response headers,
/// the data frames' messages and the trailers frame.
async fn grpc_web_call(
    addr: std::net::SocketAddr,
    path: &str,
    message: &[u8],
    token: &str,
) -> (String, Vec<Vec<u8>>, String) {
    let mut framed = vec![0u8];
    framed.extend_from_slice(&(message.len() as u32).to_be_bytes());
    framed.extend_from_slice(message);
    let auth = if token.is_empty() {
        String::new()
    } else {
        format!("authorization: Bearer {token}\r\n")
    };
    let head = format!(
        "POST {path} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/grpc-web+proto\r\n\
         accept: application/grpc-web+proto\r\nx-grpc-web: 1\r\n{auth}content-length: {}\r\n\
         connection: close\r\n\r\n",
        framed.len()
    );
    let mut tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
    tcp.write_all(head.as_bytes()).await.expect("write head");
    tcp.write_all(&framed).await.expect("write body");
    let mut raw = Vec::new();
    within(
        Duration::from_secs(120),
        "the gRPC-Web response",
        tcp.read_to_end(&mut raw),
    )
    .await
    .expect("read");
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("end of headers");
    let headers = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
    assert!(headers.starts_with("http/1.1 200"), "{headers}");
    assert!(
        headers.contains("content-type: application/grpc-web+proto"),
        "{headers}"
    );
    let mut body = raw[split + 4..].to_vec();
    if headers.contains("transfer-encoding: chunked") {
        body = dechunk(&body);
    }
    let (mut messages, mut trailers) = (Vec::new(), String::new());
    let mut rest = body.as_slice();
    while rest.len() >= 5 {
        let flag = rest[0];
        let len = u32::from_be_bytes([rest[1], rest[2], rest[3], rest[4]]) as usize;
        let frame = &rest[5..5 + len];
        if flag & 0x80 != 0 {
            trailers.push_str(&String::from_utf8_lossy(frame).to_ascii_lowercase());
        } else {
            messages.push(frame.to_vec());
        }
        rest = &rest[5 + len..];
    }
    assert!(rest.is_empty(), "a truncated frame");
    (headers, messages, trailers)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_web_over_http1_on_the_grpc_port() {
    let addr = tokio::task::spawn_blocking(shared).await.expect("shared");
    let (headers, messages, trailers) = grpc_web_call(
        addr,
        "/shuangkou.v1.GameEngine/ListVariants",
        &pb::ListVariantsRequest {}.encode_to_vec(),
        "",
    )
    .await;
    assert_eq!(messages.len(), 1, "{headers}\n{trailers}");
    let list = pb::ListVariantsResponse::decode(messages[0].as_slice()).expect("a response");
    let ids: Vec<&str> = list.variants.iter().map(|v| v.id.as_str()).collect();
    for v in VARIANTS {
        assert!(ids.contains(&v), "{v} in {ids:?}");
    }
    assert!(
        trailers.contains("grpc-status:0") || trailers.contains("grpc-status: 0"),
        "{trailers}"
    );

    // A rejection comes back in the trailers, with its reason.
    let (headers, messages, trailers) = grpc_web_call(
        addr,
        "/shuangkou.v1.GameEngine/GetState",
        &state_req("feedfeedfeedfeedfeedfeed").encode_to_vec(),
        "",
    )
    .await;
    assert!(messages.is_empty());
    let all = format!("{headers}\n{trailers}");
    // An unknown game is NOT_FOUND whatever the credential (none here).
    assert!(
        all.contains("grpc-status:5") || all.contains("grpc-status: 5"),
        "{all}"
    );
    assert!(all.contains("no_such_game"), "{all}");
}

/// A server stream through gRPC-Web: WatchGame opened over HTTP/1.1 before the match is played
/// delivers, as it is played, the same events (one data frame each) as a native gRPC stream of
/// the same viewer, then the trailers with grpc-status 0 when the match ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_web_streams_watch_game_live() {
    let seed = test_seed(4403);
    let (addr, mut c) = shared_addr_client().await;
    let g = create(&mut c, ADMIN_KEY, create_req("erren", 1, Some(seed))).await;
    let web = tokio::spawn({
        let request = watch_req(&g.game_id, 0).encode_to_vec();
        let token = g.spectator_token.clone();
        async move { grpc_web_call(addr, "/shuangkou.v1.GameEngine/WatchGame", &request, &token).await }
    });
    let policy = Policy {
        seed,
        pass_prob: 0.3,
        stop_at_seq: None,
    };
    let (_, spectator) = play_match(addr, &g, policy, Duration::from_secs(300))
        .await
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    let (headers, messages, trailers) =
        within(Duration::from_secs(120), "the gRPC-Web stream", web)
            .await
            .expect("task");
    let events: Vec<pb::GameEvent> = messages
        .iter()
        .map(|m| pb::GameEvent::decode(m.as_slice()).expect("a GameEvent"))
        .collect();
    assert!(
        events.len() > 10,
        "seed {seed}: {} events\n{headers}",
        events.len()
    );
    assert_eq!(
        events, spectator.events,
        "seed {seed}: gRPC-Web and gRPC streams differ"
    );
    assert!(
        trailers.contains("grpc-status:0") || trailers.contains("grpc-status: 0"),
        "{trailers}"
    );
}

/// The next message of a reflection stream (v1 or v1alpha), within 30 s.
async fn reflection_response<T>(stream: &mut tonic::Streaming<T>) -> T {
    within(
        Duration::from_secs(30),
        "a reflection response",
        stream.message(),
    )
    .await
    .expect("stream")
    .expect("a response")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflection_v1_and_v1alpha_list_the_services() {
    use tonic_reflection::pb::{v1, v1alpha};
    let addr = tokio::task::spawn_blocking(shared).await.expect("shared");
    let expected = [
        "shuangkou.v1.GameEngine",
        "shuangkou.v1.VariantAdmin",
        "grpc.health.v1.Health",
    ];

    let mut client = v1::server_reflection_client::ServerReflectionClient::new(channel(addr).await);
    let requests = vec![
        v1::ServerReflectionRequest {
            host: String::new(),
            message_request: Some(v1::server_reflection_request::MessageRequest::ListServices(
                String::new(),
            )),
        },
        v1::ServerReflectionRequest {
            host: String::new(),
            message_request: Some(
                v1::server_reflection_request::MessageRequest::FileContainingSymbol(
                    "shuangkou.v1.GameEngine".into(),
                ),
            ),
        },
    ];
    let mut stream = client
        .server_reflection_info(tokio_stream::iter(requests))
        .await
        .expect("reflection v1")
        .into_inner();
    let first = reflection_response(&mut stream).await;
    match first.message_response {
        Some(v1::server_reflection_response::MessageResponse::ListServicesResponse(l)) => {
            let names: Vec<&str> = l.service.iter().map(|s| s.name.as_str()).collect();
            for e in expected {
                assert!(names.contains(&e), "{e} in {names:?}");
            }
        }
        other => panic!("v1 list services: {other:?}"),
    }
    let second = reflection_response(&mut stream).await;
    match second.message_response {
        Some(v1::server_reflection_response::MessageResponse::FileDescriptorResponse(f)) => {
            let file = prost_types::FileDescriptorProto::decode(
                f.file_descriptor_proto.first().expect("a file").as_slice(),
            )
            .expect("a descriptor");
            assert_eq!(file.package(), "shuangkou.v1");
        }
        other => panic!("v1 file containing symbol: {other:?}"),
    }

    let mut client =
        v1alpha::server_reflection_client::ServerReflectionClient::new(channel(addr).await);
    let request = v1alpha::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(
            v1alpha::server_reflection_request::MessageRequest::ListServices(String::new()),
        ),
    };
    let mut stream = client
        .server_reflection_info(tokio_stream::iter(vec![request]))
        .await
        .expect("reflection v1alpha")
        .into_inner();
    match reflection_response(&mut stream).await.message_response {
        Some(v1alpha::server_reflection_response::MessageResponse::ListServicesResponse(l)) => {
            let names: Vec<&str> = l.service.iter().map(|s| s.name.as_str()).collect();
            for e in expected {
                assert!(names.contains(&e), "{e} in {names:?}");
            }
        }
        other => panic!("v1alpha list services: {other:?}"),
    }
}

async fn health(client: &mut HealthClient<tonic::transport::Channel>, service: &str) -> i32 {
    client
        .check(HealthCheckRequest {
            service: service.into(),
        })
        .await
        .expect("health check")
        .into_inner()
        .status
}

const SERVICES: [&str; 3] = ["", "shuangkou.v1.GameEngine", "shuangkou.v1.VariantAdmin"];

/// SIGTERM's path (the shutdown future) during play, on the embedded store: health turns
/// NOT_SERVING at once, calls in flight complete, new plays are refused with UNAVAILABLE, watch
/// streams end with UNAVAILABLE, and after the server stops, the reopened store holds every
/// acknowledged play — exactly those — and the game goes on to the end on a new server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_shutdown_during_play_loses_no_acknowledged_play() {
    let seed = test_seed(501);
    let dir = temp_dir("shuangkou-shutdown");
    let store = dir.to_string_lossy().to_string();
    let mut server = TestServer::start(|c| {
        c.store = store.clone();
        // The checks that need the listener open (health, reads, refusals) run within the drain
        // delay: 5 s leaves a loaded debug build room, where 1 s was a sub-second window.
        c.drain_delay_seconds = 5;
    })
    .await;
    let addr = server.addr;
    let mut c = server.client().await;
    let mut h = HealthClient::new(server.channel().await);
    for s in SERVICES {
        assert_eq!(
            health(&mut h, s).await,
            ServingStatus::Serving as i32,
            "{s:?}"
        );
    }
    let g = create(&mut c, "", create_req("classic", 1, Some(seed))).await;

    // Four players play as fast as they can; every acknowledged play is recorded.
    let acked: Arc<Mutex<Vec<pb::SubmitPlayResponse>>> = Arc::default();
    let refused: Arc<Mutex<Vec<tonic::Status>>> = Arc::default();
    let players: Vec<_> = (0..4)
        .map(|p| {
            let (game_id, token) = (g.game_id.clone(), g.seat_tokens[p].clone());
            let (acked, refused) = (Arc::clone(&acked), Arc::clone(&refused));
            tokio::spawn(async move {
                let mut c = GameEngineClient::new(channel(addr).await);
                loop {
                    let Ok(st) = c.get_state(authed(state_req(&game_id), &token)).await else {
                        return;
                    };
                    let st = st.into_inner();
                    if st.turn_seat.is_none() || st.turn_seat != st.your_seat {
                        tokio::time::sleep(Duration::from_millis(2)).await;
                        continue;
                    }
                    let Ok(h) = c.get_hints(authed(hints_req(&game_id), &token)).await else {
                        return;
                    };
                    let h = h.into_inner();
                    let req = if h.can_pass && st.seq % 3 == 0 {
                        pass_req(&game_id, p as u32, st.seq)
                    } else {
                        play_req(&game_id, p as u32, &h.plays[0], st.seq)
                    };
                    match c.submit_play(authed(req, &token)).await {
                        Ok(r) => acked.lock().expect("lock").push(r.into_inner()),
                        Err(s) => {
                            refused.lock().expect("lock").push(s);
                            return;
                        }
                    }
                }
            })
        })
        .collect();
    // A watcher, open through the shutdown.
    let mut watch = GameEngineClient::new(channel(addr).await)
        .watch_game(authed(watch_req(&g.game_id, 0), &g.spectator_token))
        .await
        .expect("watch")
        .into_inner();
    within(Duration::from_secs(120), "15 acknowledged plays", async {
        while acked.lock().expect("lock").len() < 15 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;

    // Calls in flight when the shutdown begins.
    let in_flight: Vec<_> = (0..8)
        .map(|_| {
            let mut c = c.clone();
            let (game_id, token) = (g.game_id.clone(), g.spectator_token.clone());
            tokio::spawn(async move {
                c.get_state(authed(
                    pb::GetStateRequest {
                        game_id,
                        ..Default::default()
                    },
                    &token,
                ))
                .await
            })
        })
        .collect();
    server.begin_shutdown();
    for t in in_flight {
        t.await.expect("task").expect("an in-flight call completes");
    }
    // Health turns NOT_SERVING while the listener still accepts (drain delay): polled over the
    // open connection until it does, with a deadline, not read after a fixed pause.
    for s in SERVICES {
        within(Duration::from_secs(30), "health NOT_SERVING", async {
            while health(&mut h, s).await != ServingStatus::NotServing as i32 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await;
    }
    // Reads still work; new plays and games are refused with UNAVAILABLE.
    let st = state(&mut c, &g.game_id, &g.spectator_token).await;
    let p = turn_player(&st);
    expect_reject(
        c.submit_play(authed(
            pass_req(&g.game_id, p, st.seq),
            &g.seat_tokens[p as usize],
        ))
        .await,
        Code::Unavailable,
        "UNAVAILABLE_SERVER",
    );
    expect_reject(
        c.create_game(authed(create_req("classic", 1, None), ""))
            .await,
        Code::Unavailable,
        "UNAVAILABLE_SERVER",
    );
    // The watcher's stream ends with UNAVAILABLE.
    let end = loop {
        match tokio::time::timeout(Duration::from_secs(10), watch.message()).await {
            Ok(Ok(Some(_))) => continue,
            Ok(Ok(None)) => panic!("the watch stream ended without a status"),
            Ok(Err(s)) => break s,
            Err(_) => panic!("the watch stream stayed open"),
        }
    };
    assert_eq!(end.code(), Code::Unavailable, "{end:?}");
    server.stopped().await.expect("the server stops cleanly");
    for p in players {
        p.await.expect("player task");
    }
    for s in refused.lock().expect("lock").iter() {
        // Refused by the draining server (or cut off once it closed): never acknowledged.
        assert!(
            matches!(
                s.code(),
                Code::Unavailable | Code::Unknown | Code::Cancelled
            ),
            "{s:?}"
        );
        if reason_of(s).is_some_and(|r| r == "UNAVAILABLE_SERVER") {
            assert_eq!(s.code(), Code::Unavailable);
        }
    }
    let acked = acked.lock().expect("lock").clone();
    let last_acked = acked
        .iter()
        .map(|r| r.seq)
        .max()
        .expect("plays acknowledged");
    eprintln!("{} plays acknowledged, last seq {last_acked}", acked.len());

    // Reopen the store in a new server (once the old one has let go of the file).
    server.app.take();
    drop(server);
    let server = TestServer::restart(|| config(|c| c.store = store.clone())).await;
    let mut c = server.client().await;
    let st = state(&mut c, &g.game_id, &g.seat_tokens[0]).await;
    assert_eq!(
        st.seq, last_acked,
        "seed {seed}: the store holds exactly the acknowledged plays"
    );

    // The recovered game plays on to the end; its replay holds every acknowledged play.
    let policy = Policy {
        seed,
        pass_prob: 0.25,
        stop_at_seq: None,
    };
    play_match(server.addr, &g, policy, Duration::from_secs(120))
        .await
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    let replay = get_replay(&mut c, &g.game_id, "").await;
    for r in &acked {
        let a = &replay.actions[r.seq as usize - 1];
        match &r.play {
            Some(play) => assert_eq!((a.kind.as_str(), &a.cards), ("play", &play.cards)),
            None => assert_eq!(a.kind, "pass"),
        }
    }
    rebuild(&replay).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
