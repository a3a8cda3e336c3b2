//! Bot seats (人機) over the wire: a match with three bot seats and one person playing through
//! its token, a table of bots only, and the validation of `CreateGameRequest.bots`. Every bot
//! play in the log is checked against the bot core's own decision from that seat's view at that
//! point (the oracle: `Bot::decide` on a `PlayerView` of the replayed state, seeded as the
//! service documents).

pub mod common;

use std::collections::HashMap;
use std::time::Duration;

use common::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use shuangkou::bot::{Bot, PlayerView};
use shuangkou::seat::Player;
use shuangkou::service::bots::decision_seed;
use shuangkou::service::pb;
use shuangkou::service::replay::{self, Replay};
use tonic::Code;

/// Checks every action of `players` in the match's replay against the bot's decision from the
/// view of the state before it; returns how many were checked.
fn check_bot_plays(
    replay: &pb::GetReplayResponse,
    commitment: &str,
    bots: &HashMap<u32, String>,
) -> usize {
    let r = Replay::try_from(replay).expect("replay converts");
    let verified = replay::verify(&r).expect("the replay verifies");
    let hooks = &verified.hooks;
    let (mut game, _) = shuangkou::game::Game::new(
        r.config.clone(),
        hooks,
        r.seed,
        r.preset().expect("preset"),
        r.created_at,
    )
    .expect("game");
    let mut checked = 0;
    for (i, e) in r.entries.iter().enumerate() {
        if let Some(name) = bots.get(&u32::from(e.player)) {
            let seat = game.seat_of(e.player).expect("seat");
            let view = PlayerView::new(&game, seat).expect("view");
            let bot = Bot::named(name, hooks).expect("bot");
            let mut rng = ChaCha8Rng::from_seed(decision_seed(commitment, i as u64, e.player));
            let expected = bot.decide(&view, hooks, &mut rng).action(game.hand(seat));
            assert_eq!(
                Some(e.action),
                expected,
                "entry {} of player {} ({name}) is not the bot's decision",
                i + 1,
                e.player
            );
            checked += 1;
        }
        game.apply(hooks, *e).expect("replays");
    }
    checked
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_with_three_bot_seats_is_played_by_the_server() {
    let seed = test_seed(15);
    let server = TestServer::start(keyed).await;
    let mut c = server.client().await;
    let bots: HashMap<u32, String> = [(1, "heuristic"), (2, "search:8"), (3, "greedy")]
        .into_iter()
        .map(|(p, n)| (p, n.to_string()))
        .collect();
    let mut req = create_req("classic", 2, Some(seed));
    req.bots = bots.clone();
    let g = create(&mut c, ADMIN_KEY, req).await;
    assert!(!g.seat_tokens[0].is_empty(), "the person has a token");
    for p in 1..4 {
        assert!(g.seat_tokens[p].is_empty(), "bot seat {p} has no token");
    }
    let st = state(&mut c, &g.game_id, &g.spectator_token).await;
    for s in &st.seats {
        let want = bots.get(&s.player).cloned().unwrap_or_default();
        assert_eq!(s.bot, want, "SeatState.bot of player {}", s.player);
    }

    // Nobody can act for a bot: there is no token, and the person's token is for its own seat.
    let mut bot_play = pass_req(&g.game_id, 1, 0);
    bot_play.pass = true;
    expect_reject(
        c.submit_play(authed(bot_play.clone(), "")).await,
        Code::Unauthenticated,
        "UNAUTHENTICATED_TOKEN",
    );
    expect_reject(
        c.submit_play(authed(bot_play, &g.seat_tokens[0])).await,
        Code::PermissionDenied,
        "PERMISSION_DENIED_TOKEN",
    );

    // The person plays through its token only; the server plays the other three.
    let policy = Policy {
        seed,
        pass_prob: 0.2,
        stop_at_seq: None,
    };
    let person = within(
        Duration::from_secs(300),
        "the person's match against three bots",
        play_as(
            server.addr,
            g.game_id.clone(),
            0,
            g.seat_tokens[0].clone(),
            policy,
        ),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(!person.submits.is_empty(), "the person played");
    let end = state(&mut c, &g.game_id, &g.spectator_token).await;
    assert_eq!(end.phase, pb::Phase::Finished as i32, "the match ended");

    let replay = get_replay(&mut c, &g.game_id, ADMIN_KEY).await;
    let checked = check_bot_plays(&replay, &g.seed_commitment, &bots);
    assert!(
        checked > person.submits.len(),
        "the bots acted ({checked} bot actions, {} by the person)",
        person.submits.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_of_bots_only_plays_itself_to_the_end() {
    let seed = test_seed(16);
    let server = TestServer::start(keyed).await;
    let mut c = server.client().await;
    let bots: HashMap<u32, String> = [(0, "douqi"), (1, "pingfan"), (2, "sasa"), (3, "basic")]
        .into_iter()
        .map(|(p, n)| (p, n.to_string()))
        .collect();
    let mut req = create_req("baibian", 1, Some(seed));
    req.bots = bots.clone();
    req.bot_delay_ms = 1;
    let g = create(&mut c, ADMIN_KEY, req).await;
    assert!(g.seat_tokens.iter().all(String::is_empty));
    let st = poll_until(
        Duration::from_secs(120),
        Duration::from_millis(200),
        "a table of bots to finish",
        async || {
            let st = state(&mut c, &g.game_id, &g.spectator_token).await;
            Some(st).filter(|st| st.phase == pb::Phase::Finished as i32)
        },
    )
    .await;
    let replay = get_replay(&mut c, &g.game_id, ADMIN_KEY).await;
    let checked = check_bot_plays(&replay, &g.seed_commitment, &bots);
    assert_eq!(checked as u64, st.seq, "every action is a bot's decision");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bot_seats_are_validated() {
    let server = TestServer::start(keyed).await;
    let mut c = server.client().await;
    // (variant, bot seats, bot delay, what the message says)
    type Case<'a> = (&'a str, &'a [(u32, &'a str)], u32, &'a str);
    let cases: [Case; 5] = [
        ("classic", &[(1, "grandmaster")], 0, "unknown bot"),
        ("classic", &[(4, "heuristic")], 0, "no player 4"),
        ("erren", &[(2, "greedy")], 0, "no player 2"),
        ("classic", &[(1, "search:0")], 0, "playouts"),
        ("classic", &[(1, "greedy")], 10_001, "bot_delay_ms"),
    ];
    for (variant, bots, delay, says) in cases {
        let mut req = create_req(variant, 1, None);
        req.bots = bots.iter().map(|(p, n)| (*p, n.to_string())).collect();
        req.bot_delay_ms = delay;
        let s = expect_reject(
            c.create_game(authed(req, ACME_KEY)).await,
            Code::InvalidArgument,
            "BAD_REQUEST",
        );
        assert!(
            s.message().contains(says),
            "{variant} {bots:?} {delay}: {}",
            s.message()
        );
    }
    // The largest delay is accepted.
    let mut req = create_req("erren", 1, None);
    req.bots = [(1, "heuristic".to_string())].into_iter().collect();
    req.bot_delay_ms = 10_000;
    let g = create(&mut c, ACME_KEY, req).await;
    assert_eq!(g.seat_tokens.len(), 2);
    assert!(g.seat_tokens[1].is_empty() && !g.seat_tokens[0].is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missed_deadline_is_played_by_the_auto_bot_as_an_automatic_play() {
    let seed = test_seed(17);
    let server = TestServer::start(|c| {
        c.no_turn_timers = false;
        keyed(c);
    })
    .await;
    let mut c = server.client().await;
    let mut req = create_req("classic", 1, Some(seed));
    req.options.insert("turn_seconds".into(), "5".into());
    let g = create(&mut c, ADMIN_KEY, req).await;
    let st = state(&mut c, &g.game_id, ADMIN_KEY).await;
    let leader = turn_player(&st);
    let after = poll_until(
        Duration::from_secs(20),
        Duration::from_millis(250),
        "a 托管 play after a 5 s deadline",
        async || Some(state(&mut c, &g.game_id, ADMIN_KEY).await).filter(|st| st.seq != 0),
    )
    .await;
    assert_ne!(turn_player(&after), leader, "the turn moved on");
    // The trick's top is the automatic lead (a play, not a pass: the leader must lead).
    assert!(after.trick.as_ref().and_then(|t| t.top.as_ref()).is_some());

    // End the match (an escape) and check the log: an automatic play of the cards the auto bot
    // (heuristic) chooses from the leader's view, and the replay verifies.
    let replay = escape_and_replay(&mut c, &g, &after).await;
    assert_eq!(replay.actions[0].kind, "auto");
    assert!(!replay.actions[0].cards.is_empty(), "a lead, not a pass");
    let rebuilt = rebuild(&replay).expect("the replay verifies");
    let first = rebuilt.entries[0];
    let game = &rebuilt.states[0];
    let seat = game.seat_of(first.player).expect("seat");
    let r = Replay::try_from(&replay).expect("replay");
    let hooks = r.builtin_hooks().expect("hooks");
    let bot = Bot::named("heuristic", &hooks).expect("bot");
    let view = PlayerView::new(game, seat).expect("view");
    let mut rng = ChaCha8Rng::from_seed(decision_seed(&g.seed_commitment, 0, first.player));
    let Some(shuangkou::game::Action::Play { cards, declared }) =
        bot.decide(&view, &hooks, &mut rng).action(game.hand(seat))
    else {
        panic!("the heuristic leads a play");
    };
    assert_eq!(
        first.action,
        shuangkou::game::Action::Auto { cards, declared },
        "the automatic play is the auto bot's decision"
    );
}

/// Hands of a classic deal from a seed: 27 cards each.
fn dealt(seed: u64) -> Vec<Vec<u32>> {
    use rand::seq::SliceRandom;
    let mut ids: Vec<u32> = (0..108).collect();
    ids.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    ids.chunks(27).map(<[u32]>::to_vec).collect()
}

async fn create_preset(
    c: &mut pb::game_engine_client::GameEngineClient<tonic::transport::Channel>,
    seed: u64,
    hands: &[Vec<u32>],
) -> pb::CreateGameResponse {
    let mut req = create_req("classic", 1, Some(seed));
    req.preset_hands = Some(pb::PresetHands {
        hands: hands
            .iter()
            .map(|h| pb::CardList { cards: h.clone() })
            .collect(),
    });
    create(c, ADMIN_KEY, req).await
}

#[allow(clippy::field_reassign_with_default)]
async fn suggestion(
    c: &mut pb::game_engine_client::GameEngineClient<tonic::transport::Channel>,
    game_id: &str,
    token: &str,
) -> pb::GetHintsResponse {
    // Built field by field: other fields of the request (paging) keep their defaults.
    let mut req = pb::GetHintsRequest::default();
    req.game_id = game_id.into();
    req.suggest = true;
    c.get_hints(authed(req, token))
        .await
        .expect("GetHints")
        .into_inner()
}

/// Every legal play of the caller, through every page of GetHints.
async fn all_hints(
    c: &mut pb::game_engine_client::GameEngineClient<tonic::transport::Channel>,
    game_id: &str,
    token: &str,
) -> Vec<pb::Play> {
    let mut plays = Vec::new();
    let mut page_token = String::new();
    // Bounded: a hand has at most a few tens of thousands of legal plays, 500 a page.
    for _ in 0..1000 {
        let req = pb::GetHintsRequest {
            limit: 500,
            page_token,
            ..hints_req(game_id)
        };
        let page = c
            .get_hints(authed(req, token))
            .await
            .expect("GetHints")
            .into_inner();
        plays.extend(page.plays);
        if page.next_page_token.is_empty() {
            return plays;
        }
        page_token = page.next_page_token;
    }
    panic!("GetHints never reached its last page");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_suggested_play_is_the_bots_decision_from_the_callers_view_only() {
    let seed = test_seed(18);
    let server = TestServer::start(keyed).await;
    let app = server.app.clone().expect("app");
    let mut c = server.client().await;
    let hands = dealt(seed);
    let a = create_preset(&mut c, seed, &hands).await;
    let st = state(&mut c, &a.game_id, ADMIN_KEY).await;
    let leader = turn_player(&st) as usize;
    let shown = st.shown_card.expect("a shown card");
    // The same deal with a card of each of two other players swapped (neither the shown card nor
    // its twin, which decide the seating): the leader's view is the same, the hidden cards not.
    let (p, q) = ((leader + 1) % 4, (leader + 3) % 4);
    let keep = |id: &u32| *id % 54 != shown % 54;
    let x = hands[p].iter().position(keep).expect("a card to swap");
    let y = hands[q].iter().position(keep).expect("a card to swap");
    let mut other = hands.clone();
    let (cx, cy) = (other[p][x], other[q][y]);
    other[p][x] = cy;
    other[q][y] = cx;
    assert_ne!(cx % 54, cy % 54, "the swap changes the hidden hands");
    let b = create_preset(&mut c, seed, &other).await;
    let view_a = state(&mut c, &a.game_id, &a.seat_tokens[leader]).await;
    let view_b = state(&mut c, &b.game_id, &b.seat_tokens[leader]).await;
    assert_eq!(view_a.hand, view_b.hand);
    assert_eq!(view_a.turn_seat, view_b.turn_seat);

    let ha = suggestion(&mut c, &a.game_id, &a.seat_tokens[leader]).await;
    let hb = suggestion(&mut c, &b.game_id, &b.seat_tokens[leader]).await;
    let sa = ha
        .suggested
        .clone()
        .expect("a suggestion on the caller's turn");
    let sb = hb
        .suggested
        .clone()
        .expect("a suggestion on the caller's turn");
    assert_eq!(sa, sb, "equal views, equal suggestions");
    assert_eq!(sa.bot, "heuristic");
    let play = sa.play.clone().expect("the leader must lead");
    assert!(!sa.pass);
    assert!(
        all_hints(&mut c, &a.game_id, &a.seat_tokens[leader])
            .await
            .contains(&play),
        "the suggestion is a legal hint"
    );

    // The oracle: the bot core on the server's game, from the leader's view, seeded as documented.
    let shared = app.games().load(&a.game_id).await.expect("game");
    let expected = {
        let live = shared.lock().await;
        let game = live.game();
        let seat = game.seat_of(Player::new(leader as u8)).expect("seat");
        let view = PlayerView::new(game, seat).expect("view");
        let bot = Bot::named("heuristic", live.hooks().as_ref()).expect("bot");
        let mut rng = ChaCha8Rng::from_seed(decision_seed(
            &a.seed_commitment,
            0,
            Player::new(leader as u8),
        ));
        bot.decide(&view, live.hooks().as_ref(), &mut rng)
            .action(game.hand(seat))
    };
    let Some(shuangkou::game::Action::Play { cards, .. }) = expected else {
        panic!("the heuristic leads a play: {expected:?}");
    };
    assert_eq!(
        play.cards,
        cards.ids(),
        "the suggestion is the bot's decision"
    );

    // Another seat, not to act, gets no suggestion; the suggestion, played, is accepted.
    let other_player = (leader + 1) % 4;
    let h = suggestion(&mut c, &a.game_id, &a.seat_tokens[other_player]).await;
    assert!(h.suggested.is_none() && !h.your_turn);
    c.submit_play(authed(
        play_req(&a.game_id, leader as u32, &play, 0),
        &a.seat_tokens[leader],
    ))
    .await
    .expect("the suggested play is accepted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disconnected_players_turn_is_played_through_the_one_entry_point() {
    use shuangkou::game::Action;
    use shuangkou::service::bots::play_for;
    use shuangkou::service::clock::now_ms;

    let seed = test_seed(19);
    // Turn timers on (the schedule plays a disconnected seat only at its turn deadline, far
    // off): the only automatic plays are this test's own calls.
    let server = TestServer::start(|c| {
        keyed(c);
        c.no_turn_timers = false;
    })
    .await;
    let app = server.app.clone().expect("app");
    let mut c = server.client().await;
    let g = create(&mut c, ADMIN_KEY, create_req("classic", 1, Some(seed))).await;
    let st = state(&mut c, &g.game_id, ADMIN_KEY).await;
    let leader = turn_player(&st) as u8;
    let games = app.games();
    let game = games.load(&g.game_id).await.expect("game");

    // Connected, before its deadline: nothing to do.
    assert_eq!(
        play_for(games, &game, Player::new(leader))
            .await
            .expect("play_for"),
        None
    );
    // Another player's turn: nothing to do either, connected or not.
    let other = (leader + 1) % 4;
    {
        let mut live = games.current(&game).await.expect("lock");
        for p in [leader, other] {
            games
                .commit(&mut live, |l| {
                    l.prepare_action(Player::new(p), Action::Disconnect, now_ms())
                })
                .await
                .expect("disconnect");
        }
    }
    assert_eq!(
        play_for(games, &game, Player::new(other))
            .await
            .expect("play_for"),
        None
    );
    // The disconnected leader: the auto bot leads for it, an automatic play.
    let seq = play_for(games, &game, Player::new(leader))
        .await
        .expect("play_for")
        .expect("played");
    assert_eq!(seq, 3);
    let after = state(&mut c, &g.game_id, ADMIN_KEY).await;
    assert_eq!(after.seq, 3);
    assert_ne!(turn_player(&after) as u8, leader);
    let live = games.current(&game).await.expect("lock");
    let log = shuangkou::service::history::stored_log(games.store(), &g.game_id)
        .await
        .expect("log");
    let replay = live.replay(&log).expect("replay");
    assert!(
        matches!(replay.entries[2].action, Action::Auto { cards, .. } if !cards.is_empty()),
        "{:?}",
        replay.entries[2]
    );
}

/// The automatic action the bot `policy` takes at entry `i` of a rebuilt match: its decision
/// from the acting player's view of the state before the entry, seeded as the service
/// documents, as an `Action::Auto` (empty cards = a pass).
fn auto_action(
    rebuilt: &Rebuilt,
    hooks: &dyn shuangkou::game::hooks::VariantHooks,
    commitment: &str,
    i: usize,
    policy: &str,
) -> shuangkou::game::Action {
    use shuangkou::game::Action;
    let player = rebuilt.entries[i].player;
    let game = &rebuilt.states[i];
    let seat = game.seat_of(player).expect("seat");
    let view = PlayerView::new(game, seat).expect("view");
    let bot = Bot::named(policy, hooks).expect("bot");
    let mut rng = ChaCha8Rng::from_seed(decision_seed(commitment, i as u64, player));
    match bot.decide(&view, hooks, &mut rng).action(game.hand(seat)) {
        Some(Action::Play { cards, declared }) => Action::Auto { cards, declared },
        Some(_) => Action::Auto {
            cards: shuangkou::cards::CardSet::EMPTY,
            declared: None,
        },
        None => panic!("{policy} chose cards the seat does not hold"),
    }
}

/// Checks every automatic entry of a finished game's replay against `policy`'s decision (the
/// replay verifies first); returns the indices of the automatic entries.
fn check_auto_plays(replay: &pb::GetReplayResponse, commitment: &str, policy: &str) -> Vec<usize> {
    let rebuilt = rebuild(replay).expect("the replay verifies");
    let r = Replay::try_from(replay).expect("replay");
    let hooks = r.builtin_hooks().expect("hooks");
    let autos: Vec<usize> = (0..rebuilt.entries.len())
        .filter(|&i| replay.actions[i].kind == "auto")
        .collect();
    for &i in &autos {
        assert_eq!(
            rebuilt.entries[i].action,
            auto_action(&rebuilt, &hooks, commitment, i, policy),
            "automatic entry {} is not {policy}'s decision",
            i + 1
        );
    }
    autos
}

/// Polls GetState (admin) until the game's seq reaches `seq` (turn deadlines of 5 s pass).
async fn seq_reaches(
    c: &mut pb::game_engine_client::GameEngineClient<tonic::transport::Channel>,
    game_id: &str,
    seq: u64,
) -> pb::GetStateResponse {
    poll_until(
        Duration::from_secs(60),
        Duration::from_millis(250),
        "托管 to play past a 5 s turn deadline",
        async || {
            let st = state(c, game_id, ADMIN_KEY).await;
            (st.seq >= seq).then_some(st)
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_game_is_played_by_its_own_tuoguan_bot_and_a_restart_keeps_it() {
    let seed = test_seed(20);
    let store = temp_dir("shuangkou-auto-policy");
    let serve = |auto: &'static str| {
        let store = store.to_string_lossy().into_owned();
        move || {
            config(|c| {
                keyed(c);
                c.no_turn_timers = false;
                c.store = store.clone();
                c.auto_policy = auto.into();
            })
        }
    };
    let mut server = TestServer::restart(serve("greedy")).await;
    let mut c = server.client().await;
    // Two games of the same hand-built deal (the same seed and preset hands: the same leader and
    // the same view): `basic` named by the request, and the serve's `greedy` by default.
    let hands = dealt(seed);
    let create_with = |policy: &str| {
        let mut req = create_req("classic", 1, Some(seed));
        req.options.insert("turn_seconds".into(), "5".into());
        req.preset_hands = Some(pb::PresetHands {
            hands: hands
                .iter()
                .map(|h| pb::CardList { cards: h.clone() })
                .collect(),
        });
        req.auto_policy = policy.into();
        req
    };
    let a = create(&mut c, ADMIN_KEY, create_with("basic")).await;
    let b = create(&mut c, ADMIN_KEY, create_with("")).await;
    assert_eq!(
        state(&mut c, &a.game_id, ADMIN_KEY).await.auto_policy,
        "basic"
    );
    assert_eq!(
        state(&mut c, &b.game_id, ADMIN_KEY).await.auto_policy,
        "greedy"
    );

    // Nobody plays: both leaders' deadlines pass and each game's bot leads.
    seq_reaches(&mut c, &b.game_id, 1).await;
    let b_state = state(&mut c, &b.game_id, &b.spectator_token).await;
    leave(
        &mut c,
        &b.game_id,
        &b.seat_tokens[turn_player(&b_state) as usize],
    )
    .await
    .expect("LeaveGame ends b");
    let b_replay = get_replay(&mut c, &b.game_id, ADMIN_KEY).await;
    let b_autos = check_auto_plays(&b_replay, &b.seed_commitment, "greedy");
    assert!(b_autos.contains(&0), "b's lead was automatic");
    let at_restart = seq_reaches(&mut c, &a.game_id, 1).await.seq;

    // The restart: the serve's default is now the heuristic; a keeps its `basic`.
    server.begin_shutdown();
    server.stopped().await.expect("stops");
    server.app.take();
    drop(server);
    let server = TestServer::restart(serve("heuristic")).await;
    let mut c = server.client().await;
    assert_eq!(
        state(&mut c, &a.game_id, ADMIN_KEY).await.auto_policy,
        "basic"
    );
    let st = seq_reaches(&mut c, &a.game_id, at_restart + 1).await;
    leave(
        &mut c,
        &a.game_id,
        &a.seat_tokens[turn_player(&st) as usize],
    )
    .await
    .expect("LeaveGame ends a");
    let a_replay = get_replay(&mut c, &a.game_id, ADMIN_KEY).await;
    let a_autos = check_auto_plays(&a_replay, &a.seed_commitment, "basic");
    assert!(a_autos.contains(&0), "a's lead was automatic");
    let after = at_restart as usize;
    assert!(
        a_autos.contains(&after),
        "the restarted server played 托管 at entry {}",
        after + 1
    );

    // The deal tells the policies apart: each log holds its own bot's choice, not the other's
    // nor the later serve default's.
    let (ra, rb) = (
        rebuild(&a_replay).expect("a"),
        rebuild(&b_replay).expect("b"),
    );
    let hooks = Replay::try_from(&a_replay)
        .unwrap()
        .builtin_hooks()
        .unwrap();
    assert_ne!(
        ra.entries[0].action, rb.entries[0].action,
        "basic and greedy lead differently"
    );
    assert_ne!(
        ra.entries[after].action,
        auto_action(&ra, &hooks, &a.seed_commitment, after, "heuristic"),
        "after the restart, basic's choice is not the heuristic's"
    );
    let _ = std::fs::remove_dir_all(&store);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tuoguan_bot_is_validated_and_part_of_the_idempotent_request() {
    use tonic_types::StatusExt;
    let server = TestServer::start(keyed).await;
    let mut c = server.client().await;
    let long = format!("search:{}", "9".repeat(40));
    for (name, says) in [
        ("grandmaster", "unknown bot"),
        ("search:0", "playouts"),
        ("search:5001", "playouts"),
        ("Heuristic", "unknown bot"),
        (long.as_str(), "at most 32"),
    ] {
        let mut req = create_req("classic", 1, None);
        req.auto_policy = name.into();
        let s = expect_reject(
            c.create_game(authed(req, ACME_KEY)).await,
            Code::InvalidArgument,
            "BAD_REQUEST",
        );
        assert!(s.message().contains(says), "{name}: {}", s.message());
        let field = s
            .get_details_error_info()
            .and_then(|i| i.metadata.get("field").cloned());
        assert_eq!(field.as_deref(), Some("auto_policy"), "{name}");
    }
    // A known name is stored and shown; a retry under the same key with another bot conflicts.
    let mut req = create_req("classic", 1, None);
    req.auto_policy = "search:200".into();
    req.request_id = "auto-policy-1".into();
    let g = create(&mut c, ACME_KEY, req.clone()).await;
    let st = state(&mut c, &g.game_id, &g.spectator_token).await;
    assert_eq!(st.auto_policy, "search:200");
    let again = create(&mut c, ACME_KEY, req.clone()).await;
    assert_eq!(
        again.game_id, g.game_id,
        "the same request is the same game"
    );
    req.auto_policy = "laoshou".into();
    expect_reject(
        c.create_game(authed(req, ACME_KEY)).await,
        Code::AlreadyExists,
        "IDEMPOTENCY_CONFLICT",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_variant_may_name_its_default_tuoguan_bot() {
    let dir = temp_dir("shuangkou-variant-auto-policy");
    let embedded = |id: &str| {
        shuangkou::variants::EMBEDDED
            .iter()
            .find(|(v, _)| *v == id)
            .expect("an embedded variant")
            .1
    };
    let at = "        partners_see_hands: false,\n";
    let classic = embedded("classic");
    assert!(classic.contains(at), "classic.rhai's meta() changed shape");
    let script = classic.replacen(at, &format!("{at}        auto_policy: \"pingfan\",\n"), 1);
    std::fs::write(dir.join("classic.rhai"), script).expect("write classic");
    std::fs::write(dir.join("erren.rhai"), embedded("erren")).expect("write erren");
    let vdir = dir.clone();
    let server = TestServer::start(move |c| {
        c.variants_dir = Some(vdir);
        c.auto_policy = "greedy".into();
    })
    .await;
    let mut c = server.client().await;
    // (variant, request's auto_policy, the game's): the variant's default over the serve's, the
    // request's over both; a variant without a default (erren as embedded) has the serve's.
    for (variant, asked, shown) in [
        ("classic", "", "pingfan"),
        ("classic", "search:40", "search:40"),
        ("erren", "", "greedy"),
    ] {
        let mut req = create_req(variant, 1, None);
        req.auto_policy = asked.into();
        let g = create(&mut c, "", req).await;
        let st = state(&mut c, &g.game_id, &g.spectator_token).await;
        assert_eq!(st.auto_policy, shown, "{variant} asked {asked:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
