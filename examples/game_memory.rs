//! The memory of one game mid-deal (BENCHMARKS.md, "Memory"): a counting allocator measures the
//! heap a `Game` holds (the bytes its clone allocates: every Vec and String of the state), its
//! action log and the events the service keeps with it, and the JSON snapshot's size.
//!
//! `cargo run --release --example game_memory [variant]`
//!
//! `cargo run --release --example game_memory sessions N [variant]` measures what the service
//! holds per game in progress instead: N live games (`service::session::Session`, as the
//! server caches them) each played to the middle of an 8-deal match (the start of deal 5, seeded
//! random plays), the heap they hold per game (counting allocator) and the process's VmRSS
//! growth, side by side in one run for the default backlog (`--backlog-actions`) and a backlog
//! of the whole match (every action's events and keys kept, as before issue 21); `BACKLOG=K`
//! runs a backlog of K actions only; `KEYED=1` gives every action an idempotency key (the
//! backlog then also remembers the keys' fingerprints).
//!
//! `cargo run --example game_memory long DEALS [variant]` plays one live game (a `Session`, the
//! default backlog) through a DEALS-deal match (seeded random plays) and prints, at deals 8, 100,
//! 200, … and at the end, the heap the session holds (without the configured hooks, which every
//! game of a configuration shares) and where it goes: the settled deals it keeps in memory (as
//! the game keeps them, compact; with their postcard size and their size decoded,
//! `Game::results`), the rest of the state, what the session held at creation (record, channel,
//! backlog, first deal), and the rest (the backlog's events, …).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shuangkou::game::{Action, Entry, Event, Game, GameConfig, HashScheme, Results};
use shuangkou::hand::Declared;
use shuangkou::seat::{Player, Seat};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: same layout contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` was allocated by `System` with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` was allocated by `System` with `layout`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn heap_of<T: Clone>(value: &T) -> usize {
    let before = LIVE.load(Ordering::Relaxed);
    let copy = value.clone();
    let after = LIVE.load(Ordering::Relaxed);
    drop(copy);
    after.saturating_sub(before)
}

/// The process's resident set (VmRSS), in bytes.
fn vm_rss() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// A seeded random legal action of the seat to act (a pass with probability 0.3 when legal).
fn random_action(game: &Game, rng: &mut ChaCha8Rng) -> Option<(Player, Action)> {
    let seat = game.turn()?;
    let player = game.seating()[seat];
    let (plays, can_pass) = game.legal_plays(seat);
    let action = if plays.is_empty() || (can_pass && rng.random_bool(0.3)) {
        if !can_pass {
            return None;
        }
        Action::Pass
    } else {
        let p = &plays[rng.random_range(0..plays.len())];
        Action::Play {
            cards: game.hand(seat).take(p.cards)?,
            declared: Some(Declared {
                kind: p.hand.kind,
                key: p.hand.key(),
            }),
        }
    };
    Some((player, action))
}

/// The service's form of an engine action (a play or a pass).
fn wire_action(action: Action) -> shuangkou::service::wire::Action {
    match action {
        Action::Play { cards, declared } => {
            shuangkou::service::wire::Action::Play { cards, declared }
        }
        _ => shuangkou::service::wire::Action::Pass,
    }
}

/// `sessions N [variant]`: live games at the middle of an 8-deal match, per game.
fn sessions(n: usize, variant: &str) -> Result<(), Box<dyn std::error::Error>> {
    use shuangkou::service::backlog::DEFAULT_ACTIONS;
    use shuangkou::service::record::{CreateBase, Minting, NewGame, Record};
    use shuangkou::service::session::{Idempotent, Session};

    let registry = shuangkou::variants::Registry::embedded()?;
    let compiled = registry.active(variant).ok_or("no such variant")?;
    println!("{n} {variant} games, each played to the start of deal 5 of 8");
    let mut runs = vec![
        ("default backlog", DEFAULT_ACTIONS),
        ("whole-match backlog", usize::MAX),
    ];
    // `BACKLOG=K`: that backlog only (a large N without the whole-match run's memory).
    if let Some(k) = std::env::var("BACKLOG").ok().and_then(|k| k.parse().ok()) {
        runs = vec![("backlog $BACKLOG", k)];
    }
    // `KEYED=1`: every action carries an idempotency key (request id), as a client's would.
    let keyed = std::env::var("KEYED").is_ok_and(|k| k == "1");
    for (label, backlog) in runs {
        let (heap0, rss0) = (LIVE.load(Ordering::Relaxed), vm_rss());
        let mut games = Vec::with_capacity(n);
        let mut actions = 0u64;
        for i in 0..n {
            let new = NewGame {
                base: CreateBase {
                    seed: format!("{:064x}", i + 1),
                    ..CreateBase::of(variant)
                },
                deals: 8,
                ..NewGame::default()
            };
            let (record, _) = Record::new(
                &compiled,
                &new,
                Minting::local(&format!("g{i}"), &[7; 32], 1),
            )?;
            let mut live = Session::create(&registry, record, true)?;
            live.keep_actions(backlog);
            let mut rng = ChaCha8Rng::seed_from_u64(i as u64);
            while live.game().deal_number() <= 4 && !live.finished() {
                let (player, action) =
                    random_action(live.game(), &mut rng).ok_or("no legal action")?;
                let at = 1 + live.seq();
                let prepared = if keyed {
                    let key = format!("request-{}", live.seq() + 1);
                    let request = Idempotent {
                        id: &key,
                        digest: "0123456789abcdef0123456789abcdef",
                    };
                    live.prepare(player, wire_action(action), at, Some(request))?
                } else {
                    live.prepare_action(player, action, at)?
                };
                live.accept(prepared);
                actions += 1;
            }
            games.push(live);
        }
        let heap = LIVE.load(Ordering::Relaxed).saturating_sub(heap0);
        let rss = vm_rss().saturating_sub(rss0);
        println!(
            "{label} ({backlog} actions): {actions} actions ({} per game); heap {} B per game; \
             VmRSS growth {} B per game ({:.1} MiB in all)",
            actions / n.max(1) as u64,
            heap / n.max(1),
            rss / n.max(1),
            rss as f64 / 1048576.0
        );
        drop(games);
    }
    Ok(())
}

/// `long DEALS [variant]`: one live game through a long match, its heap by deal.
fn long(deals: u32, variant: &str) -> Result<(), Box<dyn std::error::Error>> {
    use shuangkou::service::record::{CreateBase, Minting, NewGame, Record};
    use shuangkou::service::session::Session;

    let registry = shuangkou::variants::Registry::embedded()?;
    let compiled = registry.active(variant).ok_or("no such variant")?;
    let new = NewGame {
        base: CreateBase {
            seed: format!("{:064x}", 21),
            ..CreateBase::of(variant)
        },
        deals,
        ..NewGame::default()
    };
    let (record, _) = Record::new(&compiled, &new, Minting::local("long", &[7; 32], 1))?;
    // The configured hooks are built once per configuration and shared by every game with it
    // (the registry caches them): counted apart, before the session.
    let before_hooks = LIVE.load(Ordering::Relaxed);
    let _shared = registry.configured(&compiled, &record.options)?;
    let hooks_heap = LIVE.load(Ordering::Relaxed).saturating_sub(before_hooks);
    println!(
        "one {variant} game through a {deals}-deal match (default backlog); shared per \
         configuration: hooks {hooks_heap} B; size_of Session {} B",
        std::mem::size_of::<Session>()
    );
    // The session drops the record's script text (the store keeps it): not the session's.
    let heap0 = LIVE
        .load(Ordering::Relaxed)
        .saturating_sub(record.script.capacity());
    let mut live = Session::create(&registry, record, true)?;
    let created = LIVE.load(Ordering::Relaxed).saturating_sub(heap0);
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let mut reported = 0;
    loop {
        let settled = live.game().results_settled();
        let checkpoint = settled == 8 || settled % 100 == 0 || live.finished();
        if settled > reported && checkpoint {
            reported = settled;
            // Read before the copies below are made.
            let session = LIVE.load(Ordering::Relaxed).saturating_sub(heap0);
            let results = live.game().results();
            let decoded = heap_of(&results);
            let encoded: usize = results
                .iter()
                .map(|r| postcard::to_stdvec(r).map_or(0, |v| v.len()))
                .sum();
            // The same deals as the game keeps them (`Results`: compact, with the streaks).
            let before = LIVE.load(Ordering::Relaxed);
            let mut kept = Results::for_scheme(HashScheme::Chained);
            for r in &results {
                kept.push(r);
            }
            let results_heap = LIVE.load(Ordering::Relaxed).saturating_sub(before);
            drop(kept);
            // A copy of the state shares its kept results (an `Arc`): the rest of the state.
            let state = heap_of(live.game());
            println!(
                "after deal {settled} (seq {}): session heap {session} B = results kept {} \
                 {results_heap} B (postcard {encoded} B; decoded {decoded} B) + state {state} B \
                 + at creation {created} B + the rest (backlog events, …) {} B",
                live.seq(),
                results.len(),
                session.saturating_sub(results_heap + state + created)
            );
        }
        if live.finished() {
            return Ok(());
        }
        let (player, action) = random_action(live.game(), &mut rng).ok_or("no legal action")?;
        let at = 1 + live.seq();
        let prepared = live.prepare_action(player, action, at)?;
        live.accept(prepared);
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let first = std::env::args().nth(1);
    if first.as_deref() == Some("long") {
        let deals = std::env::args()
            .nth(2)
            .and_then(|s| s.parse().ok())
            .unwrap_or(200);
        let variant = std::env::args()
            .nth(3)
            .unwrap_or_else(|| "baibian".to_string());
        return long(deals, &variant);
    }
    if first.as_deref() == Some("sessions") {
        let n = std::env::args()
            .nth(2)
            .and_then(|s| s.parse().ok())
            .unwrap_or(10_000);
        let variant = std::env::args()
            .nth(3)
            .unwrap_or_else(|| "baibian".to_string());
        return sessions(n, &variant);
    }
    let variant = first.unwrap_or_else(|| "baibian".to_string());
    let compiled = shuangkou::variants::builtin(&variant)?;
    let hooks = compiled.with_defaults()?;
    let config = GameConfig {
        variant: variant.clone(),
        version: compiled.hash().to_string(),
        deals: 2,
        turn_ms: Some(30_000),
        max_consecutive_timeouts: 1,
        reconnect_ms: 90_000,
    };
    let (mut game, first) = Game::new(config, &hooks, [7; 32], None, 0)?;
    let mut events: Vec<(u64, Vec<Event>)> = vec![(0, first)];
    let mut log: Vec<Entry> = Vec::new();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let per_deal = usize::from(game.rules().hand_size) * usize::from(game.players());
    println!(
        "variant {variant}: size_of Game {} B, Entry {} B, Event {} B",
        std::mem::size_of::<Game>(),
        std::mem::size_of::<Entry>(),
        std::mem::size_of::<Event>()
    );
    for deal in 1..=2u32 {
        // Play until about half of the deal's cards are on the table.
        while game.deal_number() == deal
            && (0..game.players())
                .map(|s| game.hand(Seat::new(s)).len())
                .sum::<usize>()
                > per_deal / 2
        {
            let Some((player, action)) = random_action(&game, &mut rng) else {
                break;
            };
            let entry = Entry {
                player,
                action,
                at: 0,
            };
            let ev = game.apply(&hooks, entry)?;
            log.push(entry);
            events.push((game.seq(), ev));
        }
        let game_heap = heap_of(&game);
        let log_heap = log.capacity() * std::mem::size_of::<Entry>();
        let events_heap = heap_of(&events);
        let json = serde_json::to_vec(&game)?.len();
        println!(
            "mid-deal {deal} (seq {}): Game heap {game_heap} B + inline {} B; log {} entries = {log_heap} B (capacity); \
             events {events_heap} B; Game + log = {} B; + events = {} B; JSON snapshot {json} B",
            game.seq(),
            std::mem::size_of::<Game>(),
            log.len(),
            game_heap + std::mem::size_of::<Game>() + log_heap,
            game_heap + std::mem::size_of::<Game>() + log_heap + events_heap,
        );
        // On to the next deal.
        while game.deal_number() == deal {
            let Some(seat) = game.turn() else { break };
            let player = game.seating()[seat];
            let (plays, can_pass) = game.legal_plays(seat);
            let action = if plays.is_empty() || can_pass {
                if can_pass { Action::Pass } else { break }
            } else {
                let p = &plays[0];
                let cards = game.hand(seat).take(p.cards).ok_or("hint not held")?;
                Action::Play {
                    cards,
                    declared: Some(Declared {
                        kind: p.hand.kind,
                        key: p.hand.key(),
                    }),
                }
            };
            let entry = Entry {
                player,
                action,
                at: 0,
            };
            let ev = game.apply(&hooks, entry)?;
            log.push(entry);
            events.push((game.seq(), ev));
        }
    }
    Ok(())
}
