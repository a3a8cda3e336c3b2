//! Compaction of the embedded store's journal: finished games leave the hot path, off the writer
//! thread (appends do not wait for it).
//!
//! Once the journal bytes of finished games reach both [`MIN_GARBAGE`] and the bytes that would
//! be kept, the writer thread (between batches, once no commit is in flight) copies the index,
//! which then describes the journal up to its end `E` exactly, and starts a compaction thread,
//! which, while the writer goes on appending after `E`:
//! 1. appends each finished game of the copy still in the journal to the archive as one frame
//!    (its record and whole log) and fsyncs the archive (only compaction writes the archive, one
//!    at a time; readers read it by position);
//! 2. writes a new journal beside the old one: the script table's frames, one small `Archived`
//!    frame per finished game, and the frames of each game in progress copied as they are, and
//!    fsyncs it;
//! 3. copies the old journal's frames from `E` up to its durable end (the syncer's, once a batch
//!    written after `E` is synced: bytes before it never change), applying them to the new
//!    index, and fsyncs again, a few rounds while the writer goes on; then wakes the writer.
//!
//! The writer, between batches and once no commit is in flight, swaps it in (its only pause,
//! about one batch's write and sync):
//! 4. copies the old journal's frames the thread did not (the last batches) to the new
//!    journal's end (the thread wrote zeros ahead of it), applying them to the new index,
//!    fsyncs it and renames it over the old one (the commit point), swaps the index and the file
//!    handle; the next commit fsyncs the directory before it answers (a write to the new
//!    journal is never acknowledged before its rename is durable);
//! 5. deletes the snapshot files of the games that expired.
//!
//! A crash before the rename leaves the old journal (and unreferenced bytes at the archive's end);
//! after it, the new journal, whose archive frames were fsynced first. So the journal read at open
//! holds the games in progress plus at most as many bytes again of finished ones, and a finished
//! game costs one archive frame and one index frame, whatever the length of its log. A finished
//! game of the copy gets no later frame (its log is closed), and an expired one no new game of its
//! id (the old index still holds it until the swap), so the tail applies cleanly.

use std::collections::HashMap;
use std::io;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::thread::JoinHandle;
use std::time::Instant;

use tokio::sync::mpsc::WeakSender;
use tokio::sync::oneshot;

use super::chunked::Positions;
use super::disk::DiskFile;
use super::index::{Game, Index, Place};
use super::journal::{self, FrameWriter, Rec, Span};
use super::ops::{Op, Queued, Reply};
use super::positions::Writer;
use super::retention::{self, MIN_GARBAGE, Schedule, archive_rewrite_due, cutoff};
use super::sidefile::{self, SideFile};
use super::syncer::Progress;
use super::{IoStep, Shared, open_rw};

mod swap;
use swap::{copy_durable_tail, swap, write_ahead};

/// A compaction running on its own thread, and the `compact_now` callers waiting for it.
pub(super) struct Running {
    /// Its result, sent before the writer is woken.
    built: Receiver<Result<Built, String>>,
    replies: Vec<Reply<()>>,
    archive_rewritten: bool,
    started: Instant,
}

/// The writer's side of compaction: at most one runs at a time; a forced one asked for while
/// one runs starts after it (so that it sees every write queued before it).
pub(super) struct Compactions {
    running: Option<Running>,
    /// The compaction threads started (joined at shutdown, so that the store's files are closed).
    threads: Vec<JoinHandle<()>>,
    /// `compact_now` callers waiting for the next compaction to start.
    forced: Vec<Reply<()>>,
    /// Tells the writer (through its queue) that the running compaction is built.
    wake: WeakSender<Queued>,
    /// The commits' progress: the durable end up to which the compaction thread copies the tail.
    progress: Arc<Progress>,
}

impl Compactions {
    pub(super) fn new(wake: WeakSender<Queued>, progress: Arc<Progress>) -> Compactions {
        Compactions {
            running: None,
            threads: Vec::new(),
            forced: Vec::new(),
            wake,
            progress,
        }
    }

    /// Between batches: finishes a built compaction (the writer's only pause: copying the
    /// journal's tail written meanwhile, renaming, swapping), then starts one if due, forced
    /// (`forced`: `compact_now` callers) or still asked for. `idle` waits until no commit is in
    /// flight and returns the durable end (`None`: the writer cannot tell).
    pub(super) fn step(
        &mut self,
        shared: &Arc<Shared>,
        w: &mut Writer,
        schedule: &mut Schedule,
        forced: Vec<Reply<()>>,
        mut idle: impl FnMut() -> Option<u64>,
    ) {
        self.forced.extend(forced);
        let built = self
            .running
            .as_ref()
            .and_then(|r| match r.built.try_recv() {
                Ok(built) => Some(built),
                Err(TryRecvError::Empty) => None,
                Err(TryRecvError::Disconnected) => {
                    Some(Err("the compaction thread stopped".into()))
                }
            });
        if let Some(built) = built {
            if let Some(r) = self.running.take() {
                finish(shared, w, r, built, &mut idle, &self.progress);
            }
        }
        if self.running.is_some() {
            return;
        }
        let replies = std::mem::take(&mut self.forced);
        self.threads.retain(|t| !t.is_finished());
        match start(
            shared,
            w,
            schedule,
            !replies.is_empty(),
            &mut idle,
            &self.wake,
            &self.progress,
        ) {
            Some((thread, running)) => {
                self.threads.push(thread);
                self.running = Some(Running { replies, ..running });
            }
            // Nothing to compact.
            None => replies.into_iter().for_each(|r| drop(r.send(Ok(())))),
        }
    }

    /// At shutdown: waits for a running compaction and leaves its result unused (the old
    /// journal stays the store's; the new one is never renamed in).
    pub(super) fn stop(&mut self) {
        self.running.take();
        for t in self.threads.drain(..) {
            if t.join().is_err() {
                tracing::warn!(store = "embedded", "compaction thread panicked");
            }
        }
    }
}

/// Starts a compaction if due (or if `force`) on its own thread, from a copy of the index taken
/// once no commit is in flight (`idle`); returns its thread and what the writer keeps of it.
fn start(
    shared: &Arc<Shared>,
    w: &Writer,
    schedule: &mut Schedule,
    force: bool,
    idle: &mut impl FnMut() -> Option<u64>,
    wake: &WeakSender<Queued>,
    progress: &Arc<Progress>,
) -> Option<(JoinHandle<()>, Running)> {
    let retention = shared.retention;
    let check = retention.is_some() && (force || schedule.due());
    let now = shared.now();
    let due = |st: &super::State| {
        let (garbage, kept) = (st.index.garbage, st.index.kept);
        let journal_due = (force && garbage > 0) || (garbage >= MIN_GARBAGE && garbage >= kept);
        let archive_due = check
            && retention.is_some_and(|r| {
                archive_rewrite_due(&st.index, w.archive_end, cutoff(now, r), force)
            });
        (journal_due, archive_due)
    };
    let (journal_due, archive_due) = shared.state.read().map_or((false, false), |st| due(&st));
    if !journal_due && !archive_due {
        return None;
    }
    let durable = idle()?;
    if shared.broken.load(Ordering::Acquire) {
        return None;
    }
    let t = Instant::now();
    let snapshot = {
        let st = shared.state.read().ok()?;
        Snapshot {
            games: st.index.games.clone(),
            scripts: st.index.scripts.clone(),
            journal: Arc::clone(&st.journal),
            archive: Arc::clone(&st.archive),
            side: st.index.side.reader(),
            end: w.end,
            archive_end: w.archive_end,
            durable,
        }
    };
    crate::metrics::store_commit_phase("compaction_start", t.elapsed().as_secs_f64());
    let plan = Plan {
        expire_up_to: retention.map(|r| cutoff(now, r)),
        rewrite_archive: archive_due,
    };
    let (shared, wake, progress) = (Arc::clone(shared), wake.clone(), Arc::clone(progress));
    let (tx, built) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("shuangkou-store-compactor".into())
        .spawn(move || {
            let built = build(&shared, &snapshot, &plan)
                .and_then(|b| copy_durable_tail(b, &snapshot, &progress))
                .and_then(write_ahead)
                .and_then(|b| {
                    // Once more before the writer is woken (tests hold it here: what is
                    // written meanwhile is the writer's to copy).
                    let held = shared.fault(IoStep::Compact);
                    held.map(|()| b).map_err(|e| format!("compaction: {e}"))
                });
            let _ = tx.send(built);
            // Then wake the writer (unless the store is closing: then nobody swaps it in).
            if let Some(queue) = wake.upgrade() {
                let (reply, _) = oneshot::channel();
                let op = Op::Sync {
                    op: "compacted",
                    reply,
                };
                let _ = queue.blocking_send(Queued {
                    op,
                    at: Instant::now(),
                });
            }
        });
    match spawned {
        Ok(thread) => Some((
            thread,
            Running {
                built,
                replies: Vec::new(),
                archive_rewritten: archive_due,
                started: t,
            },
        )),
        Err(e) => {
            tracing::warn!(store = "embedded", error = %e, "cannot start the compaction thread");
            None
        }
    }
}

/// Swaps a built compaction in (on the writer, no commit in flight), logs it and answers its
/// waiters; a failure is logged and the old journal stays in use.
fn finish(
    shared: &Shared,
    w: &mut Writer,
    r: Running,
    built: Result<Built, String>,
    idle: &mut impl FnMut() -> Option<u64>,
    progress: &Progress,
) {
    let t = Instant::now();
    let done = built.and_then(|b| swap(shared, w, b, idle, progress));
    let pause = t.elapsed();
    crate::metrics::store_commit_phase("compaction_swap", pause.as_secs_f64());
    match done {
        Ok(done) => {
            shared.compactions.fetch_add(1, Ordering::Relaxed);
            tracing::info!(
                store = "embedded",
                in_progress = done.kept,
                archived = done.archived,
                expired = done.expired,
                archive_rewritten = r.archive_rewritten,
                journal_bytes = w.end,
                archive_bytes = w.archive_end,
                tail_bytes = done.tail,
                thread_tail_bytes = done.thread_tail,
                ms = r.started.elapsed().as_millis() as u64,
                writer_pause_us = pause.as_micros() as u64,
                "journal compacted"
            );
        }
        Err(m) => tracing::warn!(store = "embedded", error = %m,
            "journal compaction failed; the old journal stays in use"),
    }
    r.replies.into_iter().for_each(|r| drop(r.send(Ok(()))));
}

/// A game's create body, the hash of the script it pins, and its log bodies.
type GameLog = (Vec<u8>, Option<String>, Vec<Vec<u8>>);

/// Reads a game's create body, script hash and log bodies from the journal.
fn read_log(
    journal: &DiskFile,
    side: &DiskFile,
    record: Span,
    entries: &Positions,
) -> Result<GameLog, String> {
    let payload = journal::read_frame(journal, record)?;
    let Rec::Create { body, script, .. } = journal::decode(&payload)? else {
        return Err("the record frame is not a create".into());
    };
    let (body, script) = (body.to_vec(), script.map(str::to_string));
    let mut bodies = Vec::with_capacity(entries.len());
    for span in entries.page(side, 0, usize::MAX)?.iter() {
        let payload = journal::read_frame(journal, span)?;
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
    /// Journal bytes written while it was built, copied by the writer at the swap.
    tail: u64,
    /// Journal bytes written while it was built, copied by the compaction thread.
    thread_tail: u64,
}

/// The index and files a compaction works from: a copy taken once no commit was in flight, so
/// it describes the journal up to `end` exactly (the writer goes on appending after `end`).
struct Snapshot {
    games: HashMap<Box<str>, Game>,
    scripts: HashMap<Box<str>, Arc<str>>,
    journal: Arc<DiskFile>,
    archive: Arc<DiskFile>,
    /// The positions side file of the copied index.
    side: Arc<DiskFile>,
    end: u64,
    archive_end: u64,
    /// The syncer's durable end when the copy was taken: `end`, unless no batch was synced since
    /// the last swap (then it is an offset in the journal before that one).
    durable: u64,
}

/// A compaction built off the writer thread, waiting to be swapped in.
pub(super) struct Built {
    /// The new journal (not yet renamed in), its path and the end of its data.
    tmp: DiskFile,
    tmp_path: std::path::PathBuf,
    end: u64,
    /// The new journal's length: zeros are written ahead from `end` ([`swap::write_ahead`]).
    alloc_end: u64,
    /// The index of the new journal up to `end`.
    index: Index,
    /// The old journal and where its frames copied so far end (its tail from there is copied).
    old: Arc<DiskFile>,
    from: u64,
    /// The old journal's bytes after the snapshot the compaction thread copied.
    thread_tail: u64,
    next_archive: Option<Arc<DiskFile>>,
    archive_end: u64,
    dropped: Vec<String>,
    kept: usize,
    archived: usize,
}

/// Builds a compaction from a snapshot (on the compaction thread): the archive frames of the
/// finished games (fsynced), and the new journal up to the snapshot's end (fsynced).
fn build(shared: &Shared, snap: &Snapshot, plan: &Plan) -> Result<Built, String> {
    let (journal, archive) = (&snap.journal, &snap.archive);
    let io = |what: &str, e: io::Error| format!("{what}: {e}");
    let expired = |g: &Game| retention::expired(g.finished, plan.expire_up_to);
    shared
        .fault(IoStep::Compact)
        .map_err(|e| io("compaction", e))?;
    retention::finish_rewrite(&shared.disk, &shared.dir)?;
    // The directory's changes of the last swap (which left its fsync to the next commit, and
    // an archive rewrite's rename) are durable before this compaction's new journal exists:
    // at open, a new journal beside a new archive means the rewrite did not commit.
    shared
        .disk
        .sync_dir(&shared.dir)
        .map_err(|e| io("sync the data directory", e))?;

    // 0. The new journal's file exists (durably) before a new archive does: at open, a new
    //    archive without it means the journal that refers to it was renamed in.
    let tmp_path = shared.dir.join(retention::JOURNAL_NEXT);
    let tmp = open_rw(&shared.disk, &tmp_path)
        .and_then(|f| f.set_len(0).map(|()| f))
        .map_err(|e| io("create the new journal", e))?;
    journal::check_magic(&tmp, journal::JOURNAL_MAGIC)?;
    let next_archive = if plan.rewrite_archive {
        shared
            .disk
            .sync_dir(&shared.dir)
            .map_err(|e| io("sync the data directory", e))?;
        let path = shared.dir.join(retention::ARCHIVE_NEXT);
        let f = open_rw(&shared.disk, &path)
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
        None => (archive, snap.archive_end),
    };
    let mut arc = FrameWriter::new(target, start);
    let mut moved = HashMap::new();
    if plan.rewrite_archive {
        for (id, g) in &snap.games {
            if let (Place::Archive { span, .. }, false) = (&g.place, expired(g)) {
                let frame = journal::read_raw(archive, *span).map_err(|e| io("copy a game", e))?;
                let new = arc
                    .push_raw(&frame)
                    .map_err(|e| io("write the archive", e))?;
                moved.insert(&**id, new);
            }
        }
    }
    for (id, g) in &snap.games {
        let (Place::Journal { record, entries }, Some(at), false) =
            (&g.place, g.finished, expired(g))
        else {
            continue;
        };
        let (body, script, bodies) = read_log(journal, &snap.side, *record, entries)
            .map_err(|m| format!("game {id}: {m}"))?;
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
    let side_path = shared.dir.join(sidefile::NEXT);
    let side = SideFile::create(&shared.disk, &side_path)
        .map_err(|e| io("create the new positions file", e))?;
    let mut index = Index::new(side);
    for (hash, text) in &snap.scripts {
        let rec = Rec::Script { hash, text };
        let span = out.push(&rec).map_err(|e| io("write the new journal", e))?;
        index.apply(span, &rec)?;
    }
    let (mut kept, mut archived) = (0, 0);
    let mut dropped = Vec::new();
    for (id, g) in &snap.games {
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
                    journal::read_raw(journal, *span).and_then(|frame| out.push_raw(&frame))
                };
                let record = copy(record, &mut out).map_err(|e| io("copy a record", e))?;
                let mut bytes = u64::from(record.len);
                let mut spans = Positions::default();
                for span in entries.page(&snap.side, 0, usize::MAX)?.iter() {
                    let s = copy(&span, &mut out).map_err(|e| io("copy an entry", e))?;
                    bytes += u64::from(s.len);
                    spans.push(s, &mut index.side);
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
    index.shrink_to_fit();
    Ok(Built {
        tmp,
        tmp_path,
        end,
        alloc_end: end,
        index,
        old: Arc::clone(journal),
        from: snap.end,
        thread_tail: 0,
        next_archive,
        archive_end,
        dropped,
        kept,
        archived,
    })
}
