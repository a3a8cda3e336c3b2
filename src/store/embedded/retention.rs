//! How long the embedded store keeps finished games (`--finished-retention`): which games have
//! expired, when the archive is worth rewriting without them, and the end (at open) of a
//! rewrite a crash interrupted.
//!
//! Expired games leave the index at the next compaction (a later load finds no game). Their
//! archive bytes are reclaimed by a rewrite of the archive, due when the bytes no retained game
//! refers to reach both [`MIN_GARBAGE`] and the retained bytes, so the archive holds at most
//! about twice the games finished within the retention period.
//!
//! # A rewrite's commit order
//! 1. the new journal's file (`shuangkou.log.compact`) is created and the directory fsynced;
//! 2. the new archive (`shuangkou.archive.compact`) is written and fsynced, then the directory;
//! 3. the new journal (which refers to the new archive) is renamed over `shuangkou.log` (the
//!    commit point) and the directory fsynced;
//! 4. the new archive is renamed over `shuangkou.archive`.
//!
//! So at open, a `shuangkou.archive.compact` beside a `shuangkou.log.compact` is a rewrite that
//! did not commit (the new archive is deleted), and one alone is a rewrite whose journal
//! committed (its rename is finished).

use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::disk::Disk;
use super::index::{Index, Place};
use super::journal;

/// Finished games' journal bytes below which the journal is never compacted (and expired
/// archive bytes below which the archive is not rewritten).
pub const MIN_GARBAGE: u64 = 32 << 20;

/// The new journal a compaction writes before renaming it in.
pub(super) const JOURNAL_NEXT: &str = "shuangkou.log.compact";
/// The new archive an archive rewrite writes before renaming it in.
pub(super) const ARCHIVE_NEXT: &str = "shuangkou.archive.compact";

/// How often the writer looks for expired games (a scan of the index).
pub(super) const CHECK_EVERY: Duration = Duration::from_secs(60);

/// Unix seconds now.
pub(super) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// When the writer last looked for expired games.
pub(super) struct Schedule {
    checked: Option<Instant>,
}

impl Schedule {
    pub(super) fn new() -> Schedule {
        Schedule { checked: None }
    }

    /// Whether a check is due (the first call, then every [`CHECK_EVERY`]); a `true` starts
    /// the next period.
    pub(super) fn due(&mut self) -> bool {
        let now = Instant::now();
        if self.checked.is_some_and(|t| now - t < CHECK_EVERY) {
            return false;
        }
        self.checked = Some(now);
        true
    }
}

/// The last finish time (unix seconds) that has expired at `now` under `retention`.
pub(super) fn cutoff(now: u64, retention: Duration) -> u64 {
    now.saturating_sub(retention.as_secs())
}

/// Whether a game finished at `finished` has expired (`up_to`: the cutoff, `None` keeps all).
pub(super) fn expired(finished: Option<u64>, up_to: Option<u64>) -> bool {
    matches!((finished, up_to), (Some(at), Some(up_to)) if at <= up_to)
}

/// Whether the archive (`archive_end` bytes) should be rewritten: the bytes no game retained
/// past `cutoff` refers to reach [`MIN_GARBAGE`] and the retained bytes (`force`: any).
pub(super) fn archive_rewrite_due(
    index: &Index,
    archive_end: u64,
    cutoff: u64,
    force: bool,
) -> bool {
    let retained: u64 = index
        .games
        .values()
        .filter(|g| !expired(g.finished, Some(cutoff)))
        .map(|g| match g.place {
            Place::Archive { span, .. } => u64::from(span.len),
            Place::Journal { .. } => 0,
        })
        .sum();
    let garbage = archive_end.saturating_sub(journal::ARCHIVE_MAGIC.len() as u64 + retained);
    garbage > 0 && (force || (garbage >= MIN_GARBAGE && garbage >= retained))
}

/// Ends an archive rewrite left by a crash or a failed rename (see the module's commit order):
/// deletes an uncommitted new archive, or renames a committed one in. Runs at open and before
/// every compaction.
pub(super) fn finish_rewrite(disk: &Disk, dir: &Path) -> Result<(), String> {
    let next = dir.join(ARCHIVE_NEXT);
    if !disk.exists(&next) {
        return Ok(());
    }
    let committed = !disk.exists(&dir.join(JOURNAL_NEXT));
    let done = if committed {
        disk.rename(&next, &dir.join(journal::ARCHIVE))
    } else {
        disk.remove(&next)
    };
    done.and_then(|()| disk.sync_dir(dir)).map_err(|e| {
        format!(
            "cannot finish the archive rewrite ({}): {e}",
            next.display()
        )
    })?;
    tracing::info!(
        store = "embedded",
        committed,
        "archive rewrite interrupted earlier, finished"
    );
    Ok(())
}
