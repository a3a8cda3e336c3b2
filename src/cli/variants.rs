//! `shuangkou variants`: the operators' tools for variant scripts.
//!
//! - `list [--dir D] [--options] [--json]`: the variants a server would load, with their versions
//!   (content hashes), and the files it would refuse; `--options` adds every option (type, range,
//!   default, description), `--json` prints one object with each variant's machine-readable
//!   option schema ([`OptionSchema`](crate::variants::OptionSchema));
//! - `check [FILE…] [--random N] [--seed S]`: compile, contract, declared examples and random
//!   settlements — what a new version must pass to become active; non-zero exit on failure;
//! - `settle ID [--dir D] [--option k=v…] [--hook H] [--json]`: a dry run of one hook with facts
//!   read as JSON on stdin (docs/VARIANTS.md shows the shapes), printing the result with its
//!   breakdown.
//!
//! Exit codes: 0 success, 1 a check or hook failed, 2 bad usage or input.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use crate::game::hooks::{
    DealFacts, EscapeFacts, HookError, Settlement, SumRule, TableFacts, VariantHooks,
};
use crate::variants::check::{DEFAULT_RANDOM_DEALS, DEFAULT_SEED};
use crate::variants::script::points;
use crate::variants::{self, CompiledVariant, Registry, RegistryConfig, facts};

/// The subcommands of `shuangkou variants`.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// List the variants (and refused files) of a directory, or the embedded ones.
    List(ListArgs),
    /// Check variant files as the server does before activating them.
    Check(CheckArgs),
    /// Dry-run a hook: facts as JSON on stdin, the result and its breakdown on stdout.
    Settle(SettleArgs),
}

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Variants directory (default: the scripts embedded in the binary).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Also print every option with its type, range, default and description.
    #[arg(long)]
    options: bool,
    /// Print one JSON object: the variants with their option schemas, and the refused files.
    #[arg(long)]
    json: bool,
    /// Random deals per option set in the activation checks.
    #[arg(long, default_value_t = DEFAULT_RANDOM_DEALS)]
    random: usize,
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Script files (`<id>.rhai`, of either game: each is checked as its `meta().game` says);
    /// none = every embedded script of `--game`.
    files: Vec<PathBuf>,
    /// The game whose embedded scripts are checked when no file is given.
    #[arg(long, value_enum, default_value_t = super::Game::Shuangkou)]
    game: super::Game,
    /// Random deals per option set.
    #[arg(long, default_value_t = DEFAULT_RANDOM_DEALS)]
    random: usize,
    /// Seed of the random deals.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Hook {
    /// `settle`: DealFacts on stdin.
    Settle,
    /// `settle_escape`: EscapeFacts on stdin.
    Escape,
    /// `seating`: SeatingFacts on stdin.
    Seating,
    /// `timeout_is_escape`: TimeoutFacts on stdin.
    Timeout,
}

#[derive(Debug, clap::Args)]
pub struct SettleArgs {
    /// Variant id (`classic`, `jj`, `baibian`, `huopin`, `qianbian`, `erren`, …).
    id: String,
    /// Variants directory (default: the embedded scripts); the file `<dir>/<id>.rhai` is used.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Option override `key=value` (repeatable), e.g. `--option rake_percent=5`.
    #[arg(long = "option", value_name = "KEY=VALUE")]
    options: Vec<String>,
    /// Which hook to run.
    #[arg(long, value_enum, default_value_t = Hook::Settle)]
    hook: Hook,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// Runs the subcommand; returns the process exit code.
pub fn run(command: Command) -> ExitCode {
    match command {
        Command::List(a) => list(a),
        Command::Check(a) => check(a),
        Command::Settle(a) => settle(a),
    }
}

fn list(a: ListArgs) -> ExitCode {
    let config = RegistryConfig {
        dir: a.dir.clone(),
        random_deals: a.random,
        ..RegistryConfig::default()
    };
    let (registry, report) = match Registry::open(config) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    if a.json {
        let variants: Vec<serde_json::Value> = registry
            .list()
            .iter()
            .map(|v| {
                let m = v.meta();
                serde_json::json!({
                    "id": m.id,
                    "name": m.name,
                    "players": m.players,
                    "version": v.hash(),
                    "short_version": v.short_hash(),
                    "origin": v.origin(),
                    "description": m.description,
                    "source": m.source,
                    "options": registry.option_schema(v.id()).unwrap_or_default(),
                })
            })
            .collect();
        let refused: Vec<serde_json::Value> = report
            .rejected
            .iter()
            .map(|e| serde_json::json!({ "origin": e.origin(), "error": e.to_string() }))
            .collect();
        let out = serde_json::json!({ "variants": variants, "refused": refused });
        println!("{out}");
    } else {
        for v in registry.list() {
            let m = v.meta();
            println!(
                "{:<10} {:<16} {}p  version {}  {}",
                m.id,
                m.name,
                m.players,
                v.short_hash(),
                v.origin()
            );
            if a.options {
                println!("    {}", m.description);
                println!("    source: {}", m.source);
                for o in v.options() {
                    println!(
                        "    {:<24} {:<10} {:<28} {}",
                        o.name,
                        o.default_value().to_string(),
                        o.range_text(),
                        o.doc
                    );
                }
            }
        }
        for e in &report.rejected {
            println!("refused    {e}");
        }
    }
    if report.rejected.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn check(a: CheckArgs) -> ExitCode {
    let mut inputs: Vec<(String, Option<String>, Result<String, String>)> = Vec::new();
    if a.files.is_empty() {
        let embedded: &[(&str, &str)] = match a.game {
            super::Game::Shuangkou => &variants::EMBEDDED,
            super::Game::Shengji => &variants::SHENGJI_EMBEDDED,
        };
        for (id, src) in embedded {
            inputs.push((
                variants::embedded_origin(id),
                Some(id.to_string()),
                Ok(src.to_string()),
            ));
        }
    } else {
        for f in &a.files {
            let id = f
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".rhai"))
                .map(str::to_string);
            inputs.push((
                f.display().to_string(),
                id,
                std::fs::read_to_string(f).map_err(|e| e.to_string()),
            ));
        }
    }
    let mut failed = 0;
    for (origin, id, text) in inputs {
        let text = match text {
            Ok(t) => t,
            Err(e) => {
                println!("FAIL {origin}: cannot read: {e}");
                failed += 1;
                continue;
            }
        };
        if id.is_none() {
            println!("FAIL {origin}: a variant file must be named <id>.rhai");
            failed += 1;
            continue;
        }
        let started = std::time::Instant::now();
        match load_any(&origin, &text, id.as_deref(), a.random, a.seed) {
            Ok((v, report)) => println!(
                "ok   {} {} ({}): {} examples, {} random hook calls, {} worst-case \
                 settlements ({} option sets refused), {:.0?}",
                v.0,
                v.1,
                origin,
                report.examples,
                report.random_calls,
                report.worst_cases,
                report.refused_option_sets,
                started.elapsed()
            ),
            Err(e) => {
                println!("FAIL {e}");
                failed += 1;
            }
        }
    }
    if failed > 0 {
        println!("{failed} file(s) failed");
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Loads and checks a script of either game family (as its `meta().game` says): (id, short
/// hash) and the check report.
fn load_any(
    origin: &str,
    text: &str,
    id: Option<&str>,
    random: usize,
    seed: u64,
) -> Result<((String, String), variants::CheckReport), variants::VariantError> {
    use variants::Family;
    fn named<V: Family>(
        r: (Arc<V>, variants::CheckReport),
    ) -> ((String, String), variants::CheckReport) {
        ((r.0.id().to_string(), r.0.short_hash().to_string()), r.1)
    }
    if variants::family::game_of(origin, text) == variants::ShengjiVariant::GAME {
        variants::load::<variants::ShengjiVariant>(origin, text, id, random, seed).map(named)
    } else {
        variants::load::<CompiledVariant>(origin, text, id, random, seed).map(named)
    }
}

fn compiled_for(id: &str, dir: Option<&Path>) -> Result<Arc<CompiledVariant>, String> {
    match dir {
        None => variants::builtin(id).map_err(|e| e.to_string()),
        Some(d) => {
            let path = d.join(format!("{id}.rhai"));
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            variants::CompiledVariant::compile(&path.display().to_string(), &text, Some(id))
                .map(Arc::new)
                .map_err(|e| e.to_string())
        }
    }
}

/// How `settle` reports a hook's answer: as text under a header (`text`: `Some(header)` unless
/// `--json`), a settlement checked against the variant's sum rule.
#[derive(Clone, Copy)]
struct Report<'a> {
    text: Option<&'a str>,
    sum_rule: SumRule,
}

impl Report<'_> {
    /// One hook of `settle` over the facts parsed from stdin (bad facts: exit code 2): the hook's
    /// answer (a failing hook: 1), printed as text by `print` under the header, and the JSON
    /// object `{"facts": …, key: answer}`.
    fn hook<F: serde::Serialize, R: serde::Serialize, E: std::fmt::Display>(
        self,
        facts: Result<F, String>,
        hook: impl FnOnce(&F) -> Result<R, E>,
        key: &str,
        print: impl FnOnce(&F, &R),
    ) -> Result<serde_json::Value, (u8, String)> {
        let f = facts.map_err(|e| (2, e))?;
        let r = hook(&f).map_err(|e| (1, e.to_string()))?;
        if let Some(header) = self.text {
            println!("{header}");
            print(&f, &r);
        }
        let value = |v: serde_json::Result<serde_json::Value>| v.map_err(|e| (1, e.to_string()));
        let mut out = serde_json::Map::new();
        out.insert("facts".into(), value(serde_json::to_value(&f))?);
        out.insert(key.into(), value(serde_json::to_value(&r))?);
        Ok(serde_json::Value::Object(out))
    }

    /// [`Report::hook`] for a settlement hook (`settle`, `settle_escape`): as text, the facts'
    /// `line`, then the settlement with its breakdown and the sum rule's check.
    fn settlement<F: serde::Serialize>(
        self,
        facts: Result<F, String>,
        hook: impl FnOnce(&F) -> Result<Settlement, HookError>,
        line: impl FnOnce(&F) -> String,
    ) -> Result<serde_json::Value, (u8, String)> {
        self.hook(facts, hook, "settlement", |f, s| {
            println!("{}", line(f));
            print_settlement(s, self.sum_rule);
        })
    }
}

/// The end of a settlement's facts line: the cards left in each hand and the bombs played.
fn tally(t: &TableFacts) -> String {
    format!(
        "cards left {:?}, {} bombs played",
        t.cards_left,
        t.bombs_played.len()
    )
}

/// A deal's facts as a line of the text report.
fn deal_line(f: &DealFacts) -> String {
    let tally = tally(&f.table);
    format!("{}, places {:?}, {tally}", f.outcome.name(), f.table.places)
}

/// An escape's facts as a line of the text report.
fn escape_line(f: &EscapeFacts) -> String {
    let tally = tally(&f.table);
    format!("escape by seat {} ({:?}), {tally}", f.escaper, f.reason)
}

fn settle(a: SettleArgs) -> ExitCode {
    let compiled = match compiled_for(&a.id, a.dir.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let configured = compiled
        .parse_overrides(&a.options)
        .and_then(|o| compiled.configure(&o));
    let variant = match configured {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut input = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut input) {
        eprintln!("error: cannot read stdin: {e}");
        return ExitCode::from(2);
    }
    let json: serde_json::Value = match serde_json::from_str(&input) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: the facts on stdin are not JSON: {e}");
            return ExitCode::from(2);
        }
    };
    let rules = *variant.rules();
    let header = format!(
        "{} {} ({}){}",
        compiled.id(),
        compiled.short_hash(),
        compiled.origin(),
        if a.options.is_empty() {
            String::new()
        } else {
            format!(", options: {}", a.options.join(" "))
        }
    );
    // The header and the text lines when not `--json`.
    let report = Report {
        text: (!a.json).then_some(header.as_str()),
        sum_rule: variant.sum_rule(),
    };
    let result = match a.hook {
        Hook::Settle => report.settlement(
            facts::parse_deal(&json, &rules),
            |f| variant.settle(f),
            deal_line,
        ),
        Hook::Escape => report.settlement(
            facts::parse_escape(&json, &rules),
            |f| variant.settle_escape(f),
            escape_line,
        ),
        Hook::Seating => report.hook(
            facts::parse_seating(&json, &rules),
            |f| variant.seating(f),
            "decision",
            |_, d| {
                println!(
                    "leader: seat {}; swap: {}",
                    d.leader,
                    d.swap
                        .map(|(x, y)| format!("seats {x} and {y}"))
                        .unwrap_or_else(|| "none".into())
                );
            },
        ),
        Hook::Timeout => report.hook(
            facts::parse_timeout(&json, &rules),
            |f| variant.timeout_is_escape(f),
            "escape",
            |_, b| println!("escape: {b}"),
        ),
    };
    match result {
        Ok(v) => {
            if a.json {
                match serde_json::to_string_pretty(&v) {
                    Ok(s) => println!("{s}"),
                    Err(e) => {
                        eprintln!("error: {e}");
                        return ExitCode::from(1);
                    }
                }
            }
            ExitCode::SUCCESS
        }
        Err((code, e)) => {
            eprintln!("error: {e}");
            ExitCode::from(code)
        }
    }
}

fn print_settlement(s: &Settlement, sum_rule: SumRule) {
    println!("seat  score");
    for (seat, score) in s.scores.iter().enumerate() {
        println!("{seat:>4}  {:>8}", signed(*score));
    }
    println!("breakdown:");
    for l in &s.lines {
        println!(
            "  seat {}  {:<13} {:>8}  {}",
            l.seat,
            l.label,
            signed(l.amount),
            l.detail
        );
    }
    match sum_rule.check(s) {
        Ok(()) => println!("sum rule {sum_rule:?}: ok"),
        Err(e) => println!("sum rule {sum_rule:?}: VIOLATED: {e}"),
    }
}

fn signed(centi: i64) -> String {
    let p = points(centi);
    if centi > 0 { format!("+{p}") } else { p }
}
