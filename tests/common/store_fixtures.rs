//! Padded store records and log entries for the embedded store's file tests (compaction,
//! retention): sizes large enough that compaction and archive rewrites have bytes to move.

use shuangkou::store::{GameRecord, LogEntry};

/// A game record of platform `p` with idempotency key `rid` and a 300-byte body.
pub fn record(id: &str, rid: Option<&str>) -> GameRecord {
    GameRecord {
        id: id.into(),
        platform: Some("p".into()),
        request_id: rid.map(Into::into),
        body: format!("{{\"game\":\"{id}\",\"pad\":\"{}\"}}", "x".repeat(300)).into_bytes(),
        script: None,
    }
}

/// Log entry `seq` of game `id`, with a 200-byte body.
pub fn entry(seq: u64, id: &str) -> LogEntry {
    LogEntry {
        seq,
        body: format!("{id}/{seq}/{}", "y".repeat(200)).into_bytes(),
    }
}
