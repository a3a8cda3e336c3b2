//! The rebuild of an evicted long match, before and after per-deal snapshots (issue 21), side by
//! side in one process, and another game's GetState meanwhile.
//!
//! `rebuild_time [DEALS] [SEED] [ROUNDS]` plays one baibian match of DEALS deals (default 1,000)
//! through the service's commit protocol on a memory store (random legal plays and passes,
//! seeded; a snapshot is written at each deal's end), then, ROUNDS times (default 5), rebuilds it
//! as the cache does: `before`, the whole log replayed (`Session::restore`); `after`,
//! `rebuild::rebuild` (the newest snapshot, then the entries after it). Each round runs four
//! concurrent rebuilds of one kind on a 2-worker runtime (the replay on blocking threads, as the
//! cache runs it) while a task reads a second, short game's GetState (`wire::view::state`, the
//! admin's view under its lock) every millisecond; printed: the median rebuild time of each
//! kind and their ratio, and the other game's GetState p50 / p99 / max during each kind.
//!
//! `rebuild_time DEALS SEED ROUNDS STORE` rebuilds from another store (`--store`'s spec: a
//! directory for the embedded store, `redis://…`): the match is played on a memory store, then
//! its record, log and snapshots are copied to STORE through the store API (the appends
//! pipelined, a batch of them in flight at a time, so the embedded store commits each batch with
//! one fsync instead of one per action), and the rebuilds read STORE.
//!
//! `--no-full-replay` (anywhere among the arguments) leaves out the `before` kind: the whole log
//! is then never loaded in one call, so a Redis STORE can keep its default call timeout
//! (`timeout_ms`, 2 s), which a whole-log load of a 1,000-deal match exceeds.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shuangkou::game::{Action, Game, Viewer};
use shuangkou::hand::Declared;
use shuangkou::service::games::{Games, GamesConfig, Shared};
use shuangkou::service::record::{CreateBase, Minting, NewGame, Record};
use shuangkou::service::session::Session;
use shuangkou::store::Store;
use shuangkou::variants::Registry;

const KEEP: usize = shuangkou::service::backlog::DEFAULT_ACTIONS;

fn random_action(game: &Game, rng: &mut ChaCha8Rng) -> Option<(shuangkou::seat::Player, Action)> {
    let seat = game.turn()?;
    let player = game.seating()[seat];
    let (plays, can_pass) = game.legal_plays(seat);
    if plays.is_empty() || (can_pass && rng.random_bool(0.4)) {
        return can_pass.then_some((player, Action::Pass));
    }
    let p = &plays[rng.random_range(0..plays.len())];
    let cards = game.hand(seat).take(p.cards)?;
    let declared = Some(Declared {
        kind: p.hand.kind,
        key: p.hand.key(),
    });
    Some((player, Action::Play { cards, declared }))
}

async fn create(games: &Games, registry: &Registry, id: &str, deals: u32, seed: u64) -> Shared {
    let compiled = registry.active("baibian").expect("baibian");
    let new = NewGame {
        base: CreateBase {
            seed: format!("{seed:064x}"),
            ..CreateBase::of("baibian")
        },
        deals,
        ..NewGame::default()
    };
    let record = Record::new(&compiled, &new, Minting::local(id, &[7; 32], 1))
        .expect("record")
        .0;
    games.create(record, None).await.expect("create");
    games.load(id).await.expect("load")
}

async fn play(games: &Games, game: &Shared, seed: u64) -> u64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut n = 0u64;
    loop {
        let mut live = games.current(game).await.expect("current");
        let Some((player, action)) = random_action(live.game(), &mut rng) else {
            return n;
        };
        n += 1;
        let at = 1 + n;
        games
            .commit(&mut live, |l| l.prepare_action(player, action, at))
            .await
            .expect("commit");
    }
}

/// Runs `futures` together, each first polled in order (so the store receives the appends in
/// seq order), and returns their outputs in order.
async fn in_order<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut futures: Vec<Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (f, out) in futures.iter_mut().zip(outputs.iter_mut()) {
            if out.is_none() {
                match f.as_mut().poll(cx) {
                    Poll::Ready(v) => *out = Some(v),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

/// Copies game `id` (record, log, snapshots) from `from` to `to`: the appends pipelined
/// [`BATCH`] at a time; an append refused (out of order) is retried alone. Returns the seconds.
async fn copy_game(from: &Store, to: &Store, id: &str) -> f64 {
    const BATCH: usize = 2048;
    let t = Instant::now();
    let (record, log) = from.load(id).await.expect("load").expect("game");
    to.create(&record).await.expect("create");
    for chunk in log.chunks(BATCH) {
        let appends = chunk.iter().map(|e| to.append(id, e)).collect();
        for (e, r) in chunk.iter().zip(in_order(appends).await) {
            if !matches!(r.expect("append"), shuangkou::store::Appended::Ok) {
                let again = to.append(id, e).await.expect("append");
                assert!(
                    matches!(again, shuangkou::store::Appended::Ok),
                    "seq {}",
                    e.seq
                );
            }
        }
    }
    for s in from.snapshots(id, u64::MAX).await.expect("snapshots") {
        to.put_snapshot(id, s.seq, s.body).await.expect("snapshot");
    }
    t.elapsed().as_secs_f64()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let all: Vec<String> = std::env::args().collect();
    let full_replay = !all.iter().any(|a| a == "--no-full-replay");
    if let Some(unknown) = all
        .iter()
        .skip(1)
        .find(|a| a.starts_with("--") && *a != "--no-full-replay")
    {
        eprintln!(
            "rebuild_time: unknown flag {unknown} (usage: rebuild_time [DEALS] [SEED] [ROUNDS] [STORE] [--no-full-replay])"
        );
        std::process::exit(2);
    }
    let args: Vec<String> = all.into_iter().filter(|a| !a.starts_with("--")).collect();
    let kinds: &[usize] = if full_replay { &[0, 1] } else { &[1] };
    let deals: u32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let seed: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(21);
    let rounds: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(5);
    let spec = args.get(4).cloned().unwrap_or_else(|| "memory".to_string());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let registry = Arc::new(Registry::embedded().expect("registry"));
        let config = GamesConfig {
            no_turn_timers: true,
            finished_linger_seconds: 120,
            backlog_actions: KEEP,
            max_games: 10,
            disconnected_turns_immediate: false,
            auto_bot: shuangkou::bot::styles::spec("heuristic").expect("bot"),
        };
        let store = Store::open("memory").await.expect("store");
        let games = Arc::new(Games::new(config, Arc::clone(&registry), store));
        let t = Instant::now();
        let long = create(&games, &registry, "long", deals, seed).await;
        let actions = play(&games, &long, seed).await;
        let snapshots = games.store().snapshots("long", u64::MAX).await.expect("snapshots");
        let bytes: usize = snapshots.iter().map(|s| s.body.len()).sum();
        println!(
            "{deals}-deal baibian match (seed {seed}): {actions} actions in {:.1} s; {} snapshots, {bytes} B ({} B each on average)",
            t.elapsed().as_secs_f64(),
            snapshots.len(),
            bytes / snapshots.len().max(1)
        );
        let games = if spec == "memory" {
            games
        } else {
            let to = Store::open(&spec).await.expect("store");
            let secs = copy_game(games.store(), &to, "long").await;
            println!("copied to {spec} in {secs:.1} s ({:.0} appends/s)", actions as f64 / secs.max(1e-9));
            Arc::new(Games::new(config, Arc::clone(&registry), to))
        };
        let other = create(&games, &registry, "other", 1, seed + 1).await;
        let mut times: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
        let mut others: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
        for _ in 0..rounds {
            for &k in kinds {
                let label = ["before", "after"][k];
                let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
                let reader = {
                    let (games, other, stop) = (Arc::clone(&games), Arc::clone(&other), Arc::clone(&stop));
                    tokio::spawn(async move {
                        let mut lat = Vec::new();
                        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                            let t = Instant::now();
                            let live = games.current(&other).await.expect("current");
                            let st = shuangkou::service::wire::view::state(
                                live.game(),
                                &live.record,
                                Viewer::Admin,
                                &live.game().results(),
                                0,
                            );
                            drop(live);
                            std::hint::black_box(st);
                            lat.push(t.elapsed());
                            tokio::time::sleep(Duration::from_millis(1)).await;
                        }
                        lat
                    })
                };
                let rebuilds: Vec<_> = (0..4)
                    .map(|_| {
                        let (games, registry) = (Arc::clone(&games), Arc::clone(&registry));
                        tokio::spawn(async move {
                            let t = Instant::now();
                            let store = games.store();
                            let live = if k == 0 {
                                let (record, log) = store.load("long").await.expect("load").expect("game");
                                tokio::task::spawn_blocking(move || {
                                    Session::restore(&registry, &record, &log, true)
                                })
                                .await
                                .expect("join")
                            } else {
                                shuangkou::service::games::rebuild::rebuild::<Session>(store, &registry, "long", KEEP, true)
                                    .await
                                    .map(|s| s.expect("game"))
                            };
                            let live = live.unwrap_or_else(|e| panic!("{label}: {e}"));
                            (t.elapsed(), live.game().state_hash())
                        })
                    })
                    .collect();
                for r in rebuilds {
                    let (d, hash) = r.await.expect("join");
                    assert_eq!(hash, long.lock().await.game().state_hash(), "{label}");
                    times[k].push(d);
                }
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                others[k].extend(reader.await.expect("join"));
            }
        }
        for &k in kinds {
            let label = ["before (full replay)", "after (snapshot + rest)"][k];
            times[k].sort();
            others[k].sort();
            println!(
                "{label}: rebuild median {:.2} ms (min {:.2}, max {:.2}; {} rebuilds, 4 at a time); other game's GetState p50 {:.3} / p99 {:.3} / max {:.3} ms ({} reads)",
                ms(percentile(&times[k], 0.5)),
                ms(times[k][0]),
                ms(*times[k].last().expect("times")),
                times[k].len(),
                ms(percentile(&others[k], 0.5)),
                ms(percentile(&others[k], 0.99)),
                ms(*others[k].last().unwrap_or(&Duration::ZERO)),
                others[k].len()
            );
        }
        if full_replay {
            println!(
                "ratio of the medians, before / after: {:.0}x",
                percentile(&times[0], 0.5).as_secs_f64() / percentile(&times[1], 0.5).as_secs_f64().max(1e-9)
            );
        }
    });
}
