//! The embedded durable store: compare-and-append, idempotent create, recovery lists,
//! durability across reopen, concurrency (one winner per seq, group commit), corrupt and
//! foreign files, and recovery after a simulated write failure.

use std::collections::{BTreeMap, HashSet};
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use shuangkou::store::embedded::{BackendFactory, EmbeddedStore, FILE_NAME};
use shuangkou::store::{Appended, Created, GameRecord, LogEntry, Store};

/// A fresh directory under Cargo's per-test temp dir (on the target disk, not tmpfs), removed
/// when dropped (declare it before the store, so the store closes first).
struct TempDir(PathBuf);

impl std::ops::Deref for TempDir {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl AsRef<std::path::Path> for TempDir {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        let _ = std::fs::remove_file(&self.0);
    }
}

fn temp_dir(name: &str) -> TempDir {
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "store-embedded-{name}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    TempDir(dir)
}

fn record(id: &str, platform: Option<&str>, request_id: Option<&str>) -> GameRecord {
    GameRecord {
        id: id.into(),
        platform: platform.map(Into::into),
        request_id: request_id.map(Into::into),
        body: format!("{{\"game\":\"{id}\"}}").into_bytes(),
    }
}

fn entry(seq: u64, body: &str) -> LogEntry {
    LogEntry {
        seq,
        body: body.as_bytes().to_vec(),
    }
}

async fn open(dir: &std::path::Path) -> Store {
    match Store::open(&dir.display().to_string()).await {
        Ok(s) => s,
        Err(e) => panic!("open {}: {e}", dir.display()),
    }
}

#[tokio::test]
async fn create_load_append_finish() {
    let dir = temp_dir("basic");
    let store = open(&dir).await;
    assert_eq!(store.kind(), "embedded");
    assert!(dir.join(FILE_NAME).exists());
    store.ping().await.unwrap();

    assert_eq!(
        store.create(&record("g1", Some("acme"), Some("r1"))).await,
        Ok(Created::New)
    );
    // Same platform and request id: the existing game, whatever the new id.
    assert_eq!(
        store.create(&record("g2", Some("acme"), Some("r1"))).await,
        Ok(Created::Existing("g1".into()))
    );
    // Same request id on another platform (or in open mode) is another game.
    assert_eq!(
        store.create(&record("g2", Some("other"), Some("r1"))).await,
        Ok(Created::New)
    );
    assert_eq!(
        store.create(&record("g3", None, Some("r1"))).await,
        Ok(Created::New)
    );
    assert_eq!(
        store.create(&record("g4", None, None)).await,
        Ok(Created::New)
    );
    // A taken id is an error.
    assert!(store.create(&record("g4", None, None)).await.is_err());

    let (rec, log) = store.load("g1").await.unwrap().unwrap();
    assert_eq!(rec, record("g1", Some("acme"), Some("r1")));
    assert!(log.is_empty());
    assert_eq!(store.load("nope").await, Ok(None));

    assert_eq!(store.append("g1", &entry(1, "a")).await, Ok(Appended::Ok));
    assert_eq!(
        store.append("g1", &entry(1, "b")).await,
        Ok(Appended::Conflict { current: 1 })
    );
    assert_eq!(
        store.append("g1", &entry(3, "c")).await,
        Ok(Appended::Conflict { current: 1 })
    );
    assert_eq!(
        store.append("g1", &entry(0, "z")).await,
        Ok(Appended::Conflict { current: 1 })
    );
    assert_eq!(store.append("g1", &entry(2, "b")).await, Ok(Appended::Ok));
    assert!(store.append("nope", &entry(1, "x")).await.is_err());

    let (_, log) = store.load("g1").await.unwrap().unwrap();
    assert_eq!(log, vec![entry(1, "a"), entry(2, "b")]);
    assert_eq!(store.entries_after("g1", 1).await, Ok(vec![entry(2, "b")]));
    assert_eq!(store.entries_after("g1", 2).await, Ok(vec![]));
    assert_eq!(store.entries_after("g1", u64::MAX).await, Ok(vec![]));
    assert_eq!(store.entries_after("nope", 0).await, Ok(vec![]));
    // Another game's log is separate.
    assert_eq!(store.entries_after("g2", 0).await, Ok(vec![]));

    let mut unfinished = store.unfinished().await.unwrap();
    unfinished.sort();
    assert_eq!(unfinished, ["g1", "g2", "g3", "g4"]);
    store.finish("g1").await.unwrap();
    store.finish("g1").await.unwrap();
    store.finish("nope").await.unwrap();
    let mut unfinished = store.unfinished().await.unwrap();
    unfinished.sort();
    assert_eq!(unfinished, ["g2", "g3", "g4"]);
    // Finished games are archived, not deleted.
    let (_, log) = store.load("g1").await.unwrap().unwrap();
    assert_eq!(log.len(), 2);
    store.flush().await.unwrap();
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

#[tokio::test]
async fn everything_survives_reopen() {
    let dir = temp_dir("reopen");
    {
        let store = open(&dir).await;
        for g in 0..20 {
            let id = format!("g{g}");
            let rid = format!("req{g}");
            store
                .create(&record(&id, Some("p"), Some(&rid)))
                .await
                .unwrap();
            for seq in 1..=g + 1 {
                let appended = store.append(&id, &entry(seq, &format!("{id}/{seq}"))).await;
                assert_eq!(appended, Ok(Appended::Ok));
            }
            if g % 3 == 0 {
                store.finish(&id).await.unwrap();
            }
        }
        // Dropped without flush: every acknowledged write is already durable.
    }
    let store = open(&dir).await;
    for g in 0..20u64 {
        let id = format!("g{g}");
        let (rec, log) = store.load(&id).await.unwrap().unwrap();
        assert_eq!(rec, record(&id, Some("p"), Some(&format!("req{g}"))));
        let expected: Vec<LogEntry> = (1..=g + 1)
            .map(|seq| entry(seq, &format!("{id}/{seq}")))
            .collect();
        assert_eq!(log, expected);
        // The idempotency index survived too.
        assert_eq!(
            store
                .create(&record("other", Some("p"), Some(&format!("req{g}"))))
                .await,
            Ok(Created::Existing(id.clone()))
        );
        // And the log length: appends continue where they stopped.
        assert_eq!(
            store.append(&id, &entry(g + 1, "late")).await,
            Ok(Appended::Conflict { current: g + 1 })
        );
    }
    let unfinished: HashSet<String> = store.unfinished().await.unwrap().into_iter().collect();
    let expected: HashSet<String> = (0..20)
        .filter(|g| g % 3 != 0)
        .map(|g| format!("g{g}"))
        .collect();
    assert_eq!(unfinished, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_appends_one_winner_per_seq() {
    const TASKS: usize = 16;
    const LEN: u64 = 150;
    let dir = temp_dir("race");
    let store = Arc::new(open(&dir).await);
    store.create(&record("g", None, None)).await.unwrap();
    let mut handles = Vec::new();
    for task in 0..TASKS {
        let store = Arc::clone(&store);
        handles.push(tokio::spawn(async move {
            let mut won = Vec::new();
            let mut seq = 1;
            while seq <= LEN {
                match store
                    .append("g", &entry(seq, &format!("t{task}/{seq}")))
                    .await
                {
                    Ok(Appended::Ok) => {
                        won.push(seq);
                        seq += 1;
                    }
                    Ok(Appended::Conflict { current }) => {
                        assert!(current >= seq, "length went backwards");
                        seq = current + 1;
                    }
                    Err(e) => panic!("append: {e}"),
                }
            }
            (task, won)
        }));
    }
    let mut winners = BTreeMap::new();
    for h in handles {
        let (task, won) = h.await.unwrap();
        for seq in won {
            assert!(
                winners.insert(seq, task).is_none(),
                "two winners for seq {seq}"
            );
        }
    }
    assert_eq!(winners.len() as u64, LEN);
    let (_, log) = store.load("g").await.unwrap().unwrap();
    assert_eq!(log.len() as u64, LEN);
    for (i, e) in log.iter().enumerate() {
        let seq = i as u64 + 1;
        assert_eq!(e.seq, seq, "gap in the log");
        assert_eq!(
            e.body,
            format!("t{}/{seq}", winners[&seq]).into_bytes(),
            "seq {seq}"
        );
    }
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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_idempotent_creates() {
    let dir = temp_dir("idem");
    let store = Arc::new(open(&dir).await);
    let mut handles = Vec::new();
    for i in 0..20 {
        let store = Arc::clone(&store);
        handles.push(tokio::spawn(async move {
            let id = format!("g{i}");
            (
                id.clone(),
                store
                    .create(&record(&id, Some("p"), Some("same")))
                    .await
                    .unwrap(),
            )
        }));
    }
    let mut new = Vec::new();
    let mut existing = HashSet::new();
    for h in handles {
        match h.await.unwrap() {
            (id, Created::New) => new.push(id),
            (_, Created::Existing(id)) => {
                existing.insert(id);
            }
        }
    }
    assert_eq!(new.len(), 1, "exactly one create wins");
    assert!(existing.is_empty() || existing == HashSet::from([new[0].clone()]));
    assert_eq!(store.unfinished().await.unwrap(), new);
}

#[tokio::test]
async fn corrupt_file_is_a_clear_error() {
    let dir = temp_dir("garbage");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(FILE_NAME);
    std::fs::write(&path, vec![0x5a; 64 * 1024]).unwrap();
    let err = match Store::open(&dir.display().to_string()).await {
        Ok(_) => panic!("opened a corrupt file"),
        Err(e) => e,
    };
    let text = err.to_string();
    let path_text = path.display().to_string();
    assert!(text.contains(&path_text), "{text}");
    assert!(
        text.replace(&path_text, "").contains("is corrupt"),
        "{text}"
    );
    // The file is left alone for inspection.
    assert_eq!(std::fs::read(&path).unwrap(), vec![0x5a; 64 * 1024]);
}

#[tokio::test]
async fn foreign_database_is_refused() {
    let dir = temp_dir("foreign");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(FILE_NAME);
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
    let text = match Store::open(&dir.display().to_string()).await {
        Ok(_) => panic!("opened a foreign database"),
        Err(e) => e.to_string(),
    };
    assert!(text.contains(&path.display().to_string()), "{text}");
    assert!(text.contains("not a shuangkou store"), "{text}");
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

/// A file backend whose writes and syncs fail while `fail` is set (a full disk).
#[derive(Debug)]
struct Flaky {
    inner: redb::backends::FileBackend,
    fail: Arc<AtomicBool>,
}

impl Flaky {
    fn check(&self) -> io::Result<()> {
        if self.fail.load(Ordering::SeqCst) {
            Err(io::Error::other("simulated: no space left on device"))
        } else {
            Ok(())
        }
    }
}

impl redb::StorageBackend for Flaky {
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }
    fn read(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        self.inner.read(offset, len)
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.check()?;
        self.inner.set_len(len)
    }
    fn sync_data(&self, eventual: bool) -> io::Result<()> {
        self.check()?;
        self.inner.sync_data(eventual)
    }
    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.check()?;
        self.inner.write(offset, data)
    }
}

#[tokio::test]
async fn write_failure_is_an_error_and_the_store_recovers() {
    let dir = temp_dir("flaky");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(FILE_NAME);
    let fail = Arc::new(AtomicBool::new(false));
    let factory: BackendFactory = {
        let (path, fail) = (path.clone(), Arc::clone(&fail));
        Arc::new(move || {
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)?;
            let inner = redb::backends::FileBackend::new(file).map_err(io::Error::other)?;
            Ok(Box::new(Flaky {
                inner,
                fail: Arc::clone(&fail),
            }) as Box<dyn redb::StorageBackend>)
        })
    };
    let store = Store::Embedded(EmbeddedStore::open_with_backend("flaky", factory).unwrap());
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

    // Space is freed: the store reopens (redb repairs the file) and works again.
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

/// The writer half of [`acknowledged_appends_survive_sigkill`]: runs only when re-invoked by it
/// (with `SHUANGKOU_CRASH_CHILD_DIR` set), appending to a few games from several tasks and
/// printing `ACK <game> <seq>` after each acknowledged append, until it is killed.
#[test]
fn crash_child() {
    let Ok(dir) = std::env::var("SHUANGKOU_CRASH_CHILD_DIR") else {
        return;
    };
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
    for round in 0..4u64 {
        let mut child = std::process::Command::new(&exe)
            .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
            .env("SHUANGKOU_CRASH_CHILD_DIR", &*dir)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut acks = Vec::new();
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let mut parts = line.split(' ');
                if let (Some("ACK"), Some(id), Some(seq)) =
                    (parts.next(), parts.next(), parts.next())
                {
                    acks.push((id.to_string(), seq.parse::<u64>().unwrap()));
                }
            }
            acks
        });
        // Let it write for a while (varying per round), then SIGKILL it mid-commit.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos() as u64;
        tokio::time::sleep(Duration::from_millis(300 + (nanos + round * 97) % 400)).await;
        child.kill().unwrap();
        child.wait().unwrap();
        let acks = reader.join().unwrap();
        assert!(
            !acks.is_empty(),
            "round {round}: the child acknowledged nothing"
        );
        for (id, seq) in acks {
            let max = acked.entry(id).or_default();
            *max = (*max).max(seq);
        }
        // Reopen (redb repairs after the crash): every acknowledged append is there, no gaps.
        let store = open(&dir).await;
        for (id, max) in &acked {
            let (_, log) = store.load(id).await.unwrap().unwrap();
            assert!(
                log.len() as u64 >= *max,
                "{id}: acknowledged {max}, found {}",
                log.len()
            );
            for (i, e) in log.iter().enumerate() {
                assert_eq!(e.seq, i as u64 + 1, "{id}: gap");
            }
        }
    }
}
