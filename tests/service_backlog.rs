//! A live game keeps only its last few actions (`--backlog-actions`); what is older comes from
//! the store. The oracle is the same match played on a server whose backlog holds the whole
//! match (the in-memory path the window code does not touch): a WatchGame from seq 0, or from a
//! seq older than the window, must stream exactly the events it streams, and an idempotent retry
//! of an action older than the window must get the action's original reply.

pub mod common;

use std::time::Duration;

use common::*;
use shuangkou::service::pb;
use shuangkou::service::pb::game_engine_client::GameEngineClient;
use shuangkou::service::status::reason_of;
use tonic::transport::Channel;

type Client = GameEngineClient<Channel>;

/// Actions the small server keeps.
const WINDOW: usize = 3;

struct Table {
    _server: TestServer,
    client: Client,
    game: pb::CreateGameResponse,
}

async fn table(backlog: usize, seed: u64) -> Table {
    table_of(backlog, seed, 1).await
}

/// A table of a `deals`-deal classic match.
async fn table_of(backlog: usize, seed: u64, deals: u32) -> Table {
    let server = TestServer::start(|c| {
        keyed(c);
        c.backlog_actions = backlog;
    })
    .await;
    let mut client = server.client().await;
    let game = create(
        &mut client,
        ADMIN_KEY,
        create_req("classic", deals, Some(seed)),
    )
    .await;
    Table {
        _server: server,
        client,
        game,
    }
}

/// The next action of the match, decided from the state and hints of `t` (the first legal play,
/// or a pass every third turn when legal): the same on both tables, which hold the same match.
async fn next_request(t: &mut Table, n: u64) -> Option<(u32, pb::SubmitPlayRequest)> {
    let st = state(&mut t.client, &t.game.game_id, ADMIN_KEY).await;
    if st.phase == pb::Phase::Finished as i32 {
        return None;
    }
    let p = turn_player(&st);
    let token = t.game.seat_tokens[p as usize].clone();
    let h = hints(&mut t.client, &t.game.game_id, &token).await;
    let mut req = if h.can_pass && (h.plays.is_empty() || n % 3 == 0) {
        pass_req(&t.game.game_id, p, st.seq)
    } else {
        play_req(&t.game.game_id, p, &h.plays[0], st.seq)
    };
    req.expected_seq = Some(st.seq);
    req.request_id = format!("r{n}");
    Some((p, req))
}

async fn submit(t: &mut Table, p: u32, req: &pb::SubmitPlayRequest) -> pb::SubmitPlayResponse {
    let token = t.game.seat_tokens[p as usize].clone();
    let req = pb::SubmitPlayRequest {
        game_id: t.game.game_id.clone(),
        ..req.clone()
    };
    t.client
        .submit_play(authed(req.clone(), &token))
        .await
        .unwrap_or_else(|s| panic!("SubmitPlay {req:?}: {s:?}"))
        .into_inner()
}

/// Plays the match to its end on both tables; the requests sent and the small table's replies.
async fn play_both(
    small: &mut Table,
    big: &mut Table,
) -> Vec<(u32, pb::SubmitPlayRequest, pb::SubmitPlayResponse)> {
    let mut sent = Vec::new();
    for n in 0.. {
        let Some((p, req)) = next_request(small, n).await else {
            break;
        };
        let mine = submit(small, p, &req).await;
        let theirs = submit(big, p, &req).await;
        assert_eq!(mine.seq, theirs.seq);
        sent.push((p, req, mine));
    }
    sent
}

/// Every event of a WatchGame from `from_seq` as the spectator (`None`) or a player until the
/// stream ends (the match is over), without the times (the two tables accepted the actions at
/// different times).
async fn watch(t: &mut Table, viewer: Option<usize>, from_seq: u64) -> Vec<pb::GameEvent> {
    let token = match viewer {
        None => t.game.spectator_token.clone(),
        Some(p) => t.game.seat_tokens[p].clone(),
    };
    let req = pb::WatchGameRequest {
        game_id: t.game.game_id.clone(),
        from_seq,
        cursor: String::new(),
    };
    let mut stream = t
        .client
        .watch_game(authed(req, &token))
        .await
        .expect("WatchGame")
        .into_inner();
    let mut events = Vec::new();
    within(Duration::from_secs(120), "the stream to end", async {
        while let Some(mut ev) = stream.message().await.expect("stream") {
            ev.at = 0;
            events.push(ev);
        }
    })
    .await;
    events
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_and_retries_older_than_the_backlog_come_from_the_store() {
    let seed = test_seed(21);
    let mut small = table(WINDOW, seed).await;
    let mut big = table(100_000, seed).await;
    let sent = play_both(&mut small, &mut big).await;
    let actions = sent.len();
    assert!(
        actions > 10 * WINDOW,
        "the match ({actions} actions) is much longer than the window"
    );

    // WatchGame from seq 0 and from an old seq, as a spectator and as a player: every event, in
    // order, equal to what the whole-match backlog streams.
    for (viewer, from) in [(None, 0), (Some(1), 0), (None, 5), (Some(2), 7)] {
        let got = watch(&mut small, viewer, from).await;
        let want = watch(&mut big, viewer, from).await;
        assert!(want.len() > actions.min(20), "{} events", want.len());
        assert_eq!(got.len(), want.len(), "from seq {from}: event count");
        assert_eq!(got, want, "from seq {from}");
    }

    // A retry of the match's first play (far older than the window) gets its original reply,
    // its time included; the same key for another request is a conflict.
    let (p, req, original) = sent
        .iter()
        .find(|(_, r, _)| !r.pass)
        .cloned()
        .expect("a play");
    assert!(original.seq + (WINDOW as u64) < actions as u64);
    let again = submit(&mut small, p, &req).await;
    assert_eq!(again, original, "the retry of seq {}", original.seq);
    let mut other = req.clone();
    other.pass = true;
    other.cards.clear();
    other.declared = None;
    let token = small.game.seat_tokens[p as usize].clone();
    let refused = small
        .client
        .submit_play(authed(other, &token))
        .await
        .expect_err("another request under the same key");
    assert_eq!(reason_of(&refused).as_deref(), Some("IDEMPOTENCY_CONFLICT"));
}

/// A match of several deals: the server writes a snapshot at each deal's end, and a WatchGame
/// from a seq deep in a later deal (its replay starts at the snapshot before that seq, not at the
/// creation) streams exactly what the whole-match backlog streams; so does a retry of an old
/// action of a later deal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_from_a_later_deal_start_at_a_snapshot_and_match_the_whole_backlog() {
    let seed = test_seed(23);
    let mut small = table_of(WINDOW, seed, 3).await;
    let mut big = table_of(100_000, seed, 3).await;
    let sent = play_both(&mut small, &mut big).await;
    let actions = sent.len() as u64;
    let ends: Vec<u64> = sent
        .iter()
        .filter(|(_, _, r)| r.deal_result.is_some())
        .map(|(_, _, r)| r.seq)
        .collect();
    assert!(
        ends.len() >= 3 && ends[1] + 10 < actions,
        "seed {seed}: three deals ({ends:?} of {actions} actions)"
    );
    for (viewer, from) in [
        (None, ends[0] + 20),
        (Some(2), ends[1] - 1),
        (None, ends[1]),
        (Some(3), ends[1] + 1),
        (Some(1), ends[1] + 2),
        (None, actions - 5),
        (Some(0), actions - 2 * WINDOW as u64),
    ] {
        let got = watch(&mut small, viewer, from).await;
        let want = watch(&mut big, viewer, from).await;
        assert!(!want.is_empty(), "seed {seed}: from seq {from}");
        assert_eq!(got, want, "seed {seed}: from seq {from}");
    }
    let (p, req, original) = sent
        .iter()
        .rev()
        .skip(3 * WINDOW)
        .find(|(_, r, _)| !r.pass)
        .cloned()
        .expect("a play");
    let again = submit(&mut small, p, &req).await;
    assert_eq!(
        again, original,
        "seed {seed}: the retry of seq {}",
        original.seq
    );
}

/// `Store::entries_page` reads a range of the log: the same entries as `entries_after`, cut to
/// the limit, on the memory and the embedded store (the embedded one before and after the
/// game is archived).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_of_the_log_is_that_range_of_it() {
    use shuangkou::store::{GameRecord, LogEntry, Store};

    let dir = temp_dir("backlog-pages");
    for spec in ["memory".to_string(), dir.display().to_string()] {
        let store = Store::open(&spec).await.expect("store");
        let record = GameRecord {
            id: "g".into(),
            platform: None,
            request_id: None,
            body: b"{}".to_vec(),
            script: None,
        };
        store.create(&record).await.expect("create");
        for seq in 1..=10u64 {
            let entry = LogEntry {
                seq,
                body: format!("entry {seq}").into_bytes(),
            };
            store.append("g", &entry).await.expect("append");
        }
        for archived in [false, true] {
            if archived {
                store.finish("g").await.expect("finish");
            }
            for after in [0u64, 3, 9, 10, 12] {
                for limit in [0usize, 1, 4, 100] {
                    let mut want = store.entries_after("g", after).await.expect("after");
                    want.truncate(limit);
                    let got = store.entries_page("g", after, limit).await.expect("page");
                    assert_eq!(got, want, "{spec}: after {after}, limit {limit}");
                }
            }
        }
        assert!(
            store
                .entries_page("nope", 0, 5)
                .await
                .expect("page")
                .is_empty()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A retried pass whose original left the event window, sent again when passing is legal again:
/// the original pass, not a second one (the backlog remembers the key's fingerprint and the
/// store's entry confirms it). Without `expected_seq` nothing else would stop the second pass.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_pass_outside_the_window_is_not_a_second_pass() {
    let seed = test_seed(22);
    let mut t = table(WINDOW, seed).await;
    let mut original: Option<(u32, pb::SubmitPlayRequest, pb::SubmitPlayResponse)> = None;
    for n in 0.. {
        let Some((p, mut req)) = next_request(&mut t, n).await else {
            panic!("seed {seed}: the match ended before the pass could be retried");
        };
        match &original {
            None if req.pass => {
                req.expected_seq = None;
                req.request_id = "the-pass".into();
                let reply = submit(&mut t, p, &req).await;
                original = Some((p, req, reply));
                continue;
            }
            Some((q, pass, first))
                if *q == p
                    && req.pass
                    && req.expected_seq.unwrap_or(0) > first.seq + WINDOW as u64 + 2 =>
            {
                let before = state(&mut t.client, &t.game.game_id, ADMIN_KEY).await.seq;
                let again = submit(&mut t, p, pass).await;
                assert_eq!(
                    &again, first,
                    "seed {seed}: the retry gets the original reply"
                );
                let after = state(&mut t.client, &t.game.game_id, ADMIN_KEY).await.seq;
                assert_eq!(after, before, "seed {seed}: the retry added no action");
                return;
            }
            _ => {}
        }
        submit(&mut t, p, &req).await;
    }
}
