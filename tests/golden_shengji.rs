//! Golden 升級 matches: seeded random matches played to the end, with the state hash after every
//! action, the log (the actions as stored, JSON) and every event and a seat's view at the end, as
//! digests. Written by the code before the seats became `Seat`s (raw `u8`), so it shows that the
//! newtype left logs, events, views and state hashes byte-identical; a change detector, not an
//! oracle. The stored log also goes round: parsed back and replayed against its hashes.
//!
//! Regenerate (after a deliberate change, and say why in the commit):
//! `UPDATE_GOLDEN=1 cargo test --test golden_shengji`.

#[path = "common/flags.rs"]
pub mod flags;

use std::fmt::Write;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};
use shuangkou::seat::Player;
use shuangkou::shengji::sim::{match_seed, random_action};
use shuangkou::shengji::{Action, Game, Setup, StandardHooks, Viewer};

const FILE: &str = "tests/data/golden_shengji.txt";

const CHANGE_DETECTOR: &str = "# change detector, not an oracle: written by tests/golden_shengji.rs itself (UPDATE_GOLDEN=1); a difference means the behaviour changed, not that either version is right";

fn digest(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// One match: its line in the golden file, after checking that the stored log replays.
fn playthrough(index: u64) -> String {
    let hooks = StandardHooks::default();
    let setup = Setup::seeded(match_seed(2026, index));
    let (mut game, mut events) = Game::new(setup.clone()).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(index);
    let mut log = Vec::new();
    let mut hashes = Vec::new();
    while let Some(action) = random_action(&game, &hooks, &mut rng, 0.02) {
        events.extend(game.apply(&hooks, action).unwrap());
        log.push(action);
        hashes.push(game.state_hash());
        if game.deal_number() > 40 {
            break;
        }
    }
    let stored = serde_json::to_string(&log).unwrap();
    let parsed: Vec<Action> = serde_json::from_str(&stored).unwrap();
    let replayed = Game::replay(setup, &hooks, &parsed, Some(&hashes)).unwrap();
    assert_eq!(replayed.state_hash(), game.state_hash(), "match {index}");
    let views: Vec<_> = [
        Viewer::Player(Player::new(index as u8 % 4)),
        Viewer::Spectator,
        Viewer::Admin,
    ]
    .map(|v| game.view(v))
    .into();
    format!(
        "match {index}: {} actions, deal {}, state {}, hashes {}, log {}, events {}, views {}, postcard log {}",
        log.len(),
        game.deal_number(),
        game.state_hash(),
        digest(hashes.concat().as_bytes()),
        digest(stored.as_bytes()),
        digest(serde_json::to_string(&events).unwrap().as_bytes()),
        digest(serde_json::to_string(&views).unwrap().as_bytes()),
        digest(&postcard::to_stdvec(&log).unwrap()),
    )
}

#[test]
fn seeded_matches_keep_their_logs_events_views_and_hashes() {
    let mut out = format!("{CHANGE_DETECTOR}\n");
    for index in 0..4 {
        let _ = writeln!(out, "{}", playthrough(index));
    }
    if flags::update_golden() {
        std::fs::write(FILE, &out).unwrap();
        return;
    }
    let golden = std::fs::read_to_string(FILE).expect("golden file (UPDATE_GOLDEN=1 writes it)");
    assert_eq!(out, golden, "the 升級 golden matches changed");
}
