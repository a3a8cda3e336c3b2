//! Game records: idempotent creates, the script table, loads and heads, finishes.

use std::collections::HashMap;
use std::sync::Arc;

use super::compact;
use super::conn::each_key;
use super::{RedisStore, numbered, store_error};
use crate::store::shard::{Shard, all_shards, shard_of};
use crate::store::{Created, GameRecord, LogEntry, PinnedScript, StoreError};

impl RedisStore {
    pub async fn create(&self, record: &GameRecord) -> Result<Created, StoreError> {
        let shard = shard_of(&record.id);
        let known = record
            .script
            .as_ref()
            .is_some_and(|s| self.script_stored_in(shard, &s.hash));
        let mut code = self.create_call(record, !known).await?;
        if code.0 == 3 {
            // The shard's table lost the text this process had stored (a flushed database):
            // again, with it.
            code = self.create_call(record, true).await?;
        }
        match code {
            (0, _) => {
                if let Some(s) = &record.script {
                    self.remember_script(&s.hash, &s.text);
                    if let Ok(mut stored) = self.stored_scripts.lock() {
                        stored.insert((shard, s.hash.clone()));
                    }
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
        let id = record.id.as_str();
        inv.key(self.keys.game(id))
            .key(self.keys.unfinished(shard_of(id)))
            .key(
                self.keys
                    .script(id, script.map_or("-", |s| s.hash.as_str())),
            );
        if let Some(rid) = &record.request_id {
            inv.key(self.keys.request(id, record.platform.as_deref(), rid));
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

    /// Whether this process stored version `hash`'s text in `shard`'s table.
    fn script_stored_in(&self, shard: Shard, hash: &str) -> bool {
        self.stored_scripts
            .lock()
            .is_ok_and(|s| s.contains(&(shard, hash.to_string())))
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
        cmd.arg(self.keys.script(id, &hash));
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
        Ok(record.map(|(r, log)| {
            let bodies = match log {
                Log::Live(bodies) | Log::Compacted(bodies) => bodies,
            };
            (r, numbered(bodies, 0))
        }))
    }

    /// The length of each of `ids`' logs (0: no such game): one pipeline of LLENs (on a
    /// cluster, one per shard, concurrently), then the entry counts of the compacted (finished)
    /// games among those that read 0.
    pub async fn log_lengths(&self, ids: &[String]) -> Result<Vec<u64>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let keys = ids.iter().map(|id| self.keys.log(id)).collect();
        let mut lens: Vec<u64> = self
            .call("log_lengths", each_key(&self.conn, "LLEN", keys, &[]))
            .await?;
        let empty: Vec<usize> = (0..ids.len()).filter(|&i| lens[i] == 0).collect();
        if !empty.is_empty() {
            let games = empty.iter().map(|&i| self.keys.game(&ids[i])).collect();
            let counts: Vec<Option<u64>> = self
                .call(
                    "log_lengths",
                    each_key(&self.conn, "HGET", games, &[COMPACT_ENTRIES]),
                )
                .await?;
            for (i, n) in empty.into_iter().zip(counts) {
                lens[i] = n.unwrap_or(0);
            }
        }
        Ok(lens)
    }

    /// The record and the log's length, in one HGETALL + LLEN pipeline (no entry is read).
    pub async fn head(&self, id: &str) -> Result<Option<(GameRecord, u64)>, StoreError> {
        let mut len = redis::cmd("LLEN");
        len.arg(self.keys.log(id));
        let record = self.record_and::<u64>("head", id, len).await?;
        Ok(record.map(|(r, log)| match log {
            Log::Live(n) => (r, n),
            Log::Compacted(bodies) => (r, bodies.len() as u64),
        }))
    }

    /// Game `id`'s record and what `log` (a command on its log) answers, in one atomic
    /// HGETALL + `log` pipeline (`None`: no such game); a compacted game's whole log instead.
    async fn record_and<T: redis::FromRedisValue>(
        &self,
        op: &'static str,
        id: &str,
        log: redis::Cmd,
    ) -> Result<Option<(GameRecord, Log<T>)>, StoreError> {
        let mut conn = self.conn.clone();
        let mut pipe = redis::pipe();
        pipe.atomic()
            .cmd("HGETALL")
            .arg(self.keys.game(id))
            .add_command(log);
        let (mut fields, answer): (HashMap<String, Vec<u8>>, T) =
            self.call(op, pipe.query_async(&mut conn)).await?;
        if let Some(frame) = fields.remove(COMPACT_FRAME) {
            let game = compact::decode(id, &frame).map_err(|e| store_error(op, e))?;
            let script = match game.script {
                Some(hash) => Some(self.script(id, hash).await?),
                None => None,
            };
            let record = GameRecord {
                id: game.id,
                platform: game.platform,
                request_id: game.request_id,
                body: game.body,
                script,
            };
            return Ok(Some((record, Log::Compacted(game.entries))));
        }
        let record = self.record_of(op, id, fields).await?;
        Ok(record.map(|r| (r, Log::Live(answer))))
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

    /// The games not finished, of every shard: one SMEMBERS per shard, pipelined (on a cluster,
    /// concurrently).
    pub async fn unfinished(&self) -> Result<Vec<String>, StoreError> {
        self.migrate_once().await?;
        let keys = all_shards().map(|s| self.keys.unfinished(s)).collect();
        let sets: Vec<Vec<String>> = self
            .call("unfinished", each_key(&self.conn, "SMEMBERS", keys, &[]))
            .await?;
        Ok(sets.into_iter().flatten().collect())
    }

    /// The games of `shard` not finished (one SMEMBERS).
    pub async fn unfinished_in(&self, shard: Shard) -> Result<Vec<String>, StoreError> {
        self.migrate_once().await?;
        let mut conn = self.conn.clone();
        let mut cmd = redis::cmd("SMEMBERS");
        cmd.arg(self.keys.unfinished(shard));
        self.call("unfinished_in", cmd.query_async(&mut conn)).await
    }

    /// Compacts finished game `id` into one value (its record and log as the archive frame of
    /// `compact`, in its hash's `compact` field beside `entries` and `finished_at`; the log list
    /// and the snapshots deleted), takes it out of its shard's unfinished set and starts its
    /// retention. The frame is built from a read of the game; the script refuses it if an entry
    /// was appended since (then again, at most [`FINISH_ATTEMPTS`] times).
    pub async fn finish(&self, id: &str) -> Result<(), StoreError> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let secs = self.options.retention.map_or(0, |r| r.as_secs().max(1));
        for _ in 0..FINISH_ATTEMPTS {
            let mut log = redis::cmd("LRANGE");
            log.arg(self.keys.log(id)).arg(0).arg(-1);
            let read = self.record_and::<Vec<Vec<u8>>>("finish", id, log).await?;
            let mut inv = self.finish_script.prepare_invoke();
            inv.key(self.keys.game(id))
                .key(self.keys.log(id))
                .key(self.keys.unfinished(shard_of(id)))
                .key(self.keys.snapshots(id));
            let (len, frame) = match &read {
                Some((record, Log::Live(bodies))) => {
                    if let Some(rid) = &record.request_id {
                        inv.key(self.keys.request(id, record.platform.as_deref(), rid));
                    }
                    let entries = numbered(bodies.clone(), 0);
                    (entries.len(), compact::encode(record, &entries, now))
                }
                // Gone, or compacted already: only leaves the unfinished set.
                _ => (0, Vec::new()),
            };
            inv.arg(id)
                .arg(now)
                .arg(secs)
                .arg(len)
                .arg(frame)
                .arg(u8::from(matches!(read, Some((_, Log::Live(_))))));
            let mut conn = self.conn.clone();
            let code: i64 = self.call("finish", inv.invoke_async(&mut conn)).await?;
            if code == 0 {
                return Ok(());
            }
        }
        Err(store_error(
            "finish",
            format!("game {id}: its log kept growing while it was being finished"),
        ))
    }
}

/// How many times a finish reads the game again when an append came between its read and its
/// script.
const FINISH_ATTEMPTS: usize = 3;

/// A compacted game's hash fields: the frame and its entry count.
pub(super) const COMPACT_FRAME: &str = "compact";
pub(super) const COMPACT_ENTRIES: &str = "entries";

/// A game's log as read: a live game's answer to the log command, or a compacted game's entries.
enum Log<T> {
    Live(T),
    Compacted(Vec<Vec<u8>>),
}
