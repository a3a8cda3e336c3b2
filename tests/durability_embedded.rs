//! Concurrent SubmitPlay on the embedded store (the default), against the server binary: one
//! server, three connections, and at every turn the player to act sends one SubmitPlay on each at
//! once with the same `expected_seq` (`durability_support::race`: exactly one wins, every other
//! is STALE_SEQ; with the same request id all three get the same reply). Then the server is
//! killed with SIGKILL and restarted: the game reads back at the same seq (one append per turn,
//! none lost), and the logs hold no error.
//!
//! `SHUANGKOU_TEST_SEED` replays a seed's choices.

pub mod durability_support;

use durability_support::race::race_every_turn;
use durability_support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_plays_on_the_embedded_store_exactly_one_wins() {
    let seed = seed("concurrent_plays_on_the_embedded_store_exactly_one_wins");
    let root = temp_dir("embedded-race");
    let data = root.join("data");
    let mut server = Server::start("embedded", &data.display().to_string(), &root).await;
    let clients: Vec<Client> = (0..3).map(|_| server.client()).collect();
    let raced = race_every_turn(&clients, seed, "embedded-race").await;
    assert!(raced.seq > 0, "seed {seed}: no play was made");
    server.assert_clean_logs();

    server.kill();
    server.restart().await;
    let state = spectated(&server.client(), &raced.game_id, &raced.spectator)
        .await
        .expect("GetState after the restart");
    assert_eq!(
        state.seq, raced.seq,
        "seed {seed}: seq after SIGKILL and restart"
    );
    assert!(
        player_to_act(&state).is_none(),
        "seed {seed}: the game finished before the kill"
    );
}
