//! Turns, 托管, presence and the bounded backlog of a 升級 table, at the table level (pure: time
//! is passed in): a passed deadline is played by the rule bot with a legal action, a
//! disconnected seat is played at once, a reconnect window's expiry makes the seat leave and its
//! team lose, a reconnect closes the window, the table keeps the last N requests only and older
//! ones come from the store, the replay of auto and presence entries verifies (and a tampered one
//! does not), and the 托管 decision depends on the seat's view only.

use std::sync::Arc;

use shuangkou::seat::{Player, Seat};
use shuangkou::service::bots::decision_seed;
use shuangkou::service::log_pages::LogPages;
use shuangkou::service::record::{CreateBase, Minting};
use shuangkou::service::shengji::history::{self, History};
use shuangkou::service::shengji::record::{NewShengji, ShengjiRecord};
use shuangkou::service::shengji::table::{
    AutoReason, Command, LeaveReason, Prepared, PresenceStep, Table, TableEvent,
};
use shuangkou::service::status::Reason;
use shuangkou::shengji::bot::RuleBot;
use shuangkou::shengji::{Action, Phase, ShengjiHooks, Viewer};
use shuangkou::store::{GameRecord, LogEntry, Store};
use shuangkou::variants::{Registry, ShengjiVariant};

/// The creation time of every table here (Unix ms).
const T0: u64 = 1_000_000;
/// The script's defaults: `turn_seconds` 30, `reconnect_seconds` 90.
const TURN_MS: u64 = 30_000;
const WINDOW_MS: u64 = 90_000;

fn registry() -> Registry<ShengjiVariant> {
    Registry::<ShengjiVariant>::embedded_family().expect("the embedded 升級 script")
}

fn record(registry: &Registry<ShengjiVariant>, id: &str, deck: Option<Vec<u32>>) -> ShengjiRecord {
    let compiled = registry.active("shengji").expect("shengji is active");
    let req = NewShengji {
        base: CreateBase {
            seed: format!("{:064x}", 0x5eed_u64),
            ..CreateBase::default()
        },
        deck,
        ..Default::default()
    };
    ShengjiRecord::new(&compiled, &req, Minting::local(id, &[7; 32], T0))
        .expect("a record")
        .0
}

fn table(deck: Option<Vec<u32>>) -> (Registry<ShengjiVariant>, Table) {
    let registry = registry();
    let t = Table::create(&registry, record(&registry, "shengji:t", deck)).expect("a table");
    (registry, t)
}

/// Accepts a prepared request, keeping its log entry.
fn accept(t: &mut Table, log: &mut Vec<LogEntry>, p: Prepared) -> u64 {
    log.push(p.log.clone());
    t.accept(p)
}

/// Prepares and accepts presence step `step` of `player` at `at`.
fn presence(
    t: &mut Table,
    log: &mut Vec<LogEntry>,
    player: Player,
    step: PresenceStep,
    at: u64,
) -> u64 {
    let p = t.prepare_presence(player, step, at).unwrap();
    accept(t, log, p)
}

fn seat_of(p: Player) -> u8 {
    p.number()
}

/// The rule bot's own decision for `player` on its view (the oracle of the 托管 decision).
fn rule_bot_decision(t: &Table, player: Player) -> Option<Action> {
    let view = t.view(Viewer::Player(player));
    let seed = decision_seed(&t.record.base.seed_commitment(), view.seq, player);
    let bot = RuleBot {
        seed: u64::from_le_bytes(seed[..8].try_into().unwrap()),
        bury_points: t.hooks().bury_points_allowed(),
    };
    bot.decide(&view)
}

/// Plays 托管 at each deadline until `stop` says so; every decision is checked against the
/// rules (the core's legal cards, the dealer's hand) and against the rule bot's own decision.
fn auto_until(t: &mut Table, log: &mut Vec<LogEntry>, stop: impl Fn(&Table) -> bool) {
    while !stop(t) {
        let deadline = t.deadline().expect("a deadline while someone is to act");
        let (player, command) = t.auto_command().unwrap().expect("someone to act");
        assert_eq!(Some(player), t.player_to_act());
        let seat = seat_of(player);
        let cs = Seat::new(seat);
        let game = t.game();
        match command {
            Command::Play(card) => {
                assert_eq!(game.phase(), Phase::Playing);
                assert!(game.legal_cards(cs).contains(card), "{card} is not legal");
                assert_eq!(
                    rule_bot_decision(t, player),
                    Some(Action::Play { seat: cs, card })
                );
            }
            Command::Bury(cards) => {
                assert_eq!(game.phase(), Phase::Exchange);
                assert_eq!(game.dealer(), Some(cs));
                assert_eq!(cards.len(), 6);
                assert!(cards.is_subset(game.hand(cs)));
                assert_eq!(
                    rule_bot_decision(t, player),
                    Some(Action::Bury { seat: cs, cards })
                );
            }
            Command::Deal(n) => {
                assert_eq!(game.phase(), Phase::Dealing);
                assert_eq!(cs, game.first_seat(), "the seat that deals");
                // The rest of the 48 cards, then the closing step.
                let rest = 48 - u32::from(game.dealt());
                assert_eq!(n, rest.max(1));
            }
            Command::Declare(card) => {
                assert_eq!(game.phase(), Phase::Dealing);
                assert!(game.hand(cs).contains(card));
                assert_eq!(card.rank(), game.level().rank(), "a level card");
            }
        }
        // Not before the deadline (the seat is connected) …
        let early = t.prepare_auto(player, command, deadline - 1).err();
        assert_eq!(early.map(|e| e.reason), Some(Reason::BadRequest));
        // … and at it.
        let p = t
            .prepare_auto(player, command, deadline)
            .expect("托管 at the deadline");
        let seq = accept(t, log, p);
        let (_, events) = t.action_at(seq).unwrap();
        assert_eq!(
            events[0],
            TableEvent::Auto {
                seat,
                reason: AutoReason::Timeout
            }
        );
        if !t.finished() {
            assert_eq!(t.deadline(), Some(deadline + TURN_MS), "the clock restarts");
        }
    }
}

#[test]
fn a_passed_deadline_is_played_by_the_rule_bot_with_a_legal_action_for_a_whole_deal() {
    let (_, mut t) = table(None);
    let mut log = Vec::new();
    let first = t.game().first_seat();
    assert_eq!(t.player_to_act(), Some(Player::new(first.number())));
    assert_eq!(t.deadline(), Some(T0 + TURN_MS));
    assert!(!t.deadline_passed(T0 + TURN_MS - 1));
    assert!(t.deadline_passed(T0 + TURN_MS));
    assert!(!t.turn_is_away());
    auto_until(&mut t, &mut log, |t| {
        t.game().deal_number() > 1 || t.finished()
    });
    assert_eq!(t.game().results().len(), 1, "deal 1 was played out by 托管");
    // Every entry of it is an auto entry, and the log replays.
    let registry = registry();
    let body = t.record.encode().unwrap();
    let again = Table::restore(&registry, &body, &log).expect("the auto entries replay");
    assert_eq!(again.seq(), t.seq());
    assert_eq!(again.game(), t.game());
}

#[test]
fn without_turn_timers_there_is_no_deadline_and_no_timeout() {
    let (_, mut t) = table(None);
    t.set_turn_timers(false);
    assert_eq!(t.deadline(), None);
    assert!(!t.deadline_passed(u64::MAX));
    let (player, command) = t.auto_command().unwrap().unwrap();
    let late = t.prepare_auto(player, command, u64::MAX).err();
    assert_eq!(late.map(|e| e.reason), Some(Reason::BadRequest));
    // An entry a timed server logged at the deadline still replays on one without timers.
    let (_, timed) = table(None);
    let logged = timed.prepare_auto(player, command, T0 + TURN_MS).unwrap();
    t.apply_entry(&logged.log)
        .expect("the variant's turn_seconds rule the log");
    assert_eq!(t.seq(), 1);
}

#[test]
fn a_disconnected_seats_turn_is_played_at_once_and_presence_does_not_move_the_clock() {
    let (_, mut t) = table(None);
    let mut log = Vec::new();
    let player = t.player_to_act().unwrap();
    let other = Player::new((seat_of(player) + 1) % 4);
    let (p, command) = t.auto_command().unwrap().unwrap();
    assert_eq!(p, player);
    // 托管 for a seat that is not to act is refused, disconnected or not.
    presence(&mut t, &mut log, other, PresenceStep::Disconnect, T0 + 10);
    let wrong = t.prepare_auto(other, command, T0 + 11).err();
    assert_eq!(wrong.map(|e| e.reason), Some(Reason::NotYourTurn));
    presence(&mut t, &mut log, player, PresenceStep::Disconnect, T0 + 20);
    assert!(t.turn_is_away() && t.is_disconnected(player));
    assert_eq!(
        t.deadline(),
        Some(T0 + TURN_MS),
        "a presence step does not move the deadline"
    );
    let p = t.prepare_auto(player, command, T0 + 30).expect("at once");
    let seq = accept(&mut t, &mut log, p);
    let (_, events) = t.action_at(seq).unwrap();
    assert_eq!(
        events[0],
        TableEvent::Auto {
            seat: seat_of(player),
            reason: AutoReason::Disconnected
        }
    );
    assert!(events.iter().any(|e| matches!(
        e,
        TableEvent::Game(shuangkou::shengji::Event::CardDealt { .. })
    )));
    assert_eq!(t.deadline(), Some(T0 + 30 + TURN_MS));
}

#[test]
fn the_end_of_the_reconnect_window_makes_the_seat_leave_and_its_team_lose() {
    let (_, mut t) = table(None);
    let mut log = Vec::new();
    let p1 = Player::new(1);
    presence(&mut t, &mut log, p1, PresenceStep::Disconnect, T0 + 5);
    assert_eq!(t.open_windows(), vec![(p1, T0 + 5 + WINDOW_MS)]);
    let early = t
        .prepare_presence(p1, PresenceStep::Expire, T0 + 5 + WINDOW_MS - 1)
        .err();
    assert_eq!(early.map(|e| e.reason), Some(Reason::BadRequest));
    let e = t
        .prepare_presence(p1, PresenceStep::Expire, T0 + 5 + WINDOW_MS)
        .unwrap();
    assert!(e.finished());
    let seq = accept(&mut t, &mut log, e);
    assert!(t.finished());
    assert_eq!(t.left(), Some(1));
    assert_eq!(t.winner(), Some(0), "seat 1's team (1) loses");
    let (_, events) = t.action_at(seq).unwrap();
    assert_eq!(
        events,
        &[TableEvent::Left {
            seat: 1,
            winner: 0,
            reason: LeaveReason::Disconnected
        }]
    );
    assert!(t.open_windows().is_empty() && t.player_to_act().is_none());
    assert_eq!(t.deadline(), None);
    let after = t
        .prepare(0, Command::Deal(1), T0 + WINDOW_MS * 2, None)
        .err();
    assert_eq!(after.map(|e| e.reason), Some(Reason::GameOver));
}

#[test]
fn a_reconnect_closes_the_window() {
    let (_, mut t) = table(None);
    let mut log = Vec::new();
    let p2 = Player::new(2);
    let twice = |t: &Table, step, at| t.prepare_presence(p2, step, at).err().map(|e| e.reason);
    assert_eq!(
        twice(&t, PresenceStep::Reconnect, T0 + 1),
        Some(Reason::BadRequest)
    );
    presence(&mut t, &mut log, p2, PresenceStep::Disconnect, T0 + 2);
    assert_eq!(
        twice(&t, PresenceStep::Disconnect, T0 + 3),
        Some(Reason::BadRequest)
    );
    let seq = presence(&mut t, &mut log, p2, PresenceStep::Reconnect, T0 + 4);
    assert_eq!(
        t.action_at(seq).unwrap().1,
        &[TableEvent::Reconnected { seat: 2 }]
    );
    assert!(!t.is_disconnected(p2) && t.open_windows().is_empty());
    assert_eq!(
        twice(&t, PresenceStep::Expire, T0 + 2 + WINDOW_MS),
        Some(Reason::BadRequest),
        "no window to run out"
    );
    assert!(!t.finished());
}

#[test]
fn the_table_keeps_the_events_and_keys_of_the_last_n_requests_only() {
    let (_, mut t) = table(None);
    let mut log = Vec::new();
    t.keep_actions(3);
    let dealer = t.game().first_seat().number();
    for i in 1..=10u64 {
        let rid = format!("r{i}");
        let p = t
            .prepare(dealer, Command::Deal(1), T0 + i, Some(&rid))
            .unwrap();
        accept(&mut t, &mut log, p);
    }
    assert_eq!(t.first_kept(), 8, "seqs 8, 9 and 10 are kept");
    assert!(t.action_at(7).is_err());
    assert_eq!(t.action_at(8).unwrap().0, T0 + 8);
    let seqs: Vec<u64> = t.events_after(None).map(|(seq, _, _)| seq).collect();
    assert_eq!(seqs, vec![8, 9, 10]);
    assert_eq!(t.request_seq(dealer, "r10"), Some(10));
    assert_eq!(t.request_seq(dealer, "r2"), None, "out of the window");
    assert_eq!(
        t.request_seq((dealer + 1) % 4, "r10"),
        None,
        "another seat's key"
    );
    assert_eq!(t.remembered_seq(dealer, "r2"), Some(2));
}

/// A table stored request by request in a memory store, keeping 2 requests; `oracle` is the
/// same table keeping every request.
async fn stored_tables() -> (Store, Table, Table) {
    let registry = registry();
    let rec = record(&registry, "shengji:s", None);
    let store = Store::open("memory").await.unwrap();
    store
        .create(&GameRecord {
            id: rec.base.id.clone(),
            platform: None,
            request_id: None,
            body: rec.encode().unwrap(),
            script: None,
        })
        .await
        .unwrap();
    let mut t = Table::create(&registry, rec.clone()).unwrap();
    let mut oracle = Table::create(&registry, rec).unwrap();
    t.keep_actions(2);
    let dealer = t.game().first_seat().number();
    let mut log = Vec::new();
    for i in 1..=6u64 {
        let rid = format!("r{i}");
        let p = t
            .prepare(dealer, Command::Deal(5), T0 + i, Some(&rid))
            .unwrap();
        store.append(&t.record.base.id, &p.log).await.unwrap();
        accept(&mut t, &mut log, p);
        oracle.apply_entry(log.last().unwrap()).unwrap();
    }
    let d = t
        .prepare_presence(Player::new(3), PresenceStep::Disconnect, T0 + 7)
        .unwrap();
    store.append(&t.record.base.id, &d.log).await.unwrap();
    accept(&mut t, &mut log, d);
    oracle.apply_entry(log.last().unwrap()).unwrap();
    (store, t, oracle)
}

#[tokio::test]
async fn a_retry_beyond_the_backlog_is_answered_from_the_store_entry() {
    let (store, t, oracle) = stored_tables().await;
    let dealer = t.game().first_seat().number();
    assert_eq!(t.first_kept(), 6);
    assert_eq!(t.request_seq(dealer, "r2"), None);
    let (seq, at, events) = history::retried(&store, &t, dealer, "r2", false)
        .await
        .unwrap()
        .expect("the remembered key's entry");
    assert_eq!((seq, at), (2, T0 + 2));
    assert_eq!(
        events,
        oracle.action_at(2).unwrap().1,
        "the original events"
    );
    assert_eq!(events.len(), 5, "five cards dealt");
    // Another seat's key of the same name is not a retry; neither is an unknown key.
    let other = history::retried(&store, &t, (dealer + 1) % 4, "r2", true).await;
    assert!(other.unwrap().is_none());
    assert!(
        history::retried(&store, &t, dealer, "nope", true)
            .await
            .unwrap()
            .is_none()
    );
    // The whole log before the backlog is searched when asked to.
    let found = history::find_request(&store, &t.record.base.id, dealer, "r3", (0, 6)).await;
    assert_eq!(found.unwrap(), Some(3));
}

#[tokio::test]
async fn a_watch_from_before_the_backlog_replays_the_store_to_the_same_events() {
    let (store, t, oracle) = stored_tables().await;
    let mut h = History::new(&t).unwrap();
    let mut seen = Vec::new();
    loop {
        let page = h.next_page(&store).await.unwrap();
        if page.is_empty() {
            break;
        }
        for (seq, at, events) in page {
            seen.extend(events.into_iter().map(|e| (seq, at, e)));
        }
    }
    let expected: Vec<_> = oracle
        .events_after(None)
        .map(|(seq, at, e)| (seq, at, e.clone()))
        .collect();
    assert_eq!(seen, expected);
    assert!(matches!(
        seen.last(),
        Some((7, _, TableEvent::Disconnected { seat: 3, .. }))
    ));
}

/// Applies a stored log to a new table from `t`'s record.
fn replay(t: &Table, log: &[LogEntry]) -> Result<Table, Reason> {
    Table::restore(&registry(), &t.record.encode().unwrap(), log).map_err(|e| e.reason)
}

fn tampered(log: &[LogEntry], seq: u64, edit: impl Fn(&mut serde_json::Value)) -> Vec<LogEntry> {
    let mut log = log.to_vec();
    let e = &mut log[seq as usize - 1];
    let mut v: serde_json::Value = serde_json::from_slice(&e.body).unwrap();
    edit(&mut v);
    e.body = serde_json::to_vec(&v).unwrap();
    log
}

#[test]
fn the_replay_of_auto_and_presence_entries_verifies_and_a_tampered_one_does_not() {
    let (_, mut t) = table(None);
    let mut log = Vec::new();
    let dealer = Player::new(t.game().first_seat().number());
    // seq 1: 托管 at the deadline; 2: disconnect; 3: 托管 at once; 4: reconnect; 5: disconnect;
    // 6: the window runs out.
    let (_, c) = t.auto_command().unwrap().unwrap();
    let p = t.prepare_auto(dealer, c, T0 + TURN_MS).unwrap();
    accept(&mut t, &mut log, p);
    let at = T0 + TURN_MS + 100;
    presence(&mut t, &mut log, dealer, PresenceStep::Disconnect, at);
    let (_, c) = t.auto_command().unwrap().unwrap();
    let p = t.prepare_auto(dealer, c, at + 1).unwrap();
    accept(&mut t, &mut log, p);
    presence(&mut t, &mut log, dealer, PresenceStep::Reconnect, at + 2);
    presence(&mut t, &mut log, dealer, PresenceStep::Disconnect, at + 3);
    presence(
        &mut t,
        &mut log,
        dealer,
        PresenceStep::Expire,
        at + 3 + WINDOW_MS,
    );
    let kinds: Vec<String> = log
        .iter()
        .map(|e| {
            let v: serde_json::Value = serde_json::from_slice(&e.body).unwrap();
            v["step"]["kind"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "auto",
            "disconnect",
            "auto",
            "reconnect",
            "disconnect",
            "expire"
        ]
    );
    let again = replay(&t, &log).expect("the log replays");
    assert_eq!(again.game(), t.game());
    assert_eq!((again.left(), again.winner()), (t.left(), t.winner()));
    // A timeout logged before the deadline, an expiry inside the window, a reconnect of a
    // connected seat, a changed hash: each is refused on replay.
    let early = tampered(&log, 1, |v| v["at"] = (T0 + TURN_MS - 1).into());
    assert_eq!(replay(&t, &early).err(), Some(Reason::BadRequest));
    let inside = tampered(&log, 6, |v| v["at"] = (at + 3 + WINDOW_MS - 1).into());
    assert_eq!(replay(&t, &inside).err(), Some(Reason::BadRequest));
    let no_window = tampered(&log, 2, |v| v["step"]["kind"] = "reconnect".into());
    assert_eq!(replay(&t, &no_window).err(), Some(Reason::BadRequest));
    let hash = tampered(&log, 3, |v| v["step"]["hashes"][0] = "00".into());
    assert_eq!(replay(&t, &hash).err(), Some(Reason::StoreFailed));
}

/// The deck `ids` (first seat's cards at positions 0, 4, 8…) with the cards at positions `a` and
/// `b` swapped.
fn swapped(ids: &[u32], a: usize, b: usize) -> Vec<u32> {
    let mut d = ids.to_vec();
    d.swap(a, b);
    d
}

#[test]
fn the_auto_decision_depends_on_the_seats_view_only() {
    // Two tables whose decks differ only in two cards of the two seats after the next one: the
    // seat that deals (X) and the seat after it (X+1) hold the same cards in both.
    let ids: Vec<u32> = (0..54).rev().collect();
    let (_, mut a) = table(Some(ids.clone()));
    let (_, mut b) = table(Some(swapped(&ids, 2, 3)));
    let x = a.game().first_seat().number();
    let (mut la, mut lb) = (Vec::new(), Vec::new());
    let mut compared = 0;
    loop {
        let to_act = a.player_to_act().unwrap();
        let rel = (seat_of(to_act) + 4 - x) % 4;
        if a.game().phase() == Phase::Playing && rel >= 2 {
            break;
        }
        assert_eq!(
            a.view(Viewer::Player(to_act)),
            b.view(Viewer::Player(to_act)),
            "the same view"
        );
        let ca = a.auto_command().unwrap();
        assert_eq!(ca, b.auto_command().unwrap(), "the same decision");
        compared += 1;
        let (player, command) = ca.unwrap();
        let at = a.deadline().unwrap();
        let p = a.prepare_auto(player, command, at).unwrap();
        accept(&mut a, &mut la, p);
        let p = b.prepare_auto(player, command, at).unwrap();
        accept(&mut b, &mut lb, p);
    }
    assert!(compared >= 4, "the deal, its close, the bury and two plays");
    let y = Seat::new((x + 2) % 4);
    assert_ne!(
        a.game().hand(y),
        b.game().hand(y),
        "the hidden cards differ"
    );
}

#[tokio::test]
async fn a_watcher_far_behind_the_backlog_gets_every_event_in_order_across_pages() {
    use shuangkou::service::games::GamesConfig;
    use shuangkou::service::shengji::family::Tables;
    let registry = Arc::new(registry());
    let rec = record(&registry, "shengji:w", None);
    let store = Store::open("memory").await.unwrap();
    let config = GamesConfig {
        no_turn_timers: true,
        finished_linger_seconds: 60,
        backlog_actions: 8,
        max_games: 10,
        disconnected_turns_immediate: false,
        auto_bot: shuangkou::bot::styles::spec("heuristic").unwrap(),
    };
    let tables = Tables::new(config, Arc::clone(&registry), store);
    tables.create(rec.clone(), None).await.unwrap();
    let shared = tables.load(&rec.base.id).await.unwrap();
    let mut oracle = Table::create(&registry, rec).unwrap();
    oracle.keep_actions(10_000);
    {
        let mut live = shared.lock().await;
        live.keep_actions(8);
        // 48 single deal steps, the close, the bury, and plays: more than two pages.
        let mut now = T0;
        while live.seq() < 150 && !live.finished() {
            now += 1;
            let (player, command) = live.auto_command().unwrap().unwrap();
            let command = match command {
                Command::Deal(_) => Command::Deal(1),
                c => c,
            };
            let seat = player.number();
            tables
                .commit(&mut live, |t| t.prepare(seat, command, now, None))
                .await
                .unwrap();
        }
        let log = tables
            .store()
            .entries_after(&live.record.base.id, 0)
            .await
            .unwrap();
        for e in &log {
            oracle.apply_entry(e).unwrap();
        }
        assert_eq!(live.first_kept(), live.seq() - 7);
    }
    let mut replay = None;
    let mut next = None;
    let mut seen = Vec::new();
    for _ in 0..100 {
        let batch = history::watch_batch(&tables, &shared, &mut replay, next)
            .await
            .unwrap();
        if batch.is_empty() {
            break;
        }
        next = batch.last().map(|(seq, _, _)| *seq);
        seen.extend(batch);
    }
    let expected: Vec<_> = oracle
        .events_after(None)
        .map(|(seq, at, e)| (seq, at, e.clone()))
        .collect();
    assert_eq!(seen.len(), expected.len());
    assert_eq!(seen, expected);
}

/// The shared schedule asks a family for presence entries through `LiveGame::presence_entry`,
/// which logs a step only where it applies (a disconnect of a connected player, a reconnect of a
/// disconnected one, the expiry of an open window at its end): otherwise nothing is prepared,
/// not even a refused entry.
#[test]
fn presence_entries_are_prepared_only_where_the_step_applies() {
    use shuangkou::service::games::LiveGame;
    let (_, mut t) = table(None);
    let mut log = Vec::new();
    let p2 = Player::new(2);
    let entry = |t: &Table, step, at| LiveGame::presence_entry(t, p2, step, at);
    assert!(
        entry(&t, PresenceStep::Reconnect, T0 + 1).is_none(),
        "already connected"
    );
    assert!(
        entry(&t, PresenceStep::Expire, T0 + WINDOW_MS * 2).is_none(),
        "no window open"
    );
    let away = entry(&t, PresenceStep::Disconnect, T0 + 3).expect("a disconnect applies");
    accept(&mut t, &mut log, away.expect("a disconnect entry"));
    assert!(
        entry(&t, PresenceStep::Disconnect, T0 + 4).is_none(),
        "already away"
    );
    let end = T0 + 3 + WINDOW_MS;
    assert!(
        entry(&t, PresenceStep::Expire, end - 1).is_none(),
        "the window is still open"
    );
    let expired = entry(&t, PresenceStep::Expire, end).expect("the window has ended");
    assert!(expired.expect("an expiry entry").finished());
}
