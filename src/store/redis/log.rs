//! A game's log: compare-and-append (one EVALSHA per play) and range reads.

use super::compact;
use super::records::COMPACT_FRAME;
use super::{RedisStore, numbered, store_error};
use crate::store::{AppendOrRead, Appended, LogEntry, LogPage, StoreError};

impl RedisStore {
    /// The entries of `page` (one LRANGE of that range).
    pub async fn entries(&self, id: &str, page: LogPage) -> Result<Vec<LogEntry>, StoreError> {
        let Ok(start) = i64::try_from(page.after) else {
            return Ok(Vec::new());
        };
        if page.limit == 0 {
            return Ok(Vec::new());
        }
        // LRANGE's end is inclusive; -1 is the list's end (a limit beyond i64 reads to it).
        let end = i64::try_from(page.limit)
            .ok()
            .and_then(|n| start.checked_add(n - 1))
            .unwrap_or(-1);
        // One round trip: the range, and a compacted (finished) game's frame (nil for a game in
        // progress). The log only grows until the game is compacted, so in either order the
        // frame, when there, holds every entry the range could have.
        let mut conn = self.conn.clone();
        let mut pipe = redis::pipe();
        pipe.cmd("LRANGE")
            .arg(self.keys.log(id))
            .arg(start)
            .arg(end)
            .cmd("HGET")
            .arg(self.keys.game(id))
            .arg(COMPACT_FRAME);
        let (bodies, frame): (Vec<Vec<u8>>, Option<Vec<u8>>) =
            self.call("entries", pipe.query_async(&mut conn)).await?;
        match frame {
            Some(frame) => {
                let all = compact::decode(id, &frame).map_err(|e| store_error("entries", e))?;
                let page_of: Vec<Vec<u8>> = all
                    .entries
                    .into_iter()
                    .skip(usize::try_from(page.after).unwrap_or(usize::MAX))
                    .take(page.limit)
                    .collect();
                Ok(numbered(page_of, page.after))
            }
            None => Ok(numbered(bodies, page.after)),
        }
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
        let mut cmd = redis::cmd("EVALSHA");
        cmd.arg(self.append_script.get_hash())
            .arg(2)
            .arg(self.keys.game(id))
            .arg(self.keys.log(id))
            .arg(expected)
            .arg(entry.body.as_slice())
            .arg(self.keys.events(id))
            .arg(if read_back { "1" } else { "0" });
        let reply = self.evalsha("append", &self.append_script, &cmd).await?;
        match reply {
            redis::Value::Int(_) => Ok(AppendOrRead::Appended),
            other => {
                let (code, n, bodies): (i64, u64, Vec<Vec<u8>>) = redis::from_redis_value(other)
                    .map_err(|e| store_error("append", format!("unexpected script reply: {e}")))?;
                match code {
                    1 => Ok(AppendOrRead::Behind {
                        current: n,
                        entries: numbered(bodies, u64::try_from(expected).unwrap_or(0)),
                    }),
                    2 => Err(store_error("append", format!("no game {id}"))),
                    3 if n == u64::try_from(expected).unwrap_or(u64::MAX) => Err(store_error(
                        "append",
                        format!("game {id} is finished: its log is closed"),
                    )),
                    3 => {
                        let after = u64::try_from(expected).unwrap_or(0);
                        let entries = match bodies.first() {
                            Some(frame) if read_back => {
                                let all = compact::decode(id, frame)
                                    .map_err(|e| store_error("append", e))?;
                                let skip = usize::try_from(after).unwrap_or(usize::MAX);
                                all.entries.into_iter().skip(skip).collect()
                            }
                            _ => Vec::new(),
                        };
                        Ok(AppendOrRead::Behind {
                            current: n,
                            entries: numbered(entries, after),
                        })
                    }
                    c => Err(store_error(
                        "append",
                        format!("unexpected script reply {c}"),
                    )),
                }
            }
        }
    }
}
