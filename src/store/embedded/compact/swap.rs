//! The end of a compaction: the old journal's tail (the frames written after the snapshot it was
//! built from) copied into the new journal, most of it on the compaction thread up to the
//! durable end ([`copy_durable_tail`]), and the new journal's zeros written ahead there too
//! ([`write_ahead`]); the rest of the tail (about one batch) on the writer, which then renames
//! the new journal in ([`swap`]). The writer's pause is that one write, its `fdatasync` and the
//! rename: the directory's fsync after the rename is left to the next commit, which does it
//! before it answers (`syncer`), as a write to the renamed journal must not be acknowledged
//! before the rename is durable.

use std::io;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::super::positions::{PREALLOCATE, Writer};
use super::super::syncer::Progress;
use super::super::{Shared, journal, retention, sidefile, snapshots};
use super::{Built, Done, Snapshot};

/// Swaps a built compaction in, on the writer thread once no commit is in flight (`idle`): the
/// frames appended to the old journal after those the compaction thread copied are copied to
/// the new one (and applied to its index), which is fsynced and renamed in.
pub(super) fn swap(
    shared: &Shared,
    w: &mut Writer,
    built: Built,
    idle: &mut impl FnMut() -> Option<u64>,
    progress: &Progress,
) -> Result<Done, String> {
    let io = |what: &str, e: io::Error| format!("{what}: {e}");
    let (disk, dir) = (&shared.disk, &shared.dir);
    idle().ok_or("the durable end is unknown")?;
    if shared.broken.load(Ordering::Acquire) {
        return Err("a commit failed meanwhile".into());
    }
    let Built {
        tmp,
        tmp_path,
        end: base,
        alloc_end,
        mut index,
        old,
        from,
        thread_tail,
        next_archive,
        archive_end,
        dropped,
        kept,
        archived,
    } = built;
    let rewrote = next_archive.is_some();
    if from > w.end {
        return Err(format!(
            "the compaction thread copied the journal up to {from}, past its end {}",
            w.end
        ));
    }
    let tail = journal::read_raw_range(&old, from, w.end).map_err(|e| io("read the tail", e))?;
    let end = base + tail.len() as u64;
    if !tail.is_empty() {
        journal::frames(&tail, base, |span, payload| {
            index.apply(span, &journal::decode(payload)?)
        })
        .map_err(|m| format!("the journal's tail: {m}"))?;
        tmp.write_all_at(&tail, base)
            .and_then(|()| tmp.sync_data())
            .map_err(|e| io("write the tail to the new journal", e))?;
    }
    // From here on, a commit fsyncs the directory before it answers (the rename below).
    shared.dir_unsynced.store(true, Ordering::Release);
    // The new archive's name is durable before the journal that refers to it.
    if next_archive.is_some() {
        disk.sync_dir(dir)
            .map_err(|e| io("sync the data directory", e))?;
    }
    disk.rename(&tmp_path, &dir.join(journal::JOURNAL))
        .map_err(|e| io("rename the new journal", e))?;
    // The new index's positions side file takes the old one's name (derived data: whatever the
    // name, the index holds its handle, and the next open rebuilds it).
    if let Err(e) = disk.rename(&dir.join(sidefile::NEXT), &dir.join(sidefile::FILE)) {
        tracing::warn!(store = "embedded", error = %e, "cannot rename the new positions file");
    }

    // 3. Swap: from the rename on, the new file is the journal, whatever happens next.
    let swap = |st: &mut super::super::State| {
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
    w.alloc_end = alloc_end.max(end);
    w.archive_end = archive_end;
    // Everything up to `end` is fsynced in the new journal, and no batch is in flight.
    progress.swapped(end);
    if rewrote {
        // The new journal's rename must be durable before the archive's (see `retention`): an
        // archive rewrite (rare) fsyncs the directory in the swap. The archive's own rename
        // needs no fsync before a commit is answered (at open, a new archive left alone is
        // renamed in), the next commit's covers it.
        disk.sync_dir(dir)
            .and_then(|()| {
                disk.rename(
                    &dir.join(retention::ARCHIVE_NEXT),
                    &dir.join(journal::ARCHIVE),
                )
            })
            .map_err(|e| io("rename the new archive", e))?;
    }
    // 5. The expired games' snapshot files, once the journal without them is in. A snapshot is a
    //    cache: had the rename not lasted, the game would replay its log instead.
    for id in &dropped {
        if let Err(e) = snapshots::delete(disk, dir, id) {
            tracing::warn!(store = "embedded", game = %id, error = %e,
                "cannot delete the snapshot file of an expired game");
        }
    }
    Ok(Done {
        kept,
        archived,
        expired: dropped.len(),
        tail: tail.len() as u64,
        thread_tail,
    })
}

/// Rounds of [`copy_durable_tail`] at most; it stops sooner once a round copies less than
/// [`SMALL_TAIL`] (what is left for the writer is then about one round's writes).
const TAIL_ROUNDS: usize = 4;
const SMALL_TAIL: u64 = 64 << 10;

/// On the compaction thread, after [`build`]: copies the old journal's frames from the
/// snapshot's end up to its durable end into the new journal (applied to its index, fsynced),
/// so that the writer's swap copies only what was written after the last round. The syncer's
/// durable end is an offset in the old journal when the snapshot ended there, or once it moved
/// since (a batch written after the snapshot was synced: no swap happens while this compaction
/// runs); bytes before it are never rewritten, even when a later commit fails.
pub(super) fn copy_durable_tail(
    mut b: Built,
    snap: &Snapshot,
    progress: &Progress,
) -> Result<Built, String> {
    for _ in 0..TAIL_ROUNDS {
        let Some(done) = progress.done() else { break };
        let in_this_journal = snap.durable == snap.end || done.durable != snap.durable;
        if !in_this_journal || done.durable <= b.from {
            break;
        }
        let tail = journal::read_raw_range(&b.old, b.from, done.durable)
            .map_err(|e| format!("read the durable tail: {e}"))?;
        let index = &mut b.index;
        journal::frames(&tail, b.end, |span, payload| {
            index.apply(span, &journal::decode(payload)?)
        })
        .map_err(|m| format!("the journal's durable tail: {m}"))?;
        b.tmp
            .write_all_at(&tail, b.end)
            .and_then(|()| b.tmp.sync_data())
            .map_err(|e| format!("write the durable tail to the new journal: {e}"))?;
        let n = tail.len() as u64;
        b.end += n;
        b.from += n;
        b.thread_tail += n;
        if n < SMALL_TAIL {
            break;
        }
    }
    Ok(b)
}

/// On the compaction thread, last: the new journal's zeros written ahead of its end (and
/// fsynced), so that the first commit after the swap need not write them (the writer's tail
/// copy overwrites the first of them).
pub(super) fn write_ahead(mut b: Built) -> Result<Built, String> {
    b.tmp
        .write_zeros_at(b.end, PREALLOCATE)
        .and_then(|()| b.tmp.sync_data())
        .map_err(|e| format!("write ahead in the new journal: {e}"))?;
    b.alloc_end = b.end + PREALLOCATE;
    Ok(b)
}
