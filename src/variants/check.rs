//! A variant version's own checks, run before it may become active: its declared worked examples
//! (`examples()`), then a batch of seeded random facts through every hook, which must not error,
//! must return well-formed results and must obey the declared sum rule.
//!
//! The random batch runs under the default options and under each distinct option set the
//! examples use. Then the worst cases: the heaviest deals the deck allows (every card in bombs,
//! played or held, every outcome, every escaper) are settled under all option maxima, all
//! minima and seeded random option sets from the whole schema; none may fail (amounts beyond the
//! host's line limit saturate, docs/VARIANTS.md "Saturation"). Failures name the seed, the case and the facts (as JSON) so they can be replayed
//! with `shuangkou variants settle`.

use std::collections::BTreeMap;
use std::sync::Arc;

use rhai::{Array, Dynamic, Map};
use serde::Serialize;

use super::engine::{describe, to_centi, to_json};
use super::extremes;
use super::facts::{self, RandomFacts};
use super::options::{OptionValue, OptionValues};
use super::script::{
    CompiledVariant, Returned, ScriptVariant, VariantError, call_hook, parse_seating, points,
};
use crate::game::hooks::{SeatingDecision, Settlement, VariantHooks};

/// What a successful check covered.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CheckReport {
    /// Declared examples that passed.
    pub examples: usize,
    /// Random hook calls that passed.
    pub random_calls: usize,
    /// Worst-case settlements that passed: the heaviest deals the deck allows, settled under
    /// option sets drawn from the whole schema (bounds included).
    pub worst_cases: usize,
    /// Option sets of the worst-case check the script refused (`rules(opts)` threw): CreateGame
    /// refuses them too, with the script's message.
    pub refused_option_sets: usize,
}

/// The default number of random deals per option set.
pub const DEFAULT_RANDOM_DEALS: usize = 200;

/// The default seed of the random batch (fixed, so a check is reproducible).
pub const DEFAULT_SEED: u64 = 0x5348_5541_4e47_4b4f; // "SHUANGKO"

/// One declared example.
#[derive(Clone, Debug)]
pub(super) struct Example {
    pub(super) name: String,
    pub(super) hook: String,
    pub(super) options: BTreeMap<String, OptionValue>,
    pub(super) facts: serde_json::Value,
    pub(super) expect: Dynamic,
}

/// The hooks a Shuangkou example may name (the first is the default).
const HOOKS: [&str; 4] = ["settle", "settle_escape", "seating", "timeout_is_escape"];

fn parse_examples(v: &Dynamic) -> Result<Vec<Example>, String> {
    parse_examples_of(v, &HOOKS)
}

/// The examples of `examples()`, each naming one of `hooks` (default: the first).
pub(super) fn parse_examples_of(v: &Dynamic, hooks: &[&str]) -> Result<Vec<Example>, String> {
    let arr = v
        .read_lock::<Array>()
        .ok_or_else(|| format!("examples() must return an array, not {}", describe(v)))?;
    arr.iter()
        .enumerate()
        .map(|(i, e)| parse_example(e, hooks).map_err(|m| format!("examples()[{i}]: {m}")))
        .collect()
}

fn parse_example(v: &Dynamic, hooks: &[&str]) -> Result<Example, String> {
    let map = v.read_lock::<Map>().ok_or_else(|| {
        format!(
            "expected a map #{{ name, hook, options, facts, expect }}, not {}",
            describe(v)
        )
    })?;
    const KEYS: [&str; 5] = ["name", "hook", "options", "facts", "expect"];
    if let Some(k) = map.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(format!("unexpected key `{k}` (keys: {})", KEYS.join(", ")));
    }
    let name = map
        .get("name")
        .and_then(|n| n.clone().into_immutable_string().ok())
        .ok_or("`name` must be a string")?
        .to_string();
    let hook = match map.get("hook") {
        None => hooks.first().copied().unwrap_or("settle").to_string(),
        Some(h) => h
            .clone()
            .into_immutable_string()
            .map_err(|_| "`hook` must be a string".to_string())?
            .to_string(),
    };
    if !hooks.contains(&hook.as_str()) {
        return Err(format!(
            "{name:?}: hook {hook:?} is not one of {}",
            hooks.join(", ")
        ));
    }
    let options = match map.get("options") {
        None => BTreeMap::new(),
        Some(o) => OptionValues::overrides_from_map(o).map_err(|m| format!("{name:?}: {m}"))?,
    };
    let facts = to_json(
        map.get("facts")
            .ok_or(format!("{name:?}: missing `facts`"))?,
    )
    .map_err(|m| format!("{name:?}: facts: {m}"))?;
    let expect = map
        .get("expect")
        .cloned()
        .ok_or(format!("{name:?}: missing `expect`"))?;
    Ok(Example {
        name,
        hook,
        options,
        facts,
        expect,
    })
}

fn fmt_scores(s: &Settlement) -> String {
    let parts: Vec<String> = s.scores.iter().map(|c| points(*c)).collect();
    format!("[{}]", parts.join(", "))
}

fn fmt_lines(s: &Settlement) -> String {
    s.lines
        .iter()
        .map(|l| {
            format!(
                "seat {} {} {}: {}",
                l.seat,
                l.label,
                points(l.amount),
                l.detail
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn run_example(v: &ScriptVariant, ex: &Example) -> Result<(), String> {
    let rules = *v.rules();
    match ex.hook.as_str() {
        "settle" | "settle_escape" => {
            let got = if ex.hook == "settle" {
                let f = facts::parse_deal(&ex.facts, &rules)?;
                v.settle(&f).map_err(|e| e.to_string())?
            } else {
                let f = facts::parse_escape(&ex.facts, &rules)?;
                v.settle_escape(&f).map_err(|e| e.to_string())?
            };
            let want = ex
                .expect
                .read_lock::<Array>()
                .ok_or_else(|| {
                    format!(
                        "`expect` must be an array of points by seat, not {}",
                        describe(&ex.expect)
                    )
                })?
                .iter()
                .map(to_centi)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|m| format!("`expect`: {m}"))?;
            if want != got.scores {
                let want_s: Vec<String> = want.iter().map(|c| points(*c)).collect();
                return Err(format!(
                    "expected [{}], got {} — {}",
                    want_s.join(", "),
                    fmt_scores(&got),
                    fmt_lines(&got)
                ));
            }
            v.sum_rule().check(&got)
        }
        "seating" => {
            let f = facts::parse_seating(&ex.facts, &rules)?;
            let got = v.seating(&f).map_err(|e| e.to_string())?;
            let want: SeatingDecision = parse_seating(
                &ex.expect,
                Returned {
                    hook: "expect",
                    origin: v.compiled().origin(),
                    players: rules.players,
                },
            )
            .map_err(|e| e.message)?;
            if want != got {
                return Err(format!("expected {want:?}, got {got:?}"));
            }
            Ok(())
        }
        _ => {
            let f = facts::parse_timeout(&ex.facts, &rules)?;
            let got = v.timeout_is_escape(&f).map_err(|e| e.to_string())?;
            let want = ex
                .expect
                .as_bool()
                .map_err(|_| "`expect` must be true or false".to_string())?;
            if want != got {
                return Err(format!("expected {want}, got {got}"));
            }
            Ok(())
        }
    }
}

/// Runs the declared examples and `random_deals` random deals (plus escapes, seatings and
/// timeouts) per option set, from `seed`.
pub fn run(
    compiled: &Arc<CompiledVariant>,
    random_deals: usize,
    seed: u64,
) -> Result<CheckReport, VariantError> {
    let origin = compiled.origin().to_string();
    let ex_v = call_hook(compiled.ast(), &origin, compiled.source(), "examples", ())?;
    let examples = parse_examples(&ex_v).map_err(|message| VariantError::Contract {
        origin: origin.clone(),
        message,
    })?;
    let mut report = CheckReport::default();
    let mut option_sets: Vec<BTreeMap<String, OptionValue>> = vec![BTreeMap::new()];
    for ex in &examples {
        let fail = |message: String| VariantError::Example {
            origin: origin.clone(),
            name: ex.name.clone(),
            message,
        };
        let v = compiled
            .configure(&ex.options)
            .map_err(|e| fail(e.to_string()))?;
        run_example(&v, ex).map_err(fail)?;
        report.examples += 1;
        if !option_sets.contains(&ex.options) {
            option_sets.push(ex.options.clone());
        }
    }
    for (k, options) in option_sets.iter().enumerate() {
        let v = compiled.configure(options)?;
        let n = if k == 0 {
            random_deals
        } else {
            random_deals.div_ceil(4)
        };
        let set_seed = seed.wrapping_add(k as u64);
        report.random_calls += random_batch(&v, n, set_seed).map_err(|mut e| {
            if let VariantError::Random { message, .. } = &mut e
                && !options.is_empty()
            {
                let opts: Vec<String> = options.iter().map(|(k, v)| format!("{k}={v}")).collect();
                message.push_str(&format!(" [options: {}]", opts.join(" ")));
            }
            e
        })?;
    }
    let (calls, refused) = worst_cases(compiled, random_deals.div_ceil(25), seed)?;
    report.worst_cases = calls;
    report.refused_option_sets = refused;
    Ok(report)
}

/// Settles the heaviest deals under all option maxima, all minima and `random_sets` random
/// option sets drawn from the schema (seeded by `seed`). Returns the settlements that passed and
/// the option sets the script refused.
pub fn worst_cases(
    compiled: &Arc<CompiledVariant>,
    random_sets: usize,
    seed: u64,
) -> Result<(usize, usize), VariantError> {
    let (mut calls, mut refused) = (0, 0);
    for options in extremes::option_sets(compiled.options(), seed, random_sets) {
        let v = match compiled.configure(&options) {
            Ok(v) => v,
            Err(VariantError::Options { .. }) => {
                refused += 1;
                continue;
            }
            Err(e) => return Err(e),
        };
        calls += worst_case_batch(&v, seed).map_err(|mut e| {
            if let VariantError::Random { message, .. } = &mut e {
                let opts: Vec<String> = options.iter().map(|(k, v)| format!("{k}={v}")).collect();
                message.push_str(&format!(" [options: {}]", opts.join(" ")));
            }
            e
        })?;
    }
    Ok((calls, refused))
}

/// Settles the heaviest deals and escapes ([`facts::heavy_deals`], [`facts::heavy_escapes`])
/// through a configured variant; each must succeed and obey the sum rule.
pub fn worst_case_batch(v: &ScriptVariant, seed: u64) -> Result<usize, VariantError> {
    let origin = v.compiled().origin().to_string();
    let rules = *v.rules();
    let fail = |case: usize, hook: &str, message: String, facts: String| VariantError::Random {
        origin: origin.clone(),
        seed,
        case,
        hook: hook.to_string(),
        message: format!("worst case: {message}"),
        facts,
    };
    // The optional `contribution` hook answers for every star level under these options (the
    // deal engine asks it at a deal's end).
    v.in_hand_worth()
        .map_err(|e| fail(0, "contribution", e.to_string(), String::new()))?;
    let mut case = 0;
    for set in facts::heavy_bomb_sets(&rules) {
        for d in facts::heavy_deals(&rules, &set) {
            let s = v
                .settle(&d)
                .map_err(|e| fail(case, "settle", e.to_string(), json(&d)))?;
            v.sum_rule()
                .check(&s)
                .map_err(|m| fail(case, "settle", format!("{m} — {}", fmt_lines(&s)), json(&d)))?;
            case += 1;
        }
        for e in facts::heavy_escapes(&rules, &set) {
            let s = v
                .settle_escape(&e)
                .map_err(|err| fail(case, "settle_escape", err.to_string(), json(&e)))?;
            v.sum_rule().check(&s).map_err(|m| {
                fail(
                    case,
                    "settle_escape",
                    format!("{m} — {}", fmt_lines(&s)),
                    json(&e),
                )
            })?;
            case += 1;
        }
    }
    Ok(case)
}

/// Runs `n` random deals, escapes, seatings and timeouts through a configured variant.
pub fn random_batch(v: &ScriptVariant, n: usize, seed: u64) -> Result<usize, VariantError> {
    let origin = v.compiled().origin().to_string();
    let rules = *v.rules();
    let mut g = RandomFacts::new(seed, rules);
    let fail = |case: usize, hook: &str, message: String, facts: String| VariantError::Random {
        origin: origin.clone(),
        seed,
        case,
        hook: hook.to_string(),
        message,
        facts,
    };
    v.in_hand_worth()
        .map_err(|e| fail(0, "contribution", e.to_string(), String::new()))?;
    let mut calls = 0;
    for case in 0..n {
        let d = g.deal();
        match v.settle(&d) {
            Ok(s) => v
                .sum_rule()
                .check(&s)
                .map_err(|m| fail(case, "settle", format!("{m} — {}", fmt_lines(&s)), json(&d)))?,
            Err(e) => return Err(fail(case, "settle", e.to_string(), json(&d))),
        }
        let e = g.escape();
        match v.settle_escape(&e) {
            Ok(s) => v.sum_rule().check(&s).map_err(|m| {
                fail(
                    case,
                    "settle_escape",
                    format!("{m} — {}", fmt_lines(&s)),
                    json(&e),
                )
            })?,
            Err(err) => return Err(fail(case, "settle_escape", err.to_string(), json(&e))),
        }
        let s = g.seating();
        v.seating(&s)
            .map_err(|err| fail(case, "seating", err.to_string(), json(&s)))?;
        let t = g.timeout();
        v.timeout_is_escape(&t)
            .map_err(|err| fail(case, "timeout_is_escape", err.to_string(), json(&t)))?;
        calls += 4;
    }
    Ok(calls)
}

/// Facts as one-line JSON for failure messages.
fn json<T: Serialize>(x: &T) -> String {
    serde_json::to_string(x).unwrap_or_else(|e| format!("<unserializable: {e}>"))
}
