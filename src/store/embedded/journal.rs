//! The embedded store's on-disk format: checksummed frames in two append-only files.
//!
//! - `shuangkou.log` (the journal): every write, in commit order. A game in progress is its
//!   `Create` frame and one `Append` frame per action; `Finish` marks it finished; `Archived` says
//!   a finished game lives in the archive (written when the journal is compacted).
//! - `shuangkou.archive`: one `Game` frame per finished game (its record and whole log), only
//!   ever read by offset.
//!
//! A `Script` frame in the journal holds a variant script text once per version hash; `Create`
//! and `Game` frames name it by that hash (their `script` field). Frames written before the
//! script table have no such field (their own tags, still read).
//!
//! Both start with a 16-byte magic (version 3; a version-2 file, the same frames without scripts,
//! is upgraded in place by rewriting its magic: [`check_magic`]). A frame is `len: u32 LE`, `crc32(payload): u32 LE`, then
//! `len` payload bytes: a tag byte and the fields (integers little-endian, byte strings with a
//! `u32` length, optional strings with a presence byte). A frame that is short, too long or whose
//! checksum fails ends the valid data: only the tail written after the last fsync can be torn.
//!
//! This module knows bytes only; it must not depend on the writer, the index or any game type.

use std::io::{self, BufReader, Read};

use super::disk::{Cursor, DiskFile, ReadAt};

mod decode;

pub use decode::decode;

/// The journal's file name inside the data directory.
pub const JOURNAL: &str = "shuangkou.log";
/// The archive's file name inside the data directory.
pub const ARCHIVE: &str = "shuangkou.archive";
/// First bytes of the journal (format version 3; version 1 was the redb file, version 2 the same
/// frames without the script table).
pub const JOURNAL_MAGIC: &[u8; 16] = b"SHUANGKOU-LOG-v3";
/// First bytes of the archive.
pub const ARCHIVE_MAGIC: &[u8; 16] = b"SHUANGKOU-ARC-v3";
/// The version-2 magics, upgraded in place at open.
const OLDER_MAGICS: [(&[u8; 16], &[u8; 16]); 2] = [
    (b"SHUANGKOU-LOG-v2", JOURNAL_MAGIC),
    (b"SHUANGKOU-ARC-v2", ARCHIVE_MAGIC),
];
/// Bytes of a frame header (length and checksum).
pub const HEADER: usize = 8;
/// Largest payload accepted when reading (a longer length is a torn or foreign frame).
pub const MAX_PAYLOAD: u32 = 256 << 20;

const T_CREATE: u8 = 1;
const T_APPEND: u8 = 2;
const T_FINISH: u8 = 3;
const T_ARCHIVED: u8 = 4;
const T_GAME: u8 = 5;
const T_CREATE_SCRIPTED: u8 = 6;
const T_SCRIPT: u8 = 7;
const T_GAME_SCRIPTED: u8 = 8;

/// Where a frame is: its first byte (the header) and its length including the header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub off: u64,
    pub len: u32,
}

/// A finished game's head, the same in its journal frame (`Archived`) and its archive frame
/// (`Game`): who it is, its idempotency key, and when it finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Finished<'a> {
    pub id: &'a str,
    pub platform: Option<&'a str>,
    pub request_id: Option<&'a str>,
    /// The unix second it finished.
    pub at: u64,
}

/// One frame's content, borrowing from the payload bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rec<'a> {
    /// A new game's creation record.
    Create {
        id: &'a str,
        platform: Option<&'a str>,
        request_id: Option<&'a str>,
        body: &'a [u8],
        /// The hash of the script it pins (in a `Script` frame before it).
        script: Option<&'a str>,
    },
    /// A variant script's text, once per version hash.
    Script { hash: &'a str, text: &'a str },
    /// Entry `seq` of a game's log.
    Append {
        id: &'a str,
        seq: u64,
        body: &'a [u8],
    },
    /// The game finished at unix second `at`.
    Finish { id: &'a str, at: u64 },
    /// A finished game with `entries` log entries, stored in the archive at `span`.
    Archived {
        game: Finished<'a>,
        entries: u64,
        span: Span,
    },
    /// A whole finished game (archive frames only).
    Game {
        game: Finished<'a>,
        record: &'a [u8],
        script: Option<&'a str>,
        entries: Vec<&'a [u8]>,
    },
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    // Bodies are bounded far below 4 GiB by the service (message-size limit).
    put_u32(out, u32::try_from(b.len()).unwrap_or(u32::MAX));
    out.extend_from_slice(b);
}

fn put_opt(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => {
            out.push(1);
            put_bytes(out, s.as_bytes());
        }
        None => out.push(0),
    }
}

/// A game frame's first fields: its tag, the game's id and idempotency key.
fn put_game_head(
    out: &mut Vec<u8>,
    tag: u8,
    id: &str,
    platform: Option<&str>,
    request_id: Option<&str>,
) {
    out.push(tag);
    put_bytes(out, id.as_bytes());
    put_opt(out, platform);
    put_opt(out, request_id);
}

/// A finished game's frame head: [`put_game_head`], then when it finished.
fn put_finished(out: &mut Vec<u8>, tag: u8, game: &Finished<'_>) {
    put_game_head(out, tag, game.id, game.platform, game.request_id);
    put_u64(out, game.at);
}

/// Appends `rec` as one frame to `out`; returns its span, `base` being the file offset of
/// `out[0]`.
pub fn encode(rec: &Rec<'_>, base: u64, out: &mut Vec<u8>) -> Span {
    let start = out.len();
    out.extend_from_slice(&[0; HEADER]);
    match rec {
        Rec::Create {
            id,
            platform,
            request_id,
            body,
            script,
        } => {
            let tag = if script.is_some() {
                T_CREATE_SCRIPTED
            } else {
                T_CREATE
            };
            put_game_head(out, tag, id, *platform, *request_id);
            put_bytes(out, body);
            if script.is_some() {
                put_opt(out, *script);
            }
        }
        Rec::Script { hash, text } => {
            out.push(T_SCRIPT);
            put_bytes(out, hash.as_bytes());
            put_bytes(out, text.as_bytes());
        }
        Rec::Append { id, seq, body } => {
            out.push(T_APPEND);
            put_bytes(out, id.as_bytes());
            put_u64(out, *seq);
            put_bytes(out, body);
        }
        Rec::Finish { id, at } => {
            out.push(T_FINISH);
            put_bytes(out, id.as_bytes());
            put_u64(out, *at);
        }
        Rec::Archived {
            game,
            entries,
            span,
        } => {
            put_finished(out, T_ARCHIVED, game);
            put_u64(out, *entries);
            put_u64(out, span.off);
            put_u32(out, span.len);
        }
        Rec::Game {
            game,
            record,
            script,
            entries,
        } => {
            let tag = if script.is_some() {
                T_GAME_SCRIPTED
            } else {
                T_GAME
            };
            put_finished(out, tag, game);
            put_bytes(out, record);
            if script.is_some() {
                put_opt(out, *script);
            }
            put_u64(out, entries.len() as u64);
            for e in entries {
                put_bytes(out, e);
            }
        }
    }
    let payload_len = out.len() - start - HEADER;
    let crc = crc32fast::hash(&out[start + HEADER..]);
    let len = u32::try_from(payload_len).unwrap_or(u32::MAX);
    out[start..start + 4].copy_from_slice(&len.to_le_bytes());
    out[start + 4..start + HEADER].copy_from_slice(&crc.to_le_bytes());
    Span {
        off: base + start as u64,
        len: u32::try_from(payload_len + HEADER).unwrap_or(u32::MAX),
    }
}

/// Splits a frame header into payload length and checksum.
fn header(h: &[u8; HEADER]) -> (u32, u32) {
    let len = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
    let crc = u32::from_le_bytes([h[4], h[5], h[6], h[7]]);
    (len, crc)
}

/// Reads the frame at `span` and returns its checked payload.
pub fn read_frame(file: &DiskFile, span: Span) -> Result<Vec<u8>, String> {
    let mut buf = vec![0; span.len as usize];
    file.read_exact_at(&mut buf, span.off)
        .map_err(|e| format!("read at {}: {e}", span.off))?;
    let mut h = [0; HEADER];
    h.copy_from_slice(buf.get(..HEADER).ok_or("frame shorter than its header")?);
    let (len, crc) = header(&h);
    if len as usize + HEADER != buf.len() {
        return Err(format!("frame at {} has the wrong length", span.off));
    }
    let payload = buf.split_off(HEADER);
    if crc32fast::hash(&payload) != crc {
        return Err(format!("frame at {} fails its checksum", span.off));
    }
    Ok(payload)
}

/// Checks (or, for an empty file, writes) a file's magic; a version-2 file (whose frames are all
/// valid version-3 frames) gets the version-3 magic, fsynced before anything else is written, so
/// an older binary refuses the file instead of cutting off frames it does not know. `Err` names
/// what is wrong.
pub fn check_magic(file: &DiskFile, magic: &[u8; 16]) -> Result<(), String> {
    let len = file.size().map_err(|e| e.to_string())?;
    if len == 0 {
        file.write_all_at(magic, 0).map_err(|e| e.to_string())?;
        return file.sync_data().map_err(|e| e.to_string());
    }
    let mut got = [0; 16];
    if len < 16 || file.read_exact_at(&mut got, 0).is_err() {
        return Err("not a shuangkou store file (bad magic)".into());
    }
    if &got == magic {
        return Ok(());
    }
    if OLDER_MAGICS.contains(&(&got, magic)) {
        file.write_all_at(magic, 0).map_err(|e| e.to_string())?;
        return file.sync_data().map_err(|e| e.to_string());
    }
    Err("not a shuangkou store file (bad magic)".into())
}

/// Reads every valid frame of `file` after its magic, in order, calling `each` with its span and
/// payload. Returns the end of the valid data: the file's length unless its tail is torn, or
/// where `each` rejected a frame (a frame inconsistent with the ones before ends the data too).
pub fn scan(
    file: &(impl ReadAt + ?Sized),
    mut each: impl FnMut(Span, &[u8]) -> Result<(), String>,
) -> io::Result<(u64, Option<String>)> {
    let mut reader = BufReader::with_capacity(1 << 20, Cursor::new(file, 0));
    let mut skip = [0; 16];
    reader.read_exact(&mut skip)?;
    let mut off = 16u64;
    let mut payload = Vec::new();
    loop {
        let mut h = [0; HEADER];
        match read_full(&mut reader, &mut h)? {
            0 => return Ok((off, None)),
            n if n < HEADER => return Ok((off, Some("torn frame header".into()))),
            _ => {}
        }
        let (len, crc) = header(&h);
        if len == 0 || len > MAX_PAYLOAD {
            return Ok((off, Some(format!("bad frame length {len}"))));
        }
        payload.resize(len as usize, 0);
        if read_full(&mut reader, &mut payload)? < payload.len() {
            return Ok((off, Some("torn frame".into())));
        }
        if crc32fast::hash(&payload) != crc {
            return Ok((off, Some("frame checksum mismatch".into())));
        }
        let span = Span {
            off,
            len: len + HEADER as u32,
        };
        if let Err(why) = each(span, &payload) {
            return Ok((off, Some(why)));
        }
        off += u64::from(span.len);
    }
}

/// Calls `each` with the span and payload of every frame in `bytes`, whose first byte is at
/// file offset `base` (frames already fsynced and read back whole: a short or mismatched frame
/// is an error, not a torn tail).
pub fn frames(
    bytes: &[u8],
    base: u64,
    mut each: impl FnMut(Span, &[u8]) -> Result<(), String>,
) -> Result<(), String> {
    let mut at = 0usize;
    while at < bytes.len() {
        let off = base + at as u64;
        let mut h = [0; HEADER];
        h.copy_from_slice(
            bytes
                .get(at..at + HEADER)
                .ok_or_else(|| format!("short frame header at {off}"))?,
        );
        let (len, crc) = header(&h);
        let payload = bytes
            .get(at + HEADER..at + HEADER + len as usize)
            .ok_or_else(|| format!("short frame at {off}"))?;
        if len == 0 || crc32fast::hash(payload) != crc {
            return Err(format!("frame at {off} fails its checksum"));
        }
        let span = Span {
            off,
            len: len + HEADER as u32,
        };
        each(span, payload)?;
        at += span.len as usize;
    }
    Ok(())
}

/// Reads until `buf` is full or the end of the file; returns the bytes read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Writes frames to the end of a file through a buffer (compaction and migration; the commit
/// path writes each batch with one `write_all_at`).
pub struct FrameWriter<'f> {
    file: &'f DiskFile,
    end: u64,
    buf: Vec<u8>,
}

impl<'f> FrameWriter<'f> {
    /// Starts writing at `end` (the current end of the valid data).
    pub fn new(file: &'f DiskFile, end: u64) -> FrameWriter<'f> {
        FrameWriter {
            file,
            end,
            buf: Vec::with_capacity(1 << 20),
        }
    }

    /// Appends one frame; returns its span.
    pub fn push(&mut self, rec: &Rec<'_>) -> io::Result<Span> {
        let span = encode(rec, self.end, &mut self.buf);
        if self.buf.len() >= 4 << 20 {
            self.write_out()?;
        }
        Ok(span)
    }

    /// Appends an already encoded frame (copied from another file); returns its span.
    pub fn push_raw(&mut self, frame: &[u8]) -> io::Result<Span> {
        let span = Span {
            off: self.end + self.buf.len() as u64,
            len: u32::try_from(frame.len()).unwrap_or(u32::MAX),
        };
        self.buf.extend_from_slice(frame);
        if self.buf.len() >= 4 << 20 {
            self.write_out()?;
        }
        Ok(span)
    }

    fn write_out(&mut self) -> io::Result<()> {
        self.file.write_all_at(&self.buf, self.end)?;
        self.end += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// Writes what is buffered and fsyncs; returns the new end.
    pub fn finish(mut self) -> io::Result<u64> {
        self.write_out()?;
        self.file.sync_data()?;
        Ok(self.end)
    }
}

/// Reads the bytes `from..to` of a file.
pub fn read_raw_range(file: &DiskFile, from: u64, to: u64) -> io::Result<Vec<u8>> {
    let mut buf = vec![0; usize::try_from(to.saturating_sub(from)).unwrap_or(0)];
    file.read_exact_at(&mut buf, from)?;
    Ok(buf)
}

/// Reads a whole frame (header included) at `span`, checksum checked (for copying).
pub fn read_raw(file: &DiskFile, span: Span) -> io::Result<Vec<u8>> {
    let mut buf = vec![0; span.len as usize];
    file.read_exact_at(&mut buf, span.off)?;
    let ok = buf.len() >= HEADER && {
        let mut h = [0; HEADER];
        h.copy_from_slice(&buf[..HEADER]);
        let (len, crc) = header(&h);
        len as usize + HEADER == buf.len() && crc32fast::hash(&buf[HEADER..]) == crc
    };
    if !ok {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("frame at {} fails its checksum", span.off),
        ));
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_record_round_trips() {
        let recs = [
            Rec::Create {
                id: "g",
                platform: Some("p"),
                request_id: None,
                body: b"{}",
                script: None,
            },
            Rec::Create {
                id: "g",
                platform: None,
                request_id: Some("r"),
                body: b"{}",
                script: Some("h1"),
            },
            Rec::Script {
                hash: "h1",
                text: "fn deal() {}",
            },
            Rec::Append {
                id: "g",
                seq: 7,
                body: b"play",
            },
            Rec::Finish { id: "g", at: 99 },
            Rec::Archived {
                game: Finished {
                    id: "g",
                    platform: None,
                    request_id: Some("r"),
                    at: 5,
                },
                entries: 3,
                span: Span { off: 16, len: 40 },
            },
            Rec::Game {
                game: Finished {
                    id: "g",
                    platform: Some("p"),
                    request_id: Some("r"),
                    at: 5,
                },
                record: b"rec",
                script: None,
                entries: vec![b"a", b"bb"],
            },
            Rec::Game {
                game: Finished {
                    id: "g",
                    platform: None,
                    request_id: None,
                    at: 6,
                },
                record: b"rec",
                script: Some("h1"),
                entries: vec![b"a"],
            },
        ];
        let mut out = Vec::new();
        for r in &recs {
            let span = encode(r, 100, &mut out);
            let start = (span.off - 100) as usize;
            let frame = &out[start..start + span.len as usize];
            assert_eq!(decode(&frame[HEADER..]).unwrap(), *r);
        }
    }

    #[test]
    fn a_truncated_payload_is_an_error_not_a_panic() {
        let mut out = Vec::new();
        encode(
            &Rec::Append {
                id: "g",
                seq: 1,
                body: b"x",
            },
            0,
            &mut out,
        );
        for cut in HEADER..out.len() - 1 {
            assert!(decode(&out[HEADER..cut]).is_err(), "cut at {cut}");
        }
    }
}
