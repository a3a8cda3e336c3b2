//! The embedded store's file operations behind one small interface: open or create a file,
//! read and write at an offset, `fdatasync`, truncate, rename, remove, list, and fsync a
//! directory. The server uses the real one ([`real`], `std::fs`, what the store always did); the
//! crash-consistency test uses a simulated disk ([`sim::SimDisk`]) that, at a simulated power
//! loss, keeps only what was synced and any piece of what was not.
//!
//! Every file and directory operation of the store goes through a [`Disk`], the legacy redb
//! conversion's reading of the redb file excepted (redb does its own I/O).

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

pub mod sim;

/// One open file: positioned reads and writes, `fdatasync`, truncation, length.
pub trait FileIo: Send + Sync {
    /// Reads into `buf` from `off`; returns the bytes read (fewer at the end of the file).
    fn read_at(&self, buf: &mut [u8], off: u64) -> io::Result<usize>;
    /// Writes all of `buf` at `off` (the file grows if needed).
    fn write_all_at(&self, buf: &[u8], off: u64) -> io::Result<()>;
    /// Makes the file's data (and its length) durable (`fdatasync`).
    fn sync_data(&self) -> io::Result<()>;
    /// Writes `len` zero bytes at `off` (the journal's space written ahead of the commits).
    fn write_zeros_at(&self, mut off: u64, len: u64) -> io::Result<()> {
        let zeros = vec![0u8; len.min(1 << 20) as usize];
        let end = off + len;
        while off < end {
            let n = (end - off).min(zeros.len() as u64) as usize;
            self.write_all_at(&zeros[..n], off)?;
            off += n as u64;
        }
        Ok(())
    }
    /// Truncates or extends (with zeros) the file to `len` bytes.
    fn set_len(&self, len: u64) -> io::Result<()>;
    /// The file's length in bytes.
    fn size(&self) -> io::Result<u64>;
}

/// How a file is opened for reading and writing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Created if missing, kept as it is otherwise.
    Open,
    /// Created if missing, emptied otherwise.
    Truncate,
}

/// The file system under the data directory.
pub trait Fs: Send + Sync {
    /// Opens `path` for reading and writing.
    fn open(&self, path: &Path, mode: Mode) -> io::Result<DiskFile>;
    /// Opens an existing file for reading (`NotFound` if there is none).
    fn open_read(&self, path: &Path) -> io::Result<DiskFile>;
    /// Appends `bytes` to `path` with one write (`O_APPEND`), creating it (not synced).
    fn append(&self, path: &Path, bytes: &[u8]) -> io::Result<()>;
    fn exists(&self, path: &Path) -> bool;
    /// Renames `from` over `to` (atomic; durable once the directory is synced).
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    fn remove(&self, path: &Path) -> io::Result<()>;
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    /// Fsyncs a directory: the names created, renamed and removed in it are durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// The names in `dir` and whether each is a file (`NotFound` if there is no such directory).
    fn list(&self, dir: &Path) -> io::Result<Vec<(String, bool)>>;
    /// Takes the exclusive lock of the lock file `path` (held while the guard lives); an error
    /// if another process holds it.
    fn lock(&self, path: &Path) -> io::Result<Box<dyn Send + Sync>>;
}

/// The store's disk.
pub type Disk = Arc<dyn Fs>;

/// An open file of a [`Disk`].
pub struct DiskFile(Box<dyn FileIo>);

impl fmt::Debug for DiskFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DiskFile")
    }
}

impl DiskFile {
    pub fn new(io: Box<dyn FileIo>) -> DiskFile {
        DiskFile(io)
    }

    pub fn read_at(&self, buf: &mut [u8], off: u64) -> io::Result<usize> {
        self.0.read_at(buf, off)
    }

    /// Fills `buf` from `off` (`UnexpectedEof` past the end).
    pub fn read_exact_at(&self, mut buf: &mut [u8], mut off: u64) -> io::Result<()> {
        while !buf.is_empty() {
            match self.0.read_at(buf, off) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "failed to fill whole buffer",
                    ));
                }
                Ok(n) => {
                    buf = &mut buf[n..];
                    off += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    pub fn write_all_at(&self, buf: &[u8], off: u64) -> io::Result<()> {
        self.0.write_all_at(buf, off)
    }

    pub fn write_zeros_at(&self, off: u64, len: u64) -> io::Result<()> {
        self.0.write_zeros_at(off, len)
    }

    pub fn sync_data(&self) -> io::Result<()> {
        self.0.sync_data()
    }

    pub fn set_len(&self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }

    pub fn size(&self) -> io::Result<u64> {
        self.0.size()
    }
}

/// Positioned reads, for the journal's scan (a [`DiskFile`], or a `std::fs::File` in tests).
pub trait ReadAt {
    fn read_at(&self, buf: &mut [u8], off: u64) -> io::Result<usize>;
}

impl ReadAt for DiskFile {
    fn read_at(&self, buf: &mut [u8], off: u64) -> io::Result<usize> {
        DiskFile::read_at(self, buf, off)
    }
}

impl ReadAt for File {
    fn read_at(&self, buf: &mut [u8], off: u64) -> io::Result<usize> {
        FileExt::read_at(self, buf, off)
    }
}

/// A sequential reader over a [`ReadAt`] from an offset.
pub struct Cursor<'f, F: ReadAt + ?Sized> {
    file: &'f F,
    off: u64,
}

impl<'f, F: ReadAt + ?Sized> Cursor<'f, F> {
    pub fn new(file: &'f F, off: u64) -> Self {
        Cursor { file, off }
    }
}

impl<F: ReadAt + ?Sized> io::Read for Cursor<'_, F> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read_at(buf, self.off)?;
        self.off += n as u64;
        Ok(n)
    }
}

/// The real disk (`std::fs`).
pub fn real() -> Disk {
    Arc::new(RealFs)
}

struct RealFs;

struct RealFile(File);

impl FileIo for RealFile {
    fn read_at(&self, buf: &mut [u8], off: u64) -> io::Result<usize> {
        FileExt::read_at(&self.0, buf, off)
    }
    fn write_all_at(&self, buf: &[u8], off: u64) -> io::Result<()> {
        FileExt::write_all_at(&self.0, buf, off)
    }
    fn sync_data(&self) -> io::Result<()> {
        self.0.sync_data()
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }
    fn size(&self) -> io::Result<u64> {
        self.0.metadata().map(|m| m.len())
    }
}

fn wrap(f: File) -> DiskFile {
    DiskFile::new(Box::new(RealFile(f)))
}

impl Fs for RealFs {
    fn open(&self, path: &Path, mode: Mode) -> io::Result<DiskFile> {
        File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(mode == Mode::Truncate)
            .open(path)
            .map(wrap)
    }
    fn open_read(&self, path: &Path) -> io::Result<DiskFile> {
        File::open(path).map(wrap)
    }
    fn append(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?
            .write_all(bytes)
    }
    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        fs::create_dir_all(dir)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<(String, bool)>> {
        let mut out = Vec::new();
        for entry in fs::read_dir(dir)? {
            let entry = entry?;
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            out.push((name, entry.file_type()?.is_file()));
        }
        Ok(out)
    }
    fn lock(&self, path: &Path) -> io::Result<Box<dyn Send + Sync>> {
        let lock = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive)?;
        Ok(Box::new(lock))
    }
}
