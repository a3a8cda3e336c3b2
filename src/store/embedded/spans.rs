//! A game's log positions in the index, packed: where each of its `Append` frames is in the
//! journal.
//!
//! A plain `Vec<Span>` costs 16 bytes per entry (and up to twice that in spare capacity), which
//! made the index the largest part of a game in progress on the embedded store: ≈ 9–16 KB for a
//! game in the middle of an 8-deal match. Here each entry is two LEB128 varints (prost's
//! encoding): the zigzag gap between its offset and the end of the entry before (a game's
//! frames are close together in an append-ordered journal, so one to three bytes; zero, one
//! byte, once a compaction has copied the game's frames one after the other) and its length
//! (two bytes for most actions): ≈ 4 bytes an entry, ≈ 3 after a compaction. Reads walk the
//! varints from a mark, one kept every [`MARK_EVERY`] entries, so a page of a long log decodes
//! at most that many entries before its first.

use prost::encoding::{decode_varint, encode_varint};

use super::journal::Span;

/// Entries between two marks (where a read may start decoding).
const MARK_EVERY: usize = 64;

/// The most bytes one entry takes: two varints, an offset difference (up to 10 bytes) and a
/// length (a `u32`, up to 5).
const ENTRY_MAX: usize = 15;

/// Makes room for `more` elements of `v`, growing it by an eighth of its length (and at least
/// `more`) rather than doubling it: a `Vec` that doubles holds up to twice what it needs, and
/// these lists are most of what the index holds per game in progress (≈ 2 KB of spare bytes a
/// game in the middle of an 8-deal match). Appends stay amortized O(1): a growth copies `len`
/// elements and buys room for at least `len / 8` more, so each element appended pays for at most
/// 8 elements copied (9 counting its own), whatever the length; the spare capacity is at most
/// `max(more, len / 8)`.
pub(super) fn reserve_an_eighth<T>(v: &mut Vec<T>, more: usize) {
    if v.capacity() - v.len() < more {
        v.reserve_exact(more.max(v.len() / 8));
    }
}

/// Where decoding may start: the byte of an entry whose index is a multiple of [`MARK_EVERY`],
/// and the end of the entry before it (what its gap is taken from).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Mark {
    at: usize,
    prev_end: u64,
}

/// The positions of a game's log entries, in log order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Spans {
    bytes: Vec<u8>,
    marks: Vec<Mark>,
    len: usize,
    /// The end (offset plus length) of the last entry; 0 before the first.
    last_end: u64,
}

fn zigzag(d: i64) -> u64 {
    ((d << 1) ^ (d >> 63)) as u64
}

fn unzigzag(z: u64) -> i64 {
    ((z >> 1) as i64) ^ -((z & 1) as i64)
}

impl Spans {
    /// Entries held.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds the next entry's position.
    pub fn push(&mut self, span: Span) {
        if self.len % MARK_EVERY == 0 {
            reserve_an_eighth(&mut self.marks, 1);
            self.marks.push(Mark {
                at: self.bytes.len(),
                prev_end: self.last_end,
            });
        }
        let diff = span.off.wrapping_sub(self.last_end) as i64;
        reserve_an_eighth(&mut self.bytes, ENTRY_MAX);
        encode_varint(zigzag(diff), &mut self.bytes);
        encode_varint(u64::from(span.len), &mut self.bytes);
        self.last_end = span.off.wrapping_add(u64::from(span.len));
        self.len += 1;
    }

    /// Every entry's position, in order.
    pub fn iter(&self) -> Iter<'_> {
        self.iter_from(0)
    }

    /// The positions of entries `first..`, in order (none when `first` is past the end).
    pub fn iter_from(&self, first: usize) -> Iter<'_> {
        let first = first.min(self.len);
        let mut it = match self.marks.get(first / MARK_EVERY) {
            Some(m) => Iter {
                rest: self.bytes.get(m.at..).unwrap_or(&[]),
                prev_end: m.prev_end,
                left: self.len - (first / MARK_EVERY) * MARK_EVERY,
            },
            None => Iter {
                rest: &[],
                prev_end: 0,
                left: 0,
            },
        };
        for _ in 0..first % MARK_EVERY {
            it.next();
        }
        it
    }

    /// A copy holding entries `first..first + limit` only (a page of a long log copies a page).
    pub fn page(&self, first: usize, limit: usize) -> Spans {
        self.iter_from(first).take(limit).collect()
    }

    /// The packed bytes: a self-contained chunk (what [`decode`] reads back) when the list was
    /// built from empty.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Gives back spare capacity (after the index is rebuilt at open).
    pub fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
        self.marks.shrink_to_fit();
    }

    /// Heap bytes held (capacity).
    #[cfg(test)]
    pub(super) fn heap_bytes(&self) -> usize {
        self.bytes.capacity() + self.marks.capacity() * std::mem::size_of::<Mark>()
    }
}

impl FromIterator<Span> for Spans {
    fn from_iter<I: IntoIterator<Item = Span>>(iter: I) -> Self {
        let mut spans = Spans::default();
        for span in iter {
            spans.push(span);
        }
        spans
    }
}

/// Decodes the first `count` entries of the bytes of a list built from empty
/// ([`Spans::as_bytes`]).
pub fn decode(bytes: &[u8], count: usize) -> Iter<'_> {
    Iter {
        rest: bytes,
        prev_end: 0,
        left: count,
    }
}

/// The positions of a [`Spans`]' entries, decoded as they are read.
pub struct Iter<'a> {
    rest: &'a [u8],
    prev_end: u64,
    left: usize,
}

impl Iterator for Iter<'_> {
    type Item = Span;

    fn next(&mut self) -> Option<Span> {
        if self.left == 0 {
            return None;
        }
        // The bytes were written by `push`; a decoding failure cannot happen, and ends the
        // iteration rather than panicking.
        let diff = decode_varint(&mut self.rest).ok()?;
        let len = decode_varint(&mut self.rest).ok()?;
        let off = self.prev_end.wrapping_add(unzigzag(diff) as u64);
        let len = u32::try_from(len).ok()?;
        self.prev_end = off.wrapping_add(u64::from(len));
        self.left -= 1;
        Some(Span { off, len })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A seeded xorshift, so the positions are reproducible (the seed is printed on failure).
    fn positions(seed: u64, n: usize) -> Vec<Span> {
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut off = next() % 4096;
        (0..n)
            .map(|_| {
                let r = next();
                // Mostly forward and close, sometimes far, sometimes back (after a compaction
                // copies a game's frames elsewhere), lengths from tiny to the u32 maximum.
                off = match r % 16 {
                    0 => off.wrapping_sub(r % 1_000_000).min(u64::MAX >> 1),
                    1 => off + (r >> 8) % (1 << 40),
                    _ => off + (r >> 8) % 3000,
                };
                let len = match r % 11 {
                    0 => u32::MAX,
                    1 => 0,
                    _ => ((r >> 20) % 600) as u32,
                };
                Span { off, len }
            })
            .collect()
    }

    #[test]
    fn every_entry_and_every_page_reads_back_as_pushed() {
        for seed in [1u64, 7, 42, 2026] {
            for n in [0, 1, 63, 64, 65, 200, 1000] {
                let want = positions(seed, n);
                let spans: Spans = want.iter().copied().collect();
                assert_eq!(spans.len(), n, "seed {seed}, n {n}");
                assert_eq!(spans.iter().collect::<Vec<_>>(), want, "seed {seed}, n {n}");
                for first in [0, 1, 63, 64, 65, 130, n.saturating_sub(1), n, n + 5] {
                    for limit in [0, 1, 64, 100, usize::MAX] {
                        let end = first.saturating_add(limit).min(n);
                        let page: Vec<Span> = spans.page(first, limit).iter().collect();
                        let expect = want.get(first.min(n)..end.max(first.min(n))).unwrap_or(&[]);
                        assert_eq!(page, expect, "seed {seed}, n {n}, page {first}+{limit}");
                    }
                }
            }
        }
    }

    /// The shape of a game's log in an append-ordered journal: `n` appends 100–400 bytes long,
    /// each a few other games' frames after the one before.
    pub(crate) fn journal_like(n: u64) -> impl Iterator<Item = Span> {
        let mut off = 1 << 30;
        (0..n).map(move |i| {
            off += 200 + (i * 37) % 900;
            Span {
                off,
                len: 100 + ((i * 53) % 300) as u32,
            }
        })
    }

    #[test]
    fn a_growing_log_holds_at_most_an_eighth_spare_and_reallocates_rarely() {
        let mut spans = Spans::default();
        let mut growths = 0;
        let mut capacity = spans.heap_bytes();
        for (i, span) in journal_like(100_000).enumerate() {
            spans.push(span);
            let used = spans.bytes.len() + spans.marks.len() * std::mem::size_of::<Mark>();
            let held = spans.heap_bytes();
            // An eighth of each list's length, plus one entry's room and one mark of slack.
            let bound = used + used / 8 + ENTRY_MAX + std::mem::size_of::<Mark>();
            assert!(
                held <= bound,
                "{held} bytes held for {used} used after {} entries",
                i + 1
            );
            if held != capacity {
                growths += 1;
                capacity = held;
            }
        }
        // Growth by an eighth: ≈ log(1.125) of the final size per list (≈ 90 for the bytes,
        // ≈ 50 for the marks), so appends stay amortized O(1); growing by what one entry needs
        // would reallocate at almost every append.
        assert!(
            growths <= 200,
            "{growths} reallocations for 100,000 entries"
        );
    }

    #[test]
    fn a_journal_like_log_packs_into_about_four_bytes_an_entry() {
        // 562 appends 100–400 bytes long, each a few other games' frames after the one before:
        // the shape of a game at deal 5 of an 8-deal match.
        let mut spans: Spans = journal_like(562).collect();
        spans.shrink_to_fit();
        let packed = spans.heap_bytes();
        assert!(
            packed <= 562 * 5,
            "{packed} bytes for 562 entries (a Vec<Span> holds {})",
            562 * std::mem::size_of::<Span>()
        );
    }

    /// A game's frames after a compaction copied them one after the other: `n` appends 100–400
    /// bytes long, each starting where the one before ends.
    pub(crate) fn compacted_like(n: u64) -> impl Iterator<Item = Span> {
        let mut off = 1 << 30;
        (0..n).map(move |i| {
            let span = Span {
                off,
                len: 100 + ((i * 53) % 300) as u32,
            };
            off += u64::from(span.len);
            span
        })
    }

    #[test]
    fn a_compacted_log_packs_into_about_three_bytes_an_entry() {
        let want: Vec<Span> = compacted_like(10_000).collect();
        let mut spans: Spans = want.iter().copied().collect();
        spans.shrink_to_fit();
        assert_eq!(spans.iter().collect::<Vec<_>>(), want);
        assert_eq!(
            spans.page(5_000, 3).iter().collect::<Vec<_>>(),
            want[5_000..5_003]
        );
        // One byte of zero gap and two of length an entry, plus the marks.
        let packed = spans.heap_bytes();
        let bound = 10_000 * 3 + (10_000 / MARK_EVERY + 1) * std::mem::size_of::<Mark>();
        assert!(
            packed <= bound,
            "{packed} bytes for 10,000 entries (at most {bound})"
        );
    }

    /// Not a check: prints the packed positions' heap at a game's log lengths (1,000, 10,000,
    /// and 147,000 entries, a 1,000-deal match), journal-like and after a compaction.
    /// `cargo test --lib store::embedded::spans -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn print_heap_bytes_at_log_lengths() {
        for n in [1_000u64, 10_000, 147_000] {
            let mut appended: Spans = journal_like(n).collect();
            appended.shrink_to_fit();
            let mut compacted: Spans = compacted_like(n).collect();
            compacted.shrink_to_fit();
            println!(
                "entries {n}: journal-like {} B, compacted {} B",
                appended.heap_bytes(),
                compacted.heap_bytes()
            );
        }
    }
}
