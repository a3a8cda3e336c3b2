//! Hot swap and pinning: a game keeps the version it started with while a new version activates;
//! a broken update leaves the old version active (refused, logged, counted); pinned versions
//! survive a restart through the archive; the Kubernetes ConfigMap layout (files symlinked through
//! `..data`, updated by an atomic swap of the `..data` symlink) is watched and reloaded.
//!
//! The tests use a small variant `toy` (its score per player is its `points` option) next to the
//! real scripts, so that each version's behaviour is obvious.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use shuangkou::game::hooks::{DealFacts, Outcome, VariantHooks};
use shuangkou::seat::Seat;
use shuangkou::variants::{self, Registry, RegistryConfig, RegistryError, content_hash};

/// A complete, valid variant whose 雙扣 winners get `points` each.
fn toy(points: i64) -> String {
    format!(
        r#"// toy variant for the hot-swap tests
fn meta() {{
    #{{ id: "toy", name: "toy", players: 4, description: "test", source: "tests",
        partners_see_hands: false }}
}}
fn options() {{
    #{{ points: #{{ type: "int", "default": {points}, min: 0, max: 1000, doc: "points" }} }}
}}
fn rules(opts) {{
    #{{ players: 4, hand_size: 27, wild_jokers: "none", big_joker_as_small: false,
        three_jokers: false, tianwang: "above_all", bomb_order: "classic",
        equal_star_tie_break: "top_rank", chain_bombs: "none",
        unequal_chain_level: "max_with_largest_group", cyclic_chain_bombs: false,
        min_straight: 5, min_pair_chain: 3, min_triple_chain: 3, min_chain_links: 3,
        max_chain_links: 6, min_naturals_in_sequence: 0, two_player_double_min: 12,
        two_player_single_min: 7 }}
}}
fn sum_rule(opts) {{ "zero" }}
fn seating(facts, opts) {{ #{{ leader: facts.shown_holders[0], swap: () }} }}
fn settle(facts, opts) {{
    let w = facts.places[0] % 2;
    let lines = [];
    for s in 0..4 {{
        let p = if s % 2 == w {{ opts.points }} else {{ -opts.points }};
        lines.push(#{{ seat: s, label: "base", points: p, detail: "toy" }});
    }}
    #{{ lines: lines }}
}}
fn settle_escape(facts, opts) {{ #{{ lines: [] }} }}
fn timeout_is_escape(facts, opts) {{ facts.disconnected }}
fn examples() {{
    [ #{{ name: "double", facts: #{{ places: [0, 2, 1, 3] }},
          expect: [{points}, -{points}, {points}, -{points}] }} ]
}}
"#
    )
}

/// The toy with a failing declared example (it claims 99).
fn toy_wrong_example(points: i64) -> String {
    toy(points).replace(&format!("expect: [{points},"), "expect: [99,")
}

fn deal() -> DealFacts {
    DealFacts {
        players: 4,
        deal_number: 1,
        outcome: Outcome::Double,
        places: Seat::list(&[0, 2, 1, 3]),
        cards_left: vec![0, 9, 0, 4],
        bombs_played: vec![],
        bombs_in_hand: vec![vec![]; 4],
    }
}

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "shuangkou-{name}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn config(dir: &Path, archive: Option<&Path>) -> RegistryConfig {
    RegistryConfig {
        dir: Some(dir.to_path_buf()),
        archive: archive.map(Path::to_path_buf),
        random_deals: 20,
        ..RegistryConfig::default()
    }
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

fn score(r: &Registry, id: &str) -> i64 {
    r.active(id)
        .unwrap()
        .with_defaults()
        .unwrap()
        .settle(&deal())
        .unwrap()
        .scores[0]
}

#[test]
fn games_keep_their_version_while_a_new_one_activates() {
    let dir = TempDir::new("pin");
    write(&dir.0.join("toy.rhai"), &toy(1));
    let (registry, report) = Registry::open(config(&dir.0, None)).unwrap();
    assert_eq!(report.activated.len(), 1);
    let v1 = registry.active("toy").unwrap();
    // A game starts: it pins v1 (holds the Arc; stores the hash).
    let game = v1.with_defaults().unwrap();
    let pinned_hash = v1.hash().to_string();
    drop(v1);

    write(&dir.0.join("toy.rhai"), &toy(2));
    let report = registry.reload().unwrap();
    assert_eq!(report.activated.len(), 1, "{report:?}");
    assert_eq!(score(&registry, "toy"), 200, "new games use v2");
    assert_eq!(
        game.settle(&deal()).unwrap().scores[0],
        100,
        "the game keeps v1"
    );
    let again = registry.get("toy", &pinned_hash).expect("v1 is still held");
    assert_eq!(again.hash(), pinned_hash);
    assert_eq!(registry.stats().versions, 2);
    drop(again);

    // The game ends: v1 is dropped at the next reload.
    drop(game);
    registry.reload().unwrap();
    assert!(registry.get("toy", &pinned_hash).is_none());
    assert_eq!(registry.stats().versions, 1);

    // Reverting the file to v1 re-checks and re-activates it under the same hash.
    write(&dir.0.join("toy.rhai"), &toy(1));
    registry.reload().unwrap();
    assert_eq!(registry.active("toy").unwrap().hash(), pinned_hash);
}

#[test]
fn a_broken_update_leaves_the_old_version_active() {
    let dir = TempDir::new("broken");
    write(&dir.0.join("toy.rhai"), &toy(3));
    let (registry, _) = Registry::open(config(&dir.0, None)).unwrap();
    let good = registry.active("toy").unwrap().hash().to_string();

    let broken = [
        (
            "syntax error",
            toy(4).replace("fn settle(facts, opts) {", "fn settle(facts, opts {"),
        ),
        ("failing example", toy_wrong_example(4)),
        (
            "endless loop in settle",
            toy(4).replace(
                "let w = facts.places[0] % 2;",
                "let w = 0; loop { w += 1; }",
            ),
        ),
        (
            "missing hook",
            toy(4).replace("fn settle_escape(", "fn settle_escape_gone("),
        ),
        (
            "not zero-sum",
            toy(4).replace("{ -opts.points }", "{ -opts.points + 1 }"),
        ),
        ("wrong id", toy(4).replace("id: \"toy\"", "id: \"other\"")),
    ];
    for (i, (what, text)) in broken.iter().enumerate() {
        write(&dir.0.join("toy.rhai"), text);
        let report = registry.reload().unwrap();
        assert_eq!(report.rejected.len(), 1, "{what}: {report:?}");
        assert!(report.activated.is_empty(), "{what}");
        assert_eq!(registry.active("toy").unwrap().hash(), good, "{what}");
        assert_eq!(score(&registry, "toy"), 300, "{what}");
        assert_eq!(registry.stats().rejected, i as u64 + 1, "{what}");
        let last = registry.last_error("toy").unwrap();
        eprintln!("{what}: {last}");
        // The same broken content is not re-checked (or re-counted) on the next event.
        let again = registry.reload().unwrap();
        assert!(
            again.rejected.is_empty() && again.activated.is_empty(),
            "{what}"
        );
    }
    assert!(registry.last_error("toy").unwrap().contains("other"));
    // A fixed file activates.
    write(&dir.0.join("toy.rhai"), &toy(5));
    registry.reload().unwrap();
    assert_eq!(score(&registry, "toy"), 500);
    assert!(registry.last_error("toy").is_none());
}

#[test]
fn startup_skips_broken_files_and_needs_one_valid_variant() {
    let dir = TempDir::new("startup");
    write(&dir.0.join("toy.rhai"), &toy(1));
    write(&dir.0.join("classic.rhai"), "fn meta( {");
    write(&dir.0.join("README.md"), "not a script");
    let (registry, report) = Registry::open(config(&dir.0, None)).unwrap();
    assert_eq!(registry.ids(), vec!["toy".to_string()]);
    assert_eq!(report.rejected.len(), 1);
    assert!(
        report.rejected[0].to_string().contains("classic.rhai:1:"),
        "{}",
        report.rejected[0]
    );

    std::fs::remove_file(dir.0.join("toy.rhai")).unwrap();
    match Registry::open(config(&dir.0, None)) {
        Err(RegistryError::NoValidVariant { errors, .. }) => assert_eq!(errors.len(), 1),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("a registry without a valid variant must not start"),
    }
    let missing = dir.0.join("does-not-exist");
    assert!(matches!(
        Registry::open(config(&missing, None)),
        Err(RegistryError::Dir { .. })
    ));
}

#[test]
fn a_removed_file_deactivates_the_variant_but_pinned_games_keep_it() {
    let dir = TempDir::new("remove");
    write(&dir.0.join("toy.rhai"), &toy(1));
    write(&dir.0.join("erren.rhai"), variants::EMBEDDED[5].1);
    let (registry, _) = Registry::open(config(&dir.0, None)).unwrap();
    let game = registry.active("toy").unwrap();
    std::fs::remove_file(dir.0.join("toy.rhai")).unwrap();
    let report = registry.reload().unwrap();
    assert_eq!(report.removed, vec!["toy".to_string()]);
    assert!(registry.active("toy").is_none());
    assert!(registry.get("toy", game.hash()).is_some());
    assert_eq!(registry.stats().removed, 1);
}

#[test]
fn pinned_versions_survive_a_restart_through_the_archive() {
    let dir = TempDir::new("restart");
    let archive = TempDir::new("archive");
    write(&dir.0.join("toy.rhai"), &toy(1));
    let v1_hash = content_hash(&toy(1));
    {
        let (registry, _) = Registry::open(config(&dir.0, Some(&archive.0))).unwrap();
        write(&dir.0.join("toy.rhai"), &toy(2));
        registry.reload().unwrap();
        assert_eq!(score(&registry, "toy"), 200);
    }
    // Restart: the directory holds v2 only; a game pinned to v1 is restored from the archive.
    let (registry, _) = Registry::open(config(&dir.0, Some(&archive.0))).unwrap();
    assert_eq!(score(&registry, "toy"), 200);
    let v1 = registry
        .get("toy", &v1_hash)
        .expect("restored from the archive");
    assert_eq!(
        v1.with_defaults().unwrap().settle(&deal()).unwrap().scores[0],
        100
    );
    assert!(registry.get("toy", "0123abcd").is_none());
    assert!(registry.get("toy", "../../etc/passwd").is_none());
    // A game that stored the script text can restore it without an archive.
    let (bare, _) = Registry::open(config(&dir.0, None)).unwrap();
    assert!(bare.get("toy", &v1_hash).is_none());
    let restored = bare.restore("toy", &v1_hash, &toy(1), "game-log").unwrap();
    assert_eq!(restored.hash(), v1_hash);
    assert!(bare.restore("toy", &v1_hash, &toy(3), "game-log").is_err());
}

#[test]
fn the_embedded_registry_serves_the_six_variants() {
    let registry = Registry::embedded().unwrap();
    assert_eq!(
        registry.ids(),
        vec!["baibian", "classic", "erren", "huopin", "jj", "qianbian"]
    );
    assert!(registry.reload().unwrap().activated.is_empty());
    for (id, src) in variants::EMBEDDED {
        assert_eq!(registry.active(id).unwrap().hash(), content_hash(src));
    }
}

/// Waits (polling) until `cond` holds; the watcher reloads asynchronously.
fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(unix)]
#[test]
fn the_watcher_follows_a_configmap_symlink_swap() {
    use std::os::unix::fs::symlink;

    let dir = TempDir::new("configmap");
    let root = &dir.0;
    // Kubernetes' layout: a timestamped directory, `..data` pointing at it, and the visible
    // files pointing through `..data`.
    let publish = |stamp: &str, toy_points: Option<i64>, toy_text: Option<String>| {
        let d = root.join(stamp);
        std::fs::create_dir(&d).unwrap();
        for (id, src) in variants::EMBEDDED {
            write(&d.join(format!("{id}.rhai")), src);
        }
        let text = toy_text.unwrap_or_else(|| toy(toy_points.unwrap_or(1)));
        write(&d.join("toy.rhai"), &text);
        let tmp = root.join("..data_tmp");
        symlink(stamp, &tmp).unwrap();
        // The atomic swap.
        std::fs::rename(&tmp, root.join("..data")).unwrap();
    };
    publish("..2026_11_29_10_00_00.000000001", Some(1), None);
    for id in [
        "classic", "jj", "baibian", "huopin", "qianbian", "erren", "toy",
    ] {
        symlink(format!("..data/{id}.rhai"), root.join(format!("{id}.rhai"))).unwrap();
    }
    let (registry, report) = Registry::open(config(root, None)).unwrap();
    assert_eq!(report.activated.len(), 7, "{report:?}");
    let registry = Arc::new(registry);
    let watcher = registry.watch(Duration::from_millis(100)).unwrap();
    let game = registry.active("toy").unwrap().with_defaults().unwrap();
    let classic_hash = registry.active("classic").unwrap().hash().to_string();

    // A good update: toy v2 goes live, the other files are unchanged.
    publish("..2026_11_29_10_05_00.000000002", Some(2), None);
    std::fs::remove_dir_all(root.join("..2026_11_29_10_00_00.000000001")).unwrap();
    wait_for("toy v2 active", || score(&registry, "toy") == 200);
    assert_eq!(registry.active("classic").unwrap().hash(), classic_hash);
    assert_eq!(
        game.settle(&deal()).unwrap().scores[0],
        100,
        "the game keeps v1"
    );

    // A broken update: refused, counted; v2 stays active.
    let rejected_before = registry.stats().rejected;
    publish(
        "..2026_11_29_10_10_00.000000003",
        None,
        Some(toy_wrong_example(3)),
    );
    wait_for("the broken toy refused", || {
        registry.stats().rejected > rejected_before
    });
    assert_eq!(score(&registry, "toy"), 200);
    assert!(registry.last_error("toy").unwrap().contains("example"));

    // An admin reload with nothing new changes nothing.
    let report = registry.reload().unwrap();
    assert!(report.activated.is_empty() && report.rejected.is_empty());
    drop(watcher);
}
