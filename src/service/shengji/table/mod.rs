//! One 升級 game as the service holds it (a table): the core's match, its pinned variant script,
//! the events and idempotency keys of its last few requests (`service::backlog`: older ones are
//! re-derived from the store by `shengji::history`), presence, its turn clock and a notifier.
//!
//! Built from a creation record plus the stored log by replay, verifying the state hash recorded
//! after every core action, so a game rebuilt after a restart is exactly the one acknowledged. A
//! request is prepared on a copy of the match ([`Prepared`]) and made current only once the store
//! has it (`games` runs that protocol). One request is one log entry and one seq, even when it
//! is several core actions (dealing 12 cards).
//!
//! Turns and presence mirror Shuangkou's `Session`: the seat to act, its deadline (the variant's
//! `turn_seconds` from the last core action), the reconnect windows, the 托管 decision and its
//! `auto` entry, and presence entries (`turns`, `presence`). All pure: `now` is passed in.
//!
//! Domain values only: no protobuf type, no store access, no cache.

mod timing;

use std::sync::Arc;

use tokio::sync::broadcast;

use super::entry::decode;
pub use super::entry::{
    AutoReason, Command, LeaveReason, MAX_DEAL_STEPS, ReplayAction, ReplayStep, Step, Stored,
    TableEvent,
};
use super::presence::Presence;
pub use super::presence::PresenceStep;
use super::record::ShengjiRecord;
use super::rejection;
use super::turns::Timers;
use crate::cards::CardSet;
use crate::game::{EngineError, Viewer};
use crate::seat::{Player, Seat};
use crate::service::backlog::{self, Backlog};
use crate::service::record::{Record, VerifiedTokens};
use crate::service::status::{ApiError, Reason};

use crate::shengji::{Action, Event, Game, Phase, ShengjiHooks, View};
use crate::store::LogEntry;
use crate::variants::{Registry, ShengjiScript, ShengjiVariant};

/// A request prepared on a copy of the match, not yet stored.
pub struct Prepared {
    pub log: LogEntry,
    game: Game,
    left: Option<u8>,
    presence: Presence,
    events: Vec<TableEvent>,
    stored: Stored,
}

impl Prepared {
    pub fn finished(&self) -> bool {
        self.left.is_some() || self.game.phase() == Phase::Finished
    }

    /// The seat and request id of the request, if it came with one.
    pub fn request(&self) -> Option<(u8, &str)> {
        let rid = self.stored.request_id.as_deref()?;
        Some((self.stored.player, rid))
    }
}

/// A live 升級 game.
pub struct Table {
    pub record: ShengjiRecord,
    hooks: Arc<ShengjiScript>,
    game: Game,
    left: Option<u8>,
    /// Requests accepted so far.
    seq: u64,
    /// The events and idempotency keys of the last requests (seq 0: the creation).
    backlog: Backlog<TableEvent>,
    presence: Presence,
    timers: Timers,
    /// When the game last moved (the last core action, or the creation): the turn's deadline
    /// runs from here.
    moved_at: u64,
    notify: broadcast::Sender<u64>,
    /// The token secrets verified in this game (memory only).
    tokens: VerifiedTokens,
}

fn wrap(events: Vec<Event>) -> impl Iterator<Item = TableEvent> {
    events.into_iter().map(TableEvent::Game)
}

fn store_failed(m: String) -> ApiError {
    ApiError::new(Reason::StoreFailed, m)
}

impl Table {
    /// The record and the token secrets verified in this game (`LiveGame::verify_token`).
    pub fn tokens(&mut self) -> (&Record, &mut VerifiedTokens) {
        (&self.record.base, &mut self.tokens)
    }

    /// The pinned script of a record, configured with its options.
    fn hooks_for(
        registry: &Registry<ShengjiVariant>,
        record: &ShengjiRecord,
    ) -> Result<Arc<ShengjiScript>, ApiError> {
        let r = &record.base;
        let compiled = match registry.get(&r.variant, &r.version) {
            Some(c) => c,
            None => registry
                .restore(&r.variant, &r.version, &r.script, &format!("game {}", r.id))
                .map_err(|e| ApiError::new(Reason::ScriptFailed, e.to_string()))?,
        };
        compiled
            .configure(&r.options)
            .map(Arc::new)
            .map_err(|e| ApiError::new(Reason::BadOption, e.to_string()))
    }

    /// A new table from its record (turn deadlines on: see [`Table::set_turn_timers`]).
    pub fn create(
        registry: &Registry<ShengjiVariant>,
        record: ShengjiRecord,
    ) -> Result<Table, ApiError> {
        let hooks = Table::hooks_for(registry, &record)?;
        let mut record = record;
        record.base.script = String::new();
        Table::start(record, hooks)
    }

    /// The table at its creation, with these hooks.
    fn start(record: ShengjiRecord, hooks: Arc<ShengjiScript>) -> Result<Table, ApiError> {
        let (game, events) = Game::new(record.setup()?).map_err(rejection)?;
        let (notify, _) = broadcast::channel(16);
        let created_at = record.base.created_at;
        let backlog = Backlog::new(
            created_at,
            wrap(events).collect(),
            4,
            backlog::DEFAULT_ACTIONS,
        );
        Ok(Table {
            timers: Timers::of(&hooks, true),
            record,
            hooks,
            game,
            left: None,
            seq: 0,
            backlog,
            presence: Presence::default(),
            moved_at: created_at,
            notify,
            tokens: VerifiedTokens::default(),
        })
    }

    /// The same game at its creation, keeping `actions` actions (a replay from the store:
    /// `history`).
    pub fn fresh(&self, actions: usize) -> Result<Table, ApiError> {
        let mut t = Table::start(self.record.clone(), Arc::clone(&self.hooks))?;
        t.timers = self.timers;
        t.keep_actions(actions);
        Ok(t)
    }

    /// Rebuilds a table from its stored record and log, verifying every state hash.
    pub fn restore(
        registry: &Registry<ShengjiVariant>,
        body: &[u8],
        log: &[LogEntry],
    ) -> Result<Table, ApiError> {
        let mut table = Table::create(registry, ShengjiRecord::decode(body)?)?;
        for e in log {
            table.apply_entry(e)?;
        }
        Ok(table)
    }

    /// Turn deadlines on (the variant's `turn_seconds`) or off (`serve --no-turn-timers`).
    pub fn set_turn_timers(&mut self, on: bool) {
        self.timers = Timers::of(&self.hooks, on);
    }

    /// The seq: requests accepted so far.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    pub fn finished(&self) -> bool {
        self.left.is_some() || self.game.phase() == Phase::Finished
    }

    pub fn game(&self) -> &Game {
        &self.game
    }

    pub fn hooks(&self) -> &ShengjiScript {
        &self.hooks
    }

    /// The seat that left (or whose reconnect window ran out), if any.
    pub fn left(&self) -> Option<u8> {
        self.left
    }

    /// The winning team: the core's, or the team of the seat that did not leave.
    pub fn winner(&self) -> Option<u8> {
        self.left
            .map(|s| 1 - Seat::new(s).team())
            .or_else(|| self.game.winner())
    }

    pub fn subscribe(&self) -> broadcast::Receiver<u64> {
        self.notify.subscribe()
    }

    pub fn notify(&self) {
        let _ = self.notify.send(self.seq());
    }

    /// The state as `viewer` may see it (the seq is the table's).
    pub fn view(&self, viewer: Viewer) -> View {
        let mut view = self.game.view(viewer);
        view.seq = self.seq();
        if self.finished() {
            view.legal = CardSet::EMPTY;
            view.winner = self.winner();
        }
        view
    }

    /// Keeps the events and idempotency keys of at most `actions` requests (the oldest go
    /// first; `history` re-derives them from the store).
    pub fn keep_actions(&mut self, actions: usize) {
        self.backlog.set_limit(actions);
    }

    /// The seq of the oldest request whose events this table keeps.
    pub fn first_kept(&self) -> u64 {
        self.backlog.first_seq()
    }

    // ---- requests ----

    /// The seq of a kept request `player` made with `request_id`, if any.
    pub fn request_seq(&self, player: u8, request_id: &str) -> Option<u64> {
        self.backlog
            .request_seq(Player::new(player), request_id)
            .map(|(seq, _)| seq)
    }

    /// The seq of a request older than the kept ones that `player` may have made with
    /// `request_id` (a remembered fingerprint: the store's entry confirms it).
    pub fn remembered_seq(&self, player: u8, request_id: &str) -> Option<u64> {
        self.backlog.remembered_seq(Player::new(player), request_id)
    }

    /// Applies a stored entry (replay, catching up), checking its seq, every state hash and
    /// that its 托管 or presence step was due at its time.
    pub fn apply_entry(&mut self, e: &LogEntry) -> Result<(), ApiError> {
        if e.seq <= self.seq() {
            return Ok(());
        }
        if e.seq != self.seq() + 1 {
            return Err(store_failed(format!(
                "log gap: entry {} after seq {}",
                e.seq,
                self.seq()
            )));
        }
        let stored = decode(e)?;
        let recorded: Vec<String> = stored
            .step
            .actions()
            .map(|(_, h)| h.to_vec())
            .unwrap_or_default();
        let prepared = self.prepare_stored(stored, true)?;
        let replayed = prepared.stored.step.actions().map(|(_, h)| h);
        if replayed.is_some_and(|h| h != recorded.as_slice()) {
            return Err(store_failed(format!(
                "replay of entry {} diverged (state hash mismatch)",
                e.seq
            )));
        }
        self.accept(prepared);
        Ok(())
    }

    /// The core actions of a seat's command.
    fn actions_of(&self, seat: u8, command: Command) -> Result<Vec<Action>, ApiError> {
        Ok(match command {
            Command::Deal(n) if n == 0 || n > MAX_DEAL_STEPS => {
                return Err(ApiError::new(
                    Reason::BadRequest,
                    format!("deal.count must be 1..={MAX_DEAL_STEPS}"),
                ));
            }
            Command::Deal(n) => vec![Action::Deal; n as usize],
            Command::Declare(card) => vec![Action::Declare {
                seat: Seat::new(seat),
                card,
            }],
            Command::Bury(cards) => vec![Action::Bury {
                seat: Seat::new(seat),
                cards,
            }],
            Command::Play(card) => vec![Action::Play {
                seat: Seat::new(seat),
                card,
            }],
        })
    }

    /// Prepares a seat's request on a copy of the match.
    pub fn prepare(
        &self,
        player: u8,
        command: Command,
        now: u64,
        request_id: Option<&str>,
    ) -> Result<Prepared, ApiError> {
        let actions = self.actions_of(player, command)?;
        self.prepare_stored(
            Stored {
                player,
                at: now,
                request_id: request_id.map(str::to_string),
                step: Step::Actions {
                    actions,
                    hashes: Vec::new(),
                },
            },
            false,
        )
    }

    /// The player leaves: the match ends, its team loses.
    pub fn prepare_leave(&self, player: u8, now: u64) -> Result<Prepared, ApiError> {
        self.prepare_stored(
            Stored {
                player,
                at: now,
                request_id: None,
                step: Step::Leave,
            },
            false,
        )
    }

    /// Runs an entry on a copy: its actions (a deal request stops early at the end of the deal;
    /// any other rejection rejects the whole request) with the state hash after each, or its
    /// leave or presence step.
    fn prepare_stored(&self, stored: Stored, replaying: bool) -> Result<Prepared, ApiError> {
        if self.finished() {
            return Err(EngineError::GameOver.into());
        }
        let seat = stored.player;
        let mut game = self.game.clone();
        let mut events = Vec::new();
        let mut left = None;
        let mut presence = self.presence;
        let window = self.timers.reconnect_ms;
        let leave = |left: &mut Option<u8>, events: &mut Vec<TableEvent>, reason| {
            *left = Some(seat);
            events.push(TableEvent::Left {
                seat,
                winner: 1 - Seat::new(seat).team(),
                reason,
            });
        };
        let step = match stored.step {
            Step::Leave => {
                leave(&mut left, &mut events, LeaveReason::Left);
                Step::Leave
            }
            Step::Disconnect => {
                presence = presence.after(PresenceStep::Disconnect, seat, stored.at, window)?;
                events.push(TableEvent::Disconnected {
                    seat,
                    window_ends: stored.at.saturating_add(window),
                });
                Step::Disconnect
            }
            Step::Reconnect => {
                presence = presence.after(PresenceStep::Reconnect, seat, stored.at, window)?;
                events.push(TableEvent::Reconnected { seat });
                Step::Reconnect
            }
            Step::Expire => {
                presence = presence.after(PresenceStep::Expire, seat, stored.at, window)?;
                leave(&mut left, &mut events, LeaveReason::Disconnected);
                Step::Expire
            }
            Step::Actions { actions, .. } => {
                let (actions, hashes) = self.run(&mut game, actions, &mut events)?;
                Step::Actions { actions, hashes }
            }
            Step::Auto { actions, .. } => {
                let reason = self.auto_reason(seat, stored.at, replaying)?;
                events.push(TableEvent::Auto { seat, reason });
                let (actions, hashes) = self.run(&mut game, actions, &mut events)?;
                Step::Auto { actions, hashes }
            }
        };
        let stored = Stored { step, ..stored };
        let body = serde_json::to_vec(&stored).map_err(|e| store_failed(e.to_string()))?;
        Ok(Prepared {
            log: LogEntry {
                seq: self.seq() + 1,
                body,
            },
            game,
            left,
            presence,
            events,
            stored,
        })
    }

    /// Applies core actions to `game`: the actions done and the state hash after each.
    fn run(
        &self,
        game: &mut Game,
        actions: Vec<Action>,
        events: &mut Vec<TableEvent>,
    ) -> Result<(Vec<Action>, Vec<String>), ApiError> {
        let mut done = Vec::with_capacity(actions.len());
        let mut hashes = Vec::with_capacity(actions.len());
        for action in actions {
            if action == Action::Deal && !done.is_empty() && game.phase() != Phase::Dealing {
                break;
            }
            let hooks: &dyn ShengjiHooks = self.hooks.as_ref();
            events.extend(wrap(game.apply(hooks, action).map_err(rejection)?));
            done.push(action);
            hashes.push(game.state_hash());
        }
        Ok((done, hashes))
    }

    /// Makes a prepared request current (after the store acknowledged it).
    pub fn accept(&mut self, p: Prepared) -> u64 {
        let variant = &self.record.base.variant;
        for e in &p.events {
            if let TableEvent::Game(Event::Played { .. }) = e {
                crate::metrics::family_play(super::record::GAME, variant);
            }
        }
        if p.stored.step.actions().is_some() {
            self.moved_at = p.stored.at;
        }
        self.game = p.game;
        self.left = p.left;
        self.presence = p.presence;
        self.seq += 1;
        let player = Player::new(p.stored.player);
        let request = p.stored.request_id.as_deref().map(|r| (r, None));
        self.backlog
            .push_events(self.seq, player, p.stored.at, p.events, request);
        self.seq
    }

    /// The kept request at `seq`: when it was accepted and its events (seq 0: the creation).
    /// Older ones: `history`.
    pub fn action_at(&self, seq: u64) -> Result<(u64, &[TableEvent]), ApiError> {
        self.backlog
            .action_at(seq)
            .ok_or_else(|| ApiError::new(Reason::BadRequest, format!("no action {seq} kept")))
    }

    /// Every kept event after seq `after` with its seq and time; `None`: from the creation on.
    /// Events before [`Table::first_kept`] are not here (`history`).
    pub fn events_after(
        &self,
        after: Option<u64>,
    ) -> impl Iterator<Item = (u64, u64, &TableEvent)> {
        let start = after
            .map_or(0, |a| a.saturating_add(1))
            .max(self.first_kept());
        (start..=self.seq).flat_map(move |seq| {
            let (at, events) = self.backlog.action_at(seq).unwrap_or((0, &[]));
            events.iter().map(move |e| (seq, at, e))
        })
    }
}
