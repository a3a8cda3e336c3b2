//! Server memory held by `WatchGame` streams the client never reads (issue 21 item 4,
//! BENCHMARKS.md "Long matches"): against a running `shuangkou serve` (`SHUANGKOU_ADMIN_KEY`
//! set, `--no-turn-timers`, `--max-watch-streams-per-token` ≥ STREAMS), creates one baibian
//! match of DEALS deals whose four seats are bots (`basic`, no delay; seeded by SEED through the
//! admin-only `seed`) and waits while the server plays it, until it is finished or WAIT seconds
//! have passed. Then, side by side in one run, the server's VmRSS (`/proc/SERVER_PID/status`),
//! sampled once a second:
//!
//! 1. `none`: HOLD seconds with no stream open;
//! 2. `open`: HOLD seconds with STREAMS `WatchGame` streams from seq 0 (the spectator's token),
//!    each on its own HTTP/2 connection, whose responses are held and never polled (the client's
//!    connection task still reads the socket, so the server can send as much as the client's
//!    stream window allows: WINDOW_KB, default hyper's 2 MiB);
//! 3. `closed`: the streams and connections dropped, then HOLD seconds again.
//!
//! Before dropping them, one event is read from each stream (with a deadline) to show it was live.
//! 4. `read`: one more `WatchGame` from seq 0, read at full speed to its end (the match is over:
//!    the stream ends after its last event), events per second (when the match finished).
//! Prints a line per phase and one JSON line: each phase's RSS samples in KiB (count, p50, p90,
//! p99, max), the growth per stream (`open` median − `none` median, ÷ STREAMS), what `closed`
//! gives back and the reading stream's events and events/s.
//!
//! usage: `cargo run --release --example unread_streams -- ADDR ADMIN_KEY SERVER_PID [DEALS]
//! [STREAMS] [HOLD] [WAIT] [WINDOW_KB] [SEED]` (defaults: 500 deals, 50 streams, 20 s, 600 s,
//! hyper's window, 21)

#[path = "support/client.rs"]
mod client;

use std::time::{Duration, Instant};

use shuangkou::service::pb;
use shuangkou::service::pb::game_engine_client::GameEngineClient;
use tonic::transport::{Channel, Endpoint};

/// The server's resident set (VmRSS of `/proc/PID/status`), in KiB.
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("VmRSS:"))?;
    line.trim().trim_end_matches("kB").trim().parse().ok()
}

/// VmRSS samples (KiB), one a second for `secs` seconds; fails when the server is gone.
async fn sample(pid: u32, secs: u64) -> Result<Vec<f64>, String> {
    let mut v = Vec::new();
    for _ in 0..secs.max(1) {
        tokio::time::sleep(Duration::from_secs(1)).await;
        v.push(
            rss_kib(pid).ok_or(format!("no /proc/{pid}/status: is the server running?"))? as f64,
        );
    }
    Ok(v)
}

/// A phase's samples (KiB, sorted in place): their median, and their summary (count, p50, p90,
/// p99, max) after a printed line.
fn phase(name: &str, samples: &mut [f64]) -> (f64, serde_json::Value) {
    let summary = client::summary(samples);
    let median = client::quantile(samples, 0.5);
    let max = samples.last().copied().unwrap_or(f64::NAN);
    println!(
        "{name:>6}: VmRSS median {:.1} MiB, max {:.1} MiB ({} samples)",
        median / 1024.0,
        max / 1024.0,
        samples.len()
    );
    (median, summary)
}

/// A connection of its own for one stream, with the client's stream window (`None`: hyper's).
async fn connection(addr: &str, window: Option<u32>) -> Result<Channel, String> {
    Endpoint::from_shared(format!("http://{addr}"))
        .map_err(|e| format!("bad address {addr}: {e}"))?
        .tcp_nodelay(true)
        .connect_timeout(Duration::from_secs(5))
        .initial_stream_window_size(window)
        .initial_connection_window_size(window.map(|w| w.max(65_535)))
        .connect()
        .await
        .map_err(|e| format!("cannot connect to {addr}: {e}"))
}

/// Reads a `WatchGame` from seq 0 of the finished match `id` to its end (within `wait` s): the
/// events and the seconds they took.
async fn read_all(
    addr: &str,
    window: Option<u32>,
    id: &str,
    watcher: &str,
    wait: u64,
) -> Result<(u64, f64), String> {
    let mut w = GameEngineClient::new(connection(addr, window).await?);
    let req = pb::WatchGameRequest {
        game_id: id.to_string(),
        from_seq: 0,
        ..Default::default()
    };
    let started = Instant::now();
    let mut stream = w
        .watch_game(client::authed(req, watcher))
        .await
        .map_err(client::status)?
        .into_inner();
    let mut events = 0u64;
    let read = async {
        while let Some(_ev) = stream.message().await.map_err(client::status)? {
            events += 1;
        }
        Ok::<(), String>(())
    };
    tokio::time::timeout(Duration::from_secs(wait), read)
        .await
        .map_err(|_| format!("the stream from seq 0 did not end within {wait} s"))??;
    Ok((events, started.elapsed().as_secs_f64()))
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let usage = "usage: unread_streams ADDR ADMIN_KEY SERVER_PID [DEALS] [STREAMS] [HOLD] [WAIT] [WINDOW_KB] [SEED]";
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str);
    let num = |i: usize, default: u64| arg(i).and_then(|s| s.parse().ok()).unwrap_or(default);
    let (addr, key) = (arg(0).ok_or(usage)?, arg(1).ok_or(usage)?);
    let pid: u32 = arg(2).and_then(|s| s.parse().ok()).ok_or(usage)?;
    let deals = num(3, 500) as u32;
    let streams = num(4, 50) as usize;
    let hold = num(5, 20);
    let wait = num(6, 600);
    let window = arg(7)
        .and_then(|s| s.parse::<u32>().ok())
        .map(|kib| kib.saturating_mul(1024));
    let seed = num(8, 21);

    let mut c = GameEngineClient::new(client::connect(addr, 1).await?.remove(0));
    let create = pb::CreateGameRequest {
        variant: "baibian".into(),
        deals,
        seed: format!("{seed:064x}"),
        bots: (0..4).map(|p| (p, "basic".to_string())).collect(),
        ..Default::default()
    };
    let created = c
        .create_game(client::authed(create, key))
        .await
        .map_err(client::status)?
        .into_inner();
    let (id, watcher) = (created.game_id, created.spectator_token);

    // The bots play the match; wait for its end (or WAIT seconds: far into it).
    let started = Instant::now();
    let state = loop {
        tokio::time::sleep(Duration::from_secs(2)).await;
        let req = pb::GetStateRequest {
            game_id: id.clone(),
            ..Default::default()
        };
        let state = c
            .get_state(client::authed(req, &watcher))
            .await
            .map_err(client::status)?
            .into_inner();
        let over = state.phase == pb::Phase::Finished as i32;
        if over || started.elapsed() >= Duration::from_secs(wait) {
            break state;
        }
    };
    let finished = state.phase == pb::Phase::Finished as i32;
    println!(
        "match: deal {} of {deals}, seq {}, finished {finished}, {:.0} s",
        state.deal_number,
        state.seq,
        started.elapsed().as_secs_f64()
    );

    let (none, none_json) = phase("none", &mut sample(pid, hold).await?);

    let mut held = Vec::with_capacity(streams);
    for _ in 0..streams {
        let mut w = GameEngineClient::new(connection(addr, window).await?);
        let req = pb::WatchGameRequest {
            game_id: id.clone(),
            from_seq: 0,
            ..Default::default()
        };
        let stream = w
            .watch_game(client::authed(req, &watcher))
            .await
            .map_err(client::status)?
            .into_inner();
        held.push((w, stream));
    }
    let (open, open_json) = phase("open", &mut sample(pid, hold).await?);
    let mut live = 0;
    for (_, stream) in held.iter_mut() {
        let first = tokio::time::timeout(Duration::from_secs(10), stream.message()).await;
        if matches!(first, Ok(Ok(Some(_)))) {
            live += 1;
        }
    }
    drop(held);
    let (closed, closed_json) = phase("closed", &mut sample(pid, hold).await?);

    let (read_events, read_secs) = if finished {
        read_all(addr, window, &id, &watcher, wait).await?
    } else {
        (0, f64::NAN)
    };
    let per_second = read_events as f64 / read_secs;
    println!(
        "  read: {read_events} events from seq 0 in {read_secs:.2} s: {per_second:.0} events/s"
    );

    let per_stream = (open - none) / streams.max(1) as f64;
    println!("{live} of {streams} streams gave an event; growth {per_stream:.0} KiB per stream");
    let line = serde_json::json!({
        "deals": deals,
        "deal_reached": state.deal_number,
        "seq": state.seq,
        "finished": finished,
        "streams": streams,
        "live_streams": live,
        "window_kib": window.map(|w| w / 1024),
        "hold_s": hold,
        "none": none_json,
        "open": open_json,
        "closed": closed_json,
        "growth_kib_per_stream": per_stream.round(),
        "closed_minus_none_kib": (closed - none).round(),
        "read_events": read_events,
        "read_s": read_secs,
        "read_events_per_s": per_second.round(),
        "load_average": std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim(),
    });
    println!("{line}");
    Ok(())
}
