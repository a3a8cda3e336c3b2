//! `shengji.v1` over a real socket: whole matches played by four clients holding nothing but
//! their own seat token, with every view and event checked for hidden cards (non-interference),
//! the replay re-executed by the core, the error reasons, idempotency, `expected_seq`, health
//! and the store (a restart of an embedded store rebuilds the game).

pub mod common;

use common::shengji::create_shengji;
use common::{ADMIN_KEY, TestServer, authed, channel, game_seed, test_seed};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shuangkou::cards::{Card, CardSet};
use shuangkou::service::pb::shengji as pb;
use shuangkou::service::pb::shengji::shengji_engine_client::ShengjiEngineClient;
use shuangkou::service::wire::shengji_client;
use tonic::transport::Channel;
use tonic::{Code, Status};
use tonic_types::StatusExt;

type Client = ShengjiEngineClient<Channel>;

fn admin(c: &mut shuangkou::config::ServeConfig) {
    c.admin_key = Some(ADMIN_KEY.into());
}

async fn client(server: &TestServer) -> Client {
    ShengjiEngineClient::new(channel(server.addr).await)
}

/// The ErrorInfo reason of a status in domain shengji.v1.
fn reason(s: &Status) -> String {
    let info = s.get_details_error_info().expect("ErrorInfo detail");
    assert_eq!(info.domain, "shengji.v1", "{s:?}");
    info.reason
}

struct Table {
    id: String,
    seats: Vec<String>,
    spectator: String,
}

impl From<pb::CreateGameResponse> for Table {
    fn from(r: pb::CreateGameResponse) -> Table {
        Table {
            id: r.game_id,
            seats: r.seat_tokens,
            spectator: r.spectator_token,
        }
    }
}

async fn create(c: &mut Client, seed: u64, options: &[(&str, &str)]) -> Table {
    let r = create_shengji(c, seed, options).await;
    assert_eq!(r.seat_tokens.len(), 4);
    assert_eq!(r.variant, "shengji");
    Table::from(r)
}

/// `GetReplay` of `t` with its spectator token.
async fn get_replay(c: &mut Client, t: &Table) -> Result<pb::GetReplayResponse, Status> {
    let req = pb::GetReplayRequest {
        game_id: t.id.clone(),
    };
    c.get_replay(authed(req, &t.spectator))
        .await
        .map(|r| r.into_inner())
}

/// A server of its own (admin key only), a client and a new table from test seed `seed`.
async fn fresh_table(seed: u64) -> (TestServer, Client, Table) {
    let server = TestServer::start(admin).await;
    let mut c = client(&server).await;
    let t = create(&mut c, test_seed(seed), &[]).await;
    (server, c, t)
}

async fn state(c: &mut Client, t: &Table, token: &str) -> pb::GameState {
    c.get_state(authed(
        pb::GetStateRequest {
            game_id: t.id.clone(),
        },
        token,
    ))
    .await
    .expect("state")
    .into_inner()
    .state
    .expect("a state")
}

fn act(
    t: &Table,
    seat: u32,
    seq: u64,
    action: pb::submit_action_request::Action,
) -> pb::SubmitActionRequest {
    pb::SubmitActionRequest {
        game_id: t.id.clone(),
        seat,
        expected_seq: seq,
        request_id: String::new(),
        action: Some(action),
    }
}

async fn submit(
    c: &mut Client,
    t: &Table,
    seat: u32,
    seq: u64,
    action: pb::submit_action_request::Action,
) -> Result<pb::SubmitActionResponse, Status> {
    c.submit_action(authed(act(t, seat, seq, action), &t.seats[seat as usize]))
        .await
        .map(|r| r.into_inner())
}

/// The status that refuses [`submit`]`(c, t, seat, seq, action)`.
async fn refused(c: &mut Client, t: &Table, seat: u32, seq: u64, action: A) -> Status {
    submit(c, t, seat, seq, action)
        .await
        .expect_err("the action is refused")
}

use pb::submit_action_request::Action as A;

/// The dealer's 埋底 of `cards`.
fn bury(cards: &[u32]) -> A {
    A::Bury(pb::Bury {
        cards: cards.to_vec(),
    })
}

fn set(ids: &[u32]) -> CardSet {
    CardSet::from_ids(ids).expect("card ids")
}

/// The non-interference checks of one moment: every seat sees its own hand only (the hands are
/// disjoint and add up with the counts everyone sees), the bottom only as the dealer after taking
/// it, and a spectator sees no hand and no bottom.
async fn check_views(c: &mut Client, t: &Table) {
    let spec = state(c, t, &t.spectator).await;
    assert!(spec.hand.is_empty() && spec.bottom.is_empty() && !spec.bottom_visible);
    assert!(spec.your_seat.is_none() && spec.legal.is_empty());
    let mut seen = CardSet::EMPTY;
    for s in 0..4u32 {
        let v = state(c, t, &t.seats[s as usize]).await;
        assert_eq!(v.your_seat, Some(s));
        let hand = set(&v.hand);
        assert_eq!(hand.len() as u32, spec.hand_counts[s as usize], "seat {s}");
        assert!(
            hand.intersection(seen).is_empty(),
            "two seats hold one card"
        );
        seen = seen.union(hand);
        let dealer = v.dealer == Some(s);
        let taken = v.phase == pb::Phase::Exchange as i32 || v.phase == pb::Phase::Playing as i32;
        assert_eq!(
            v.bottom_visible,
            dealer && taken,
            "seat {s} bottom visibility"
        );
        if !v.bottom_visible {
            assert!(v.bottom.is_empty());
        } else {
            assert!(
                set(&v.bottom).intersection(hand).is_empty()
                    || v.phase == pb::Phase::Exchange as i32
            );
        }
        assert!(
            set(&v.legal).is_subset(hand),
            "legal cards are the seat's own"
        );
    }
}

/// Plays a whole match through the API, every decision made by the seat to act from its own
/// hints; checks the views every few actions. Returns the final state.
async fn play_match(c: &mut Client, t: &Table, seed: u64, check_every: u64) -> pb::GameState {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for step in 0..20_000u64 {
        let st = state(c, t, &t.spectator).await;
        if st.phase == pb::Phase::Finished as i32 {
            return st;
        }
        if step % check_every == 0 {
            check_views(c, t).await;
        }
        let seq = st.seq;
        if st.phase == pb::Phase::Dealing as i32 {
            if st.declaration.is_none() && rng.random_bool(0.2) {
                let s = rng.random_range(0..4u32);
                let h = hints(c, t, s).await;
                if let Some(&card) = h.declarable.first() {
                    let r = submit(c, t, s, seq, A::Declare(pb::Declare { card })).await;
                    r.expect("a declarable card declares");
                    continue;
                }
            }
            let count = rng.random_range(1..=8);
            let s = rng.random_range(0..4u32);
            submit(c, t, s, seq, A::Deal(pb::Deal { count }))
                .await
                .expect("deal");
            continue;
        }
        let turn = st.turn.expect("a seat to act");
        let h = hints(c, t, turn).await;
        assert!(h.your_turn);
        if h.must_bury {
            let me = state(c, t, &t.seats[turn as usize]).await;
            let pool: Vec<u32> = me
                .hand
                .iter()
                .copied()
                .filter(|&id| {
                    h.bury_points_allowed
                        || !matches!(
                            Card::new(id).unwrap().rank().to_string().as_str(),
                            "5" | "T" | "K"
                        )
                })
                .collect();
            let mut cards = pool.clone();
            for i in 0..6 {
                let j = rng.random_range(i..cards.len());
                cards.swap(i, j);
            }
            cards.truncate(6);
            submit(c, t, turn, seq, bury(&cards)).await.expect("bury");
        } else {
            let card = h.legal_cards[rng.random_range(0..h.legal_cards.len())];
            submit(c, t, turn, seq, A::Play(pb::PlayCard { card }))
                .await
                .expect("a legal card plays");
        }
    }
    panic!("seed {seed}: the match did not end in 20,000 steps");
}

async fn hints(c: &mut Client, t: &Table, seat: u32) -> pb::GetHintsResponse {
    c.get_hints(authed(
        pb::GetHintsRequest {
            game_id: t.id.clone(),
        },
        &t.seats[seat as usize],
    ))
    .await
    .expect("hints")
    .into_inner()
}

/// Every event a token's WatchGame stream delivers from the start of a finished match.
async fn events(c: &mut Client, t: &Table, token: &str) -> Vec<pb::GameEvent> {
    let mut stream = c
        .watch_game(authed(
            pb::WatchGameRequest {
                game_id: t.id.clone(),
                from_seq: 0,
            },
            token,
        ))
        .await
        .expect("watch")
        .into_inner();
    let mut out = Vec::new();
    let deadline = std::time::Duration::from_secs(60);
    while let Some(e) = tokio::time::timeout(deadline, stream.message())
        .await
        .expect("the stream ends in time")
        .expect("an event")
    {
        out.push(e);
    }
    out
}

/// No hidden card in any event: a dealt card only to its seat, the taken and buried bottom only
/// to the dealer; the spectator sees none.
fn check_events(events: &[pb::GameEvent], seat: Option<u32>) -> usize {
    use pb::game_event::Kind;
    let mut dealt_to_me = 0;
    for e in events {
        match e.kind.as_ref().expect("a kind") {
            Kind::CardDealt(d) => {
                assert_eq!(
                    d.card.is_some(),
                    Some(d.seat) == seat,
                    "{e:?} seen by {seat:?}"
                );
                dealt_to_me += usize::from(d.card.is_some());
            }
            Kind::BottomTaken(b) | Kind::Buried(b) => {
                assert_eq!(b.visible, Some(b.seat) == seat, "{e:?} seen by {seat:?}");
                assert_eq!(b.cards.is_empty(), !b.visible);
            }
            _ => {}
        }
    }
    dealt_to_me
}

/// The replay, re-executed by the core with the pinned script: every state hash and the winner.
fn verify_replay(r: &pb::GetReplayResponse, winner: Option<u32>) {
    let game = shengji_client::verify_replay(r).expect("the replay verifies");
    use pb::replay_step::Action as R;
    if r.steps
        .iter()
        .all(|s| !matches!(s.action, Some(R::Leave(_))))
    {
        assert_eq!(game.winner().map(u32::from), winner);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whole_matches_over_the_wire_leak_no_hidden_card_and_replay_exactly() {
    let server = TestServer::start(admin).await;
    let mut c = client(&server).await;
    let base = test_seed(20);
    for (i, options) in [
        vec![],
        vec![("bury_points", "false"), ("bottom_multiplier", "3")],
    ]
    .into_iter()
    .enumerate()
    {
        let seed = base + i as u64;
        let t = create(&mut c, seed, &options).await;
        let end = play_match(&mut c, &t, seed, 7).await;
        assert!(end.winner.is_some(), "seed {seed}");
        assert!(!end.results.is_empty());
        let last = end.results.last().unwrap();
        assert_eq!(last.winner, end.winner);
        assert_eq!(
            end.levels.as_ref().map(|l| if end.winner == Some(0) {
                l.team0
            } else {
                l.team1
            }),
            Some(14),
            "the winner reached A"
        );
        // Every seat's and the spectator's streams.
        let mut dealt = 0;
        for s in 0..4u32 {
            let evs = events(&mut c, &t, &t.seats[s as usize]).await;
            dealt += check_events(&evs, Some(s));
        }
        let spec = events(&mut c, &t, &t.spectator).await;
        assert_eq!(check_events(&spec, None), 0);
        assert_eq!(
            dealt,
            48 * end.results.len(),
            "each seat saw its own 12 cards per deal"
        );
        let replay = get_replay(&mut c, &t)
            .await
            .expect("the replay of a finished match");
        verify_replay(&replay, end.winner);
        // Nothing more is accepted.
        let e = refused(&mut c, &t, 0, 0, A::Deal(pb::Deal { count: 1 })).await;
        assert_eq!(reason(&e), "GAME_OVER");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn before_the_deal_ends_plays_bad_requests_and_foreign_tokens_are_refused() {
    let (_server, mut c, t) = fresh_table(5).await;
    // Before the deal ends: no bury, no play.
    let e = refused(&mut c, &t, 0, 0, A::Play(pb::PlayCard { card: 0 })).await;
    assert_eq!(
        (e.code(), reason(&e).as_str()),
        (Code::FailedPrecondition, "WRONG_PHASE")
    );
    let e = refused(&mut c, &t, 0, 0, A::Deal(pb::Deal { count: 0 })).await;
    assert_eq!(reason(&e), "BAD_REQUEST");
    let e = refused(&mut c, &t, 0, 0, A::Declare(pb::Declare { card: 54 })).await;
    assert_eq!(
        (e.code(), reason(&e).as_str()),
        (Code::InvalidArgument, "BAD_CARD_ID")
    );
    // Another seat's seat number with my token.
    let e = c
        .submit_action(authed(
            act(&t, 1, 0, A::Deal(pb::Deal { count: 1 })),
            &t.seats[0],
        ))
        .await
        .unwrap_err();
    assert_eq!(reason(&e), "PERMISSION_DENIED_TOKEN");
    let forged = format!("{}.p0.{}", t.id, "0".repeat(32));
    let e = c
        .get_state(authed(
            pb::GetStateRequest {
                game_id: t.id.clone(),
            },
            &forged,
        ))
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), reason(&e).as_str()),
        (Code::Unauthenticated, "UNAUTHENTICATED_TOKEN")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_deal_is_one_action_and_a_stale_seq_is_aborted() {
    let (_server, mut c, t) = fresh_table(5).await;
    // An idempotent deal: the same request id twice is one action.
    let mut req = act(&t, 2, 0, A::Deal(pb::Deal { count: 5 }));
    req.request_id = "deal-1".into();
    let first = c
        .submit_action(authed(req.clone(), &t.seats[2]))
        .await
        .unwrap()
        .into_inner();
    let again = c
        .submit_action(authed(req, &t.seats[2]))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((first.seq, again.seq), (1, 1));
    assert_eq!(state(&mut c, &t, &t.spectator).await.stock_count, 54 - 5);
    // A stale expected_seq.
    let e = refused(&mut c, &t, 0, 7, A::Deal(pb::Deal { count: 1 })).await;
    assert_eq!(
        (e.code(), reason(&e).as_str()),
        (Code::Aborted, "STALE_SEQ")
    );
    assert_eq!(
        e.get_details_error_info()
            .unwrap()
            .metadata
            .get("current_seq")
            .map(String::as_str),
        Some("1")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bury_and_play_rejections_name_their_reasons_and_leaving_ends_the_match() {
    let (_server, mut c, t) = fresh_table(5).await;
    // Deal to the end, bury the wrong number, then a card that does not follow.
    let mut seq = 0;
    loop {
        let st = state(&mut c, &t, &t.spectator).await;
        if st.phase != pb::Phase::Dealing as i32 {
            break;
        }
        seq = submit(&mut c, &t, 0, seq, A::Deal(pb::Deal { count: 54 }))
            .await
            .unwrap()
            .seq;
    }
    let st = state(&mut c, &t, &t.spectator).await;
    let dealer = st.dealer.unwrap();
    let me = state(&mut c, &t, &t.seats[dealer as usize]).await;
    assert_eq!(me.hand.len(), 18, "the dealer took the bottom");
    let e = refused(&mut c, &t, dealer, seq, bury(&me.hand[..5])).await;
    assert_eq!(
        (e.code(), reason(&e).as_str()),
        (Code::InvalidArgument, "BURY_COUNT")
    );
    let other = (dealer + 1) % 4;
    let e = refused(&mut c, &t, other, seq, bury(&[])).await;
    assert_eq!(reason(&e), "NOT_THE_DEALER");
    seq = submit(&mut c, &t, dealer, seq, bury(&me.hand[..6]))
        .await
        .unwrap()
        .seq;
    // The dealer leads; then find a seat that holds a card it may not play.
    let lead = hints(&mut c, &t, dealer).await.legal_cards[0];
    seq = submit(
        &mut c,
        &t,
        dealer,
        seq,
        A::Play(pb::PlayCard { card: lead }),
    )
    .await
    .unwrap()
    .seq;
    let next = (dealer + 1) % 4;
    let h = hints(&mut c, &t, next).await;
    let hand = state(&mut c, &t, &t.seats[next as usize]).await.hand;
    match hand.iter().find(|id| !h.legal_cards.contains(id)) {
        Some(&card) => {
            let e = refused(&mut c, &t, next, seq, A::Play(pb::PlayCard { card })).await;
            assert_eq!(
                (e.code(), reason(&e).as_str()),
                (Code::FailedPrecondition, "MUST_FOLLOW")
            );
            let legal = e.get_details_error_info().unwrap().metadata["legal"].clone();
            let mut want: Vec<String> = h.legal_cards.iter().map(u32::to_string).collect();
            want.sort();
            let mut got: Vec<String> = legal.split(',').map(str::to_string).collect();
            got.sort();
            assert_eq!(got, want);
        }
        None => eprintln!("seat {next} may play any card here; MUST_FOLLOW not exercised"),
    }
    let e = refused(
        &mut c,
        &t,
        dealer,
        seq,
        A::Play(pb::PlayCard { card: me.hand[17] }),
    )
    .await;
    assert_eq!(reason(&e), "NOT_YOUR_TURN");
    // The replay waits for the end (but the admin sees it); leaving ends the match.
    let e = get_replay(&mut c, &t).await.unwrap_err();
    assert_eq!(reason(&e), "GAME_IN_PROGRESS");
    let left = c
        .leave_game(authed(
            pb::LeaveGameRequest {
                game_id: t.id.clone(),
            },
            &t.seats[1],
        ))
        .await
        .unwrap()
        .into_inner();
    assert!(left.finished);
    let end = state(&mut c, &t, &t.spectator).await;
    assert_eq!((end.left, end.winner), (Some(1), Some(0)));
    let replay = get_replay(&mut c, &t).await.unwrap();
    verify_replay(&replay, end.winner);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_knows_the_second_game_and_a_restart_rebuilds_its_games() {
    let dir = common::temp::TempDir::fresh("shengji-service-store", "store");
    let spec = dir.display().to_string();
    let tweak = |c: &mut shuangkou::config::ServeConfig| {
        admin(c);
        c.store = spec.clone();
    };
    let mut server = TestServer::start(tweak).await;
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel(server.addr).await);
    let h = health
        .check(tonic_health::pb::HealthCheckRequest {
            service: "shengji.v1.ShengjiEngine".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        h.status,
        tonic_health::pb::health_check_response::ServingStatus::Serving as i32
    );
    let mut c = client(&server).await;
    let t = create(&mut c, 77, &[]).await;
    submit(&mut c, &t, 0, 0, A::Deal(pb::Deal { count: 20 }))
        .await
        .unwrap();
    let before = state(&mut c, &t, &t.seats[3]).await;
    server.begin_shutdown();
    server.stopped().await.unwrap();
    server.app.take();
    drop(server);
    // The previous server may hold the store's lock for a moment.
    let server = TestServer::restart(|| common::config(tweak)).await;
    let mut c = client(&server).await;
    let after = state(&mut c, &t, &t.seats[3]).await;
    assert_eq!(before, after, "the same game after the restart");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bot_seats_play_a_whole_match_with_one_player() {
    let server = TestServer::start(admin).await;
    let mut c = client(&server).await;
    let seed = test_seed(31);
    let req = pb::CreateGameRequest {
        seed: game_seed(seed),
        bot_seats: vec![1, 2, 3],
        ..Default::default()
    };
    let r = c
        .create_game(authed(req, ADMIN_KEY))
        .await
        .unwrap()
        .into_inner();
    let t = Table::from(r);
    // A bot's seat cannot be played through its token.
    let e = refused(&mut c, &t, 2, 0, A::Deal(pb::Deal { count: 1 })).await;
    assert_eq!(reason(&e), "PERMISSION_DENIED_TOKEN");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut end = None;
    let mut waits = 0;
    for _ in 0..20_000 {
        let st = state(&mut c, &t, &t.seats[0]).await;
        assert_eq!(st.bot_seats, vec![1, 2, 3]);
        if st.phase == pb::Phase::Finished as i32 {
            end = Some(st);
            break;
        }
        let seq = st.seq;
        if st.phase == pb::Phase::Dealing as i32 {
            // A bot dealing seat deals at once (issue 41): seat 0's deal may come after it.
            let dealt = submit(&mut c, &t, 0, seq, A::Deal(pb::Deal { count: 10 })).await;
            if let Err(e) = dealt {
                assert_eq!(reason(&e), "STALE_SEQ", "{e:?}");
            }
            continue;
        }
        if st.turn != Some(0) {
            // Only between the schedule's bot actions after the create (the rpcs reply after
            // the bots): a bot dealing seat's deal, close, bury or lead, each at once.
            waits += 1;
            assert!(waits < 500, "the bots have acted: seat 0 is to act");
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            continue;
        }
        let h = hints(&mut c, &t, 0).await;
        if h.must_bury {
            let cards = st.hand[..6].to_vec();
            submit(&mut c, &t, 0, seq, bury(&cards)).await.unwrap();
        } else {
            let card = h.legal_cards[rng.random_range(0..h.legal_cards.len())];
            submit(&mut c, &t, 0, seq, A::Play(pb::PlayCard { card }))
                .await
                .unwrap();
        }
    }
    let end = end.expect("the match ends");
    assert!(end.winner.is_some());
    let replay = get_replay(&mut c, &t).await.unwrap();
    verify_replay(&replay, end.winner);
    assert!(
        replay
            .steps
            .iter()
            .any(|s| s.player == 2 && matches!(s.action, Some(pb::replay_step::Action::Play(_)))),
        "the bots played"
    );
}
