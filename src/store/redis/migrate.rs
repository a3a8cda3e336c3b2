//! The one-time rename, at start, of the keys written before shards (`<prefix>game:<id>`,
//! `…log:<id>`, `…snap:<id>`, `…req:…`, one `…unfinished` set and one `…script:<hash>` table)
//! to the tagged layout (`<prefix>{sN}:game:<id>`, …). It runs before the first read of the
//! unfinished games (a replica's recovery), on a single Redis only: the untagged layout never ran
//! on a cluster (its scripts were cross-slot). Each game moves in one script call (atomic, with
//! its expiry), so replicas starting together migrate each game once; a game already moved is
//! skipped. The untagged script table is left in place (one key per version ever used).

use super::keys::UntaggedKeys;
use super::{RedisStore, store_error};
use crate::store::StoreError;
use crate::store::shard::shard_of;

/// Moves one game. KEYS: old game, old log, old snapshots, old unfinished set, new game, new
/// log, new snapshots, new unfinished set, old script, new script, old request key, new request
/// key. ARGV: id, has script (0/1), has request key (0/1). Returns 1 (moved) | 0 (gone: moved
/// by another replica) | 2 (both layouts hold it: left as it is).
const MIGRATE_GAME_LUA: &str = r#"
local function move(from, to)
  if redis.call('EXISTS', from) == 1 then redis.call('RENAME', from, to) end
end
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('EXISTS', KEYS[5]) == 1 then return 2 end
if ARGV[2] == '1' and redis.call('EXISTS', KEYS[10]) == 0 then
  local text = redis.call('GET', KEYS[9])
  if text then redis.call('SET', KEYS[10], text) end
end
move(KEYS[2], KEYS[6])
move(KEYS[3], KEYS[7])
if ARGV[3] == '1' then move(KEYS[11], KEYS[12]) end
if redis.call('SREM', KEYS[4], ARGV[1]) == 1 then redis.call('SADD', KEYS[8], ARGV[1]) end
redis.call('RENAME', KEYS[1], KEYS[5])
return 1
"#;

/// Keys per SCAN step.
const SCAN_COUNT: usize = 1000;

/// `text` with the glob characters of a SCAN pattern escaped.
fn glob_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

impl RedisStore {
    /// Runs the migration once per process (a failure is returned and tried again next time).
    pub(super) async fn migrate_once(&self) -> Result<(), StoreError> {
        if self.conn.is_cluster() {
            return Ok(());
        }
        self.migrated
            .get_or_try_init(|| self.migrate_untagged())
            .await
            .map(|_| ())
    }

    async fn migrate_untagged(&self) -> Result<(), StoreError> {
        let old = UntaggedKeys {
            prefix: self.keys.prefix.clone(),
        };
        let game_prefix = old.game("");
        let pattern = format!("{}*", glob_escaped(&game_prefix));
        let script = redis::Script::new(MIGRATE_GAME_LUA);
        let mut conn = self.conn.clone();
        let (mut moved, mut cursor) = (0u64, 0u64);
        loop {
            let mut scan = redis::cmd("SCAN");
            scan.arg(cursor)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(SCAN_COUNT);
            let reply: redis::Value = self.call("migrate", scan.query_async(&mut conn)).await?;
            // An empty reply (what a stand-in server with no data answers) has nothing to move.
            if matches!(&reply, redis::Value::Array(a) if a.is_empty()) {
                break;
            }
            let (next, found): (u64, Vec<String>) = redis::from_redis_value(reply)
                .map_err(|e| store_error("migrate", format!("unexpected SCAN reply: {e}")))?;
            for key in found {
                let Some(id) = key.strip_prefix(&game_prefix) else {
                    continue;
                };
                moved += self.migrate_game(&old, &script, id).await?;
            }
            if next == 0 {
                break;
            }
            cursor = next;
        }
        // Ids in the old set without a game hash (none are expected): moved all the same.
        let mut members = redis::cmd("SMEMBERS");
        members.arg(old.unfinished());
        let rest: Vec<String> = self.call("migrate", members.query_async(&mut conn)).await?;
        for id in &rest {
            let mut pipe = redis::pipe();
            pipe.atomic()
                .cmd("SADD")
                .arg(self.keys.unfinished(shard_of(id)))
                .arg(id)
                .ignore()
                .cmd("SREM")
                .arg(old.unfinished())
                .arg(id)
                .ignore();
            self.call("migrate", pipe.query_async::<()>(&mut conn))
                .await?;
        }
        if moved > 0 || !rest.is_empty() {
            tracing::info!(
                store = "redis",
                games = moved,
                "moved games of the layout before shards to their shards' keys"
            );
        }
        Ok(())
    }

    /// Moves game `id` (1: moved here).
    async fn migrate_game(
        &self,
        old: &UntaggedKeys,
        script: &redis::Script,
        id: &str,
    ) -> Result<u64, StoreError> {
        let mut conn = self.conn.clone();
        let mut fields = redis::cmd("HMGET");
        fields
            .arg(old.game(id))
            .arg("platform")
            .arg("request_id")
            .arg("script");
        let (platform, request_id, hash): (Option<String>, Option<String>, Option<String>) =
            self.call("migrate", fields.query_async(&mut conn)).await?;
        let hash = hash.unwrap_or_else(|| "-".to_string());
        let rid = request_id.as_deref().unwrap_or("");
        let mut inv = script.prepare_invoke();
        inv.key(old.game(id))
            .key(old.log(id))
            .key(old.snapshots(id))
            .key(old.unfinished())
            .key(self.keys.game(id))
            .key(self.keys.log(id))
            .key(self.keys.snapshots(id))
            .key(self.keys.unfinished(shard_of(id)))
            .key(old.script(&hash))
            .key(self.keys.script(id, &hash))
            .key(old.request(platform.as_deref(), rid))
            .key(self.keys.request(id, platform.as_deref(), rid))
            .arg(id)
            .arg(if hash == "-" { "0" } else { "1" })
            .arg(if request_id.is_some() { "1" } else { "0" });
        let code: i64 = self.call("migrate", inv.invoke_async(&mut conn)).await?;
        match code {
            0 | 1 => Ok(code as u64),
            2 => {
                tracing::warn!(
                    store = "redis",
                    game = id,
                    "game is in both key layouts; the sharded one is kept, the old one left"
                );
                Ok(0)
            }
            c => Err(store_error(
                "migrate",
                format!("unexpected script reply {c}"),
            )),
        }
    }
}
