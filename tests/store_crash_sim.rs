//! Crash consistency of the embedded store on a simulated disk that forgets what was not synced
//! (`shuangkou::store::embedded::disk::sim`): the store's own code runs a seeded random workload
//! (creates, appends from several games in one batch, finishes, compactions with appends going
//! on, retention rewrites, snapshots, reopens), and the power goes at the `k`th operation that
//! changes the disk, for every `k` of the run. The disk a reboot finds (its durable part plus
//! any prefix, subset or torn sectors of what was not synced, and forgotten directory changes
//! not synced) is opened (for every second image, after a second power loss during that
//! recovery), and:
//! - every acknowledged create and append is there, with its exact bytes;
//! - nothing that was not acknowledged is half there: an entry is absent or whole, and the log
//!   is a prefix of what was attempted;
//! - every game's log verifies by a checksum chain the test wrote into the bodies (each body
//!   carries its sequence number, the CRC of the body before it and its own CRC: an oracle the
//!   store did not produce);
//! - a finished game stays finished; snapshots read back are ones that were written;
//! - the store keeps accepting creates and appends.
//!
//! `cargo test` runs a few thousand crash points; `SHUANGKOU_THOROUGH=1` about a million
//! (`SHUANGKOU_CRASH_POINTS=n` sets any number). A failure names its seed and crash step;
//! `SHUANGKOU_CRASH_SEED=s SHUANGKOU_CRASH_STEP=k` runs that one again (the workload's operations
//! are deterministic; a compaction thread and group commit make the interleaving, hence the
//! numbering of steps inside a compaction, vary a little from run to run).
//!
//! The legacy redb conversion does not run here: redb reads its file with its own I/O, so a
//! redb file cannot be on the simulated disk (the conversion's writes of the journal and the
//! archive do go through the store's disk). The conversion itself is tested on the real disk by
//! `store_journal::a_redb_layout_directory_is_converted_once`; a power loss during it is not
//! simulated.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shuangkou::store::embedded::disk::sim::SimDisk;
use shuangkou::store::embedded::{EmbeddedStore, Options};
use shuangkou::store::{Appended, Created, GameRecord, LogEntry, PinnedScript, StoreError};

const DIR: &str = "/sim/data";
/// The store's finished-game retention in the seeds that use one.
const RETENTION: u64 = 100;
/// Disk images (random choices of what survived) checked per crash point.
const IMAGES: u64 = 2;
/// Longest wait for one store call.
const CALL: Duration = Duration::from_secs(30);

/// A failure, with what was going on.
type Check = Result<(), String>;

/// What the test asked of the store and what it acknowledged, per game.
#[derive(Clone, Debug, Default)]
struct Game {
    request_id: String,
    record: Vec<u8>,
    script: Option<usize>,
    /// The create was answered `Created::New`.
    created: bool,
    /// The bodies of entries 1, 2, … as attempted (one body per sequence number, ever).
    bodies: Vec<Vec<u8>>,
    /// The highest acknowledged entry.
    acked: u64,
    /// The clock when the finish was first asked for, and whether it was acknowledged.
    finish_asked: Option<u64>,
    finished: bool,
    /// The snapshots put, per sequence number (any of them may be read back).
    snapshots: BTreeMap<u64, Vec<Vec<u8>>>,
}

/// Everything the workload did.
#[derive(Default)]
struct Oracle {
    games: BTreeMap<String, Game>,
}

const SCRIPTS: [&str; 2] = ["fn deal() { 1 }", "fn deal() { 2 } // a second version"];

fn script(i: usize) -> PinnedScript {
    PinnedScript {
        hash: format!("h{i}"),
        text: Arc::from(SCRIPTS[i]),
    }
}

fn record_of(id: &str, g: &Game) -> GameRecord {
    GameRecord {
        id: id.to_string(),
        platform: Some("sim".into()),
        request_id: Some(g.request_id.clone()),
        body: g.record.clone(),
        script: g.script.map(script),
    }
}

/// A log body: its sequence number, the CRC of the body before it (of the record for the
/// first), `payload` bytes, and the CRC of all that.
fn body(seq: u64, prev: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(payload.len() + 16);
    b.extend_from_slice(&seq.to_le_bytes());
    b.extend_from_slice(&crc32fast::hash(prev).to_le_bytes());
    b.extend_from_slice(payload);
    let crc = crc32fast::hash(&b);
    b.extend_from_slice(&crc.to_le_bytes());
    b
}

/// Verifies a game's log by its checksum chain alone.
fn verify_chain(record: &[u8], log: &[LogEntry]) -> Check {
    let mut prev = record;
    for (i, e) in log.iter().enumerate() {
        let b = &e.body;
        let seq = i as u64 + 1;
        if e.seq != seq {
            return Err(format!("entry {seq} has seq {}", e.seq));
        }
        if b.len() < 16 {
            return Err(format!("entry {seq} is {} bytes", b.len()));
        }
        let (head, crc) = b.split_at(b.len() - 4);
        if crc32fast::hash(head).to_le_bytes() != crc {
            return Err(format!("entry {seq} fails its own checksum"));
        }
        if head[..8] != seq.to_le_bytes() {
            return Err(format!("entry {seq} names another sequence number"));
        }
        if head[8..12] != crc32fast::hash(prev).to_le_bytes() {
            return Err(format!("entry {seq} does not follow the entry before it"));
        }
        prev = b;
    }
    Ok(())
}

/// One seed's run: the options, the clock, the store (reopened now and then).
struct Run {
    sim: SimDisk,
    clock: Arc<AtomicU64>,
    retention: bool,
    oracle: Oracle,
    rng: ChaCha8Rng,
    /// Compactions swapped in during the workload.
    compactions: u64,
}

async fn call<T>(what: &str, f: impl std::future::Future<Output = T>) -> Result<T, String> {
    tokio::time::timeout(CALL, f)
        .await
        .map_err(|_| format!("{what}: no answer within {CALL:?}"))
}

impl Run {
    fn options(&self) -> Options {
        let clock = Arc::clone(&self.clock);
        Options {
            disk: Some(self.sim.disk()),
            finished_retention: self.retention.then(|| Duration::from_secs(RETENTION)),
            clock: Some(Arc::new(move || clock.load(Ordering::Relaxed))),
            ..Options::default()
        }
    }

    /// Did an error come from the crash? (Any other error fails the test.)
    fn crashed(&self, what: &str, e: &StoreError) -> Result<(), String> {
        if self.sim.crashed() {
            Ok(())
        } else {
            Err(format!("{what} failed without a disk fault: {e}"))
        }
    }

    fn live(&self) -> Vec<String> {
        self.oracle
            .games
            .iter()
            .filter(|(_, g)| g.created && g.finish_asked.is_none())
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// The next entry of game `id` (its body decided once, for ever).
    fn next_entry(&mut self, id: &str) -> LogEntry {
        let len = self.rng.random_range(0..40) * self.rng.random_range(1..60);
        let mut payload = vec![0u8; len];
        self.rng.fill_bytes(&mut payload);
        let g = self.oracle.games.get_mut(id).expect("a known game");
        let seq = g.acked + 1;
        if g.bodies.len() < seq as usize {
            let prev = g.bodies.last().cloned().unwrap_or_else(|| g.record.clone());
            g.bodies.push(body(seq, &prev, &payload));
        }
        LogEntry {
            seq,
            body: g.bodies[seq as usize - 1].clone(),
        }
    }

    /// Runs the workload until it ends or the disk crashes. `Ok(true)`: it crashed.
    async fn workload(&mut self, actions: usize) -> Result<bool, String> {
        let mut store = match EmbeddedStore::open_with(DIR, self.options()) {
            Ok(s) => s,
            Err(e) => return self.crashed("open", &e).map(|()| true),
        };
        let mut games = 0;
        for _ in 0..actions {
            if self.sim.crashed() {
                return Ok(true);
            }
            let roll = self.rng.random_range(0..100);
            let live = self.live();
            if roll < 12 || live.is_empty() {
                let id = format!("g{games}");
                games += 1;
                let mut rec = vec![0u8; self.rng.random_range(1..300)];
                self.rng.fill_bytes(&mut rec);
                let g = Game {
                    request_id: format!("r-{id}"),
                    record: rec,
                    script: (self.rng.random_range(0..3) < 2).then(|| self.rng.random_range(0..2)),
                    ..Game::default()
                };
                let record = record_of(&id, &g);
                self.oracle.games.insert(id.clone(), g);
                match call("create", store.create(&record)).await? {
                    Ok(Created::New) => self.oracle.games.get_mut(&id).unwrap().created = true,
                    Ok(other) => return Err(format!("create {id}: {other:?}")),
                    Err(e) => self.crashed("create", &e)?,
                }
            } else if roll < 52 {
                // A batch: entries of several games sent together (one group commit or a few).
                let n = self.rng.random_range(1..=live.len().min(4));
                let picked: Vec<String> = live.iter().take(n).cloned().collect();
                let entries: Vec<(String, LogEntry)> = picked
                    .iter()
                    .map(|id| (id.clone(), self.next_entry(id)))
                    .collect();
                let send = |i: usize| {
                    let entry = entries.get(i);
                    let store = &store;
                    async move {
                        match entry {
                            Some((id, e)) => Some(store.append(id, e).await),
                            None => None,
                        }
                    }
                };
                let (r0, r1, r2, r3) = call("append", async {
                    tokio::join!(send(0), send(1), send(2), send(3))
                })
                .await?;
                let results = [r0, r1, r2, r3].into_iter().flatten();
                for ((id, e), r) in entries.iter().zip(results) {
                    match r {
                        Ok(Appended::Ok) => self.oracle.games.get_mut(id).unwrap().acked = e.seq,
                        Ok(other) => return Err(format!("append {id} #{}: {other:?}", e.seq)),
                        Err(err) => self.crashed("append", &err)?,
                    }
                }
            } else if roll < 64 {
                let id = live[self.rng.random_range(0..live.len())].clone();
                let g = self.oracle.games.get_mut(&id).unwrap();
                g.finish_asked = Some(self.clock.load(Ordering::Relaxed));
                match call("finish", store.finish(&id)).await? {
                    Ok(()) => self.oracle.games.get_mut(&id).unwrap().finished = true,
                    Err(e) => self.crashed("finish", &e)?,
                }
            } else if roll < 76 {
                // A compaction, with appends going on beside it.
                let id = live[self.rng.random_range(0..live.len())].clone();
                let e = self.next_entry(&id);
                let (c, a) = call("compact", async {
                    tokio::join!(store.compact_now(), store.append(&id, &e))
                })
                .await?;
                if let Err(err) = c {
                    self.crashed("compact", &err)?;
                }
                match a {
                    Ok(Appended::Ok) => self.oracle.games.get_mut(&id).unwrap().acked = e.seq,
                    Ok(other) => return Err(format!("append {id} #{}: {other:?}", e.seq)),
                    Err(err) => self.crashed("append", &err)?,
                }
            } else if roll < 84 {
                let id = live[self.rng.random_range(0..live.len())].clone();
                let g = &self.oracle.games[&id];
                let seq = g.acked;
                let mut snap = vec![0u8; self.rng.random_range(1..1500)];
                self.rng.fill_bytes(&mut snap);
                self.oracle
                    .games
                    .get_mut(&id)
                    .unwrap()
                    .snapshots
                    .entry(seq)
                    .or_default()
                    .push(snap.clone());
                if let Err(e) = call("snapshot", store.put_snapshot(&id, seq, snap)).await? {
                    self.crashed("put_snapshot", &e)?;
                }
            } else if roll < 92 {
                let secs = self.rng.random_range(0..2 * RETENTION);
                self.clock.fetch_add(secs, Ordering::Relaxed);
            } else {
                // A clean restart.
                self.compactions += store.compactions();
                drop(store);
                store = match EmbeddedStore::open_with(DIR, self.options()) {
                    Ok(s) => s,
                    Err(e) => return self.crashed("reopen", &e).map(|()| true),
                };
            }
        }
        self.compactions += store.compactions();
        drop(store);
        Ok(self.sim.crashed())
    }

    /// Opens the disk a reboot finds and checks it against the oracle.
    async fn check_image(&self, image: SimDisk) -> Check {
        let mut options = self.options();
        options.disk = Some(image.disk());
        let store =
            EmbeddedStore::open_with(DIR, options).map_err(|e| format!("reopen failed: {e}"))?;
        let now = self.clock.load(Ordering::Relaxed);
        let unfinished: BTreeSet<String> = call("unfinished", store.unfinished())
            .await?
            .map_err(|e| e.to_string())?
            .into_iter()
            .collect();
        for id in &unfinished {
            if !self.oracle.games.contains_key(id) {
                return Err(format!("a game {id} that was never created"));
            }
        }
        let mut appendable = Vec::new();
        for (id, g) in &self.oracle.games {
            let loaded = call("load", store.load(id))
                .await?
                .map_err(|e| format!("load {id}: {e}"))?;
            let Some((rec, log)) = loaded else {
                let may_expire =
                    self.retention && g.finish_asked.is_some_and(|at| at + RETENTION <= now);
                if g.created && !may_expire {
                    return Err(format!("acknowledged game {id} is lost"));
                }
                continue;
            };
            if rec != record_of(id, g) {
                return Err(format!("game {id}: the record differs"));
            }
            if (log.len() as u64) < g.acked {
                return Err(format!(
                    "game {id}: {} entries, {} acknowledged",
                    log.len(),
                    g.acked
                ));
            }
            if log.len() > g.bodies.len() {
                return Err(format!(
                    "game {id}: {} entries, {} attempted",
                    log.len(),
                    g.bodies.len()
                ));
            }
            for (i, e) in log.iter().enumerate() {
                if e.body != g.bodies[i] {
                    return Err(format!("game {id}: entry {} differs", i + 1));
                }
            }
            verify_chain(&g.record, &log).map_err(|m| format!("game {id}: {m}"))?;
            let open = unfinished.contains(id);
            if g.finished && open {
                return Err(format!("game {id}: finished, and unfinished again"));
            }
            if g.finish_asked.is_none() && !open {
                return Err(format!("game {id}: finished, and never asked to"));
            }
            let snaps = call("snapshots", store.snapshots(id, u64::MAX))
                .await?
                .map_err(|e| e.to_string())?;
            for s in snaps {
                let put = g.snapshots.get(&s.seq).is_some_and(|v| v.contains(&s.body));
                if !put {
                    return Err(format!("game {id}: a snapshot at {} never put", s.seq));
                }
            }
            if open {
                appendable.push((id.clone(), log.len() as u64));
            }
        }
        // The store goes on: an append to each open game, and a new game.
        for (id, len) in appendable.iter().take(3) {
            let e = LogEntry {
                seq: len + 1,
                body: b"after the crash".to_vec(),
            };
            match call("append", store.append(id, &e)).await? {
                Ok(Appended::Ok) => {}
                other => return Err(format!("append to {id} after the crash: {other:?}")),
            }
            let (_, log) = call("load", store.load(id))
                .await?
                .map_err(|e| e.to_string())?
                .ok_or("the game vanished")?;
            if log.last() != Some(&e) {
                return Err(format!(
                    "{id}: the append after the crash did not read back"
                ));
            }
        }
        let fresh = GameRecord {
            id: "after-crash".into(),
            platform: None,
            request_id: None,
            body: b"{}".to_vec(),
            script: None,
        };
        match call("create", store.create(&fresh)).await? {
            Ok(Created::New) => Ok(()),
            other => Err(format!("create after the crash: {other:?}")),
        }
    }
}

fn rng(seed: u64, salt: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ salt)
}

/// Actions per workload.
const ACTIONS: usize = 40;

fn new_run(seed: u64) -> Run {
    let mut rng = rng(seed, 0);
    Run {
        sim: SimDisk::new(),
        clock: Arc::new(AtomicU64::new(1_000_000)),
        retention: rng.random_range(0..2) == 0,
        oracle: Oracle::default(),
        rng,
        compactions: 0,
    }
}

/// Runs seed `seed` with the power lost at step `step` (`None`: never); checks [`IMAGES`]
/// images (every second one after a second power loss during the recovery open). Returns whether it crashed, the steps of the run, and the compactions swapped in and
/// archive rewrites started.
async fn crash_run(seed: u64, step: Option<u64>) -> Result<(bool, u64, (u64, u64)), String> {
    let mut run = new_run(seed);
    run.sim.crash_at(step);
    let crashed = run.workload(ACTIONS).await?;
    let steps = run.sim.ops();
    let rewrite = Path::new(DIR).join("shuangkou.archive.compact");
    let rewrites = u64::from(run.sim.ever_created(&rewrite));
    if step.is_none() || crashed {
        for i in 0..IMAGES {
            let mut r = rng(seed, (step.unwrap_or(0) << 8) | (i + 1));
            let mut image = run.sim.image(&mut || r.next_u64());
            if i % 2 == 1 {
                // A second power loss, during the recovery at the reboot.
                image.crash_at(Some(1 + r.next_u64() % 12));
                let mut options = run.options();
                options.disk = Some(image.disk());
                drop(EmbeddedStore::open_with(DIR, options));
                image = image.image(&mut || r.next_u64());
            }
            run.check_image(image)
                .await
                .map_err(|m| format!("image {i}: {m}"))?;
        }
    }
    Ok((crashed, steps, (run.compactions, rewrites)))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// Runs seed `seed` with a crash at `step`, failing with both named.
fn one(rt: &tokio::runtime::Runtime, seed: u64, step: Option<u64>) -> (bool, u64, (u64, u64)) {
    rt.block_on(crash_run(seed, step)).unwrap_or_else(|m| {
        panic!(
            "seed {seed} crash step {}: {m}\n(rerun: SHUANGKOU_CRASH_SEED={seed} \
             SHUANGKOU_CRASH_STEP={} cargo test --test store_crash_sim)",
            step.map_or("none".into(), |s| s.to_string()),
            step.unwrap_or(0)
        )
    })
}

#[test]
fn every_crash_point_keeps_acknowledged_writes_whole() {
    let rt = runtime();
    if let (Some(seed), Some(step)) = (
        env_u64("SHUANGKOU_CRASH_SEED"),
        env_u64("SHUANGKOU_CRASH_STEP"),
    ) {
        one(&rt, seed, Some(step));
        return;
    }
    let thorough = std::env::var("SHUANGKOU_THOROUGH").is_ok_and(|v| v == "1");
    let want =
        env_u64("SHUANGKOU_CRASH_POINTS").unwrap_or(if thorough { 1_000_000 } else { 3_000 });
    let started = Instant::now();
    let (mut points, mut seed) = (0u64, env_u64("SHUANGKOU_CRASH_FIRST_SEED").unwrap_or(0));
    let (mut compactions, mut rewrites) = (0, 0);
    while points < want {
        let (_, steps, (swapped, rewrote)) = one(&rt, seed, None);
        compactions += swapped;
        rewrites += rewrote;
        for step in 1..=steps {
            let (crashed, _, _) = one(&rt, seed, Some(step));
            points += u64::from(crashed);
        }
        seed += 1;
        if seed % 50 == 0 {
            eprintln!(
                "{points} crash points, {seed} seeds, {:.1} s",
                started.elapsed().as_secs_f64()
            );
        }
    }
    eprintln!(
        "{points} crash points ({IMAGES} images each) over {seed} seeds ({} compactions in \
         their uncrashed runs, {} of these with an archive rewrite) in {:.1} s",
        compactions,
        rewrites,
        started.elapsed().as_secs_f64()
    );
}

#[test]
fn an_image_of_a_clean_run_holds_everything() {
    // With no crash, every image holds every acknowledged write (sanity of the oracle): the
    // workload ran, the store was closed, and whatever of the unsynced state survives, the
    // acknowledged part is there.
    let rt = runtime();
    for seed in 0..5 {
        let (crashed, steps, _) = one(&rt, seed, None);
        assert!(!crashed && steps > 50, "seed {seed}: {steps} steps");
    }
}

#[test]
fn a_frame_failing_its_checksum_ends_the_journal_at_open() {
    // The journal's last frame damaged (a byte of its payload flipped, as a torn sector would):
    // the reopened store has the games up to the frame before it, and keeps going.
    let rt = runtime();
    rt.block_on(async {
        let sim = SimDisk::new();
        let options = Options {
            disk: Some(sim.disk()),
            ..Options::default()
        };
        let store = EmbeddedStore::open_with(DIR, options.clone()).unwrap();
        let rec = GameRecord {
            id: "g".into(),
            platform: None,
            request_id: None,
            body: b"{}".to_vec(),
            script: None,
        };
        store.create(&rec).await.unwrap();
        let first = LogEntry {
            seq: 1,
            body: b"one".to_vec(),
        };
        store.append("g", &first).await.unwrap();
        store
            .append(
                "g",
                &LogEntry {
                    seq: 2,
                    body: b"two".to_vec(),
                },
            )
            .await
            .unwrap();
        drop(store);
        let path = Path::new(DIR).join(shuangkou::store::embedded::FILE_NAME);
        let bytes = sim.read_file(&path).unwrap();
        let end = bytes.iter().rposition(|b| *b != 0).unwrap();
        // The last non-zero byte is in the last frame ("two"'s last byte).
        sim.poke(&path, end as u64, &[bytes[end] ^ 0x40]).unwrap();
        let store = EmbeddedStore::open_with(DIR, options).unwrap();
        let (_, log) = store.load("g").await.unwrap().unwrap();
        assert_eq!(log, vec![first], "the damaged entry must not be read back");
        assert_eq!(
            store
                .append(
                    "g",
                    &LogEntry {
                        seq: 2,
                        body: b"two again".to_vec(),
                    },
                )
                .await,
            Ok(Appended::Ok)
        );
    });
}
