//! The embedded store's log positions spilled to the positions side file (`shuangkou.positions`):
//! long logs read back page by page as they were appended (the oracle: the entries the test
//! appended), across chunk boundaries, a compaction (a new side file) and a reopen (rebuilt).

use std::path::Path;

#[path = "common/store_fixtures.rs"]
pub mod store_fixtures;
#[path = "common/temp.rs"]
pub mod temp;

use rand::{RngCore, SeedableRng};
use shuangkou::store::embedded::{EmbeddedStore, sidefile};
use shuangkou::store::{Appended, Created, LogEntry, Store};
use store_fixtures::{entry, record};
use temp::TempDir;

fn embedded(store: &Store) -> &EmbeddedStore {
    match store {
        Store::Embedded(s) => s,
        _ => panic!("not the embedded store"),
    }
}

fn open(dir: &Path) -> Store {
    Store::Embedded(EmbeddedStore::open(dir).unwrap())
}

/// Appends entries `from..=to` of game `id`.
async fn append(store: &Store, id: &str, from: u64, to: u64) {
    for seq in from..=to {
        assert_eq!(
            store.append(id, &entry(seq, id)).await,
            Ok(Appended::Ok),
            "{id}/{seq}"
        );
    }
}

/// Seeded random numbers.
fn rng(seed: u64) -> impl FnMut() -> u64 {
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    move || r.next_u64()
}

/// Game `id` (of `len` entries) reads back whole, and in pages at random offsets and at the
/// side file's chunk boundaries (512 entries), as the entries appended.
async fn check(store: &Store, id: &str, len: u64, seed: u64) {
    let want: Vec<LogEntry> = (1..=len).map(|s| entry(s, id)).collect();
    let (_, log) = store.load(id).await.unwrap().expect(id);
    assert_eq!(log, want, "{id}: load");
    let mut next = rng(seed);
    let mut cases = vec![(0, 1), (len, 3), (len + 1, 2)];
    for b in [511u64, 512, 1023, 1024, 1536] {
        cases.extend([(b - 1, 2), (b, 600)]);
    }
    for _ in 0..30 {
        let limit = (next() % 1100) as usize;
        cases.push((next() % (len + 2), limit));
    }
    for (after, limit) in cases {
        let page = store.entries_page(id, after, limit).await.unwrap();
        let from = after.min(len) as usize;
        let to = (from + limit).min(len as usize);
        assert_eq!(page, want[from..to], "{id}: page {after}+{limit} of {len}");
    }
    let after = len.saturating_sub(700);
    assert_eq!(
        store.entries_after(id, after).await.unwrap(),
        want[after as usize..],
        "{id}: entries after {after}"
    );
}

#[tokio::test]
async fn long_logs_read_back_across_chunks_a_compaction_and_a_reopen() {
    let dir = TempDir::fresh("store-positions", "oracle");
    let store = open(&dir);
    for id in ["a", "b", "c", "done"] {
        assert_eq!(store.create(&record(id, None)).await, Ok(Created::New));
    }
    // Finished: garbage for the compaction to fold away.
    append(&store, "done", 1, 5).await;
    store.finish("done").await.unwrap();
    // Three logs appended side by side (their frames interleaved in the journal, their chunks
    // in the side file): two chunks and a tail, one chunk and a tail, a tail only.
    tokio::join!(
        append(&store, "a", 1, 1100),
        append(&store, "b", 1, 600),
        append(&store, "c", 1, 30),
    );
    let lens = [("a", 1100), ("b", 600), ("c", 30)];
    for (k, (id, len)) in lens.into_iter().enumerate() {
        check(&store, id, len, k as u64 + 1).await;
    }
    let spilled = std::fs::metadata(dir.join(sidefile::FILE)).unwrap().len();
    assert!(spilled > 0, "no chunk written to the side file");

    // A compaction copies the games in progress into a new journal and their positions into a
    // new side file; appends after it spill there.
    embedded(&store).compact_now().await.unwrap();
    assert_eq!(embedded(&store).compactions(), 1);
    for (k, (id, len)) in lens.into_iter().enumerate() {
        check(&store, id, len, k as u64 + 10).await;
    }
    append(&store, "a", 1101, 1600).await;
    append(&store, "c", 31, 520).await;
    let lens = [("a", 1600), ("b", 600), ("c", 520)];
    for (k, (id, len)) in lens.into_iter().enumerate() {
        check(&store, id, len, k as u64 + 20).await;
    }
    assert_eq!(store.load("done").await.unwrap().unwrap().1.len(), 5);

    // A reopen rebuilds the side file from the journal: what the file held before (here
    // garbage, as a crash mid-write could leave it) is never read.
    drop(store);
    std::fs::write(dir.join(sidefile::FILE), vec![0xA5; 64 << 10]).unwrap();
    let store = open(&dir);
    for (k, (id, len)) in lens.into_iter().enumerate() {
        check(&store, id, len, k as u64 + 30).await;
    }
    let rebuilt = std::fs::metadata(dir.join(sidefile::FILE)).unwrap().len();
    assert!(rebuilt > 0, "the reopen spilled no chunk");
    // Five chunks of about 1.5 KB: the stale file was truncated, not written over in place.
    assert!(
        rebuilt < 32 << 10,
        "side file of {rebuilt} bytes after the reopen"
    );
}
