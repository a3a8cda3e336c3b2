//! The memory of one game mid-deal (BENCHMARKS.md, "Memory"): a counting allocator measures the
//! heap a `Game` holds (the bytes its clone allocates: every Vec and String of the state), its
//! action log and the events the service keeps with it, and the JSON snapshot's size.
//!
//! `cargo run --release --example game_memory [variant]`

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shuangkou::game::{Action, Entry, Event, Game, GameConfig};
use shuangkou::hand::Declared;
use shuangkou::seat::Seat;

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

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let variant = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "baibian".to_string());
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
            let Some(seat) = game.turn() else { break };
            let player = game.seating()[seat];
            let (plays, can_pass) = game.legal_plays(seat);
            let action = if plays.is_empty() || (can_pass && rng.random_bool(0.3)) {
                Action::Pass
            } else {
                let p = &plays[rng.random_range(0..plays.len())];
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
