//! The embedded store's snapshots (`store::snapshots`): one file per game under
//! `DIR/snapshots/`, named by the hex of the game id, a sequence of frames
//! `[len u32][crc32 u32][seq u64][body]` (little-endian; the CRC covers seq and body), each
//! appended with one write. Apart from the journal on purpose: a snapshot is a cache, never
//! fsynced, and a torn or corrupt frame ends the file's readable part (the service then replays
//! more of the log).

use std::io;
use std::path::{Path, PathBuf};

use super::disk::{self, Disk};
use super::{EmbeddedStore, store_error};
use crate::store::{Snapshot, StoreError, snapshots::MAX_SNAPSHOT_BYTES};

/// The directory of the snapshot files, inside the store's directory.
pub const DIR: &str = "snapshots";

const HEADER: usize = 4 + 4 + 8;

/// The path of the game's snapshot file under the store's directory `dir`.
pub fn file_of(dir: &Path, id: &str) -> PathBuf {
    let name: String = id.bytes().map(|b| format!("{b:02x}")).collect();
    dir.join(DIR).join(name)
}

fn crc(seq: u64, body: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&seq.to_le_bytes());
    h.update(body);
    h.finalize()
}

/// Appends the frame of one snapshot to the game's file on the real disk (creating the
/// directory and the file).
pub fn append(dir: &Path, id: &str, seq: u64, body: &[u8]) -> io::Result<()> {
    append_on(&disk::real(), dir, id, seq, body)
}

/// Appends the frame of one snapshot to the game's file on `disk` (creating the directory and
/// the file), with one write.
pub fn append_on(disk: &Disk, dir: &Path, id: &str, seq: u64, body: &[u8]) -> io::Result<()> {
    let path = file_of(dir, id);
    if let Some(parent) = path.parent() {
        disk.create_dir_all(parent)?;
    }
    let len = u32::try_from(body.len()).map_err(|_| io::Error::other("snapshot too large"))?;
    let mut frame = Vec::with_capacity(HEADER + body.len());
    frame.extend_from_slice(&len.to_le_bytes());
    frame.extend_from_slice(&crc(seq, body).to_le_bytes());
    frame.extend_from_slice(&seq.to_le_bytes());
    frame.extend_from_slice(body);
    disk.append(&path, &frame)
}

/// Deletes the game's snapshot file (a game without one is not an error).
pub fn delete(disk: &Disk, dir: &Path, id: &str) -> io::Result<()> {
    match disk.remove(&file_of(dir, id)) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// The game id a snapshot file's name stands for (`None`: not a name [`file_of`] gives).
fn id_of(name: &str) -> Option<String> {
    if name.is_empty() || name.len() % 2 != 0 {
        return None;
    }
    let bytes = (0..name.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(name.get(i..i + 2)?, 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    String::from_utf8(bytes).ok()
}

/// Deletes every snapshot file under `dir` whose game `known` does not know (files left by
/// compactions that dropped games before their snapshot files were deleted with them); a file
/// whose name no game id gives is left alone. Returns the files deleted.
pub fn sweep_orphans(disk: &Disk, dir: &Path, known: impl Fn(&str) -> bool) -> io::Result<usize> {
    let entries = match disk.list(&dir.join(DIR)) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut deleted = 0;
    for (name, is_file) in entries {
        let Some(id) = id_of(&name) else {
            continue;
        };
        if !known(&id) && is_file {
            delete(disk, dir, &id)?;
            deleted += 1;
        }
    }
    Ok(deleted)
}

/// The game's snapshots at or before `seq`, oldest first (the last one written at a seq wins).
/// The file is read up to its first torn or corrupt frame.
pub fn read(disk: &Disk, dir: &Path, id: &str, seq: u64) -> io::Result<Vec<Snapshot>> {
    let bytes = match disk.open_read(&file_of(dir, id)) {
        Ok(f) => {
            let mut bytes = vec![0; usize::try_from(f.size()?).unwrap_or(0)];
            f.read_exact_at(&mut bytes, 0)?;
            bytes
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut by_seq = std::collections::BTreeMap::new();
    let mut rest = bytes.as_slice();
    while rest.len() >= HEADER {
        let word =
            |at: usize| u32::from_le_bytes([rest[at], rest[at + 1], rest[at + 2], rest[at + 3]]);
        let len = word(0) as usize;
        let sum = word(4);
        let mut s = [0u8; 8];
        s.copy_from_slice(&rest[8..16]);
        let at = u64::from_le_bytes(s);
        if len > MAX_SNAPSHOT_BYTES || rest.len() < HEADER + len {
            break;
        }
        let body = &rest[HEADER..HEADER + len];
        if crc(at, body) != sum {
            break;
        }
        if at <= seq {
            by_seq.insert(at, body.to_vec());
        }
        rest = &rest[HEADER + len..];
    }
    Ok(by_seq
        .into_iter()
        .map(|(seq, body)| Snapshot { seq, body })
        .collect())
}

impl EmbeddedStore {
    /// The write of one snapshot, to run on a blocking thread.
    pub fn snapshot_writer(
        &self,
        id: &str,
        seq: u64,
        body: Vec<u8>,
    ) -> impl FnOnce() -> Result<(), StoreError> + Send + 'static {
        let (disk, dir) = (self.shared.disk.clone(), self.shared.dir.clone());
        let id = id.to_string();
        move || {
            append_on(&disk, &dir, &id, seq, &body)
                .map_err(|e| store_error("put_snapshot", e.to_string()))
        }
    }

    /// Stores one snapshot (on a blocking thread) and waits for it.
    pub async fn put_snapshot(&self, id: &str, seq: u64, body: Vec<u8>) -> Result<(), StoreError> {
        tokio::task::spawn_blocking(self.snapshot_writer(id, seq, body))
            .await
            .map_err(|e| store_error("put_snapshot", format!("write task failed: {e}")))?
    }

    /// The game's snapshots at or before `seq`, oldest first.
    pub async fn snapshots(&self, id: &str, seq: u64) -> Result<Vec<Snapshot>, StoreError> {
        let (disk, dir) = (self.shared.disk.clone(), self.shared.dir.clone());
        let id = id.to_string();
        tokio::task::spawn_blocking(move || read(&disk, &dir, &id, seq))
            .await
            .map_err(|e| store_error("snapshots", format!("read task failed: {e}")))?
            .map_err(|e| store_error("snapshots", e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_read_back_up_to_a_torn_one() {
        use std::fs;
        let disk = disk::real();
        let read = |dir: &Path, id: &str, seq: u64| read(&disk, dir, id, seq);
        let delete = |dir: &Path, id: &str| delete(&disk, dir, id);
        let dir = std::env::temp_dir().join(format!("sk-snap-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        append(&dir, "g/1", 10, b"ten").unwrap();
        append(&dir, "g/1", 20, b"twenty").unwrap();
        append(&dir, "g/1", 20, b"twenty again").unwrap();
        append(&dir, "g/1", 30, b"thirty").unwrap();
        let all = read(&dir, "g/1", u64::MAX).unwrap();
        let seqs: Vec<u64> = all.iter().map(|s| s.seq).collect();
        assert_eq!(seqs, vec![10, 20, 30]);
        assert_eq!(all[1].body, b"twenty again");
        assert_eq!(read(&dir, "g/1", 25).unwrap().len(), 2);
        assert!(read(&dir, "other", 25).unwrap().is_empty());
        // A flipped byte in the third frame's body (after two headers and bodies of 3 and 6
        // bytes, and its own header): it and what follows are not read.
        let path = file_of(&dir, "g/1");
        let mut bytes = fs::read(&path).unwrap();
        bytes[3 * HEADER + 3 + 6] ^= 1;
        fs::write(&path, &bytes).unwrap();
        let back = read(&dir, "g/1", u64::MAX).unwrap();
        let seqs: Vec<u64> = back.iter().map(|s| s.seq).collect();
        assert_eq!(seqs, vec![10, 20]);
        assert_eq!(back[1].body, b"twenty");
        delete(&dir, "g/1").unwrap();
        assert!(!path.exists());
        assert!(read(&dir, "g/1", u64::MAX).unwrap().is_empty());
        // Deleting a game without a file (again, or never written) is not an error.
        delete(&dir, "g/1").unwrap();
        delete(&dir, "never").unwrap();
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_file_name_gives_back_its_game_id() {
        for id in ["g/1", "游戏-7", "a b"] {
            let path = file_of(Path::new("d"), id);
            let name = path.file_name().unwrap().to_str().unwrap();
            assert_eq!(id_of(name).as_deref(), Some(id));
        }
        for name in ["", "6", "zz", "ff", "notes.txt"] {
            assert_eq!(id_of(name), None, "{name}");
        }
    }
}
