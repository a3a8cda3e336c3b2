//! The `shuangkou` binary: a thin dispatcher over the library's command-line tools.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use shuangkou::cli;

/// jemalloc (`service::heap` says why).
#[global_allocator]
static ALLOCATOR: shuangkou::service::heap::Allocator = shuangkou::service::heap::ALLOCATOR;

/// Shuangkou (雙扣) game engine.
#[derive(Debug, Parser)]
#[command(name = "shuangkou", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the gRPC service (shuangkou.v1) on its embedded defaults: gRPC and gRPC-Web on
    /// 0.0.0.0:50051, Prometheus metrics on 0.0.0.0:9090/metrics.
    Serve(shuangkou::config::ServeConfig),
    /// Card rules: classify plays, compare them, list legal plays (operators' "why was this
    /// play rejected?").
    #[command(subcommand)]
    Rules(cli::rules::Command),
    /// Two bots (policies or styles) play duplicate deals through a variant's script; every
    /// decision is checked for legality.
    Arena(cli::arena::Args),
    /// Play random legal deals and check every invariant after every step.
    Simulate(cli::simulate::Args),
    /// Variant scripts: list, check, dry-run a settlement.
    #[command(subcommand)]
    Variants(cli::variants::Command),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The command-line tools write to stdout and are piped into `head`, `grep -m1`…: a closed
    // pipe ends them quietly, as it ends `cat`, instead of a `println!` panic ("failed printing
    // to stdout"). Rust starts every program with SIGPIPE ignored; the tools get the default
    // disposition back, here, in one place. `serve` keeps it ignored, so a peer that closes a
    // socket (or a log pipe) can never kill the server: its writes fail with EPIPE instead.
    if !matches!(cli.command, Command::Serve(_)) {
        sigpipe::reset();
    }
    match cli.command {
        Command::Serve(config) => serve(config),
        Command::Arena(args) => cli::arena::run(args),
        Command::Rules(args) => cli::rules::run(args),
        Command::Simulate(args) => cli::simulate::run(args),
        Command::Variants(args) => cli::variants::run(args),
    }
}

fn serve(config: shuangkou::config::ServeConfig) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("serve: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(shuangkou::service::server::run(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("serve: {e}");
            ExitCode::FAILURE
        }
    }
}
