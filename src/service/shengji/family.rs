//! 升級's game family: a [`Table`] as the shared owner of live games (`service::games`) holds it,
//! and what the schedule hands back for 升級 games: bot seats' turns (the rule bot, decided from
//! the seat's view) and turn deadlines (托管, [`LiveGame::auto_entry`]).
//!
//! The record's script text stays in its body (the store's script table serves Shuangkou's). The
//! turn timer, reconnect window, presence and 托管 methods are the table's own (`turns`,
//! `presence`): the shared schedule and presence call them as they do Shuangkou's.

use super::record::{GAME, ShengjiRecord};
use super::table::{Prepared, Table};
use crate::seat::Player;
use crate::service::clock::now_ms;
use crate::service::games::family::inherent_live_game_methods;
use crate::service::games::{DueTurn, Games, LiveGame, Shared};
use crate::service::record::{Record, VerifiedTokens};
use crate::service::status::ApiError;
use crate::store::{GameRecord, LogEntry};
use crate::variants::{Registry, ShengjiVariant};

/// The live 升級 games.
pub type Tables = Games<Table>;

/// A table shared between the rpcs acting on it; one lock per game.
pub type SharedTable = Shared<Table>;

/// Most bot actions one call of [`run_bots`] commits (a deal's worth).
const MAX_BOT_ACTIONS: usize = 64;

impl LiveGame for Table {
    type Registry = Registry<ShengjiVariant>;
    type Record = ShengjiRecord;
    type Prepared = Prepared;
    type Submitted = u64;

    const METRIC_LABEL: Option<&'static str> = Some(GAME);
    const LOG_NAME: &'static str = "升級 ";

    fn create(
        registry: &Registry<ShengjiVariant>,
        record: ShengjiRecord,
        no_timers: bool,
    ) -> Result<Table, ApiError> {
        let mut table = Table::create(registry, record)?;
        table.set_turn_timers(!no_timers);
        Ok(table)
    }

    fn stored_record(
        record: ShengjiRecord,
        request_id: Option<String>,
    ) -> Result<GameRecord, ApiError> {
        Ok(GameRecord {
            id: record.base.id.clone(),
            platform: record.base.platform.clone(),
            request_id,
            body: record.encode()?,
            // The script text stays in the record's body (the script table serves Shuangkou's).
            script: None,
        })
    }

    fn restore(
        registry: &Registry<ShengjiVariant>,
        record: &GameRecord,
        log: &[LogEntry],
        no_timers: bool,
    ) -> Result<Table, ApiError> {
        let mut table = Table::restore(registry, &record.body, log)?;
        table.set_turn_timers(!no_timers);
        Ok(table)
    }

    fn record(&self) -> &Record {
        &self.record.base
    }

    fn tokens(&mut self) -> (&Record, &mut VerifiedTokens) {
        Table::tokens(self)
    }

    inherent_live_game_methods!(presence: |step| step => prepare_presence);

    fn request_of(prepared: &Prepared) -> Option<(Player, &str)> {
        prepared
            .request()
            .map(|(seat, rid)| (Player::new(seat), rid))
    }

    fn has_request(&self, player: Player, request_id: &str) -> bool {
        self.request_seq(player.number(), request_id).is_some()
    }

    fn bot_to_act(&self) -> Option<Player> {
        let (seat, _) = self.bot_action().ok().flatten()?;
        Some(Player::new(seat))
    }

    fn keep_actions(&mut self, actions: usize) {
        Table::keep_actions(self, actions)
    }

    fn human_players(&self) -> Vec<Player> {
        (0..4u8)
            .filter(|s| !self.record.bot_seats.contains(s))
            .map(Player::new)
            .collect()
    }

    fn deadline(&self) -> Option<u64> {
        Table::deadline(self)
    }

    fn is_disconnected(&self, player: Player) -> bool {
        Table::is_disconnected(self, player)
    }

    fn auto_entry(&self, now: u64) -> Option<Result<Prepared, ApiError>> {
        self.auto_command()
            .transpose()
            .map(|r| r.and_then(|(player, command)| self.prepare_auto(player, command, now)))
    }
}

/// The next bot seat's action, prepared, if a bot seat may act now.
fn bot_entry(table: &Table, now: u64) -> Option<Result<Prepared, ApiError>> {
    match table.bot_action() {
        Ok(Some((seat, command))) => Some(table.prepare(seat, command, now, None)),
        Ok(None) => None,
        Err(e) => Some(Err(e)),
    }
}

/// Lets the bot seats act, each action committed on its own, until a player must act (at most a
/// deal's worth of actions per call); for the caller that holds the table (SubmitAction replies
/// with the state after the bots).
pub async fn run_bots(tables: &Tables, live: &mut Table) -> Result<(), ApiError> {
    for _ in 0..MAX_BOT_ACTIONS {
        let now = now_ms();
        if !tables.commit_next(live, |t| bot_entry(t, now)).await? {
            break;
        }
    }
    Ok(())
}

/// Plays a turn the schedule found due for a 升級 game; failures are logged (the game is
/// unchanged), a bot turn not acknowledged by the store is tried again shortly.
pub async fn play_due(tables: &Tables, turn: DueTurn) {
    let now = now_ms();
    let (id, result) = match turn {
        DueTurn::Deadline(id) => {
            let away = tables.away_turns_immediate();
            let due = |t: &Table| {
                let due = t.deadline_passed(now) || (t.turn_is_away() && away);
                if due { t.auto_entry(now) } else { None }
            };
            let r = commit_due(tables, &id, due).await;
            (id, r)
        }
        DueTurn::Bot(id, seq) => {
            let r = commit_due(tables, &id, |t| {
                if t.seq() == seq {
                    bot_entry(t, now)
                } else {
                    None
                }
            })
            .await;
            tables.retry_unacknowledged(&id, seq, &r);
            (id, r)
        }
    };
    match result {
        Err(e) if tables.expected_race(&id, &e) => {
            tracing::debug!(game = %id, error = %e, "automatic 升級 action not needed: lost an expected race")
        }
        Err(e) => tracing::warn!(game = %id, error = %e, "automatic 升級 action failed"),
        Ok(()) => {}
    }
}

async fn commit_due(
    tables: &Tables,
    id: &str,
    next: impl Fn(&Table) -> Option<Result<Prepared, ApiError>>,
) -> Result<(), ApiError> {
    let Some(table) = tables.cached(id) else {
        return Ok(());
    };
    tables.commit_due(&table, next).await.map(drop)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::cards::CardSet;
    use crate::seat::Seat;
    use crate::service::games::GamesConfig;
    use crate::service::record::{CreateBase, Minting};
    use crate::service::shengji::record::NewShengji;
    use crate::service::shengji::table::Command;
    use crate::shengji::Phase;
    use crate::store::Store;

    fn tables(store: Store) -> Tables {
        let registry = Registry::<ShengjiVariant>::embedded_family().unwrap();
        let config = GamesConfig::for_tests(4, 0);
        Games::new(config, Arc::new(registry), store)
    }

    /// Seat 0's next request in a hand-played match: deal, bury its first six cards, play its
    /// first legal card.
    fn seat0_command(t: &Table) -> Command {
        let g = t.game();
        match g.phase() {
            Phase::Dealing => Command::Deal(54),
            Phase::Exchange => {
                Command::Bury(g.hand(Seat::new(0)).iter().take(6).collect::<CardSet>())
            }
            _ => Command::Play(g.legal_cards(Seat::new(0)).iter().next().unwrap()),
        }
    }

    /// A 升級 table with three bot seats, served by the shared owner of live games: the bot
    /// seats act only through the schedule (`run_due` → `play_due`, no inline loop), seat 0 acts
    /// whenever the schedule is quiet, and the match ends; the finished game then leaves the
    /// cache at its eviction (the store still has it), counted out of the games in progress.
    #[test]
    fn the_schedule_plays_a_shengji_tables_bot_seats_and_evicts_it() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let tables = tables(Store::open("memory").await.unwrap());
            let compiled = tables.registry().active("shengji").unwrap();
            let new = NewShengji {
                base: CreateBase {
                    seed: "11".repeat(32),
                    ..CreateBase::of("shengji")
                },
                bot_seats: vec![1, 2, 3],
                ..NewShengji::default()
            };
            let (record, _) =
                ShengjiRecord::new(&compiled, &new, Minting::local("s1", &[7; 32], now_ms()))
                    .unwrap();
            tables.create(record, None).await.unwrap();
            assert!(!tables.full());
            let table = tables.cached("s1").unwrap();
            let mut seat0_requests = 0u64;
            for _ in 0..20_000 {
                for turn in tables.run_due(u64::MAX).await {
                    play_due(&tables, turn).await;
                }
                let mut live = tables.current(&table).await.unwrap();
                if live.finished() {
                    break;
                }
                if live.bot_to_act().is_some() {
                    continue;
                }
                let g = live.game();
                let waits_for_0 = g.phase() == Phase::Dealing || g.turn() == Some(Seat::new(0));
                assert!(waits_for_0, "the bot seats have acted: seat 0 is to act");
                let command = seat0_command(&live);
                let now = now_ms();
                tables
                    .commit(&mut live, |t| t.prepare(0, command, now, None))
                    .await
                    .unwrap();
                seat0_requests += 1;
            }
            let live = table.lock().await;
            assert!(live.finished(), "the match ends");
            assert!(
                live.seq() > seat0_requests,
                "the bot seats acted through the schedule"
            );
            drop(live);
            let decode = crate::service::shengji::entry::decode;
            let log = crate::service::log_pages::decoded_log(tables.store(), "s1", decode)
                .await
                .unwrap();
            assert!(
                log.iter().any(|e| e.player == 2),
                "a bot seat's entries are logged"
            );
            assert!(tables.run_due(u64::MAX).await.is_empty());
            assert!(tables.cached("s1").is_none(), "evicted once finished");
            assert!(tables.load("s1").await.unwrap().lock().await.finished());
        });
    }

    /// Issue 41: with turn timers on (30 s a turn) and the schedule run at the real clock, so
    /// no deadline can pass, a table with three bot seats reaches its first trick whoever the
    /// seed makes the dealing seat: a bot that is to deal deals at once (the rest, then the
    /// close), bots declare and bury at once; seat 0 (a person) deals, closes or buries only
    /// when the game waits for it. Bounded: at most 200 rounds of the schedule per seed.
    #[test]
    fn three_bot_seats_deal_declare_and_bury_without_waiting_for_a_deadline() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let registry = Registry::<ShengjiVariant>::embedded_family().unwrap();
            let config = GamesConfig {
                no_turn_timers: false,
                ..GamesConfig::for_tests(16, 0)
            };
            let tables: Tables = Games::new(
                config,
                Arc::new(registry),
                Store::open("memory").await.unwrap(),
            );
            let compiled = tables.registry().active("shengji").unwrap();
            let mut bot_dealt = 0;
            for n in 1..=8u8 {
                let id = format!("d{n}");
                let new = NewShengji {
                    base: CreateBase {
                        seed: format!("{n:02x}").repeat(32),
                        ..CreateBase::of("shengji")
                    },
                    bot_seats: vec![1, 2, 3],
                    ..NewShengji::default()
                };
                let (record, _) =
                    ShengjiRecord::new(&compiled, &new, Minting::local(&id, &[7; 32], now_ms()))
                        .unwrap();
                tables.create(record, None).await.unwrap();
                let table = tables.cached(&id).unwrap();
                let first_seat = tables.current(&table).await.unwrap().game().first_seat();
                let started = now_ms();
                let mut reached = false;
                for _ in 0..200 {
                    for turn in tables.run_due(now_ms()).await {
                        assert!(
                            matches!(turn, DueTurn::Bot(..)),
                            "seed {n}: only bot turns come due (no deadline): {turn:?}"
                        );
                        play_due(&tables, turn).await;
                    }
                    let mut live = tables.current(&table).await.unwrap();
                    let g = live.game();
                    if g.phase() == Phase::Playing {
                        reached = true;
                        break;
                    }
                    if live.bot_to_act().is_some() {
                        continue;
                    }
                    // The game waits for seat 0: it deals (when it is the dealing seat, or to
                    // close while it could declare) or buries as the dealer.
                    let waits_for_0 = match g.phase() {
                        Phase::Dealing => {
                            g.first_seat() == Seat::new(0)
                                || (g.stock().len() == 6 && g.declaration().is_none())
                        }
                        _ => g.turn() == Some(Seat::new(0)),
                    };
                    assert!(
                        waits_for_0,
                        "seed {n}: the bots stalled in {:?} (dealing seat {:?}, stock {}, {:?})",
                        g.phase(),
                        g.first_seat(),
                        g.stock().len(),
                        live.bot_action()
                    );
                    let command = seat0_command(&live);
                    let now = now_ms();
                    tables
                        .commit(&mut live, |t| t.prepare(0, command, now, None))
                        .await
                        .unwrap();
                }
                assert!(reached, "seed {n}: the first trick is reached");
                let deadline = tables.current(&table).await.unwrap().deadline().unwrap();
                assert!(
                    deadline > started,
                    "seed {n}: reached before any deadline passed"
                );
                if first_seat != Seat::new(0) {
                    bot_dealt += 1;
                }
            }
            assert!(bot_dealt > 0, "some seed makes a bot the dealing seat");
        });
    }
}
