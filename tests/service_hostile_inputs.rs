//! The hostile inputs of issue 44, each sent over a real socket to an in-process server, each
//! answered with its typed error (code and ErrorInfo reason) in trailers under 1 KB, and the
//! variant admin rpcs saying what is true. The oracle is the issue's list and the documented
//! bounds and grammar (docs/API.md "Request bounds", docs/VARIANTS.md "Option value grammar"),
//! not the code's own messages.

pub mod common;

use std::collections::HashMap;
use std::time::Duration;

use common::shengji::ShengjiClient;
use common::temp::TempDir;
use common::trailers::{MAX_TRAILER_BYTES, trailer_bytes};
use common::*;
use shuangkou::service::pb;
use shuangkou::service::pb::shengji as sj;
use shuangkou::service::pb::variant_admin_client::VariantAdminClient;
use tonic::{Code, Status};
use tonic_types::StatusExt;

const TEN_KB: usize = 10 * 1024;

/// Asserts the typed refusal and the trailers' size; returns the ErrorInfo metadata.
#[track_caller]
fn refused<T: std::fmt::Debug>(
    what: &str,
    r: Result<tonic::Response<T>, Status>,
    code: Code,
    reason: &str,
) -> HashMap<String, String> {
    let s = match r {
        Ok(resp) => panic!(
            "{what}: expected {code:?}/{reason}, got OK: {:?}",
            resp.get_ref()
        ),
        Err(s) => s,
    };
    let info = s
        .get_details_error_info()
        .unwrap_or_else(|| panic!("{what}: no ErrorInfo in {s:?}"));
    assert_eq!(
        (s.code(), info.reason.as_str()),
        (code, reason),
        "{what}: {s:?}"
    );
    let size = trailer_bytes(&s);
    assert!(
        size < MAX_TRAILER_BYTES,
        "{what}: trailers of {size} bytes: {s:?}"
    );
    info.metadata
}

fn with_options(variant: &str, options: &[(&str, &str)]) -> pb::CreateGameRequest {
    pb::CreateGameRequest {
        variant: variant.into(),
        options: options
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..Default::default()
    }
}

#[tokio::test]
async fn every_hostile_input_of_the_issue_answers_with_its_typed_error() {
    let server = TestServer::start(|_| {}).await;
    let mut c = server.client().await;
    let huge = "x".repeat(TEN_KB);

    // Each refused by its field's documented bound (docs/API.md "Request bounds"), before the
    // rpc does anything: ErrorInfo names the field and the limit.
    let bound = |meta: &HashMap<String, String>, field: &str, limit: &str| {
        let got = (
            meta.get("field").map(String::as_str),
            meta.get("limit").map(String::as_str),
        );
        assert_eq!(got, (Some(field), Some(limit)), "{meta:?}");
    };
    let r = c.get_state(state_req(&huge)).await;
    let meta = refused(
        "GetState(game_id = 10 KB)",
        r,
        Code::NotFound,
        "NO_SUCH_GAME",
    );
    bound(&meta, "game_id", "128");
    let r = c.create_game(with_options(&huge, &[])).await;
    let meta = refused(
        "CreateGame(variant = 10 KB)",
        r,
        Code::InvalidArgument,
        "UNKNOWN_VARIANT",
    );
    bound(&meta, "variant", "64");
    let r = c
        .create_game(with_options("classic", &[(&huge, "1")]))
        .await;
    let meta = refused(
        "option name of 10 KB",
        r,
        Code::InvalidArgument,
        "BAD_OPTION",
    );
    bound(&meta, "options", "64");
    let r = c
        .create_game(with_options("classic", &[("double_points", &huge)]))
        .await;
    let meta = refused(
        "option value of 10 KB",
        r,
        Code::InvalidArgument,
        "BAD_OPTION",
    );
    bound(&meta, "options", "1024");
    // Within the bound but still no integer: the refusal quotes 32 bytes of it at most.
    let long_value = "9".repeat(1000) + "x";
    let r = c
        .create_game(with_options("classic", &[("double_points", &long_value)]))
        .await;
    let status = r.expect_err("a 1,001-byte value");
    assert!(
        status.message().contains("… (1001 bytes)") && status.message().len() < 200,
        "{}",
        status.message()
    );

    // Malformed lists and numbers: refused, as `[2;3]` always was.
    for bad in ["[2,", "[2", "2,", ",2", "[[2]]", "[2,,3]", "2 3", "[2;3]"] {
        let r = c
            .create_game(with_options("classic", &[("bomb_multipliers", bad)]))
            .await;
        refused(
            &format!("bomb_multipliers={bad:?}"),
            r,
            Code::InvalidArgument,
            "BAD_OPTION",
        );
    }
    for bad in [" 4", "4.0", "4 ", "+4"] {
        let r = c
            .create_game(with_options("baibian", &[("double_points", bad)]))
            .await;
        refused(
            &format!("double_points={bad:?}"),
            r,
            Code::InvalidArgument,
            "BAD_OPTION",
        );
    }
    // The spellings the grammar takes are taken.
    for good in ["[2,3,4,5]", "2,3,4,5"] {
        c.create_game(with_options("classic", &[("bomb_multipliers", good)]))
            .await
            .unwrap_or_else(|e| panic!("bomb_multipliers={good}: {e:?}"));
    }

    // The player list: empty (defaults) or exactly the seat count.
    let players = |names: &[&str]| pb::CreateGameRequest {
        variant: "classic".into(),
        players: names.iter().map(|n| n.to_string()).collect(),
        ..Default::default()
    };
    let g = c
        .create_game(players(&[]))
        .await
        .expect("no names: defaults")
        .into_inner();
    let st = state(&mut c, &g.game_id, &g.spectator_token).await;
    let mut names: Vec<&str> = st.seats.iter().map(|s| s.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["player0", "player1", "player2", "player3"]);
    let r = c.create_game(players(&["a", "b", "c"])).await;
    refused("three names", r, Code::InvalidArgument, "BAD_REQUEST");
    c.create_game(players(&["a", "b", "c", "d"]))
        .await
        .expect("four names");
    for bad in ["nul\u{0}", "bell\u{7}", "\u{202E}evil", "x\u{2066}y"] {
        let r = c.create_game(players(&[bad, "b", "c", "d"])).await;
        let meta = refused(
            &format!("player name {bad:?}"),
            r,
            Code::InvalidArgument,
            "BAD_REQUEST",
        );
        assert_eq!(
            meta.get("field").map(String::as_str),
            Some("players"),
            "{bad:?}"
        );
    }
    let mut bot = players(&[]);
    bot.bots.insert(1, "basic\u{202E}".into());
    let r = c.create_game(bot).await;
    refused("bot name with RLO", r, Code::InvalidArgument, "BAD_REQUEST");

    // The same over shengji.v1.
    let mut s = ShengjiClient::new(server.channel().await);
    let r = s
        .get_state(sj::GetStateRequest {
            game_id: huge.clone(),
        })
        .await;
    refused(
        "升級 GetState(game_id = 10 KB)",
        r,
        Code::NotFound,
        "NO_SUCH_GAME",
    );
    let r = s
        .create_game(sj::CreateGameRequest {
            variant: huge.clone(),
            ..Default::default()
        })
        .await;
    refused(
        "升級 CreateGame(variant = 10 KB)",
        r,
        Code::InvalidArgument,
        "UNKNOWN_VARIANT",
    );
    let r = s
        .create_game(sj::CreateGameRequest {
            players: ["a\u{202E}", "b", "c", "d"].map(String::from).to_vec(),
            ..Default::default()
        })
        .await;
    refused(
        "升級 name with RLO",
        r,
        Code::InvalidArgument,
        "BAD_REQUEST",
    );
}

#[tokio::test]
async fn the_variant_admin_rpcs_say_what_is_true() {
    let dir = TempDir::created("hostile-variants", "admin");
    let source = |id: &str| {
        let root = env!("CARGO_MANIFEST_DIR");
        std::fs::read_to_string(format!("{root}/variants/{id}.rhai")).expect("script")
    };
    for id in VARIANTS.iter().chain(&["shengji"]) {
        std::fs::write(dir.join(format!("{id}.rhai")), source(id)).expect("write");
    }
    let variants_dir = dir.to_path_buf();
    let server = TestServer::start(move |c| c.variants_dir = Some(variants_dir)).await;
    let mut admin = VariantAdminClient::new(server.channel().await);

    // classic.rhai that compiles but fails its declared example (it claims 99).
    let classic = source("classic");
    let broken = classic.replacen("expect: [4, -4, 4, -4]", "expect: [99, -99, 99, -99]", 1);
    assert_ne!(broken, classic, "the example to break is in classic.rhai");
    let v = admin
        .validate_variant(pb::ValidateVariantRequest {
            source: broken.clone(),
            file_name: "classic.rhai".into(),
        })
        .await
        .expect("ValidateVariant")
        .into_inner();
    assert!(!v.ok, "{v:?}");
    assert_eq!(
        v.id, "classic",
        "a script that compiled answers with its id"
    );
    assert!(!v.version.is_empty() && !v.errors.is_empty(), "{v:?}");

    std::fs::write(dir.join("classic.rhai"), &broken).expect("write");
    for round in ["refused now", "refused before, unchanged since"] {
        let r = admin
            .reload_variants(pb::ReloadVariantsRequest {})
            .await
            .expect("ReloadVariants")
            .into_inner();
        let of = |id: &str| r.outcomes.iter().filter(|o| o.id == id).collect::<Vec<_>>();
        let classic = of("classic");
        assert_eq!(classic.len(), 1, "{round}: {r:?}");
        assert_eq!(
            (classic[0].file.as_str(), classic[0].result.as_str()),
            ("classic.rhai", "rejected"),
            "{round}: {r:?}"
        );
        assert_eq!(
            classic[0].version,
            shuangkou::variants::content_hash(&broken),
            "{round}: the refused version"
        );
        assert!(!classic[0].error.is_empty(), "{round}: {r:?}");
        let shengji = of("shengji");
        assert_eq!(shengji.len(), 1, "{round}: shengji.rhai is reported: {r:?}");
        assert_eq!(shengji[0].result, "unchanged", "{round}: {r:?}");
        assert_eq!(
            shengji[0].version,
            shuangkou::variants::content_hash(&source("shengji")),
            "{round}"
        );
        for id in VARIANTS.iter().filter(|id| **id != "classic") {
            let o = of(id);
            assert_eq!(o.len(), 1, "{round}: {id}: {r:?}");
            assert_eq!(
                (o[0].result.as_str(), o[0].version.len()),
                ("unchanged", 64),
                "{round}: {id}"
            );
        }
    }
}

/// Reflection serves `google/rpc/error_details.proto`, so a generic client (grpcurl) decodes the
/// ErrorInfo detail of a refusal (issue 44: "google.rpc.ErrorInfo is not recognized").
#[tokio::test]
async fn reflection_serves_the_error_info_detail() {
    use prost::Message;
    use tonic_reflection::pb::v1::ServerReflectionRequest;
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;

    let server = TestServer::start(|_| {}).await;
    let mut client = ServerReflectionClient::new(server.channel().await);
    let ask = |symbol: &str| ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::FileContainingSymbol(symbol.to_string())),
    };
    let requests = tokio_stream::iter(vec![ask("google.rpc.ErrorInfo")]);
    let mut answers = client
        .server_reflection_info(requests)
        .await
        .expect("reflection")
        .into_inner();
    let answer = within(
        Duration::from_secs(30),
        "the reflection answer",
        answers.message(),
    )
    .await
    .expect("a reflection answer")
    .expect("one answer");
    let Some(MessageResponse::FileDescriptorResponse(files)) = answer.message_response else {
        panic!("no file for google.rpc.ErrorInfo: {answer:?}");
    };
    let names: Vec<String> = files
        .file_descriptor_proto
        .iter()
        .map(|f| {
            prost_types::FileDescriptorProto::decode(f.as_slice())
                .expect("a file descriptor")
                .name()
                .to_string()
        })
        .collect();
    assert!(
        names.iter().any(|n| n == "google/rpc/error_details.proto"),
        "{names:?}"
    );
}
