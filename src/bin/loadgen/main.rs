//! `shuangkou-load`: a load generator that plays real games against a running `shuangkou serve`.
//!
//! It creates `--games` games and drives every seat of every game with a bot (legal plays from
//! `GetHints`, or enumerated locally with `--hints local`; a random or greedy policy, seeded, or
//! `--policy suggest`: the server's suggested play, `GetHints.suggested`, made by the serve's
//! `--auto-policy` bot from the seat's view). `--bot-seats K --bot-policy NAME` makes the last K
//! players of every game server-side bot seats (any bot of docs/BOTS.md) that the server plays;
//! the client then waits for them (GetState as the spectator) and drives the other seats,
//! playing complete matches in a closed loop (`--concurrency` requests in flight) or at a target
//! rate (`--rate` plays per second). It reports plays per second, the latency of every rpc
//! (p50/p90/p99/max from HDR histograms) and errors by gRPC code.
//!
//! In the same run it measures the transport baseline: `grpc.health.v1.Health/Check` at the same
//! concurrency over the same connections (half before the games, half after), and prints the
//! ratio SubmitPlay/baseline.
//!
//! It verifies what it gets: every game it completes is fetched with `GetReplay` and re-executed
//! with the engine (`Game::replay` with the embedded variant's default hooks), checking every
//! action's state hash, the final totals against the replay's and against the match result the
//! bot received, and that every acknowledged play is in the log. The server must run with
//! `--no-turn-timers` (deadlines are part of the state) and the embedded variants.
//!
//! Exits non-zero on any rpc error, bot desync or replay mismatch — never on timing.
//!
//! `--game shengji` plays 升級 over `shengji.v1` the same way (the client's rule bot for every
//! seat, or server bot seats with `--bot-seats`), verifying every match's replay: see
//! `loadgen/shengji.rs`.
//!
//! `--populate N` instead creates N games, makes `--plays-per-game` plays in each and exits,
//! leaving them in progress (memory-at-scale measurements).

mod args;
mod baseline;
mod client;
mod cpu;
mod report;
mod shared;
mod shengji;
mod shengji_verify;
mod shuangkou_driver;
mod shuangkou_game;
mod stats;
mod verify;

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::time::{Duration, Instant};

use clap::Parser;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use shuangkou::service::pb::game_engine_client::GameEngineClient;
use shuangkou::service::pb::shengji::shengji_engine_client::ShengjiEngineClient;

use crate::args::{Args, Family};
use crate::baseline::baseline;
use crate::cpu::{Cpu, cpu_now};
use crate::report::Report;
use crate::shared::Shared;
use crate::stats::{CHECK, Done, Stats};

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads.max(1))
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("shuangkou-load: cannot start the runtime: {e}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(run(args)) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("shuangkou-load: {e}");
            ExitCode::from(2)
        }
    }
}

/// The whole run; `Ok(false)` when something failed (errors, desyncs, mismatches).
async fn run(args: Args) -> Result<bool, String> {
    let rules = shuangkou::variants::builtin_rules(&args.variant).map_err(|e| e.to_string())?;
    args.check(&rules)?;
    let channels = client::connect(&args.target, args.connections).await?;
    let concurrency = args.concurrency.max(1);
    let populate = args.populate;
    let games_left = args.games_left();
    let duration = args.duration();
    let baseline_secs = args.baseline_secs();

    // Baseline, first half.
    let server_pid = args.server_pid;
    let mut check = Stats::new()?;
    let mut check_secs = 0.0;
    let mut check_cpu = Cpu::default();
    if baseline_secs > 0.0 {
        let c0 = cpu_now(server_pid);
        let (s, secs) = baseline(&channels, concurrency, baseline_secs / 2.0).await?;
        check_cpu = check_cpu.add(cpu_now(server_pid).since(c0));
        check.merge(s);
        check_secs += secs;
    }
    let check_first = check.ok[CHECK] as f64 / check_secs.max(1e-9);

    // The games.
    let games_cpu0 = cpu_now(server_pid);
    let start = Instant::now();
    let shared = Arc::new(Shared {
        rules,
        games_left: AtomicU64::new(games_left),
        stop: AtomicBool::new(false),
        deadline: duration.map(|d| start + Duration::from_secs_f64(d)),
        scheduled: AtomicU64::new(0),
        start,
        args,
    });
    let args = &shared.args;
    let games = args.games.max(1);
    let workers = concurrency.min(games);
    let mut tasks = Vec::new();
    for i in 0..workers {
        let slots = games / workers + usize::from(i < games % workers);
        let channel = channels[i % channels.len()].clone();
        let seed = args
            .seed
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(i as u64);
        if args.game == Family::Shengji {
            let w = shengji::Worker {
                client: ShengjiEngineClient::new(channel).max_decoding_message_size(16 << 20),
                shared: Arc::clone(&shared),
                rng: ChaCha8Rng::seed_from_u64(seed),
                stats: Stats::new()?,
            };
            tasks.push(tokio::spawn(w.play()));
            continue;
        }
        let w = shuangkou_driver::Worker {
            index: i,
            client: GameEngineClient::new(channel).max_decoding_message_size(16 << 20),
            shared: Arc::clone(&shared),
            rng: ChaCha8Rng::seed_from_u64(seed),
            stats: Stats::new()?,
            requests: 0,
        };
        tasks.push(tokio::spawn(async move {
            match populate {
                Some(_) => w.populate().await,
                None => w.play(slots).await,
            }
        }));
    }
    let mut total = Stats::new()?;
    for t in tasks {
        total.merge(t.await.map_err(|e| e.to_string())?);
    }
    let secs = start.elapsed().as_secs_f64();
    let games_cpu = cpu_now(server_pid).since(games_cpu0);

    // Baseline, second half.
    let mut check_second = 0.0;
    if baseline_secs > 0.0 {
        let c0 = cpu_now(server_pid);
        let (s, secs2) = baseline(&channels, concurrency, baseline_secs / 2.0).await?;
        check_cpu = check_cpu.add(cpu_now(server_pid).since(c0));
        check_second = s.ok[CHECK] as f64 / secs2.max(1e-9);
        check.merge(s);
        check_secs += secs2;
    }
    let check_rate = check.ok[CHECK] as f64 / check_secs.max(1e-9);

    // Verification (after the timed part, so it does not compete with the load).
    let verify_start = Instant::now();
    let mut mismatches = Vec::new();
    for done in &total.games_done {
        let checked = match done {
            Done::Shuangkou(f) => verify::verify(&args.variant, f),
            Done::Shengji(f) => shengji_verify::verify(f),
        };
        if let Err(e) = checked {
            mismatches.push(e);
        }
    }
    let report = Report {
        args,
        games,
        concurrency,
        total: &total,
        secs,
        games_cpu,
        check: &check,
        baseline_secs,
        check_rate,
        check_first,
        check_second,
        check_cpu,
        mismatches: &mismatches,
        verify_secs: verify_start.elapsed().as_secs_f64(),
    };
    report.print();
    Ok(report.ok())
}
