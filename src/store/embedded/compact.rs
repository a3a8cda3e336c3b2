//! Compaction of the embedded store's journal: finished games leave the hot path.
//!
//! Once the journal bytes of finished games reach both [`MIN_GARBAGE`] and the bytes that would
//! be kept, the writer thread (between batches, once no commit is in flight, so the index cannot
//! change meanwhile):
//! 1. appends each finished game still in the journal to the archive as one frame (its record and
//!    whole log) and fsyncs the archive;
//! 2. writes a new journal beside the old one: the script table's frames, one small `Archived`
//!    frame per finished game, and the frames of each game in progress copied as they are; fsyncs it and renames it over the
//!    old one (the commit point), then fsyncs the directory;
//! 3. swaps the index and the file handle;
//! 4. deletes the snapshot files of the games that expired.
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
use super::retention::{self, MIN_GARBAGE, Schedule, archive_rewrite_due, cutoff};
use super::{Shared, legacy, open_rw, snapshots};

/// Compacts if due (or if `force`), calling `idle` first (it waits until no commit is in
/// flight); failures are logged and the old journal stays in use.
pub(super) fn maybe(
    shared: &Shared,
    w: &mut Writer,
    schedule: &mut Schedule,
    force: bool,
    idle: impl FnOnce(),
) {
    let retention = shared.retention;
    let check = retention.is_some() && (force || schedule.due());
    let now = shared.now();
    let (journal_due, archive_due) = match shared.state.read() {
        Ok(st) => {
            let (garbage, kept) = (st.index.garbage, st.index.kept);
            let journal_due = (force && garbage > 0) || (garbage >= MIN_GARBAGE && garbage >= kept);
            let archive_due = check
                && retention.is_some_and(|r| {
                    archive_rewrite_due(&st.index, w.archive_end, cutoff(now, r), force)
                });
            (journal_due, archive_due)
        }
        Err(_) => (false, false),
    };
    if !journal_due && !archive_due {
        return;
    }
    idle();
    let t = Instant::now();
    let plan = Plan {
        expire_up_to: retention.map(|r| cutoff(now, r)),
        rewrite_archive: archive_due,
    };
    match run(shared, w, &plan) {
        Ok(done) => {
            shared.compactions.fetch_add(1, Ordering::Relaxed);
            tracing::info!(
                store = "embedded",
                in_progress = done.kept,
                archived = done.archived,
                expired = done.expired,
                archive_rewritten = plan.rewrite_archive,
                journal_bytes = w.end,
                archive_bytes = w.archive_end,
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

/// What one compaction does besides folding finished games out of the journal.
struct Plan {
    /// Games finished at or before this unix second are deleted (`None`: every game is kept).
    expire_up_to: Option<u64>,
    /// The archive is rewritten with the retained games only (else finished games are appended
    /// to it, and expired ones already in it stay as unreferenced bytes until a rewrite).
    rewrite_archive: bool,
}

/// What a compaction did.
struct Done {
    kept: usize,
    archived: usize,
    expired: usize,
}

/// Runs one compaction.
fn run(shared: &Shared, w: &mut Writer, plan: &Plan) -> Result<Done, String> {
    let st = shared
        .state
        .read()
        .map_err(|_| "internal lock poisoned".to_string())?;
    let journal = Arc::clone(&st.journal);
    let archive = Arc::clone(&st.archive);
    let io = |what: &str, e: io::Error| format!("{what}: {e}");
    let expired = |g: &Game| retention::expired(g.finished, plan.expire_up_to);
    retention::finish_rewrite(&shared.dir)?;

    // 0. The new journal's file exists (durably) before a new archive does: at open, a new
    //    archive without it means the journal that refers to it was renamed in.
    let tmp_path = shared.dir.join(retention::JOURNAL_NEXT);
    let tmp = open_rw(&tmp_path)
        .and_then(|f| f.set_len(0).map(|()| f))
        .map_err(|e| io("create the new journal", e))?;
    journal::check_magic(&tmp, journal::JOURNAL_MAGIC)?;
    let next_archive = if plan.rewrite_archive {
        legacy::sync_dir(&shared.dir).map_err(|e| io("sync the data directory", e))?;
        let path = shared.dir.join(retention::ARCHIVE_NEXT);
        let f = open_rw(&path)
            .and_then(|f| f.set_len(0).map(|()| f))
            .map_err(|e| io("create the new archive", e))?;
        journal::check_magic(&f, journal::ARCHIVE_MAGIC)?;
        Some(Arc::new(f))
    } else {
        None
    };

    // 1. Every retained game for the archive: with a rewrite, the archived ones copied as they
    //    are, then the finished games still in the journal.
    let (target, start) = match &next_archive {
        Some(f) => (f, 16),
        None => (&archive, w.archive_end),
    };
    let mut arc = FrameWriter::new(target, start);
    let mut moved = std::collections::HashMap::new();
    if plan.rewrite_archive {
        for (id, g) in &st.index.games {
            if let (Place::Archive { span, .. }, false) = (&g.place, expired(g)) {
                let frame = journal::read_raw(&archive, *span).map_err(|e| io("copy a game", e))?;
                let new = arc
                    .push_raw(&frame)
                    .map_err(|e| io("write the archive", e))?;
                moved.insert(&**id, new);
            }
        }
    }
    for (id, g) in &st.index.games {
        let (Place::Journal { record, entries }, Some(at), false) =
            (&g.place, g.finished, expired(g))
        else {
            continue;
        };
        let (body, script, bodies) =
            read_log(&journal, *record, entries).map_err(|m| format!("game {id}: {m}"))?;
        let span = arc
            .push(&Rec::Game {
                game: g.finished_head(id, at),
                record: &body,
                script: script.as_deref(),
                entries: bodies.iter().map(Vec::as_slice).collect(),
            })
            .map_err(|e| io("write the archive", e))?;
        moved.insert(&**id, span);
    }
    let archive_end = arc.finish().map_err(|e| io("sync the archive", e))?;

    // 2. The new journal.
    let mut out = FrameWriter::new(&tmp, 16);
    let mut index = Index::default();
    for (hash, text) in &st.index.scripts {
        let rec = Rec::Script { hash, text };
        let span = out.push(&rec).map_err(|e| io("write the new journal", e))?;
        index.apply(span, &rec)?;
    }
    let (mut kept, mut archived) = (0, 0);
    let mut dropped = Vec::new();
    for (id, g) in &st.index.games {
        if expired(g) {
            dropped.push(id.to_string());
            continue;
        }
        let archived_at = |span: Span, entries: u64, at: u64, out: &mut FrameWriter<'_>| {
            out.push(&Rec::Archived {
                game: g.finished_head(id, at),
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
                archived += 1;
                let span = *moved
                    .get(&**id)
                    .ok_or("internal error: game not archived")?;
                archived_at(span, entries.len() as u64, at, &mut out)
                    .map_err(|e| io("write the new journal", e))?
            }
            (Place::Archive { span, entries }, at) => {
                let span = if plan.rewrite_archive {
                    *moved.get(&**id).ok_or("internal error: game not copied")?
                } else {
                    *span
                };
                archived_at(span, *entries, at.unwrap_or(0), &mut out)
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
    drop(st);
    // The new archive's name is durable before the journal that refers to it.
    if next_archive.is_some() {
        legacy::sync_dir(&shared.dir).map_err(|e| io("sync the data directory", e))?;
    }
    fs::rename(&tmp_path, shared.dir.join(journal::JOURNAL))
        .map_err(|e| io("rename the new journal", e))?;

    // 3. Swap: from the rename on, the new file is the journal, whatever happens next.
    let swap = |st: &mut super::State| {
        st.index = index;
        st.journal = Arc::new(tmp);
        if let Some(f) = next_archive {
            st.archive = f;
        }
    };
    match shared.state.write() {
        Ok(mut st) => swap(&mut st),
        Err(mut poisoned) => swap(poisoned.get_mut()),
    }
    w.end = end;
    w.alloc_end = end;
    w.archive_end = archive_end;
    if plan.rewrite_archive {
        // The new journal's rename must be durable before the archive's (see `retention`).
        legacy::sync_dir(&shared.dir)
            .and_then(|()| {
                fs::rename(
                    shared.dir.join(retention::ARCHIVE_NEXT),
                    shared.dir.join(journal::ARCHIVE),
                )
            })
            .map_err(|e| io("rename the new archive", e))?;
    }
    if let Err(e) = legacy::sync_dir(&shared.dir) {
        tracing::warn!(store = "embedded", error = %e, "cannot sync the data directory after compaction");
    }
    // 4. The expired games' snapshot files, once the journal without them is in. A snapshot is a
    //    cache: had the rename not lasted, the game would replay its log instead.
    for id in &dropped {
        if let Err(e) = snapshots::delete(&shared.dir, id) {
            tracing::warn!(store = "embedded", game = %id, error = %e,
                "cannot delete the snapshot file of an expired game");
        }
    }
    Ok(Done {
        kept,
        archived,
        expired: dropped.len(),
    })
}
