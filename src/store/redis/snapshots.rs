//! The Redis store's snapshots (`store::snapshots`): a sorted set per game,
//! `<prefix>{sN}:snap:<id>`, scored by seq, each member the seq (8 bytes, big-endian) then the body.
//! A write replaces the member at its seq and renews the set's expiry to the finished games'
//! retention (a game idle longer loses its snapshots, which only makes its rebuild replay more).

use std::future::Future;

use super::{RedisStore, store_error};
use crate::store::{Snapshot, StoreError};

impl RedisStore {
    /// The write of one snapshot, a future that borrows nothing (to run on its own task).
    pub fn snapshot_writer(
        &self,
        id: &str,
        seq: u64,
        body: Vec<u8>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send + 'static {
        let mut conn = self.conn.clone();
        let key = self.keys.snapshots(id);
        let ttl = self.options.retention.map(|r| r.as_secs().max(1));
        let deadline = self.options.timeout;
        let label = self.label.clone();
        async move {
            let mut member = seq.to_be_bytes().to_vec();
            member.extend_from_slice(&body);
            let mut pipe = redis::pipe();
            pipe.atomic()
                .cmd("ZREMRANGEBYSCORE")
                .arg(&key)
                .arg(seq)
                .arg(seq)
                .ignore()
                .cmd("ZADD")
                .arg(&key)
                .arg(seq)
                .arg(member)
                .ignore();
            if let Some(secs) = ttl {
                pipe.cmd("EXPIRE").arg(&key).arg(secs).ignore();
            }
            match tokio::time::timeout(deadline, pipe.query_async::<()>(&mut conn)).await {
                Ok(Ok(())) => Ok(()),
                Ok(Err(e)) => Err(store_error("put_snapshot", format!("Redis {label}: {e}"))),
                Err(_) => Err(store_error(
                    "put_snapshot",
                    format!("Redis {label} did not answer within {deadline:?}"),
                )),
            }
        }
    }

    /// Stores one snapshot and waits for it.
    pub async fn put_snapshot(&self, id: &str, seq: u64, body: Vec<u8>) -> Result<(), StoreError> {
        self.snapshot_writer(id, seq, body).await
    }

    /// The game's snapshots at or before `seq`, oldest first.
    pub async fn snapshots(&self, id: &str, seq: u64) -> Result<Vec<Snapshot>, StoreError> {
        let mut conn = self.conn.clone();
        let mut cmd = redis::cmd("ZRANGEBYSCORE");
        cmd.arg(self.keys.snapshots(id)).arg("-inf").arg(seq);
        let members: Vec<Vec<u8>> = self.call("snapshots", cmd.query_async(&mut conn)).await?;
        Ok(members
            .into_iter()
            .filter_map(|m| {
                let head: [u8; 8] = m.get(..8)?.try_into().ok()?;
                Some(Snapshot {
                    seq: u64::from_be_bytes(head),
                    body: m[8..].to_vec(),
                })
            })
            .collect())
    }
}
