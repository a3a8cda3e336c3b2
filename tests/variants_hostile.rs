//! Hostile and broken scripts: each is refused or fails with a clear, typed error — never a panic,
//! never an unbounded run — and the variant that hit the error keeps working for the next call
//! (the deal engine rejects the action; the game stays as it was).
//!
//! The scripts are the embedded `classic.rhai` with one function replaced, so that everything but
//! the hostile part satisfies the contract.

pub mod variants_support;

use std::sync::Arc;
use std::time::Instant;

use shuangkou::game::hooks::{DealFacts, HookError, SeatingFacts, VariantHooks};
use shuangkou::seat::Seat;
use shuangkou::variants::{self, CompiledVariant, VariantError, engine};

const CLASSIC: &str = include_str!("../variants/classic.rhai");

/// The classic script with `fn NAME(` renamed away and `replacement` appended.
fn with_replaced(name: &str, replacement: &str) -> String {
    let renamed = CLASSIC.replace(&format!("fn {name}("), &format!("fn {name}_original("));
    assert_ne!(renamed, CLASSIC, "no fn {name} in classic.rhai");
    format!("{renamed}\n{replacement}\n")
}

fn compile(src: &str) -> Result<Arc<CompiledVariant>, VariantError> {
    CompiledVariant::compile("hostile/classic.rhai", src, Some("classic")).map(Arc::new)
}

fn deal() -> DealFacts {
    variants_support::double_deal(vec![0, 5, 0, 7])
}

fn seating() -> SeatingFacts {
    serde_json::from_value(serde_json::json!({
        "players": 4, "deal_number": 1, "shown_card": 3, "shown_holders": [1, 2],
        "previous": null, "random": 5
    }))
    .unwrap()
}

/// Compiles `src`, runs `settle` and returns its error; checks the variant still answers
/// `seating` afterwards, and that full activation (`variants::load`) refuses the script.
/// The error of a classic script whose `settle` is `settle_src`, which must be one of the
/// engine's limits.
fn limit_error(settle_src: &str) -> HookError {
    let e = settle_error(&with_replaced("settle", settle_src));
    assert!(e.limit, "{e:?}");
    e
}

fn settle_error(src: &str) -> HookError {
    let v = compile(src)
        .unwrap_or_else(|e| panic!("should compile: {e}"))
        .with_defaults()
        .unwrap();
    let started = Instant::now();
    let err = v.settle(&deal()).expect_err("settle should fail");
    eprintln!("{:?} for: {err}", started.elapsed());
    assert_eq!(err.hook, "settle");
    assert!(
        err.location
            .as_deref()
            .is_some_and(|l| l.starts_with("hostile/classic.rhai")),
        "{err:?}"
    );
    // The same variant keeps working.
    assert_eq!(v.seating(&seating()).unwrap().leader, Seat::new(1));
    // And a version like this never becomes active.
    let refused =
        variants::load::<CompiledVariant>("hostile/classic.rhai", src, Some("classic"), 5, 1)
            .unwrap_err();
    assert!(
        matches!(
            refused,
            VariantError::Example { .. } | VariantError::Random { .. }
        ),
        "{refused}"
    );
    err
}

#[test]
fn an_endless_loop_hits_the_operation_limit() {
    let e = limit_error("fn settle(facts, opts) { let n = 0; loop { n += 1; } }");
    assert!(e.message.contains("operations"), "{e}");
    // Rhai gives no position for this limit; the location is the running function's line.
    let loc = e.location.unwrap();
    let line = CLASSIC.lines().count() + 2;
    assert_eq!(loc, format!("hostile/classic.rhai:{line}"));
}

#[test]
fn deep_recursion_hits_the_call_depth_limit() {
    let e = limit_error("fn settle(facts, opts) { down(0) }\nfn down(n) { down(n + 1) + 1 }");
    assert!(e.message.contains("nested"), "{e}");
}

#[test]
fn a_huge_string_hits_the_size_limit() {
    let e = limit_error("fn settle(facts, opts) { let s = \"x\"; loop { s += s; } }");
    assert!(
        e.message.contains("too large") || e.message.contains("exceeds"),
        "{e}"
    );
}

#[test]
fn a_huge_array_or_an_unbounded_map_is_stopped_by_a_limit() {
    limit_error("fn settle(facts, opts) { let a = []; loop { a.push(1); } }");
    limit_error(
        "fn settle(facts, opts) { let m = #{}; let i = 0; loop { m[`k${i}`] = i; i += 1; } }",
    );
}

#[test]
fn wrong_shapes_are_named() {
    let cases = [
        (
            "fn settle(facts, opts) { 42 }",
            "settle returned integer 42",
        ),
        (
            "fn settle(facts, opts) { #{ scores: [] } }",
            "unexpected key `scores`",
        ),
        (
            "fn settle(facts, opts) { #{ lines: 3 } }",
            "lines = integer 3",
        ),
        (
            "fn settle(facts, opts) { #{ lines: [#{ seat: 7, label: \"base\", points: 1, detail: \"\" }] } }",
            "lines[0]: seat = integer 7 is not a seat 0..3",
        ),
        (
            "fn settle(facts, opts) { #{ lines: [#{ seat: 0, label: \"base\", points: \"x\", detail: \"\" }] } }",
            "lines[0]: points: expected a number",
        ),
        (
            "fn settle(facts, opts) { #{ lines: [#{ seat: 0, points: 1, detail: \"\" }] } }",
            "lines[0]: missing `label`",
        ),
        (
            "fn settle(facts, opts) { #{ lines: [#{ seat: 0, label: \"Base Points\", points: 1, detail: \"\" }] } }",
            "label \"Base Points\"",
        ),
        (
            "fn settle(facts, opts) { #{ lines: [#{ seat: 0, label: \"base\", points: 1.0 / 0.0, detail: \"\" }] } }",
            "not a finite number",
        ),
        (
            "fn settle(facts, opts) { #{ lines: [#{ seat: 0, label: \"base\", points: 1, detail: \"\", extra: 1 }] } }",
            "unexpected key `extra`",
        ),
        // Points by seat: one entry per player, numbers, and no `seat` beside them.
        (
            "fn settle(facts, opts) { #{ lines: [#{ seat: 0, label: \"base\", points: [1, -1, 1, -1], detail: \"\" }] } }",
            "lines[0]: points is an array (points by seat) and `seat` is given",
        ),
        (
            "fn settle(facts, opts) { #{ lines: [#{ label: \"base\", points: [1, -1], detail: \"\" }] } }",
            "lines[0]: points has 2 entries; points by seat needs one per player (4)",
        ),
        (
            "fn settle(facts, opts) { #{ lines: [#{ label: \"base\", points: [1, \"x\", 0, 0], detail: \"\" }] } }",
            "lines[0]: points[1]: expected a number",
        ),
        (
            "fn settle(facts, opts) { #{ lines: [#{ label: \"base\", points: [1, 1.0 / 0.0, 0, 0], detail: \"\" }] } }",
            "lines[0]: points[1]: inf is not a finite number",
        ),
    ];
    for (src, want) in cases {
        let e = settle_error(&with_replaced("settle", src));
        assert!(!e.limit);
        assert!(e.message.contains(want), "{src}\n  → {e}");
    }
}

#[test]
fn wrong_seating_and_timeout_shapes_are_named() {
    let v = compile(&with_replaced(
        "seating",
        "fn seating(facts, opts) { #{ leader: 9 } }",
    ))
    .unwrap()
    .with_defaults()
    .unwrap();
    let e = v.seating(&seating()).unwrap_err();
    assert!(e.message.contains("leader = integer 9"), "{e}");
    let v = compile(&with_replaced(
        "seating",
        "fn seating(facts, opts) { #{ leader: 0, swap: [1, 1] } }",
    ))
    .unwrap()
    .with_defaults()
    .unwrap();
    assert!(
        v.seating(&seating())
            .unwrap_err()
            .message
            .contains("itself")
    );
    let v = compile(&with_replaced(
        "timeout_is_escape",
        "fn timeout_is_escape(facts, opts) { \"yes\" }",
    ))
    .unwrap()
    .with_defaults()
    .unwrap();
    let t = serde_json::from_value(
        serde_json::json!({"seat": 0, "consecutive_timeouts": 1, "disconnected": false}),
    )
    .unwrap();
    let e = v.timeout_is_escape(&t).unwrap_err();
    assert!(e.message.contains("expected true or false"), "{e}");
}

#[test]
fn runtime_errors_carry_file_line_and_column() {
    let src = with_replaced(
        "settle",
        "fn settle(facts, opts) {\n    helper(facts)\n}\nfn helper(facts) {\n    facts.no_such_field\n}",
    );
    let e = settle_error(&src);
    let line = src
        .lines()
        .position(|l| l.contains("facts.no_such_field"))
        .unwrap()
        + 1;
    let loc = e.location.clone().unwrap();
    assert!(
        loc.starts_with(&format!("hostile/classic.rhai:{line}:")),
        "{loc} (expected line {line})"
    );
    assert!(e.message.contains("no_such_field"), "{e}");
    assert!(e.message.contains("helper"), "{e}");

    let e = settle_error(&with_replaced(
        "settle",
        "fn settle(facts, opts) { throw \"table not configured\"; }",
    ));
    assert!(e.message.contains("table not configured"), "{e}");

    // No clock, files or network: such functions do not exist in the sandbox.
    let e = settle_error(&with_replaced(
        "settle",
        "fn settle(facts, opts) { timestamp() }",
    ));
    assert!(e.message.contains("timestamp"), "{e}");
}

#[test]
fn a_missing_hook_or_wrong_parameters_are_contract_errors() {
    let src = CLASSIC.replace("fn settle(facts, opts)", "fn settle_typo(facts, opts)");
    let e = compile(&src).unwrap_err();
    assert!(
        matches!(&e, VariantError::Contract { message, .. } if message.contains("missing hook function(s): settle(facts, opts)")),
        "{e}"
    );
    let src = CLASSIC.replace("fn settle(facts, opts)", "fn settle(facts, opts, extra)");
    let e = compile(&src).unwrap_err();
    assert!(
        e.to_string().contains("settle must take (facts, opts)"),
        "{e}"
    );
    let src = CLASSIC.replace("id: \"classic\"", "id: \"classic2\"");
    assert!(
        compile(&src)
            .unwrap_err()
            .to_string()
            .contains("named classic.rhai")
    );
    let src = CLASSIC.replace("bomb_order: \"classic\"", "bomb_order: \"fastest\"");
    let e = compile(&src).unwrap_err();
    assert!(e.to_string().contains("rules(opts)"), "{e}");
    let src = CLASSIC.replace("three_jokers: false", "three_jokers: true");
    let e = compile(&src).unwrap_err();
    assert!(e.to_string().contains("classic bomb order"), "{e}");
    let src = CLASSIC.replace(
        "min: 0, max: 100000,\n            doc: \"雙扣",
        "min: 5, max: 100000,\n            doc: \"雙扣",
    );
    let e = compile(&src).unwrap_err();
    assert!(e.to_string().contains("default is invalid"), "{e}");
}

#[test]
fn syntax_errors_and_forbidden_features_fail_to_compile_with_a_location() {
    let src = format!("{CLASSIC}\nfn broken( {{ }}\n");
    let e = compile(&src).unwrap_err();
    let VariantError::Syntax { line, column, .. } = &e else {
        panic!("{e}")
    };
    assert_eq!(*line, Some(CLASSIC.lines().count() + 2), "{e}");
    assert!(column.is_some());
    for hostile in [
        "import \"fs\" as fs;",
        "fn f() { eval(\"1\") }",
        "fn f() { undeclared_variable + 1 }",
    ] {
        let e = compile(&format!("{CLASSIC}\n{hostile}\n")).unwrap_err();
        assert!(
            matches!(
                e,
                VariantError::Syntax { .. } | VariantError::Contract { .. }
            ),
            "{hostile}: {e}"
        );
    }
    // Deeply nested expressions are refused when compiling.
    let nested = format!("fn f() {{ {}1{} }}", "(".repeat(500), ")".repeat(500));
    let e = compile(&format!("{CLASSIC}\n{nested}\n")).unwrap_err();
    assert!(matches!(e, VariantError::Syntax { .. }), "{e}");
    // An oversized script is refused before parsing.
    let big = format!(
        "{CLASSIC}\n//{}\n",
        "x".repeat(engine::LIMITS.max_script_bytes)
    );
    assert!(compile(&big).is_err());
}

#[test]
fn a_declaration_that_loops_is_refused_at_compile_time() {
    let src = with_replaced("meta", "fn meta() { loop { } }");
    let e = compile(&src).unwrap_err();
    let VariantError::Hook { error, .. } = &e else {
        panic!("{e}")
    };
    assert!(error.limit, "{e}");
    let src = with_replaced("options", "fn options() { 5 }");
    assert!(compile(&src).unwrap_err().to_string().contains("options()"));
    let src = with_replaced("sum_rule", "fn sum_rule(opts) { \"mostly\" }");
    assert!(compile(&src).unwrap_err().to_string().contains("sum_rule"));
}

#[test]
fn a_script_breaking_its_sum_rule_is_refused() {
    // Winners get 4 but losers pay only 3: caught by the declared examples and the random batch.
    let src = CLASSIC.replace(
        "base[p[2]] = -d; base[p[3]] = -d;",
        "base[p[2]] = -d + 1; base[p[3]] = -d + 1;",
    );
    assert_ne!(src, CLASSIC);
    let e = variants::load::<CompiledVariant>("hostile/classic.rhai", &src, Some("classic"), 20, 1)
        .unwrap_err();
    assert!(
        e.to_string().contains("R01") || e.to_string().contains("sum rule"),
        "{e}"
    );
    let e = check_examples_removed(&src);
    assert!(e.to_string().contains("sum rule: zero"), "{e}");
}

/// The same script without examples: the random batch must catch it.
fn check_examples_removed(src: &str) -> VariantError {
    let src = with_replaced_in(src, "examples", "fn examples() { [] }");
    variants::load::<CompiledVariant>("hostile/classic.rhai", &src, Some("classic"), 50, 1)
        .unwrap_err()
}

fn with_replaced_in(src: &str, name: &str, replacement: &str) -> String {
    let renamed = src.replace(&format!("fn {name}("), &format!("fn {name}_original("));
    format!("{renamed}\n{replacement}\n")
}

#[test]
fn print_and_exit_are_harmless() {
    let v = compile(&with_replaced(
        "settle",
        "fn settle(facts, opts) { print(\"settling\"); debug(facts.places); settle_original(facts, opts) }",
    ))
    .unwrap()
    .with_defaults()
    .unwrap();
    assert_eq!(
        v.settle(&deal()).unwrap().scores,
        vec![400, -400, 400, -400]
    );
    let v = compile(&with_replaced(
        "settle",
        "fn settle(facts, opts) { exit(); }",
    ))
    .unwrap()
    .with_defaults()
    .unwrap();
    // exit() ends the hook with () — which is not a settlement.
    let e = v.settle(&deal()).unwrap_err();
    assert!(
        e.message.contains("exit") || e.message.contains("returned ()"),
        "{e}"
    );
}
