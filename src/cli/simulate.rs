//! `shuangkou simulate`: plays random legal deals through a variant's real script and checks
//! every invariant after every step (see `game::sim`), printing deals per second and any
//! violation with the seed that reproduces it.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use crate::game::hooks::VariantHooks;
use crate::game::sim::{SimOptions, simulate};

/// Arguments of `shuangkou simulate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Variant id (an embedded script).
    #[arg(long)]
    pub variant: String,
    /// Deals to play.
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
    /// Print one JSON object.
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

/// Runs the subcommand.
pub fn run(args: Args) -> ExitCode {
    let found = match (args.plain_hooks, args.options.is_empty()) {
        (true, true) => plain_hooks_for(&args.variant),
        (true, false) => Err("--option needs the script (not --plain-hooks)".to_string()),
        (false, _) => hooks_with_options(&args.variant, &args.options),
    };
    let hooks = match found {
        Ok(h) => h,
        Err(e) => {
            eprintln!("simulate: {e}");
            return ExitCode::from(2);
        }
    };
    let options = SimOptions {
        check: !args.no_check,
        deals_per_game: args.deals_per_game.max(1),
        ..SimOptions::default()
    };
    let start = Instant::now();
    let report = simulate(
        hooks.as_ref(),
        &args.variant,
        args.deals,
        args.seed,
        options,
    );
    let secs = start.elapsed().as_secs_f64().max(1e-9);
    let per_second = report.deals as f64 / secs;
    if args.json {
        let out = serde_json::json!({
            "variant": args.variant,
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
            args.variant,
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
    if report.violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
