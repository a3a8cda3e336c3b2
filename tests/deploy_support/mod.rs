//! Shared helpers of the deployment tests (`tests/deploy_*.rs`): the real server binary as a
//! child process, configured the way the Kubernetes manifests of `deploy/` configure it, its log,
//! gRPC clients, the health service, and a variants directory laid out the way the kubelet lays
//! out a mounted ConfigMap.
//!
//! The server binary is `env!("CARGO_BIN_EXE_shuangkou")`: `cargo test --release` tests the
//! release server.

#[path = "../common/requests.rs"]
pub mod requests;
#[path = "../common/temp.rs"]
pub mod temp;

pub use requests::*;

use std::io::{BufRead, BufReader, Read};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use shuangkou::service::pb;
use shuangkou::service::pb::game_engine_client::GameEngineClient;
use shuangkou::service::pb::variant_admin_client::VariantAdminClient;
use tonic::Request;
use tonic::transport::{Channel, Endpoint};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

/// The service name the manifests' readiness probe asks grpc.health.v1 about.
pub const GAME_SERVICE: &str = "shuangkou.v1.GameEngine";

pub type Game = GameEngineClient<Channel>;
pub type Admin = VariantAdminClient<Channel>;
pub type Health = HealthClient<Channel>;

/// A fresh directory under the target's temp dir (left in place: the server logs in it).
pub fn temp_dir(test: &str) -> PathBuf {
    let dir = temp::scratch_path("deploy", test);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// A repository variant script (`variants/<id>.rhai`), as the ConfigMap generator reads it.
pub fn repo_variant(id: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("variants")
        .join(format!("{id}.rhai"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A free loopback port (bound, then released for the server to take).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// The server binary running as a child process. Killed (SIGKILL) when dropped, if still running.
pub struct Server {
    child: Child,
    pub addr: SocketAddr,
    log: Arc<Mutex<String>>,
    status: Option<ExitStatus>,
}

impl Server {
    /// Starts `shuangkou serve` on a free loopback port with no metrics listener, no turn
    /// timers, the memory store (unless `args` name a `--store`), and `args` on top. The environment's `SHUANGKOU_*` variables
    /// are removed so that only the flags configure it.
    pub fn start(args: &[&str]) -> Server {
        Server::launch(args, None)
    }

    /// Starts `shuangkou serve` in the working directory `cwd` with nothing but the listen
    /// address, turn timers off and `args`: every other setting, the store included, is the
    /// binary's default.
    pub fn start_with_defaults(cwd: &Path, args: &[&str]) -> Server {
        Server::launch(args, Some(cwd))
    }

    fn launch(args: &[&str], defaults_in: Option<&Path>) -> Server {
        let addr: SocketAddr = format!("127.0.0.1:{}", free_port())
            .parse()
            .expect("address");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_shuangkou"));
        cmd.arg("serve")
            .arg("--listen")
            .arg(addr.to_string())
            .arg("--no-turn-timers")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(cwd) = defaults_in {
            cmd.current_dir(cwd);
        } else if !args.contains(&"--store") {
            cmd.args(["--store", "memory"]);
        }
        if !args.contains(&"--metrics-listen") {
            cmd.arg("--no-metrics");
        }
        for (k, _) in std::env::vars() {
            if k.starts_with("SHUANGKOU_") {
                cmd.env_remove(k);
            }
        }
        cmd.env("SHUANGKOU_LOG", "info");
        let mut child = cmd.spawn().expect("start the shuangkou binary");
        let log = Arc::new(Mutex::new(String::new()));
        let out = child.stdout.take().expect("stdout");
        let err = child.stderr.take().expect("stderr");
        capture(out, Arc::clone(&log));
        capture(err, Arc::clone(&log));
        Server {
            child,
            addr,
            log,
            status: None,
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Everything the server printed so far.
    pub fn log(&self) -> String {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// A new connection (a new HTTP/2 connection, not a shared one).
    pub async fn channel(&self) -> Result<Channel, tonic::transport::Error> {
        Endpoint::from_shared(self.url())
            .expect("endpoint")
            .connect_timeout(Duration::from_secs(2))
            .timeout(Duration::from_secs(30))
            .connect()
            .await
    }

    /// Waits until `GAME_SERVICE` reports SERVING (what the readiness probe waits for), and
    /// returns a channel to the server. Panics with the server's log after `timeout`.
    pub async fn ready(&mut self, timeout: Duration) -> Channel {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.try_exit() {
                panic!(
                    "the server exited ({status}) before becoming ready:\n{}",
                    self.log()
                );
            }
            if let Ok(ch) = self.channel().await {
                if health(&ch, GAME_SERVICE).await == Some(ServingStatus::Serving) {
                    return ch;
                }
            }
            if Instant::now() > deadline {
                panic!(
                    "the server was not ready within {timeout:?}:\n{}",
                    self.log()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGTERM (what the kubelet sends after the preStop hook).
    pub fn sigterm(&self) {
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -TERM failed: {status}");
    }

    /// The exit status, if the process has exited.
    pub fn try_exit(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        self.status
    }

    /// Waits up to `timeout` for the process to exit.
    pub async fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(s) = self.try_exit() {
                return Some(s);
            }
            if Instant::now() > deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// SIGTERM, then waits for a successful exit.
    pub async fn stop(&mut self) {
        if self.try_exit().is_some() {
            return;
        }
        self.sigterm();
        let status = self.wait_exit(Duration::from_secs(30)).await;
        assert!(
            status.is_some_and(|s| s.success()),
            "the server did not stop cleanly ({status:?}):\n{}",
            self.log()
        );
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.try_exit().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn capture(stream: impl Read + Send + 'static, log: Arc<Mutex<String>>) {
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            if let Ok(mut l) = log.lock() {
                l.push_str(&line);
                l.push('\n');
            }
        }
    });
}

/// The grpc.health.v1 status of `service`, or `None` when the call fails.
pub async fn health(ch: &Channel, service: &str) -> Option<ServingStatus> {
    let mut client = HealthClient::new(ch.clone());
    let resp = client
        .check(HealthCheckRequest {
            service: service.to_string(),
        })
        .await
        .ok()?;
    ServingStatus::try_from(resp.into_inner().status).ok()
}

/// A request with `authorization: Bearer <token>`.
pub fn authed<T>(token: &str, msg: T) -> Request<T> {
    let mut r = Request::new(msg);
    r.metadata_mut().insert(
        "authorization",
        format!("Bearer {token}").parse().expect("metadata value"),
    );
    r
}

/// The active version of `id` as ListVariants reports it.
pub async fn active_version(game: &mut Game, id: &str) -> Option<String> {
    let list = game
        .list_variants(pb::ListVariantsRequest {})
        .await
        .expect("ListVariants")
        .into_inner();
    list.variants
        .into_iter()
        .find(|v| v.id == id)
        .map(|v| v.version)
}

/// Creates a game of `variant` for `players` players (the server runs open: no key needed).
pub async fn create_game(game: &mut Game, variant: &str, players: usize) -> pb::CreateGameResponse {
    game.create_game(pb::CreateGameRequest {
        variant: variant.to_string(),
        players: (0..players).map(|i| format!("p{i}")).collect(),
        deals: 1,
        ..Default::default()
    })
    .await
    .expect("CreateGame")
    .into_inner()
}

/// The turn in `created` as seat token 0 sees it: the state, the player to act and that
/// player's hints (asked with its own token).
pub async fn turn(
    game: &mut Game,
    created: &pb::CreateGameResponse,
) -> (pb::GetStateResponse, u32, pb::GetHintsResponse) {
    let state = game
        .get_state(authed(&created.seat_tokens[0], state_req(&created.game_id)))
        .await
        .expect("GetState")
        .into_inner();
    let turn = state.turn_seat.expect("a seat to act");
    let player = state
        .seats
        .iter()
        .find(|s| s.seat == turn)
        .expect("the seat to act")
        .player;
    let token = &created.seat_tokens[player as usize];
    let hints = game
        .get_hints(authed(token, hints_req(&created.game_id)))
        .await
        .expect("GetHints")
        .into_inner();
    (state, player, hints)
}

/// A variants directory laid out as the kubelet lays out a ConfigMap volume:
///
/// ```text
/// DIR/..2026_11_29_10_00_00.1/classic.rhai     the data of one version of the ConfigMap
/// DIR/..data -> ..2026_11_29_10_00_00.1        swapped atomically on every update
/// DIR/classic.rhai -> ..data/classic.rhai      one link per key, created once
/// ```
///
/// An update writes a new timestamped directory, points a temporary link at it, renames the link
/// over `..data` (atomic) and removes the old directory — the kubelet's AtomicWriter sequence.
pub struct ConfigMapDir {
    pub dir: PathBuf,
    current: Option<String>,
    revision: u32,
}

impl ConfigMapDir {
    pub fn new(dir: PathBuf) -> ConfigMapDir {
        ConfigMapDir {
            dir,
            current: None,
            revision: 0,
        }
    }

    /// Publishes a new version of the ConfigMap with `files` (name, content).
    pub fn publish(&mut self, files: &[(&str, &str)]) {
        self.revision += 1;
        let name = format!("..2026_11_29_10_{:02}_00.{}", self.revision, self.revision);
        let data = self.dir.join(&name);
        std::fs::create_dir(&data).expect("timestamped directory");
        for (file, content) in files {
            std::fs::write(data.join(file), content).expect("write a key");
        }
        let tmp = self.dir.join("..data_tmp");
        let _ = std::fs::remove_file(&tmp);
        std::os::unix::fs::symlink(&name, &tmp).expect("..data_tmp link");
        std::fs::rename(&tmp, self.dir.join("..data")).expect("swap ..data");
        for (file, _) in files {
            let link = self.dir.join(file);
            if std::fs::symlink_metadata(&link).is_err() {
                std::os::unix::fs::symlink(Path::new("..data").join(file), &link)
                    .expect("key link");
            }
        }
        if let Some(old) = self.current.replace(name) {
            std::fs::remove_dir_all(self.dir.join(old)).expect("remove the old version");
        }
    }
}

/// `GET /metrics` from a Prometheus listener: the exposition text (plain HTTP/1.0 over std, so
/// the tests need no HTTP client crate).
pub fn scrape(addr: &str) -> String {
    use std::io::Write;
    let mut s = std::net::TcpStream::connect(addr).expect("connect to the metrics listener");
    s.set_read_timeout(Some(Duration::from_secs(5))).ok();
    write!(s, "GET /metrics HTTP/1.0\r\nHost: {addr}\r\n\r\n").expect("send");
    let mut body = String::new();
    s.read_to_string(&mut body).expect("read the metrics");
    body
}

/// The sum of a metric's samples whose label set contains every `labels` pair (`name{…} value`).
pub fn metric_sum(text: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            let (n, rest) = series.split_once('{').unwrap_or((series, ""));
            (n == name
                && labels
                    .iter()
                    .all(|(k, v)| rest.contains(&format!("{k}=\"{v}\""))))
            .then(|| value.parse::<f64>().ok())
            .flatten()
        })
        .sum()
}
