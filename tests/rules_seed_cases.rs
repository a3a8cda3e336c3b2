//! The seed sentences of issue 18 as the commands an operator runs: the escape rule of `huopin`
//! (S1), the rake of S4 with and without `rake_contribution`, and the simulator under every new
//! option value (`equal_star_bombs`, `rake_contribution`, `huopin`'s escape rules) with every
//! invariant checked. The card-rule cases (equal star levels, the hand-size limit) are in
//! `tests/data/vectors.txt` and `tests/cli_rules.rs`.
//!
//! Every expected score below is worked by hand from the seed text quoted beside it.

pub mod variants_support;

use std::process::Output;

use serde_json::Value;
use shuangkou::cli::simulate::hooks_with_options;
use shuangkou::game::sim::{SimOptions, simulate};

pub mod cli_support;

/// Runs `shuangkou ARGS` with `stdin`.
fn run(args: &[&str], stdin: &str) -> Output {
    cli_support::run(args, stdin, false)
}

/// The scores (hundredths) of `shuangkou variants settle ID --json` for these facts.
fn settle(args: &[&str], facts: &str) -> Vec<i64> {
    let mut all = vec!["variants", "settle"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = run(&all, facts);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{args:?}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    v["settlement"]["scores"]
        .as_array()
        .expect("scores")
        .iter()
        .map(|s| s.as_i64().expect("integer hundredths"))
        .collect()
}

/// Issue 18, case 2. S1: 「有玩家逃跑時，逃跑的玩家將會被扣除相應的游戲積分，其余玩家游戲積分不變」 (an
/// escaper loses points, the others' scores do not change; docs/rules/RULES.md §8 #25). N escapes after
/// playing a 7線 (×8): D = 雙扣 4 × 8 = 32, N pays 3 × 32 = 96; N's contribution (S1: +18, the
/// others −6 each) was earned when the bomb was played and stands.
#[test]
fn huopin_escaper_pays_alone_by_default() {
    let facts = r#"{"escaper":0,"cards_left":[12,20,9,17],"bombs_played":[{"seat":0,"cards":"9 9 9 9 9 9 9"}]}"#;
    assert_eq!(
        settle(&["huopin", "--hook", "escape"], facts),
        vec![-7800, -600, -600, -600]
    );
    // The P-5158 rule stays an option: each other player also receives D = 32.
    assert_eq!(
        settle(
            &[
                "huopin",
                "--hook",
                "escape",
                "--option",
                "escape_rule=p5158"
            ],
            facts
        ),
        vec![-7800, 2600, 2600, 2600]
    );
}

/// Issue 18, case 4. S4: 「勝利者最終得分：基礎分×翻倍數×（1-稅率）；失敗者最終得分：－基礎分×翻倍數」 (docs/rules/RULES.md
/// §6.6, §8 #28). erren, 單扣 (the loser holds 9 cards: 2 units), the loser's 8相 still in hand
/// earns it 8 units of contribution, rake 10%: the winner pays 10% of its base 2 (0.2) and ends
/// 2 − 0.2 − 8 = −6.2; the loser ends −2 + 8 = +6, not raked. With rake_contribution (a platform
/// that rakes the whole total) the loser's positive total is raked instead: −6 / +5.4.
#[test]
fn rake_applies_to_the_winners_base_times_multiplier() {
    let facts = r#"{"places":[0,1],"cards_left":[0,9],"bombs_in_hand":[[],["7 7 7 7 7 7 7 7"]]}"#;
    assert_eq!(
        settle(&["erren", "--option", "rake_percent=10"], facts),
        vec![-620, 600]
    );
    assert_eq!(
        settle(
            &[
                "erren",
                "--option",
                "rake_percent=10",
                "--option",
                "rake_contribution=true"
            ],
            facts
        ),
        vec![-600, 540]
    );
    // Four players (baibian): 雙扣 N–S ±4; E's 7★ earns E 12, the others −4 each (no multiplier:
    // E–W lost). N and S are raked 10% of their base 4; E (total +8, all contribution) is not.
    let facts = r#"{"places":[0,2,1,3],"bombs_played":[{"seat":1,"cards":"J J J J J J J"}]}"#;
    assert_eq!(
        settle(&["baibian", "--option", "rake_percent=10"], facts),
        vec![-40, 800, -40, -800]
    );
    assert_eq!(
        settle(
            &[
                "baibian",
                "--option",
                "rake_percent=10",
                "--option",
                "rake_contribution=true"
            ],
            facts
        ),
        vec![0, 720, 0, -800]
    );
}

const STAR_VARIANTS: [&str; 5] = ["jj", "baibian", "huopin", "qianbian", "erren"];
const ALL_VARIANTS: [&str; 6] = ["classic", "jj", "baibian", "huopin", "qianbian", "erren"];

/// Plays `deals` random deals of `variant` under `options` with every invariant checked and
/// asserts none is violated (the seed is in the message).
fn simulate_clean(variant: &str, options: &[&str], deals: u64, seed: u64, sim: SimOptions) {
    let options: Vec<String> = options.iter().map(|s| s.to_string()).collect();
    let hooks = hooks_with_options(variant, &options)
        .unwrap_or_else(|e| panic!("{variant} {options:?}: {e}"));
    let report = simulate(hooks.as_ref(), variant, deals, seed, sim);
    assert!(
        report.violations.is_empty(),
        "{variant} {options:?} (seed {seed}): {:#?}",
        report.violations
    );
    assert!(report.deals >= deals, "{variant} {options:?}: {report:?}");
}

#[test]
fn simulator_under_first_stands_in_every_star_variant() {
    for (i, id) in STAR_VARIANTS.iter().enumerate() {
        simulate_clean(
            id,
            &["equal_star_bombs=first_stands"],
            200,
            18_100 + i as u64,
            SimOptions::default(),
        );
    }
}

#[test]
fn simulator_under_both_rake_rules_in_every_variant() {
    for (i, id) in ALL_VARIANTS.iter().enumerate() {
        for (k, whole) in ["rake_contribution=false", "rake_contribution=true"]
            .iter()
            .enumerate()
        {
            simulate_clean(
                id,
                &["rake_percent=10", whole],
                100,
                18_200 + 10 * i as u64 + k as u64,
                SimOptions::default(),
            );
        }
    }
}

#[test]
fn simulator_under_both_huopin_escape_rules() {
    // Many escapes: one per game at a random step.
    let sim = variants_support::escape_every_game();
    for (k, rule) in ["escape_rule=escaper_only", "escape_rule=p5158"]
        .iter()
        .enumerate()
    {
        simulate_clean(
            "huopin",
            &[rule, "rake_percent=5"],
            150,
            18_300 + k as u64,
            sim,
        );
    }
}

/// `shuangkou simulate --option`: the options reach the script, are echoed in the JSON, and a
/// bad option is refused with exit code 2.
#[test]
fn simulate_command_takes_options() {
    let out = run(
        &[
            "simulate",
            "--variant",
            "huopin",
            "--deals",
            "40",
            "--seed",
            "18",
            "--option",
            "equal_star_bombs=first_stands",
            "--option",
            "rake_percent=5",
            "--json",
        ],
        "",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(v["violations"], 0, "{text}");
    assert_eq!(
        v["options"],
        serde_json::json!(["equal_star_bombs=first_stands", "rake_percent=5"])
    );
    // Classic has no star levels, so no such option.
    let out = run(
        &[
            "simulate",
            "--variant",
            "classic",
            "--deals",
            "1",
            "--option",
            "equal_star_bombs=first_stands",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("equal_star_bombs"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
