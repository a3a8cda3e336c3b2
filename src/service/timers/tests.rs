//! The schedule's task: it wakes for an entry due before its longest sleep, and plays turns due
//! together earliest deadline first.

use std::time::Duration;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::game::Action;
use crate::service::games::GamesConfig;
use crate::service::record::{CreateBase, Minting, NewGame, Record};
use crate::store::{Created, Store};
use crate::variants::Registry;

/// A longest sleep no test waits for: a turn played in time was woken for.
const NEVER: Duration = Duration::from_secs(3600);

/// The games with turn timers on, on the memory store, and the turns handed to the workers, in
/// the order they started.
struct TestHost {
    games: Games,
    started: Mutex<Vec<Arc<str>>>,
}

impl Host for TestHost {
    fn games(&self) -> &Games {
        &self.games
    }

    fn draining(&self) -> bool {
        false
    }

    async fn run_other_due(&self, _now: u64) {}

    async fn play(&self, turn: DueTurn) {
        if let DueTurn::Deadline(id) | DueTurn::Bot(id, _) = &turn
            && let Ok(mut started) = self.started.lock()
        {
            started.push(Arc::clone(id));
        }
        bots::play_due(&self.games, turn).await;
    }
}

async fn host() -> Arc<TestHost> {
    let registry = Arc::new(Registry::embedded().expect("the embedded variants"));
    let config = GamesConfig {
        no_turn_timers: false,
        finished_linger_seconds: 120,
        backlog_actions: crate::service::backlog::DEFAULT_ACTIONS,
        max_games: 1000,
        disconnected_turns_immediate: false,
        auto_bot: crate::bot::styles::spec("heuristic").expect("the heuristic bot"),
    };
    let store = Store::open("memory").await.expect("the memory store");
    Arc::new(TestHost {
        games: Games::new(config, registry, store),
        started: Mutex::new(Vec::new()),
    })
}

/// Creates classic game `id` as if created at `created_at` (Unix ms): its first deadline is the
/// variant's turn time (30 s) after that. Returns the deadline.
async fn create(host: &TestHost, id: &str, created_at: u64) -> u64 {
    let registry = host.games.registry();
    let compiled = registry.active("classic").expect("classic");
    let new = NewGame {
        base: CreateBase::of("classic"),
        ..NewGame::default()
    };
    let record = Record::new(&compiled, &new, Minting::local(id, &[7; 32], created_at))
        .expect("a record")
        .0;
    assert_eq!(
        host.games.create(record, None).await.expect("created"),
        Created::New
    );
    let game = host.games.cached(id).expect("cached");
    let live = game.lock().await;
    live.game().deadline().expect("a turn deadline")
}

/// The first logged action of game `id` once there is one (within `limit`): its seq-1 entry's
/// action and time, read from the store.
async fn first_action(host: &TestHost, id: &str, limit: Duration) -> (Action, u64) {
    let until = tokio::time::Instant::now() + limit;
    loop {
        let entries = host
            .games
            .store()
            .entries_after(id, 0)
            .await
            .expect("the log");
        if let Some(first) = entries.first() {
            let stored: crate::service::stored::Stored =
                serde_json::from_slice(&first.body).expect("a stored entry");
            return (stored.entry.action, stored.entry.at);
        }
        assert!(
            tokio::time::Instant::now() < until,
            "no action in game {id} within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

/// The task sleeps until the next entry is due, not until its longest sleep: a game created
/// while it sleeps on an empty schedule (an entry earlier than every other wakes it) has its
/// turn played by 托管 at its deadline, not an hour later, and not before it.
#[test]
fn a_deadline_before_the_longest_sleep_is_played_when_due() {
    runtime().block_on(async {
        let host = host().await;
        let task = start(
            Arc::clone(&host),
            Settings {
                workers: 2,
                max_sleep: NEVER,
            },
        );
        // Let the task go to sleep on the empty schedule.
        tokio::time::sleep(Duration::from_millis(100)).await;
        // Created 29 s ago: due in about a second.
        let deadline = create(&host, "soon", now_ms() - 29_000).await;
        let (action, at) = first_action(&host, "soon", Duration::from_secs(60)).await;
        assert!(
            matches!(action, Action::Auto { .. } | Action::Timeout),
            "托管 played the turn: {action:?}"
        );
        assert!(
            at >= deadline,
            "played at {at}, before its deadline {deadline}"
        );
        task.abort();
    });
}

/// Turns due together start in deadline order, whatever the order their games were scheduled
/// in: 24 games whose deadlines passed 7 ms apart, created in a shuffled order (seed 21), are
/// handed to one worker earliest deadline first, and each gets its automatic play.
#[test]
fn turns_due_together_are_played_earliest_deadline_first() {
    runtime().block_on(async {
        let host = host().await;
        let base = now_ms() - 60_000;
        let mut order: Vec<usize> = (0..24).collect();
        order.shuffle(&mut ChaCha8Rng::seed_from_u64(21));
        let mut by_deadline = Vec::new();
        for &i in &order {
            let id = format!("g{i:02}");
            let deadline = create(&host, &id, base + 7 * i as u64).await;
            by_deadline.push((deadline, id));
        }
        by_deadline.sort();
        let task = start(
            Arc::clone(&host),
            Settings {
                workers: 1,
                max_sleep: NEVER,
            },
        );
        for (_, id) in &by_deadline {
            let (action, _) = first_action(&host, id, Duration::from_secs(60)).await;
            assert!(
                matches!(action, Action::Auto { .. } | Action::Timeout),
                "{id}: {action:?}"
            );
        }
        task.abort();
        let started: Vec<String> = host
            .started
            .lock()
            .expect("the started turns")
            .iter()
            .map(|id| id.to_string())
            .collect();
        let expected: Vec<String> = by_deadline.into_iter().map(|(_, id)| id).collect();
        assert_eq!(
            started, expected,
            "turns started in deadline order (created in the order {order:?}, seed 21)"
        );
    });
}

/// The sleep lasts until the next entry, at most the longest sleep, and none when it is due.
#[test]
fn the_sleep_lasts_until_the_next_entry() {
    let max = Duration::from_millis(250);
    assert_eq!(
        until_due(Some(1_030), 1_000, max),
        Duration::from_millis(30)
    );
    assert_eq!(until_due(Some(900), 1_000, max), Duration::ZERO);
    assert_eq!(until_due(Some(9_000), 1_000, max), max);
    assert_eq!(until_due(None, 1_000, max), max);
}
