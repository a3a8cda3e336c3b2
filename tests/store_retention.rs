//! The embedded store's retention of finished games (`--finished-retention`): with a retention
//! period the store's files stop growing as games finish (expired games are deleted and the
//! archive rewritten without them), games within the period and games in progress read back
//! whole, an archive rewrite interrupted by a crash is finished or undone at open, and a match
//! kept through a rewrite still replays and verifies through the service; an expired game's
//! snapshot file is deleted with it.

pub mod common;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use common::store_fixtures::entry;
use common::{TestServer, temp_dir};
use shuangkou::store::embedded::{EmbeddedStore, Options, journal, snapshots};
use shuangkou::store::{Appended, Created, GameRecord, Store, parse_retention};

fn record(id: &str) -> GameRecord {
    common::store_fixtures::record(id, Some(&format!("r-{id}")))
}

/// A clock the test moves (unix seconds).
fn clock(start: u64) -> (Arc<AtomicU64>, shuangkou::store::embedded::Clock) {
    let now = Arc::new(AtomicU64::new(start));
    let read = Arc::clone(&now);
    (now, Arc::new(move || read.load(Ordering::SeqCst)))
}

fn open(
    dir: &Path,
    retention: Option<Duration>,
    clock: &shuangkou::store::embedded::Clock,
) -> Store {
    let options = Options {
        finished_retention: retention,
        clock: Some(Arc::clone(clock)),
        ..Options::default()
    };
    Store::Embedded(EmbeddedStore::open_with(dir, options).expect("open the store"))
}

fn embedded(store: &Store) -> &EmbeddedStore {
    match store {
        Store::Embedded(s) => s,
        _ => panic!("not the embedded store"),
    }
}

/// Creates `id` with `plays` entries.
async fn play(store: &Store, id: &str, plays: u64) {
    assert_eq!(store.create(&record(id)).await, Ok(Created::New), "{id}");
    for seq in 1..=plays {
        assert_eq!(store.append(id, &entry(seq, id)).await, Ok(Appended::Ok));
    }
}

/// `id` reads back whole (record and every entry).
async fn intact(store: &Store, id: &str, plays: u64) {
    let (rec, log) = store
        .load(id)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("{id} is gone"));
    assert_eq!(rec, record(id));
    assert_eq!(log, (1..=plays).map(|s| entry(s, id)).collect::<Vec<_>>());
}

/// Bytes of the journal's frames (it goes on with zeros written ahead) and of the archive.
fn sizes(dir: &Path) -> (u64, u64) {
    let file = std::fs::File::open(dir.join(journal::JOURNAL)).unwrap();
    let journal_end = journal::scan(&file, |_, _| Ok(())).unwrap().0;
    let archive = std::fs::metadata(dir.join(journal::ARCHIVE)).unwrap().len();
    (journal_end, archive)
}

const ROUNDS: u64 = 12;
const PER_ROUND: u64 = 40;
const PLAYS: u64 = 12;
/// The clock moves this far per round; the retention keeps two rounds.
const ROUND_SECS: u64 = 50;
const START: u64 = 1_800_000_000;

/// Plays `ROUNDS` rounds of finished games (and keeps four games in progress throughout),
/// compacting after each; returns the sizes after every round.
async fn rounds(dir: &Path, retention: Option<Duration>) -> Vec<(u64, u64)> {
    let (now, clock) = clock(START);
    let store = open(dir, retention, &clock);
    for g in 0..4 {
        play(&store, &format!("live{g}"), 3).await;
    }
    let mut sizes_after = Vec::new();
    for round in 0..ROUNDS {
        for g in 0..PER_ROUND {
            let id = format!("r{round:02}g{g:02}");
            play(&store, &id, PLAYS).await;
            store.finish(&id).await.unwrap();
        }
        now.fetch_add(ROUND_SECS, Ordering::SeqCst);
        embedded(&store).compact_now().await.unwrap();
        sizes_after.push(sizes(dir));
        if retention.is_some() {
            // Finished 100 s ago or more: deleted; within the period: whole.
            for old in 0..ROUNDS.min(round + 1) {
                let id = format!("r{old:02}g00");
                let age = (round + 1 - old) * ROUND_SECS;
                if age >= 100 {
                    assert_eq!(store.load(&id).await.unwrap(), None, "{id}, {age} s old");
                } else {
                    intact(&store, &id, PLAYS).await;
                }
            }
        }
    }
    for g in 0..4 {
        intact(&store, &format!("live{g}"), 3).await;
    }
    let mut unfinished = store.unfinished().await.unwrap();
    unfinished.sort();
    assert_eq!(unfinished, ["live0", "live1", "live2", "live3"]);
    sizes_after
}

#[tokio::test]
async fn with_a_retention_the_store_stops_growing_as_games_finish() {
    let dir = temp_dir("retention-bounded");
    let bounded = rounds(&dir, Some(Duration::from_secs(100))).await;
    let (journal_4, archive_4) = bounded[3];
    for (round, (journal, archive)) in bounded.iter().enumerate().skip(4) {
        // The same number of games (ids of one length) is retained after every round from the
        // third on: the same bytes.
        assert!(
            *journal <= journal_4 && *archive <= archive_4,
            "round {}: journal {journal} B, archive {archive} B; after round 4: {journal_4} B, {archive_4} B",
            round + 1
        );
    }
    // Reopened, the retained games and the games in progress are all there.
    let (_, clock) = clock(START + ROUNDS * ROUND_SECS);
    let store = open(&dir, Some(Duration::from_secs(100)), &clock);
    intact(&store, &format!("r{:02}g07", ROUNDS - 1), PLAYS).await;
    intact(&store, "live2", 3).await;
    assert_eq!(store.load("r00g07").await.unwrap(), None);
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);

    // Without a retention the archive grows with every round (what the bound above guards).
    let dir = temp_dir("retention-none");
    let kept = rounds(&dir, None).await;
    let (_, archive_4) = kept[3];
    let (_, archive_last) = kept[kept.len() - 1];
    assert!(
        archive_last > 2 * archive_4,
        "archive {archive_4} B after round 4, {archive_last} B after round {ROUNDS}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A store whose archive was rewritten once (game `old` expired, `kept` retained); returns the
/// archive's bytes before that rewrite.
async fn rewritten(dir: &Path) -> Vec<u8> {
    let (now, clock) = clock(START);
    let store = open(dir, Some(Duration::from_secs(100)), &clock);
    play(&store, "old", 5).await;
    store.finish("old").await.unwrap();
    embedded(&store).compact_now().await.unwrap();
    let before = std::fs::read(dir.join(journal::ARCHIVE)).unwrap();
    now.fetch_add(60, Ordering::SeqCst);
    play(&store, "kept", 6).await;
    store.finish("kept").await.unwrap();
    play(&store, "live", 2).await;
    now.fetch_add(60, Ordering::SeqCst);
    embedded(&store).compact_now().await.unwrap();
    assert_eq!(store.load("old").await.unwrap(), None);
    intact(&store, "kept", 6).await;
    before
}

#[tokio::test]
async fn an_archive_rewrite_cut_short_is_finished_or_undone_at_open() {
    let (_, clock) = clock(START + 1000);
    let retention = Some(Duration::from_secs(100_000));

    // Committed (the journal renamed in) but the archive's rename not done: the new archive is
    // beside the old one. Open renames it in.
    let dir = temp_dir("rewrite-committed");
    let old_archive = rewritten(&dir).await;
    let archive = dir.join(journal::ARCHIVE);
    let next = dir.join("shuangkou.archive.compact");
    std::fs::rename(&archive, &next).unwrap();
    std::fs::write(&archive, &old_archive).unwrap();
    let store = open(&dir, retention, &clock);
    intact(&store, "kept", 6).await;
    intact(&store, "live", 2).await;
    assert!(!next.exists());
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);

    // Not committed: the new journal and the new archive are both still beside the old files.
    // Open deletes the new archive and keeps the archive the journal refers to.
    let dir = temp_dir("rewrite-uncommitted");
    rewritten(&dir).await;
    let archive = std::fs::read(dir.join(journal::ARCHIVE)).unwrap();
    std::fs::write(dir.join("shuangkou.log.compact"), b"SHUANGKOU-LOG-v3").unwrap();
    std::fs::write(
        dir.join("shuangkou.archive.compact"),
        b"SHUANGKOU-ARC-v3 torn",
    )
    .unwrap();
    let store = open(&dir, retention, &clock);
    intact(&store, "kept", 6).await;
    assert!(!dir.join("shuangkou.archive.compact").exists());
    assert_eq!(std::fs::read(dir.join(journal::ARCHIVE)).unwrap(), archive);
    // The next compaction starts over cleanly.
    store.finish("live").await.unwrap();
    embedded(&store).compact_now().await.unwrap();
    intact(&store, "live", 2).await;
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Creates `id` with `plays` entries and a snapshot at `seq` whose body is "`id` at `seq`".
async fn play_with_snapshot(store: &Store, id: &str, plays: u64, seq: u64) {
    play(store, id, plays).await;
    let body = format!("{id} at {seq}").into_bytes();
    store.put_snapshot(id, seq, body).await.unwrap();
}

/// An expired game's snapshot file is deleted by the compaction that drops the game (a game
/// expiring without one is no error); the snapshots of a kept finished game and of a game in
/// progress stay, and the store reopens and compacts again with the file gone.
#[tokio::test]
async fn an_expired_games_snapshot_file_is_deleted() {
    let dir = temp_dir("retention-snapshots");
    let retention = Some(Duration::from_secs(100));
    let (now, clock) = clock(START);
    let store = open(&dir, retention, &clock);
    play_with_snapshot(&store, "gone", 5, 3).await;
    store.finish("gone").await.unwrap();
    play(&store, "plain", 2).await;
    store.finish("plain").await.unwrap();
    now.fetch_add(60, Ordering::SeqCst);
    play_with_snapshot(&store, "kept", 4, 2).await;
    store.finish("kept").await.unwrap();
    play_with_snapshot(&store, "live", 3, 1).await;
    let file = |id: &str| snapshots::file_of(&dir, id);
    assert!(file("gone").exists());
    now.fetch_add(60, Ordering::SeqCst);
    embedded(&store).compact_now().await.unwrap();
    assert_eq!(store.load("gone").await.unwrap(), None, "expired");
    assert_eq!(store.load("plain").await.unwrap(), None, "expired");
    assert!(
        !file("gone").exists(),
        "the expired game's snapshot file is left"
    );
    assert!(store.snapshots("gone", u64::MAX).await.unwrap().is_empty());
    let kept = store.snapshots("kept", u64::MAX).await.unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].body, b"kept at 2");
    drop(store);

    // Reopened: nothing refers to the deleted file; the kept games and snapshots read back and
    // a later compaction runs.
    let store = open(&dir, retention, &clock);
    intact(&store, "kept", 4).await;
    intact(&store, "live", 3).await;
    assert_eq!(store.load("gone").await.unwrap(), None);
    assert_eq!(
        store.snapshots("live", u64::MAX).await.unwrap()[0].body,
        b"live at 1"
    );
    store.finish("live").await.unwrap();
    embedded(&store).compact_now().await.unwrap();
    intact(&store, "live", 3).await;
    assert!(file("kept").exists() && file("live").exists());
    assert!(!file("gone").exists());
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A snapshot file whose game is not in the store (left by a compaction before expired games'
/// files were deleted with them) is deleted at open; the files of the store's games stay, and
/// a file no game id names is left alone.
#[tokio::test]
async fn orphan_snapshot_files_are_swept_at_open() {
    let dir = temp_dir("retention-orphans");
    let (_, clock) = clock(START);
    let store = open(&dir, None, &clock);
    play_with_snapshot(&store, "live", 3, 1).await;
    play_with_snapshot(&store, "done", 2, 2).await;
    store.finish("done").await.unwrap();
    embedded(&store).compact_now().await.unwrap();
    drop(store);
    snapshots::append(&dir, "ghost", 4, b"ghost at 4").unwrap();
    let stranger = dir.join(snapshots::DIR).join("notes.txt");
    std::fs::write(&stranger, b"not a snapshot").unwrap();
    let file = |id: &str| snapshots::file_of(&dir, id);
    assert!(file("ghost").exists());

    let store = open(&dir, None, &clock);
    assert!(!file("ghost").exists(), "the orphan snapshot file is left");
    assert!(stranger.exists(), "a file no game id names was deleted");
    assert_eq!(
        store.snapshots("live", u64::MAX).await.unwrap()[0].body,
        b"live at 1"
    );
    assert_eq!(
        store.snapshots("done", u64::MAX).await.unwrap()[0].body,
        b"done at 2"
    );
    intact(&store, "live", 3).await;
    intact(&store, "done", 2).await;
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn retention_periods_parse_with_their_unit() {
    assert_eq!(parse_retention("30d"), Ok(Duration::from_secs(30 * 86_400)));
    assert_eq!(parse_retention("12h"), Ok(Duration::from_secs(12 * 3600)));
    assert_eq!(parse_retention("90m"), Ok(Duration::from_secs(90 * 60)));
    assert_eq!(parse_retention("0s"), Ok(Duration::ZERO));
    for bad in ["", "30", "d", "1.5d", "-1d", "3w", "99999999999999999999d"] {
        assert!(parse_retention(bad).is_err(), "{bad:?}");
    }
}

/// A whole match finished on the embedded store, then an archive rewrite that deletes an older
/// finished game (finished ten days earlier, with a five-day retention) and copies the match,
/// then a restart: GetReplay of the match re-executes it and verifies every state hash.
#[tokio::test]
async fn a_match_kept_through_an_archive_rewrite_replays_and_verifies() {
    let dir = temp_dir("retention-replay");
    let spec = dir.display().to_string();
    let now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
    };
    {
        // A game finished ten days ago, already in the archive.
        let (_, ten_days_ago) = clock(now() - 10 * 86_400);
        let store = open(&dir, None, &ten_days_ago);
        play(&store, "old", 4).await;
        store.finish("old").await.unwrap();
        embedded(&store).compact_now().await.unwrap();
    }
    let game_id = {
        let mut server = TestServer::start(|c| c.store = spec.clone()).await;
        let mut client = server.client().await;
        let created =
            common::create(&mut client, "", common::create_req("classic", 1, Some(7))).await;
        let policy = common::Policy {
            seed: 7,
            pass_prob: 0.2,
            stop_at_seq: None,
        };
        common::play_match(server.addr, &created, policy, Duration::from_secs(300))
            .await
            .expect("the match finishes");
        server.begin_shutdown();
        server.stopped().await.expect("the server stops");
        created.game_id
    };
    {
        // The match into the archive first (no retention: nothing deleted).
        let (_, today) = clock(now());
        let store = open(&dir, None, &today);
        embedded(&store).compact_now().await.unwrap();
        assert!(store.load("old").await.unwrap().is_some());
    }
    {
        let (_, today) = clock(now());
        let store = open(&dir, Some(Duration::from_secs(5 * 86_400)), &today);
        let (_, archive_before) = embedded(&store).disk_usage().unwrap();
        embedded(&store).compact_now().await.unwrap();
        assert_eq!(store.load("old").await.unwrap(), None, "expired");
        let (_, archive_after) = embedded(&store).disk_usage().unwrap();
        assert!(
            archive_after < archive_before,
            "the archive was not rewritten: {archive_before} -> {archive_after} B"
        );
        assert!(
            store.load(&game_id).await.unwrap().is_some(),
            "the match is kept"
        );
    }
    let server = TestServer::restart(|| common::config(|c| c.store = spec.clone())).await;
    let mut client = server.client().await;
    // The replay of the kept match.
    let replay = common::get_replay(&mut client, &game_id, "").await;
    let rebuilt = common::rebuild(&replay).expect("the replay verifies");
    assert_eq!(rebuilt.last().phase(), shuangkou::game::Phase::Finished);
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
