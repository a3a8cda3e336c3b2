//! The embedded durable store: the store contract (`tests/store_contract/`), then what only the
//! journal has: group commit, compaction of finished games, conversion of a redb-layout data
//! directory, torn tails, corrupt and foreign files, recovery after a simulated write failure,
//! and acknowledged appends surviving SIGKILL.

#[macro_use]
mod store_contract;
#[path = "store_contract/durable.rs"]
mod store_contract_durable;
#[path = "common/temp.rs"]
pub mod temp;

use std::collections::BTreeMap;
use std::io;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use shuangkou::store::embedded::{EmbeddedStore, FILE_NAME, Faults, IoStep, legacy};
use shuangkou::store::{Appended, Created, Store};
use store_contract::{Fixture, entry, pinned, record, script};
use store_contract_durable::Durable;
use temp::TempDir;

fn temp_dir(name: &str) -> TempDir {
    TempDir::fresh("store-embedded", name)
}

/// The embedded store in a fresh directory.
struct Embedded {
    store: Arc<Store>,
    dir: TempDir,
}

impl Fixture for Embedded {
    async fn start(name: &str) -> Option<Self> {
        let dir = temp_dir(name);
        Some(Embedded {
            store: Arc::new(open(&dir).await),
            dir,
        })
    }
    fn store(&self) -> &Arc<Store> {
        &self.store
    }
}

impl Durable for Embedded {
    async fn reopen(&mut self) {
        let closed =
            std::mem::replace(&mut self.store, Arc::new(Store::Memory(Default::default())));
        assert_eq!(Arc::strong_count(&closed), 1, "the store is still shared");
        drop(closed);
        self.store = Arc::new(open(&self.dir).await);
    }
}

store_contract!(Embedded, durable);

async fn open(dir: &std::path::Path) -> Store {
    match Store::open(&dir.display().to_string()).await {
        Ok(s) => s,
        Err(e) => panic!("open {}: {e}", dir.display()),
    }
}

#[tokio::test]
async fn subscribe_sees_appends() {
    let dir = temp_dir("subscribe");
    let store = open(&dir).await;
    store.create(&record("g", None, None)).await.unwrap();
    let mut rx = store.subscribe("g");
    let mut rx2 = store.subscribe("g");
    for seq in 1..=3 {
        assert_eq!(store.append("g", &entry(seq, "x")).await, Ok(Appended::Ok));
    }
    // A conflict notifies nothing.
    assert!(matches!(
        store.append("g", &entry(2, "x")).await,
        Ok(Appended::Conflict { .. })
    ));
    for seq in 1..=3 {
        assert_eq!(rx.recv().await, Ok(seq));
        assert_eq!(rx2.recv().await, Ok(seq));
    }
    assert!(rx.try_recv().is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_games_group_commit() {
    const GAMES: usize = 100;
    const LEN: u64 = 30;
    let dir = temp_dir("group");
    let store = Arc::new(open(&dir).await);
    let started = std::time::Instant::now();
    let mut handles = Vec::new();
    for g in 0..GAMES {
        let store = Arc::clone(&store);
        handles.push(tokio::spawn(async move {
            let id = format!("game-{g}");
            assert_eq!(
                store.create(&record(&id, Some("p"), Some(&id))).await,
                Ok(Created::New)
            );
            for seq in 1..=LEN {
                let r = store.append(&id, &entry(seq, &format!("{id}/{seq}"))).await;
                assert_eq!(r, Ok(Appended::Ok));
            }
            if g % 2 == 0 {
                store.finish(&id).await.unwrap();
            }
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
    let elapsed = started.elapsed();
    let Store::Embedded(embedded) = &*store else {
        panic!("not embedded")
    };
    let (commits, ops) = embedded.commit_stats();
    let total = GAMES as u64 * (LEN + 1) + GAMES as u64 / 2;
    assert_eq!(ops, total);
    assert!(
        commits < ops,
        "no group commit: {commits} commits for {ops} writes"
    );
    eprintln!(
        "{ops} writes in {commits} commits ({:.1} per commit), {elapsed:?}",
        ops as f64 / commits as f64
    );
    drop(store);

    let store = open(&dir).await;
    for g in 0..GAMES {
        let id = format!("game-{g}");
        let (_, log) = store.load(&id).await.unwrap().unwrap();
        let seqs: Vec<u64> = log.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, (1..=LEN).collect::<Vec<_>>());
    }
    assert_eq!(store.unfinished().await.unwrap().len(), GAMES / 2);
}

/// The script table holds a text once however many games pin it, and compaction keeps it in the
/// journal (not in each archived game): with ten finished games pinning one 16 KiB script, the
/// compacted journal holds one copy and the archive none.
#[tokio::test]
async fn a_script_is_written_once_and_compaction_keeps_it_once() {
    const GAMES: usize = 10;
    let dir = temp_dir("script-once");
    let v1 = script("v1", 16);
    let text = v1.text.len() as u64;
    let store = open(&dir).await;
    for g in 0..GAMES {
        let id = format!("g{g}");
        store.create(&pinned(&id, &v1)).await.unwrap();
        store.append(&id, &entry(1, &id)).await.unwrap();
        store.finish(&id).await.unwrap();
    }
    let Store::Embedded(embedded) = &store else {
        panic!("not embedded")
    };
    embedded.compact_now().await.unwrap();
    // An archived game's head: its record and length from its one archive frame.
    assert_eq!(store.head("g0").await, Ok(Some((pinned("g0", &v1), 1))));
    let (_, archive) = embedded.disk_usage().unwrap();
    // The journal's data (the file goes on with zeros written ahead).
    let file = std::fs::File::open(dir.join(FILE_NAME)).unwrap();
    let journal = shuangkou::store::embedded::journal::scan(&file, |_, _| Ok(()))
        .unwrap()
        .0;
    assert!(
        (text..2 * text).contains(&journal),
        "journal {journal} B for one {text} B script"
    );
    assert!(
        archive < text,
        "archive {archive} B holds a {text} B script"
    );
    drop(store);
    let store = open(&dir).await;
    for g in 0..GAMES {
        let id = format!("g{g}");
        assert_eq!(store.load(&id).await.unwrap().unwrap().0, pinned(&id, &v1));
    }
}

/// Opening `dir` fails; returns the error text.
async fn open_error(dir: &std::path::Path) -> String {
    match Store::open(&dir.display().to_string()).await {
        Ok(_) => panic!("opened {}", dir.display()),
        Err(e) => e.to_string(),
    }
}

#[tokio::test]
async fn corrupt_file_is_a_clear_error() {
    // A journal that does not start with the magic, and a redb-layout file that is garbage.
    for name in [FILE_NAME, legacy::LEGACY_FILE] {
        let dir = temp_dir("garbage");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, vec![0x5a; 64 * 1024]).unwrap();
        let text = open_error(&dir).await;
        let path_text = path.display().to_string();
        assert!(text.contains(&path_text), "{text}");
        let rest = text.replace(&path_text, "");
        assert!(
            rest.contains("is corrupt") || rest.contains("not a shuangkou store"),
            "{text}"
        );
        // The file is left alone for inspection.
        assert_eq!(std::fs::read(&path).unwrap(), vec![0x5a; 64 * 1024]);
    }
}

#[tokio::test]
async fn foreign_database_is_refused() {
    let dir = temp_dir("foreign");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(legacy::LEGACY_FILE);
    {
        let db = redb::Database::create(&path).unwrap();
        let txn = db.begin_write().unwrap();
        {
            let def: redb::TableDefinition<&str, u64> = redb::TableDefinition::new("accounts");
            let mut t = txn.open_table(def).unwrap();
            t.insert("alice", 1).unwrap();
        }
        txn.commit().unwrap();
    }
    let text = open_error(&dir).await;
    assert!(text.contains(&path.display().to_string()), "{text}");
    assert!(text.contains("not a shuangkou store"), "{text}");
    // Nothing was converted: no journal, the foreign file untouched.
    assert!(!dir.join(FILE_NAME).exists());
    assert!(path.exists());
}

#[tokio::test]
async fn second_open_of_the_same_directory_fails() {
    let dir = temp_dir("twice");
    let _store = open(&dir).await;
    let text = match Store::open(&dir.display().to_string()).await {
        Ok(_) => panic!("opened twice"),
        Err(e) => e.to_string(),
    };
    assert!(text.contains("already open"), "{text}");
}

#[tokio::test]
async fn unusable_directory_is_an_error() {
    let dir = temp_dir("notadir");
    std::fs::create_dir_all(dir.parent().unwrap()).unwrap();
    std::fs::write(&dir, b"a file").unwrap();
    let text = match Store::open(&dir.display().to_string()).await {
        Ok(_) => panic!("opened a file as a directory"),
        Err(e) => e.to_string(),
    };
    assert!(text.contains(&dir.display().to_string()), "{text}");
}

#[tokio::test]
async fn write_failure_is_an_error_and_the_store_recovers() {
    let dir = temp_dir("flaky");
    // Writes and fsyncs fail while `fail` is set (a full disk).
    let fail = Arc::new(AtomicBool::new(false));
    let faults: Faults = {
        let fail = Arc::clone(&fail);
        Arc::new(move |_step: IoStep| {
            if fail.load(Ordering::SeqCst) {
                Err(io::Error::other("simulated: no space left on device"))
            } else {
                Ok(())
            }
        })
    };
    let store = Store::Embedded(EmbeddedStore::open_with_faults(&*dir, faults).unwrap());
    store.create(&record("g", None, None)).await.unwrap();
    for seq in 1..=5 {
        assert_eq!(store.append("g", &entry(seq, "ok")).await, Ok(Appended::Ok));
    }

    fail.store(true, Ordering::SeqCst);
    // Never Ok while the disk is full; the failure is reported to every waiter.
    let r = store.append("g", &entry(6, "lost?")).await;
    assert!(r.is_err(), "append on a failing disk returned {r:?}");
    assert!(store.create(&record("h", None, None)).await.is_err());
    assert!(store.ping().await.is_err());

    // Space is freed: the store cuts the journal back to its last commit and works again.
    fail.store(false, Ordering::SeqCst);
    let mut healthy = false;
    for _ in 0..50 {
        if store.ping().await.is_ok() {
            healthy = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(healthy, "store did not recover");
    // The failed append's outcome was unknown to its caller; either way the log has no gap.
    let (_, log) = store.load("g").await.unwrap().unwrap();
    let len = log.len() as u64;
    assert!(len == 5 || len == 6, "log length {len}");
    for (i, e) in log.iter().enumerate() {
        assert_eq!(e.seq, i as u64 + 1);
    }
    assert_eq!(
        &log[..5],
        &(1..=5).map(|s| entry(s, "ok")).collect::<Vec<_>>()[..]
    );
    assert_eq!(
        store.append("g", &entry(len + 1, "again")).await,
        Ok(Appended::Ok)
    );
    assert_eq!(
        store.create(&record("h2", None, None)).await,
        Ok(Created::New)
    );
}

/// The pipelined group commit: batches written while a failing fsync is in flight fail too (they
/// were decided on the failed batch's writes), and every append that was acknowledged is in the
/// log, in order, before and after a reopen.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failed_fsync_fails_the_batches_behind_it_and_loses_no_acknowledged_append() {
    let dir = temp_dir("pipelined-failure");
    // Every fsync of a commit takes 5 ms (so that later batches are written meanwhile); the
    // 4th, 9th and 14th fail.
    let syncs = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let faults: Faults = {
        let syncs = Arc::clone(&syncs);
        Arc::new(move |step: IoStep| {
            if step != IoStep::Sync {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(5));
            let n = syncs.fetch_add(1, Ordering::SeqCst) + 1;
            if n % 5 == 4 && n < 15 {
                Err(io::Error::other("simulated: fsync failed"))
            } else {
                Ok(())
            }
        })
    };
    let store = Arc::new(Store::Embedded(
        EmbeddedStore::open_with_faults(&*dir, faults).unwrap(),
    ));
    const GAMES: usize = 8;
    const PLAYS: u64 = 40;
    let mut tasks = Vec::new();
    for g in 0..GAMES {
        let store = Arc::clone(&store);
        tasks.push(tokio::spawn(async move {
            let id = format!("g{g}");
            let deadline = std::time::Instant::now() + Duration::from_secs(60);
            while store.create(&record(&id, None, None)).await.is_err() {
                if store.load(&id).await.ok().flatten().is_some() {
                    break;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "{id}: not created within 60 s of injected failures"
                );
            }
            // The acknowledged appends: seq -> body.
            let mut acked = BTreeMap::new();
            let mut failed = 0;
            let mut next = 1;
            while next <= PLAYS {
                let body = format!("{id}-{next}-try{failed}");
                match store.append(&id, &entry(next, &body)).await {
                    Ok(Appended::Ok) => {
                        acked.insert(next, body);
                        next += 1;
                    }
                    // The outcome of a failed append is unknown: go on from the stored length.
                    Ok(Appended::Conflict { current }) => next = current + 1,
                    Err(_) => {
                        failed += 1;
                        assert!(failed < 200, "{id}: the store does not recover");
                        let _ = store.ping().await;
                        if let Ok(Some((_, log))) = store.load(&id).await {
                            next = log.len() as u64 + 1;
                        }
                    }
                }
            }
            (id, acked, failed)
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.push(t.await.unwrap());
    }
    let failures: usize = all.iter().map(|(_, _, f)| f).sum();
    assert!(failures > 0, "no append saw the injected fsync failures");
    check_acknowledged(&store, &all, PLAYS, "before reopen").await;
    let store = Arc::into_inner(store).expect("the store is still shared");
    drop(store);
    check_acknowledged(&open(&dir).await, &all, PLAYS, "after reopen").await;
}

/// The pipelined group commit decides a batch against the batches still in flight: appenders
/// racing on one game (each retrying a conflict at the reported length) never get two entries
/// with the same number acknowledged, while slow fsyncs keep several batches in flight.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_appends_are_decided_against_the_batches_in_flight() {
    let dir = temp_dir("pipelined-race");
    let faults: Faults = Arc::new(|step: IoStep| {
        if step == IoStep::Sync {
            std::thread::sleep(Duration::from_millis(3));
        }
        Ok(())
    });
    let store = Arc::new(Store::Embedded(
        EmbeddedStore::open_with_faults(&*dir, faults).unwrap(),
    ));
    store.create(&record("g", None, None)).await.unwrap();
    const RACERS: usize = 6;
    const LEN: u64 = 60;
    let mut tasks = Vec::new();
    for r in 0..RACERS {
        let store = Arc::clone(&store);
        tasks.push(tokio::spawn(async move {
            let mut acked = BTreeMap::new();
            let mut next = 1;
            while next <= LEN {
                let body = format!("racer{r}-{next}");
                match store.append("g", &entry(next, &body)).await.unwrap() {
                    Appended::Ok => {
                        acked.insert(next, body);
                        next += 1;
                    }
                    Appended::Conflict { current } => next = current + 1,
                }
            }
            acked
        }));
    }
    let mut winners: BTreeMap<u64, String> = BTreeMap::new();
    for t in tasks {
        for (seq, body) in t.await.unwrap() {
            if let Some(other) = winners.insert(seq, body.clone()) {
                panic!("entry {seq} acknowledged twice: {other} and {body}");
            }
        }
    }
    assert_eq!(winners.len() as u64, LEN, "every entry has one winner");
    let games = vec![("g".to_string(), winners, 0)];
    check_acknowledged(&store, &games, LEN, "before reopen").await;
    let store = Arc::into_inner(store).expect("the store is still shared");
    drop(store);
    check_acknowledged(&open(&dir).await, &games, LEN, "after reopen").await;
}

/// Each game's log has no gap, at least `plays` entries, and every acknowledged append's body.
async fn check_acknowledged(
    store: &Store,
    games: &[(String, BTreeMap<u64, String>, usize)],
    plays: u64,
    label: &str,
) {
    for (id, acked, _) in games {
        let (_, log) = store.load(id).await.unwrap().unwrap();
        for (i, e) in log.iter().enumerate() {
            assert_eq!(e.seq, i as u64 + 1, "{label}: {id}: gap in the log");
        }
        assert!(
            log.len() as u64 >= plays,
            "{label}: {id}: log of {}",
            log.len()
        );
        for (seq, body) in acked {
            assert_eq!(
                log[*seq as usize - 1].body,
                body.as_bytes(),
                "{label}: {id}: acknowledged append {seq} lost"
            );
        }
    }
}

#[tokio::test]
async fn spec_parsing() {
    assert_eq!(Store::open("memory").await.unwrap().kind(), "memory");
    assert!(Store::open("").await.is_err());
    let text = match Store::open("ftp://x").await {
        Ok(_) => panic!("accepted ftp"),
        Err(e) => e.to_string(),
    };
    assert!(text.contains("unknown store scheme"), "{text}");
}

/// The writer half of [`acknowledged_appends_survive_sigkill`], run only by it (`--ignored`,
/// with `SHUANGKOU_CRASH_CHILD_DIR` set; without the variable it fails): appends to a few games
/// from several tasks and prints `ACK <game> <seq>` after each acknowledged append, until killed.
#[test]
#[ignore = "the child process of acknowledged_appends_survive_sigkill"]
fn crash_child() {
    let dir = std::env::var("SHUANGKOU_CRASH_CHILD_DIR")
        .expect("crash_child runs only as the child of acknowledged_appends_survive_sigkill");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let store = Arc::new(open(std::path::Path::new(&dir)).await);
        let mut handles = Vec::new();
        for g in 0..8 {
            let store = Arc::clone(&store);
            handles.push(tokio::spawn(async move {
                let id = format!("crash-{g}");
                let created = store.create(&record(&id, Some("p"), Some(&id))).await;
                assert!(created.is_ok(), "{created:?}");
                let mut seq = store.load(&id).await.unwrap().unwrap().1.len() as u64 + 1;
                loop {
                    match store.append(&id, &entry(seq, "x")).await {
                        Ok(Appended::Ok) => {
                            use std::io::Write;
                            let mut out = std::io::stdout().lock();
                            let _ = writeln!(out, "ACK {id} {seq}");
                            let _ = out.flush();
                            seq += 1;
                        }
                        other => panic!("append: {other:?}"),
                    }
                }
            }));
        }
        for h in handles {
            let _ = h.await;
        }
    });
}

#[tokio::test]
async fn acknowledged_appends_survive_sigkill() {
    use std::io::BufRead;
    let dir = temp_dir("sigkill");
    let exe = std::env::current_exe().unwrap();
    let mut acked: BTreeMap<String, u64> = BTreeMap::new();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as u64;
    eprintln!("sigkill seed {seed}");
    for round in 0..4u64 {
        let mut child = std::process::Command::new(&exe)
            .args([
                "--exact",
                "crash_child",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("SHUANGKOU_CRASH_CHILD_DIR", &*dir)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<(String, u64)>();
        let reader = std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let mut parts = line.split(' ');
                if let (Some("ACK"), Some(id), Some(seq)) =
                    (parts.next(), parts.next(), parts.next())
                {
                    let _ = tx.send((id.to_string(), seq.parse::<u64>().unwrap()));
                }
            }
        });
        // Kill it mid-run, after a number of acknowledgements that varies per round (an
        // ordering point, not a time window): later appends are in flight when it dies.
        let kill_after = 50 + (seed + round * 97) % 400;
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        let mut acks = Vec::new();
        while (acks.len() as u64) < kill_after {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match rx.recv_timeout(left) {
                Ok(ack) => acks.push(ack),
                Err(e) => panic!(
                    "round {round} (seed {seed}): {} acknowledgements of {kill_after} before {e:?}",
                    acks.len()
                ),
            }
        }
        child.kill().unwrap();
        child.wait().unwrap();
        reader.join().unwrap();
        acks.extend(rx.try_iter());
        for (id, seq) in acks {
            let max = acked.entry(id).or_default();
            *max = (*max).max(seq);
        }
        // Reopen (the torn tail, if any, is cut off): every acknowledged append is there, no gaps.
        let store = open(&dir).await;
        for (id, max) in &acked {
            let (_, log) = store.load(id).await.unwrap().unwrap();
            assert!(
                log.len() as u64 >= *max,
                "{id}: acknowledged {max}, found {} (seed {seed})",
                log.len()
            );
            for (i, e) in log.iter().enumerate() {
                assert_eq!(e.seq, i as u64 + 1, "{id}: gap");
            }
        }
    }
}
