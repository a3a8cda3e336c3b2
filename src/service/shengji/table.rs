//! One 升級 game as the service holds it (a table): the core's match, its pinned variant script,
//! its log entries with the events they caused (WatchGame resumes, idempotent retries) and a
//! notifier.
//!
//! Built from a creation record plus the stored log by replay, verifying the state hash recorded
//! after every core action, so a game rebuilt after a restart is exactly the one acknowledged. A
//! request is prepared on a copy of the match ([`Prepared`]) and made current only once the store
//! has it (`games` runs that protocol). One request is one log entry and one seq, even when it
//! is several core actions (dealing 12 cards).
//!
//! Domain values only: no protobuf type, no store access, no cache.

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

use super::record::ShengjiRecord;
use super::rejection;
use crate::cards::{Card, CardSet};
use crate::game::Viewer;
use crate::seat::{Player, Seat};
use crate::service::status::{ApiError, Reason};
use crate::shengji::{Action, Event, Game, Phase, ShengjiHooks, View, event_view};
use crate::store::LogEntry;
use crate::variants::{Registry, ShengjiScript, ShengjiVariant};

/// Most deal steps one request may ask for (a whole deal is 49).
pub const MAX_DEAL_STEPS: u32 = 54;

/// What a seat asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// Advance the deal by this many steps.
    Deal(u32),
    Declare(Card),
    Bury(CardSet),
    Play(Card),
}

/// One stored log entry: a request's core actions with the state hash after each, or a leave.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Stored {
    pub player: u8,
    pub at: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    pub step: Step,
}

/// What an entry did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Step {
    /// Core actions, with the state hash after each.
    Actions {
        actions: Vec<Action>,
        hashes: Vec<String>,
    },
    /// The player left: the match ends, its team loses.
    Leave,
}

/// An event of a table: the core's, or a seat leaving.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableEvent {
    Game(Event),
    Left { seat: u8, winner: u8 },
}

impl TableEvent {
    /// The event as `viewer` may see it.
    pub fn seen_by(&self, viewer: Viewer) -> TableEvent {
        match self {
            TableEvent::Game(e) => TableEvent::Game(event_view(e, viewer)),
            left => left.clone(),
        }
    }
}

/// A request prepared on a copy of the match, not yet stored.
pub struct Prepared {
    pub log: LogEntry,
    game: Game,
    left: Option<u8>,
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

/// What a seat may do now (GetHints).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hints {
    pub your_turn: bool,
    pub legal: CardSet,
    pub declarable: CardSet,
    pub can_deal: bool,
    pub must_bury: bool,
    pub bury_points_allowed: bool,
    pub phase: Phase,
    pub seq: u64,
}

/// One step of a replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayStep {
    pub seq: u64,
    pub at: u64,
    pub player: u8,
    /// `None`: the player left.
    pub action: Option<Action>,
    pub hash: String,
}

/// A live 升級 game.
pub struct Table {
    pub record: ShengjiRecord,
    hooks: Arc<ShengjiScript>,
    game: Game,
    left: Option<u8>,
    /// (time, events) by seq: index 0 holds the creation events.
    events: Vec<(u64, Vec<TableEvent>)>,
    entries: Vec<Stored>,
    /// Idempotency keys: (player, request id) → seq.
    requests: HashMap<(u8, String), u64>,
    notify: broadcast::Sender<u64>,
}

fn wrap(events: Vec<Event>) -> impl Iterator<Item = TableEvent> {
    events.into_iter().map(TableEvent::Game)
}

impl Table {
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

    /// A new table from its record.
    pub fn create(
        registry: &Registry<ShengjiVariant>,
        record: ShengjiRecord,
    ) -> Result<Table, ApiError> {
        let hooks = Table::hooks_for(registry, &record)?;
        let (game, events) = Game::new(record.setup()?).map_err(rejection)?;
        let (notify, _) = broadcast::channel(16);
        let mut record = record;
        record.base.script = String::new();
        Ok(Table {
            events: vec![(record.base.created_at, wrap(events).collect())],
            record,
            hooks,
            game,
            left: None,
            entries: Vec::new(),
            requests: HashMap::new(),
            notify,
        })
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

    /// The seq: requests accepted so far.
    pub fn seq(&self) -> u64 {
        self.entries.len() as u64
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

    /// The seat that left, if any.
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

    /// The seq of the request `player` made with `request_id`, if any.
    pub fn request_seq(&self, player: u8, request_id: &str) -> Option<u64> {
        self.requests
            .get(&(player, request_id.to_string()))
            .copied()
    }

    /// Applies a stored entry (replay, catching up), checking its seq and every state hash.
    pub fn apply_entry(&mut self, e: &LogEntry) -> Result<(), ApiError> {
        if e.seq <= self.seq() {
            return Ok(());
        }
        let failed = |m: String| ApiError::new(Reason::StoreFailed, m);
        if e.seq != self.seq() + 1 {
            return Err(failed(format!(
                "log gap: entry {} after seq {}",
                e.seq,
                self.seq()
            )));
        }
        let stored: Stored = serde_json::from_slice(&e.body)
            .map_err(|err| failed(format!("log entry {} unreadable: {err}", e.seq)))?;
        let recorded = match &stored.step {
            Step::Actions { hashes, .. } => hashes.clone(),
            Step::Leave => Vec::new(),
        };
        let prepared = self.prepare_stored(stored)?;
        if let Step::Actions { hashes, .. } = &prepared.stored.step
            && *hashes != recorded
        {
            return Err(failed(format!(
                "replay of entry {} diverged (state hash mismatch)",
                e.seq
            )));
        }
        self.accept(prepared);
        Ok(())
    }

    /// Prepares a seat's request on a copy of the match.
    pub fn prepare(
        &self,
        player: u8,
        command: Command,
        now: u64,
        request_id: Option<&str>,
    ) -> Result<Prepared, ApiError> {
        let actions = match command {
            Command::Deal(n) if n == 0 || n > MAX_DEAL_STEPS => {
                return Err(ApiError::new(
                    Reason::BadRequest,
                    format!("deal.count must be 1..={MAX_DEAL_STEPS}"),
                ));
            }
            Command::Deal(n) => vec![Action::Deal; n as usize],
            Command::Declare(card) => vec![Action::Declare {
                seat: Seat::new(player),
                card,
            }],
            Command::Bury(cards) => vec![Action::Bury {
                seat: Seat::new(player),
                cards,
            }],
            Command::Play(card) => vec![Action::Play {
                seat: Seat::new(player),
                card,
            }],
        };
        self.prepare_stored(Stored {
            player,
            at: now,
            request_id: request_id.map(str::to_string),
            step: Step::Actions {
                actions,
                hashes: Vec::new(),
            },
        })
    }

    /// The player leaves: the match ends, its team loses.
    pub fn prepare_leave(&self, player: u8, now: u64) -> Result<Prepared, ApiError> {
        self.prepare_stored(Stored {
            player,
            at: now,
            request_id: None,
            step: Step::Leave,
        })
    }

    /// Runs an entry on a copy: its actions (a deal request stops early at the end of the deal;
    /// any other rejection rejects the whole request), with the state hash after each.
    fn prepare_stored(&self, stored: Stored) -> Result<Prepared, ApiError> {
        if self.finished() {
            return Err(ApiError::new(Reason::GameOver, "the match is over"));
        }
        let mut game = self.game.clone();
        let mut events = Vec::new();
        let mut left = None;
        let step = match stored.step {
            Step::Leave => {
                let winner = 1 - Seat::new(stored.player).team();
                events.push(TableEvent::Left {
                    seat: stored.player,
                    winner,
                });
                left = Some(stored.player);
                Step::Leave
            }
            Step::Actions { actions, .. } => {
                let mut done = Vec::with_capacity(actions.len());
                let mut hashes = Vec::with_capacity(actions.len());
                for action in actions {
                    if action == Action::Deal && !done.is_empty() && game.phase() != Phase::Dealing
                    {
                        break;
                    }
                    let hooks: &dyn ShengjiHooks = self.hooks.as_ref();
                    events.extend(wrap(game.apply(hooks, action).map_err(rejection)?));
                    done.push(action);
                    hashes.push(game.state_hash());
                }
                Step::Actions {
                    actions: done,
                    hashes,
                }
            }
        };
        let stored = Stored { step, ..stored };
        let body = serde_json::to_vec(&stored)
            .map_err(|e| ApiError::new(Reason::StoreFailed, e.to_string()))?;
        Ok(Prepared {
            log: LogEntry {
                seq: self.seq() + 1,
                body,
            },
            game,
            left,
            events,
            stored,
        })
    }

    /// Makes a prepared request current (after the store acknowledged it).
    pub fn accept(&mut self, p: Prepared) -> u64 {
        let variant = &self.record.base.variant;
        for e in &p.events {
            if let TableEvent::Game(Event::Played { .. }) = e {
                crate::metrics::family_play(super::record::GAME, variant);
            }
        }
        self.game = p.game;
        self.left = p.left;
        self.events.push((p.stored.at, p.events));
        self.entries.push(p.stored);
        let seq = self.seq();
        if let Some(r) = &self.entries[self.entries.len() - 1].request_id {
            let player = self.entries[self.entries.len() - 1].player;
            self.requests.insert((player, r.clone()), seq);
        }
        seq
    }

    /// The request at `seq`: when it was accepted and its events (seq 0: the creation).
    pub fn action_at(&self, seq: u64) -> Result<(u64, &[TableEvent]), ApiError> {
        self.events
            .get(seq as usize)
            .map(|(at, events)| (*at, events.as_slice()))
            .ok_or_else(|| ApiError::new(Reason::BadRequest, format!("no action {seq}")))
    }

    /// Every event after seq `after` with its seq and time; `None`: from the creation on.
    pub fn events_after(
        &self,
        after: Option<u64>,
    ) -> impl Iterator<Item = (u64, u64, &TableEvent)> {
        let start = after.map_or(0, |a| a.saturating_add(1) as usize);
        self.events
            .iter()
            .enumerate()
            .skip(start)
            .flat_map(|(seq, (at, events))| events.iter().map(move |e| (seq as u64, *at, e)))
    }

    /// What `seat` may do now: the engine itself decides each declarable card (a trial on a
    /// copy), so the hints never disagree with SubmitAction.
    pub fn hints(&self, seat: u8) -> Result<Hints, ApiError> {
        let seat = Seat::new(seat);
        if self.finished() {
            return Err(ApiError::new(Reason::GameOver, "the match is over"));
        }
        let game = &self.game;
        let dealing = game.phase() == Phase::Dealing;
        let declarable: CardSet = if dealing && game.declaration().is_none() {
            game.hand(seat)
                .iter()
                .filter(|&card| {
                    game.clone()
                        .apply(self.hooks.as_ref(), Action::Declare { seat, card })
                        .is_ok()
                })
                .collect()
        } else {
            CardSet::EMPTY
        };
        let your_turn = game.turn() == Some(seat);
        Ok(Hints {
            your_turn,
            legal: game.legal_cards(seat),
            declarable,
            can_deal: dealing,
            must_bury: your_turn && game.phase() == Phase::Exchange,
            bury_points_allowed: self.hooks.bury_points_allowed(),
            phase: game.phase(),
            seq: self.seq(),
        })
    }

    /// The next action of a bot seat, if one may act now: while dealing, a bot that wants to
    /// declare; in the exchange and play, the bot whose turn it is. Decided from its view only.
    pub fn bot_action(&self) -> Result<Option<(u8, Command)>, ApiError> {
        if self.finished() || self.record.bot_seats.is_empty() {
            return Ok(None);
        }
        let decide = |seat: u8| -> Result<Option<Action>, ApiError> {
            let mut bot = self.record.bot(seat)?;
            bot.bury_points = self.hooks.bury_points_allowed();
            Ok(bot.decide(&self.game.view(Viewer::Player(Player::new(seat)))))
        };
        if self.game.phase() == Phase::Dealing {
            if self.game.declaration().is_some() {
                return Ok(None);
            }
            for &seat in &self.record.bot_seats {
                if let Some(Action::Declare { card, .. }) = decide(seat)? {
                    return Ok(Some((seat, Command::Declare(card))));
                }
            }
            return Ok(None);
        }
        let turn = self.game.turn().map(Seat::number);
        let Some(seat) = turn.filter(|&s| self.record.is_bot(s)) else {
            return Ok(None);
        };
        Ok(match decide(seat)? {
            Some(Action::Bury { cards, .. }) => Some((seat, Command::Bury(cards))),
            Some(Action::Play { card, .. }) => Some((seat, Command::Play(card))),
            _ => None,
        })
    }

    /// The replay's steps: every core action with its state hash, and the leave, if any.
    pub fn replay_steps(&self) -> Vec<ReplayStep> {
        let mut steps = Vec::new();
        for (i, e) in self.entries.iter().enumerate() {
            let seq = i as u64 + 1;
            match &e.step {
                Step::Actions { actions, hashes } => {
                    for (a, h) in actions.iter().zip(hashes) {
                        steps.push(ReplayStep {
                            seq,
                            at: e.at,
                            player: e.player,
                            action: Some(*a),
                            hash: h.clone(),
                        });
                    }
                }
                Step::Leave => steps.push(ReplayStep {
                    seq,
                    at: e.at,
                    player: e.player,
                    action: None,
                    hash: String::new(),
                }),
            }
        }
        steps
    }
}
