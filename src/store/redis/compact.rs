//! A finished game compacted into one value: its record and whole log as one frame of the
//! embedded store's archive encoding (`store::embedded::journal`'s `Game` frame: length,
//! CRC-32, then the game's head, record, script hash and entries), so both stores share one
//! encoder and one decoder for finished games, then deflated (the JSON entries shrink to about a
//! fifth): the value is [`DEFLATED`] and the deflated frame.

use crate::store::embedded::journal::{self, Finished, HEADER, MAX_PAYLOAD, Rec};
use crate::store::{GameRecord, LogEntry};

/// The first byte of a compacted value: the frame after it is deflated (raw DEFLATE).
const DEFLATED: u8 = b'z';
/// The DEFLATE level (miniz's default: most of the ratio at a few ms per match).
const LEVEL: u8 = 6;

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
    let mut frame = Vec::new();
    journal::encode(&rec, 0, &mut frame);
    let mut out = vec![DEFLATED];
    out.extend_from_slice(&miniz_oxide::deflate::compress_to_vec(&frame, LEVEL));
    out
}

/// The game in `value` (checked: inflated within the largest frame, its length, its checksum,
/// a `Game` frame of game `id`).
pub(super) fn decode(id: &str, value: &[u8]) -> Result<Compacted, String> {
    let deflated = match value.split_first() {
        Some((&DEFLATED, rest)) => rest,
        _ => return Err(format!("compacted game {id} has an unknown format")),
    };
    let frame =
        miniz_oxide::inflate::decompress_to_vec_with_limit(deflated, MAX_PAYLOAD as usize + HEADER)
            .map_err(|e| format!("compacted game {id} does not inflate: {e:?}"))?;
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
        // Deflated: the entries' repeated text shrinks.
        let long: Vec<LogEntry> = (1..=500)
            .map(|seq| LogEntry {
                seq,
                body: format!(
                    "{{\"entry\":{{\"player\":{},\"action\":{{\"kind\":\"pass\"}}}}}}",
                    seq % 4
                )
                .into_bytes(),
            })
            .collect();
        let raw: usize = long.iter().map(|e| e.body.len()).sum();
        let packed = encode(&record, &long, 1);
        assert!(packed.len() * 5 < raw, "{} of {raw} bytes", packed.len());
        assert_eq!(decode("g", &packed).unwrap().entries.len(), 500);
        for cut in [1, frame.len() / 2, frame.len() - 1] {
            assert!(decode("g", &frame[..cut]).is_err(), "cut at {cut}");
        }
        let mut bad = frame.clone();
        bad[0] = b'x';
        assert!(decode("g", &bad).is_err());
    }
}
