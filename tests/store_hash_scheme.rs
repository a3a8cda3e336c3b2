//! Recovery of a game stored with the older state-hash scheme: before the compact (postcard)
//! scheme, a record had no `hash_scheme` field and every log entry's state hash was SHA-256 of
//! the game's JSON form. Such a store must still recover, verify, and take new plays.
//!
//! The old-scheme data is made from a game played by the server: its record loses the field and
//! every entry's hash is recomputed over JSON (the state after that entry, rebuilt from the log's
//! prefix with the library; the compact hashes the server wrote are checked on the way), written
//! to a fresh data directory. A server started on it recovers the game, serves it at the same seq,
//! accepts a play, and after SIGKILL recovers the game again (its new entry hashed over JSON).

pub mod durability_support;

use durability_support::*;
use shuangkou::game::HashScheme;
use shuangkou::service::pb;
use shuangkou::service::session::Session;
use shuangkou::store::embedded::EmbeddedStore;
use shuangkou::store::{Appended, Created, LogEntry, Store};
use shuangkou::variants::registry::Registry;

async fn state(server: &Server, t: &Table) -> pb::GetStateResponse {
    spectated(&server.client(), &t.game_id, &t.spectator)
        .await
        .expect("GetState")
}

/// Makes the play of the seat to act (chosen from GetHints); returns the new seq.
async fn play(server: &Server, t: &Table, rng: &mut Rand, rid: &str) -> u64 {
    let s = state(server, t).await;
    let player = player_to_act(&s).expect("the game is in progress");
    let token = &t.seat_tokens[player as usize];
    let mut c = server.client();
    let hints = c
        .get_hints(authed(hints_req(&t.game_id), token))
        .await
        .expect("GetHints")
        .into_inner();
    let req = choose(rng, &t.game_id, player, s.seq, &hints, rid.into());
    c.submit_play(authed(req, token))
        .await
        .expect("SubmitPlay")
        .into_inner()
        .seq
}

fn json(bytes: &[u8]) -> serde_json::Value {
    serde_json::from_slice(bytes).expect("stored JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_written_with_json_state_hashes_recovers() {
    let seed = seed("a_store_written_with_json_state_hashes_recovers");
    let mut rng = rng(seed, 1);
    let root = temp_dir("hash-scheme");
    let new_dir = root.join("compact");
    let old_dir = root.join("json");

    // A game with a few plays, by the current server.
    let mut server = Server::start("compact", &new_dir.display().to_string(), &root).await;
    let created = server
        .client()
        .create_game(authed(create_request("json-scheme"), ADMIN_KEY))
        .await
        .expect("create")
        .into_inner();
    let t = Table::from_response(&created);
    for i in 0..6 {
        play(&server, &t, &mut rng, &format!("p{i}")).await;
    }
    server.kill();

    // Its record and log, rewritten as the older scheme wrote them.
    let store = EmbeddedStore::open(&new_dir).expect("open the server's store");
    let (record, log) = Store::Embedded(store)
        .load(&t.game_id)
        .await
        .expect("load")
        .expect("the game is stored");
    assert_eq!(log.len(), 6);
    let registry = Registry::embedded().expect("registry");
    let mut old_record = record.clone();
    let mut body = json(&record.body);
    assert!(
        body.as_object_mut()
            .and_then(|o| o.remove("hash_scheme"))
            .is_some(),
        "new records name their scheme"
    );
    old_record.body = serde_json::to_vec(&body).unwrap();
    let mut old_log = Vec::new();
    for k in 1..=log.len() {
        let live = Session::restore(&registry, &record, &log[..k], true).expect("restore a prefix");
        let mut entry = json(&log[k - 1].body);
        assert_eq!(
            entry["hash"].as_str(),
            Some(live.game().state_hash_with(HashScheme::Chained).as_str()),
            "the server's hash of entry {k} is the chained one"
        );
        let old_hash = live.game().state_hash_with(HashScheme::Json);
        assert_ne!(entry["hash"].as_str(), Some(old_hash.as_str()));
        entry["hash"] = serde_json::Value::String(old_hash);
        old_log.push(LogEntry {
            seq: k as u64,
            body: serde_json::to_vec(&entry).unwrap(),
        });
    }
    {
        let old = Store::Embedded(EmbeddedStore::open(&old_dir).expect("open a fresh store"));
        assert_eq!(old.create(&old_record).await, Ok(Created::New));
        for e in &old_log {
            assert_eq!(old.append(&t.game_id, e).await, Ok(Appended::Ok));
        }
    }

    // A server on the old-scheme store recovers the game, serves it and takes a play.
    let mut server = Server::start("json", &old_dir.display().to_string(), &root).await;
    assert_eq!(
        state(&server, &t).await.seq,
        6,
        "seed {seed}: recovered seq"
    );
    assert_eq!(play(&server, &t, &mut rng, "p6").await, 7);
    server.kill();
    server.restart().await;
    assert_eq!(
        state(&server, &t).await.seq,
        7,
        "seed {seed}: seq after a second recovery"
    );
    assert!(
        server.log_lines_with("cannot recover game").is_empty(),
        "seed {seed}: {}",
        server.log()
    );
}
