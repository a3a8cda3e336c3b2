//! The Redis store, for several replicas sharing one Redis (`redis://host:port/db`).
//!
//! # Keys (prefix `sk:` by default)
//! Every key of one game carries its shard's hash tag (`{sN}`, [`crate::store::shard`]), so one
//! game's keys share one Redis Cluster slot and every script touches one slot:
//! - `sk:{sN}:game:<id>`: hash with `body`, `platform`, `request_id` and `script` (the pinned
//!   script's hash; each when set), and `finished_at` once finished;
//! - `sk:{sN}:script:<hash>`: a variant script's text, once per version and shard (the script
//!   table: the create script stores it in its game's slot, so a create stays one atomic script
//!   call; at most 128 copies of ≈ 17 KB per version, never expiring: a handful of versions);
//! - `sk:{sN}:log:<id>`: list of log entry bodies (entry `n` at index `n - 1`);
//! - `sk:{sN}:snap:<id>`: the game's snapshots (`redis::snapshots`);
//! - `sk:{sN}:req:<len>:<platform>:<request id>` (or `sk:{sN}:req:-:<request id>` without a
//!   platform) → id, for idempotent creates, in the shard of the id created (the service derives
//!   the id from the request, so a retry names the same shard);
//! - `sk:{sN}:unfinished`: set of the shard's ids not finished (a replica reads its own shards';
//!   [`RedisStore::unfinished`] reads all 128);
//! - channel `sk:{sN}:events:<id>`: the new log length after each append.
//!
//! Keys of the layout before shards (untagged, one `sk:unfinished`) are renamed once at start
//! (`migrate`).
//!
//! The URL `redis+cluster://host:port,host:port` selects a Redis Cluster (`conn`): commands go to
//! their slot's master; reads of many games (recovery, `unfinished`) are pipelined per shard.
//!
//! Creates and appends are Lua scripts, so each is atomic: the append script compares the
//! list's length with the expected one, pushes and publishes, or returns the current length.
//! Every call has a deadline; a failed or timed-out call is an error (when the connection drops
//! after a command is sent, its outcome is unknown: the caller must reload, never assume success).
//! Commands are never retried here. The connection manager reconnects in the background.
//!
//! Watching: one pub/sub connection per process, subscribed lazily to the channels of the games
//! watched here, fans messages out to local broadcast channels. After it (re)subscribes it sends
//! each game's current log length, so an append made while it was disconnected or subscribing is
//! never missed (receivers may see a length twice).
//!
//! Finished games leave `sk:unfinished` and their keys expire after the retention period
//! (default 7 days; `?retention_secs=0` keeps them).
//!
//! Durability is Redis's: configure AOF (`appendfsync always` or `everysec`) on the server.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, Script};
use tokio::sync::mpsc;

mod compact;
mod conn;
mod keys;
mod lease;
mod log;
mod migrate;
mod records;
mod scripts;
mod snapshots;
mod spec;
mod watch;

use super::{LogEntry, StoreError};
use crate::store::shard::Shard;
pub(crate) use conn::Conn;
use conn::{LazyCluster, cluster_client};
use keys::Keys;
use scripts::{APPEND_LUA, CREATE_LUA, FINISH_LUA};
use spec::redact;
pub use spec::{CLUSTER_SCHEME, RedisOptions, cluster_nodes, parse_spec};
use watch::{Watchers, pubsub_loop};

/// Default retention of finished games.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);
/// Default deadline of one store call.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);
/// Default key prefix.
pub const DEFAULT_PREFIX: &str = "sk:";

/// Deadline of a readiness ping.
const PING_TIMEOUT: Duration = Duration::from_secs(1);

/// The Redis store.
pub struct RedisStore {
    conn: Conn,
    keys: Keys,
    options: RedisOptions,
    label: String,
    append_script: Script,
    create_script: Script,
    finish_script: Script,
    watchers: Arc<Watchers>,
    pubsub: tokio::task::JoinHandle<()>,
    /// The script table's entries this process has stored or read (the server has them): a
    /// create then sends the hash alone, a load reads no text.
    scripts: Mutex<HashMap<String, Arc<str>>>,
    /// The (shard, version) pairs whose copy of the script text this process has stored: a
    /// create in that shard then sends the hash alone.
    stored_scripts: Mutex<HashSet<(Shard, String)>>,
    /// The one-time rename of keys written before shards (single Redis only; see `migrate`).
    migrated: Box<tokio::sync::OnceCell<()>>,
}

fn store_error(op: &'static str, message: impl Into<String>) -> StoreError {
    StoreError {
        op,
        message: message.into(),
    }
}

impl RedisStore {
    /// Opens the store described by `spec` (`redis://host:port/db?retention_secs=…`). Connects
    /// lazily: an unreachable server is reported by [`RedisStore::ping`] and by each call, not
    /// here. Must run inside a Tokio runtime.
    pub fn open(spec: &str) -> Result<RedisStore, StoreError> {
        let (url, options) = parse_spec(spec).map_err(|m| store_error("open", m))?;
        RedisStore::open_with(&url, options)
    }

    /// Opens the store at `url` (`redis://…`, or `redis+cluster://host:port,host:port` for a
    /// Redis Cluster) with explicit options.
    pub fn open_with(url: &str, options: RedisOptions) -> Result<RedisStore, StoreError> {
        let label = redact(url);
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(store_error(
                "open",
                "the Redis store must be opened inside a Tokio runtime",
            ));
        }
        let invalid = |e: &dyn std::fmt::Display| {
            store_error("open", format!("invalid Redis URL {label}: {e}"))
        };
        let (conn, pubsub_clients) = match cluster_nodes(url) {
            Some(nodes) => {
                let nodes = nodes.map_err(|e| invalid(&e))?;
                let client = cluster_client(&nodes, options.timeout).map_err(|e| invalid(&e))?;
                // Pub/sub on any one node: the cluster propagates PUBLISH to every node.
                let subscribers = nodes
                    .iter()
                    .map(|n| Client::open(n.as_str()))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| invalid(&e))?;
                (Conn::Cluster(LazyCluster::new(client)), subscribers)
            }
            None => {
                let client = Client::open(url).map_err(|e| invalid(&e))?;
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(options.timeout))
                    .set_response_timeout(Some(options.timeout))
                    .set_number_of_retries(3)
                    .set_max_delay(Duration::from_secs(1));
                let manager = ConnectionManager::new_lazy_with_config(client.clone(), config)
                    .map_err(|e| store_error("open", format!("Redis {label}: {e}")))?;
                (Conn::Single(manager), vec![client])
            }
        };
        let keys = Keys {
            prefix: options.prefix.clone(),
        };
        let (requests, rx) = mpsc::unbounded_channel();
        let watchers = Arc::new(Watchers {
            map: Mutex::new(HashMap::new()),
            requests,
        });
        let pubsub = tokio::spawn(pubsub_loop(
            pubsub_clients,
            conn.clone(),
            keys.clone(),
            Arc::clone(&watchers),
            rx,
            options.timeout,
        ));
        tracing::info!(store = "redis", url = %label, cluster = conn.is_cluster(), "store configured");
        Ok(RedisStore {
            conn,
            keys,
            options,
            label,
            append_script: Script::new(APPEND_LUA),
            create_script: Script::new(CREATE_LUA),
            finish_script: Script::new(FINISH_LUA),
            watchers,
            pubsub,
            scripts: Mutex::new(HashMap::new()),
            stored_scripts: Mutex::new(HashSet::new()),
            migrated: Box::default(),
        })
    }

    /// The options in use.
    pub fn options(&self) -> &RedisOptions {
        &self.options
    }

    /// Runs one call under the deadline; every failure is an error.
    async fn call<T>(
        &self,
        op: &'static str,
        fut: impl Future<Output = redis::RedisResult<T>>,
    ) -> Result<T, StoreError> {
        self.call_within(op, self.options.timeout, fut).await
    }

    async fn call_within<T>(
        &self,
        op: &'static str,
        deadline: Duration,
        fut: impl Future<Output = redis::RedisResult<T>>,
    ) -> Result<T, StoreError> {
        self.answer(op, deadline, tokio::time::timeout(deadline, fut).await)
    }

    /// A call's outcome under its deadline as the store's result.
    fn answer<T>(
        &self,
        op: &'static str,
        deadline: Duration,
        outcome: Result<redis::RedisResult<T>, tokio::time::error::Elapsed>,
    ) -> Result<T, StoreError> {
        match outcome {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(store_error(op, format!("Redis {}: {e}", self.label))),
            Err(_) => Err(store_error(
                op,
                format!(
                    "Redis {} did not answer within {deadline:?} (outcome unknown)",
                    self.label
                ),
            )),
        }
    }

    /// Runs `cmd` (an EVALSHA of `script`), loading the script once if the server lacks it.
    async fn evalsha(
        &self,
        op: &'static str,
        script: &Script,
        cmd: &redis::Cmd,
    ) -> Result<redis::Value, StoreError> {
        let mut conn = self.conn.clone();
        let first = tokio::time::timeout(self.options.timeout, cmd.query_async(&mut conn)).await;
        if let Ok(Err(e)) = &first {
            if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) {
                self.call(op, script.load_async(&mut conn)).await?;
                return self.call(op, cmd.query_async(&mut conn)).await;
            }
        }
        self.answer(op, self.options.timeout, first)
    }

    /// PING with a short deadline (readiness).
    pub async fn ping(&self) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        let deadline = PING_TIMEOUT.min(self.options.timeout);
        let cmd = redis::cmd("PING");
        let _: String = self
            .call_within("ping", deadline, cmd.query_async(&mut conn))
            .await?;
        Ok(())
    }

    /// Nothing to do: an acknowledged write is in Redis (its persistence is the server's).
    pub async fn flush(&self) -> Result<(), StoreError> {
        Ok(())
    }
}

/// Numbers bodies read from index `after` (entry seq = index + 1).
fn numbered(bodies: Vec<Vec<u8>>, after: u64) -> Vec<LogEntry> {
    bodies
        .into_iter()
        .zip(after + 1..)
        .map(|(body, seq)| LogEntry { seq, body })
        .collect()
}

impl Drop for RedisStore {
    fn drop(&mut self) {
        self.pubsub.abort();
    }
}
