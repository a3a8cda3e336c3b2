//! The Redis store, for several replicas sharing one Redis (`redis://host:port/db`).
//!
//! # Keys (prefix `sk:` by default)
//! - `sk:game:<id>`: hash with `body`, `platform`, `request_id` and `script` (the pinned
//!   script's hash; each when set), and `finished_at` once finished;
//! - `sk:script:<hash>`: a variant script's text, once per version (the script table; never
//!   expires: a handful of versions);
//! - `sk:log:<id>`: list of log entry bodies (entry `n` at index `n - 1`);
//! - `sk:req:<len>:<platform>:<request id>` (or `sk:req:-:<request id>` without a platform)
//!   → id, for idempotent creates (the platform's byte length keeps the key unambiguous);
//! - `sk:unfinished`: set of the ids not finished;
//! - channel `sk:events:<id>`: the new log length after each append.
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

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, Script};
use tokio::sync::{broadcast, mpsc};
use tokio_stream::StreamExt;

mod snapshots;

use super::{AppendOrRead, Appended, Created, GameRecord, LogEntry, PinnedScript, StoreError};

/// Default retention of finished games.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);
/// Default deadline of one store call.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);
/// Default key prefix.
pub const DEFAULT_PREFIX: &str = "sk:";

/// Deadline of a readiness ping.
const PING_TIMEOUT: Duration = Duration::from_secs(1);
/// Buffered notifications per game before a slow watcher lags.
const WATCH_BUFFER: usize = 256;
/// How often channels nobody watches any more are unsubscribed.
const PRUNE_EVERY: Duration = Duration::from_secs(30);

/// Compare-and-append. KEYS: game, log. ARGV: expected length, body, channel, read back (0/1).
/// Returns {0, new length, {}} | {1, current length, entries after the expected length (at least
/// 0) if asked}
/// (conflict) | {2, 0, {}} (no game): a conflict carries the catch-up read in the same round trip.
const APPEND_LUA: &str = r#"
if redis.call('EXISTS', KEYS[1]) == 0 then return {2, 0, {}} end
local n = redis.call('LLEN', KEYS[2])
local expected = tonumber(ARGV[1])
if n ~= expected then
  local from = math.max(expected, 0)
  if ARGV[4] == '1' and from < n then
    return {1, n, redis.call('LRANGE', KEYS[2], from, -1)}
  end
  return {1, n, {}}
end
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('PUBLISH', ARGV[3], tostring(n + 1))
return {0, n + 1, {}}
"#;

/// Idempotent create. KEYS: game, unfinished set, script key, [request key].
/// ARGV: id, body, has platform (0/1), platform, has request id (0/1), request id,
/// script: 0 (none) | 1 (hash only) | 2 (hash and text), script hash, script text.
/// Returns {0, ''} (created) | {1, existing id} | {2, ''} (id taken) | {3, ''} (the script table
/// lacks the hash sent without its text: send it again with the text).
const CREATE_LUA: &str = r#"
if KEYS[4] then
  local existing = redis.call('GET', KEYS[4])
  if existing then return {1, existing} end
end
if redis.call('EXISTS', KEYS[1]) == 1 then return {2, ''} end
if ARGV[7] ~= '0' and redis.call('EXISTS', KEYS[3]) == 0 then
  if ARGV[7] ~= '2' then return {3, ''} end
  redis.call('SET', KEYS[3], ARGV[9])
end
redis.call('HSET', KEYS[1], 'body', ARGV[2])
if ARGV[3] == '1' then redis.call('HSET', KEYS[1], 'platform', ARGV[4]) end
if ARGV[5] == '1' then redis.call('HSET', KEYS[1], 'request_id', ARGV[6]) end
if ARGV[7] ~= '0' then redis.call('HSET', KEYS[1], 'script', ARGV[8]) end
if KEYS[4] then redis.call('SET', KEYS[4], ARGV[1]) end
redis.call('SADD', KEYS[2], ARGV[1])
return {0, ''}
"#;

/// Marks finished and starts the retention. KEYS: game, log, unfinished set, [request key].
/// ARGV: id, unix time, retention seconds (0: keep).
const FINISH_LUA: &str = r#"
redis.call('SREM', KEYS[3], ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HSET', KEYS[1], 'finished_at', ARGV[2])
  local secs = tonumber(ARGV[3])
  if secs > 0 then
    redis.call('EXPIRE', KEYS[1], secs)
    redis.call('EXPIRE', KEYS[2], secs)
    if KEYS[4] then redis.call('EXPIRE', KEYS[4], secs) end
  end
end
return 0
"#;

/// Options of the Redis store (query parameters of the spec).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisOptions {
    /// Finished games expire after this (`None`: kept).
    pub retention: Option<Duration>,
    /// Deadline of each call.
    pub timeout: Duration,
    /// Key and channel prefix.
    pub prefix: String,
}

impl Default for RedisOptions {
    fn default() -> Self {
        RedisOptions {
            retention: Some(DEFAULT_RETENTION),
            timeout: DEFAULT_TIMEOUT,
            prefix: DEFAULT_PREFIX.to_string(),
        }
    }
}

/// Splits a spec into the URL for the Redis client and our options
/// (`retention_secs`, `timeout_ms`, `prefix`; other parameters go to the client).
pub fn parse_spec(spec: &str) -> Result<(String, RedisOptions), String> {
    let mut options = RedisOptions::default();
    let (base, query) = match spec.split_once('?') {
        Some((b, q)) => (b, q),
        None => (spec, ""),
    };
    let mut rest = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let number = || {
            v.parse::<u64>()
                .map_err(|_| format!("store option {k} must be a whole number, not {v:?}"))
        };
        match k {
            "retention_secs" => {
                let secs = number()?;
                options.retention = (secs > 0).then(|| Duration::from_secs(secs));
            }
            "timeout_ms" => {
                let ms = number()?;
                if ms == 0 {
                    return Err("store option timeout_ms must be positive".into());
                }
                options.timeout = Duration::from_millis(ms);
            }
            "prefix" => options.prefix = v.to_string(),
            _ => rest.push(pair),
        }
    }
    let url = if rest.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", rest.join("&"))
    };
    Ok((url, options))
}

/// The URL without credentials, for logs and errors.
fn redact(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => match rest.split_once('@') {
            Some((_, host)) => format!("{scheme}://***@{host}"),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

/// Key names.
#[derive(Clone)]
struct Keys {
    prefix: String,
}

impl Keys {
    fn game(&self, id: &str) -> String {
        format!("{}game:{id}", self.prefix)
    }
    fn log(&self, id: &str) -> String {
        format!("{}log:{id}", self.prefix)
    }
    fn script(&self, hash: &str) -> String {
        format!("{}script:{hash}", self.prefix)
    }
    fn unfinished(&self) -> String {
        format!("{}unfinished", self.prefix)
    }
    fn events_prefix(&self) -> String {
        format!("{}events:", self.prefix)
    }
    fn events(&self, id: &str) -> String {
        format!("{}events:{id}", self.prefix)
    }
    fn request(&self, platform: Option<&str>, request_id: &str) -> String {
        match platform {
            Some(p) => format!("{}req:{}:{p}:{request_id}", self.prefix, p.len()),
            None => format!("{}req:-:{request_id}", self.prefix),
        }
    }
}

/// Local watchers and the queue of subscriptions for the pub/sub task.
struct Watchers {
    map: Mutex<HashMap<String, broadcast::Sender<u64>>>,
    requests: mpsc::UnboundedSender<String>,
}

impl Watchers {
    fn deliver(&self, id: &str, len: u64) {
        if let Ok(map) = self.map.lock() {
            if let Some(tx) = map.get(id) {
                let _ = tx.send(len);
            }
        }
    }

    /// Ids watched here (to subscribe after a reconnect).
    fn active(&self) -> Vec<String> {
        self.map
            .lock()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// Removes and returns the ids nobody watches any more.
    fn prune(&self) -> Vec<String> {
        let Ok(mut map) = self.map.lock() else {
            return Vec::new();
        };
        let stale: Vec<String> = map
            .iter()
            .filter(|(_, tx)| tx.receiver_count() == 0)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &stale {
            map.remove(id);
        }
        stale
    }
}

/// The Redis store.
pub struct RedisStore {
    conn: ConnectionManager,
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

    /// Opens the store at `url` with explicit options.
    pub fn open_with(url: &str, options: RedisOptions) -> Result<RedisStore, StoreError> {
        let label = redact(url);
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(store_error(
                "open",
                "the Redis store must be opened inside a Tokio runtime",
            ));
        }
        let client = Client::open(url)
            .map_err(|e| store_error("open", format!("invalid Redis URL {label}: {e}")))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(options.timeout))
            .set_response_timeout(Some(options.timeout))
            .set_number_of_retries(3)
            .set_max_delay(Duration::from_secs(1));
        let conn = ConnectionManager::new_lazy_with_config(client.clone(), config)
            .map_err(|e| store_error("open", format!("Redis {label}: {e}")))?;
        let keys = Keys {
            prefix: options.prefix.clone(),
        };
        let (requests, rx) = mpsc::unbounded_channel();
        let watchers = Arc::new(Watchers {
            map: Mutex::new(HashMap::new()),
            requests,
        });
        let pubsub = tokio::spawn(pubsub_loop(
            client,
            conn.clone(),
            keys.clone(),
            Arc::clone(&watchers),
            rx,
            options.timeout,
        ));
        tracing::info!(store = "redis", url = %label, "store configured");
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
        match tokio::time::timeout(deadline, fut).await {
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

    pub async fn create(&self, record: &GameRecord) -> Result<Created, StoreError> {
        let known = record
            .script
            .as_ref()
            .is_some_and(|s| self.known_script(&s.hash).is_some());
        let mut code = self.create_call(record, !known).await?;
        if code.0 == 3 {
            // The table lost the text this process had stored (a flushed database): again, with it.
            code = self.create_call(record, true).await?;
        }
        match code {
            (0, _) => {
                if let Some(s) = &record.script {
                    self.remember_script(&s.hash, &s.text);
                }
                Ok(Created::New)
            }
            (1, existing) => Ok(Created::Existing(existing)),
            (2, _) => Err(store_error("create", format!("game {} exists", record.id))),
            (c, _) => Err(store_error(
                "create",
                format!("unexpected script reply {c}"),
            )),
        }
    }

    /// One call of the create script; the script text is sent only `with_text`.
    async fn create_call(
        &self,
        record: &GameRecord,
        with_text: bool,
    ) -> Result<(i64, String), StoreError> {
        let mut conn = self.conn.clone();
        let mut inv = self.create_script.prepare_invoke();
        let script = record.script.as_ref();
        inv.key(self.keys.game(&record.id))
            .key(self.keys.unfinished())
            .key(self.keys.script(script.map_or("-", |s| s.hash.as_str())));
        if let Some(rid) = &record.request_id {
            inv.key(self.keys.request(record.platform.as_deref(), rid));
        }
        let mode = match script {
            None => "0",
            Some(_) if with_text => "2",
            Some(_) => "1",
        };
        inv.arg(&record.id)
            .arg(record.body.as_slice())
            .arg(u8::from(record.platform.is_some()))
            .arg(record.platform.as_deref().unwrap_or(""))
            .arg(u8::from(record.request_id.is_some()))
            .arg(record.request_id.as_deref().unwrap_or(""))
            .arg(mode)
            .arg(script.map_or("", |s| s.hash.as_str()))
            .arg(script.filter(|_| with_text).map_or("", |s| &*s.text));
        self.call("create", inv.invoke_async(&mut conn)).await
    }

    fn known_script(&self, hash: &str) -> Option<Arc<str>> {
        self.scripts.lock().ok()?.get(hash).cloned()
    }

    fn remember_script(&self, hash: &str, text: &Arc<str>) {
        if let Ok(mut scripts) = self.scripts.lock() {
            scripts
                .entry(hash.to_string())
                .or_insert_with(|| Arc::clone(text));
        }
    }

    /// The script table's entry for `hash` (from this process's copy, or read once).
    async fn script(&self, id: &str, hash: String) -> Result<PinnedScript, StoreError> {
        if let Some(text) = self.known_script(&hash) {
            return Ok(PinnedScript { hash, text });
        }
        let mut conn = self.conn.clone();
        let mut cmd = redis::cmd("GET");
        cmd.arg(self.keys.script(&hash));
        let text: Option<String> = self.call("load", cmd.query_async(&mut conn)).await?;
        let text: Arc<str> = Arc::from(text.ok_or_else(|| {
            store_error(
                "load",
                format!("game {id}: script {hash} is not in the script table"),
            )
        })?);
        self.remember_script(&hash, &text);
        Ok(PinnedScript { hash, text })
    }

    pub async fn load(&self, id: &str) -> Result<Option<(GameRecord, Vec<LogEntry>)>, StoreError> {
        let mut log = redis::cmd("LRANGE");
        log.arg(self.keys.log(id)).arg(0).arg(-1);
        let record = self.record_and::<Vec<Vec<u8>>>("load", id, log).await?;
        Ok(record.map(|(r, bodies)| (r, numbered(bodies, 0))))
    }

    /// The record and the log's length, in one HGETALL + LLEN pipeline (no entry is read).
    pub async fn head(&self, id: &str) -> Result<Option<(GameRecord, u64)>, StoreError> {
        let mut len = redis::cmd("LLEN");
        len.arg(self.keys.log(id));
        self.record_and("head", id, len).await
    }

    /// Game `id`'s record and what `log` (a command on its log) answers, in one atomic
    /// HGETALL + `log` pipeline (`None`: no such game).
    async fn record_and<T: redis::FromRedisValue>(
        &self,
        op: &'static str,
        id: &str,
        log: redis::Cmd,
    ) -> Result<Option<(GameRecord, T)>, StoreError> {
        let mut conn = self.conn.clone();
        let mut pipe = redis::pipe();
        pipe.atomic()
            .cmd("HGETALL")
            .arg(self.keys.game(id))
            .add_command(log);
        let (fields, answer): (HashMap<String, Vec<u8>>, T) =
            self.call(op, pipe.query_async(&mut conn)).await?;
        let record = self.record_of(op, id, fields).await?;
        Ok(record.map(|r| (r, answer)))
    }

    /// The record of game `id` from its hash's `fields` (`None`: no such game).
    async fn record_of(
        &self,
        op: &'static str,
        id: &str,
        mut fields: HashMap<String, Vec<u8>>,
    ) -> Result<Option<GameRecord>, StoreError> {
        let Some(body) = fields.remove("body") else {
            return Ok(None);
        };
        let text = |name: &str, v: Vec<u8>| {
            String::from_utf8(v)
                .map_err(|_| store_error(op, format!("game {id}: field {name} is not UTF-8")))
        };
        let platform = fields
            .remove("platform")
            .map(|v| text("platform", v))
            .transpose()?;
        let request_id = fields
            .remove("request_id")
            .map(|v| text("request_id", v))
            .transpose()?;
        let script = match fields.remove("script").map(|v| text("script", v)) {
            Some(hash) => Some(self.script(id, hash?).await?),
            None => None,
        };
        Ok(Some(GameRecord {
            id: id.to_string(),
            platform,
            request_id,
            body,
            script,
        }))
    }

    pub async fn entries_after(&self, id: &str, after: u64) -> Result<Vec<LogEntry>, StoreError> {
        let Ok(start) = i64::try_from(after) else {
            return Ok(Vec::new());
        };
        let mut conn = self.conn.clone();
        let mut cmd = redis::cmd("LRANGE");
        cmd.arg(self.keys.log(id)).arg(start).arg(-1);
        let bodies: Vec<Vec<u8>> = self
            .call("entries_after", cmd.query_async(&mut conn))
            .await?;
        Ok(numbered(bodies, after))
    }

    /// At most `limit` entries after `after` (one LRANGE of that range).
    pub async fn entries_page(
        &self,
        id: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<LogEntry>, StoreError> {
        let (Ok(start), Ok(n)) = (i64::try_from(after), i64::try_from(limit)) else {
            return Ok(Vec::new());
        };
        if n == 0 {
            return Ok(Vec::new());
        }
        let mut conn = self.conn.clone();
        let mut cmd = redis::cmd("LRANGE");
        cmd.arg(self.keys.log(id))
            .arg(start)
            .arg(start.saturating_add(n - 1));
        let bodies: Vec<Vec<u8>> = self
            .call("entries_page", cmd.query_async(&mut conn))
            .await?;
        Ok(numbered(bodies, after))
    }

    pub async fn append(&self, id: &str, entry: &LogEntry) -> Result<Appended, StoreError> {
        Ok(match self.append_script_call(id, entry, false).await? {
            AppendOrRead::Appended => Appended::Ok,
            AppendOrRead::Behind { current, .. } => Appended::Conflict { current },
        })
    }

    /// Compare-and-append that, on a conflict, returns the entries after the caller's seq
    /// (`entry.seq - 1`) from the same script call: one round trip either way.
    pub async fn append_or_read(
        &self,
        id: &str,
        entry: &LogEntry,
    ) -> Result<AppendOrRead, StoreError> {
        self.append_script_call(id, entry, true).await
    }

    async fn append_script_call(
        &self,
        id: &str,
        entry: &LogEntry,
        read_back: bool,
    ) -> Result<AppendOrRead, StoreError> {
        // seq 0 can never be appended: expected -1 always conflicts and reports the length.
        let expected = i64::try_from(entry.seq).map_or(-1, |s| s - 1);
        let mut conn = self.conn.clone();
        let mut inv = self.append_script.prepare_invoke();
        inv.key(self.keys.game(id))
            .key(self.keys.log(id))
            .arg(expected)
            .arg(entry.body.as_slice())
            .arg(self.keys.events(id))
            .arg(if read_back { "1" } else { "0" });
        let (code, n, bodies): (i64, u64, Vec<Vec<u8>>) =
            self.call("append", inv.invoke_async(&mut conn)).await?;
        match code {
            0 => Ok(AppendOrRead::Appended),
            1 => Ok(AppendOrRead::Behind {
                current: n,
                entries: numbered(bodies, u64::try_from(expected).unwrap_or(0)),
            }),
            2 => Err(store_error("append", format!("no game {id}"))),
            c => Err(store_error(
                "append",
                format!("unexpected script reply {c}"),
            )),
        }
    }

    pub fn subscribe(&self, id: &str) -> broadcast::Receiver<u64> {
        let Ok(mut map) = self.watchers.map.lock() else {
            return broadcast::channel(1).1;
        };
        if let Some(tx) = map.get(id) {
            return tx.subscribe();
        }
        let (tx, rx) = broadcast::channel(WATCH_BUFFER);
        map.insert(id.to_string(), tx);
        // The pub/sub task subscribes, then sends the current length.
        let _ = self.watchers.requests.send(id.to_string());
        rx
    }

    pub async fn unfinished(&self) -> Result<Vec<String>, StoreError> {
        let mut conn = self.conn.clone();
        let mut cmd = redis::cmd("SMEMBERS");
        cmd.arg(self.keys.unfinished());
        self.call("unfinished", cmd.query_async(&mut conn)).await
    }

    pub async fn finish(&self, id: &str) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        let game = self.keys.game(id);
        let mut get = redis::cmd("HMGET");
        get.arg(&game).arg("platform").arg("request_id");
        let (platform, request_id): (Option<String>, Option<String>) =
            self.call("finish", get.query_async(&mut conn)).await?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let secs = self.options.retention.map_or(0, |r| r.as_secs().max(1));
        let mut inv = self.finish_script.prepare_invoke();
        inv.key(&game)
            .key(self.keys.log(id))
            .key(self.keys.unfinished());
        if let Some(rid) = &request_id {
            inv.key(self.keys.request(platform.as_deref(), rid));
        }
        inv.arg(id).arg(now).arg(secs);
        let _: i64 = self.call("finish", inv.invoke_async(&mut conn)).await?;
        Ok(())
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

/// Sends the current log length of each id to its local watchers (after a (re)subscribe).
async fn resync(
    conn: &ConnectionManager,
    keys: &Keys,
    watchers: &Watchers,
    ids: &[String],
    timeout: Duration,
) {
    if ids.is_empty() {
        return;
    }
    let mut conn = conn.clone();
    let mut pipe = redis::pipe();
    for id in ids {
        pipe.cmd("LLEN").arg(keys.log(id));
    }
    match tokio::time::timeout(timeout, pipe.query_async::<Vec<u64>>(&mut conn)).await {
        Ok(Ok(lens)) => {
            for (id, len) in ids.iter().zip(lens) {
                if len > 0 {
                    watchers.deliver(id, len);
                }
            }
        }
        Ok(Err(e)) => tracing::warn!(store = "redis", error = %e, "watch resync failed"),
        Err(_) => tracing::warn!(store = "redis", "watch resync timed out"),
    }
}

/// The pub/sub connection: subscribes lazily, fans messages out, reconnects and resubscribes.
async fn pubsub_loop(
    client: Client,
    conn: ConnectionManager,
    keys: Keys,
    watchers: Arc<Watchers>,
    mut requests: mpsc::UnboundedReceiver<String>,
    timeout: Duration,
) {
    let events = keys.events_prefix();
    let mut backoff = Duration::from_millis(100);
    let mut warned = false;
    loop {
        let pubsub = match tokio::time::timeout(timeout, client.get_async_pubsub()).await {
            Ok(Ok(p)) => p,
            failed => {
                if !warned {
                    let error = match failed {
                        Ok(Err(e)) => e.to_string(),
                        _ => "timed out".to_string(),
                    };
                    tracing::warn!(store = "redis", error = %error, "pub/sub connection failed; retrying");
                    warned = true;
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(2));
                continue;
            }
        };
        let (mut sink, mut stream) = pubsub.split();
        // Subscriptions queued meanwhile are covered by the full resubscribe below.
        while requests.try_recv().is_ok() {}
        let ids = watchers.active();
        if !ids.is_empty() {
            let channels: Vec<String> = ids.iter().map(|id| keys.events(id)).collect();
            match tokio::time::timeout(timeout, sink.subscribe(channels)).await {
                Ok(Ok(())) => {}
                _ => {
                    tracing::warn!(store = "redis", "pub/sub resubscribe failed; retrying");
                    tokio::time::sleep(backoff).await;
                    continue;
                }
            }
        }
        if warned {
            tracing::info!(store = "redis", "pub/sub connection restored");
        }
        warned = false;
        backoff = Duration::from_millis(100);
        resync(&conn, &keys, &watchers, &ids, timeout).await;
        let mut prune = tokio::time::interval(PRUNE_EVERY);
        prune.tick().await;
        loop {
            tokio::select! {
                msg = stream.next() => {
                    let Some(msg) = msg else {
                        tracing::warn!(store = "redis", "pub/sub connection lost; reconnecting");
                        break;
                    };
                    let Some(id) = msg.get_channel_name().strip_prefix(events.as_str()) else {
                        continue;
                    };
                    if let Ok(len) = msg.get_payload::<u64>() {
                        watchers.deliver(id, len);
                    }
                }
                id = requests.recv() => {
                    let Some(id) = id else { return };
                    match tokio::time::timeout(timeout, sink.subscribe(keys.events(&id))).await {
                        Ok(Ok(())) => resync(&conn, &keys, &watchers, &[id], timeout).await,
                        _ => {
                            tracing::warn!(store = "redis", "pub/sub subscribe failed; reconnecting");
                            break;
                        }
                    }
                }
                _ = prune.tick() => {
                    let stale = watchers.prune();
                    if !stale.is_empty() {
                        let channels: Vec<String> = stale.iter().map(|id| keys.events(id)).collect();
                        if !matches!(tokio::time::timeout(timeout, sink.unsubscribe(channels)).await, Ok(Ok(()))) {
                            break;
                        }
                    }
                }
            }
        }
    }
}
