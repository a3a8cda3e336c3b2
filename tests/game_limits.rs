//! Deal engine limits: creation rejects what would break a deal (incoherent rules, preset hands
//! that are empty or too large) with a setup error instead of a panic or a stuck game; the bombs
//! left in a hand reach the settlement in their best arrangement; and one game in the middle of
//! a deal stays small (BENCHMARKS.md, "Deal engine": measured here with a counting allocator;
//! `cargo test --release --test game_limits -- --nocapture` prints the figures).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Mutex;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shuangkou::cards::{CardSet, RankCounts};
use shuangkou::game::hooks::{
    DealFacts, EscapeFacts, HookError, SeatingDecision, SeatingFacts, Settlement, SumRule,
    TimeoutFacts, VariantHooks,
};
use shuangkou::game::testing::PlainHooks;
use shuangkou::game::{Action, EngineError, Entry, Game, GameConfig, GameError, Phase};
use shuangkou::hand::Declared;
use shuangkou::rules::Rules;
use shuangkou::seat::{Player, Seat};

/// Counts the bytes allocated by each thread, so that a measurement on one test's thread is not
/// disturbed by the tests running beside it in this binary.
struct Counting;

thread_local! {
    /// Bytes this thread has allocated. Constant-initialized and without a destructor, so the
    /// allocator may touch it at any time, thread teardown included (`try_with`).
    static ALLOCATED: Cell<usize> = const { Cell::new(0) };
}

/// Bytes allocated so far by the calling thread.
fn allocated_here() -> usize {
    ALLOCATED.with(Cell::get)
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATED.try_with(|a| a.set(a.get() + layout.size()));
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn config(deals: u32) -> GameConfig {
    GameConfig {
        turn_ms: Some(30_000),
        ..GameConfig::new("test", "test", deals)
    }
}

/// Hands from rank notation (lowest free card ids), one string per seat.
fn hands(specs: &[&str]) -> Vec<CardSet> {
    let mut free = CardSet::FULL;
    specs
        .iter()
        .map(|s| {
            let set = free.take(s.parse::<RankCounts>().unwrap()).unwrap();
            free = free.difference(set);
            set
        })
        .collect()
}

#[test]
fn creation_rejects_what_would_break_a_deal() {
    let hooks = PlainHooks::new(Rules::CLASSIC);
    let cases: Vec<(&str, Vec<CardSet>)> = vec![
        ("an empty hand", hands(&["3", "4", "", "5"])),
        ("a hand larger than the hand size", {
            let mut h = hands(&["3", "4", "5", "6"]);
            h[0] = CardSet::FULL
                .difference(h[1].union(h[2]).union(h[3]))
                .take(
                    "3 3 3 3 3 3 3 4 4 4 4 4 4 4 5 5 5 5 5 5 5 6 6 6 6 6 6 6"
                        .parse()
                        .unwrap(),
                )
                .unwrap();
            h
        }),
    ];
    for (what, preset) in cases {
        let r = Game::new(config(1), &hooks, [1; 32], Some(preset), 0);
        assert!(
            matches!(r, Err(GameError::Engine(EngineError::Setup(_)))),
            "{what}: {:?}",
            r.map(|_| ())
        );
    }
    // Rules that deal more cards than the decks hold: a setup error, not a panic.
    let bad = PlainHooks::new(Rules {
        hand_size: 30,
        ..Rules::BAIBIAN
    });
    let r = Game::new(config(1), &bad, [1; 32], None, 0);
    assert!(
        matches!(r, Err(GameError::Engine(EngineError::Setup(_)))),
        "{:?}",
        r.map(|_| ())
    );
}

/// The test double, recording the facts of every settlement.
struct Recording {
    inner: PlainHooks,
    deals: Mutex<Vec<DealFacts>>,
}

impl VariantHooks for Recording {
    fn rules(&self) -> &Rules {
        self.inner.rules()
    }
    fn partners_see_hands(&self) -> bool {
        false
    }
    fn sum_rule(&self) -> SumRule {
        SumRule::Zero
    }
    fn seating(&self, f: &SeatingFacts) -> Result<SeatingDecision, HookError> {
        self.inner.seating(f)
    }
    fn settle(&self, f: &DealFacts) -> Result<Settlement, HookError> {
        self.deals.lock().unwrap().push(f.clone());
        self.inner.settle(f)
    }
    fn settle_escape(&self, f: &EscapeFacts) -> Result<Settlement, HookError> {
        self.inner.settle_escape(f)
    }
    fn timeout_is_escape(&self, f: &TimeoutFacts) -> Result<bool, HookError> {
        self.inner.timeout_is_escape(f)
    }
}

#[test]
fn bombs_left_in_hand_reach_the_settlement_in_their_best_arrangement() {
    // 二人 (all jokers wild, unequal chain bombs): the loser's 24 cards. Four bombs
    // 77777+SJ SJ BJ BJ (9★) + 8888 + 9999 + JJJJ (4★ each) are worth 512 + 3·16 = 560 in
    // Σ 2^stars; the best arrangement is the chain 7-8-9-T-J with one joker filling the T group
    // (smallest group 4 + 5 links = 9★, 512) plus 三王 from the other three jokers (6★, 64): 576.
    let hooks = Recording {
        inner: PlainHooks::new(Rules::ERREN).led_by(Seat::new(0)),
        deals: Mutex::new(Vec::new()),
    };
    let loser = "7 7 7 7 7 8 8 8 8 9 9 9 9 T T T J J J J SJ SJ BJ BJ";
    let preset = hands(&["3", loser]);
    let (mut g, _) = Game::new(config(1), &hooks, [2; 32], Some(preset.clone()), 0).unwrap();
    let cards = preset[0];
    g.apply(
        &hooks,
        Entry {
            player: Player::new(0),
            action: Action::Play {
                cards,
                declared: None,
            },
            at: 0,
        },
    )
    .unwrap();
    assert_eq!(g.phase(), Phase::Finished);
    let facts = hooks.deals.lock().unwrap()[0].clone();
    let bombs = &facts.table.bombs_in_hand[1];
    let value: u64 = bombs.iter().map(|b| 1u64 << b.stars.unwrap_or(b.len)).sum();
    assert_eq!(value, 576, "{bombs:?}");
    let mut used = RankCounts::EMPTY;
    for b in bombs {
        used = used.plus(b.cards);
    }
    assert!(
        used.is_subset(loser.parse().unwrap()),
        "the bombs are disjoint cards of the hand"
    );
}

/// Bytes the game owns on the heap (what a clone allocates) plus its inline size.
fn footprint(g: &Game) -> usize {
    let before = allocated_here();
    let copy = g.clone();
    let heap = allocated_here() - before;
    drop(copy);
    heap + std::mem::size_of::<Game>()
}

#[test]
fn one_game_in_the_middle_of_a_deal_stays_small() {
    let mut worst = (0usize, 0usize, String::new());
    let mut total = (0usize, 0usize);
    for (variant, rules) in [
        ("baibian", Rules::BAIBIAN),
        ("classic", Rules::CLASSIC),
        ("erren", Rules::ERREN),
    ] {
        let hooks = PlainHooks::new(rules);
        for seed in 0..8u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let (mut g, _) = Game::new(config(1), &hooks, [seed as u8; 32], None, 0).unwrap();
            let mut log: Vec<Entry> = Vec::new();
            let dealt = 108 - g.unused().len();
            // Random legal play until half the dealt cards are on the table.
            while g.phase() == Phase::Playing && 2 * g.played().len() < dealt {
                let seat = g.turn().unwrap();
                let player = g.seating()[seat];
                let (plays, can_pass) = g.legal_plays(seat);
                let k = rng.random_range(0..plays.len() + usize::from(can_pass));
                let action = match plays.get(k) {
                    Some(p) => Action::Play {
                        cards: g.hand(seat).take(p.cards).unwrap(),
                        declared: Some(Declared {
                            kind: p.hand.kind,
                            key: p.hand.key(),
                        }),
                    },
                    None => Action::Pass,
                };
                let e = Entry {
                    player,
                    action,
                    at: 0,
                };
                g.apply(&hooks, e).unwrap();
                log.push(e);
            }
            let game = footprint(&g);
            let with_log = game + log.len() * std::mem::size_of::<Entry>();
            total = (total.0 + game, total.1 + with_log);
            if with_log > worst.1 {
                worst = (
                    game,
                    with_log,
                    format!("{variant} seed {seed}, {} actions", log.len()),
                );
            }
        }
    }
    eprintln!(
        "game mid-deal: {} bytes on average ({} with its log of {}-byte entries); largest {} \
         ({} with the log, {})",
        total.0 / 24,
        total.1 / 24,
        std::mem::size_of::<Entry>(),
        worst.0,
        worst.1,
        worst.2
    );
    assert!(
        worst.1 <= 8 * 1024,
        "a game mid-deal takes {} bytes with its log ({})",
        worst.1,
        worst.2
    );
}

/// The two state-hash schemes hash exactly what they say (the compact one is postcard, the one of
/// older stored games JSON), and they differ.
#[test]
fn state_hash_schemes_hash_their_encoding() {
    use sha2::{Digest, Sha256};
    use shuangkou::game::HashScheme;
    let hooks = PlainHooks::new(Rules::BAIBIAN);
    let (g, _) = Game::new(config(1), &hooks, [9; 32], None, 0).unwrap();
    let compact = postcard::to_allocvec(&g).expect("the state encodes");
    let json = serde_json::to_vec(&g).unwrap();
    assert!(
        compact.len() * 2 < json.len(),
        "{} vs {}",
        compact.len(),
        json.len()
    );
    assert_eq!(
        g.state_hash_with(HashScheme::Compact),
        hex::encode(Sha256::digest(&compact))
    );
    // The compact form is a faithful encoding (it round-trips), not just bytes to hash.
    let back: Game = postcard::from_bytes(&compact).expect("the compact form decodes");
    assert_eq!(back, g);
    // New games hash the chained form: before any deal is settled, the state without its
    // (empty) results and the all-zero digest.
    assert_eq!(g.state_hash_with(HashScheme::Chained), g.state_hash());
    let mut chained = compact.clone();
    chained.extend([0u8; 32]);
    assert_eq!(g.state_hash(), hex::encode(Sha256::digest(&chained)));
    assert_eq!(
        g.state_hash_with(HashScheme::Json),
        hex::encode(Sha256::digest(&json))
    );
}
