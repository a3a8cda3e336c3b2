//! What a WatchGame stream the client does not read holds on the server (issue 21): the events
//! its task has queued for the transport are at most a small constant, however long the game's
//! log behind the stream. The stream is opened in-process (`rpc::watch::watch`, the transport's
//! side of the stream) on a finished bot match whose log is far longer than the bound and than
//! the live backlog, so the stream catches up from the store; nothing reads it, then it is read
//! a few events at a time and to its end.

pub mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use shuangkou::service::access::Caller;
use shuangkou::service::pb;
use shuangkou::service::rpc::watch::{self, Watch};
use tokio_stream::StreamExt;

/// The most events an unread stream may hold queued (issue 21: a small constant per stream).
const BOUND: usize = 16;

/// The events queued once the stream's task has queued all it may (at least [`watch::BUFFER`]:
/// a bounded queue stops there, the task waits for the transport).
async fn filled(w: &Watch) -> usize {
    poll_until(
        Duration::from_secs(60),
        Duration::from_millis(50),
        "the unread stream's queue to fill",
        async || (w.queued() >= watch::BUFFER).then_some(w.queued()),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unread_stream_queues_a_bounded_number_of_events_and_loses_none() {
    let seed = test_seed(21);
    let server = TestServer::start(|c| {
        keyed(c);
        c.backlog_actions = 3;
    })
    .await;
    let app = Arc::clone(server.app.as_ref().expect("the server's app"));
    let mut client = server.client().await;
    let mut req = create_req("classic", 1, Some(seed));
    req.bots = (0..4).map(|p| (p, "basic".to_string())).collect();
    let game = create(&mut client, ADMIN_KEY, req).await;
    let over = poll_until(
        Duration::from_secs(120),
        Duration::from_millis(100),
        "the bots to finish the match",
        async || {
            let st = state(&mut client, &game.game_id, ADMIN_KEY).await;
            (st.phase == pb::Phase::Finished as i32).then_some(st)
        },
    )
    .await;
    let request = pb::WatchGameRequest {
        game_id: game.game_id.clone(),
        from_seq: 0,
        cursor: String::new(),
    };
    let open = || watch::watch(Arc::clone(&app), Caller::Admin, request.clone());

    // The whole stream, read at once: the oracle for what the unread one must still deliver.
    let all: Vec<pb::GameEvent> = within(Duration::from_secs(60), "a full read", async {
        let w = open().await.expect("WatchGame");
        w.map(|e| e.expect("event")).collect().await
    })
    .await;
    assert!(
        all.len() > 10 * BOUND && over.seq > 10,
        "seed {seed}: the log ({} events, seq {}) is far longer than the bound",
        all.len(),
        over.seq
    );

    let mut w = open().await.expect("WatchGame");
    const { assert!(watch::BUFFER <= BOUND) };
    let queued = filled(&w).await;
    assert!(queued <= BOUND, "seed {seed}: {queued} events queued");
    assert_eq!(
        w.yielded(),
        queued as u64,
        "seed {seed}: nothing read, all yielded is queued"
    );
    // Read a few events at a time: what is queued never exceeds the bound, and the task never
    // runs further ahead of the reader than the bound.
    let mut read = Vec::new();
    while read.len() < 5 * BOUND {
        for _ in 0..3 {
            let ev = within(Duration::from_secs(30), "the next event", w.next()).await;
            read.push(ev.expect("an event").expect("not an error"));
        }
        assert!(
            w.queued() <= BOUND && w.yielded() <= (read.len() + BOUND) as u64,
            "seed {seed}: {} read, {} queued, {} yielded",
            read.len(),
            w.queued(),
            w.yielded()
        );
    }
    filled(&w).await;
    assert_eq!(w.yielded(), (read.len() + watch::BUFFER) as u64);
    let rest: Vec<pb::GameEvent> = within(Duration::from_secs(60), "the rest", async {
        (&mut w).map(|e| e.expect("event")).collect().await
    })
    .await;
    read.extend(rest);
    assert_eq!(
        read, all,
        "seed {seed}: the unread stream delivers every event, in order"
    );
}
