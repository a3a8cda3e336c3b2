//! What the web table needs from `shuangkou.v1` (issue 41), over the wire: a Leave button's cost
//! (LeaveGame `dry_run`: the escape settlement now, nothing logged, equal to what the real leave
//! then scores), distinct default names for bot seats sent without a name, and one deal count
//! (`deals` and the option `deals_per_match` must agree).

pub mod common;

use std::collections::HashMap;

use common::*;
use shuangkou::service::pb;
use tonic::Code;

/// The escape outcome (DealOutcome OUTCOME_ESCAPE).
const ESCAPE: i32 = 4;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_leave_says_what_the_leave_then_scores_and_changes_nothing() {
    let mut c = shared_client().await;
    let g = create(&mut c, ADMIN_KEY, create_req("classic", 2, Some(4101))).await;
    let leaver = 2usize;
    let token = &g.seat_tokens[leaver];
    let before = state(&mut c, &g.game_id, ADMIN_KEY).await;
    let dry = pb::LeaveGameRequest {
        game_id: g.game_id.clone(),
        dry_run: true,
        ..Default::default()
    };
    let preview = c
        .leave_game(authed(dry.clone(), token))
        .await
        .expect("dry-run LeaveGame")
        .into_inner();
    assert_eq!(
        preview.seq, before.seq,
        "the dry run reports the current seq"
    );
    let after = state(&mut c, &g.game_id, ADMIN_KEY).await;
    assert_eq!(after.seq, before.seq, "a dry run logs nothing");
    assert_eq!(after.phase, before.phase);
    let cost = preview
        .deal_result
        .expect("leaving mid-deal ends it: a settlement");
    assert_eq!(cost.outcome, ESCAPE, "scored as an escape");
    assert_eq!(cost.escaped_player, Some(leaver as u32));
    // The oracle: the real leave, right after, scores exactly what the dry run said.
    let real = c
        .leave_game(authed(leave_req(&g.game_id), token))
        .await
        .expect("LeaveGame")
        .into_inner();
    assert_eq!(real.seq, before.seq + 1);
    let scored = real.deal_result.expect("the leave's settlement");
    assert_eq!(
        scored.scores, cost.scores,
        "the dry run's scores are the leave's"
    );
    assert_eq!(scored.lines, cost.lines, "line by line");
    assert!(
        cost.scores[cost.escaped.unwrap() as usize] < 0.0,
        "the escaper pays"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bot_seats_sent_without_a_name_get_their_style_and_index() {
    let mut c = shared_client().await;
    let mut req = create_req("classic", 1, Some(4102));
    req.players = vec![
        "Tester".into(),
        String::new(),
        String::new(),
        "Named".into(),
    ];
    req.bots = HashMap::from([
        (1, "pingfan".to_string()),
        (2, "pingfan".to_string()),
        (3, "douqi".to_string()),
    ]);
    let g = create(&mut c, ADMIN_KEY, req).await;
    let st = state(&mut c, &g.game_id, ADMIN_KEY).await;
    let mut names = vec![String::new(); 4];
    for s in &st.seats {
        names[s.player as usize] = s.name.clone();
    }
    // By hand: docs/BOTS.md's seed names, the player index; a given name stays.
    assert_eq!(names, ["Tester", "平凡型 #1", "平凡型 #2", "Named"]);

    let mut req = create_req("classic", 1, Some(4103));
    req.players = vec!["Tester".into(), String::new(), String::new(), String::new()];
    req.bots = HashMap::from([
        (1, "heuristic".to_string()),
        (2, "heuristic".to_string()),
        (3, "sasa".to_string()),
    ]);
    let g = create(&mut c, ADMIN_KEY, req).await;
    let st = state(&mut c, &g.game_id, ADMIN_KEY).await;
    let mut names: Vec<(u32, String)> = st
        .seats
        .iter()
        .map(|s| (s.player, s.name.clone()))
        .collect();
    names.sort();
    let names: Vec<&str> = names.iter().map(|(_, n)| n.as_str()).collect();
    assert_eq!(
        names,
        ["Tester", "heuristic #1", "heuristic #2", "灑脫型 #3"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deals_and_deals_per_match_must_agree() {
    let mut c = shared_client().await;
    let with = |deals: u32, per_match: &str| {
        let mut req = create_req("classic", deals, None);
        req.options = HashMap::from([("deals_per_match".to_string(), per_match.to_string())]);
        req
    };
    let s = expect_reject(
        c.create_game(authed(with(3, "5"), ACME_KEY)).await,
        Code::InvalidArgument,
        "BAD_OPTION",
    );
    assert!(
        s.message().contains("deals (3)") && s.message().contains("deals_per_match (5)"),
        "{}",
        s.message()
    );
    // The same count twice, or only one of them, is accepted; GetState says the count.
    for (req, want) in [
        (with(5, "5"), 5),
        (with(0, "5"), 5),
        (create_req("classic", 3, None), 3),
    ] {
        let g = create(&mut c, ADMIN_KEY, req).await;
        assert_eq!(state(&mut c, &g.game_id, ADMIN_KEY).await.deals, want);
    }
}

/// Each seat's hand as its own token sees it, and the player at each seat.
async fn hands_by_seat(c: &mut Client, g: &pb::CreateGameResponse) -> (Vec<Vec<u32>>, Vec<u32>) {
    let mut hands = vec![Vec::new(); g.seat_tokens.len()];
    let mut players = vec![0; g.seat_tokens.len()];
    for token in &g.seat_tokens {
        let st = state(c, &g.game_id, token).await;
        let seat = st.your_seat.expect("a seat token's seat") as usize;
        let mut hand = st.hand.clone();
        hand.sort_unstable();
        hands[seat] = hand;
        players[seat] = st
            .seats
            .iter()
            .find(|s| s.seat as usize == seat)
            .unwrap()
            .player;
    }
    (hands, players)
}

fn sorted(list: &pb::CardList) -> Vec<u32> {
    let mut v = list.cards.clone();
    v.sort_unstable();
    v
}

/// GetReplay's `dealt` (what the web replay shows every hand from) against each seat's own
/// GetState at the start of each deal (the oracle: the live game, not the re-execution).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_replay_gives_every_deals_hands_as_the_seats_saw_them() {
    let mut c = shared_client().await;
    let g = create(&mut c, ADMIN_KEY, create_req("classic", 2, Some(4104))).await;
    let deal1 = hands_by_seat(&mut c, &g).await;
    let st = state(&mut c, &g.game_id, ADMIN_KEY).await;
    let r = get_replay(&mut c, &g.game_id, ADMIN_KEY).await;
    assert_eq!(r.dealt.len(), 1, "one deal dealt so far");
    let d = &r.dealt[0];
    assert_eq!((d.deal_number, d.from_seq), (1, 0));
    assert_eq!(d.hands.iter().map(sorted).collect::<Vec<_>>(), deal1.0);
    assert_eq!(d.players, deal1.1);
    // An escape settles deal 1; deal 2 is dealt after it.
    let leaver = &g.seat_tokens[turn_player(&st) as usize];
    let left = c
        .leave_game(authed(leave_req(&g.game_id), leaver))
        .await
        .expect("LeaveGame")
        .into_inner();
    let after = state(&mut c, &g.game_id, ADMIN_KEY).await;
    let r = get_replay(&mut c, &g.game_id, ADMIN_KEY).await;
    if after.phase == pb::Phase::Finished as i32 {
        assert_eq!(r.dealt.len(), 1, "no deal after the match's end");
        return;
    }
    let deal2 = hands_by_seat(&mut c, &g).await;
    assert_eq!(r.dealt.len(), 2);
    let d = &r.dealt[1];
    assert_eq!((d.deal_number, d.from_seq), (2, left.seq));
    assert_eq!(d.hands.iter().map(sorted).collect::<Vec<_>>(), deal2.0);
    assert_eq!(d.players, deal2.1);
}
