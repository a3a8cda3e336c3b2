//! A real `redis-server` for the tests that need one (`durability_support` and, by path,
//! `tests/store_redis.rs`): a child process on a free loopback port, in its own directory,
//! without persistence (`--save "" --appendonly no`), killed and its directory removed when
//! dropped.
//!
//! Skipped (with a message) only when `redis-server` is not installed and
//! `SHUANGKOU_REQUIRE_REDIS` is unset; CI sets it, so there the tests must run.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `redis-server` child process.
pub struct RedisServer {
    child: Option<Child>,
    pub port: u16,
    dir: PathBuf,
}

fn redis_installed() -> bool {
    Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn redis_required() -> bool {
    std::env::var("SHUANGKOU_REQUIRE_REDIS").is_ok_and(|v| !v.is_empty() && v != "0")
}

impl RedisServer {
    /// Starts one working in `dir` (created), or returns `None` (after saying so) when the test
    /// must be skipped: only when `redis-server` is absent and `SHUANGKOU_REQUIRE_REDIS` is unset.
    pub fn start(test: &str, dir: PathBuf) -> Option<RedisServer> {
        if !redis_installed() {
            assert!(
                !redis_required(),
                "redis-server is not installed but SHUANGKOU_REQUIRE_REDIS is set"
            );
            // Written to the real stderr, past the test harness's output capture.
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED {test}: redis-server is not installed (apt-get install redis-server); \
                 set SHUANGKOU_REQUIRE_REDIS=1 to make this a failure"
            );
            return None;
        }
        std::fs::create_dir_all(&dir).expect("redis dir");
        // A port found free may be handed to a test running beside this one too: then this
        // redis-server cannot bind it, and the ping answered is the other test's server. The
        // server that answers must be this child (its `process_id`), else another port is tried.
        for _ in 0..10 {
            let port = TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("free port")
                .port();
            let mut server = RedisServer {
                child: None,
                port,
                dir: dir.clone(),
            };
            server.launch();
            if server.answering_pid() == server.child.as_ref().map(Child::id) {
                return Some(server);
            }
            server.stop();
            // Not dropped: its drop would remove the directory the next try uses.
            std::mem::forget(server);
        }
        panic!("no free port for redis-server after 10 tries");
    }

    /// The `process_id` of the redis-server answering on this port.
    fn answering_pid(&self) -> Option<u32> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
        s.write_all(b"INFO server\r\n").ok()?;
        let mut text = String::new();
        let mut buf = [0u8; 4096];
        while !text.contains("process_id:") || !text[text.find("process_id:")?..].contains('\n') {
            let n = s.read(&mut buf).ok()?;
            if n == 0 {
                break;
            }
            text.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        let at = text.find("process_id:")? + "process_id:".len();
        text[at..].lines().next()?.trim().parse().ok()
    }

    /// Starts the process (again, after [`RedisServer::stop`]) on the same port and waits (at
    /// most 10 s) until it answers `PING`.
    pub fn launch(&mut self) {
        assert!(self.child.is_none());
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn redis-server");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if self.answers_ping() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("redis-server on port {} did not start", self.port);
    }

    fn answers_ping(&self) -> bool {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
        let mut buf = [0u8; 7];
        s.write_all(b"PING\r\n").is_ok() && s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n"
    }

    /// Kills the process (the data is gone: no persistence).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
