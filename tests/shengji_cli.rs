//! The command-line tools know the second game (`--game shengji`): simulate, arena, variants
//! check and rules follow, run as the binary.

pub mod cli_support;

use std::process::Output;

/// Runs `shuangkou ARGS` with an empty stdin.
fn shuangkou(args: &[&str]) -> Output {
    cli_support::run(args, "", false)
}

/// The JSON reply of a run that exited 0.
fn ok_json(out: &Output) -> serde_json::Value {
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    json(out)
}

fn json(out: &Output) -> serde_json::Value {
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn simulate_plays_whole_matches_with_every_invariant_checked() {
    let r = ok_json(&shuangkou(&[
        "simulate", "--game", "shengji", "--deals", "3", "--seed", "9", "--json",
    ]));
    assert_eq!(r["matches"], 3);
    assert_eq!(r["finished_matches"], 3);
    assert!(
        r["deals"].as_u64().unwrap() >= 3 * 5,
        "a match to A takes several deals: {r}"
    );
    assert_eq!(r["violations"].as_array().unwrap().len(), 0);
    let bad = shuangkou(&[
        "simulate",
        "--game",
        "shengji",
        "--option",
        "bottom_multiplier=0",
    ]);
    assert_eq!(
        bad.status.code(),
        Some(2),
        "an out-of-range option is refused"
    );
}

#[test]
fn the_arena_plays_the_rule_bot_against_random_on_both_sides() {
    let r = ok_json(&shuangkou(&[
        "arena", "--game", "shengji", "--a", "rule", "--b", "random", "--deals", "3", "--json",
    ]));
    assert_eq!(r["matches"], 6);
    assert_eq!(r["unfinished"], 0);
    // The rule bot (follows suit sensibly, keeps trumps, feeds points) beats random play.
    assert!(r["a_win_rate"].as_f64().unwrap() >= 0.5, "{r}");
    let bad = shuangkou(&["arena", "--game", "shengji", "--a", "rule", "--b", "nope"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn variants_check_knows_each_scripts_game() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/variants/");
    let files: Vec<String> = ["classic", "shengji"]
        .iter()
        .map(|id| format!("{dir}{id}.rhai"))
        .collect();
    let out = shuangkou(&["variants", "check", "--random", "2", &files[0], &files[1]]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("ok   classic") && text.contains("ok   shengji"),
        "{text}"
    );
    let out = shuangkou(&["variants", "check", "--game", "shengji"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("ok   shengji") && text.contains("18 examples"),
        "{text}"
    );
}

#[test]
fn rules_follow_answers_from_the_card_order() {
    // Level 7, hearts trump: 7S is a trump, so against a spade lead only AS follows (SHENGJI.md
    // A1: level cards of other suits are trumps).
    let r = ok_json(&shuangkou(&[
        "rules",
        "follow",
        "--game",
        "shengji",
        "--level",
        "7",
        "--trump",
        "H",
        "--hand",
        "AS 7S 3H 2C SJ",
        "--trick",
        "KS",
    ]));
    assert_eq!(r["legal"], serde_json::json!(["AS"]));
    // 7C (a level card of another suit) beats 3H (the trump suit) and the led KS and AS.
    let out = shuangkou(&[
        "rules",
        "follow",
        "--level",
        "7",
        "--trump",
        "H",
        "--trick",
        "KS 7C 3H AS",
    ]);
    assert_eq!(json(&out)["trick_winner"], 1);
    let bad = shuangkou(&["rules", "follow", "--level", "1", "--trump", "H"]);
    assert_eq!(bad.status.code(), Some(2));
}
