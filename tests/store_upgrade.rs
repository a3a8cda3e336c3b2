//! A data directory written by the previous layout of the embedded store (journal format 2: each
//! record carried its variant script text; no script table) still loads: the fixture
//! `tests/data/store_v2/` was written by the store and service of commit `1261622` (one classic
//! game in progress at seq 3, one finished at seq 3 and archived by compaction). The state hashes
//! below are the ones that code computed, so the replay here is checked against an oracle the
//! new code did not produce.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use shuangkou::game::Action;
use shuangkou::service::games::{Games, GamesConfig};
use shuangkou::service::record::{CreateBase, Minting, NewGame, Record};
use shuangkou::store::Store;
use shuangkou::variants::registry::{Registry, RegistryConfig};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/store_v2");
/// (game, seq, state hash after it), as the previous layout's code left them.
const GAMES: [(&str, u64, &str); 2] = [
    (
        "in-progress",
        3,
        "8eb90bfca6b0aa6b979ef5c6d556d9084e39f78f0ebb93f4c4285850779d37e4",
    ),
    (
        "finished",
        3,
        "846fbe5aa217fb9155fa696425880fdf58615f52dbad605227167472bbab05c2",
    ),
];

/// A copy of the fixture in a fresh directory (the test upgrades and writes to it).
fn copy_fixture(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("store-upgrade-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["shuangkou.log", "shuangkou.archive"] {
        std::fs::copy(Path::new(FIXTURE).join(f), dir.join(f)).unwrap();
    }
    dir
}

fn magic(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()[..16].to_vec()
}

async fn games(registry: &Arc<Registry>, dir: &Path) -> Games {
    let config = GamesConfig {
        no_turn_timers: false,
        finished_linger_seconds: 120,
        backlog_actions: shuangkou::service::backlog::DEFAULT_ACTIONS,
        max_games: 10,
        disconnected_turns_immediate: false,
        auto_bot: shuangkou::bot::styles::spec("heuristic").unwrap(),
    };
    let store = Store::open(&dir.display().to_string()).await.unwrap();
    Games::new(config, Arc::clone(registry), store)
}

/// A registry of one variant other than classic (from a directory holding `baibian.rhai` only):
/// every classic game it rebuilds needs the pinned text from the store.
fn registry_without_classic(dir: &Path) -> Arc<Registry> {
    let variants = dir.join("variants");
    std::fs::create_dir_all(&variants).unwrap();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/variants/baibian.rhai");
    std::fs::copy(root, variants.join("baibian.rhai")).unwrap();
    let config = RegistryConfig {
        dir: Some(variants),
        ..RegistryConfig::default()
    };
    let registry = Registry::open(config).unwrap().0;
    assert!(registry.active("classic").is_none());
    Arc::new(registry)
}

#[tokio::test]
async fn a_store_written_by_the_previous_layout_recovers_and_takes_plays() {
    let dir = copy_fixture("recover");
    assert_eq!(magic(&dir.join("shuangkou.log")), b"SHUANGKOU-LOG-v2");
    let registry = Arc::new(Registry::embedded().unwrap());
    let first = games(&registry, &dir).await;
    assert_eq!(magic(&dir.join("shuangkou.log")), b"SHUANGKOU-LOG-v3");
    assert_eq!(magic(&dir.join("shuangkou.archive")), b"SHUANGKOU-ARC-v3");
    first.recover().await.unwrap();
    for (id, seq, hash) in GAMES {
        let game = first.load(id).await.unwrap();
        let live = game.lock().await;
        assert_eq!(live.seq(), seq, "{id}");
        assert_eq!(
            live.game().state_hash_with(live.record.hash_scheme),
            hash,
            "{id}"
        );
        assert_eq!(live.finished(), id == "finished");
    }
    // A play on the old game, and a new game beside it (its script goes to the table).
    let game = first.load("in-progress").await.unwrap();
    let mut live = first.current(&game).await.unwrap();
    first
        .commit(&mut live, |l| {
            let player = l.player_to_act().expect("a seat to act");
            l.prepare_action(player, Action::Timeout, 1_800_000_000_000)
        })
        .await
        .unwrap();
    let hash4 = live.game().state_hash_with(live.record.hash_scheme);
    drop(live);
    let compiled = registry.active("classic").unwrap();
    let new = NewGame {
        base: CreateBase::of("classic"),
        ..NewGame::default()
    };
    let (record, _) = Record::new(
        &compiled,
        &new,
        Minting::local("new", &[7; 32], 1_700_000_000_000),
    )
    .unwrap();
    first.create(record, None).await.unwrap();
    first.store().flush().await.unwrap();
    drop(first);

    // Reopened with a registry that has never compiled classic: the texts come from the store
    // (inside the old records; from the script table for the new one).
    let second = games(&registry_without_classic(&dir), &dir).await;
    let (old, _) = second.store().load("in-progress").await.unwrap().unwrap();
    assert_eq!(old.script, None, "the old record carries its own text");
    let (new, _) = second.store().load("new").await.unwrap().unwrap();
    let pinned = new.script.expect("the new record names its script");
    assert!(
        !String::from_utf8_lossy(&new.body).contains(&*pinned.text),
        "the new record's body does not repeat the script"
    );
    // The new game first: before the old records have brought the version into the registry.
    assert_eq!(second.load("new").await.unwrap().lock().await.seq(), 0);
    second.recover().await.unwrap();
    let game = second.load("in-progress").await.unwrap();
    let live = game.lock().await;
    assert_eq!(live.seq(), 4);
    assert_eq!(live.game().state_hash_with(live.record.hash_scheme), hash4);
    drop(live);
    let _ = std::fs::remove_dir_all(&dir);
}
