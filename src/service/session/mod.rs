//! One game as the service holds it (a session): the engine state, its pinned variant, the
//! events and idempotency keys of its last few actions (`backlog`: older ones are re-derived from
//! the store by `history`), and a notifier.
//!
//! Built from a creation record plus the stored log by replay, verifying each entry's recorded
//! state hash, so a game rebuilt after a restart or on another replica is exactly the game that
//! was acknowledged. An action is prepared on a copy of the engine state ([`Prepared`]) and made
//! current only once the store has it (`games` runs that protocol).
//!
//! Domain values only: no protobuf type (`wire` converts what this returns), no store access
//! (the log entries come in and go out as values), no cache.

mod entry;
mod metrics;
pub mod snapshot;

use std::sync::Arc;

use tokio::sync::broadcast;

use super::backlog::{self, Backlog};
use super::record::{Record, VerifiedTokens};
use super::replay::Replay;
use super::requested::Action as Requested;
use super::status::{ApiError, Reason};
pub use super::stored::Stored;
use super::stored::{self, Origin};
use crate::bot::Bot;
use crate::cards::CardSet;
use crate::determinism::HashPrefix;
use crate::game::{Action, EngineError, Entry, Event, Game, GameConfig, Phase};
use crate::hand::Hand;
use crate::seat::Player;
use crate::store::LogEntry;
use crate::variants::{OptionValue, Registry, ScriptVariant};

pub use entry::{Idempotent, Prepared, Submitted};

/// A live game.
pub struct Session {
    pub record: Record,
    hooks: Arc<ScriptVariant>,
    game: Game,
    /// The last actions' events and idempotency keys (bounded; older ones are in the store).
    backlog: Backlog,
    notify: broadcast::Sender<u64>,
    /// The bot of each bot seat (人機), by player; `None` for a person.
    bots: Vec<Option<Bot>>,
    /// The last action accepted ended a deal: its snapshot is due ([`Session::take_snapshot`]).
    deal_ended: bool,
    /// Settled deals the stored snapshots hold (the next snapshot carries those after them).
    snapshot_covered: u32,
    /// The SHA-256 state after the game's configuration, rules and seed, from which every
    /// action's state hash resumes (`Game::hash_prefix`; memory only).
    hash_prefix: HashPrefix,
    /// The token secrets verified in this game (memory only).
    tokens: VerifiedTokens,
}

fn int_option(v: &ScriptVariant, name: &str) -> Option<i64> {
    match v.option(name) {
        Some(OptionValue::Int(i)) => Some(*i),
        _ => None,
    }
}

impl Session {
    fn config(record: &Record, hooks: &ScriptVariant, no_timers: bool) -> GameConfig {
        let deals = if record.deals == 0 {
            int_option(hooks, "deals_per_match")
                .unwrap_or(1)
                .clamp(1, 1000) as u32
        } else {
            record.deals
        };
        let turn_ms = int_option(hooks, "turn_seconds")
            .filter(|_| !no_timers)
            .map(|s| s.max(1) as u64 * 1000);
        GameConfig {
            variant: record.variant.clone(),
            version: record.version.clone(),
            deals,
            turn_ms,
            max_consecutive_timeouts: 1,
            reconnect_ms: int_option(hooks, "reconnect_seconds").unwrap_or(90).max(1) as u64 * 1000,
        }
    }

    fn hooks_for(registry: &Registry, record: &Record) -> Result<Arc<ScriptVariant>, ApiError> {
        let compiled = match registry.get(&record.variant, &record.version) {
            Some(c) => c,
            None => registry
                .restore(
                    &record.variant,
                    &record.version,
                    &record.script,
                    &format!("game {}", record.id),
                )
                .map_err(|e| ApiError::new(Reason::ScriptFailed, e.to_string()))?,
        };
        registry
            .configured(&compiled, &record.options)
            .map_err(|e| ApiError::new(Reason::BadOption, e.to_string()))
    }

    fn preset(record: &Record) -> Result<Option<Vec<CardSet>>, ApiError> {
        match &record.preset_hands {
            None => Ok(None),
            Some(h) => h
                .iter()
                .map(|ids| CardSet::from_ids(ids).map_err(ApiError::from))
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
        }
    }

    /// A new game from its record.
    pub fn create(
        registry: &Registry,
        record: Record,
        no_timers: bool,
    ) -> Result<Session, ApiError> {
        let hooks = Session::hooks_for(registry, &record)?;
        let config = Session::config(&record, &hooks, no_timers);
        let (mut game, events) = Game::new(
            config,
            hooks.as_ref(),
            record.seed_bytes()?,
            Session::preset(&record)?,
            record.created_at,
        )?;
        game.keep_every_result(record.hash_scheme);
        let (notify, _) = broadcast::channel(16);
        let bots = Session::bot_seats(&record, hooks.as_ref())?;
        // The script text is needed only to build the hooks (above); the store keeps it in the
        // record. Not holding a copy per live game saves ~15-18 KB of memory per game.
        let mut record = record;
        record.script = String::new();
        let backlog = Backlog::new(
            record.created_at,
            events,
            game.players() as usize,
            backlog::DEFAULT_ACTIONS,
        );
        Ok(Session {
            record,
            hooks,
            hash_prefix: game.hash_prefix(),
            game,
            backlog,
            notify,
            bots,
            deal_ended: false,
            snapshot_covered: 0,
            tokens: VerifiedTokens::default(),
        })
    }

    fn bot_seats(record: &Record, hooks: &ScriptVariant) -> Result<Vec<Option<Bot>>, ApiError> {
        let mut bots = vec![None; record.players.len()];
        for (&p, name) in &record.bots {
            let bot = Bot::named(name, hooks)
                .map_err(|e| ApiError::new(Reason::BadRequest, format!("bots: {e}")))?;
            match bots.get_mut(p as usize) {
                Some(seat) => *seat = Some(bot),
                None => return Err(ApiError::new(Reason::BadRequest, "bots: no such player")),
            }
        }
        Ok(bots)
    }

    /// The bot playing for `player`, if that seat is a bot's.
    pub fn bot(&self, player: Player) -> Option<&Bot> {
        self.bots.get(player.index()).and_then(Option::as_ref)
    }

    /// The player whose turn it is (`None` once the match is over).
    pub fn player_to_act(&self) -> Option<Player> {
        let seat = self.game.turn()?;
        self.game.seating().player_at(seat)
    }

    /// The bot seat to act now, if it is a bot's turn.
    pub fn bot_to_act(&self) -> Option<Player> {
        self.player_to_act().filter(|&p| self.bot(p).is_some())
    }

    /// The variant's hooks (settlement and rules) the game runs with.
    pub fn hooks(&self) -> &Arc<ScriptVariant> {
        &self.hooks
    }

    /// Rebuilds a game from its stored record and log, verifying every recorded state hash.
    pub fn restore(
        registry: &Registry,
        record: &crate::store::GameRecord,
        log: &[LogEntry],
        no_timers: bool,
    ) -> Result<Session, ApiError> {
        let stored = record;
        let mut record = Record::decode(&stored.body)?;
        // The text of the pinned version is in the store's script table (records written before
        // it carry the text themselves); needed only when this registry lacks the version.
        if record.script.is_empty() && registry.get(&record.variant, &record.version).is_none() {
            if let Some(script) = &stored.script {
                record.script = script.text.to_string();
            }
        }
        let mut live = Session::create(registry, record, no_timers)?;
        for e in log {
            live.apply_entry(e)?;
        }
        Ok(live)
    }

    /// Rebuilds a game from its stored record, a state its snapshots proved (`snapshot::newest`,
    /// checked against the log by the caller) and the log entries after it, verifying each
    /// entry's recorded state hash. `covered`: the settled deals the stored snapshots hold;
    /// `keep`: the actions the backlog keeps.
    /// Refused (the caller replays the whole log instead) when the snapshot's configuration is
    /// not the one this server derives from the record (turn timers on or off, another
    /// reconnect window), as a full replay would run with the derived one.
    pub fn resume(
        registry: &Registry,
        record: &crate::store::GameRecord,
        resumed: snapshot::Resumed,
        covered: u32,
        log_after: &[LogEntry],
        keep: usize,
        no_timers: bool,
    ) -> Result<Session, ApiError> {
        let mut live = Session::restore(registry, record, &[], no_timers)?;
        let derived = GameConfig {
            deals: resumed.game.config().deals,
            ..live.game.config().clone()
        };
        if *resumed.game.config() != derived {
            return Err(ApiError::new(
                Reason::StoreFailed,
                "the snapshot's configuration is not this server's",
            ));
        }
        let players = live.game.players() as usize;
        live.backlog = Backlog::<Event>::resume(resumed.seq, resumed.memory, players, keep);
        live.game = resumed.game;
        live.hash_prefix = live.game.hash_prefix();
        live.snapshot_covered = covered;
        for e in log_after {
            live.apply_entry(e)?;
        }
        Ok(live)
    }

    /// Applies a stored entry (replay, or catching up with another replica), checking its seq
    /// and state hash.
    pub fn apply_entry(&mut self, e: &LogEntry) -> Result<(), ApiError> {
        if e.seq <= self.game.seq() {
            return Ok(());
        }
        if e.seq != self.game.seq() + 1 {
            return Err(ApiError::new(
                Reason::StoreFailed,
                format!("log gap: entry {} after seq {}", e.seq, self.game.seq()),
            ));
        }
        let (stored, events) = stored::replay_entry(
            &mut self.game,
            self.hooks.as_ref(),
            (self.record.hash_scheme, &self.hash_prefix),
            e,
        )?;
        self.push(stored, events);
        Ok(())
    }

    /// Keeps an accepted or replayed action: its key and digest move into the backlog (no copy).
    fn push(&mut self, stored: Stored, events: Vec<Event>) {
        let Stored {
            entry,
            request_id,
            request_digest,
            ..
        } = stored;
        let request = request_id.map(|id| (id, request_digest));
        self.backlog.push(
            self.game.seq(),
            entry.player,
            &entry.action,
            entry.at,
            events,
            request,
        );
    }

    /// Keeps the events and keys of at most `actions` actions (the oldest go first).
    pub fn keep_actions(&mut self, actions: usize) {
        self.backlog.set_limit(actions);
    }

    /// The seq of the oldest action whose events this session keeps: earlier ones come from
    /// the store ([`history`]).
    pub fn first_kept(&self) -> u64 {
        self.backlog.first_seq()
    }

    /// What a replay of this game from its creation needs ([`history::History`]).
    pub fn origin(&self) -> Result<Origin, ApiError> {
        Ok(Origin {
            config: self.creation_config(),
            hooks: Arc::clone(&self.hooks),
            seed: self.record.seed_bytes()?,
            preset: Session::preset(&self.record)?,
            created_at: self.record.created_at,
            scheme: self.record.hash_scheme,
        })
    }

    /// The configuration the match was created with: an escape shortens the match in the
    /// engine state, but a replay starts from the configuration at creation.
    fn creation_config(&self) -> GameConfig {
        GameConfig {
            deals: Session::config(&self.record, &self.hooks, true).deals,
            ..self.game.config().clone()
        }
    }

    pub fn seq(&self) -> u64 {
        self.game.seq()
    }

    pub fn finished(&self) -> bool {
        self.game.phase() == Phase::Finished
    }

    /// True when the match is over and the viewer has seen everything up to `seq`.
    pub fn finished_at(&self, seq: u64) -> bool {
        self.finished() && seq >= self.seq()
    }

    pub fn deadline_passed(&self, now: u64) -> bool {
        self.game.deadline_passed(now)
    }

    pub fn subscribe(&self) -> broadcast::Receiver<u64> {
        self.notify.subscribe()
    }

    pub fn notify(&self) {
        let _ = self.notify.send(self.game.seq());
    }

    /// The seq of a kept action `player` caused with `request_id`, if any, and the digest of
    /// that request (when stored). Older actions: [`history::find_request`] before
    /// [`Session::first_kept`].
    pub fn request_seq(&self, player: Player, request_id: &str) -> Option<(u64, Option<&str>)> {
        self.backlog.request_seq(player, request_id)
    }

    /// The seq of an action older than the kept ones that `player` may have caused with
    /// `request_id` (a remembered key fingerprint: the store's entry confirms it).
    pub fn remembered_seq(&self, player: Player, request_id: &str) -> Option<u64> {
        self.backlog.remembered_seq(player, request_id)
    }

    /// Applies a player's action: on a copy of the engine state, returning the new state, its
    /// events and the log entry to store. Nothing of `self` changes.
    pub fn prepare(
        &self,
        player: Player,
        action: Requested,
        now: u64,
        request: Option<Idempotent<'_>>,
    ) -> Result<Prepared, ApiError> {
        let action = match action {
            Requested::Play { cards, declared } => Action::Play { cards, declared },
            Requested::Pass => Action::Pass,
        };
        self.prepare_entry(
            Entry {
                player,
                action,
                at: now,
            },
            request,
        )
    }

    /// The player leaves (escape).
    pub fn prepare_leave(
        &self,
        player: Player,
        now: u64,
        request: Option<Idempotent<'_>>,
    ) -> Result<Prepared, ApiError> {
        self.prepare_entry(
            Entry {
                player,
                action: Action::Leave,
                at: now,
            },
            request,
        )
    }

    /// An operator ends the match (AbortGame), for `reason`.
    pub fn prepare_abort(&self, now: u64, reason: &str) -> Result<Prepared, ApiError> {
        let mut p = self.prepare_entry(
            Entry {
                player: Player::new(0),
                action: Action::Abort,
                at: now,
            },
            None,
        )?;
        p.stored.reason = Some(reason.to_string());
        p.log.body = p.stored.encode()?;
        Ok(p)
    }

    /// An action the service takes for `player` (presence: `Disconnect`, `Reconnect`,
    /// `ReconnectExpired`; bots: a bot seat's play or pass, 托管's `Auto`), prepared like a
    /// player's.
    pub fn prepare_action(
        &self,
        player: Player,
        action: Action,
        now: u64,
    ) -> Result<Prepared, ApiError> {
        self.prepare_entry(
            Entry {
                player,
                action,
                at: now,
            },
            None,
        )
    }

    /// The reconnect windows not yet decided, as (player, Unix ms when it runs out): players
    /// disconnected whose window has no logged `ReconnectExpired` yet. Derived from the log (the
    /// logged disconnect time), so a window keeps its deadline across restarts and replicas.
    pub fn open_windows(&self) -> Vec<(Player, u64)> {
        if self.finished() {
            return Vec::new();
        }
        let window = self.game.config().reconnect_ms;
        Player::all(self.game.players())
            .filter_map(|p| {
                let since = self.game.disconnected_since(p)?;
                self.backlog
                    .window_open(p)
                    .then(|| (p, since.saturating_add(window)))
            })
            .collect()
    }

    /// True when the seat to act is a disconnected player's (the engine plays its turns).
    pub fn turn_is_away(&self) -> bool {
        self.game
            .turn()
            .and_then(|s| self.game.seating().player_at(s))
            .is_some_and(|p| self.game.is_disconnected(p))
    }

    fn prepare_entry(
        &self,
        entry: Entry,
        request: Option<Idempotent<'_>>,
    ) -> Result<Prepared, ApiError> {
        let mut game = self.game.clone();
        let events = game.apply(self.hooks.as_ref(), entry)?;
        let stored = Stored {
            entry,
            request_id: request.map(|r| r.id.to_string()),
            request_digest: request.map(|r| r.digest.to_string()),
            reason: None,
            hash: game.state_hash_from(self.record.hash_scheme, &self.hash_prefix),
        };
        let body = stored.encode()?;
        Ok(Prepared {
            log: LogEntry {
                seq: game.seq(),
                body,
            },
            game,
            events,
            stored,
        })
    }

    /// Makes a prepared action current (after the store acknowledged it).
    pub fn accept(&mut self, p: Prepared) -> Submitted {
        self.game = p.game;
        self.record_metrics(&p.events);
        self.deal_ended = Session::ends_deal(&p.events);
        self.push(p.stored, p.events);
        Submitted {
            seq: self.game.seq(),
        }
    }

    /// The action at `seq`: when it was accepted and the events it caused (seq 0: the
    /// creation).
    pub fn action_at(&self, seq: u64) -> Result<(u64, &[Event]), ApiError> {
        self.backlog
            .action_at(seq)
            .ok_or_else(|| ApiError::new(Reason::BadRequest, format!("no action {seq}")))
    }

    /// GetHints for a player: one page of the legal plays (`hints::page`) with their physical
    /// cards, whether passing is legal now, whether it is the player's turn.
    pub fn hints(&self, player: Player, query: &crate::hints::Query) -> Result<Hints, ApiError> {
        if self.finished() {
            return Err(EngineError::GameOver.into());
        }
        let seat = self
            .game
            .seat_of(player)
            .ok_or_else(|| ApiError::new(Reason::BadRequest, "no such player"))?;
        let your_turn = self.game.turn() == Some(seat);
        let hand = self.game.hand(seat);
        let previous = self.game.top().map(|t| &t.hand);
        let page = crate::hints::page(hand.rank_counts(), previous, self.game.rules(), query)
            .map_err(|e| ApiError::new(Reason::BadRequest, format!("hints: {e}")))?;
        let plays = page
            .plays
            .iter()
            .filter_map(|p| hand.take(p.cards).map(|cards| (cards, p.hand)))
            .collect();
        Ok(Hints {
            plays,
            can_pass: previous.is_some() && your_turn,
            your_turn,
            page,
        })
    }

    /// GetReplay: the creation record and the stored log (`history::stored_log`), as the core
    /// re-executes them.
    pub fn replay(&self, log: &[Stored]) -> Result<Replay, ApiError> {
        Ok(Replay {
            config: self.creation_config(),
            options: self.record.options.clone(),
            seed: self.record.seed_bytes()?,
            preset_hands: self.record.preset_hands.clone(),
            created_at: self.record.created_at,
            entries: log.iter().map(|s| s.entry).collect(),
            hashes: log.iter().map(|s| s.hash.clone()).collect(),
            final_totals: self.game.totals().to_vec(),
            engine_version: crate::game::ENGINE_VERSION.into(),
            abort_reason: log.iter().find_map(|s| s.reason.clone()),
        })
    }

    /// The record and the token secrets verified in this game (`LiveGame::verify_token`).
    pub fn tokens(&mut self) -> (&Record, &mut VerifiedTokens) {
        (&self.record, &mut self.tokens)
    }

    /// The engine state (tests, tools).
    pub fn game(&self) -> &Game {
        &self.game
    }
}

/// A player's legal plays now.
pub struct Hints {
    /// Each legal play with the physical cards of the player's hand it takes.
    pub plays: Vec<(CardSet, Hand)>,
    /// Passing is legal now (and it is the player's turn).
    pub can_pass: bool,
    pub your_turn: bool,
    /// The page's counts and next token (its `plays` are the rank-level plays of `plays`).
    pub page: crate::hints::Page,
}
