//! 升級 variant scripts (`meta().game = "shengji"`): their contract, their activation checks and
//! the core's [`ShengjiHooks`] implemented by a configured script.
//!
//! The contract: `meta()`, `options()` (the same typed options as Shuangkou's), the hooks
//! `bottom_multiplier(facts, opts)`, `upgrade(facts, opts)`, `match_winner(facts, opts)` and
//! `next_dealer(facts, opts)` (facts are the core's fact structs as maps), the option
//! `bury_points` (bool), and `examples()` — worked examples (`hook`, `options`, `facts`, `expect`)
//! checked before a version becomes active, with a grid of random calls whose results must be
//! in range (the core validates them again when it applies them).

use std::collections::BTreeMap;
use std::sync::Arc;

use rhai::{AST, Dynamic};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::check::{CheckReport, parse_examples_of};
use super::engine::{self, describe, from_json, to_json};
use super::family::{Check, Compile, Family};
use super::options::{OptionSpec, OptionValue, OptionValues};
use super::script::{
    VariantError, call_hook, compile_contract, content_hash, contract, options_error,
};
use crate::seat::Seat;
use crate::shengji::Level;
use crate::shengji::hooks::{
    BottomFacts, HookError, MatchFacts, NextDealerFacts, ShengjiHooks, Upgrade, UpgradeFacts,
};

/// The 升級 scripts compiled into the binary, by id.
pub const SHENGJI_EMBEDDED: [(&str, &str); 1] =
    [("shengji", include_str!("../../variants/shengji.rhai"))];

/// The functions every 升級 script defines, with their parameters.
pub const SHENGJI_FUNCTIONS: [(&str, &[&str]); 7] = [
    ("meta", &[]),
    ("options", &[]),
    ("bottom_multiplier", &["facts", "opts"]),
    ("upgrade", &["facts", "opts"]),
    ("match_winner", &["facts", "opts"]),
    ("next_dealer", &["facts", "opts"]),
    ("examples", &[]),
];

/// The hooks an example may name (the first is the default).
const HOOKS: [&str; 4] = [
    "upgrade",
    "bottom_multiplier",
    "match_winner",
    "next_dealer",
];

/// One compiled version of a 升級 script.
pub struct ShengjiVariant {
    origin: String,
    hash: String,
    source: Arc<str>,
    ast: AST,
    id: String,
    name: String,
    specs: Vec<OptionSpec>,
}

impl std::fmt::Debug for ShengjiVariant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShengjiVariant")
            .field("id", &self.id)
            .field("hash", &self.short_hash())
            .finish()
    }
}

fn text_field(meta: &rhai::Map, key: &str) -> Result<String, String> {
    meta.get(key)
        .and_then(|v| v.clone().into_immutable_string().ok())
        .map(|s| s.to_string())
        .ok_or_else(|| format!("meta().{key} must be a string"))
}

impl ShengjiVariant {
    /// Compiles a script and checks its contract.
    pub fn compile(
        origin: &str,
        source: &str,
        expected_id: Option<&str>,
    ) -> Result<ShengjiVariant, VariantError> {
        let field = |map: &rhai::Map, k| text_field(map, k).map_err(|m| contract(origin, m));
        let read_meta = |meta: &Dynamic| {
            let map = meta
                .read_lock::<rhai::Map>()
                .ok_or_else(|| contract(origin, format!("meta() returned {}", describe(meta))))?
                .clone();
            let id = field(&map, "id")?;
            if field(&map, "game")? != "shengji" {
                return Err(contract(origin, "meta().game must be \"shengji\""));
            }
            Ok((id, map))
        };
        let (ast, (id, meta_map), specs) = compile_contract(
            origin,
            source,
            expected_id,
            &SHENGJI_FUNCTIONS,
            read_meta,
            |(id, _)| id,
        )?;
        if !specs
            .iter()
            .any(|s| s.name == "bury_points" && matches!(s.default_value(), OptionValue::Bool(_)))
        {
            return Err(contract(
                origin,
                "options() must declare `bury_points` (bool)",
            ));
        }
        Ok(ShengjiVariant {
            origin: origin.to_string(),
            hash: content_hash(source),
            source: Arc::from(source),
            ast,
            name: field(&meta_map, "name")?,
            id,
            specs,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn origin(&self) -> &str {
        &self.origin
    }

    pub fn options(&self) -> &[OptionSpec] {
        &self.specs
    }

    /// This version with a game's options (`name` → value text, as a client gives them).
    pub fn configure(
        self: &Arc<Self>,
        options: &BTreeMap<String, String>,
    ) -> Result<ShengjiScript, VariantError> {
        let pairs: Vec<String> = options.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let overrides = OptionValues::parse_overrides(&self.specs, &pairs)
            .map_err(|m| options_error(&self.origin, m))?;
        self.configure_values(&overrides)
    }

    fn configure_values(
        self: &Arc<Self>,
        overrides: &BTreeMap<String, OptionValue>,
    ) -> Result<ShengjiScript, VariantError> {
        let values = OptionValues::new(&self.specs, overrides)
            .map_err(|m| options_error(&self.origin, m))?;
        Ok(ShengjiScript {
            compiled: Arc::clone(self),
            opts: Dynamic::from_map(values.to_map()),
            values,
        })
    }
}

impl Family for ShengjiVariant {
    const GAME: &'static str = "shengji";
    const EMBEDDED: &'static [(&'static str, &'static str)] = &SHENGJI_EMBEDDED;
    const COMPILE: Compile<Self> = ShengjiVariant::compile;
    /// The 升級 checks call the hooks over bounded grids, not at random: no seed.
    const CHECK: Check<Self> = |this, random, _seed| check(this, random);
    fn id(&self) -> &str {
        &self.id
    }
    fn hash(&self) -> &str {
        &self.hash
    }
    fn source(&self) -> &str {
        &self.source
    }
}

/// A 升級 script configured with a game's options: the core's [`ShengjiHooks`].
pub struct ShengjiScript {
    compiled: Arc<ShengjiVariant>,
    values: OptionValues,
    opts: Dynamic,
}

impl std::fmt::Debug for ShengjiScript {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShengjiScript")
            .field("variant", &self.compiled)
            .field("options", &self.values)
            .finish()
    }
}

fn shape(hook: &str, message: String) -> HookError {
    HookError {
        hook: hook.to_string(),
        message,
        location: None,
        limit: false,
    }
}

impl ShengjiScript {
    pub fn compiled(&self) -> &Arc<ShengjiVariant> {
        &self.compiled
    }

    /// One option value.
    pub fn option(&self, name: &str) -> Option<&OptionValue> {
        self.values.get(name)
    }

    /// Calls `hook(facts, opts)` and reads its result as `T`.
    fn call<T: DeserializeOwned>(
        &self,
        hook: &str,
        facts: &impl Serialize,
    ) -> Result<T, HookError> {
        let json = serde_json::to_value(facts).map_err(|e| shape(hook, e.to_string()))?;
        let v = engine::call(
            &self.compiled.ast,
            &self.compiled.origin,
            Some(&self.compiled.source),
            hook,
            hook,
            (from_json(&json), self.opts.clone()),
        )?;
        let out = to_json(&v).map_err(|m| shape(hook, format!("returned {m}")))?;
        serde_json::from_value(out)
            .map_err(|e| shape(hook, format!("returned {}: {e}", describe(&v))))
    }
}

impl ShengjiHooks for ShengjiScript {
    fn bury_points_allowed(&self) -> bool {
        !matches!(self.option("bury_points"), Some(OptionValue::Bool(false)))
    }

    fn bottom_multiplier(&self, facts: &BottomFacts) -> Result<u32, HookError> {
        self.call("bottom_multiplier", facts)
    }

    fn upgrade(&self, facts: &UpgradeFacts) -> Result<Upgrade, HookError> {
        self.call("upgrade", facts)
    }

    fn match_winner(&self, facts: &MatchFacts) -> Result<Option<u8>, HookError> {
        self.call("match_winner", facts)
    }

    fn next_dealer(&self, facts: &NextDealerFacts) -> Result<Seat, HookError> {
        self.call("next_dealer", facts)
    }
}

/// Calls the hook an example names with its facts; the result as JSON.
fn run_hook(
    hooks: &ShengjiScript,
    hook: &str,
    facts: serde_json::Value,
) -> Result<serde_json::Value, String> {
    fn typed<F: DeserializeOwned, R: Serialize>(
        facts: serde_json::Value,
        f: impl FnOnce(&F) -> Result<R, HookError>,
    ) -> Result<serde_json::Value, String> {
        let facts: F = serde_json::from_value(facts).map_err(|e| format!("facts: {e}"))?;
        let r = f(&facts).map_err(|e| e.to_string())?;
        serde_json::to_value(r).map_err(|e| e.to_string())
    }
    match hook {
        "upgrade" => typed(facts, |f| hooks.upgrade(f)),
        "bottom_multiplier" => typed(facts, |f| hooks.bottom_multiplier(f)),
        "match_winner" => typed(facts, |f| hooks.match_winner(f)),
        "next_dealer" => typed(facts, |f| hooks.next_dealer(f)),
        other => Err(format!("no hook {other}")),
    }
}

/// The activation checks: every declared example, then `random`-bounded grids of calls per option
/// set of the examples, whose results must be in range.
pub fn check(compiled: &Arc<ShengjiVariant>, random: usize) -> Result<CheckReport, VariantError> {
    let origin = compiled.origin.clone();
    let ex_v = call_hook(&compiled.ast, &origin, &compiled.source, "examples", ())?;
    let examples = parse_examples_of(&ex_v, &HOOKS).map_err(|m| contract(&origin, m))?;
    let mut report = CheckReport::default();
    let mut option_sets = vec![BTreeMap::new()];
    for ex in &examples {
        let fail = |message: String| VariantError::Example {
            origin: origin.clone(),
            name: ex.name.clone(),
            message,
        };
        let hooks = compiled.configure_values(&ex.options)?;
        let got = run_hook(&hooks, &ex.hook, ex.facts.clone()).map_err(fail)?;
        let expect = to_json(&ex.expect).map_err(|m| fail(format!("expect: {m}")))?;
        if got != expect {
            return Err(fail(format!("expected {expect}, got {got}")));
        }
        report.examples += 1;
        if !option_sets.contains(&ex.options) {
            option_sets.push(ex.options.clone());
        }
    }
    for options in &option_sets {
        let hooks = compiled.configure_values(options)?;
        report.random_calls +=
            grid(&hooks, random.max(1)).map_err(|message| VariantError::Random {
                origin: origin.clone(),
                seed: 0,
                case: 0,
                hook: "grid".into(),
                message,
                facts: format!("options {options:?}"),
            })?;
    }
    Ok(report)
}

/// Calls every hook over a grid of facts (points 0..=200 by 5 (at most `limit` of them), every
/// dealer, both outcomes, every level pair at the ends): each result must be in range.
fn grid(hooks: &ShengjiScript, limit: usize) -> Result<usize, String> {
    let mut calls = 0;
    let level = |f| Level::new(f).unwrap_or(Level::TWO);
    for points in (0..=200u32).step_by(5).take(limit) {
        let up = hooks
            .upgrade(&UpgradeFacts {
                opponents_points: points,
                level: level(5),
                opponents_level: level(3),
            })
            .map_err(|e| e.to_string())?;
        if up.levels > 12 {
            return Err(format!(
                "upgrade({points}) gave {} levels (0..=12)",
                up.levels
            ));
        }
        calls += 1;
    }
    for dealer in Seat::all(4) {
        for kept in [true, false] {
            let next = hooks
                .next_dealer(&NextDealerFacts {
                    dealer,
                    dealer_kept: kept,
                })
                .map_err(|e| e.to_string())?;
            if next.number() >= 4 {
                return Err(format!("next_dealer({dealer}, {kept}) gave seat {next}"));
            }
            for after in [
                [level(13), level(14)],
                [level(14), level(2)],
                [level(4), level(5)],
            ] {
                let w = hooks
                    .match_winner(&MatchFacts {
                        dealer_team: dealer.team(),
                        level_played: level(13),
                        levels_before: [level(13), level(13)],
                        levels_after: after,
                        dealer_kept: kept,
                    })
                    .map_err(|e| e.to_string())?;
                if w.is_some_and(|t| t > 1) {
                    return Err(format!("match_winner gave team {w:?}"));
                }
                calls += 1;
            }
            calls += 1;
        }
    }
    let m = hooks
        .bottom_multiplier(&BottomFacts {
            buried_points: 25,
            last_trick_winner: Seat::new(1),
            winning_card: crate::cards::Card::new(53).map_err(|e| e.to_string())?,
        })
        .map_err(|e| e.to_string())?;
    if !(1..=100).contains(&m) {
        return Err(format!("bottom_multiplier gave {m} (1..=100)"));
    }
    Ok(calls + 1)
}
