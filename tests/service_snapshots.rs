//! Per-deal snapshots (issue 21): a rebuild from the newest snapshot equals a full replay of the
//! log, a snapshot that is corrupt, missing or not the log's is ignored, and a replay of the
//! store's log from an old seq (a far-behind WatchGame, an old retry) that starts at a snapshot
//! gives exactly the events of a replay from the creation.
//!
//! The oracle is the full replay (`Session::restore`, `History::new`), which reads no snapshot.
//! Matches are random and seeded (the seed is printed); they are played through the service's
//! commit protocol (`Games::commit`), which writes a snapshot at each deal's end.

#[path = "common/temp.rs"]
pub mod temp;

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shuangkou::game::{Action, DealResult, Event, Game, RESULTS_KEPT, Viewer};
use shuangkou::hand::Declared;
use shuangkou::seat::Player;
use shuangkou::service::games::{Games, GamesConfig};
use shuangkou::service::history::{self, History};
use shuangkou::service::log_pages::LogPages;
use shuangkou::service::record::{CreateBase, Minting, NewGame, Record};
use shuangkou::service::session::snapshot::Restored;
use shuangkou::service::session::{Idempotent, Session};
use shuangkou::service::wire::Action as WireAction;
use shuangkou::service::wire::view::results_range;
use shuangkou::store::{GameRecord, LogEntry, Snapshot, Store};
use shuangkou::variants::Registry;

const KEEP: usize = 8;
const START: u64 = 1_700_000_000_000;

fn games(registry: &Arc<Registry>, store: Store) -> Games {
    let config = GamesConfig {
        no_turn_timers: true,
        finished_linger_seconds: 120,
        backlog_actions: KEEP,
        max_games: 100,
        disconnected_turns_immediate: false,
        auto_bot: shuangkou::bot::styles::spec("heuristic").unwrap(),
    };
    Games::new(config, Arc::clone(registry), store)
}

/// What the next action is: a player's keyed play or pass, a disconnect or reconnect of a
/// player not to act, or (rarely) an escape.
enum Next {
    Keyed(Player, WireAction, String),
    Service(Player, Action),
}

fn next_action(game: &Game, rng: &mut ChaCha8Rng, n: u64, escapes: bool) -> Option<Next> {
    let seat = game.turn()?;
    let player = game.seating()[seat];
    let players = game.players();
    let other = Player::new((player.number() + 1 + rng.random_range(0..players - 1)) % players);
    if escapes && rng.random_bool(0.002) {
        return Some(Next::Service(other, Action::Leave));
    }
    if rng.random_bool(0.03) {
        let change = if game.is_disconnected(other) {
            Action::Reconnect
        } else {
            Action::Disconnect
        };
        return Some(Next::Service(other, change));
    }
    let (plays, can_pass) = game.legal_plays(seat);
    let action = if plays.is_empty() || (can_pass && rng.random_bool(0.35)) {
        if !can_pass {
            return None;
        }
        WireAction::Pass
    } else {
        let p = &plays[rng.random_range(0..plays.len())];
        WireAction::Play {
            cards: game.hand(seat).take(p.cards)?,
            declared: Some(Declared {
                kind: p.hand.kind,
                key: p.hand.key(),
            }),
        }
    };
    Some(Next::Keyed(player, action, format!("r{n}")))
}

/// A random match of `deals` deals of `variant`, played for `actions` actions at most through
/// the commit protocol (snapshots written at each deal's end) on a memory store.
async fn play(
    registry: &Arc<Registry>,
    variant: &str,
    deals: u32,
    seed: u64,
    actions: u64,
) -> (Games, String, Vec<String>) {
    let games = games(registry, Store::open("memory").await.unwrap());
    let compiled = registry.active(variant).unwrap();
    let id = format!("g{seed}");
    let new = NewGame {
        base: CreateBase {
            seed: format!("{seed:064x}"),
            ..CreateBase::of(variant)
        },
        deals,
        ..NewGame::default()
    };
    let record = Record::new(&compiled, &new, Minting::local(&id, &[7; 32], START))
        .unwrap()
        .0;
    games.create(record, None).await.unwrap();
    let shared = games.load(&id).await.unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut keys = Vec::new();
    for n in 1..=actions {
        let mut live = games.current(&shared).await.unwrap();
        if live.finished() {
            break;
        }
        let Some(next) = next_action(live.game(), &mut rng, n, seed % 2 == 0) else {
            break;
        };
        let at = START + n * 1000;
        let r = match next {
            Next::Keyed(player, action, key) => {
                keys.push(key.clone());
                let digest = format!("d{n}");
                games
                    .commit(&mut live, |l| {
                        let request = Idempotent {
                            id: &key,
                            digest: &digest,
                        };
                        l.prepare(player, action, at, Some(request))
                    })
                    .await
            }
            Next::Service(player, action) => {
                games
                    .commit(&mut live, |l| l.prepare_action(player, action, at))
                    .await
            }
        };
        r.unwrap_or_else(|e| panic!("seed {seed}: action {n}: {e}"));
    }
    (games, id, keys)
}

/// The game's record, log and every snapshot, as the store holds them.
async fn stored(store: &Store, id: &str) -> (GameRecord, Vec<LogEntry>, Vec<Snapshot>) {
    let (record, log) = store.load(id).await.unwrap().unwrap();
    let snapshots = store.snapshots(id, u64::MAX).await.unwrap();
    (record, log, snapshots)
}

/// Everything of two sessions a reader or a writer can observe: the engine state (its views
/// follow from it, checked for every viewer), the kept events, reconnect windows and
/// idempotency keys.
fn assert_same(seed: u64, a: &Session, b: &Session, keys: &[String]) {
    assert_eq!(a.seq(), b.seq(), "seed {seed}: seq");
    assert_eq!(
        a.game().state_hash(),
        b.game().state_hash(),
        "seed {seed}: state hash"
    );
    assert!(a.game() == b.game(), "seed {seed}: engine state");
    let players = a.game().players();
    let viewers = Player::all(players)
        .map(Viewer::Player)
        .chain([Viewer::Spectator, Viewer::Admin]);
    for v in viewers {
        assert!(
            a.game().view(v) == b.game().view(v),
            "seed {seed}: the view of {v:?}"
        );
    }
    assert_eq!(a.first_kept(), b.first_kept(), "seed {seed}: first kept");
    for seq in a.first_kept()..=a.seq() {
        assert_eq!(
            a.action_at(seq).ok(),
            b.action_at(seq).ok(),
            "seed {seed}: events of {seq}"
        );
    }
    assert_eq!(a.open_windows(), b.open_windows(), "seed {seed}: windows");
    for key in keys {
        for p in Player::all(players) {
            assert_eq!(
                a.request_seq(p, key),
                b.request_seq(p, key),
                "seed {seed}: key {key}"
            );
            assert_eq!(
                a.remembered_seq(p, key),
                b.remembered_seq(p, key),
                "seed {seed}: remembered key {key}"
            );
        }
    }
}

/// The game rebuilt from the store (its newest usable snapshot and the log after it), keeping
/// `KEEP` actions, is the same as `full`, the full replay of its log keeping as many.
async fn assert_rebuilt_same(
    seed: u64,
    store: &Store,
    registry: &Arc<Registry>,
    id: &str,
    full: &Session,
    keys: &[String],
) {
    let mut rebuilt =
        shuangkou::service::games::rebuild::rebuild::<Session>(store, registry, id, KEEP, true)
            .await
            .unwrap()
            .unwrap();
    rebuilt.keep_actions(KEEP);
    assert_same(seed, full, &rebuilt, keys);
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// The log with its first entry's recorded hash changed: a full replay of it fails, so a
/// rebuild of it that succeeds started at a snapshot.
fn first_entry_broken(log: &[LogEntry]) -> Vec<LogEntry> {
    let mut log = log.to_vec();
    let mut first: serde_json::Value = serde_json::from_slice(&log[0].body).unwrap();
    first["hash"] = serde_json::Value::String("00".repeat(32));
    log[0].body = serde_json::to_vec(&first).unwrap();
    log
}

#[test]
fn a_rebuild_from_a_snapshot_equals_a_full_replay() {
    let registry = Arc::new(Registry::embedded().unwrap());
    let base: u64 = std::env::var("SNAPSHOT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(21);
    let mut used_snapshot = 0;
    for (k, variant) in ["classic", "baibian", "classic", "baibian"]
        .iter()
        .enumerate()
    {
        let seed = base + k as u64;
        println!("seed {seed} ({variant})");
        let actions = 150 + (seed % 5) * 90;
        runtime().block_on(async {
            let (games, id, keys) = play(&registry, variant, 6, seed, actions).await;
            let store = games.store();
            let (record, log, snapshots) = stored(store, &id).await;
            let mut full = Session::restore(&registry, &record, &log, true).unwrap();
            full.keep_actions(KEEP);
            assert!(
                !snapshots.is_empty(),
                "seed {seed}: {} actions wrote no snapshot",
                log.len()
            );
            assert_rebuilt_same(seed, store, &registry, &id, &full, &keys).await;
            // The snapshot was used: the same rebuild of a log whose first entry no longer
            // verifies still succeeds (when a snapshot lies before the backlog).
            let before = log.len() as u64 - KEEP as u64;
            let usable: Vec<Snapshot> = snapshots
                .iter()
                .filter(|s| s.seq <= before)
                .cloned()
                .collect();
            println!("seed {seed}: {} snapshots before the backlog", usable.len());
            if !usable.is_empty() {
                used_snapshot += 1;
                let broken = first_entry_broken(&log);
                assert!(Session::restore(&registry, &record, &broken, true).is_err());
                let mut from =
                    Session::restore_from(&registry, &record, &broken, &usable, KEEP, true)
                        .unwrap_or_else(|e| {
                            panic!("seed {seed}: not rebuilt from a snapshot: {e}")
                        });
                from.keep_actions(KEEP);
                assert_same(seed, &full, &from, &keys);
            }
            // Rebuilt at every deal's end and in between, by the same function on the log's
            // prefix: the same as the full replay of that prefix.
            for cut in (1..=log.len())
                .step_by(37)
                .chain(snapshots.iter().map(|s| s.seq as usize))
            {
                let prefix = &log[..cut];
                let at = (cut as u64).saturating_sub(KEEP as u64);
                let usable: Vec<Snapshot> =
                    snapshots.iter().filter(|s| s.seq <= at).cloned().collect();
                let mut a = Session::restore(&registry, &record, prefix, true).unwrap();
                let mut b =
                    Session::restore_from(&registry, &record, prefix, &usable, KEEP, true).unwrap();
                a.keep_actions(KEEP);
                b.keep_actions(KEEP);
                assert_same(seed, &a, &b, &keys);
            }
        });
    }
    // The "snapshot was used" check is required, not skipped: every seed's log is long enough
    // to hold a snapshot before its backlog.
    assert_eq!(
        used_snapshot, 4,
        "seeds from {base}: only {used_snapshot} of 4 logs had a snapshot before the backlog"
    );
}

/// A match of at most `RESULTS_KEPT` deals played to its end has a snapshot at the end of every
/// deal but the last (no action follows the last, and the session keeps every deal's result, so
/// no GetState page reads the store for it), and the finished game rebuilt from the store equals
/// the full replay of its log. (A longer match keeps its last snapshot: the long-match test.)
#[test]
fn a_finished_match_has_no_snapshot_of_its_last_deal_and_rebuilds_the_same() {
    let registry = Arc::new(Registry::embedded().unwrap());
    let deals = 3;
    for seed in [41, 42] {
        println!("seed {seed}");
        runtime().block_on(async {
            let (games, id, keys) = play(&registry, "classic", deals, seed, 100_000).await;
            let store = games.store();
            let (record, log, snapshots) = stored(store, &id).await;
            let mut full = Session::restore(&registry, &record, &log, true).unwrap();
            full.keep_actions(KEEP);
            assert!(full.finished(), "seed {seed}: the match did not end");
            let ends = deal_ends_by_replay(&full.origin().unwrap(), &log);
            assert_eq!(ends.len(), deals as usize, "seed {seed}: deals ended");
            let seqs: Vec<u64> = snapshots.iter().map(|s| s.seq).collect();
            assert_eq!(
                seqs,
                ends[..ends.len() - 1],
                "seed {seed}: one snapshot per deal's end but the last"
            );
            assert_rebuilt_same(seed, store, &registry, &id, &full, &keys).await;
        });
    }
}

#[test]
fn a_corrupt_missing_or_foreign_snapshot_is_ignored() {
    let registry = Arc::new(Registry::embedded().unwrap());
    let seed = 5;
    println!("seed {seed}");
    runtime().block_on(async {
        let (games, id, keys) = play(&registry, "classic", 6, seed, 700).await;
        let (record, log, snapshots) = stored(games.store(), &id).await;
        assert!(
            snapshots.len() >= 3,
            "seed {seed}: {} snapshots",
            snapshots.len()
        );
        let mut full = Session::restore(&registry, &record, &log, true).unwrap();
        full.keep_actions(KEEP);
        let broken = first_entry_broken(&log);
        let rebuilt = |snaps: &[Snapshot], log: &[LogEntry]| {
            Session::restore_from(&registry, &record, log, snaps, KEEP, true).map(|mut s| {
                s.keep_actions(KEEP);
                s
            })
        };
        // Every snapshot's body with one byte flipped, or cut short: each falls back to the
        // full replay (the same session), and none is used (the broken log does not rebuild).
        let n = snapshots.len();
        for (i, s) in snapshots.iter().enumerate() {
            for j in [0, s.body.len() / 2, s.body.len() - 1] {
                let mut bad = snapshots.clone();
                bad[i].body[j] ^= 0x5a;
                // The ones after it follow a broken link: none of them is usable either, the
                // ones before are.
                let live = rebuilt(&bad, &log).unwrap();
                assert_same(seed, &full, &live, &keys);
                if i == 0 {
                    assert!(
                        rebuilt(&bad, &broken).is_err(),
                        "seed {seed}: snapshot {i} corrupt at byte {j} was used"
                    );
                }
            }
            let mut short = snapshots.clone();
            short[i].body.truncate(s.body.len() / 3);
            assert_same(seed, &full, &rebuilt(&short, &log).unwrap(), &keys);
        }
        // A missing snapshot: the chain before the gap still serves (the broken first entry
        // is before the first snapshot).
        let mut gap = snapshots.clone();
        gap.remove(n - 1 - (n > 2) as usize);
        assert_same(seed, &full, &rebuilt(&gap, &broken).unwrap(), &keys);
        // Another game's snapshots (another seed: other states): not this log's hashes.
        let others = games
            .store()
            .snapshots(&format!("g{}", seed + 100), u64::MAX)
            .await
            .unwrap();
        assert!(others.is_empty(), "each test game has its own store");
        let (g2, id2, _) = play(&registry, "classic", 6, seed + 100, 700).await;
        let foreign = g2.store().snapshots(&id2, u64::MAX).await.unwrap();
        assert!(!foreign.is_empty());
        assert_same(seed, &full, &rebuilt(&foreign, &log).unwrap(), &keys);
        assert!(
            rebuilt(&foreign, &broken).is_err(),
            "a foreign snapshot was used"
        );
    });
}

/// Every action's events from `wanted` on, replayed by `h`.
async fn events_from(
    mut h: History,
    store: &Store,
    wanted: u64,
) -> (Vec<history::Action>, Option<u64>) {
    let mut all = Vec::new();
    let mut first = None;
    loop {
        let page = h.next_page(store).await.unwrap();
        if page.is_empty() {
            break;
        }
        first.get_or_insert(page[0].0);
        all.extend(page.into_iter().filter(|(s, _, _)| *s >= wanted));
    }
    (all, first)
}

#[test]
fn a_replay_from_an_old_seq_starts_at_a_snapshot_and_gives_the_same_events() {
    let registry = Arc::new(Registry::embedded().unwrap());
    let seed = 9;
    println!("seed {seed}");
    runtime().block_on(async {
        let (games, id, _) = play(&registry, "baibian", 5, seed, 600).await;
        let store = games.store();
        let shared = games.load(&id).await.unwrap();
        let origin = shared.lock().await.origin().unwrap();
        let snapshots = store.snapshots(&id, u64::MAX).await.unwrap();
        assert!(snapshots.len() >= 2, "seed {seed}");
        let last = shared.lock().await.seq();
        let mut started_late = 0;
        for wanted in (0..=last)
            .step_by(29)
            .chain(snapshots.iter().flat_map(|s| [s.seq, s.seq + 1, s.seq + 2]))
        {
            let wanted = wanted.min(last);
            let (oracle, _) = events_from(History::new(origin.clone(), &id), store, wanted).await;
            let (got, first) = events_from(
                History::starting_at(origin.clone(), &id, wanted),
                store,
                wanted,
            )
            .await;
            assert_eq!(got, oracle, "seed {seed}: events from {wanted}");
            assert_eq!(got.first().map(|a| a.0), Some(wanted), "seed {seed}");
            let before = snapshots
                .iter()
                .rev()
                .find(|s| s.seq < wanted)
                .map(|s| s.seq + 1);
            assert_eq!(
                first.unwrap(),
                before.unwrap_or(0),
                "seed {seed}: the replay for {wanted} starts after the newest snapshot before it"
            );
            started_late += usize::from(before.is_some());
            // The same for one action (an idempotent retry's original reply).
            let one = History::starting_at(origin.clone(), &id, 0)
                .action_at(store, wanted)
                .await
                .unwrap();
            assert_eq!((one.0, one.1), (oracle[0].1, oracle[0].2.clone()));
        }
        assert!(started_late > 3);
    });
}

/// A copy of a game's record, `log` and `snapshots` in a fresh memory store.
async fn copied(record: &GameRecord, log: &[LogEntry], snapshots: &[Snapshot]) -> Store {
    let store = Store::open("memory").await.unwrap();
    copy_into(&store, record, log, snapshots).await;
    store
}

/// A game's record, `log` and `snapshots` written to `store`.
async fn copy_into(store: &Store, record: &GameRecord, log: &[LogEntry], snapshots: &[Snapshot]) {
    store.create(record).await.unwrap();
    for e in log {
        store.append(&record.id, e).await.unwrap();
    }
    for s in snapshots {
        store
            .put_snapshot(&record.id, s.seq, s.body.clone())
            .await
            .unwrap();
    }
}

/// The rebuild reads the record, the log's length, the snapshots and the log from the newest
/// usable snapshot on, not the whole log: on an embedded store whose journal has the log's first
/// entries damaged on disk (so that reading the whole log fails), the rebuild still succeeds and
/// equals the full replay of the intact log (the oracle).
#[test]
fn a_rebuild_reads_the_log_from_the_newest_snapshot_only() {
    let registry = Arc::new(Registry::embedded().unwrap());
    let seed = 31;
    println!("seed {seed}");
    runtime().block_on(async {
        let (games, id, keys) = play(&registry, "classic", 6, seed, 600).await;
        let (record, log, snapshots) = stored(games.store(), &id).await;
        let newest = snapshots
            .iter()
            .rfind(|s| s.seq <= log.len() as u64 - KEEP as u64)
            .expect("a snapshot before the backlog");
        assert!(
            newest.seq > 4,
            "seed {seed}: the newest snapshot at {}",
            newest.seq
        );
        let mut full = Session::restore(&registry, &record, &log, true).unwrap();
        full.keep_actions(KEEP);
        let dir = temp::TempDir::fresh("service-snapshots", "tail-only");
        let store = Store::open(&dir.display().to_string()).await.unwrap();
        copy_into(&store, &record, &log, &snapshots).await;
        store.flush().await.unwrap();
        // The first three entries' frames fail their checksums from now on.
        let path = dir.join(shuangkou::store::embedded::FILE_NAME);
        let mut bytes = std::fs::read(&path).unwrap();
        for e in &log[..3] {
            let at = bytes
                .windows(e.body.len())
                .position(|w| w == e.body.as_slice())
                .expect("the entry's body in the journal");
            bytes[at + e.body.len() / 2] ^= 0x5a;
        }
        std::fs::write(&path, &bytes).unwrap();
        assert!(
            store.load(&id).await.is_err(),
            "the damaged journal still reads whole"
        );
        let rebuilt = shuangkou::service::games::rebuild::rebuild::<Session>(
            &store, &registry, &id, KEEP, true,
        )
        .await
        .unwrap_or_else(|e| panic!("seed {seed}: the rebuild read the damaged entries: {e}"))
        .unwrap();
        let mut rebuilt = rebuilt;
        rebuilt.keep_actions(KEEP);
        assert_same(seed, &full, &rebuilt, &keys);
        // The newest snapshot corrupt: the one before it serves, and the entries from it on are
        // read (still not the damaged ones).
        let mut bad = newest.body.clone();
        bad[newest.body.len() / 2] ^= 0x5a;
        store.put_snapshot(&id, newest.seq, bad).await.unwrap();
        let mut older = shuangkou::service::games::rebuild::rebuild::<Session>(
            &store, &registry, &id, KEEP, true,
        )
        .await
        .unwrap_or_else(|e| panic!("seed {seed}: the older snapshot did not serve: {e}"))
        .unwrap();
        older.keep_actions(KEEP);
        assert_same(seed, &full, &older, &keys);
        // No snapshot usable (the first one corrupt breaks the chain): the whole log is read,
        // and its damaged entries fail the rebuild.
        let first = &snapshots[0];
        let mut bad = first.body.clone();
        bad[0] ^= 0x5a;
        store.put_snapshot(&id, first.seq, bad).await.unwrap();
        assert!(
            shuangkou::service::games::rebuild::rebuild::<Session>(
                &store, &registry, &id, KEEP, true
            )
            .await
            .is_err(),
            "seed {seed}: rebuilt without a usable snapshot or the whole log"
        );
    });
}

/// Entries appended between the rebuild's reads (the snapshots chosen for a shorter log, the
/// tail read after more entries were appended) are each applied once: the rebuild from such a
/// tail equals the full replay of the whole log.
#[test]
fn entries_appended_between_the_rebuilds_reads_are_applied_once() {
    let registry = Arc::new(Registry::embedded().unwrap());
    let seed = 33;
    println!("seed {seed}");
    runtime().block_on(async {
        let (games, id, keys) = play(&registry, "baibian", 6, seed, 500).await;
        let (record, log, snapshots) = stored(games.store(), &id).await;
        let mut full = Session::restore(&registry, &record, &log, true).unwrap();
        full.keep_actions(KEEP);
        let mut used = 0;
        for read_len in (KEEP + 1..log.len()).step_by(41) {
            // What the rebuild read when the log had `read_len` entries.
            let before = (read_len - KEEP) as u64;
            let usable: Vec<Snapshot> = snapshots
                .iter()
                .filter(|s| s.seq <= before)
                .cloned()
                .collect();
            let from = usable.last().map_or(0, |s| s.seq - 1);
            // The tail, read later: every entry appended since.
            let tail = &log[from as usize..];
            let restored =
                Session::restore_from_tail(&registry, &record, from, tail, &usable, KEEP, true)
                    .unwrap();
            let Restored::Game(mut live) = restored else {
                panic!("seed {seed}: at {read_len}: the snapshots did not serve");
            };
            used += usize::from(from > 0);
            live.keep_actions(KEEP);
            assert_same(seed, &full, &live, &keys);
        }
        assert!(used > 3, "seed {seed}: {used} rebuilds from a snapshot");
    });
}

/// Each entry of `log` with the events it gave, applied from the creation (the oracle: the
/// engine's own events, no snapshot, no paging).
fn replayed(origin: &history::Origin, log: &[LogEntry]) -> Vec<(u64, Vec<Event>)> {
    let hooks = origin.hooks.as_ref();
    let (mut game, _) = Game::new(
        origin.config.clone(),
        hooks,
        origin.seed,
        origin.preset.clone(),
        origin.created_at,
    )
    .unwrap();
    log.iter()
        .map(|e| {
            let stored = shuangkou::service::stored::decode(e).unwrap();
            (e.seq, game.apply(hooks, stored.entry).unwrap())
        })
        .collect()
}

/// The deals a replay of `log` from the creation settles.
fn settled_by_replay(origin: &history::Origin, log: &[LogEntry]) -> Vec<DealResult> {
    replayed(origin, log)
        .into_iter()
        .flat_map(|(_, events)| events)
        .filter_map(|event| match event {
            Event::DealEnded(r) => Some(r),
            _ => None,
        })
        .collect()
}

/// The seqs after which a replay of `log` from the creation has ended a deal.
fn deal_ends_by_replay(origin: &history::Origin, log: &[LogEntry]) -> Vec<u64> {
    replayed(origin, log)
        .into_iter()
        .filter(|(_, events)| events.iter().any(|e| matches!(e, Event::DealEnded(_))))
        .map(|(seq, _)| seq)
        .collect()
}

/// A long match keeps its latest `RESULTS_KEPT` deals in memory (issue 21: memory bounded per
/// game, not per deal) and a page of earlier deals comes from the store: from its snapshots
/// (which serve it even when the log's first entry no longer verifies), or, with no snapshot,
/// from a replay of the log; either way the deals an independent replay of the log settles.
#[test]
fn a_long_match_keeps_its_latest_deals_and_pages_older_ones_from_the_store() {
    let registry = Arc::new(Registry::embedded().unwrap());
    let deals: u32 = std::env::var("LONG_DEALS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    // An odd seed: no escape (an escape ends the match early).
    let seed = 31;
    println!("seed {seed}, {deals} deals");
    runtime().block_on(async {
        let (games, id, _) = play(&registry, "classic", deals, seed, u64::MAX).await;
        let store = games.store();
        let shared = games.load(&id).await.unwrap();
        let live = games.current(&shared).await.unwrap();
        assert!(live.finished(), "seed {seed}: the match did not end");
        let game = live.game();
        let origin = live.origin().unwrap();
        let (record, log, snapshots) = stored(store, &id).await;
        let oracle = settled_by_replay(&origin, &log);
        assert_eq!(oracle.len(), deals as usize, "seed {seed}");
        assert_eq!(game.results_settled(), deals);
        assert_eq!(
            game.results().len(),
            RESULTS_KEPT,
            "the deals kept in memory"
        );
        assert_eq!(game.results(), &oracle[oracle.len() - RESULTS_KEPT..]);
        assert_eq!(
            snapshots.len(),
            deals as usize,
            "a snapshot at every deal's end"
        );
        // GetState's default page is the deals kept; deal 1's page is not in memory.
        let (latest, next) = results_range(deals, 0, 0);
        assert_eq!((game.results_in(latest), next), (Some(game.results()), 0));
        let (first, next) = results_range(deals, 1, 10);
        assert_eq!((first.clone(), next), (0..10, 11));
        assert_eq!(game.results_in(first.clone()), None);
        let ranges = [first, 100..deals.min(200), deals - 20..deals];
        let snapshot_only = copied(&record, &first_entry_broken(&log), &snapshots).await;
        let log_only = copied(&record, &log, &[]).await;
        for source in [store, &snapshot_only, &log_only] {
            for range in ranges.clone() {
                let page = history::settled_deals(source, &id, origin.clone(), range.clone())
                    .await
                    .unwrap_or_else(|e| panic!("seed {seed}: deals {range:?}: {e}"));
                let want = &oracle[range.start as usize..range.end as usize];
                let numbers =
                    |d: &[DealResult]| d.iter().map(|r| r.deal_number).collect::<Vec<_>>();
                assert!(
                    page == want,
                    "seed {seed}: deals {range:?}: got deals {:?}",
                    numbers(&page)
                );
            }
        }
        drop(live);
        // Rebuilt from its snapshots, the game keeps the same deals and totals.
        let rebuilt = shuangkou::service::games::rebuild::rebuild::<Session>(
            store, &registry, &id, KEEP, true,
        )
        .await
        .unwrap()
        .unwrap();
        let live = games.current(&shared).await.unwrap();
        assert_eq!(rebuilt.game(), live.game());
    });
}

/// A recovery at start rebuilds a log longer than its limit from the snapshots, not from the
/// whole log: with the log's first entry broken (a whole replay fails), the game is recovered
/// all the same and equals the full replay of the intact log (the oracle); with a limit at the
/// log's length (the log read whole) it is not recovered.
#[test]
fn a_recovery_rebuilds_a_long_log_from_its_snapshots() {
    let registry = Arc::new(Registry::embedded().unwrap());
    let seed = 33;
    println!("seed {seed}");
    runtime().block_on(async {
        let (played, id, keys) = play(&registry, "classic", 8, seed, 600).await;
        let (record, log, snapshots) = stored(played.store(), &id).await;
        let mut full = Session::restore(&registry, &record, &log, true).unwrap();
        full.keep_actions(KEEP);
        assert!(!full.finished(), "seed {seed}: the match ended early");
        assert!(
            snapshots.len() > 1,
            "seed {seed}: {} snapshots",
            snapshots.len()
        );
        let broken = first_entry_broken(&log);
        let len = log.len() as u64;

        let whole = games(&registry, copied(&record, &broken, &snapshots).await);
        whole.recover_with(len).await.unwrap();
        assert!(
            whole.cached(&id).is_none(),
            "seed {seed}: the broken log was recovered read whole"
        );

        let from_snapshots = games(&registry, copied(&record, &broken, &snapshots).await);
        from_snapshots.recover_with(len - 1).await.unwrap();
        let shared = from_snapshots
            .cached(&id)
            .unwrap_or_else(|| panic!("seed {seed}: not recovered from its snapshots"));
        let live = shared.lock().await;
        assert_same(seed, &full, &live, &keys);
    });
}
