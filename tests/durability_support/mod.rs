//! Shared helpers of the binary-level durability tests (`tests/durability_*.rs`): the server
//! binary as a child process (killed with SIGKILL), a real `redis-server`, gRPC clients with seat
//! tokens, and a seeded player that picks legal plays from GetHints.
//!
//! The server binary is `env!("CARGO_BIN_EXE_shuangkou")` (the profile the tests are built with:
//! `cargo test --release` tests the release server), or `SHUANGKOU_TEST_BIN` when set.

pub mod leases;
pub mod race;
pub mod redis;
#[path = "../common/requests.rs"]
pub mod requests;
#[path = "../common/temp.rs"]
pub mod temp;

pub use redis::RedisServer;
pub use requests::*;
pub use temp::TempDir as TempRoot;

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shuangkou::service::pb;
use shuangkou::service::pb::game_engine_client::GameEngineClient;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Status};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

/// The admin key every test server is started with (admin GetReplay of unfinished games).
pub const ADMIN_KEY: &str = "durability-admin-key-0123456789";
/// The token key shared by every replica (idempotent creates return the same tokens anywhere).
pub const TOKEN_KEY: &str = "6b1f1e0d2c3b4a5968778695a4b3c2d1e0f10213243546576879808192a3b4c5";

pub type Client = GameEngineClient<Channel>;
pub type Rand = ChaCha8Rng;

/// The seed of a test: `SHUANGKOU_TEST_SEED`, or fresh. Printed (shown when the test fails).
pub fn seed(test: &str) -> u64 {
    let seed = std::env::var("SHUANGKOU_TEST_SEED")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        });
    println!("{test}: seed {seed} (rerun with SHUANGKOU_TEST_SEED={seed})");
    seed
}

pub fn rng(seed: u64, stream: u64) -> Rand {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    r.set_stream(stream);
    r
}

/// An env var as a number, or the default.
pub fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// True when the heavier variants are asked for (`SHUANGKOU_DURABILITY_HEAVY=1`).
pub fn heavy() -> bool {
    std::env::var("SHUANGKOU_DURABILITY_HEAVY").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// A fresh directory of test `test` (kept when the test fails: the server logs in it explain
/// the failure).
pub fn temp_dir(test: &str) -> TempRoot {
    TempRoot::created("durability", test)
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

fn server_binary() -> PathBuf {
    match std::env::var_os("SHUANGKOU_TEST_BIN") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => PathBuf::from(env!("CARGO_BIN_EXE_shuangkou")),
    }
}

/// A directory with only the classic variant (starts in a fraction of the time all the embedded
/// variants' activation checks take in a debug build).
pub fn variants_dir(root: &Path) -> PathBuf {
    let dir = root.join("variants");
    std::fs::create_dir_all(&dir).expect("variants dir");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("variants/classic.rhai");
    std::fs::copy(&src, dir.join("classic.rhai")).expect("copy classic.rhai");
    dir
}

/// A `shuangkou serve` child process. Killed (SIGKILL) when dropped.
pub struct Server {
    pub name: String,
    pub addr: SocketAddr,
    store: String,
    variants: PathBuf,
    log_dir: PathBuf,
    child: Option<Child>,
    /// Starts so far (each start logs to its own file).
    pub starts: u32,
    /// Extra environment of every start (`SHUANGKOU_*` settings).
    env: Vec<(String, String)>,
}

impl Server {
    /// Starts a server on a free port with `store` (a directory or a redis:// URL) and waits until
    /// it reports SERVING.
    pub async fn start(name: &str, store: &str, root: &Path) -> Server {
        Server::start_with(name, store, root, &[]).await
    }

    /// [`Server::start`] with extra environment (`SHUANGKOU_*` settings) at every start.
    pub async fn start_with(name: &str, store: &str, root: &Path, env: &[(&str, &str)]) -> Server {
        let mut s = Server {
            name: name.to_string(),
            addr: SocketAddr::from(([127, 0, 0, 1], free_port())),
            store: store.to_string(),
            variants: variants_dir(root),
            log_dir: root.to_path_buf(),
            child: None,
            starts: 0,
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        s.restart().await;
        s
    }

    pub fn log_path(&self, start: u32) -> PathBuf {
        self.log_dir.join(format!("{}-{start}.log", self.name))
    }

    /// The log of the current (last) start.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path(self.starts)).unwrap_or_default()
    }

    /// Starts the process again on the same address and store, waiting until it serves.
    pub async fn restart(&mut self) {
        assert!(self.child.is_none(), "{} is still running", self.name);
        self.starts += 1;
        let log = std::fs::File::create(self.log_path(self.starts)).expect("log file");
        let err = log.try_clone().expect("log file");
        let child = Command::new(server_binary())
            .arg("serve")
            .args(["--listen", &self.addr.to_string()])
            .args(["--store", &self.store])
            .args(["--admin-key", ADMIN_KEY])
            .arg("--variants-dir")
            .arg(&self.variants)
            .args(self.default_flags())
            .args(["--log-format", "json"])
            .args(["--drain-delay-seconds", "0", "--drain-seconds", "1"])
            .env("SHUANGKOU_TOKEN_KEY", TOKEN_KEY)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .env("SHUANGKOU_LOG", "info")
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .spawn()
            .expect("spawn the shuangkou binary");
        self.child = Some(child);
        self.wait_serving(Duration::from_secs(60)).await;
    }

    /// `--no-metrics` and `--no-turn-timers`, each unless the start's environment sets it
    /// (`SHUANGKOU_METRICS_LISTEN`, `SHUANGKOU_NO_TURN_TIMERS`).
    fn default_flags(&self) -> Vec<&'static str> {
        let set = |k: &str| self.env.iter().any(|(key, _)| key == k);
        let mut flags = Vec::new();
        if !set("SHUANGKOU_METRICS_LISTEN") {
            flags.push("--no-metrics");
        }
        if !set("SHUANGKOU_NO_TURN_TIMERS") {
            flags.push("--no-turn-timers");
        }
        flags
    }

    /// SIGTERM (a graceful stop: drain, then exit); `wait` waits for the exit.
    pub fn terminate(&mut self) -> Option<std::process::ExitStatus> {
        let child = self.child.as_mut()?;
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let status = child.wait().ok();
        self.child = None;
        status
    }

    async fn wait_serving(&mut self, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    panic!(
                        "{} exited at start ({status}); log:\n{}",
                        self.name,
                        self.log()
                    );
                }
            }
            if TcpStream::connect_timeout(&self.addr, Duration::from_millis(200)).is_ok()
                && health(&self.addr).await == Some(ServingStatus::Serving)
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{} did not become ready; log:\n{}",
                self.name,
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// SIGKILL, and wait for the process to be gone.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    pub fn running(&self) -> bool {
        self.child.is_some()
    }

    /// Lines of every log of this server so far that contain `needle`.
    pub fn log_lines_with(&self, needle: &str) -> Vec<String> {
        (1..=self.starts)
            .flat_map(|n| {
                std::fs::read_to_string(self.log_path(n))
                    .unwrap_or_default()
                    .lines()
                    .filter(|l| l.contains(needle))
                    .map(|l| format!("[{} start {n}] {l}", self.name))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Panics if any log shows a failed recovery or load, a panic, or a diverged replay.
    pub fn assert_clean_logs(&self) {
        let mut bad = Vec::new();
        for needle in [
            "cannot recover game",
            "panicked",
            "diverged",
            "log gap",
            "unreadable",
            "replay of entry",
        ] {
            bad.extend(self.log_lines_with(needle));
        }
        assert!(
            bad.is_empty(),
            "server logs show failures:\n{}",
            bad.join("\n")
        );
    }

    pub fn client(&self) -> Client {
        client(&self.addr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A lazily connecting client (reconnects after the server restarts).
pub fn channel(addr: &SocketAddr) -> Channel {
    Endpoint::from_shared(format!("http://{addr}"))
        .expect("endpoint")
        .connect_timeout(Duration::from_secs(1))
        .timeout(Duration::from_secs(10))
        .connect_lazy()
}

pub fn client(addr: &SocketAddr) -> Client {
    GameEngineClient::new(channel(addr))
}

/// grpc.health.v1 Check of the whole server (`None` when it does not answer).
pub async fn health(addr: &SocketAddr) -> Option<ServingStatus> {
    health_of(addr, "").await
}

/// The health of one service (`""` is the whole server: the liveness probe's; the game service
/// `shuangkou.v1.GameEngine` is the readiness probe's).
pub async fn health_of(addr: &SocketAddr, service: &str) -> Option<ServingStatus> {
    let mut h = HealthClient::new(channel(addr));
    let r = tokio::time::timeout(
        Duration::from_secs(2),
        h.check(HealthCheckRequest {
            service: service.to_string(),
        }),
    )
    .await
    .ok()?
    .ok()?;
    ServingStatus::try_from(r.into_inner().status).ok()
}

/// `GetState` of `game_id` as its spectator sees it, on a clone of `c` (the same channel).
pub async fn spectated(
    c: &Client,
    game_id: &str,
    spectator: &str,
) -> Result<pb::GetStateResponse, Status> {
    c.clone()
        .get_state(authed(state_req(game_id), spectator))
        .await
        .map(tonic::Response::into_inner)
}

/// The stable reason of a rejection (ErrorInfo, else the message prefix).
pub fn reason(s: &Status) -> String {
    shuangkou::service::status::reason_of(s).unwrap_or_default()
}

/// Failures whose outcome is unknown to the client (the server died or is restarting): retry
/// the same request (same request id).
pub fn transient(s: &Status) -> bool {
    match s.code() {
        Code::Unavailable | Code::Unknown | Code::Cancelled | Code::DeadlineExceeded => true,
        // h2 connection errors surface as INTERNAL without one of our reasons.
        Code::Internal => !s.message().contains("_FAILED:"),
        _ => false,
    }
}

/// A created table.
#[derive(Clone, Debug)]
pub struct Table {
    pub game_id: String,
    pub seat_tokens: Vec<String>,
    pub spectator: String,
}

pub fn create_request(request_id: &str) -> pb::CreateGameRequest {
    pb::CreateGameRequest {
        variant: "classic".into(),
        deals: 1,
        players: vec!["a".into(), "b".into(), "c".into(), "d".into()],
        request_id: request_id.into(),
        ..Default::default()
    }
}

impl Table {
    pub fn from_response(r: &pb::CreateGameResponse) -> Table {
        assert_eq!(r.seat_tokens.len(), 4);
        Table {
            game_id: r.game_id.clone(),
            seat_tokens: r.seat_tokens.clone(),
            spectator: r.spectator_token.clone(),
        }
    }
}

/// The player to act in a state (`None` once the match is over).
pub fn player_to_act(state: &pb::GetStateResponse) -> Option<u32> {
    if state.phase == pb::Phase::Finished as i32 {
        return None;
    }
    let seat = state.turn_seat?;
    state
        .seats
        .iter()
        .find(|s| s.seat == seat)
        .map(|s| s.player)
}

/// A move chosen from the hints: mostly long plays (so deals end quickly), sometimes a random
/// one, passing only when following and nothing is chosen.
pub fn choose(
    rng: &mut Rand,
    game_id: &str,
    player: u32,
    expected_seq: u64,
    hints: &pb::GetHintsResponse,
    request_id: String,
) -> pb::SubmitPlayRequest {
    let mut req = pb::SubmitPlayRequest {
        game_id: game_id.to_string(),
        seat: Some(player),
        expected_seq: Some(expected_seq).filter(|&s| s != 0),
        request_id,
        ..Default::default()
    };
    let pass = hints.plays.is_empty() || (hints.can_pass && rng.random_bool(0.1));
    if pass {
        assert!(
            hints.can_pass,
            "no legal play and passing is not allowed: {hints:?}"
        );
        req.pass = true;
        return req;
    }
    let play = if rng.random_bool(0.7) {
        let longest = hints.plays.iter().map(|p| p.length).max().unwrap_or(0);
        let long: Vec<&pb::Play> = hints.plays.iter().filter(|p| p.length == longest).collect();
        long[rng.random_range(0..long.len())]
    } else {
        &hints.plays[rng.random_range(0..hints.plays.len())]
    };
    req.cards = play.cards.clone();
    req.declared = Some(pb::Declared {
        r#type: play.r#type,
        key: play.key.clone(),
    });
    req
}

/// The cards of a play, sorted (to compare plays).
pub fn sorted(cards: &[u32]) -> Vec<u32> {
    let mut c = cards.to_vec();
    c.sort_unstable();
    c
}

/// Writes to the real stderr (past the harness's capture).
pub fn say(msg: &str) {
    let _ = writeln!(std::io::stderr(), "{msg}");
}
