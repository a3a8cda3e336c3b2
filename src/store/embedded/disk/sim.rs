//! A simulated disk that forgets what was not synced, for the crash-consistency test
//! (`tests/store_crash_sim.rs`); the server never uses it.
//!
//! Per file (inode) it keeps the durable content and, in order, the writes and truncations made
//! since the last `fdatasync`; per directory the durable names and, in order, the creations,
//! renames and removals made since the last directory fsync. A crash point is "the `n`th
//! operation that changes the disk fails, and the power goes there" ([`SimDisk::crash_at`]):
//! that operation and every later one (reads included) fail with an I/O error, and nothing
//! changes any more. [`SimDisk::image`] then gives the disk a reboot would find, chosen by the
//! caller's random numbers:
//! - each directory: its durable names plus a prefix (possibly empty, possibly all) of its
//!   pending changes, in order (a rename or create whose directory was not synced may be
//!   forgotten; metadata is journaled in order, as on ext4 or XFS);
//! - each file: its durable content plus, of its pending writes, either a prefix whose last
//!   write may be torn, or any subset, each write kept whole, dropped, or torn; a torn write
//!   keeps any subset of its 512-byte sectors (by file offset), the rest reads as what was
//!   there before (or zeros past the old end).
//!
//! Simplifications, on the safe side for a store that fsyncs its directory after creating and
//! renaming files: directories themselves are durable once created; `fdatasync` makes a file's
//! data and length durable (not its name); reads see the latest writes (the page cache).

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use super::{DiskFile, FileIo, Fs, Mode};

/// Sector size of torn writes.
pub const SECTOR: u64 = 512;

/// Zeros to copy from (reads past a file's data).
static ZEROS: [u8; 4096] = [0; 4096];

/// A file's bytes: `data`, then zeros up to `len`.
#[derive(Clone, Debug, Default)]
struct Content {
    len: u64,
    data: Vec<u8>,
}

impl Content {
    fn write(&mut self, off: u64, bytes: &[u8]) {
        let end = off as usize + bytes.len();
        if self.data.len() < end {
            self.data.resize(end, 0);
        }
        self.data[off as usize..end].copy_from_slice(bytes);
        self.len = self.len.max(end as u64);
    }

    fn zeros(&mut self, off: u64, len: u64) {
        let end = (off + len).min(self.data.len() as u64);
        if off < end {
            self.data[off as usize..end as usize].fill(0);
        }
        self.len = self.len.max(off + len);
    }

    fn set_len(&mut self, len: u64) {
        if (self.data.len() as u64) > len {
            self.data.truncate(len as usize);
        }
        self.len = len;
    }

    fn read(&self, buf: &mut [u8], off: u64) -> usize {
        if off >= self.len {
            return 0;
        }
        let n = (self.len - off).min(buf.len() as u64) as usize;
        let start = (off as usize).min(self.data.len());
        let from_data = (self.data.len() - start).min(n);
        buf[..from_data].copy_from_slice(&self.data[start..start + from_data]);
        for piece in buf[from_data..n].chunks_mut(ZEROS.len()) {
            piece.copy_from_slice(&ZEROS[..piece.len()]);
        }
        n
    }

    fn apply(&mut self, op: &FileOp) {
        match op {
            FileOp::Write { off, bytes } => self.write(*off, bytes),
            FileOp::Zeros { off, len } => self.zeros(*off, *len),
            FileOp::SetLen(len) => self.set_len(*len),
        }
    }
}

/// A change to a file not yet synced.
#[derive(Clone, Debug)]
enum FileOp {
    Write { off: u64, bytes: Vec<u8> },
    Zeros { off: u64, len: u64 },
    SetLen(u64),
}

impl FileOp {
    /// The op with only some of its sectors (`keep` says which, by sector number in the file).
    fn torn(&self, keep: &mut impl FnMut() -> bool) -> Vec<FileOp> {
        let (off, len) = match self {
            FileOp::Write { off, bytes } => (*off, bytes.len() as u64),
            FileOp::Zeros { off, len } => (*off, *len),
            FileOp::SetLen(_) => return vec![self.clone()],
        };
        let mut out = Vec::new();
        let mut at = off;
        while at < off + len {
            let next = ((at / SECTOR) + 1) * SECTOR;
            let end = next.min(off + len);
            if keep() {
                out.push(match self {
                    FileOp::Write { bytes, .. } => FileOp::Write {
                        off: at,
                        bytes: bytes[(at - off) as usize..(end - off) as usize].to_vec(),
                    },
                    _ => FileOp::Zeros {
                        off: at,
                        len: end - at,
                    },
                });
            }
            at = end;
        }
        out
    }
}

#[derive(Clone, Debug, Default)]
struct Inode {
    durable: Content,
    pending: Vec<FileOp>,
    live: Content,
}

/// A change to a directory not yet synced.
#[derive(Clone, Debug)]
enum DirOp {
    Link(String, usize),
    Rename(String, String),
    Unlink(String),
}

#[derive(Clone, Debug, Default)]
struct Dir {
    durable: BTreeMap<String, usize>,
    pending: Vec<DirOp>,
    live: BTreeMap<String, usize>,
}

fn apply_dir(names: &mut BTreeMap<String, usize>, op: &DirOp) {
    match op {
        DirOp::Link(name, ino) => {
            names.insert(name.clone(), *ino);
        }
        DirOp::Rename(from, to) => {
            if let Some(ino) = names.remove(from) {
                names.insert(to.clone(), ino);
            }
        }
        DirOp::Unlink(name) => {
            names.remove(name);
        }
    }
}

#[derive(Clone, Debug, Default)]
struct State {
    inodes: Vec<Inode>,
    dirs: BTreeMap<PathBuf, Dir>,
    /// Operations that changed (or would have changed) the disk so far.
    ops: u64,
    /// The operation number that fails and crashes the disk.
    crash_at: Option<u64>,
    crashed: bool,
    /// Every file name ever created (coverage statistics of tests).
    created: std::collections::BTreeSet<PathBuf>,
}

fn crashed() -> io::Error {
    io::Error::other("simulated power loss")
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{}: no such file (simulated disk)", path.display()),
    )
}

impl State {
    fn check(&self) -> io::Result<()> {
        if self.crashed { Err(crashed()) } else { Ok(()) }
    }

    /// Counts one operation that changes the disk; the crash point's fails and crashes it.
    fn step(&mut self) -> io::Result<()> {
        self.check()?;
        self.ops += 1;
        if self.crash_at == Some(self.ops) {
            self.crashed = true;
            return Err(crashed());
        }
        Ok(())
    }

    fn split<'p>(&self, path: &'p Path) -> io::Result<(PathBuf, &'p str)> {
        let parent = path.parent().ok_or_else(|| not_found(path))?;
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| not_found(path))?;
        if !self.dirs.contains_key(parent) {
            return Err(not_found(path));
        }
        Ok((parent.to_path_buf(), name))
    }

    fn lookup(&self, path: &Path) -> Option<usize> {
        let (dir, name) = self.split(path).ok()?;
        self.dirs.get(&dir)?.live.get(name).copied()
    }

    fn dir_op(&mut self, dir: &Path, op: DirOp) {
        if let Some(d) = self.dirs.get_mut(dir) {
            apply_dir(&mut d.live, &op);
            d.pending.push(op);
        }
    }

    fn file_op(&mut self, ino: usize, op: FileOp) {
        let inode = &mut self.inodes[ino];
        inode.live.apply(&op);
        inode.pending.push(op);
    }
}

/// The simulated disk (cheap to clone: clones share it).
#[derive(Clone, Default)]
pub struct SimDisk(Arc<Mutex<State>>);

impl SimDisk {
    pub fn new() -> SimDisk {
        SimDisk::default()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The disk as a [`super::Disk`], for [`crate::store::embedded::Options::disk`].
    pub fn disk(&self) -> super::Disk {
        Arc::new(self.clone())
    }

    /// Makes operation number `n` (counting from 1, operations that change the disk only)
    /// fail and crash the disk; `None`: never.
    pub fn crash_at(&self, n: Option<u64>) {
        self.state().crash_at = n;
    }

    /// Operations that changed the disk so far (the crash point's included).
    pub fn ops(&self) -> u64 {
        self.state().ops
    }

    /// Whether a file was ever created at `path` on this disk.
    pub fn ever_created(&self, path: &Path) -> bool {
        self.state().created.contains(path)
    }

    /// Whether the disk has crashed.
    pub fn crashed(&self) -> bool {
        self.state().crashed
    }

    /// The disk a reboot finds after a crash now: durable content plus pieces of what was not
    /// synced, chosen by `next` (random numbers). A fresh disk, not crashed, counting from 0.
    pub fn image(&self, next: &mut impl FnMut() -> u64) -> SimDisk {
        let st = self.state();
        let mut out = State::default();
        let mut inodes: BTreeMap<usize, usize> = BTreeMap::new();
        for (path, dir) in &st.dirs {
            let mut names = dir.durable.clone();
            let keep = pick_prefix(dir.pending.len(), next);
            for op in &dir.pending[..keep] {
                apply_dir(&mut names, op);
            }
            let mut live = BTreeMap::new();
            for (name, ino) in names {
                let new = *inodes.entry(ino).or_insert_with(|| {
                    let content = crash_content(&st.inodes[ino], next);
                    out.inodes.push(Inode {
                        durable: content.clone(),
                        pending: Vec::new(),
                        live: content,
                    });
                    out.inodes.len() - 1
                });
                live.insert(name, new);
            }
            out.dirs.insert(
                path.clone(),
                Dir {
                    durable: live.clone(),
                    pending: Vec::new(),
                    live,
                },
            );
        }
        SimDisk(Arc::new(Mutex::new(out)))
    }

    /// The live (latest) content of a file, if it exists (for tests' inspection).
    pub fn read_file(&self, path: &Path) -> Option<Vec<u8>> {
        let st = self.state();
        let ino = st.lookup(path)?;
        let c = &st.inodes[ino].live;
        let mut buf = vec![0; c.len as usize];
        c.read(&mut buf, 0);
        Some(buf)
    }

    /// Overwrites bytes of a file, durably (for tests that damage a file on purpose).
    pub fn poke(&self, path: &Path, off: u64, bytes: &[u8]) -> io::Result<()> {
        let mut st = self.state();
        let ino = st.lookup(path).ok_or_else(|| not_found(path))?;
        let inode = &mut st.inodes[ino];
        inode.live.write(off, bytes);
        inode.durable.write(off, bytes);
        Ok(())
    }
}

/// How many of `n` pending directory changes survive: none, all, or any number between.
fn pick_prefix(n: usize, next: &mut impl FnMut() -> u64) -> usize {
    match next() % 4 {
        0 => 0,
        1 => n,
        _ => (next() % (n as u64 + 1)) as usize,
    }
}

/// A file's content after a crash: durable, plus a prefix (the last torn) or a subset (each
/// whole, dropped or torn) of its pending changes.
fn crash_content(inode: &Inode, next: &mut impl FnMut() -> u64) -> Content {
    let mut c = inode.durable.clone();
    let pending = &inode.pending;
    if pending.is_empty() {
        return c;
    }
    match next() % 3 {
        0 => {
            let keep = (next() % (pending.len() as u64 + 1)) as usize;
            for op in &pending[..keep] {
                c.apply(op);
            }
            if let Some(op) = pending.get(keep) {
                for piece in op.torn(&mut || next() % 2 == 0) {
                    c.apply(&piece);
                }
            }
        }
        _ => {
            for op in pending {
                match next() % 3 {
                    0 => c.apply(op),
                    1 => {}
                    _ => {
                        for piece in op.torn(&mut || next() % 2 == 0) {
                            c.apply(&piece);
                        }
                    }
                }
            }
        }
    }
    c
}

/// An open file of the simulated disk: its inode (kept across renames, like a descriptor).
struct SimFile {
    disk: SimDisk,
    ino: usize,
}

impl FileIo for SimFile {
    fn read_at(&self, buf: &mut [u8], off: u64) -> io::Result<usize> {
        let st = self.disk.state();
        st.check()?;
        Ok(st.inodes[self.ino].live.read(buf, off))
    }

    fn write_all_at(&self, buf: &[u8], off: u64) -> io::Result<()> {
        let mut st = self.disk.state();
        st.step()?;
        st.file_op(
            self.ino,
            FileOp::Write {
                off,
                bytes: buf.to_vec(),
            },
        );
        Ok(())
    }

    fn write_zeros_at(&self, off: u64, len: u64) -> io::Result<()> {
        let mut st = self.disk.state();
        st.step()?;
        st.file_op(self.ino, FileOp::Zeros { off, len });
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        let mut st = self.disk.state();
        st.step()?;
        let inode = &mut st.inodes[self.ino];
        inode.pending.clear();
        inode.durable = inode.live.clone();
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut st = self.disk.state();
        st.step()?;
        st.file_op(self.ino, FileOp::SetLen(len));
        Ok(())
    }

    fn size(&self) -> io::Result<u64> {
        let st = self.disk.state();
        st.check()?;
        Ok(st.inodes[self.ino].live.len)
    }
}

impl SimDisk {
    fn handle(&self, ino: usize) -> DiskFile {
        DiskFile::new(Box::new(SimFile {
            disk: self.clone(),
            ino,
        }))
    }
}

impl Fs for SimDisk {
    fn open(&self, path: &Path, mode: Mode) -> io::Result<DiskFile> {
        let mut st = self.state();
        st.check()?;
        let ino = match st.lookup(path) {
            Some(ino) => {
                if mode == Mode::Truncate {
                    st.step()?;
                    st.file_op(ino, FileOp::SetLen(0));
                }
                ino
            }
            None => {
                let (dir, name) = st.split(path)?;
                st.step()?;
                st.inodes.push(Inode::default());
                let ino = st.inodes.len() - 1;
                st.dir_op(&dir, DirOp::Link(name.to_string(), ino));
                st.created.insert(path.to_path_buf());
                ino
            }
        };
        drop(st);
        Ok(self.handle(ino))
    }

    fn open_read(&self, path: &Path) -> io::Result<DiskFile> {
        let st = self.state();
        st.check()?;
        let ino = st.lookup(path).ok_or_else(|| not_found(path))?;
        drop(st);
        Ok(self.handle(ino))
    }

    fn append(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let file = self.open(path, Mode::Open)?;
        let len = file.size()?;
        file.write_all_at(bytes, len)
    }

    fn exists(&self, path: &Path) -> bool {
        let st = self.state();
        st.dirs.contains_key(path) || st.lookup(path).is_some()
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut st = self.state();
        st.check()?;
        st.lookup(from).ok_or_else(|| not_found(from))?;
        let (dir, from_name) = st.split(from)?;
        let (to_dir, to_name) = st.split(to)?;
        if dir != to_dir {
            return Err(io::Error::other(
                "simulated disk: rename across directories",
            ));
        }
        st.step()?;
        st.dir_op(&dir, DirOp::Rename(from_name.into(), to_name.into()));
        Ok(())
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        let mut st = self.state();
        st.check()?;
        st.lookup(path).ok_or_else(|| not_found(path))?;
        let (dir, name) = st.split(path)?;
        st.step()?;
        st.dir_op(&dir, DirOp::Unlink(name.into()));
        Ok(())
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        let mut st = self.state();
        st.check()?;
        if st.dirs.contains_key(dir) {
            return Ok(());
        }
        st.step()?;
        for d in dir.ancestors() {
            st.dirs.entry(d.to_path_buf()).or_default();
        }
        Ok(())
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let mut st = self.state();
        st.step()?;
        let d = st.dirs.get_mut(dir).ok_or_else(|| not_found(dir))?;
        d.pending.clear();
        d.durable = d.live.clone();
        Ok(())
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<(String, bool)>> {
        let st = self.state();
        st.check()?;
        let d = st.dirs.get(dir).ok_or_else(|| not_found(dir))?;
        Ok(d.live.keys().map(|name| (name.clone(), true)).collect())
    }

    fn lock(&self, _path: &Path) -> io::Result<Box<dyn Send + Sync>> {
        // One store at a time opens a simulated disk (the test's doing).
        self.state().check()?;
        Ok(Box::new(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counter(values: Vec<u64>) -> impl FnMut() -> u64 {
        let mut i = 0;
        move || {
            let v = values.get(i).copied().unwrap_or(0);
            i += 1;
            v
        }
    }

    #[test]
    fn only_synced_data_and_names_are_sure_to_survive() {
        let sim = SimDisk::new();
        let dir = Path::new("/d");
        sim.create_dir_all(dir).unwrap();
        let f = sim.open(&dir.join("a"), Mode::Open).unwrap();
        f.write_all_at(b"durable", 0).unwrap();
        f.sync_data().unwrap();
        // The name is not durable yet: every choice of "keep no pending directory change"
        // (first random number 0 mod 4) forgets the file.
        let img = sim.image(&mut counter(vec![0]));
        assert!(!img.exists(&dir.join("a")));
        sim.sync_dir(dir).unwrap();
        f.write_all_at(b"pending", 7).unwrap();
        // The random numbers: one per directory ("/", "/d"; nothing pending), then the file's:
        // a prefix (0 mod 3) of 0 writes kept, the next torn with no sector kept (odd): the
        // durable content only.
        let img = sim.image(&mut counter(vec![0, 0, 0, 0, 1]));
        assert_eq!(img.read_file(&dir.join("a")).unwrap(), b"durable");
        // Keep all (subset mode, each kept): the latest content.
        let img = sim.image(&mut counter(vec![0, 0, 1, 0]));
        assert_eq!(img.read_file(&dir.join("a")).unwrap(), b"durablepending");
    }

    #[test]
    fn a_torn_write_keeps_whole_sectors_only() {
        let op = FileOp::Write {
            off: 500,
            bytes: vec![7; 1100],
        };
        let mut flip = false;
        let pieces = op.torn(&mut || {
            flip = !flip;
            flip
        });
        // Sectors [500, 512), [512, 1024), [1024, 1536), [1536, 1600): the 1st and 3rd kept.
        let spans: Vec<(u64, usize)> = pieces
            .iter()
            .map(|p| match p {
                FileOp::Write { off, bytes } => (*off, bytes.len()),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(spans, vec![(500, 12), (1024, 512)]);
    }

    #[test]
    fn the_crash_point_fails_and_everything_after() {
        let sim = SimDisk::new();
        sim.crash_at(Some(3));
        let dir = Path::new("/d");
        sim.create_dir_all(dir).unwrap();
        let f = sim.open(&dir.join("a"), Mode::Open).unwrap();
        assert!(f.write_all_at(b"x", 0).is_err());
        assert!(sim.crashed());
        assert!(f.sync_data().is_err());
        assert!(f.size().is_err());
        assert_eq!(sim.ops(), 3);
    }
}
