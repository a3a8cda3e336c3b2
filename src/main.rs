//! The `shuangkou` binary: a thin dispatcher over the library's command-line tools.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use shuangkou::cli;

/// Shuangkou (雙扣) game engine.
#[derive(Debug, Parser)]
#[command(name = "shuangkou", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Card rules: classify plays, compare them, list legal plays (operators' "why was this
    /// play rejected?").
    Rules(cli::rules::Args),
    /// Play random legal deals and check every invariant after every step.
    Simulate(cli::simulate::Args),
    /// Variant scripts: list, check, dry-run a settlement.
    Variants(cli::variants::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Rules(args) => cli::rules::run(args),
        Command::Simulate(args) => cli::simulate::run(args),
        Command::Variants(args) => cli::variants::run(args),
    }
}
