//! The cache's counts and its shared rebuilds.

use std::sync::Mutex as StdMutex;

use metrics::{Counter, Gauge, GaugeFn, Histogram, Key, KeyName, Metadata, SharedString, Unit};

use super::*;
use crate::service::clock::now_ms;
use crate::service::record::{CreateBase, Minting, NewGame, Record};
use crate::store::Created;
use crate::variants::Registry;

/// The `games_active` gauge's value, as the service moved it (a recorder of that one gauge).
#[derive(Default)]
struct ActiveGauge(Arc<StdMutex<f64>>);

struct Cell(Arc<StdMutex<f64>>);

impl GaugeFn for Cell {
    fn increment(&self, v: f64) {
        *self.0.lock().unwrap() += v;
    }
    fn decrement(&self, v: f64) {
        *self.0.lock().unwrap() -= v;
    }
    fn set(&self, v: f64) {
        *self.0.lock().unwrap() = v;
    }
}

impl metrics::Recorder for ActiveGauge {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn register_counter(&self, _: &Key, _: &Metadata<'_>) -> Counter {
        Counter::noop()
    }
    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        if key.name() == crate::metrics::GAMES_ACTIVE {
            Gauge::from_arc(Arc::new(Cell(Arc::clone(&self.0))))
        } else {
            Gauge::noop()
        }
    }
    fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::noop()
    }
}

fn games(registry: &Arc<Registry>, store: Store) -> Games {
    let config = GamesConfig::for_tests(1, 120);
    Games::new(config, Arc::clone(registry), store)
}

/// The record of a new classic game `g1`.
fn classic_game(registry: &Registry) -> Record {
    let compiled = registry.active("classic").unwrap();
    let new = NewGame {
        base: CreateBase::of("classic"),
        ..NewGame::default()
    };
    Record::new(&compiled, &new, Minting::local("g1", &[7; 32], now_ms()))
        .unwrap()
        .0
}

/// A game created before a restart is counted after it (recovered), and finishing it brings
/// the count and the gauge back to zero, never below.
#[test]
fn the_count_and_gauge_of_games_in_progress_survive_a_restart() {
    let recorder = ActiveGauge::default();
    let gauge = Arc::clone(&recorder.0);
    let dir = std::env::temp_dir().join(format!(
        "shuangkou-games-test-{}-{}",
        std::process::id(),
        now_ms()
    ));
    let registry = Arc::new(Registry::embedded().unwrap());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let spec = dir.display().to_string();
    metrics::with_local_recorder(&recorder, || {
        rt.block_on(async {
            let record = classic_game(&registry);
            let first = games(&registry, Store::open(&spec).await.unwrap());
            assert_eq!(first.create(record, None).await.unwrap(), Created::New);
            assert!(first.full());
            first.store().flush().await.unwrap();
            drop(first);
            // The restart: a new process's gauge starts at zero.
            *gauge.lock().unwrap() = 0.0;
            let second = games(&registry, Store::open(&spec).await.unwrap());
            second.recover().await.unwrap();
            assert!(second.full(), "the recovered game counts");
            assert_eq!(*gauge.lock().unwrap(), 1.0);
            let game = second.load("g1").await.unwrap();
            let mut live = second.current(&game).await.unwrap();
            second
                .commit(&mut live, |l| {
                    l.prepare_leave(crate::seat::Player::new(0), now_ms(), None)
                })
                .await
                .unwrap();
            assert!(live.finished(), "a leave (escape) ends a one-deal match");
            assert!(!second.full());
            assert_eq!(*gauge.lock().unwrap(), 0.0);
            // Finished again elsewhere (a stale copy catching up) does not count twice.
            second.in_progress.count_out("classic");
            assert_eq!(*gauge.lock().unwrap(), 0.0);
        })
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// Readers of a game that is not in the cache share one rebuild: four concurrent loads
/// replay the game once and get the same live game.
#[test]
fn concurrent_readers_of_an_evicted_game_share_one_rebuild() {
    let registry = Arc::new(Registry::embedded().unwrap());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let record = classic_game(&registry);
        let games = Arc::new(games(&registry, Store::open("memory").await.unwrap()));
        games.create(record, None).await.unwrap();
        games.cache.remove("g1");
        let readers: Vec<_> = (0..4)
            .map(|_| {
                let games = Arc::clone(&games);
                tokio::spawn(async move { games.load("g1").await.unwrap() })
            })
            .collect();
        let mut loaded = Vec::new();
        for r in readers {
            loaded.push(
                tokio::time::timeout(std::time::Duration::from_secs(60), r)
                    .await
                    .expect("a load within 60 s")
                    .unwrap(),
            );
        }
        assert_eq!(games.rebuilds(), 1, "one rebuild for four readers");
        assert!(loaded.iter().all(|g| Arc::ptr_eq(g, &loaded[0])));
        assert!(games.loading.lock().unwrap().is_empty());
    });
}
