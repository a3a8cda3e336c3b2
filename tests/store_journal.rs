//! The embedded store's files: compaction of finished games out of the journal, the one-time
//! conversion of a data directory written by the redb layout, and a torn journal tail.

use std::collections::HashSet;
use std::path::Path;

#[path = "common/store_fixtures.rs"]
pub mod store_fixtures;
#[path = "common/temp.rs"]
pub mod temp;

use shuangkou::store::embedded::{EmbeddedStore, journal, legacy};
use shuangkou::store::{Appended, Created, LogEntry, Store};
use store_fixtures::{entry, record};
use temp::TempDir;

fn temp_dir(name: &str) -> TempDir {
    TempDir::fresh("store-journal", name)
}

fn embedded(store: &Store) -> &EmbeddedStore {
    match store {
        Store::Embedded(s) => s,
        _ => panic!("not the embedded store"),
    }
}

async fn open(dir: &Path) -> Store {
    Store::Embedded(EmbeddedStore::open(dir).unwrap())
}

/// Games `0..n`, each with `plays` entries; every game with `finished(g)` is finished.
async fn fill(store: &Store, n: u64, plays: u64, finished: impl Fn(u64) -> bool) {
    for g in 0..n {
        let id = format!("g{g}");
        assert_eq!(
            store.create(&record(&id, Some(&format!("r{g}")))).await,
            Ok(Created::New)
        );
        for seq in 1..=plays {
            assert_eq!(store.append(&id, &entry(seq, &id)).await, Ok(Appended::Ok));
        }
        if finished(g) {
            store.finish(&id).await.unwrap();
        }
    }
}

/// Every game of [`fill`] reads back whole, and its idempotency key still finds it.
async fn check(store: &Store, n: u64, plays: u64, finished: impl Fn(u64) -> bool) {
    for g in 0..n {
        let id = format!("g{g}");
        let (rec, log) = store.load(&id).await.unwrap().unwrap();
        assert_eq!(rec, record(&id, Some(&format!("r{g}"))));
        let expected: Vec<LogEntry> = (1..=plays).map(|s| entry(s, &id)).collect();
        assert_eq!(log, expected, "{id}");
        assert_eq!(
            store.entries_after(&id, plays - 1).await.unwrap(),
            expected[expected.len() - 1..].to_vec()
        );
        assert_eq!(
            store.create(&record("again", Some(&format!("r{g}")))).await,
            Ok(Created::Existing(id.clone()))
        );
    }
    let unfinished: HashSet<String> = store.unfinished().await.unwrap().into_iter().collect();
    let expected: HashSet<String> = (0..n)
        .filter(|g| !finished(*g))
        .map(|g| format!("g{g}"))
        .collect();
    assert_eq!(unfinished, expected);
}

/// Where the journal's frames end (the file goes on with zeros written ahead).
fn data_end(dir: &Path) -> u64 {
    let file = std::fs::File::open(dir.join(journal::JOURNAL)).unwrap();
    journal::scan(&file, |_, _| Ok(())).unwrap().0
}

#[tokio::test]
async fn compaction_moves_finished_games_out_of_the_journal() {
    let dir = temp_dir("compact");
    let finished = |g: u64| g % 4 != 0;
    let store = open(&dir).await;
    fill(&store, 200, 12, finished).await;
    let (_, archive_before) = embedded(&store).disk_usage().unwrap();
    let before = data_end(&dir);
    embedded(&store).compact_now().await.unwrap();
    assert_eq!(embedded(&store).compactions(), 1);
    let (_, archive_after) = embedded(&store).disk_usage().unwrap();
    let after = data_end(&dir);
    // 150 of 200 games finished: the journal keeps the 50 in progress and one small frame per
    // finished game; the finished games' logs moved to the archive.
    assert!(after * 2 < before, "journal {before} -> {after} bytes");
    assert!(
        archive_after > archive_before,
        "archive {archive_before} -> {archive_after}"
    );
    check(&store, 200, 12, finished).await;
    // Writes go on after the swap of the journal, and everything survives a reopen.
    store.create(&record("late", None)).await.unwrap();
    assert_eq!(
        store.append("late", &entry(1, "late")).await,
        Ok(Appended::Ok)
    );
    assert!(
        store.append("g1", &entry(13, "g1")).await.is_err(),
        "g1 is finished"
    );
    store.finish("late").await.unwrap();
    drop(store);
    let store = open(&dir).await;
    check(&store, 200, 12, finished).await;
    assert_eq!(
        store.load("late").await.unwrap().unwrap().1,
        vec![entry(1, "late")]
    );
    // A second compaction with nothing new to archive changes nothing.
    embedded(&store).compact_now().await.unwrap();
    check(&store, 200, 12, finished).await;
}

#[tokio::test]
async fn a_torn_tail_is_cut_off_and_saved_aside() {
    let dir = temp_dir("torn");
    {
        let store = open(&dir).await;
        fill(&store, 10, 3, |g| g == 0).await;
    }
    let path = dir.join(journal::JOURNAL);
    // The journal is written ahead with zeros: they are not a torn tail.
    drop(open(&dir).await);
    let tails = || {
        std::fs::read_dir(&dir)
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                name.to_string_lossy().contains(".tail-")
            })
            .count()
    };
    assert_eq!(tails(), 0, "zeros written ahead were taken for a torn tail");
    let file = std::fs::File::options()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let (end, _) = journal::scan(&file, |_, _| Ok(())).unwrap();
    // Half a frame at the end of the data, as a crash during a write leaves it.
    let mut frame = Vec::new();
    journal::encode(
        &journal::Rec::Append {
            id: "g1",
            seq: 4,
            body: b"never acknowledged",
        },
        end,
        &mut frame,
    );
    frame.truncate(frame.len() / 2);
    std::os::unix::fs::FileExt::write_all_at(&file, &frame, end).unwrap();
    drop(file);

    let store = open(&dir).await;
    check(&store, 10, 3, |g| g == 0).await;
    assert_eq!(std::fs::metadata(&path).unwrap().len(), end);
    let aside = dir.join(format!("{}.tail-{end}", journal::JOURNAL));
    assert!(std::fs::read(aside).unwrap().starts_with(&frame));
    assert_eq!(tails(), 1);
    // The log goes on from the last acknowledged entry.
    assert_eq!(store.append("g1", &entry(4, "g1")).await, Ok(Appended::Ok));
}

/// Writes a data directory exactly as the redb layout (version 1) did: the tables and key
/// types of the embedded store before the journal, written here with redb directly.
fn write_redb_layout(dir: &Path, games: u64, plays: u64, finished: impl Fn(u64) -> bool) {
    type GameRow = (Option<&'static str>, Option<&'static str>, &'static [u8]);
    let meta: redb::TableDefinition<&str, u64> = redb::TableDefinition::new("shuangkou_meta");
    let games_t: redb::TableDefinition<&str, GameRow> = redb::TableDefinition::new("games");
    let log_t: redb::TableDefinition<(&str, u64), &[u8]> = redb::TableDefinition::new("log");
    let lens_t: redb::TableDefinition<&str, u64> = redb::TableDefinition::new("log_len");
    let req_t: redb::TableDefinition<(Option<&str>, &str), &str> =
        redb::TableDefinition::new("requests");
    let unfinished_t: redb::TableDefinition<&str, ()> = redb::TableDefinition::new("unfinished");
    let finished_t: redb::TableDefinition<&str, u64> = redb::TableDefinition::new("finished");
    std::fs::create_dir_all(dir).unwrap();
    let db = redb::Database::create(dir.join(legacy::LEGACY_FILE)).unwrap();
    let txn = db.begin_write().unwrap();
    {
        txn.open_table(meta).unwrap().insert("schema", 1).unwrap();
        let mut gt = txn.open_table(games_t).unwrap();
        let mut lt = txn.open_table(log_t).unwrap();
        let mut lens = txn.open_table(lens_t).unwrap();
        let mut req = txn.open_table(req_t).unwrap();
        let mut unf = txn.open_table(unfinished_t).unwrap();
        let mut fin = txn.open_table(finished_t).unwrap();
        for g in 0..games {
            let id = format!("g{g}");
            let rid = format!("r{g}");
            let rec = record(&id, Some(&rid));
            gt.insert(
                id.as_str(),
                (Some("p"), Some(rid.as_str()), rec.body.as_slice()),
            )
            .unwrap();
            req.insert((Some("p"), rid.as_str()), id.as_str()).unwrap();
            for seq in 1..=plays {
                lt.insert((id.as_str(), seq), entry(seq, &id).body.as_slice())
                    .unwrap();
            }
            lens.insert(id.as_str(), plays).unwrap();
            if finished(g) {
                fin.insert(id.as_str(), 1_700_000_000).unwrap();
            } else {
                unf.insert(id.as_str(), ()).unwrap();
            }
        }
    }
    txn.commit().unwrap();
}

#[tokio::test]
async fn a_redb_layout_directory_is_converted_once() {
    let dir = temp_dir("legacy");
    let finished = |g: u64| g % 3 == 0;
    write_redb_layout(&dir, 30, 5, finished);
    let store = open(&dir).await;
    check(&store, 30, 5, finished).await;
    assert!(!dir.join(legacy::LEGACY_FILE).exists());
    assert!(dir.join(legacy::MIGRATED_FILE).exists());
    // Games in progress go on; the converted store survives a reopen (no second conversion).
    assert_eq!(store.append("g1", &entry(6, "g1")).await, Ok(Appended::Ok));
    drop(store);
    let store = open(&dir).await;
    let (_, log) = store.load("g1").await.unwrap().unwrap();
    assert_eq!(log.len(), 6);
    assert_eq!(store.unfinished().await.unwrap().len(), 20);
}

/// Holds a compaction (its `IoStep::Compact` fault hook) until released; every wait bounded.
#[derive(Default)]
struct Gate {
    state: std::sync::Mutex<(bool, bool)>,
    changed: std::sync::Condvar,
}

impl Gate {
    /// Called by the compaction thread: marks it entered, waits for the release (≤ 60 s).
    fn hold(&self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let mut s = self.state.lock().unwrap();
        s.0 = true;
        self.changed.notify_all();
        while !s.1 && std::time::Instant::now() < deadline {
            s = self
                .changed
                .wait_timeout(s, std::time::Duration::from_millis(100))
                .unwrap()
                .0;
        }
    }

    fn entered(&self) -> bool {
        self.state.lock().unwrap().0
    }

    fn release(&self) {
        self.state.lock().unwrap().1 = true;
        self.changed.notify_all();
    }
}

#[tokio::test]
async fn writes_are_answered_while_a_compaction_runs_and_survive_its_swap() {
    use shuangkou::store::embedded::{Faults, IoStep};
    use std::sync::Arc;
    use std::time::Duration;
    let dir = temp_dir("compact-concurrent");
    let gate = Arc::new(Gate::default());
    let faults: Faults = {
        let gate = Arc::clone(&gate);
        Arc::new(move |step: IoStep| {
            if step == IoStep::Compact {
                gate.hold();
            }
            Ok(())
        })
    };
    let finished = |g: u64| g % 4 != 0;
    let store = Arc::new(Store::Embedded(
        EmbeddedStore::open_with_faults(&*dir, faults.clone()).unwrap(),
    ));
    fill(&store, 200, 12, finished).await;
    let before = data_end(&dir);
    let compacting = {
        let store = Arc::clone(&store);
        tokio::spawn(async move { embedded(&store).compact_now().await })
    };
    let bound = Duration::from_secs(30);
    tokio::time::timeout(bound, async {
        while !gate.entered() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the compaction did not start");
    // The compaction is held mid-way: writes of every kind are still answered (they would wait
    // for it on the writer thread).
    let writes = async {
        for g in (0..200).filter(|g| !finished(*g)) {
            let id = format!("g{g}");
            assert_eq!(store.append(&id, &entry(13, &id)).await, Ok(Appended::Ok));
        }
        store.create(&record("late", Some("r-late"))).await.unwrap();
        for seq in 1..=3 {
            assert_eq!(
                store.append("late", &entry(seq, "late")).await,
                Ok(Appended::Ok)
            );
        }
        // A game finished while the compaction runs (it was in progress in its copy).
        store.finish("g0").await.unwrap();
        assert!(store.append("g1", &entry(13, "g1")).await.is_err());
    };
    tokio::time::timeout(bound, writes)
        .await
        .expect("writes waited for the compaction");
    assert_eq!(embedded(&store).compactions(), 0, "not swapped in yet");
    gate.release();
    tokio::time::timeout(bound, compacting)
        .await
        .expect("the compaction did not end")
        .unwrap()
        .unwrap();
    assert_eq!(embedded(&store).compactions(), 1);
    let after = data_end(&dir);
    assert!(after * 2 < before, "journal {before} -> {after} bytes");

    // What was written meanwhile is in the new journal: read back now and after a reopen.
    check_after_concurrent_compaction(&store, finished).await;
    drop(Arc::try_unwrap(store).ok().expect("one owner of the store"));
    let store = open(&dir).await;
    check_after_concurrent_compaction(&store, finished).await;
    assert!(
        store.append("g0", &entry(14, "g0")).await.is_err(),
        "g0 is finished"
    );
    // The game finished during the compaction is archived by the next one.
    embedded(&store).compact_now().await.unwrap();
    assert_eq!(embedded(&store).compactions(), 1);
    check_after_concurrent_compaction(&store, finished).await;
}

/// The games of [`writes_are_answered_while_a_compaction_runs_and_survive_its_swap`]: 12 entries
/// each if finished before it, else 13 (g0 then finished), and `late` with 3.
async fn check_after_concurrent_compaction(store: &Store, finished: impl Fn(u64) -> bool) {
    let expect = |id: &str, n: u64| (1..=n).map(|s| entry(s, id)).collect::<Vec<LogEntry>>();
    for g in 0..200 {
        let id = format!("g{g}");
        let n = if finished(g) { 12 } else { 13 };
        let (_, log) = store.load(&id).await.unwrap().unwrap();
        assert_eq!(log, expect(&id, n), "{id}");
    }
    assert_eq!(
        store.load("late").await.unwrap().unwrap().1,
        expect("late", 3)
    );
    assert_eq!(
        store.create(&record("again", Some("r-late"))).await,
        Ok(Created::Existing("late".into()))
    );
    let unfinished: HashSet<String> = store.unfinished().await.unwrap().into_iter().collect();
    let mut want: HashSet<String> = (1..200)
        .filter(|g| !finished(*g))
        .map(|g| format!("g{g}"))
        .collect();
    want.insert("late".into());
    assert_eq!(unfinished, want);
}

/// Waits until the compaction thread holds at `gate` (at most `bound`).
async fn entered(gate: &Gate, bound: std::time::Duration) -> bool {
    let deadline = std::time::Instant::now() + bound;
    while !gate.entered() && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    gate.entered()
}

/// Appends `seqs` to every game in progress of the store [`fill`] made (and to `late`).
async fn append_meanwhile(
    store: &Store,
    finished: impl Fn(u64) -> bool,
    seqs: std::ops::RangeInclusive<u64>,
) {
    for g in (0..200).filter(|g| !finished(*g)) {
        let id = format!("g{g}");
        for seq in seqs.clone() {
            assert_eq!(store.append(&id, &entry(seq, &id)).await, Ok(Appended::Ok));
        }
    }
}

#[tokio::test]
async fn the_compaction_thread_copies_the_durable_tail_and_the_writer_only_what_follows() {
    use shuangkou::store::embedded::{Faults, IoStep};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;
    let dir = temp_dir("compact-durable-tail");
    // The first hold is before the compaction reads anything, the second once its thread has
    // copied the journal's durable tail (before the writer is woken to swap it in).
    let gates = Arc::new([Gate::default(), Gate::default()]);
    let faults: Faults = {
        let (gates, calls) = (Arc::clone(&gates), Arc::new(AtomicUsize::new(0)));
        Arc::new(move |step: IoStep| {
            if step == IoStep::Compact
                && let Some(gate) = gates.get(calls.fetch_add(1, Ordering::SeqCst))
            {
                gate.hold();
            }
            Ok(())
        })
    };
    let finished = |g: u64| g % 4 != 0;
    let store = Arc::new(Store::Embedded(
        EmbeddedStore::open_with_faults(&*dir, faults).unwrap(),
    ));
    fill(&store, 200, 12, finished).await;
    let compacting = {
        let store = Arc::clone(&store);
        tokio::spawn(async move { embedded(&store).compact_now().await })
    };
    let bound = Duration::from_secs(30);
    assert!(
        entered(&gates[0], bound).await,
        "the compaction did not start"
    );
    // Answered, so durable: the compaction thread copies these itself.
    tokio::time::timeout(bound, append_meanwhile(&store, finished, 13..=14))
        .await
        .expect("writes waited for the compaction");
    gates[0].release();
    assert!(
        entered(&gates[1], bound).await,
        "the compaction thread did not copy its tail"
    );
    // Written after the thread's copy: only the writer's swap brings these over.
    tokio::time::timeout(bound, append_meanwhile(&store, finished, 15..=15))
        .await
        .expect("writes waited for the compaction");
    store.finish("g0").await.unwrap();
    assert_eq!(embedded(&store).compactions(), 0, "not swapped in yet");
    gates[1].release();
    tokio::time::timeout(bound, compacting)
        .await
        .expect("the compaction did not end")
        .unwrap()
        .unwrap();
    assert_eq!(embedded(&store).compactions(), 1, "swapped in");

    let check = |store: Arc<Store>| async move {
        for g in 0..200 {
            let id = format!("g{g}");
            let n = if finished(g) { 12 } else { 15 };
            let want: Vec<LogEntry> = (1..=n).map(|s| entry(s, &id)).collect();
            assert_eq!(store.load(&id).await.unwrap().unwrap().1, want, "{id}");
        }
        assert!(
            store.append("g0", &entry(16, "g0")).await.is_err(),
            "g0 is finished"
        );
        let unfinished: HashSet<String> = store.unfinished().await.unwrap().into_iter().collect();
        assert_eq!(unfinished.len(), 49, "g4, g8, … in progress");
        store
    };
    let store = check(store).await;
    drop(Arc::try_unwrap(store).ok().expect("one owner of the store"));
    check(Arc::new(open(&dir).await)).await;
}
