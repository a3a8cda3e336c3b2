mod common;
use common::*;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scratch() {
    let server = TestServer::start(|_| {}).await;
    for v in VARIANTS {
        let mut client = server.client().await;
        let created = create(&mut client, "", create_req(v, 2, Some(1))).await;
        let t = Instant::now();
        let (logs, _) = play_match(server.addr, &created, Policy{seed: 1, pass_prob: 0.25, stop_at_seq: None}, Duration::from_secs(100)).await.unwrap();
        let n: usize = logs.iter().map(|l| l.submits.len()).sum();
        let st: usize = logs.iter().map(|l| l.states.len()).sum();
        eprintln!("{v}: {:?} for {n} actions, {st} states", t.elapsed());
        // hints cost
        let st = state(&mut client, &created.game_id, &created.seat_tokens[0]).await;
        let _ = st;
    }
}
