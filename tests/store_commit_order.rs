//! The embedded store's commit order: one fsync at a time, each covering a whole batch. A write
//! queued while a batch's fsync is in flight is committed after that batch is answered, by a
//! sync of its own that starts only once the first has ended; when the first fsync fails, its
//! batch fails (outcome unknown) and the write queued behind it is committed after the journal
//! is cut back, never acknowledged on top of a lost one. And a failed write right after a
//! compaction cuts the new journal back to its own durable end.

#[path = "common/temp.rs"]
pub mod temp;

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use shuangkou::store::embedded::{EmbeddedStore, Faults, IoStep};
use shuangkou::store::{Appended, GameRecord, LogEntry, Store, StoreError};
use temp::TempDir;

/// How long the hook waits for something another thread does before it gives up.
const DEADLINE: Duration = Duration::from_secs(10);

fn record(id: &str) -> GameRecord {
    GameRecord {
        id: id.to_string(),
        platform: None,
        request_id: None,
        body: format!("{{\"game\":\"{id}\"}}").into_bytes(),
        script: None,
    }
}

fn entry(seq: u64, body: &str) -> LogEntry {
    LogEntry {
        seq,
        body: body.as_bytes().to_vec(),
    }
}

/// What the fault hook saw of the commit fsyncs once armed.
#[derive(Default)]
struct Syncs {
    armed: AtomicBool,
    /// Fsyncs started since armed.
    started: AtomicU64,
    /// The first fsync (held) has ended.
    first_ended: AtomicBool,
    /// A later fsync started while the first was still in flight.
    overlapped: AtomicBool,
    /// The test has sent the second write (the first fsync is held until then).
    second_sent: AtomicBool,
}

/// Waits (polling, at most [`DEADLINE`]) until `done` says so; false if the deadline passed.
fn wait_until(done: impl Fn() -> bool) -> bool {
    let until = Instant::now() + DEADLINE;
    while !done() {
        if Instant::now() > until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

/// A store whose first fsync once armed is held until the second write was sent (and a little
/// longer, for it to be queued), then ends with `first`'s outcome; every later fsync records
/// whether it started before the first ended.
fn store_holding_the_first_sync(
    dir: &TempDir,
    first: fn() -> io::Result<()>,
) -> (Arc<Store>, Arc<Syncs>) {
    let syncs = Arc::new(Syncs::default());
    let faults: Faults = {
        let syncs = Arc::clone(&syncs);
        Arc::new(move |step: IoStep| {
            if step != IoStep::Sync || !syncs.armed.load(Ordering::SeqCst) {
                return Ok(());
            }
            if syncs.started.fetch_add(1, Ordering::SeqCst) != 0 {
                if !syncs.first_ended.load(Ordering::SeqCst) {
                    syncs.overlapped.store(true, Ordering::SeqCst);
                }
                return Ok(());
            }
            if wait_until(|| syncs.second_sent.load(Ordering::SeqCst)) {
                // Not a condition of the assertions: whether or not the second write is queued
                // by now, it must not get a sync of its own before this one has ended.
                std::thread::sleep(Duration::from_millis(200));
            }
            let outcome = first();
            syncs.first_ended.store(true, Ordering::SeqCst);
            outcome
        })
    };
    let store = EmbeddedStore::open_with_faults(&**dir, faults).expect("open the store");
    (Arc::new(Store::Embedded(store)), syncs)
}

/// Appends entry 1 to game `a`, then, once its fsync is in flight, entry 1 to game `b`; returns
/// both outcomes in the order the store answered them. Both appends are polled by this one task,
/// `a` first (`biased`): once both answers are in, `a`'s is taken first, so `b` comes first only
/// if the store answered it while `a`'s answer was still missing (not the order in which tasks
/// happened to run on a loaded machine).
async fn two_batches(
    store: &Arc<Store>,
    syncs: &Syncs,
) -> Vec<(&'static str, Result<Appended, StoreError>)> {
    for id in ["a", "b"] {
        store.create(&record(id)).await.expect("create");
    }
    syncs.armed.store(true, Ordering::SeqCst);
    let (a1, b1) = (entry(1, "a1"), entry(1, "b1"));
    let a = store.append("a", &a1);
    let b = async {
        let until = Instant::now() + DEADLINE;
        while syncs.started.load(Ordering::SeqCst) == 0 {
            assert!(
                Instant::now() < until,
                "the first append's fsync never started"
            );
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let appended = store.append("b", &b1);
        syncs.second_sent.store(true, Ordering::SeqCst);
        appended.await
    };
    let deadline = tokio::time::sleep(DEADLINE * 2);
    tokio::pin!(a, b, deadline);
    let (mut a_done, mut b_done) = (false, false);
    let mut answered = Vec::new();
    while answered.len() < 2 {
        tokio::select! {
            biased;
            r = &mut a, if !a_done => {
                a_done = true;
                answered.push(("a", r));
            }
            r = &mut b, if !b_done => {
                b_done = true;
                answered.push(("b", r));
            }
            () = &mut deadline => panic!("both appends are not answered in time"),
        }
    }
    answered
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_write_queued_during_a_sync_is_committed_after_it_by_a_sync_of_its_own() {
    let dir = TempDir::fresh("store-commit-order", "answered-in-order");
    let (store, syncs) = store_holding_the_first_sync(&dir, || Ok(()));
    let answered = two_batches(&store, &syncs).await;
    assert!(
        !syncs.overlapped.load(Ordering::SeqCst),
        "the second write's fsync started while the first was in flight"
    );
    let order: Vec<&str> = answered.iter().map(|(id, _)| *id).collect();
    assert_eq!(
        order,
        ["a", "b"],
        "answered out of write order: {answered:?}"
    );
    for (id, outcome) in &answered {
        assert_eq!(outcome, &Ok(Appended::Ok), "append to {id}");
    }
    assert_eq!(
        syncs.started.load(Ordering::SeqCst),
        2,
        "fsyncs since armed"
    );
    for id in ["a", "b"] {
        let (_, log) = store.load(id).await.unwrap().expect("the game");
        assert_eq!(log.len(), 1, "{id}'s log");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failed_sync_fails_its_batch_and_the_write_queued_behind_it_lands_after_the_repair() {
    let dir = TempDir::fresh("store-commit-order", "failed-before");
    let (store, syncs) =
        store_holding_the_first_sync(&dir, || Err(io::Error::other("simulated: fsync failed")));
    let answered = two_batches(&store, &syncs).await;
    assert!(
        !syncs.overlapped.load(Ordering::SeqCst),
        "the second write's fsync started while the first was in flight"
    );
    let order: Vec<&str> = answered.iter().map(|(id, _)| *id).collect();
    assert_eq!(
        order,
        ["a", "b"],
        "answered out of write order: {answered:?}"
    );
    let a = &answered[0].1;
    assert!(a.is_err(), "append to a acknowledged: {a:?}");
    assert_eq!(answered[1].1, Ok(Appended::Ok), "append to b");
    // The journal was cut back to before a's batch; b's write came after it and stays.
    let (_, a) = store.load("a").await.unwrap().expect("game a");
    let (_, b) = store.load("b").await.unwrap().expect("game b");
    assert!(a.is_empty(), "a's failed append is in its log: {a:?}");
    assert_eq!(b, [entry(1, "b1")]);
    drop(store);
    let reopened = Store::Embedded(EmbeddedStore::open(&*dir).expect("reopen"));
    let (_, a) = reopened.load("a").await.unwrap().expect("game a");
    let (_, b) = reopened.load("b").await.unwrap().expect("game b");
    assert!(
        a.is_empty(),
        "a's failed append is in its log after a reopen: {a:?}"
    );
    assert_eq!(b, [entry(1, "b1")], "b after a reopen");
}

/// A failed write right after a compaction swapped the journal repairs to the **new** journal's
/// durable end: the appends acknowledged after the repair are in the log after a reopen. (The
/// durable end the syncers report must move to the new journal with the swap; an offset left in
/// the old, longer journal would extend the new one with zeros, and the reopen would cut every
/// frame after them off as a torn tail.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_write_after_a_compaction_repairs_to_the_new_journal_s_end() {
    let dir = TempDir::fresh("store-commit-order", "repair-after-compaction");
    // The next journal write fails once `fail_write` is set (then the flag clears itself).
    let fail_write = Arc::new(AtomicBool::new(false));
    let faults: Faults = {
        let fail_write = Arc::clone(&fail_write);
        Arc::new(move |step: IoStep| {
            if step == IoStep::Write && fail_write.swap(false, Ordering::SeqCst) {
                return Err(io::Error::other("simulated: write failed"));
            }
            Ok(())
        })
    };
    let store = Store::Embedded(EmbeddedStore::open_with_faults(&*dir, faults).expect("open"));
    // Finished games fill most of the journal, so the compacted one is much shorter.
    let body = "x".repeat(2_000);
    for g in 0..8 {
        let id = format!("done{g}");
        store.create(&record(&id)).await.expect("create");
        for seq in 1..=10 {
            let appended = store.append(&id, &entry(seq, &body)).await;
            assert_eq!(appended, Ok(Appended::Ok), "{id} {seq}");
        }
        store.finish(&id).await.expect("finish");
    }
    store.create(&record("live")).await.expect("create live");
    assert_eq!(
        store.append("live", &entry(1, "live1")).await,
        Ok(Appended::Ok)
    );
    let Store::Embedded(embedded) = &store else {
        unreachable!("opened as the embedded store")
    };
    embedded.compact_now().await.expect("compact");
    assert_eq!(embedded.compactions(), 1, "the compaction ran");

    fail_write.store(true, Ordering::SeqCst);
    let failed = store.append("live", &entry(2, "lost")).await;
    assert!(
        failed.is_err(),
        "the failed write was acknowledged: {failed:?}"
    );
    let mut acked = vec![entry(1, "live1")];
    for seq in 2..=4 {
        let e = entry(seq, &format!("live{seq}"));
        assert_eq!(
            store.append("live", &e).await,
            Ok(Appended::Ok),
            "live {seq}"
        );
        acked.push(e);
    }
    let (_, log) = store.load("live").await.unwrap().expect("live");
    assert_eq!(log, acked, "before the reopen");

    drop(store);
    let reopened = Store::Embedded(EmbeddedStore::open(&*dir).expect("reopen"));
    let (_, log) = reopened
        .load("live")
        .await
        .unwrap()
        .expect("live after the reopen");
    assert_eq!(log, acked, "acknowledged appends lost by the reopen");
    let torn: Vec<String> = std::fs::read_dir(&*dir)
        .expect("the data directory")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains(".tail-"))
        .collect();
    assert!(torn.is_empty(), "the reopen found a torn tail: {torn:?}");
    for g in 0..8 {
        let id = format!("done{g}");
        let (_, log) = reopened.load(&id).await.unwrap().expect("archived game");
        assert_eq!(log.len(), 10, "{id}");
    }
}
