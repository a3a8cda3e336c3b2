//! `shuangkou-load --game shengji` against a server in this process: whole 升級 deals with the
//! client's rule bot on every seat and with three server bot seats, every match's replay
//! re-executed by the load generator (a wrong play count or state hash makes it fail), and the
//! report's counts as asked (`--deals`).

pub mod common;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::TestServer;
use serde_json::Value;

/// Reads all of a child's pipe on its own thread, so that a chatty child never blocks on a full
/// pipe while the test waits for it to exit.
fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.read_to_end(&mut buf);
        buf
    })
}

/// Runs the load generator (killed after two minutes) and reads its JSON report; its stdout
/// and stderr are drained while it runs.
fn load(addr: std::net::SocketAddr, extra: &[&str]) -> Value {
    let mut child = Command::new(env!("CARGO_BIN_EXE_shuangkou-load"))
        .args(["--target", &addr.to_string(), "--game", "shengji", "--json"])
        .args([
            "--baseline-secs",
            "0.2",
            "--concurrency",
            "2",
            "--connections",
            "1",
        ])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the load generator runs");
    let stdout = drain(child.stdout.take().expect("piped stdout"));
    let stderr = drain(child.stderr.take().expect("piped stderr"));
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("shuangkou-load did not finish in 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // The child has exited: its pipes close and both readers end.
    let out = stdout.join().expect("stdout reader");
    let err = stderr.join().expect("stderr reader");
    let text = String::from_utf8_lossy(&out);
    serde_json::from_str(text.trim()).unwrap_or_else(|e| {
        panic!(
            "not a JSON report ({e}): {text}\n{}",
            String::from_utf8_lossy(&err)
        )
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shengji_load_plays_and_verifies_whole_deals() {
    let server = TestServer::start(|_| {}).await;
    let addr = server.addr;
    for bots in ["0", "3"] {
        let args = [
            "--bot-seats",
            bots,
            "--seed",
            "3",
            "--deals",
            "4",
            "--deals-per-game",
            "2",
        ];
        let r = tokio::task::spawn_blocking(move || load(addr, &args))
            .await
            .expect("the load run");
        assert_eq!(r["ok"], Value::Bool(true), "bot seats {bots}: {r}");
        assert_eq!(r["game"], "shengji");
        assert_eq!(r["deals"], 4, "bot seats {bots}: {r}");
        assert_eq!(r["games_completed"], 2, "bot seats {bots}: {r}");
        assert_eq!(r["verified"], 2, "bot seats {bots}: {r}");
        // Each deal is 12 tricks of one card from each seat; the client plays its own seats'.
        let seats = if bots == "0" { 4 } else { 1 };
        assert_eq!(r["plays"], 4 * 12 * seats, "bot seats {bots}: {r}");
    }
}
