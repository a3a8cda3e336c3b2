//! `shuangkou simulate` (being built).

/// Arguments of `shuangkou simulate`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs the subcommand; returns the process exit code.
pub fn run(_args: Args) -> std::process::ExitCode {
    eprintln!("shuangkou simulate: not available in this build");
    std::process::ExitCode::from(2)
}
