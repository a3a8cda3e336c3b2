//! One-time conversion of a data directory written by the redb layout (`shuangkou.redb`, layout
//! version 1, the embedded store until the append-ordered journal) into the journal format.
//!
//! At open, if `shuangkou.log` does not exist and `shuangkou.redb` does, every game is copied:
//! games in progress into the journal (their create record and log), finished games into the
//! archive (one frame each, with an `Archived` frame in the journal). The journal is written to a
//! temporary name, fsynced and renamed into place (the commit point of the conversion); only then
//! is the old file renamed to `shuangkou.redb.migrated` (kept as a backup; delete it once the new
//! store is trusted). A crash before the rename leaves the old file as it was, and the next start
//! converts again.
//!
//! Reads the redb file only; must not depend on the writer or the index.

use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use redb::{Database, DatabaseError, ReadableTable, StorageError, TableDefinition, TableHandle};

use super::disk::{Disk, Mode};
use super::journal::{self, Finished, FrameWriter, Rec};

/// The redb file of layout version 1.
pub const LEGACY_FILE: &str = "shuangkou.redb";
/// What the converted redb file is renamed to.
pub const MIGRATED_FILE: &str = "shuangkou.redb.migrated";

const SCHEMA_VERSION: u64 = 1;
type GameRow = (Option<&'static str>, Option<&'static str>, &'static [u8]);
const META: TableDefinition<&str, u64> = TableDefinition::new("shuangkou_meta");
const GAMES: TableDefinition<&str, GameRow> = TableDefinition::new("games");
const LOG: TableDefinition<(&str, u64), &[u8]> = TableDefinition::new("log");
const FINISHED: TableDefinition<&str, u64> = TableDefinition::new("finished");
const TABLES: [&str; 7] = [
    "shuangkou_meta",
    "games",
    "log",
    "log_len",
    "requests",
    "unfinished",
    "finished",
];

/// Describes an open failure, naming the file.
fn describe_open_error(label: &str, e: &DatabaseError) -> String {
    match e {
        DatabaseError::DatabaseAlreadyOpen => {
            format!("{label} is already open (another shuangkou process uses this data directory?)")
        }
        DatabaseError::Storage(StorageError::Corrupted(m)) => {
            format!("{label} is corrupt or not a redb database: {m}")
        }
        DatabaseError::UpgradeRequired(v) => {
            format!("{label} uses redb file format {v}, which this build cannot read")
        }
        DatabaseError::Storage(StorageError::Io(io)) if io.kind() == io::ErrorKind::InvalidData => {
            format!("{label} is corrupt or not a redb database: {io}")
        }
        other => format!("cannot open {label}: {other}"),
    }
}

fn err(label: &str) -> impl Fn(redb::Error) -> String + '_ {
    move |e| format!("{label}: {e}")
}

/// Checks that the redb file is a shuangkou store of layout version 1.
fn check_layout(db: &Database, label: &str) -> Result<(), String> {
    let e = err(label);
    let txn = db.begin_read().map_err(|x| e(x.into()))?;
    let names: Vec<String> = txn
        .list_tables()
        .map_err(|x| e(x.into()))?
        .map(|t| t.name().to_string())
        .collect();
    let foreign: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| !TABLES.contains(n))
        .collect();
    if !foreign.is_empty() {
        return Err(format!(
            "{label}: not a shuangkou store (unknown tables: {})",
            foreign.join(", ")
        ));
    }
    if names.is_empty() {
        return Ok(());
    }
    let meta = txn
        .open_table(META)
        .map_err(|_| format!("{label}: not a shuangkou store (no layout version)"))?;
    match meta
        .get("schema")
        .map_err(|x| e(x.into()))?
        .map(|v| v.value())
    {
        Some(SCHEMA_VERSION) => Ok(()),
        Some(v) => Err(format!(
            "{label}: store layout version {v} is not supported (this build converts {SCHEMA_VERSION})"
        )),
        None => Err(format!(
            "{label}: not a shuangkou store (no layout version)"
        )),
    }
}

/// Converts `dir/shuangkou.redb` if the journal does not exist yet. Returns the number of games
/// converted (`None` if there was nothing to convert).
pub fn migrate_if_needed(disk: &Disk, dir: &Path) -> Result<Option<usize>, String> {
    let old = dir.join(LEGACY_FILE);
    let journal_path = dir.join(journal::JOURNAL);
    if !disk.exists(&old) {
        return Ok(None);
    }
    if disk.exists(&journal_path) {
        tracing::warn!(store = "embedded", file = %old.display(),
            "a redb store file next to the journal is ignored (already converted?)");
        return Ok(None);
    }
    let label = old.display().to_string();
    // redb reports bad files as errors; the guard only turns a panic on a damaged file into the
    // same clear error instead of killing the process.
    let db = match catch_unwind(AssertUnwindSafe(|| Database::open(&old))) {
        Ok(Ok(db)) => db,
        Ok(Err(e)) => return Err(describe_open_error(&label, &e)),
        Err(_) => {
            return Err(format!(
                "{label} is corrupt (the database reader failed on it)"
            ));
        }
    };
    check_layout(&db, &label)?;
    let n = convert(disk, &db, dir, &label)?;
    drop(db);
    disk.rename(&old, &dir.join(MIGRATED_FILE))
        .map_err(|e| format!("cannot rename {label} after converting it: {e}"))?;
    disk.sync_dir(dir)
        .map_err(|e| format!("cannot sync {}: {e}", dir.display()))?;
    tracing::info!(store = "embedded", games = n, from = %label,
        "converted the redb store to the journal format (old file kept as {MIGRATED_FILE})");
    Ok(Some(n))
}

fn convert(disk: &Disk, db: &Database, dir: &Path, label: &str) -> Result<usize, String> {
    let e = err(label);
    let io_err = |what: &str, x: io::Error| format!("converting {label}: {what}: {x}");
    let archive = disk
        .open(&dir.join(journal::ARCHIVE), Mode::Truncate)
        .map_err(|x| io_err("create the archive", x))?;
    journal::check_magic(&archive, journal::ARCHIVE_MAGIC)?;
    let tmp_path = dir.join(format!("{}.converting", journal::JOURNAL));
    let tmp = disk
        .open(&tmp_path, Mode::Truncate)
        .map_err(|x| io_err("create the journal", x))?;
    journal::check_magic(&tmp, journal::JOURNAL_MAGIC)?;
    let mut arc = FrameWriter::new(&archive, 16);
    let mut log = FrameWriter::new(&tmp, 16);
    let txn = db.begin_read().map_err(|x| e(x.into()))?;
    let mut n = 0;
    if txn.list_tables().map_err(|x| e(x.into()))?.count() > 0 {
        let games = txn.open_table(GAMES).map_err(|x| e(x.into()))?;
        let entries_table = txn.open_table(LOG).map_err(|x| e(x.into()))?;
        let finished = txn.open_table(FINISHED).map_err(|x| e(x.into()))?;
        for row in games.iter().map_err(|x| e(x.into()))? {
            let (id, value) = row.map_err(|x| e(x.into()))?;
            let id = id.value();
            let (platform, request_id, record) = value.value();
            let mut bodies = Vec::new();
            for r in entries_table
                .range((id, 1)..=(id, u64::MAX))
                .map_err(|x| e(x.into()))?
            {
                let (_, body) = r.map_err(|x| e(x.into()))?;
                bodies.push(body.value().to_vec());
            }
            let at = finished
                .get(id)
                .map_err(|x| e(x.into()))?
                .map(|v| v.value());
            if let Some(at) = at {
                let game = Finished {
                    id,
                    platform,
                    request_id,
                    at,
                };
                let span = arc
                    .push(&Rec::Game {
                        game,
                        record,
                        script: None,
                        entries: bodies.iter().map(Vec::as_slice).collect(),
                    })
                    .map_err(|x| io_err("write the archive", x))?;
                log.push(&Rec::Archived {
                    game,
                    entries: bodies.len() as u64,
                    span,
                })
                .map_err(|x| io_err("write the journal", x))?;
            } else {
                log.push(&Rec::Create {
                    id,
                    platform,
                    request_id,
                    body: record,
                    script: None,
                })
                .map_err(|x| io_err("write the journal", x))?;
                for (i, body) in bodies.iter().enumerate() {
                    log.push(&Rec::Append {
                        id,
                        seq: i as u64 + 1,
                        body,
                    })
                    .map_err(|x| io_err("write the journal", x))?;
                }
            }
            n += 1;
        }
    }
    arc.finish().map_err(|x| io_err("sync the archive", x))?;
    log.finish().map_err(|x| io_err("sync the journal", x))?;
    disk.rename(&tmp_path, &dir.join(journal::JOURNAL))
        .map_err(|x| io_err("rename the journal", x))?;
    disk.sync_dir(dir)
        .map_err(|x| io_err("sync the directory", x))?;
    Ok(n)
}
