//! A game's log positions with a bounded part in memory: full chunks of [`CHUNK`] entries are
//! spilled to the positions side file ([`super::sidefile`]) and the index keeps one handle
//! (8 bytes) per chunk plus the packed positions of the last, unfilled chunk (the tail).
//!
//! The packed positions of [`Spans`] cost ≈ 3–4 bytes an entry, so a 1,000-deal match (147,000
//! entries) held ≈ 0.6 MB in the index; here it holds 287 handles and a tail of at most
//! [`CHUNK`] entries: ≈ 4.6 KB, ≈ 16 bytes per 512 entries past that. A chunk is the packed
//! bytes of its entries encoded from empty (its first gap taken from 0), so it decodes alone;
//! a read of entries `first..` decodes the chunks it needs and skips at most [`CHUNK`] - 1
//! entries of the first.

use super::disk::DiskFile;
use super::journal::Span;
use super::sidefile::{self, Chunk, SideFile};
use super::spans::{self, Spans};

/// Entries per chunk spilled to the side file.
pub const CHUNK: usize = 512;

/// A page of a game's positions to read ([`Positions::slice`]): entries `skip..skip +
/// in_chunks` of the chunks `chunks` (chunk number `first_chunk` on), then `tail`.
pub struct Slice {
    first_chunk: usize,
    chunks: Vec<Chunk>,
    skip: usize,
    in_chunks: usize,
    tail: Spans,
}

impl Slice {
    /// The page's positions, its chunks read from the side file `side` (chunks are never
    /// rewritten, and a compaction's new side file leaves the old one readable by its handle).
    pub fn read(self, side: &DiskFile) -> Result<Spans, String> {
        let mut out = Spans::default();
        let (mut skip, mut left) = (self.skip, self.in_chunks);
        for (k, chunk) in self.chunks.iter().enumerate() {
            let no = self.first_chunk + k;
            let bytes = sidefile::read(side, *chunk)
                .map_err(|e| format!("{}: chunk {no}: {e}", sidefile::FILE))?;
            let want = left.min(CHUNK - skip);
            let before = out.len();
            for span in spans::decode(&bytes, CHUNK).skip(skip).take(want) {
                out.push(span);
            }
            if out.len() - before != want {
                return Err(format!(
                    "{}: chunk {no} holds fewer than {CHUNK} entries",
                    sidefile::FILE
                ));
            }
            (skip, left) = (0, left - want);
        }
        for span in self.tail.iter() {
            out.push(span);
        }
        Ok(out)
    }
}

/// The positions of a game's log entries, in log order.
#[derive(Clone, Debug, Default)]
pub struct Positions {
    /// The chunks spilled to the side file: entries `k * CHUNK..(k + 1) * CHUNK` for chunk `k`.
    chunks: Vec<Chunk>,
    /// The entries after the chunks (fewer than [`CHUNK`], unless a spill failed).
    tail: Spans,
}

impl Positions {
    /// Entries held.
    pub fn len(&self) -> usize {
        self.chunks.len() * CHUNK + self.tail.len()
    }

    /// Adds the next entry's position; once the tail holds a chunk's worth, spills it to `side`.
    /// A failed spill (the side file cannot be written) keeps the entries in the tail, to be
    /// spilled at the next chunk's worth: positions are never lost, only kept in memory.
    pub fn push(&mut self, span: Span, side: &mut SideFile) {
        self.tail.push(span);
        if self.tail.len() % CHUNK != 0 {
            return;
        }
        while self.tail.len() >= CHUNK {
            let chunk: Spans = self.tail.iter().take(CHUNK).collect();
            match side.append(chunk.as_bytes()) {
                Ok(at) => {
                    spans::reserve_an_eighth(&mut self.chunks, 1);
                    self.chunks.push(at);
                    self.tail = self.tail.iter_from(CHUNK).collect();
                }
                Err(e) => {
                    tracing::warn!(store = "embedded", error = %e, kept = self.tail.len(),
                        "cannot write the positions side file; keeping the positions in memory");
                    return;
                }
            }
        }
    }

    /// What a read of entries `first..first + limit` (none past the end) needs: the handles of
    /// the spilled chunks holding some of them and a copy of those in the tail. Cheap (no I/O),
    /// so it is taken under the index's lock and read ([`Slice::read`]) after it.
    pub fn slice(&self, first: usize, limit: usize) -> Slice {
        let n = self.len();
        let spilled = self.chunks.len() * CHUNK;
        let first = first.min(n);
        let end = first.saturating_add(limit).min(n);
        let in_chunks = end.min(spilled).saturating_sub(first);
        let chunks = if in_chunks == 0 {
            Vec::new()
        } else {
            self.chunks[first / CHUNK..(first + in_chunks).div_ceil(CHUNK)].to_vec()
        };
        let from_tail = first.max(spilled);
        Slice {
            first_chunk: first / CHUNK,
            chunks,
            skip: first % CHUNK,
            in_chunks,
            tail: self
                .tail
                .iter_from(from_tail - spilled)
                .take(end.saturating_sub(from_tail))
                .collect(),
        }
    }

    /// The positions of entries `first..first + limit`, read from the side file `side` (the
    /// index's) for those in spilled chunks.
    pub fn page(&self, side: &DiskFile, first: usize, limit: usize) -> Result<Spans, String> {
        self.slice(first, limit).read(side)
    }

    /// Gives back spare capacity (after the index is rebuilt at open).
    pub fn shrink_to_fit(&mut self) {
        self.chunks.shrink_to_fit();
        self.tail.shrink_to_fit();
    }

    /// Heap bytes held in memory (capacity).
    #[cfg(test)]
    pub(super) fn heap_bytes(&self) -> usize {
        self.chunks.capacity() * std::mem::size_of::<Chunk>() + self.tail.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use rand::{RngCore, SeedableRng};
    use std::path::PathBuf;

    use super::*;

    /// A fresh side file in a directory of its own (removed by the test).
    fn side_file(name: &str) -> (PathBuf, SideFile) {
        let dir = std::env::temp_dir().join(format!("sk-chunked-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let side =
            SideFile::create(&super::super::disk::real(), &dir.join(sidefile::FILE)).unwrap();
        (dir, side)
    }

    /// Seeded random numbers.
    fn rng(seed: u64) -> impl FnMut() -> u64 {
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        move || r.next_u64()
    }

    /// Positions of a journal: mostly forward and close, sometimes far, sometimes back.
    fn random_span(off: &mut u64, r: u64) -> Span {
        *off = match r % 16 {
            0 => off.saturating_sub(r % 100_000),
            1 => *off + (r >> 8) % (1 << 40),
            _ => *off + (r >> 8) % 3000,
        };
        let len = match r % 13 {
            0 => u32::MAX,
            _ => ((r >> 20) % 600) as u32,
        };
        Span { off: *off, len }
    }

    /// Pages at random offsets and lengths, and at the chunk boundaries, match the oracle.
    fn check_pages(p: &Positions, side: &DiskFile, want: &[Span], next: &mut impl FnMut() -> u64) {
        let n = want.len();
        assert_eq!(p.len(), n);
        let mut cases = vec![(0, usize::MAX), (n, 5), (n + 3, 1)];
        for b in (0..=n).step_by(CHUNK) {
            cases.extend([(b.saturating_sub(1), 2), (b, CHUNK), (b, 1)]);
        }
        for _ in 0..40 {
            let first = (next() as usize) % (n + 2);
            let limit = match next() % 4 {
                0 => usize::MAX,
                1 => 0,
                _ => (next() as usize) % (2 * CHUNK + 10),
            };
            cases.push((first, limit));
        }
        for (first, limit) in cases {
            let got: Vec<Span> = p.page(side, first, limit).unwrap().iter().collect();
            let from = first.min(n);
            let to = from.saturating_add(limit).min(n);
            assert_eq!(got, want[from..to], "page {first}+{limit} of {n}");
        }
    }

    #[test]
    fn random_appends_read_back_as_an_oracle_list_holds_them() {
        let (dir, mut side) = side_file("oracle");
        let reader = side.reader();
        for seed in [3u64, 99, 2026] {
            let mut next = rng(seed);
            // Two games interleaved in one side file, as in the index.
            let (mut a, mut b) = (Positions::default(), Positions::default());
            let (mut want_a, mut want_b) = (Vec::new(), Vec::new());
            let (mut off_a, mut off_b) = (next() % 4096, next() % 4096);
            let target = 3 * CHUNK + (next() as usize) % CHUNK;
            while want_a.len() < target {
                let r = next();
                if r % 3 == 0 {
                    let s = random_span(&mut off_b, next());
                    b.push(s, &mut side);
                    want_b.push(s);
                } else {
                    let s = random_span(&mut off_a, next());
                    a.push(s, &mut side);
                    want_a.push(s);
                }
                if want_a.len() % 700 == 1 {
                    check_pages(&a, &reader, &want_a, &mut next);
                }
            }
            assert!(a.chunks.len() >= 3, "seed {seed}: nothing spilled");
            assert!(a.tail.len() < CHUNK);
            check_pages(&a, &reader, &want_a, &mut next);
            check_pages(&b, &reader, &want_b, &mut next);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_side_file_that_cannot_be_written_keeps_the_positions_in_memory() {
        // Writes to /dev/full fail (no space): every entry stays in the tail, none is lost.
        let Ok(mut side) = SideFile::create(
            &super::super::disk::real(),
            std::path::Path::new("/dev/full"),
        ) else {
            return;
        };
        let mut next = rng(5);
        let mut off = 0;
        let want: Vec<Span> = (0..2 * CHUNK + 7)
            .map(|_| random_span(&mut off, next()))
            .collect();
        let mut p = Positions::default();
        for s in &want {
            p.push(*s, &mut side);
        }
        assert!(p.chunks.is_empty());
        check_pages(&p, &side.reader(), &want, &mut next);
    }

    /// A 1,000-deal match's log (147,000 entries) holds a few KB in memory, whatever the length.
    #[test]
    fn memory_is_a_handle_per_chunk_and_a_tail() {
        let (dir, mut side) = side_file("heap");
        let mut next = rng(11);
        let mut off = 1 << 30;
        let mut p = Positions::default();
        for _ in 0..147_000 {
            p.push(random_span(&mut off, next()), &mut side);
        }
        p.shrink_to_fit();
        let held = p.heap_bytes();
        // 287 handles (2,296 B), and a tail of fewer than 512 entries of at most 15 bytes.
        assert!(held <= 287 * 8 + 7680, "{held} bytes for 147,000 entries");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Not a check: prints the positions' heap in memory at a game's log lengths (1,000, 10,000
    /// and 147,000 entries, a 1,000-deal match), journal-like and after a compaction, beside
    /// the packed list alone (all in memory, as before the side file).
    /// `cargo test --lib store::embedded -- --ignored print_heap --nocapture`
    #[test]
    #[ignore]
    fn print_heap_bytes_at_log_lengths() {
        use super::spans::tests::{compacted_like, journal_like};
        let (dir, mut side) = side_file("print");
        for n in [1_000u64, 10_000, 147_000] {
            let mut row = Vec::new();
            for spans in [
                Box::new(journal_like(n)) as Box<dyn Iterator<Item = Span>>,
                Box::new(compacted_like(n)),
            ] {
                let mut p = Positions::default();
                let mut all = Spans::default();
                for s in spans {
                    p.push(s, &mut side);
                    all.push(s);
                }
                p.shrink_to_fit();
                all.shrink_to_fit();
                row.push((all.heap_bytes(), p.heap_bytes()));
            }
            println!(
                "entries {n}: journal-like {} B all in memory -> {} B with the side file; \
                 compacted {} -> {} B",
                row[0].0, row[0].1, row[1].0, row[1].1
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
