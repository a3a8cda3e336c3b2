//! Turn-timer lateness with many games timing out together (issue 21, BENCHMARKS.md "Long
//! matches"): creates GAMES baibian games with `turn_seconds = 5` (the option's minimum) against
//! a running `shuangkou serve` (turn timers on, `SHUANGKOU_ADMIN_KEY` set), makes no play, waits
//! WAIT seconds while the service's schedule plays every turn by 托管 when its deadline passes,
//! then reads every game's log with GetReplay (as the admin: the games are still in progress).
//!
//! The lateness of an automatic action is its log time (`ReplayAction.at`) minus the deadline it
//! answered, and the deadline comes from the core, not from the service: the replay is
//! re-executed with the embedded variant (`Game::new` at the replay's `created_at`, then each
//! entry applied) and `Game::deadline()` is read before each automatic entry. Only entries logged
//! before the wait ended count (the GetReplay reads then add load of their own). Prints one JSON
//! line: the lateness in ms of the first timeout of each game (all games' deadlines fall within
//! the creation span) and of every timeout, the automatic plays per second, and the server's CPU
//! over the wait (from `/proc/PID/stat` when SERVER_PID is given).
//!
//! usage: `cargo run --release --example timer_lateness -- ADDR ADMIN_KEY [GAMES] [WAIT] [SERVER_PID]`
//! (defaults: 10000 games, 30 s)

#[path = "support/client.rs"]
mod client;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use shuangkou::game::{Action, Game};
use shuangkou::service::pb;
use shuangkou::service::pb::game_engine_client::GameEngineClient;
use shuangkou::service::replay::Replay;
use tonic::transport::Channel;

/// Requests in flight at once while creating games and reading replays.
const CONCURRENCY: usize = 64;

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The process's user + system CPU seconds (Linux `/proc/PID/stat`, 100 ticks per second).
fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i)?.parse::<f64>().ok();
    Some((ticks(11)? + ticks(12)?) / 100.0)
}

/// Runs `job(i)` for i in 0..n on CONCURRENCY tasks over the channels; the results in order.
async fn run_all<T, F, Fut>(channels: &[Channel], n: usize, job: F) -> Result<Vec<T>, String>
where
    T: Send + 'static,
    F: Fn(GameEngineClient<Channel>, usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<T, String>> + Send,
{
    let next = Arc::new(AtomicUsize::new(0));
    let job = Arc::new(job);
    let mut tasks = Vec::new();
    for t in 0..CONCURRENCY {
        let client = GameEngineClient::new(channels[t % channels.len()].clone())
            .max_decoding_message_size(8 << 20);
        let (next, job) = (Arc::clone(&next), Arc::clone(&job));
        tasks.push(tokio::spawn(async move {
            let mut done = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    return Ok::<_, String>(done);
                }
                done.push((i, job(client.clone(), i).await?));
            }
        }));
    }
    let mut all = Vec::with_capacity(n);
    for t in tasks {
        all.extend(t.await.map_err(|e| e.to_string())??);
    }
    all.sort_by_key(|(i, _)| *i);
    Ok(all.into_iter().map(|(_, v)| v).collect())
}

/// Lateness in ms of each automatic action logged by `until` (Unix ms), by re-executing the
/// replay with the core and reading the deadline before each such entry.
fn lateness(replay: &Replay, until: i64) -> Result<Vec<f64>, String> {
    let hooks = replay.builtin_hooks()?;
    let (mut game, _) = Game::new(
        replay.config.clone(),
        &hooks,
        replay.seed,
        replay.preset()?,
        replay.created_at,
    )
    .map_err(|e| e.to_string())?;
    let mut late = Vec::new();
    for entry in &replay.entries {
        if entry.at as i64 > until {
            break;
        }
        if matches!(entry.action, Action::Auto { .. } | Action::Timeout) {
            let deadline = game
                .deadline()
                .ok_or("an automatic action without a deadline")?;
            late.push(entry.at as f64 - deadline as f64);
        }
        game.apply(&hooks, *entry).map_err(|e| e.to_string())?;
    }
    Ok(late)
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: timer_lateness ADDR ADMIN_KEY [GAMES] [WAIT] [SERVER_PID]";
    let addr = args.next().ok_or(usage)?;
    let key: Arc<str> = args.next().ok_or(usage)?.into();
    let games: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let wait: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(30);
    let pid: Option<u32> = args.next().and_then(|s| s.parse().ok());
    let channels = client::connect(&addr, 4).await?;

    let start = Instant::now();
    let k = Arc::clone(&key);
    let ids = run_all(&channels, games, move |mut c, _| {
        let key = Arc::clone(&k);
        async move {
            let req = pb::CreateGameRequest {
                variant: "baibian".into(),
                deals: 1,
                options: [("turn_seconds".to_string(), "5".to_string())].into(),
                ..Default::default()
            };
            let r = c.create_game(client::authed(req, &key)).await;
            Ok(r.map_err(client::status)?.into_inner().game_id)
        }
    })
    .await?;
    let created_s = start.elapsed().as_secs_f64();
    eprintln!("{games} games created in {created_s:.1} s; waiting {wait} s");

    let cpu_before = pid.and_then(cpu_seconds);
    let wait_start = Instant::now();
    tokio::time::sleep(Duration::from_secs(wait)).await;
    let until = now_ms();
    let cpu = match (cpu_before, pid.and_then(cpu_seconds)) {
        (Some(a), Some(b)) => Some((b - a) / wait_start.elapsed().as_secs_f64()),
        _ => None,
    };

    let ids = Arc::new(ids);
    let k = Arc::clone(&key);
    let replays = run_all(&channels, games, move |mut c, i| {
        let (key, ids) = (Arc::clone(&k), Arc::clone(&ids));
        async move {
            let req = pb::GetReplayRequest {
                game_id: ids[i].clone(),
                max_actions: 5_000,
                ..Default::default()
            };
            let r = c.get_replay(client::authed(req, &key)).await;
            Replay::try_from(&r.map_err(client::status)?.into_inner())
        }
    })
    .await?;

    let (mut first, mut every) = (Vec::new(), Vec::new());
    let window_ms = (until
        - replays
            .iter()
            .map(|r| r.created_at as i64)
            .min()
            .unwrap_or(until))
    .max(1) as f64;
    for replay in &replays {
        let late = lateness(replay, until)?;
        if let Some(&f) = late.first() {
            first.push(f);
        }
        every.extend(late);
    }
    let autos = every.len();
    let line = serde_json::json!({
        "games": games,
        "create_seconds": (created_s * 10.0).round() / 10.0,
        "wait_seconds": wait,
        "automatic_actions": autos,
        "automatic_per_second": (autos as f64 / (window_ms / 1000.0)).round(),
        "games_without_timeout": games - first.len(),
        "first_timeout_late_ms": client::summary(&mut first),
        "every_timeout_late_ms": client::summary(&mut every),
        "server_cpu_cores": cpu.map(|c| (c * 100.0).round() / 100.0),
    });
    println!("{line}");
    Ok(())
}
