//! Service configuration: flags, each with a `SHUANGKOU_*` environment variable and a sane
//! default, so `shuangkou serve` runs on its embedded defaults with no configuration at all.

use std::net::SocketAddr;
use std::path::PathBuf;

/// How logs are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

/// Actions a live game keeps by default (`--backlog-actions`; `service::backlog`).
pub const DEFAULT_BACKLOG_ACTIONS: usize = 8;

/// What HTTP/2 buffers for one response stream by default (`--http2-send-buffer-bytes`): 64 KiB,
/// the HTTP/2 default stream window (65,535 bytes, what most clients announce), so a client that
/// reads costs no speed (the socket's own buffer, sized by the kernel, carries a fast link's
/// data in flight), and a client that does not read leaves at most this much, not hyper's
/// 400 KiB, of encoded events on the server.
pub const DEFAULT_HTTP2_SEND_BUFFER_BYTES: usize = 64 * 1024;

/// The smallest `--http2-send-buffer-bytes`: one full HTTP/2 DATA frame (16 KiB, the default
/// frame size). At zero a stream could never send.
pub const MIN_HTTP2_SEND_BUFFER_BYTES: usize = 16 * 1024;

/// Parses `--http2-send-buffer-bytes` (at least [`MIN_HTTP2_SEND_BUFFER_BYTES`], at most
/// `u32::MAX`).
fn parse_send_buffer(s: &str) -> Result<usize, String> {
    let n: usize = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of bytes"))?;
    if n < MIN_HTTP2_SEND_BUFFER_BYTES {
        return Err(format!(
            "{n} bytes is below the smallest send buffer, {MIN_HTTP2_SEND_BUFFER_BYTES} (one HTTP/2 frame)"
        ));
    }
    // hyper refuses (panics on) a buffer over u32::MAX.
    if u32::try_from(n).is_err() {
        return Err(format!(
            "{n} bytes is over the largest send buffer, {}",
            u32::MAX
        ));
    }
    Ok(n)
}

/// `shuangkou serve` flags.
#[derive(Clone, Debug, clap::Args)]
pub struct ServeConfig {
    /// gRPC (and gRPC-Web) listen address.
    #[arg(long, env = "SHUANGKOU_LISTEN", default_value = "0.0.0.0:50051")]
    pub listen: SocketAddr,
    /// Prometheus `/metrics` listen address (empty-string-free; use `--no-metrics` to disable).
    #[arg(long, env = "SHUANGKOU_METRICS_LISTEN", default_value = "0.0.0.0:9090")]
    pub metrics_listen: SocketAddr,
    /// Do not serve metrics (tests that run several servers at once).
    #[arg(long, env = "SHUANGKOU_NO_METRICS")]
    pub no_metrics: bool,
    /// Web table listen address: the embedded single-page app and, on the same origin, the
    /// game service over gRPC-Web (so the page needs no CORS).
    #[arg(long, env = "SHUANGKOU_WEB_LISTEN", default_value = "0.0.0.0:8080")]
    pub web_listen: SocketAddr,
    /// Do not serve the web table.
    #[arg(long, env = "SHUANGKOU_NO_WEB")]
    pub no_web: bool,
    /// Directory of variant scripts (`*.rhai`), watched for changes. Default: the variants
    /// embedded in the binary.
    #[arg(long, env = "SHUANGKOU_VARIANTS_DIR")]
    pub variants_dir: Option<PathBuf>,
    /// Where games are kept: a directory path for the embedded durable store (the default:
    /// `shuangkou-data` under the working directory, created if missing), `memory` (nothing
    /// survives a restart: tests, benchmarks), or `redis://host:port/db` (several replicas).
    #[arg(long, env = "SHUANGKOU_STORE", default_value = "shuangkou-data")]
    pub store: String,
    /// How long the embedded store keeps finished games, e.g. `30d`, `12h`, `90m`, `3600s`
    /// (`0s`: deleted at the next compaction). Default: kept for ever. (The Redis store's is
    /// its URL's `retention_secs`.)
    #[arg(long, env = "SHUANGKOU_FINISHED_RETENTION", value_parser = crate::store::parse_retention)]
    pub finished_retention: Option<std::time::Duration>,
    /// Platform API keys as `NAME=KEY`, comma-separated. With no platform key and no admin key
    /// the service runs open (local development) and warns at start.
    #[arg(long, env = "SHUANGKOU_API_KEYS", value_delimiter = ',')]
    pub api_keys: Vec<String>,
    /// The admin key (operators' service, admin-only CreateGame extras, GetState of any game).
    #[arg(long, env = "SHUANGKOU_ADMIN_KEY", hide_env_values = true)]
    pub admin_key: Option<String>,
    /// The token key, 64 hex digits: derives the ids and seat tokens of idempotent CreateGame
    /// retries, so every replica must share it and it must survive restarts. Default: random
    /// at each start (retries then return the same tokens only from the same process).
    #[arg(long, env = "SHUANGKOU_TOKEN_KEY", hide_env_values = true)]
    pub token_key: Option<String>,
    /// Log format.
    #[arg(long, env = "SHUANGKOU_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,
    /// Most games in progress per process (RESOURCE_EXHAUSTED beyond).
    #[arg(long, env = "SHUANGKOU_MAX_GAMES", default_value_t = 200_000)]
    pub max_games: usize,
    /// Largest request or response message, in bytes.
    #[arg(long, env = "SHUANGKOU_MAX_MESSAGE_BYTES", default_value_t = 1 << 20)]
    pub max_message_bytes: usize,
    /// Most requests in progress at once (load shedding beyond: UNAVAILABLE).
    #[arg(long, env = "SHUANGKOU_MAX_CONCURRENT", default_value_t = 4096)]
    pub max_concurrent: usize,
    /// Bytes of a response HTTP/2 buffers for one stream beyond what the connection's socket has
    /// taken (hyper's `max_send_buf_size`, 400 KiB if unset): what a WatchGame stream whose
    /// client does not read holds on the server beyond its few queued events. At least 16384.
    #[arg(
        long,
        env = "SHUANGKOU_HTTP2_SEND_BUFFER_BYTES",
        default_value_t = DEFAULT_HTTP2_SEND_BUFFER_BYTES,
        value_parser = parse_send_buffer
    )]
    pub http2_send_buffer_bytes: usize,
    /// Per-request timeout in milliseconds (unary rpcs).
    #[arg(long, env = "SHUANGKOU_REQUEST_TIMEOUT_MS", default_value_t = 10_000)]
    pub request_timeout_ms: u64,
    /// Seconds to let in-flight calls finish after SIGTERM before closing.
    #[arg(long, env = "SHUANGKOU_DRAIN_SECONDS", default_value_t = 20)]
    pub drain_seconds: u64,
    /// Seconds health reports NOT_SERVING before the listener stops accepting (so load
    /// balancers stop routing first).
    #[arg(long, env = "SHUANGKOU_DRAIN_DELAY_SECONDS", default_value_t = 2)]
    pub drain_delay_seconds: u64,
    /// Seconds a finished game stays cached in memory (for the final GetState/GetReplay calls)
    /// before it is dropped from the cache; later reads rebuild it from the store.
    #[arg(long, env = "SHUANGKOU_FINISHED_LINGER_SECONDS", default_value_t = 120)]
    pub finished_linger_seconds: u64,
    /// Actions whose events and idempotency keys a live game keeps in memory (WatchGame streams
    /// that keep up, retries of recent actions); older ones are re-read from the store. Bounds
    /// a game's memory whatever the match's length.
    #[arg(long, env = "SHUANGKOU_BACKLOG_ACTIONS", default_value_t = DEFAULT_BACKLOG_ACTIONS)]
    pub backlog_actions: usize,
    /// Turn timers: when off, turn deadlines are not enforced (tests and load runs).
    #[arg(long, env = "SHUANGKOU_NO_TURN_TIMERS")]
    pub no_turn_timers: bool,
    /// Milliseconds after a player's last WatchGame stream closed before its disconnect is
    /// logged (rides over a network blip).
    #[arg(long, env = "SHUANGKOU_PRESENCE_GRACE_MS", default_value_t = 3000)]
    pub presence_grace_ms: u64,
    /// When the engine plays a disconnected seat's turns (托管): at its turn `deadline`, or
    /// `immediate`ly. Without turn timers always immediately.
    #[arg(
        long,
        env = "SHUANGKOU_DISCONNECTED_TURNS",
        value_enum,
        default_value = "deadline"
    )]
    pub disconnected_turns: DisconnectedTurns,
    /// Most WatchGame streams open at once with one token (RESOURCE_EXHAUSTED beyond).
    #[arg(
        long,
        env = "SHUANGKOU_MAX_WATCH_STREAMS_PER_TOKEN",
        default_value_t = 8
    )]
    pub max_watch_streams_per_token: usize,
    /// The bot that plays for a seat whose turn deadline passed or whose player is disconnected
    /// (托管) in games that name none (CreateGame's `auto_policy`, the variant's `meta()`): any
    /// bot name of docs/BOTS.md (`search:N` for a smaller search budget).
    #[arg(long, env = "SHUANGKOU_AUTO_POLICY", default_value = "heuristic")]
    pub auto_policy: String,
    /// Replicas on a shared (Redis) store: how long a shard lease lasts without renewal, e.g.
    /// `10s` (renewed every third of it). A replica that dies hands its games over after at most
    /// this long; one that stops (SIGTERM) at once. At least 1s.
    #[arg(long, env = "SHUANGKOU_LEASE_TTL", default_value = "10s", value_parser = parse_lease_ttl)]
    pub lease_ttl: std::time::Duration,
    /// Replicas on a shared store: the `host:port` other replicas reach this one's gRPC
    /// service at, to forward the rpcs of the games it owns (in Kubernetes, the pod IP with
    /// the gRPC port). Default: the listen address, with 127.0.0.1 for an unspecified IP.
    #[arg(long, env = "SHUANGKOU_ADVERTISE_ADDR")]
    pub advertise_addr: Option<String>,
}

/// Parses `--lease-ttl` (a period as `crate::store::parse_retention` reads it, at least 1 s).
fn parse_lease_ttl(s: &str) -> Result<std::time::Duration, String> {
    let ttl = crate::store::parse_retention(s)?;
    if ttl < std::time::Duration::from_secs(1) {
        return Err(format!("{s:?}: a lease lasts at least 1s"));
    }
    Ok(ttl)
}

impl ServeConfig {
    /// The address other replicas forward to (`--advertise-addr`, else the listen address, with
    /// 127.0.0.1 for an unspecified IP).
    pub fn advertised_addr(&self) -> String {
        match &self.advertise_addr {
            Some(a) if !a.trim().is_empty() => a.trim().to_string(),
            _ => {
                let mut addr = self.listen;
                if addr.ip().is_unspecified() {
                    addr.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
                }
                addr.to_string()
            }
        }
    }

    /// The store settings these flags give (beyond `--store`).
    pub fn store_settings(&self) -> crate::store::Settings {
        crate::store::Settings {
            finished_retention: self.finished_retention,
        }
    }
}

/// When the engine plays a disconnected seat's turns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DisconnectedTurns {
    /// At the seat's turn deadline, as for a connected seat that lets it pass.
    Deadline,
    /// As soon as the turn comes to the seat.
    Immediate,
}
