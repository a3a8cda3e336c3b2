//! `shuangkou simulate`: plays random legal deals through a variant's real script and checks
//! every invariant after every step (see `game::sim`), printing deals per second and any
//! violation with the seed that reproduces it.
//!
//! The scripts are the embedded ones, or with `--variants-dir DIR` those of a directory as a
//! server would load them (a refused file is reported and fails the run). `--variant ID` picks
//! one; without it every variant of the source is simulated, one line (or one JSON object) each.
//! Exactly `--deals` deals are played per variant (the last match is shortened to fit).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use crate::game::hooks::VariantHooks;
use crate::game::sim::{SimOptions, simulate};
use crate::variants::{Registry, RegistryConfig};

/// Arguments of `shuangkou simulate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Variant id; omitted = every variant of the embedded scripts or of --variants-dir.
    #[arg(long)]
    pub variant: Option<String>,
    /// The game: `shengji` simulates whole 升級 matches (`--deals` counts matches) through
    /// `variants/shengji.rhai` (or the `shengji.rhai` of --variants-dir).
    #[arg(long, value_enum, default_value_t = super::Game::Shuangkou)]
    pub game: super::Game,
    /// Simulate the scripts of this directory (`<id>.rhai` files, loaded and checked as the
    /// server loads them) instead of the embedded ones.
    #[arg(long, value_name = "DIR", conflicts_with = "plain_hooks")]
    pub variants_dir: Option<PathBuf>,
    /// Deals to play (exactly; per variant).
    #[arg(long, default_value_t = 1000)]
    pub deals: u64,
    /// Seed of the simulation (every game's seed derives from it).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Deals per match.
    #[arg(long, default_value_t = 2)]
    pub deals_per_game: u32,
    /// Play only: skip the per-step invariant checks (for measuring speed).
    #[arg(long)]
    pub no_check: bool,
    /// Print one JSON object (per variant, one per line).
    #[arg(long)]
    pub json: bool,
    /// Option override of the variant's script, `key=value` (repeatable), e.g.
    /// `--option equal_star_bombs=first_stands`; not with `--plain-hooks`.
    #[arg(long = "option", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// Use the built-in test double (`game::testing::PlainHooks` with the variant's card-rule
    /// preset) instead of the script: measures the deal engine alone, without the script host.
    #[arg(long)]
    pub plain_hooks: bool,
}

/// The hooks of a variant: its embedded script with default options.
pub fn hooks_for(variant: &str) -> Result<Arc<dyn VariantHooks>, String> {
    hooks_with_options(variant, &[])
}

/// The hooks of a variant: its embedded script with `key=value` option overrides.
pub fn hooks_with_options(
    variant: &str,
    options: &[String],
) -> Result<Arc<dyn VariantHooks>, String> {
    let compiled = crate::variants::builtin(variant).map_err(|e| e.to_string())?;
    let overrides = compiled
        .parse_overrides(options)
        .map_err(|e| e.to_string())?;
    let configured = compiled.configure(&overrides).map_err(|e| e.to_string())?;
    Ok(Arc::new(configured))
}

/// The built-in test double with the card rules of a variant's preset (`--plain-hooks`).
pub fn plain_hooks_for(variant: &str) -> Result<Arc<dyn VariantHooks>, String> {
    let rules = crate::rules::Rules::preset(variant).map_err(|e| e.to_string())?;
    let mut hooks = crate::game::testing::PlainHooks::new(rules);
    hooks.partners_see_hands = variant == "jj";
    Ok(Arc::new(hooks))
}

/// A variant to simulate: its id and hooks.
type Target = (String, Arc<dyn VariantHooks>);

/// The variants to simulate; an error names what could not be loaded.
fn targets(args: &Args) -> Result<Vec<Target>, String> {
    let Some(dir) = &args.variants_dir else {
        let ids: Vec<String> = match &args.variant {
            Some(v) => vec![v.clone()],
            None => crate::variants::EMBEDDED
                .iter()
                .map(|(id, _)| id.to_string())
                .collect(),
        };
        return ids
            .into_iter()
            .map(|id| {
                let hooks = match (args.plain_hooks, args.options.is_empty()) {
                    (true, true) => plain_hooks_for(&id),
                    (true, false) => {
                        Err("--option needs the script (not --plain-hooks)".to_string())
                    }
                    (false, _) => hooks_with_options(&id, &args.options),
                }?;
                Ok((id, hooks))
            })
            .collect();
    };
    // As the server loads a directory (examples checked); the simulation is the random check.
    let config = RegistryConfig {
        dir: Some(dir.clone()),
        random_deals: 0,
        ..RegistryConfig::default()
    };
    let (registry, report) = Registry::open(config).map_err(|e| e.to_string())?;
    for e in &report.rejected {
        eprintln!("simulate: refused {e}");
    }
    let ids = match &args.variant {
        Some(v) => vec![v.clone()],
        // A whole directory is simulated only when every file of it loads.
        None if !report.rejected.is_empty() => {
            return Err(format!(
                "{} file(s) of {} refused",
                report.rejected.len(),
                dir.display()
            ));
        }
        None => registry.ids(),
    };
    ids.into_iter()
        .map(|id| {
            let compiled = registry
                .active(&id)
                .ok_or_else(|| format!("no variant {id:?} in {}", dir.display()))?;
            let overrides = compiled
                .parse_overrides(&args.options)
                .map_err(|e| e.to_string())?;
            let configured = compiled.configure(&overrides).map_err(|e| e.to_string())?;
            let hooks: Arc<dyn VariantHooks> = Arc::new(configured);
            Ok((id, hooks))
        })
        .collect()
}

/// Runs the subcommand.
pub fn run(args: Args) -> ExitCode {
    if args.game == super::Game::Shengji {
        return super::shengji::simulate(&super::shengji::SimulateArgs {
            variants_dir: args.variants_dir.as_deref(),
            options: &args.options,
            seed: args.seed,
            deals: args.deals,
            no_check: args.no_check,
            json: args.json,
        });
    }
    let targets = match targets(&args) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("simulate: {e}");
            return ExitCode::from(2);
        }
    };
    let mut clean = true;
    for (variant, hooks) in targets {
        clean &= run_one(&args, &variant, hooks.as_ref());
    }
    if clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Simulates one variant and prints its report; true when no invariant was violated.
fn run_one(args: &Args, variant: &str, hooks: &dyn VariantHooks) -> bool {
    let options = SimOptions {
        check: !args.no_check,
        deals_per_game: args.deals_per_game.max(1),
        ..SimOptions::default()
    };
    let start = Instant::now();
    let report = simulate(hooks, variant, args.deals, args.seed, options);
    let secs = start.elapsed().as_secs_f64().max(1e-9);
    let per_second = report.deals as f64 / secs;
    if args.json {
        let out = serde_json::json!({
            "variant": variant,
            "deals": report.deals,
            "games": report.games,
            "actions": report.actions,
            "violations": report.violations.len(),
            "violation_details": report.violations,
            "deals_per_second": (per_second * 10.0).round() / 10.0,
            "checked": options.check,
            "hooks": if args.plain_hooks { "plain" } else { "script" },
            "seed": args.seed,
            "options": args.options,
            "outcomes": report.outcomes,
        });
        println!("{out}");
    } else {
        println!(
            "{}: {} deals ({} games, {} actions) in {:.2}s = {:.0} deals/s, checks {}",
            variant,
            report.deals,
            report.games,
            report.actions,
            secs,
            per_second,
            if options.check { "on" } else { "off" }
        );
        for (k, v) in &report.outcomes {
            println!("  {k}: {v}");
        }
        for v in &report.violations {
            println!("VIOLATION {v}");
        }
    }
    report.violations.is_empty()
}
