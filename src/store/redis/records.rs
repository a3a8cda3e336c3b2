//! Game records: idempotent creates, the script table, loads and heads, finishes.

use std::collections::HashMap;
use std::sync::Arc;

use super::{RedisStore, numbered, store_error};
use crate::store::{Created, GameRecord, LogEntry, PinnedScript, StoreError};

impl RedisStore {
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

    /// The length of each of `ids`' logs (0: no such game), in one pipeline of LLENs.
    pub async fn log_lengths(&self, ids: &[String]) -> Result<Vec<u64>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        for id in ids {
            pipe.cmd("LLEN").arg(self.keys.log(id));
        }
        let mut conn = self.conn.clone();
        self.call("log_lengths", pipe.query_async(&mut conn)).await
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
}
