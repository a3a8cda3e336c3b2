//! A wire fuzzer (issue 44): every rpc of `shuangkou.v1.GameEngine`, `shuangkou.v1.VariantAdmin`
//! and `shengji.v1.ShengjiEngine`, sent to an in-process server over a real socket with random,
//! huge, empty, malformed and boundary values in every field, random credentials (real seat and
//! spectator tokens, the admin and platform keys, tokens of another game, garbage) and random
//! seqs. For every call:
//! - an OK, or a status whose code is one the rpc documents (never INTERNAL, UNKNOWN,
//!   UNAVAILABLE…) with a `google.rpc.ErrorInfo` naming a reason of its API's `ErrorReason`;
//! - the trailers under 1 KB (`common::trailers`);
//! - the server still SERVING (`grpc.health.v1`), so nothing panicked a connection away;
//! - after a refusal, both games exactly as before (their whole GetState as the admin sees it:
//!   seq, hands, trick, scores… — a finer fingerprint than the state hash).
//!
//! Seeded: `SHUANGKOU_TEST_SEED` reproduces a run (the seed is printed first, and every failure
//! names the call, its index and the seed). `SHUANGKOU_FUZZ_CALLS` sets the number of calls
//! (default 600; CI's thorough run uses more). docs/TESTING.md lists the rpcs covered.

pub mod common;

use std::time::Duration;

use common::shengji::ShengjiClient;
use common::trailers::{MAX_TRAILER_BYTES, trailer_bytes};
use common::*;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shuangkou::service::pb;
use shuangkou::service::pb::shengji as sj;
use shuangkou::service::pb::variant_admin_client::VariantAdminClient;
use tonic::{Code, Request, Status};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_types::StatusExt;

/// Option names worth hitting (declared by some variant) beside random ones.
const OPTION_NAMES: [&str; 8] = [
    "bomb_multipliers",
    "double_points",
    "rake_percent",
    "cyclic_chain_bombs",
    "contribution_each",
    "first_leader",
    "timeouts_to_escape",
    "draw_points",
];

/// Values at and around the documented bounds (docs/API.md "Request bounds").
const BOUNDS: [usize; 8] = [8, 32, 64, 128, 512, 1024, 1025, 4096];

/// The generator of one run.
struct Gen {
    rng: ChaCha8Rng,
    /// Credentials a call may carry (empty: none).
    tokens: Vec<String>,
    /// Game ids worth naming.
    ids: Vec<String>,
}

impl Gen {
    fn pick<'a>(&mut self, xs: &'a [&'a str]) -> &'a str {
        xs.choose(&mut self.rng).copied().unwrap_or("")
    }

    /// A string: empty, plausible, huge, at a bound, or hostile characters.
    fn text(&mut self, plausible: &[&str]) -> String {
        match self.rng.random_range(0..10) {
            0 => String::new(),
            1 | 2 if !plausible.is_empty() => self.pick(plausible).to_string(),
            3 => "x".repeat(self.rng.random_range(5_000..40_000)),
            4 => {
                let n = *BOUNDS.choose(&mut self.rng).unwrap_or(&64);
                "y".repeat(n)
            }
            5 => [
                "\u{0}", "\u{7}", "\u{202E}", "\n", "%", "\u{2066}", "雙扣", "🂡", " ",
            ]
            .choose(&mut self.rng)
            .map(|s| s.repeat(self.rng.random_range(1..400)))
            .unwrap_or_default(),
            6 => {
                let len = self.rng.random_range(0..60);
                (0..len)
                    .map(|_| char::from_u32(self.rng.random_range(0..0x3000)).unwrap_or('?'))
                    .collect()
            }
            7 => self.list_text(),
            _ => {
                let len = self.rng.random_range(0..24);
                (0..len)
                    .map(|_| char::from(self.rng.random_range(b'!'..=b'~')))
                    .collect()
            }
        }
    }

    /// An option value: the grammar's spellings and its near misses.
    fn list_text(&mut self) -> String {
        let parts = [
            "[2,3,4,5]",
            "2,3,4,5",
            "[2,",
            "[2",
            "2,",
            ",2",
            "[[2]]",
            "[2,,3]",
            "2 3",
            "[2;3]",
            " 4",
            "4.0",
            "4",
            "-1",
            "true",
            "false",
            "1e9",
            "NaN",
            "[]",
            "99999999999999999999",
            "random",
        ];
        self.pick(&parts).to_string()
    }

    fn game_id(&mut self) -> String {
        if self.rng.random_bool(0.6) && !self.ids.is_empty() {
            return self.ids.choose(&mut self.rng).cloned().unwrap_or_default();
        }
        self.text(&[])
    }

    fn number(&mut self) -> u32 {
        match self.rng.random_range(0..5) {
            0 => 0,
            1 => u32::MAX,
            2 => self.rng.random_range(0..8),
            3 => self.rng.random_range(0..120),
            _ => self.rng.random(),
        }
    }

    fn seq(&mut self) -> u64 {
        match self.rng.random_range(0..4) {
            0 => 0,
            1 => u64::MAX,
            2 => self.rng.random_range(0..40),
            _ => self.rng.random(),
        }
    }

    fn cards(&mut self) -> Vec<u32> {
        let n = match self.rng.random_range(0..6) {
            0 => 0,
            1 => self.rng.random_range(100..3000),
            _ => self.rng.random_range(1..9),
        };
        (0..n).map(|_| self.number()).collect()
    }

    fn strings(&mut self, plausible: &[&str]) -> Vec<String> {
        let n = match self.rng.random_range(0..5) {
            0 => 0,
            1 => self.rng.random_range(5..300),
            _ => self.rng.random_range(1..6),
        };
        (0..n).map(|_| self.text(plausible)).collect()
    }

    fn options(&mut self) -> std::collections::HashMap<String, String> {
        let n = match self.rng.random_range(0..5) {
            0 => 0,
            1 => self.rng.random_range(60..200),
            _ => self.rng.random_range(1..4),
        };
        (0..n)
            .map(|_| {
                let name = if self.rng.random_bool(0.6) {
                    self.pick(&OPTION_NAMES).to_string()
                } else {
                    self.text(&[])
                };
                let value = if self.rng.random_bool(0.6) {
                    self.list_text()
                } else {
                    self.text(&[])
                };
                (name, value)
            })
            .collect()
    }

    fn token(&mut self) -> String {
        self.tokens
            .choose(&mut self.rng)
            .cloned()
            .unwrap_or_default()
    }

    /// `message` with a random credential.
    fn authed<T>(&mut self, message: T) -> Request<T> {
        let token = self.token();
        let mut r = Request::new(message);
        if let Ok(v) = format!("Bearer {token}").parse() {
            if !token.is_empty() {
                r.metadata_mut().insert("authorization", v);
            }
        }
        r
    }
}

/// The outcome of one call: OK, or the status.
type Outcome = Result<(), Status>;

fn outcome<T>(r: Result<tonic::Response<T>, Status>) -> Outcome {
    r.map(|_| ())
}

/// Codes every rpc may answer a hostile request with (the proto's `ErrorReason` codes of client
/// mistakes and limits). INTERNAL, UNKNOWN, UNAVAILABLE, DATA_LOSS, UNIMPLEMENTED, CANCELLED and
/// DEADLINE_EXCEEDED are never documented answers to a bad request.
const CLIENT_CODES: [Code; 9] = [
    Code::InvalidArgument,
    Code::NotFound,
    Code::AlreadyExists,
    Code::PermissionDenied,
    Code::ResourceExhausted,
    Code::FailedPrecondition,
    Code::Aborted,
    Code::OutOfRange,
    Code::Unauthenticated,
];

/// The codes `rpc` documents (a subset of [`CLIENT_CODES`]).
fn documented(rpc: &str) -> &'static [Code] {
    use Code::*;
    match rpc {
        "ListVariants" => &[Unauthenticated, PermissionDenied],
        "ValidateVariant" | "ReloadVariants" => {
            &[InvalidArgument, Unauthenticated, PermissionDenied]
        }
        "GetState" | "GetReplay" | "ListGames" | "升級 GetState" | "升級 GetReplay" => &[
            InvalidArgument,
            NotFound,
            PermissionDenied,
            Unauthenticated,
            FailedPrecondition,
        ],
        "AbortGame" => &[
            InvalidArgument,
            NotFound,
            PermissionDenied,
            Unauthenticated,
            FailedPrecondition,
        ],
        "WatchGame" | "升級 WatchGame" => &[
            InvalidArgument,
            NotFound,
            PermissionDenied,
            Unauthenticated,
            OutOfRange,
            ResourceExhausted,
        ],
        _ => &CLIENT_CODES,
    }
}

/// What one call is judged by: its status, in its API's domain.
fn judge(rpc: &str, shengji: bool, r: &Outcome) -> Result<(), String> {
    let Err(s) = r else {
        return Ok(());
    };
    if !documented(rpc).contains(&s.code()) {
        return Err(format!("{rpc}: undocumented code {:?}: {s:?}", s.code()));
    }
    let Some(info) = s.get_details_error_info() else {
        return Err(format!("{rpc}: a refusal without ErrorInfo: {s:?}"));
    };
    let known = if shengji {
        sj::ErrorReason::from_str_name(&info.reason).is_some()
    } else {
        pb::ErrorReason::from_str_name(&info.reason).is_some()
    };
    if !known {
        return Err(format!("{rpc}: reason {} is not in the proto", info.reason));
    }
    let size = trailer_bytes(s);
    if size >= MAX_TRAILER_BYTES {
        return Err(format!("{rpc}: trailers of {size} bytes: {s:?}"));
    }
    Ok(())
}

/// Both games as the admin sees them (the fingerprint compared around each refusal).
async fn snapshot(
    c: &mut Client,
    s: &mut ShengjiClient,
    game: &str,
    table: &str,
) -> (pb::GetStateResponse, sj::GetStateResponse) {
    let a = c
        .get_state(authed(state_req(game), ADMIN_KEY))
        .await
        .expect("GetState as the admin")
        .into_inner();
    let b = s
        .get_state(authed(
            sj::GetStateRequest {
                game_id: table.to_string(),
            },
            ADMIN_KEY,
        ))
        .await
        .expect("升級 GetState as the admin")
        .into_inner();
    (a, b)
}

/// One random call; returns its rpc name, whether it is a 升級 one, and its outcome.
async fn call(
    g: &mut Gen,
    c: &mut Client,
    a: &mut VariantAdminClient<tonic::transport::Channel>,
    s: &mut ShengjiClient,
) -> (&'static str, bool, Outcome) {
    let variants = ["classic", "jj", "baibian", "huopin", "qianbian", "erren"];
    let which = g.rng.random_range(0..19);
    match which {
        0 => {
            let req = g.authed(pb::ListVariantsRequest {});
            ("ListVariants", false, outcome(c.list_variants(req).await))
        }
        1 => {
            let mut req = pb::CreateGameRequest {
                variant: g.text(&variants),
                options: g.options(),
                deals: g.number() % 3,
                players: g.strings(&["a", "b", "c", "d"]),
                request_id: g.text(&["r1", "r2"]),
                seed: g.text(&[]),
                auto_policy: g.text(&["heuristic", "basic"]),
                bot_delay_ms: g.number() % 20_000,
                ..Default::default()
            };
            if g.rng.random_bool(0.2) {
                req.preset_hands = Some(pb::PresetHands {
                    hands: (0..g.rng.random_range(0..10))
                        .map(|_| pb::CardList { cards: g.cards() })
                        .collect(),
                });
            }
            if g.rng.random_bool(0.3) {
                for _ in 0..g.rng.random_range(1..12) {
                    let seat = g.number();
                    let bot = g.text(&["basic", "heuristic"]);
                    req.bots.insert(seat, bot);
                }
            }
            let req = g.authed(req);
            ("CreateGame", false, outcome(c.create_game(req).await))
        }
        2 => {
            let req = pb::SubmitPlayRequest {
                game_id: g.game_id(),
                seat: g.rng.random_bool(0.3).then(|| g.number()),
                cards: g.cards(),
                pass: g.rng.random_bool(0.3),
                declared: g.rng.random_bool(0.3).then(|| pb::Declared {
                    r#type: g.rng.random_range(-1..40),
                    key: g.text(&["3", "10", "A"]),
                }),
                expected_seq: g.rng.random_bool(0.5).then(|| g.seq()),
                request_id: g.text(&["k1"]),
            };
            let req = g.authed(req);
            ("SubmitPlay", false, outcome(c.submit_play(req).await))
        }
        3 => {
            let req = pb::GetStateRequest {
                game_id: g.game_id(),
                results_from_deal: g.number(),
                results_limit: g.number(),
            };
            let req = g.authed(req);
            ("GetState", false, outcome(c.get_state(req).await))
        }
        4 => {
            let req = pb::WatchGameRequest {
                game_id: g.game_id(),
                from_seq: g.seq(),
                cursor: g.text(&["1.0", "0.0"]),
            };
            let req = g.authed(req);
            // Opened and dropped: the opening is what is judged.
            ("WatchGame", false, outcome(c.watch_game(req).await))
        }
        5 => {
            let req = pb::GetHintsRequest {
                game_id: g.game_id(),
                limit: g.number(),
                page_token: g.text(&[]),
                types: g.strings(&["single", "pair", "bomb"]),
                suggest: g.rng.random_bool(0.3),
            };
            let req = g.authed(req);
            ("GetHints", false, outcome(c.get_hints(req).await))
        }
        6 => {
            let req = pb::LeaveGameRequest {
                game_id: g.game_id(),
                request_id: g.text(&["k1"]),
                dry_run: g.rng.random_bool(0.5),
            };
            let req = g.authed(req);
            ("LeaveGame", false, outcome(c.leave_game(req).await))
        }
        7 => {
            let req = pb::GetReplayRequest {
                game_id: g.game_id(),
                max_actions: g.number(),
                page_token: g.text(&["s1", "s0"]),
            };
            let req = g.authed(req);
            ("GetReplay", false, outcome(c.get_replay(req).await))
        }
        8 => {
            let req = pb::ListGamesRequest {
                page_size: g.number(),
                page_token: g.text(&[]),
            };
            let req = g.authed(req);
            ("ListGames", false, outcome(c.list_games(req).await))
        }
        9 => {
            // Never the admin key with a real game and a reason (that ends the match: it is an
            // accepted action, judged like any other, but it would stop the fuzzing of plays).
            let req = pb::AbortGameRequest {
                game_id: g.game_id(),
                reason: g.text(&[]),
            };
            let mut req = g.authed(req);
            if req
                .metadata()
                .get("authorization")
                .is_some_and(|v| v.to_str().is_ok_and(|v| v.ends_with(ADMIN_KEY)))
            {
                req.get_mut().reason = String::new();
            }
            ("AbortGame", false, outcome(c.abort_game(req).await))
        }
        10 => {
            let req = pb::ValidateVariantRequest {
                source: g.text(&["fn meta() { #{} }", "fn meta( {"]),
                file_name: g.text(&["classic.rhai", "x.rhai"]),
            };
            let req = g.authed(req);
            (
                "ValidateVariant",
                false,
                outcome(a.validate_variant(req).await),
            )
        }
        11 => {
            let req = g.authed(pb::ReloadVariantsRequest {});
            (
                "ReloadVariants",
                false,
                outcome(a.reload_variants(req).await),
            )
        }
        12 => {
            let req = sj::CreateGameRequest {
                variant: g.text(&["shengji"]),
                players: g.strings(&["a", "b", "c", "d"]),
                options: g.options(),
                seed: g.text(&[]),
                deck: g.cards(),
                request_id: g.text(&["r1"]),
                bot_seats: g.cards(),
            };
            let req = g.authed(req);
            ("升級 CreateGame", true, outcome(s.create_game(req).await))
        }
        13 => {
            use sj::submit_action_request::Action;
            let action = match g.rng.random_range(0..5) {
                0 => None,
                1 => Some(Action::Deal(sj::Deal { count: g.number() })),
                2 => Some(Action::Declare(sj::Declare { card: g.number() })),
                3 => Some(Action::Bury(sj::Bury { cards: g.cards() })),
                _ => Some(Action::Play(sj::PlayCard { card: g.number() })),
            };
            let req = sj::SubmitActionRequest {
                game_id: g.game_id(),
                seat: g.number(),
                expected_seq: g.seq(),
                request_id: g.text(&["k1"]),
                action,
            };
            let req = g.authed(req);
            (
                "升級 SubmitAction",
                true,
                outcome(s.submit_action(req).await),
            )
        }
        14 => {
            let req = sj::GetStateRequest {
                game_id: g.game_id(),
            };
            let req = g.authed(req);
            ("升級 GetState", true, outcome(s.get_state(req).await))
        }
        15 => {
            let req = sj::WatchGameRequest {
                game_id: g.game_id(),
                from_seq: g.seq(),
            };
            let req = g.authed(req);
            ("升級 WatchGame", true, outcome(s.watch_game(req).await))
        }
        16 => {
            let req = sj::GetHintsRequest {
                game_id: g.game_id(),
            };
            let req = g.authed(req);
            ("升級 GetHints", true, outcome(s.get_hints(req).await))
        }
        17 => {
            let req = sj::LeaveGameRequest {
                game_id: g.game_id(),
            };
            let req = g.authed(req);
            ("升級 LeaveGame", true, outcome(s.leave_game(req).await))
        }
        _ => {
            let req = sj::GetReplayRequest {
                game_id: g.game_id(),
            };
            let req = g.authed(req);
            ("升級 GetReplay", true, outcome(s.get_replay(req).await))
        }
    }
}

#[tokio::test]
async fn every_rpc_answers_hostile_requests_with_a_documented_typed_error_and_changes_nothing() {
    let seed = test_seed(44);
    let calls: usize = std::env::var("SHUANGKOU_FUZZ_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(600);
    // Keys, so every credential path is tried; no presence grace within the run (a dropped
    // WatchGame stream would otherwise log a disconnect: a change nobody's refusal caused).
    let server = TestServer::start(|c| {
        keyed(c);
        c.presence_grace_ms = 3_600_000;
    })
    .await;
    let channel = server.channel().await;
    let mut c = Client::new(channel.clone());
    let mut a = VariantAdminClient::new(channel.clone());
    let mut s = ShengjiClient::new(channel.clone());
    let mut health = HealthClient::new(channel);

    let game = create(&mut c, ADMIN_KEY, create_req("classic", 2, Some(seed))).await;
    let other = create(&mut c, ACME_KEY, create_req("jj", 1, None)).await;
    let table = common::shengji::create_shengji(&mut s, seed, &[]).await;
    let mut tokens = vec![
        String::new(),
        ADMIN_KEY.to_string(),
        ACME_KEY.to_string(),
        OTHER_KEY.to_string(),
        game.spectator_token.clone(),
        other.seat_tokens[0].clone(),
        table.spectator_token.clone(),
        "garbage".to_string(),
        format!("{}.p0.{}", game.game_id, "0".repeat(32)),
        "z".repeat(2000),
    ];
    tokens.extend(game.seat_tokens.iter().cloned());
    tokens.extend(table.seat_tokens.iter().cloned());
    let mut g = Gen {
        rng: ChaCha8Rng::seed_from_u64(seed),
        tokens,
        ids: vec![
            game.game_id.clone(),
            other.game_id.clone(),
            table.game_id.clone(),
        ],
    };

    let mut before = snapshot(&mut c, &mut s, &game.game_id, &table.game_id).await;
    let mut refused = 0;
    for i in 0..calls {
        let (rpc, shengji, r) = within(
            Duration::from_secs(60),
            "one fuzzed call",
            call(&mut g, &mut c, &mut a, &mut s),
        )
        .await;
        let context = || format!("call {i} of seed {seed} (rerun with SHUANGKOU_TEST_SEED={seed})");
        if let Err(why) = judge(rpc, shengji, &r) {
            panic!("{why}\n{}", context());
        }
        let serving = health
            .check(tonic_health::pb::HealthCheckRequest {
                service: String::new(),
            })
            .await
            .map(|r| r.into_inner().status)
            .map_err(|e| e.code());
        assert_eq!(
            serving,
            Ok(ServingStatus::Serving as i32),
            "{rpc}: health after the call\n{}",
            context()
        );
        let after = snapshot(&mut c, &mut s, &game.game_id, &table.game_id).await;
        if r.is_err() {
            refused += 1;
            assert!(
                after == before,
                "{rpc} was refused ({:?}) but a game changed\n{}",
                r.as_ref().err(),
                context()
            );
        }
        before = after;
    }
    eprintln!("{calls} calls, {refused} refused, seed {seed}");
    assert!(refused > calls / 2, "most hostile calls are refused");
}
