//! The contract of `shuangkou.v1` over a real socket: every error reason of docs/API.md with its
//! gRPC code, every authentication rule, platform isolation, idempotent plays, `expected_seq`,
//! concurrent identical plays, and resuming a `WatchGame` stream.
//!
//! Most tests share one server with an admin key and two platform keys (`common::shared`);
//! the open-mode and limit tests start their own.

pub mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use shuangkou::service::pb;
use shuangkou::service::pb::game_engine_client::GameEngineClient;
use shuangkou::service::pb::variant_admin_client::VariantAdminClient;
use shuangkou::service::status::reason_of;
use tonic::Code;
use tonic_types::StatusExt;

/// A classic game on the shared server (created with the admin key and a seed).
async fn new_game(client: &mut Client, variant: &str, seed: u64) -> pb::CreateGameResponse {
    create(client, ADMIN_KEY, create_req(variant, 1, Some(seed))).await
}

/// A new classic game (seeded) on the shared server: a client, the game, its state as the
/// admin sees it and the player to act.
async fn first_turn(seed: u64) -> (Client, pb::CreateGameResponse, pb::GetStateResponse, u32) {
    let mut c = shared_client().await;
    let g = new_game(&mut c, "classic", seed).await;
    let (st, p) = turn(&mut c, &g).await;
    (c, g, st, p)
}

/// Asserts that the game is still at `seq` (a rejected request recorded nothing).
async fn unchanged(c: &mut Client, g: &pb::CreateGameResponse, seq: u64) {
    assert_eq!(
        state(c, &g.game_id, ADMIN_KEY).await.seq,
        seq,
        "nothing recorded"
    );
}

/// The state as the admin sees it, and the player to act.
async fn turn(client: &mut Client, g: &pb::CreateGameResponse) -> (pb::GetStateResponse, u32) {
    let st = state(client, &g.game_id, ADMIN_KEY).await;
    let p = turn_player(&st);
    (st, p)
}

async fn submit(
    client: &mut Client,
    token: &str,
    req: pb::SubmitPlayRequest,
) -> Result<tonic::Response<pb::SubmitPlayResponse>, tonic::Status> {
    client.submit_play(authed(req, token)).await
}

fn rank_of(id: u32) -> u32 {
    let r = id % 54;
    if r >= 52 { r } else { r % 13 }
}

fn metadata(s: &tonic::Status, key: &str) -> Option<String> {
    s.get_details_error_info()
        .and_then(|i| i.metadata.get(key).cloned())
}

// ---------------------------------------------------------------- errors of docs/API.md

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_card_id_and_duplicate_card_are_invalid_argument() {
    let (mut c, g, st, p) = first_turn(101).await;
    let token = &g.seat_tokens[p as usize];
    expect_reject(
        submit(&mut c, token, cards_req(&g, p, vec![108])).await,
        Code::InvalidArgument,
        "BAD_CARD_ID",
    );
    let own = state(&mut c, &g.game_id, token).await.hand;
    expect_reject(
        submit(&mut c, token, cards_req(&g, p, vec![own[0], own[0]])).await,
        Code::InvalidArgument,
        "DUPLICATE_CARD",
    );
    // Preset hands are checked alike.
    let mut req = create_req("classic", 1, Some(1));
    req.preset_hands = Some(pb::PresetHands {
        hands: vec![pb::CardList { cards: vec![500] }; 4],
    });
    expect_reject(
        c.create_game(authed(req, ADMIN_KEY)).await,
        Code::InvalidArgument,
        "BAD_CARD_ID",
    );
    // Nothing changed.
    unchanged(&mut c, &g, st.seq).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn not_a_combination_is_invalid_argument() {
    let (mut c, g, _, p) = first_turn(102).await;
    let token = &g.seat_tokens[p as usize];
    let hand = state(&mut c, &g.game_id, token).await.hand;
    // Two suited cards two ranks or more apart form nothing in classic.
    let a = hand
        .iter()
        .copied()
        .find(|&id| rank_of(id) < 52)
        .expect("a suited card");
    let b = hand
        .iter()
        .copied()
        .find(|&id| rank_of(id) < 52 && rank_of(id).abs_diff(rank_of(a)) >= 2)
        .expect("a second suited card of another rank");
    expect_reject(
        submit(&mut c, token, cards_req(&g, p, vec![a, b])).await,
        Code::InvalidArgument,
        "NOT_A_COMBINATION",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ambiguous_play_lists_interpretations_and_a_declaration_resolves_it() {
    let mut c = shared_client().await;
    // 3♠ 4♠ 5♠ + SJ BJ BJ: a straight 3-8 or the pair chain 33 44 55 under 千變.
    let cards = vec![0, 1, 2, 52, 53, 107];
    let g = preset_game(&mut c, "qianbian", &cards).await;
    let token = &g.seat_tokens[0];
    let s = expect_reject(
        submit(&mut c, token, cards_req(&g, 0, cards.clone())).await,
        Code::InvalidArgument,
        "AMBIGUOUS_PLAY",
    );
    let list = metadata(&s, "interpretations").expect("interpretations in ErrorInfo");
    assert!(
        list.contains("straight") && list.contains("pair_chain"),
        "{list}"
    );
    // A declaration that fits none of them.
    let mut req = cards_req(&g, 0, cards.clone());
    req.declared = Some(pb::Declared {
        r#type: pb::HandType::TypeTripleChain as i32,
        key: String::new(),
    });
    expect_reject(
        submit(&mut c, token, req.clone()).await,
        Code::InvalidArgument,
        "DECLARED_MISMATCH",
    );
    assert_eq!(state(&mut c, &g.game_id, token).await.seq, 0);
    req.declared = Some(pb::Declared {
        r#type: pb::HandType::TypePairChain as i32,
        key: "5".into(),
    });
    let r = submit(&mut c, token, req)
        .await
        .expect("declared play")
        .into_inner();
    let play = r.play.expect("the play");
    assert_eq!(
        (play.type_name.as_str(), play.key.as_str()),
        ("pair_chain", "5")
    );
    assert_eq!(play.wilds.len(), 3);
    assert_eq!(r.seq, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_variant_and_bad_option_are_invalid_argument() {
    let mut c = shared_client().await;
    expect_reject(
        c.create_game(authed(create_req("nope", 1, None), ADMIN_KEY))
            .await,
        Code::InvalidArgument,
        "UNKNOWN_VARIANT",
    );
    for (k, v) in [
        ("no_such_option", "1"),
        ("turn_seconds", "abc"),
        ("turn_seconds", "100000"),
    ] {
        let mut req = create_req("classic", 1, None);
        req.options.insert(k.into(), v.into());
        expect_reject(
            c.create_game(authed(req, ADMIN_KEY)).await,
            Code::InvalidArgument,
            "BAD_OPTION",
        );
    }
    let mut req = create_req("classic", 1, None);
    req.options.insert("turn_seconds".into(), "60".into());
    c.create_game(authed(req, ADMIN_KEY))
        .await
        .expect("a valid option");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turn_errors_are_failed_precondition() {
    let seed = test_seed(103);
    let (mut c, g, st, p) = first_turn(seed).await;
    let token = &g.seat_tokens[p as usize];
    // MUST_LEAD: the leader cannot pass.
    expect_reject(
        submit(&mut c, token, pass_req(&g.game_id, p, 0)).await,
        Code::FailedPrecondition,
        "MUST_LEAD",
    );
    // NOT_YOUR_TURN: another player plays a card it holds.
    let other = (p + 1) % 4;
    let other_token = &g.seat_tokens[other as usize];
    let other_hand = state(&mut c, &g.game_id, other_token).await.hand;
    expect_reject(
        submit(
            &mut c,
            other_token,
            cards_req(&g, other, vec![other_hand[0]]),
        )
        .await,
        Code::FailedPrecondition,
        "NOT_YOUR_TURN",
    );
    // CARDS_NOT_HELD: the leader plays a card of another hand.
    expect_reject(
        submit(&mut c, token, cards_req(&g, p, vec![other_hand[0]])).await,
        Code::FailedPrecondition,
        "CARDS_NOT_HELD",
    );
    // DOES_NOT_BEAT: the leader leads its strongest single; the next seat follows with a
    // single that is not among its legal plays.
    let h = hints(&mut c, &g.game_id, token).await;
    let top = h
        .plays
        .iter()
        .rfind(|pl| pl.type_name == "single")
        .expect("a single to lead")
        .clone();
    let r = submit(&mut c, token, play_req(&g.game_id, p, &top, st.seq))
        .await
        .expect("lead a single")
        .into_inner();
    let st = state(&mut c, &g.game_id, ADMIN_KEY).await;
    assert_eq!(st.seq, r.seq);
    let next = turn_player(&st);
    let next_token = &g.seat_tokens[next as usize];
    let legal: Vec<u32> = hints(&mut c, &g.game_id, next_token)
        .await
        .plays
        .iter()
        .filter(|pl| pl.cards.len() == 1)
        .map(|pl| rank_of(pl.cards[0]))
        .collect();
    let hand = state(&mut c, &g.game_id, next_token).await.hand;
    let weak = hand
        .iter()
        .copied()
        .find(|&id| !legal.contains(&rank_of(id)))
        .unwrap_or_else(|| panic!("seed {seed}: every card of the next seat beats {top:?}"));
    expect_reject(
        submit(&mut c, next_token, cards_req(&g, next, vec![weak])).await,
        Code::FailedPrecondition,
        "DOES_NOT_BEAT",
    );
    unchanged(&mut c, &g, st.seq).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn game_over_after_the_match_ends() {
    let (mut c, g, st, p) = first_turn(104).await;
    let leaver = (p + 1) % 4;
    let r = c
        .leave_game(authed(
            leave_req(&g.game_id),
            &g.seat_tokens[leaver as usize],
        ))
        .await
        .expect("LeaveGame")
        .into_inner();
    assert_eq!(r.seq, st.seq + 1);
    let token = &g.seat_tokens[p as usize];
    let hand = state(&mut c, &g.game_id, token).await.hand;
    expect_reject(
        submit(&mut c, token, cards_req(&g, p, vec![hand[0]])).await,
        Code::FailedPrecondition,
        "GAME_OVER",
    );
    expect_reject(
        c.get_hints(authed(hints_req(&g.game_id), token)).await,
        Code::FailedPrecondition,
        "GAME_OVER",
    );
    expect_reject(
        c.leave_game(authed(leave_req(&g.game_id), token)).await,
        Code::FailedPrecondition,
        "GAME_OVER",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_seq_is_aborted_with_the_current_seq() {
    let (mut c, g, st, p) = first_turn(105).await;
    let token = &g.seat_tokens[p as usize];
    let h = hints(&mut c, &g.game_id, token).await;
    let s = expect_reject(
        submit(
            &mut c,
            token,
            play_req(&g.game_id, p, &h.plays[0], st.seq + 7),
        )
        .await,
        Code::Aborted,
        "STALE_SEQ",
    );
    assert_eq!(metadata(&s, "current_seq"), Some(st.seq.to_string()));
    assert!(s.message().contains(&st.seq.to_string()), "{}", s.message());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_such_game_is_not_found() {
    let mut c = shared_client().await;
    expect_reject(
        c.get_state(authed(state_req("0123456789abcdef01234567"), ADMIN_KEY))
            .await,
        Code::NotFound,
        "NO_SUCH_GAME",
    );
    expect_reject(
        c.get_replay(authed(replay_req("0123456789abcdef01234567"), ""))
            .await,
        Code::NotFound,
        "NO_SUCH_GAME",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_is_game_in_progress_until_the_match_ends() {
    let mut c = shared_client().await;
    let g = new_game(&mut c, "classic", 106).await;
    expect_reject(
        c.get_replay(authed(replay_req(&g.game_id), "")).await,
        Code::FailedPrecondition,
        "GAME_IN_PROGRESS",
    );
    expect_reject(
        c.get_replay(authed(replay_req(&g.game_id), &g.seat_tokens[0]))
            .await,
        Code::FailedPrecondition,
        "GAME_IN_PROGRESS",
    );
    // The admin may read it at any time.
    let r = get_replay(&mut c, &g.game_id, ADMIN_KEY).await;
    assert_eq!(r.seed, game_seed(106));
}

/// A server of its own: open (no keys) and at most two games in progress.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_mode_and_the_games_limit() {
    let server = TestServer::start(|c| c.max_games = 2).await;
    let mut c = server.client().await;
    // Open: anyone creates, with the admin extras; the operators' service is open too.
    let a = create(&mut c, "", create_req("classic", 1, Some(7))).await;
    create(&mut c, "", create_req("erren", 1, None)).await;
    expect_reject(
        c.create_game(authed(create_req("classic", 1, None), ""))
            .await,
        Code::ResourceExhausted,
        "LIMIT_EXCEEDED",
    );
    // A finished game frees its place.
    let (st, p) = {
        let st = state(&mut c, &a.game_id, &a.seat_tokens[0]).await;
        let p = turn_player(&st);
        (st, p)
    };
    let r = c
        .leave_game(authed(leave_req(&a.game_id), &a.seat_tokens[p as usize]))
        .await
        .expect("leave")
        .into_inner();
    assert_eq!(r.seq, st.seq + 1);
    create(&mut c, "", create_req("classic", 1, None)).await;
    let mut admin = VariantAdminClient::new(server.channel().await);
    let v = admin
        .validate_variant(authed(
            pb::ValidateVariantRequest {
                source: "not a script".into(),
                file_name: "x.rhai".into(),
            },
            "",
        ))
        .await
        .expect("open operators' service")
        .into_inner();
    assert!(!v.ok && !v.errors.is_empty());
}

// ---------------------------------------------------------------- authentication

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seat_tokens_are_bound_to_their_seat_and_game() {
    let mut c = shared_client().await;
    let g = new_game(&mut c, "classic", 201).await;
    let other_game = new_game(&mut c, "classic", 202).await;
    let (st, p) = turn(&mut c, &g).await;
    let h = hints(&mut c, &g.game_id, &g.seat_tokens[p as usize]).await;
    // Another seat's token (acting as the seat to play).
    let wrong = &g.seat_tokens[((p + 1) % 4) as usize];
    expect_reject(
        submit(&mut c, wrong, play_req(&g.game_id, p, &h.plays[0], 0)).await,
        Code::PermissionDenied,
        "PERMISSION_DENIED_TOKEN",
    );
    // Another game's token, on every rpc of a game.
    let foreign = &other_game.seat_tokens[p as usize];
    expect_reject(
        submit(&mut c, foreign, play_req(&g.game_id, p, &h.plays[0], 0)).await,
        Code::PermissionDenied,
        "PERMISSION_DENIED_TOKEN",
    );
    let gid = || g.game_id.clone();
    expect_reject(
        c.get_state(authed(state_req(&gid()), foreign)).await,
        Code::PermissionDenied,
        "PERMISSION_DENIED_TOKEN",
    );
    expect_reject(
        c.get_hints(authed(hints_req(&gid()), foreign)).await,
        Code::PermissionDenied,
        "PERMISSION_DENIED_TOKEN",
    );
    expect_reject(
        c.leave_game(authed(leave_req(&gid()), foreign)).await,
        Code::PermissionDenied,
        "PERMISSION_DENIED_TOKEN",
    );
    expect_reject(
        c.watch_game(authed(watch_req(&gid(), 0), foreign)).await,
        Code::PermissionDenied,
        "PERMISSION_DENIED_TOKEN",
    );
    // The spectator token watches and reads, but cannot act or ask for hints.
    let spec = &g.spectator_token;
    let seen = state(&mut c, &g.game_id, spec).await;
    assert!(seen.hand.is_empty() && seen.partner_hand.is_empty() && seen.your_seat.is_none());
    expect_reject(
        submit(&mut c, spec, play_req(&g.game_id, p, &h.plays[0], 0)).await,
        Code::PermissionDenied,
        "PERMISSION_DENIED_TOKEN",
    );
    expect_reject(
        c.get_hints(authed(hints_req(&gid()), spec)).await,
        Code::PermissionDenied,
        "PERMISSION_DENIED_TOKEN",
    );
    expect_reject(
        c.leave_game(authed(leave_req(&gid()), spec)).await,
        Code::PermissionDenied,
        "PERMISSION_DENIED_TOKEN",
    );
    // Nothing happened.
    unchanged(&mut c, &g, st.seq).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_or_invalid_tokens_are_unauthenticated_and_told_apart() {
    let mut c = shared_client().await;
    let g = new_game(&mut c, "classic", 203).await;
    let other_game = new_game(&mut c, "classic", 204).await;
    let forged_here = format!("{}.p0.{}", g.game_id, "0".repeat(32));
    let forged_there = format!("{}.p0.{}", other_game.game_id, "0".repeat(32));
    let no_game = format!("{}.p0.{}", "feedfeedfeedfeedfeedfeed", "0".repeat(32));
    let bad_seat = g.seat_tokens[0].replacen(".p0.", ".p9.", 1);
    for token in [
        "",
        "nonsense",
        forged_here.as_str(),
        forged_there.as_str(),
        no_game.as_str(),
        bad_seat.as_str(),
    ] {
        // No credential is UNAUTHENTICATED_TOKEN; one that is not valid, INVALID_TOKEN.
        let reason = match token.is_empty() {
            true => "UNAUTHENTICATED_TOKEN",
            false => "INVALID_TOKEN",
        };
        let s = expect_reject(
            c.get_state(authed(state_req(&g.game_id), token)).await,
            Code::Unauthenticated,
            reason,
        );
        assert!(
            token.is_empty() || !s.message().contains(token),
            "a token is echoed: {s:?}"
        );
        expect_reject(
            submit(&mut c, token, pass_req(&g.game_id, 0, 0)).await,
            Code::Unauthenticated,
            reason,
        );
        // An unknown game is NOT_FOUND whatever the credential.
        expect_reject(
            c.get_state(authed(state_req("0123456789abcdef01234567"), token))
                .await,
            Code::NotFound,
            "NO_SUCH_GAME",
        );
    }
    // A token with a wrong secret is unknown even for its own seat.
    let mut wrong_secret = g.seat_tokens[1].clone();
    let last = wrong_secret.pop().expect("a token");
    wrong_secret.push(if last == '0' { '1' } else { '0' });
    expect_reject(
        c.get_hints(authed(hints_req(&g.game_id), &wrong_secret))
            .await,
        Code::Unauthenticated,
        "INVALID_TOKEN",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creating_games_needs_a_platform_key_when_keys_are_configured() {
    let mut c = shared_client().await;
    let g = new_game(&mut c, "classic", 205).await;
    expect_reject(
        c.create_game(authed(create_req("classic", 1, None), ""))
            .await,
        Code::Unauthenticated,
        "UNAUTHENTICATED_TOKEN",
    );
    expect_reject(
        c.create_game(authed(
            create_req("classic", 1, None),
            "not-a-configured-key",
        ))
        .await,
        Code::Unauthenticated,
        "INVALID_TOKEN",
    );
    expect_reject(
        c.create_game(authed(create_req("classic", 1, None), &g.seat_tokens[0]))
            .await,
        Code::PermissionDenied,
        "PERMISSION_DENIED_TOKEN",
    );
    let made = create(&mut c, ACME_KEY, create_req("classic", 1, None)).await;
    assert_eq!(made.seat_tokens.len(), 4);
    assert!(!made.spectator_token.is_empty());
    assert_eq!(made.seed_commitment.len(), 64);
    // Seeds and preset hands are admin-only.
    expect_reject(
        c.create_game(authed(create_req("classic", 1, Some(1)), ACME_KEY))
            .await,
        Code::PermissionDenied,
        "PERMISSION_DENIED_TOKEN",
    );
    let mut req = create_req("classic", 1, None);
    req.preset_hands = Some(pb::PresetHands::default());
    expect_reject(
        c.create_game(authed(req, ACME_KEY)).await,
        Code::PermissionDenied,
        "PERMISSION_DENIED_TOKEN",
    );
    // A platform key does not act in games.
    expect_reject(
        c.get_state(authed(state_req(&made.game_id), ACME_KEY))
            .await,
        Code::PermissionDenied,
        "PERMISSION_DENIED_TOKEN",
    );
    // The operators' service: the admin key only.
    let addr = tokio::task::spawn_blocking(shared).await.expect("shared");
    let mut admin = VariantAdminClient::new(channel(addr).await);
    let req = || pb::ValidateVariantRequest {
        source: "fn meta() { 1 }".into(),
        file_name: "x.rhai".into(),
    };
    expect_reject(
        admin.validate_variant(authed(req(), "")).await,
        Code::Unauthenticated,
        "UNAUTHENTICATED_TOKEN",
    );
    expect_reject(
        admin.validate_variant(authed(req(), ACME_KEY)).await,
        Code::PermissionDenied,
        "PERMISSION_DENIED_TOKEN",
    );
    expect_reject(
        admin
            .validate_variant(authed(req(), &g.seat_tokens[0]))
            .await,
        Code::PermissionDenied,
        "PERMISSION_DENIED_TOKEN",
    );
    let v = admin
        .validate_variant(authed(req(), ADMIN_KEY))
        .await
        .expect("admin validates")
        .into_inner();
    assert!(!v.ok);
    // ListVariants: anyone.
    let list = c
        .list_variants(authed(pb::ListVariantsRequest {}, ""))
        .await
        .expect("ListVariants")
        .into_inner();
    let ids: Vec<&str> = list.variants.iter().map(|v| v.id.as_str()).collect();
    for v in VARIANTS {
        assert!(ids.contains(&v), "{v} in {ids:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn games_of_one_platform_are_invisible_to_another() {
    let mut c = shared_client().await;
    let rid = format!("order-{}", test_seed(206));
    let mut req = create_req("classic", 1, None);
    req.request_id = rid.clone();
    let acme = create(&mut c, ACME_KEY, req.clone()).await;
    // The same request again: the same game and tokens. Another platform's same request id is
    // its own game.
    let again = create(&mut c, ACME_KEY, req.clone()).await;
    assert_eq!(again, acme);
    let other = create(&mut c, OTHER_KEY, req.clone()).await;
    assert_ne!(other.game_id, acme.game_id);
    assert!(
        other
            .seat_tokens
            .iter()
            .all(|t| !acme.seat_tokens.contains(t))
    );

    let unknown = "00aa00aa00aa00aa00aa00aa";
    // In progress: the owner hears GAME_IN_PROGRESS; the other platform hears exactly what it
    // hears for a game that does not exist.
    expect_reject(
        c.get_replay(authed(replay_req(&acme.game_id), ACME_KEY))
            .await,
        Code::FailedPrecondition,
        "GAME_IN_PROGRESS",
    );
    expect_reject(
        c.get_replay(authed(replay_req(&acme.game_id), OTHER_KEY))
            .await,
        Code::NotFound,
        "NO_SUCH_GAME",
    );
    expect_reject(
        c.get_replay(authed(replay_req(unknown), OTHER_KEY)).await,
        Code::NotFound,
        "NO_SUCH_GAME",
    );
    // A platform key reads no state; an unknown game is NOT_FOUND whatever the credential.
    for (id, code, reason) in [
        (
            acme.game_id.as_str(),
            Code::PermissionDenied,
            "PERMISSION_DENIED_TOKEN",
        ),
        (unknown, Code::NotFound, "NO_SUCH_GAME"),
    ] {
        expect_reject(
            c.get_state(authed(state_req(id), OTHER_KEY)).await,
            code,
            reason,
        );
    }
    // Finished: the owner reads the replay, the other platform still sees nothing.
    let st = state(&mut c, &acme.game_id, &acme.seat_tokens[0]).await;
    let p = turn_player(&st);
    leave(&mut c, &acme.game_id, &acme.seat_tokens[p as usize])
        .await
        .expect("leave");
    let r = get_replay(&mut c, &acme.game_id, ACME_KEY).await;
    assert_eq!(r.actions.len(), 1);
    expect_reject(
        c.get_replay(authed(replay_req(&acme.game_id), OTHER_KEY))
            .await,
        Code::NotFound,
        "NO_SUCH_GAME",
    );
    // The other platform's tokens do not open acme's game either.
    expect_reject(
        c.get_state(authed(state_req(&acme.game_id), &other.seat_tokens[0]))
            .await,
        Code::PermissionDenied,
        "PERMISSION_DENIED_TOKEN",
    );
}

// ---------------------------------------------------------------- exactly-once plays

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_request_id_returns_the_original_result_without_acting_again() {
    let (mut c, g, st, p) = first_turn(301).await;
    let token = &g.seat_tokens[p as usize];
    let h = hints(&mut c, &g.game_id, token).await;
    let mut req = play_req(&g.game_id, p, &h.plays[0], st.seq);
    req.request_id = "same-key".into();
    let first = submit(&mut c, token, req.clone())
        .await
        .expect("play")
        .into_inner();
    assert_eq!(first.seq, st.seq + 1);
    let retry = submit(&mut c, token, req.clone())
        .await
        .expect("retry")
        .into_inner();
    assert_eq!(retry, first);
    unchanged(&mut c, &g, first.seq).await;

    // The game moves on; the retry still answers the original (its expected_seq is stale by
    // now) and acts on nothing.
    let st2 = state(&mut c, &g.game_id, ADMIN_KEY).await;
    let next = turn_player(&st2);
    let next_token = &g.seat_tokens[next as usize];
    let mut pass = pass_req(&g.game_id, next, st2.seq);
    // Request ids belong to the seat that sent them: another seat's same key acts.
    pass.request_id = "same-key".into();
    let passed = submit(&mut c, next_token, pass)
        .await
        .expect("pass")
        .into_inner();
    assert_eq!(
        passed.seq,
        first.seq + 1,
        "another seat's request with the same key must act"
    );
    let late = submit(&mut c, token, req.clone())
        .await
        .expect("late retry")
        .into_inner();
    assert_eq!(late, first);
    // The same key with other cards is another request: refused, and nothing acts.
    let mut changed = req.clone();
    changed.cards = h.plays.last().expect("a hint").cards.clone();
    changed.declared = None;
    let s = expect_reject(
        submit(&mut c, token, changed).await,
        Code::AlreadyExists,
        "IDEMPOTENCY_CONFLICT",
    );
    assert!(
        !s.message().contains("same-key"),
        "the key is not echoed: {s:?}"
    );
    // Leaving under the key of a play is another request too.
    expect_reject(
        c.leave_game(authed(
            pb::LeaveGameRequest {
                game_id: g.game_id.clone(),
                request_id: "same-key".into(),
                ..Default::default()
            },
            token,
        ))
        .await,
        Code::AlreadyExists,
        "IDEMPOTENCY_CONFLICT",
    );
    // Without `seat`, the same request: the token decides the player.
    let mut seatless = req.clone();
    seatless.seat = None;
    let again = submit(&mut c, token, seatless)
        .await
        .expect("a retry without seat")
        .into_inner();
    assert_eq!(again, first);
    unchanged(&mut c, &g, passed.seq).await;
    let replay = get_replay(&mut c, &g.game_id, ADMIN_KEY).await;
    assert_eq!(replay.actions.len() as u64, passed.seq);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expected_seq_guards_against_acting_on_a_stale_state() {
    let (mut c, g, st, p) = first_turn(302).await;
    let token = &g.seat_tokens[p as usize];
    let h = hints(&mut c, &g.game_id, token).await;
    // 0: no check (the only way to act at seq 0).
    let r = submit(&mut c, token, play_req(&g.game_id, p, &h.plays[0], 0))
        .await
        .expect("no check")
        .into_inner();
    assert_eq!(r.seq, st.seq + 1);
    // The right seq: acts.
    let st = state(&mut c, &g.game_id, ADMIN_KEY).await;
    let next = turn_player(&st);
    let passed = submit(
        &mut c,
        &g.seat_tokens[next as usize],
        pass_req(&g.game_id, next, st.seq),
    )
    .await
    .expect("expected seq matches")
    .into_inner();
    assert_eq!(passed.seq, r.seq + 1);
    // The seq the previous player acted on is stale now: nothing happens.
    let st = state(&mut c, &g.game_id, ADMIN_KEY).await;
    let third = turn_player(&st);
    let s = expect_reject(
        submit(
            &mut c,
            &g.seat_tokens[third as usize],
            pass_req(&g.game_id, third, r.seq),
        )
        .await,
        Code::Aborted,
        "STALE_SEQ",
    );
    assert_eq!(metadata(&s, "current_seq"), Some(passed.seq.to_string()));
    unchanged(&mut c, &g, passed.seq).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_many_simultaneous_identical_plays_exactly_one_succeeds() {
    let (addr, mut c) = shared_addr_client().await;
    let g = new_game(&mut c, "classic", 303).await;
    // One play first: `expected_seq` 0 means "no check", so the race is run at seq 1.
    let (st, p) = turn(&mut c, &g).await;
    let token = g.seat_tokens[p as usize].clone();
    let h = hints(&mut c, &g.game_id, &token).await;
    submit(&mut c, &token, play_req(&g.game_id, p, &h.plays[0], st.seq))
        .await
        .expect("lead");
    let (st, p) = turn(&mut c, &g).await;
    assert_eq!(st.seq, 1);
    let token = g.seat_tokens[p as usize].clone();
    let h = hints(&mut c, &g.game_id, &token).await;
    let play = h
        .plays
        .first()
        .cloned()
        .unwrap_or_else(|| panic!("no play beats the lead: {h:?}"));
    const N: usize = 24;
    let mut channels = Vec::new();
    for _ in 0..4 {
        channels.push(channel(addr).await);
    }
    let barrier = Arc::new(tokio::sync::Barrier::new(N));
    let tasks: Vec<_> = (0..N)
        .map(|i| {
            let mut client = GameEngineClient::new(channels[i % channels.len()].clone());
            let mut req = play_req(&g.game_id, p, &play, st.seq);
            req.request_id = format!("concurrent-{i}");
            let (token, barrier) = (token.clone(), Arc::clone(&barrier));
            tokio::spawn(async move {
                barrier.wait().await;
                client.submit_play(authed(req, &token)).await
            })
        })
        .collect();
    let mut ok = Vec::new();
    let mut stale = 0;
    for t in tasks {
        match t.await.expect("task") {
            Ok(r) => ok.push(r.into_inner()),
            Err(s) => {
                assert_eq!(
                    (s.code(), reason_of(&s).as_deref()),
                    (Code::Aborted, Some("STALE_SEQ")),
                    "{s:?}"
                );
                assert_eq!(metadata(&s, "current_seq"), Some((st.seq + 1).to_string()));
                stale += 1;
            }
        }
    }
    assert_eq!(ok.len(), 1, "exactly one success");
    assert_eq!(stale, N - 1);
    assert_eq!(ok[0].seq, st.seq + 1);
    assert_eq!(state(&mut c, &g.game_id, ADMIN_KEY).await.seq, st.seq + 1);

    // The same request sent many times at once (one request id): all get the one result.
    let st = state(&mut c, &g.game_id, ADMIN_KEY).await;
    let next = turn_player(&st);
    let next_token = g.seat_tokens[next as usize].clone();
    let barrier = Arc::new(tokio::sync::Barrier::new(8));
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let mut client = GameEngineClient::new(channels[i % channels.len()].clone());
            let mut req = pass_req(&g.game_id, next, st.seq);
            req.request_id = "one-pass".into();
            let (token, barrier) = (next_token.clone(), Arc::clone(&barrier));
            tokio::spawn(async move {
                barrier.wait().await;
                client.submit_play(authed(req, &token)).await
            })
        })
        .collect();
    let mut results = Vec::new();
    for t in tasks {
        results.push(
            t.await
                .expect("task")
                .expect("the same request")
                .into_inner(),
        );
    }
    assert!(
        results
            .iter()
            .all(|r| *r == results[0] && r.seq == st.seq + 1)
    );
    assert_eq!(state(&mut c, &g.game_id, ADMIN_KEY).await.seq, st.seq + 1);
}

// ---------------------------------------------------------------- WatchGame resume

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_watch_resumes_from_the_last_seq_without_gap_or_duplicate() {
    let seed = test_seed(401);
    let (addr, mut c, g, players) = shared_match_until("classic", 1, seed, 40).await;
    let token = g.seat_tokens[1].clone();
    let watch = |from_seq: u64| {
        let (addr, game_id, token) = (addr, g.game_id.clone(), token.clone());
        async move {
            GameEngineClient::new(channel(addr).await)
                .watch_game(authed(
                    pb::WatchGameRequest {
                        game_id,
                        from_seq,
                        cursor: String::new(),
                    },
                    &token,
                ))
                .await
                .expect("WatchGame")
                .into_inner()
        }
    };
    // Receive until an event of a seq after 10 arrives: everything of the seqs before it is
    // complete. That event is lost with the connection, which drops mid-deal.
    let mut first = watch(0).await;
    let mut kept = Vec::new();
    let last = within(Duration::from_secs(120), "events past seq 10", async {
        loop {
            let ev = first.message().await.expect("stream").expect("an event");
            let prev = kept.last().map(|e: &pb::GameEvent| e.seq);
            if prev.is_some_and(|p| p >= 10 && ev.seq > p) {
                break prev.expect("a previous event");
            }
            kept.push(ev);
        }
    })
    .await;
    drop(first);
    // The game goes on meanwhile.
    let mut st = state(&mut c, &g.game_id, &token).await;
    within(Duration::from_secs(120), "ten more plays", async {
        while st.seq < last + 10 {
            tokio::time::sleep(Duration::from_millis(20)).await;
            st = state(&mut c, &g.game_id, &token).await;
        }
    })
    .await;
    assert_eq!(st.phase, pb::Phase::Playing as i32, "still mid-deal");
    let mut second = watch(last).await;
    let mut resumed = Vec::new();
    within(
        Duration::from_secs(120),
        "the resumed stream up to seq 40",
        async {
            while resumed.last().is_none_or(|e: &pb::GameEvent| e.seq < 40) {
                resumed.push(second.message().await.expect("stream").expect("an event"));
            }
        },
    )
    .await;
    for p in players {
        within(Duration::from_secs(300), "the players' tasks", p)
            .await
            .expect("player task")
            .expect("player");
    }
    // Compared with one uninterrupted stream of the same viewer.
    let mut full_stream = watch(0).await;
    let mut full = Vec::new();
    within(
        Duration::from_secs(120),
        "the full stream up to seq 40",
        async {
            while full.last().is_none_or(|e: &pb::GameEvent| e.seq < 40) {
                full.push(
                    full_stream
                        .message()
                        .await
                        .expect("stream")
                        .expect("an event"),
                );
            }
        },
    )
    .await;
    let joined: Vec<_> = kept.iter().chain(resumed.iter()).cloned().collect();
    assert_eq!(
        resumed[0].seq,
        last + 1,
        "seed {seed}: resumed after {last}"
    );
    assert_eq!(joined, full, "seed {seed}: dropped after seq {last}");
}

// ---------------------------------------------------------------- no seat↔player translation

/// A 雙明 (jj) game whose first deal does not seat player i at seat i, and its state.
async fn shuffled_seating(c: &mut Client) -> (pb::CreateGameResponse, pb::GetStateResponse) {
    for seed in 400..460 {
        let g = new_game(c, "jj", seed).await;
        let st = state(c, &g.game_id, ADMIN_KEY).await;
        if st.seats.iter().any(|s| s.seat != s.player) {
            return (g, st);
        }
    }
    panic!("no jj seed in 400..460 seats a player away from its index");
}

/// The token decides the player: a play without `seat` acts for the token's player; a `seat`
/// that names another player is refused naming the token's player and its seat; a play out of
/// turn names both players and their seats — all read against GetState's seating (the oracle),
/// in a game whose seats are not the player indexes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_play_needs_no_seat_and_errors_name_the_player_and_its_seat() {
    let mut c = shared_client().await;
    let (g, st) = shuffled_seating(&mut c).await;
    let seat_of = |p: u32| {
        st.seats
            .iter()
            .find(|s| s.player == p)
            .expect("seated")
            .seat
    };
    let to_act = turn_player(&st);
    let waiting = (0..4).find(|&p| p != to_act).expect("another player");
    let own = state(&mut c, &g.game_id, &g.seat_tokens[waiting as usize])
        .await
        .hand;
    let mut req = cards_req(&g, waiting, vec![own[0]]);
    req.seat = None;
    let s = expect_reject(
        submit(&mut c, &g.seat_tokens[waiting as usize], req).await,
        Code::FailedPrecondition,
        "NOT_YOUR_TURN",
    );
    let expected = format!(
        "it is player {to_act}'s turn (seat {}), not player {waiting}'s (seat {})",
        st.turn_seat.expect("a seat to act"),
        seat_of(waiting)
    );
    assert!(s.message().contains(&expected), "{s:?} lacks {expected:?}");

    // A `seat` naming another player than the token's.
    let t = &g.seat_tokens[to_act as usize];
    let h = hints(&mut c, &g.game_id, t).await;
    let mut wrong = play_req(&g.game_id, waiting, &h.plays[0], st.seq);
    let s = expect_reject(
        submit(&mut c, t, wrong.clone()).await,
        Code::PermissionDenied,
        "PERMISSION_DENIED_TOKEN",
    );
    let expected = format!("player {to_act} (seat {})", seat_of(to_act));
    assert!(s.message().contains(&expected), "{s:?} lacks {expected:?}");

    // Without `seat`, the token's player plays.
    wrong.seat = None;
    let r = submit(&mut c, t, wrong)
        .await
        .expect("a seatless play")
        .into_inner();
    assert_eq!(r.seq, st.seq + 1);
    let Some(pb::game_event::Event::Played(played)) = r.events.iter().find_map(|e| e.event.clone())
    else {
        panic!("the play's first event is Played: {:?}", r.events);
    };
    assert_eq!(played.seat, seat_of(to_act));
}

/// `expected_seq` present and 0 guards the first action: at seq 0 it acts, and the same guard
/// again (the game is at seq 1 now) is STALE_SEQ; absent, nothing is checked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_present_expected_seq_of_zero_guards_the_first_action() {
    let (mut c, g, st, p) = first_turn(310).await;
    assert_eq!(st.seq, 0);
    let t = &g.seat_tokens[p as usize];
    let h = hints(&mut c, &g.game_id, t).await;
    let mut req = play_req(&g.game_id, p, &h.plays[0], 0);
    req.seat = None;
    req.expected_seq = Some(1);
    let s = expect_reject(
        submit(&mut c, t, req.clone()).await,
        Code::Aborted,
        "STALE_SEQ",
    );
    assert_eq!(metadata(&s, "current_seq").as_deref(), Some("0"));
    req.expected_seq = Some(0);
    let first = submit(&mut c, t, req)
        .await
        .expect("the guarded first play");
    assert_eq!(first.into_inner().seq, 1);
    // Another first action, guarded by seq 0, lost the race.
    let (st, n) = turn(&mut c, &g).await;
    let mut late = pass_req(&g.game_id, n, 0);
    late.expected_seq = Some(0);
    let s = expect_reject(
        submit(&mut c, &g.seat_tokens[n as usize], late.clone()).await,
        Code::Aborted,
        "STALE_SEQ",
    );
    assert_eq!(metadata(&s, "current_seq").as_deref(), Some("1"));
    // Absent: no check.
    late.expected_seq = None;
    let r = submit(&mut c, &g.seat_tokens[n as usize], late).await;
    assert_eq!(r.expect("an unguarded pass").into_inner().seq, st.seq + 1);
}

/// A request id is at most 128 bytes on every rpc that takes one: 129 is BAD_REQUEST and acts
/// on nothing, 128 is accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_ids_are_at_most_128_bytes() {
    let mut c = shared_client().await;
    let long = "r".repeat(129);
    let mut req = create_req("classic", 1, None);
    req.request_id = long.clone();
    expect_reject(
        c.create_game(authed(req.clone(), ADMIN_KEY)).await,
        Code::InvalidArgument,
        "BAD_REQUEST",
    );
    req.request_id = "c".repeat(128);
    let g = create(&mut c, ADMIN_KEY, req).await;
    let (st, p) = turn(&mut c, &g).await;
    let t = &g.seat_tokens[p as usize];
    let h = hints(&mut c, &g.game_id, t).await;
    let mut play = play_req(&g.game_id, p, &h.plays[0], st.seq);
    play.request_id = long.clone();
    let s = expect_reject(
        submit(&mut c, t, play.clone()).await,
        Code::InvalidArgument,
        "BAD_REQUEST",
    );
    assert!(s.message().contains("129 bytes"), "{s:?}");
    expect_reject(
        c.leave_game(authed(
            pb::LeaveGameRequest {
                game_id: g.game_id.clone(),
                request_id: long,
                ..Default::default()
            },
            t,
        ))
        .await,
        Code::InvalidArgument,
        "BAD_REQUEST",
    );
    unchanged(&mut c, &g, st.seq).await;
    play.request_id = "p".repeat(128);
    submit(&mut c, t, play)
        .await
        .expect("a 128-byte request id");
}

/// CreateGame under a used request id: the same request gets the same game and tokens; another
/// request (another variant, other deals) is IDEMPOTENCY_CONFLICT and creates nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_create_reusing_a_request_id_for_another_request_is_a_conflict() {
    let mut c = shared_client().await;
    let mut req = create_req("classic", 2, None);
    req.request_id = "create-conflict-1".into();
    let first = create(&mut c, ACME_KEY, req.clone()).await;
    let again = create(&mut c, ACME_KEY, req.clone()).await;
    assert_eq!(again, first);
    let changes: [fn(&mut pb::CreateGameRequest); 3] = [
        |r: &mut pb::CreateGameRequest| r.variant = "jj".into(),
        |r: &mut pb::CreateGameRequest| r.deals = 3,
        |r: &mut pb::CreateGameRequest| {
            r.options.insert("deals_per_match".into(), "2".into());
        },
    ];
    for change in changes {
        let mut other = req.clone();
        change(&mut other);
        expect_reject(
            c.create_game(authed(other, ACME_KEY)).await,
            Code::AlreadyExists,
            "IDEMPOTENCY_CONFLICT",
        );
    }
    // Another platform's same key is another request.
    let theirs = create(&mut c, OTHER_KEY, req).await;
    assert_ne!(theirs.game_id, first.game_id);
}

/// A retried LeaveGame under its request id answers the first result and does not act again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_leave_returns_the_first_result() {
    let mut c = shared_client().await;
    let g = new_game(&mut c, "classic", 311).await;
    let req = pb::LeaveGameRequest {
        game_id: g.game_id.clone(),
        request_id: "leave-1".into(),
        ..Default::default()
    };
    let first = c
        .leave_game(authed(req.clone(), &g.seat_tokens[2]))
        .await
        .expect("leave")
        .into_inner();
    let again = c
        .leave_game(authed(req, &g.seat_tokens[2]))
        .await
        .expect("the retried leave")
        .into_inner();
    assert_eq!(again, first);
    unchanged(&mut c, &g, first.seq).await;
}

/// Results by player as well as by seat: the escape settlement of a leave, re-indexed through
/// the deal's seating, names the leaver (a player the test chose) as the escaped player.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deal_results_carry_by_player_scores_and_places() {
    let mut c = shared_client().await;
    let (g, st) = shuffled_seating(&mut c).await;
    let leaver = st
        .seats
        .iter()
        .find(|s| s.seat != s.player)
        .expect("a player away from its index")
        .player;
    let r = c
        .leave_game(authed(
            leave_req(&g.game_id),
            &g.seat_tokens[leaver as usize],
        ))
        .await
        .expect("leave")
        .into_inner();
    let d = r.deal_result.expect("the escape settlement");
    assert_eq!(d.escaped_player, Some(leaver));
    let seat = d.escaped.expect("the escaped seat");
    assert_eq!(d.players[seat as usize], leaver);
    assert_ne!(
        seat, leaver,
        "the test needs a seat that is not the player index"
    );
    assert_eq!(d.player_scores.len(), d.scores.len());
    for (s, &p) in d.players.iter().enumerate() {
        assert_eq!(
            d.player_scores[p as usize], d.scores[s],
            "seat {s}, player {p}"
        );
    }
    let places: Vec<u32> = d.places.iter().map(|&s| d.players[s as usize]).collect();
    assert_eq!(d.player_places, places);
}

/// GetState carries the options the game was created with.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_state_carries_the_games_options() {
    let mut c = shared_client().await;
    // The deal count given once, by the option (with `deals` too they must agree: issue 41).
    let mut req = create_req("classic", 0, None);
    req.options.insert("deals_per_match".into(), "3".into());
    let g = create(&mut c, ADMIN_KEY, req.clone()).await;
    let st = state(&mut c, &g.game_id, &g.spectator_token).await;
    assert_eq!(st.options, req.options);
}

/// ListVariants' option schema is structured: every option's type is one of the script types,
/// a choice lists its choices (the default among them), numbers and lists have their range, a
/// list its length (the default within both), read back against what the variant accepts: each
/// option's default, sent as CreateGame would send it, creates a game.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_variants_gives_a_structured_option_schema() {
    let mut c = shared_client().await;
    let list = c
        .list_variants(authed(pb::ListVariantsRequest {}, ""))
        .await
        .expect("ListVariants")
        .into_inner();
    let (mut choices, mut lists) = (0, 0);
    for v in &list.variants {
        for o in &v.options {
            let what = format!("{}.{}", v.id, o.name);
            let num = |s: &str| s.parse::<f64>().unwrap_or_else(|_| panic!("{what}: {s:?}"));
            match o.r#type.as_str() {
                "choice" => {
                    choices += 1;
                    assert!(o.choices.contains(&o.default_value), "{what}: {o:?}");
                }
                "int_list" => {
                    lists += 1;
                    let inner = o
                        .default_value
                        .trim_start_matches('[')
                        .trim_end_matches(']');
                    let items: Vec<f64> = inner.split(',').map(num).collect();
                    let n = items.len() as u32;
                    assert!(o.min_length <= n && n <= o.max_length, "{what}: {o:?}");
                    assert!(
                        items.iter().all(|&x| num(&o.min) <= x && x <= num(&o.max)),
                        "{what}"
                    );
                }
                "int" | "float" => {
                    let d = num(&o.default_value);
                    assert!(num(&o.min) <= d && d <= num(&o.max), "{what}: {o:?}");
                    assert!(o.choices.is_empty() && o.max_length == 0, "{what}");
                }
                "bool" => assert!(
                    ["true", "false"].contains(&o.default_value.as_str()),
                    "{what}"
                ),
                other => panic!("{what}: type {other:?}"),
            }
            // `deals` left to the option: given twice, the counts must agree (issue 41).
            let mut req = create_req(&v.id, 0, None);
            req.options.insert(o.name.clone(), o.default_value.clone());
            c.create_game(authed(req, ADMIN_KEY))
                .await
                .unwrap_or_else(|s| panic!("{what}: the default {:?}: {s:?}", o.default_value));
        }
    }
    assert!(
        choices > 0 && lists > 0,
        "the variants have choice and int_list options"
    );
}

/// Every page of ListGames for `key` with `page_size`: the game ids in order.
async fn listed(c: &mut Client, key: &str, page_size: u32) -> Vec<String> {
    let mut ids = Vec::new();
    let mut token = String::new();
    loop {
        let req = pb::ListGamesRequest {
            page_size,
            page_token: token,
        };
        let page = c.list_games(authed(req, key)).await.expect("ListGames");
        let page = page.into_inner();
        // 0: the default page of 50.
        assert!(
            page.games.len()
                <= if page_size == 0 {
                    50
                } else {
                    page_size as usize
                }
        );
        ids.extend(page.games.into_iter().map(|g| g.game_id));
        if page.next_page_token.is_empty() {
            return ids;
        }
        token = page.next_page_token;
    }
}

/// ListGames shows a platform its own games in progress only, the admin every game, page by
/// page without loss or repetition; a finished game leaves the list; a game token or no key is
/// refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_games_shows_a_platform_only_its_own_games() {
    let server = TestServer::start(|c| {
        c.api_keys = vec![format!("acme={ACME_KEY}"), format!("other={OTHER_KEY}")];
        c.admin_key = Some(ADMIN_KEY.into());
    })
    .await;
    let mut c = server.client().await;
    let mut acme = Vec::new();
    for _ in 0..5 {
        acme.push(create(&mut c, ACME_KEY, create_req("classic", 1, None)).await);
    }
    let mut other = Vec::new();
    for _ in 0..3 {
        other.push(create(&mut c, OTHER_KEY, create_req("jj", 1, None)).await);
    }
    let ids = |gs: &[pb::CreateGameResponse]| {
        let mut v: Vec<String> = gs.iter().map(|g| g.game_id.clone()).collect();
        v.sort();
        v
    };
    assert_eq!(listed(&mut c, ACME_KEY, 2).await, ids(&acme));
    assert_eq!(listed(&mut c, OTHER_KEY, 0).await, ids(&other));
    let all: Vec<_> = acme.iter().chain(&other).cloned().collect();
    assert_eq!(listed(&mut c, ADMIN_KEY, 3).await, ids(&all));
    // A finished game is not listed.
    leave(&mut c, &acme[0].game_id, &acme[0].seat_tokens[0])
        .await
        .expect("leave");
    assert_eq!(listed(&mut c, ACME_KEY, 50).await, ids(&acme[1..]));
    let page = c
        .list_games(authed(pb::ListGamesRequest::default(), OTHER_KEY))
        .await
        .expect("ListGames")
        .into_inner();
    assert!(
        page.games
            .iter()
            .all(|g| g.variant == "jj" && g.platform == "other")
    );
    for (key, code, reason) in [
        ("", Code::Unauthenticated, "UNAUTHENTICATED_TOKEN"),
        ("nonsense", Code::Unauthenticated, "INVALID_TOKEN"),
        (
            acme[1].seat_tokens[0].as_str(),
            Code::PermissionDenied,
            "PERMISSION_DENIED_TOKEN",
        ),
    ] {
        expect_reject(
            c.list_games(authed(pb::ListGamesRequest::default(), key))
                .await,
            code,
            reason,
        );
    }
}

/// AbortGame is admin-only; the admin's abort ends the match at once (GAME_OVER afterwards, no
/// deal settled), and the replay — open to anyone now — ends with the `abort` action and its
/// reason, and re-executes and verifies with the core.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_game_is_admin_only_and_the_abort_replays() {
    let (mut c, g, st, p) = first_turn(320).await;
    let t = &g.seat_tokens[p as usize];
    let h = hints(&mut c, &g.game_id, t).await;
    submit(&mut c, t, play_req(&g.game_id, p, &h.plays[0], st.seq))
        .await
        .expect("a play");
    let abort = |reason: &str| pb::AbortGameRequest {
        game_id: g.game_id.clone(),
        reason: reason.into(),
    };
    for (key, code, reason) in [
        (ACME_KEY, Code::PermissionDenied, "PERMISSION_DENIED_TOKEN"),
        (
            t.as_str(),
            Code::PermissionDenied,
            "PERMISSION_DENIED_TOKEN",
        ),
        ("", Code::Unauthenticated, "UNAUTHENTICATED_TOKEN"),
        ("nonsense", Code::Unauthenticated, "INVALID_TOKEN"),
    ] {
        expect_reject(
            c.abort_game(authed(abort("not yours"), key)).await,
            code,
            reason,
        );
    }
    expect_reject(
        c.abort_game(authed(abort(""), ADMIN_KEY)).await,
        Code::InvalidArgument,
        "BAD_REQUEST",
    );
    unchanged(&mut c, &g, 1).await;
    let r = c
        .abort_game(authed(abort("table reported cheating"), ADMIN_KEY))
        .await
        .expect("the admin aborts")
        .into_inner();
    assert_eq!(r.seq, 2);
    let after = state(&mut c, &g.game_id, &g.spectator_token).await;
    assert_eq!(after.phase, pb::Phase::Finished as i32);
    assert!(
        after.scores.expect("scores").deals.is_empty(),
        "no deal settled"
    );
    let n = turn_player(&st);
    expect_reject(
        submit(
            &mut c,
            &g.seat_tokens[n as usize],
            pass_req(&g.game_id, n, 0),
        )
        .await,
        Code::FailedPrecondition,
        "GAME_OVER",
    );
    expect_reject(
        c.abort_game(authed(abort("again"), ADMIN_KEY)).await,
        Code::FailedPrecondition,
        "GAME_OVER",
    );
    let (replay, rebuilt) = verified_replay(&mut c, &g.game_id, "").await;
    let last = replay.actions.last().expect("actions");
    assert_eq!(
        (last.kind.as_str(), last.reason.as_str()),
        ("abort", "table reported cheating")
    );
    assert_eq!(rebuilt.states.len(), 3);
    assert_eq!(rebuilt.last().phase(), shuangkou::game::Phase::Finished);
}
