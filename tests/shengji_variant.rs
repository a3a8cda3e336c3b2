//! The 升級 variant script (`variants/shengji.rhai`): its activation checks, its agreement with
//! the seed's rules in plain Rust (`StandardHooks`, the oracle), the game families sharing one
//! directory (the Shuangkou scripts and their hashes unchanged), hot swap with pinning, and a
//! refused version.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use shuangkou::seat::Seat;
use shuangkou::shengji::hooks::{
    BottomFacts, Finish, MatchFacts, NextDealerFacts, StandardHooks, UpgradeFacts,
};
use shuangkou::shengji::sim::{SimOptions, simulate};
use shuangkou::shengji::{Level, ShengjiHooks};
use shuangkou::variants::{
    self, CompiledVariant, Family, Registry, RegistryConfig, SHENGJI_EMBEDDED, ShengjiVariant,
    content_hash,
};

fn source() -> &'static str {
    SHENGJI_EMBEDDED[0].1
}

fn compiled() -> Arc<ShengjiVariant> {
    let (v, report) =
        variants::load::<ShengjiVariant>("shengji.rhai", source(), Some("shengji"), 40, 1)
            .expect("the embedded script passes its activation checks");
    assert!(report.examples >= 15, "{report:?}");
    assert!(report.random_calls > 0);
    v
}

fn options(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn level(face: u8) -> Level {
    Level::new(face).unwrap()
}

/// Every hook of the script against the plain-Rust seed rules, over every point total 0..=200,
/// every dealer, both outcomes and the level pairs around A.
fn agree(script: &dyn ShengjiHooks, oracle: &dyn ShengjiHooks) {
    assert_eq!(script.bury_points_allowed(), oracle.bury_points_allowed());
    for p in 0..=200 {
        let f = UpgradeFacts {
            opponents_points: p,
            level: level(7),
            opponents_level: level(4),
        };
        assert_eq!(
            script.upgrade(&f).unwrap(),
            oracle.upgrade(&f).unwrap(),
            "P = {p}"
        );
    }
    let b = BottomFacts {
        buried_points: 30,
        last_trick_winner: Seat::new(3),
        winning_card: shuangkou::cards::Card::new(52).unwrap(),
    };
    assert_eq!(
        script.bottom_multiplier(&b).unwrap(),
        oracle.bottom_multiplier(&b).unwrap()
    );
    for dealer in 0..4u8 {
        for kept in [true, false] {
            let n = NextDealerFacts {
                dealer: Seat::new(dealer),
                dealer_kept: kept,
            };
            assert_eq!(
                script.next_dealer(&n).unwrap(),
                oracle.next_dealer(&n).unwrap()
            );
            for played in [12, 13, 14] {
                for after in [[13, 14], [14, 13], [14, 14], [12, 13], [14, 2]] {
                    let m = MatchFacts {
                        dealer_team: dealer % 2,
                        level_played: level(played),
                        levels_before: [level(played), level(13)],
                        levels_after: after.map(level),
                        dealer_kept: kept,
                    };
                    assert_eq!(
                        script.match_winner(&m).unwrap(),
                        oracle.match_winner(&m).unwrap(),
                        "{m:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn the_script_under_its_defaults_is_the_seeds_rules() {
    let v = compiled();
    let script = v.configure(&BTreeMap::new()).unwrap();
    agree(&script, &StandardHooks::default());
}

#[test]
fn the_scripts_options_match_the_cores_settings() {
    let v = compiled();
    let script = v
        .configure(&options(&[
            ("bury_points", "false"),
            ("bottom_multiplier", "3"),
            ("finish", "defend_a"),
        ]))
        .unwrap();
    agree(
        &script,
        &StandardHooks {
            bury_points: false,
            multiplier: 3,
            finish: Finish::DefendA,
        },
    );
    let bad = v.configure(&options(&[("bottom_multiplier", "0")]));
    assert!(bad.is_err(), "a multiplier below 1 is refused");
    let unknown = v.configure(&options(&[("no_such", "1")]));
    assert!(unknown.is_err());
}

#[test]
fn whole_matches_under_the_script_replay_the_same_as_under_the_plain_rules() {
    let v = compiled();
    let script = v.configure(&BTreeMap::new()).unwrap();
    let opts = SimOptions::default();
    let a = simulate(&script, 7, 6, opts);
    let b = simulate(&StandardHooks::default(), 7, 6, opts);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert_eq!(
        (
            a.deals,
            a.actions,
            a.dealer_kept,
            a.kou_di,
            a.finished_matches
        ),
        (
            b.deals,
            b.actions,
            b.dealer_kept,
            b.kou_di,
            b.finished_matches
        )
    );
}

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn dir(name: &str) -> Dir {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("shengji-variant-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    Dir(d)
}

fn config(d: &Dir) -> RegistryConfig {
    RegistryConfig {
        dir: Some(d.0.clone()),
        random_deals: 2,
        ..RegistryConfig::default()
    }
}

#[test]
fn each_family_loads_only_its_own_scripts_from_one_directory() {
    let d = dir("families");
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("variants");
    for entry in std::fs::read_dir(&repo).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "rhai") {
            std::fs::copy(&p, d.0.join(p.file_name().unwrap())).unwrap();
        }
    }
    let (shuangkou, report) = Registry::open(config(&d)).unwrap();
    assert!(report.rejected.is_empty(), "{:?}", report.rejected);
    let embedded: Vec<&str> = variants::EMBEDDED.iter().map(|(id, _)| *id).collect();
    let mut ids = shuangkou.ids();
    ids.sort();
    let mut want: Vec<String> = embedded.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(ids, want, "the shengji script is not a Shuangkou variant");
    for (id, src) in variants::EMBEDDED {
        assert_eq!(
            shuangkou.active(id).unwrap().hash(),
            content_hash(src),
            "{id}: unchanged hash"
        );
    }
    let (shengji, report) =
        Registry::<ShengjiVariant>::open_family(config(&d)).expect("the shengji registry");
    assert!(report.rejected.is_empty(), "{:?}", report.rejected);
    assert_eq!(shengji.ids(), vec!["shengji".to_string()]);
    assert_eq!(
        shengji.active("shengji").unwrap().hash(),
        content_hash(source())
    );
    // The embedded defaults of each family.
    let embedded = Registry::<ShengjiVariant>::embedded_family().unwrap();
    assert_eq!(embedded.ids(), vec!["shengji".to_string()]);
    assert!(
        Registry::<CompiledVariant>::embedded()
            .unwrap()
            .active("shengji")
            .is_none()
    );
}

#[test]
fn a_new_version_is_hot_swapped_pinned_games_keep_theirs_and_a_wrong_example_is_refused() {
    let d = dir("hotswap");
    let path = d.0.join("shengji.rhai");
    std::fs::write(&path, source()).unwrap();
    let (registry, _) = Registry::<ShengjiVariant>::open_family(config(&d)).unwrap();
    let first = registry.active("shengji").unwrap();
    // A platform that triples 摳底: a new version, its example updated with it.
    let tripled = source()
        .replace(
            "bottom_multiplier: #{ type: \"int\", \"default\": 2,",
            "bottom_multiplier: #{ type: \"int\", \"default\": 3,",
        )
        .replace(
            "           facts: #{ buried_points: 25, last_trick_winner: 1, winning_card: 52 },\n           expect: 2 },",
            "           facts: #{ buried_points: 25, last_trick_winner: 1, winning_card: 52 },\n           expect: 3 },",
        );
    assert_ne!(tripled, source(), "the edit applies");
    std::fs::write(&path, &tripled).unwrap();
    let report = registry.reload().unwrap();
    assert_eq!(report.activated.len(), 1, "{report:?}");
    let second = registry.active("shengji").unwrap();
    assert_ne!(first.hash(), second.hash());
    let hooks = second.configure(&BTreeMap::new()).unwrap();
    let b = BottomFacts {
        buried_points: 10,
        last_trick_winner: Seat::new(1),
        winning_card: shuangkou::cards::Card::new(53).unwrap(),
    };
    assert_eq!(hooks.bottom_multiplier(&b).unwrap(), 3);
    // The game pinned to the first version still gets it.
    let pinned = registry.get("shengji", first.hash()).expect("pinned");
    assert_eq!(
        pinned
            .configure(&BTreeMap::new())
            .unwrap()
            .bottom_multiplier(&b)
            .unwrap(),
        2
    );
    // A version whose worked example disagrees with its hooks never becomes active.
    let wrong = tripled.replace(
        "expect: #{ side: \"opponents\", levels: 2 } },",
        "expect: #{ side: \"opponents\", levels: 1 } },",
    );
    assert_ne!(wrong, tripled);
    std::fs::write(&path, &wrong).unwrap();
    let report = registry.reload().unwrap();
    assert_eq!(report.rejected.len(), 1, "{report:?}");
    assert!(
        report.rejected[0].to_string().contains("60 points"),
        "{}",
        report.rejected[0]
    );
    assert_eq!(registry.active("shengji").unwrap().hash(), second.hash());
}

#[test]
fn a_shuangkou_script_is_not_a_shengji_script() {
    let e = ShengjiVariant::compile("classic.rhai", variants::EMBEDDED[0].1, None).unwrap_err();
    assert!(e.to_string().contains("missing hook"), "{e}");
}
