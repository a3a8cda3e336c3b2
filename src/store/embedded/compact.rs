//! Compaction of the embedded store's journal: finished games leave the hot path.
//!
//! Once the journal bytes of finished games reach both [`MIN_GARBAGE`] and the bytes that would
//! be kept, the writer thread (between batches, so the index cannot change meanwhile):
//! 1. appends each finished game still in the journal to the archive as one frame (its record and
//!    whole log) and fsyncs the archive;
//! 2. writes a new journal beside the old one: the script table's frames, one small `Archived`
//!    frame per finished game, and the frames of each game in progress copied as they are; fsyncs it and renames it over the
//!    old one (the commit point), then fsyncs the directory;
//! 3. swaps the index and the file handle.
//!
//! A crash before the rename leaves the old journal (and unreferenced bytes at the archive's end);
//! after it, the new journal, whose archive frames were fsynced first. So the journal read at open
//! holds the games in progress plus at most as many bytes again of finished ones, and a finished
//! game costs one archive frame and one index frame, whatever the length of its log.

use std::fs::{self, File};
use std::io;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::index::{Game, Index, Place};
use super::journal::{self, FrameWriter, Rec, Span};
use super::positions::Writer;
use super::{Shared, legacy, open_rw};

/// Finished games' journal bytes below which the journal is never compacted.
pub const MIN_GARBAGE: u64 = 32 << 20;

/// Compacts if due (or if `force`); failures are logged and the old journal stays in use.
pub(super) fn maybe(shared: &Shared, w: &mut Writer, force: bool) {
    let due = match shared.state.read() {
        Ok(st) => {
            let (garbage, kept) = (st.index.garbage, st.index.kept);
            (force && garbage > 0) || (garbage >= MIN_GARBAGE && garbage >= kept)
        }
        Err(_) => false,
    };
    if !due {
        return;
    }
    let t = Instant::now();
    match run(shared, w) {
        Ok((kept, archived)) => {
            shared.compactions.fetch_add(1, Ordering::Relaxed);
            tracing::info!(
                store = "embedded",
                in_progress = kept,
                archived,
                journal_bytes = w.end,
                ms = t.elapsed().as_millis() as u64,
                "journal compacted"
            );
        }
        Err(m) => tracing::warn!(store = "embedded", error = %m,
            "journal compaction failed; the old journal stays in use"),
    }
}

/// A game's create body, the hash of the script it pins, and its log bodies.
type GameLog = (Vec<u8>, Option<String>, Vec<Vec<u8>>);

/// Reads a game's create body, script hash and log bodies from the journal.
fn read_log(journal: &File, record: Span, entries: &[Span]) -> Result<GameLog, String> {
    let payload = journal::read_frame(journal, record)?;
    let Rec::Create { body, script, .. } = journal::decode(&payload)? else {
        return Err("the record frame is not a create".into());
    };
    let (body, script) = (body.to_vec(), script.map(str::to_string));
    let mut bodies = Vec::with_capacity(entries.len());
    for span in entries {
        let payload = journal::read_frame(journal, *span)?;
        let Rec::Append { body, .. } = journal::decode(&payload)? else {
            return Err("a log frame is not an append".into());
        };
        bodies.push(body.to_vec());
    }
    Ok((body, script, bodies))
}

/// Runs one compaction; returns the games kept in progress and the games archived now.
fn run(shared: &Shared, w: &mut Writer) -> Result<(usize, usize), String> {
    let st = shared
        .state
        .read()
        .map_err(|_| "internal lock poisoned".to_string())?;
    let journal = Arc::clone(&st.journal);
    let archive = Arc::clone(&st.archive);
    let io = |what: &str, e: io::Error| format!("{what}: {e}");

    // 1. Every finished game still in the journal, into the archive.
    let mut arc = FrameWriter::new(&archive, w.archive_end);
    let mut moved = std::collections::HashMap::new();
    for (id, g) in &st.index.games {
        let (Place::Journal { record, entries }, Some(at)) = (&g.place, g.finished) else {
            continue;
        };
        let (body, script, bodies) =
            read_log(&journal, *record, entries).map_err(|m| format!("game {id}: {m}"))?;
        let span = arc
            .push(&Rec::Game {
                id,
                platform: g.platform.as_deref(),
                request_id: g.request_id.as_deref(),
                at,
                record: &body,
                script: script.as_deref(),
                entries: bodies.iter().map(Vec::as_slice).collect(),
            })
            .map_err(|e| io("write the archive", e))?;
        moved.insert(&**id, span);
    }
    let archive_end = arc.finish().map_err(|e| io("sync the archive", e))?;

    // 2. The new journal.
    let tmp_path = shared.dir.join(format!("{}.compact", journal::JOURNAL));
    let tmp = open_rw(&tmp_path)
        .and_then(|f| f.set_len(0).map(|()| f))
        .map_err(|e| io("create the new journal", e))?;
    journal::check_magic(&tmp, journal::JOURNAL_MAGIC)?;
    let mut out = FrameWriter::new(&tmp, 16);
    let mut index = Index::default();
    for (hash, text) in &st.index.scripts {
        let rec = Rec::Script { hash, text };
        let span = out.push(&rec).map_err(|e| io("write the new journal", e))?;
        index.apply(span, &rec)?;
    }
    let mut kept = 0;
    for (id, g) in &st.index.games {
        let archived = |span: Span, entries: u64, at: u64, out: &mut FrameWriter<'_>| {
            out.push(&Rec::Archived {
                id,
                platform: g.platform.as_deref(),
                request_id: g.request_id.as_deref(),
                at,
                entries,
                span,
            })
            .map(|s| (Place::Archive { span, entries }, u64::from(s.len)))
        };
        let (place, bytes) = match (&g.place, g.finished) {
            (Place::Journal { record, entries }, None) => {
                kept += 1;
                let copy = |span: &Span, out: &mut FrameWriter<'_>| {
                    journal::read_raw(&journal, *span).and_then(|frame| out.push_raw(&frame))
                };
                let record = copy(record, &mut out).map_err(|e| io("copy a record", e))?;
                let mut bytes = u64::from(record.len);
                let mut spans = Vec::with_capacity(entries.len());
                for span in entries {
                    let s = copy(span, &mut out).map_err(|e| io("copy an entry", e))?;
                    bytes += u64::from(s.len);
                    spans.push(s);
                }
                (
                    Place::Journal {
                        record,
                        entries: spans,
                    },
                    bytes,
                )
            }
            (Place::Journal { entries, .. }, Some(at)) => {
                let span = *moved
                    .get(&**id)
                    .ok_or("internal error: game not archived")?;
                archived(span, entries.len() as u64, at, &mut out)
                    .map_err(|e| io("write the new journal", e))?
            }
            (Place::Archive { span, entries }, at) => {
                archived(*span, *entries, at.unwrap_or(0), &mut out)
                    .map_err(|e| io("write the new journal", e))?
            }
        };
        index.put(
            id,
            Game {
                place,
                finished: g.finished,
                platform: g.platform.clone(),
                request_id: g.request_id.clone(),
                journal_bytes: bytes,
            },
        );
    }
    let end = out.finish().map_err(|e| io("sync the new journal", e))?;
    let archived = moved.len();
    drop(st);
    fs::rename(&tmp_path, shared.dir.join(journal::JOURNAL))
        .map_err(|e| io("rename the new journal", e))?;

    // 3. Swap: from the rename on, the new file is the journal, whatever happens next.
    match shared.state.write() {
        Ok(mut st) => {
            st.index = index;
            st.journal = Arc::new(tmp);
        }
        Err(mut poisoned) => {
            let st = poisoned.get_mut();
            st.index = index;
            st.journal = Arc::new(tmp);
        }
    }
    w.end = end;
    w.alloc_end = end;
    w.archive_end = archive_end;
    if let Err(e) = legacy::sync_dir(&shared.dir) {
        tracing::warn!(store = "embedded", error = %e, "cannot sync the data directory after compaction");
    }
    Ok((kept, archived))
}
