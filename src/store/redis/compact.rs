//! A finished game compacted into one value: its record and whole log as one frame of the
//! embedded store's archive encoding (`store::embedded::journal`'s `Game` frame: length,
//! CRC-32, then the game's head, record, script hash and entries), so both stores share one
//! encoder and one decoder for finished games.

use crate::store::embedded::journal::{self, Finished, HEADER, Rec};
use crate::store::{GameRecord, LogEntry};

/// A compacted game, decoded.
pub(super) struct Compacted {
    pub(super) id: String,
    pub(super) platform: Option<String>,
    pub(super) request_id: Option<String>,
    pub(super) body: Vec<u8>,
    /// The pinned script's hash (its text is in the shard's script table).
    pub(super) script: Option<String>,
    pub(super) entries: Vec<Vec<u8>>,
}

/// The frame of finished game `record` with log `entries`, finished at unix second `at`.
pub(super) fn encode(record: &GameRecord, entries: &[LogEntry], at: u64) -> Vec<u8> {
    let rec = Rec::Game {
        game: Finished {
            id: &record.id,
            platform: record.platform.as_deref(),
            request_id: record.request_id.as_deref(),
            at,
        },
        record: &record.body,
        script: record.script.as_ref().map(|s| s.hash.as_str()),
        entries: entries.iter().map(|e| e.body.as_slice()).collect(),
    };
    let mut out = Vec::new();
    journal::encode(&rec, 0, &mut out);
    out
}

/// The game in `frame` (checked: its length, its checksum, a `Game` frame of game `id`).
pub(super) fn decode(id: &str, frame: &[u8]) -> Result<Compacted, String> {
    let (head, payload) = frame
        .split_at_checked(HEADER)
        .ok_or("compacted game shorter than its header")?;
    let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
    let crc = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
    if len as usize != payload.len() || crc32fast::hash(payload) != crc {
        return Err(format!("compacted game {id} fails its length or checksum"));
    }
    match journal::decode(payload)? {
        Rec::Game {
            game,
            record,
            script,
            entries,
        } if game.id == id => Ok(Compacted {
            id: game.id.to_string(),
            platform: game.platform.map(str::to_string),
            request_id: game.request_id.map(str::to_string),
            body: record.to_vec(),
            script: script.map(str::to_string),
            entries: entries.into_iter().map(<[u8]>::to_vec).collect(),
        }),
        _ => Err(format!("compacted game {id} holds another frame")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_finished_game_round_trips_and_a_flipped_byte_is_refused() {
        let record = GameRecord {
            id: "g".into(),
            platform: Some("acme".into()),
            request_id: Some("r".into()),
            body: b"{\"seed\":1}".to_vec(),
            script: Some(crate::store::PinnedScript {
                hash: "h1".into(),
                text: Arc::from("text"),
            }),
        };
        let entries: Vec<LogEntry> = (1..=3)
            .map(|seq| LogEntry {
                seq,
                body: format!("e{seq}").into_bytes(),
            })
            .collect();
        let frame = encode(&record, &entries, 1_700_000_000);
        let back = decode("g", &frame).unwrap();
        assert_eq!(
            (
                back.id.as_str(),
                back.platform.as_deref(),
                back.request_id.as_deref()
            ),
            ("g", Some("acme"), Some("r"))
        );
        assert_eq!(
            (back.body, back.script.as_deref()),
            (record.body.clone(), Some("h1"))
        );
        assert_eq!(
            back.entries,
            vec![b"e1".to_vec(), b"e2".to_vec(), b"e3".to_vec()]
        );
        assert!(decode("other", &frame).is_err());
        let mut bad = frame.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert!(decode("g", &bad).is_err());
        assert!(decode("g", &frame[..4]).is_err());
    }
}
