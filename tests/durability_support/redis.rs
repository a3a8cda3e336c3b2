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
    /// More `redis-server` arguments (a cluster node's).
    extra: Vec<String>,
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

/// Whether `redis-server` can run here; when not, says the test is skipped (or fails, when
/// `SHUANGKOU_REQUIRE_REDIS` is set).
fn available(test: &str) -> bool {
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
        return false;
    }
    true
}

impl RedisServer {
    /// Starts one working in `dir` (created), or returns `None` (after saying so) when the test
    /// must be skipped: only when `redis-server` is absent and `SHUANGKOU_REQUIRE_REDIS` is unset.
    pub fn start(test: &str, dir: PathBuf) -> Option<RedisServer> {
        if !available(test) {
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
            let server = RedisServer::launched(port, dir.clone(), Vec::new());
            if server.answering_pid() == server.child.as_ref().map(Child::id) {
                return Some(server);
            }
            let mut server = server;
            server.stop();
            // Not dropped: its drop would remove the directory the next try uses.
            std::mem::forget(server);
        }
        panic!("no free port for redis-server after 10 tries");
    }

    fn launched(port: u16, dir: PathBuf, extra: Vec<String>) -> RedisServer {
        std::fs::create_dir_all(&dir).expect("redis dir");
        let mut server = RedisServer {
            child: None,
            port,
            dir,
            extra,
        };
        server.launch();
        server
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
            .args(&self.extra)
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

/// A real Redis Cluster of three masters (no replicas): three `redis-server --cluster-enabled
/// yes` children on free loopback ports (each port + 10000, the cluster bus, below 65536) joined
/// by `redis-cli --cluster create`; ready once every node reports `cluster_state:ok` (within
/// 60 s). Stopped (and its directories removed) when dropped.
pub struct RedisCluster {
    pub nodes: Vec<RedisServer>,
}

/// A free loopback port whose cluster bus port (+ 10000) exists and is free too.
fn free_cluster_port(taken: &[u16]) -> u16 {
    for _ in 0..1000 {
        let Ok(l) = TcpListener::bind("127.0.0.1:0") else {
            continue;
        };
        let Ok(port) = l.local_addr().map(|a| a.port()) else {
            continue;
        };
        if port < 55_000
            && !taken.contains(&port)
            && TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok()
        {
            return port;
        }
    }
    panic!("no free port below 55000 with a free cluster bus port");
}

/// Runs `cmd` with a deadline (the `timeout` tool), returning its standard output.
fn run_within(secs: u32, cmd: &str, args: &[String]) -> Result<String, String> {
    let out = Command::new("timeout")
        .arg(secs.to_string())
        .arg(cmd)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{cmd}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd} {args:?}: {}: {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

impl RedisCluster {
    /// Starts one working under `dir`, or `None` when the test must be skipped (as
    /// [`RedisServer::start`]).
    pub fn start(test: &str, dir: PathBuf) -> Option<RedisCluster> {
        if !available(test) {
            return None;
        }
        let mut ports = Vec::new();
        let mut nodes = Vec::new();
        for i in 0..3 {
            let port = free_cluster_port(&ports);
            ports.push(port);
            let extra = [
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                &format!("nodes-{port}.conf"),
                "--cluster-node-timeout",
                "5000",
            ]
            .map(String::from)
            .to_vec();
            nodes.push(RedisServer::launched(
                port,
                dir.join(format!("node{i}")),
                extra,
            ));
        }
        let cluster = RedisCluster { nodes };
        let mut args: Vec<String> = vec!["--cluster".into(), "create".into()];
        args.extend(ports.iter().map(|p| format!("127.0.0.1:{p}")));
        args.extend(["--cluster-replicas", "0", "--cluster-yes"].map(String::from));
        if let Err(e) = run_within(60, "redis-cli", &args) {
            panic!("redis-cli --cluster create: {e}");
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        for port in &ports {
            loop {
                let info = run_within(5, "redis-cli", &cli_args(*port, &["CLUSTER", "INFO"]));
                if info.is_ok_and(|i| i.contains("cluster_state:ok")) {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "cluster node {port} not ok within 60 s"
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        Some(cluster)
    }

    /// The store spec of the cluster (`redis+cluster://` and every node).
    pub fn url(&self) -> String {
        let nodes: Vec<String> = self
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        format!("redis+cluster://{}", nodes.join(","))
    }

    /// The number of keys on each node (`DBSIZE`, node by node).
    pub fn keys_per_node(&self) -> Vec<u64> {
        self.nodes
            .iter()
            .map(|n| {
                let out = run_within(5, "redis-cli", &cli_args(n.port, &["DBSIZE"]))
                    .unwrap_or_else(|e| panic!("DBSIZE: {e}"));
                out.trim()
                    .parse()
                    .unwrap_or_else(|_| panic!("DBSIZE answered {out:?}"))
            })
            .collect()
    }
}

fn cli_args(port: u16, command: &[&str]) -> Vec<String> {
    let mut args = vec!["-p".to_string(), port.to_string()];
    args.extend(command.iter().map(|s| s.to_string()));
    args
}
