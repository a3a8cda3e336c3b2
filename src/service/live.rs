//! A game as the service holds it: the engine state, its pinned variant, its log entries with
//! the events they caused (for WatchGame resumes and idempotent retries), and a notifier.
//!
//! Built from a creation record plus the stored log by replay, verifying each entry's recorded
//! state hash, so a game rebuilt after a restart or on another replica is exactly the game that
//! was acknowledged.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

use super::convert::{self, Action as WireAction};
use super::handlers::Access;
use super::pb;
use super::record::Record;
use super::status::{ApiError, Reason};
use crate::cards::CardSet;
use crate::game::hooks::{EscapeReason, Outcome};
use crate::game::{Action, DealResult, Entry, Event, Game, GameConfig, GameError, Phase, Viewer};
use crate::hand::PlayError;
use crate::store::LogEntry;
use crate::variants::{OptionValue, Registry, ScriptVariant};

/// A stored log entry.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Stored {
    pub entry: Entry,
    /// The idempotency key of the request that caused it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The engine's state hash after it.
    pub hash: String,
}

/// What one accepted action produced.
#[derive(Clone, Debug)]
pub struct Submitted {
    pub seq: u64,
}

/// A live game.
pub struct Live {
    pub record: Record,
    hooks: Arc<ScriptVariant>,
    game: Game,
    /// Events by seq: index 0 holds the creation events.
    events: Vec<(u64, Vec<Event>)>,
    entries: Vec<Stored>,
    /// Idempotency keys: (player, request id) → the seq of the action it caused. Keys are the
    /// sending player's: another seat that happens to use the same key is another request.
    requests: HashMap<(u8, String), u64>,
    notify: broadcast::Sender<u64>,
}

fn int_option(v: &ScriptVariant, name: &str) -> Option<i64> {
    match v.option(name) {
        Some(OptionValue::Int(i)) => Some(*i),
        _ => None,
    }
}

/// Maps an engine rejection to its API reason.
pub fn game_error(e: GameError) -> ApiError {
    let msg = e.to_string();
    match e {
        GameError::GameOver => ApiError::new(Reason::GameOver, msg),
        GameError::NoSuchPlayer(_) => ApiError::new(Reason::BadRequest, msg),
        GameError::NotYourTurn { .. } => ApiError::new(Reason::NotYourTurn, msg),
        GameError::CardsNotHeld => ApiError::new(Reason::CardsNotHeld, msg),
        GameError::MustLead => ApiError::new(Reason::MustLead, msg),
        GameError::Play(p) => match p {
            PlayError::NotACombination(_) => ApiError::new(Reason::NotACombination, p.to_string()),
            PlayError::DoesNotBeat(_) => ApiError::new(Reason::DoesNotBeat, p.to_string()),
            PlayError::DeclaredMismatch(_) => {
                ApiError::new(Reason::DeclaredMismatch, p.to_string())
            }
            PlayError::Ambiguous { ref options, .. } => {
                let list: Vec<String> = options
                    .iter()
                    .map(|h| match h.key() {
                        Some(k) => format!("{}:{}", h.kind, k),
                        None => h.kind.to_string(),
                    })
                    .collect();
                ApiError::new(Reason::AmbiguousPlay, p.to_string())
                    .with("interpretations", list.join(","))
            }
        },
        GameError::NotDue | GameError::NotDisconnected | GameError::WindowOpen => {
            ApiError::new(Reason::BadRequest, msg)
        }
        GameError::Hook(h) => {
            tracing::error!(hook = %h.hook, error = %h, "variant script failed; action rejected");
            ApiError::new(
                Reason::ScriptFailed,
                "the variant script failed; the game is unchanged",
            )
        }
        GameError::Setup(_) | GameError::Replay { .. } => ApiError::new(Reason::BadRequest, msg),
    }
}

impl Live {
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
        // Games of one version with the same options share their configured hooks (immutable:
        // the option maps and the rules): configuring runs two script calls and the maps take
        // ~3 KB, once per game otherwise. Bounded; the cache keeps the versions it holds alive.
        type Key = (String, String, Vec<(String, String)>);
        static SHARED: OnceLock<Mutex<HashMap<Key, Arc<ScriptVariant>>>> = OnceLock::new();
        let key: Key = (
            record.variant.clone(),
            compiled.hash().to_string(),
            record
                .options
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        );
        let shared = SHARED.get_or_init(Default::default);
        if let Some(h) = shared.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return Ok(h);
        }
        let pairs: Vec<String> = record
            .options
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let overrides = compiled
            .parse_overrides(&pairs)
            .map_err(|e| ApiError::new(Reason::BadOption, e.to_string()))?;
        let configured = Arc::new(
            compiled
                .configure(&overrides)
                .map_err(|e| ApiError::new(Reason::BadOption, e.to_string()))?,
        );
        if let Ok(mut m) = shared.lock() {
            if m.len() >= 256 {
                m.clear();
            }
            m.insert(key, Arc::clone(&configured));
        }
        Ok(configured)
    }

    fn preset(record: &Record) -> Result<Option<Vec<CardSet>>, ApiError> {
        match &record.preset_hands {
            None => Ok(None),
            Some(h) => h
                .iter()
                .map(|ids| CardSet::from_ids(ids).map_err(convert::card_error))
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
        }
    }

    /// A new game from its record.
    pub fn create(registry: &Registry, record: Record, no_timers: bool) -> Result<Live, ApiError> {
        let hooks = Live::hooks_for(registry, &record)?;
        let config = Live::config(&record, &hooks, no_timers);
        let (game, events) = Game::new(
            config,
            hooks.as_ref(),
            record.seed_bytes()?,
            Live::preset(&record)?,
            record.created_at,
        )
        .map_err(game_error)?;
        let (notify, _) = broadcast::channel(16);
        // The script text is needed only to build the hooks (above); the store keeps it in the
        // record. Not holding a copy per live game saves ~15-18 KB of memory per game.
        let mut record = record;
        record.script = String::new();
        Ok(Live {
            record,
            hooks,
            game,
            events: vec![(0, events)],
            entries: Vec::new(),
            requests: HashMap::new(),
            notify,
        })
    }

    /// Rebuilds a game from its stored record and log, verifying every recorded state hash.
    pub fn restore(
        registry: &Registry,
        record: &crate::store::GameRecord,
        log: &[LogEntry],
        no_timers: bool,
    ) -> Result<Live, ApiError> {
        let record = Record::decode(&record.body)?;
        let mut live = Live::create(registry, record, no_timers)?;
        for e in log {
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
        let stored: Stored = serde_json::from_slice(&e.body).map_err(|err| {
            ApiError::new(
                Reason::StoreFailed,
                format!("log entry {} unreadable: {err}", e.seq),
            )
        })?;
        let events = self
            .game
            .apply(self.hooks.as_ref(), stored.entry)
            .map_err(|err| {
                ApiError::new(
                    Reason::StoreFailed,
                    format!("replay of entry {} failed: {err}", e.seq),
                )
            })?;
        let hash = self.game.state_hash_with(self.record.hash_scheme);
        if hash != stored.hash {
            return Err(ApiError::new(
                Reason::StoreFailed,
                format!("replay of entry {} diverged (state hash mismatch)", e.seq),
            ));
        }
        self.push(stored, events);
        Ok(())
    }

    fn push(&mut self, stored: Stored, events: Vec<Event>) {
        if let Some(r) = &stored.request_id {
            self.requests
                .insert((stored.entry.player, r.clone()), self.game.seq());
        }
        self.events.push((stored.entry.at, events));
        self.entries.push(stored);
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

    /// The seq of the action `player` caused with `request_id`, if any.
    pub fn request_seq(&self, player: u8, request_id: &str) -> Option<u64> {
        self.requests
            .get(&(player, request_id.to_string()))
            .copied()
    }

    /// Applies a player's action: on a copy of the engine state, returning the new state, its
    /// events and the log entry to store. Nothing of `self` changes.
    pub fn prepare(
        &self,
        player: u8,
        action: WireAction,
        now: u64,
        request_id: Option<&str>,
    ) -> Result<Prepared, ApiError> {
        let action = match action {
            WireAction::Play { cards, declared } => Action::Play { cards, declared },
            WireAction::Pass => Action::Pass,
        };
        self.prepare_entry(
            Entry {
                player,
                action,
                at: now,
            },
            request_id,
        )
    }

    /// The player leaves (escape).
    pub fn prepare_leave(&self, player: u8, now: u64) -> Result<Prepared, ApiError> {
        self.prepare_entry(
            Entry {
                player,
                action: Action::Leave,
                at: now,
            },
            None,
        )
    }

    /// The seat to act timed out: the engine plays for it.
    pub fn prepare_timeout(&self, now: u64) -> Result<Prepared, ApiError> {
        let seat = self
            .game
            .turn()
            .ok_or_else(|| ApiError::new(Reason::GameOver, "no seat to act"))?;
        let player = self
            .game
            .seating()
            .get(seat as usize)
            .copied()
            .unwrap_or(seat);
        self.prepare_entry(
            Entry {
                player,
                action: Action::Timeout,
                at: now,
            },
            None,
        )
    }

    fn prepare_entry(&self, entry: Entry, request_id: Option<&str>) -> Result<Prepared, ApiError> {
        let mut game = self.game.clone();
        let events = game.apply(self.hooks.as_ref(), entry).map_err(game_error)?;
        let stored = Stored {
            entry,
            request_id: request_id.map(str::to_string),
            hash: game.state_hash_with(self.record.hash_scheme),
        };
        let body = serde_json::to_vec(&stored)
            .map_err(|e| ApiError::new(Reason::StoreFailed, e.to_string()))?;
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
        self.push(p.stored, p.events);
        Submitted {
            seq: self.game.seq(),
        }
    }

    fn record_metrics(&self, events: &[Event]) {
        let variant = &self.record.variant;
        for e in events {
            match e {
                Event::Played { hand, .. } => {
                    crate::metrics::play(variant, hand.kind.name(), hand.stars, hand.is_bomb());
                }
                Event::DealEnded(r) => {
                    crate::metrics::deal_settled(variant, outcome_name(r.outcome));
                }
                _ => {}
            }
        }
    }

    fn viewer(access: Access) -> Viewer {
        match access {
            Access::Player(p) => Viewer::Player(p),
            Access::Spectator => Viewer::Spectator,
            Access::Admin => Viewer::Admin,
        }
    }

    // ---- responses ----

    /// The SubmitPlay response for the action at `seq`, as `player` sees it.
    pub fn response_for(&self, seq: u64, player: u8) -> Result<pb::SubmitPlayResponse, ApiError> {
        let (at, events) = self
            .events
            .get(seq as usize)
            .ok_or_else(|| ApiError::new(Reason::BadRequest, format!("no action {seq}")))?;
        let viewer = Viewer::Player(player);
        let mut resp = pb::SubmitPlayResponse {
            seq,
            ..Default::default()
        };
        for e in events {
            match e {
                Event::Played { cards, hand, .. } if resp.play.is_none() => {
                    resp.play = Some(convert::play(*cards, hand));
                }
                Event::DealEnded(r) => resp.deal_result = Some(deal_result(r)),
                Event::MatchEnded { totals } => {
                    resp.match_result = Some(pb::MatchResult {
                        scores: totals.iter().map(|c| convert::points(*c)).collect(),
                        deals: self.game.results().len() as u32,
                    })
                }
                _ => {}
            }
            resp.events.push(self.event(seq, *at, e, viewer));
        }
        Ok(resp)
    }

    /// The LeaveGame response.
    pub fn leave_response(
        &self,
        s: &Submitted,
        player: u8,
    ) -> Result<pb::LeaveGameResponse, ApiError> {
        let r = self.response_for(s.seq, player)?;
        Ok(pb::LeaveGameResponse {
            seq: s.seq,
            deal_result: r.deal_result,
        })
    }

    /// Every event after seq `after`, as `access` may see them; `None` = from the beginning,
    /// including the creation events (seq 0).
    pub fn events_after(&self, after: Option<u64>, access: Access) -> Vec<pb::GameEvent> {
        let viewer = Live::viewer(access);
        let start = after.map_or(0, |a| a as usize + 1);
        let mut out = Vec::new();
        for (seq, (at, events)) in self.events.iter().enumerate().skip(start) {
            for e in events {
                out.push(self.event(seq as u64, *at, e, viewer));
            }
        }
        out
    }

    fn event(&self, seq: u64, at: u64, e: &Event, viewer: Viewer) -> pb::GameEvent {
        use pb::game_event::Event as E;
        let e = self.game.event_view(e, viewer);
        let event = match e {
            Event::DealStarted {
                deal_number,
                players,
                leader,
                shown_card,
                hands,
            } => {
                let seat = match viewer {
                    Viewer::Player(p) => players.iter().position(|&x| x == p),
                    _ => None,
                };
                let hand = seat
                    .and_then(|s| hands.get(s))
                    .map(|h| h.ids())
                    .unwrap_or_default();
                let partner_hand = seat
                    .filter(|_| self.game.partners_see_hands() && players.len() == 4)
                    .and_then(|s| hands.get((s + 2) % 4))
                    .map(|h| h.ids())
                    .unwrap_or_default();
                E::DealStarted(pb::DealStarted {
                    deal_number,
                    hand,
                    shown_card: shown_card.id(),
                    leader: u32::from(leader),
                    players: players.iter().map(|&p| u32::from(p)).collect(),
                    partner_hand,
                })
            }
            Event::Played {
                seat,
                cards,
                hand,
                cards_left,
                auto,
            } => E::Played(pb::Played {
                seat: u32::from(seat),
                play: Some(convert::play(cards, &hand)),
                cards_left: u32::from(cards_left),
                auto,
            }),
            Event::Passed { seat, auto } => E::Passed(pb::Passed {
                seat: u32::from(seat),
                auto,
            }),
            Event::TrickWon {
                winner,
                leader,
                jie_feng,
            } => E::TrickWon(pb::TrickWon {
                winner: u32::from(winner),
                leader: u32::from(leader),
                jie_feng,
            }),
            Event::PlayerOut { seat, place } => E::PlayerOut(pb::PlayerOut {
                seat: u32::from(seat),
                place: u32::from(place),
            }),
            Event::Escaped { seat, reason } => E::Escaped(pb::Escaped {
                seat: u32::from(seat),
                reason: match reason {
                    EscapeReason::Left => "left",
                    EscapeReason::Disconnected => "disconnected",
                    EscapeReason::Timeouts => "timeouts",
                }
                .into(),
            }),
            Event::DealEnded(r) => E::DealEnded(deal_result(&r)),
            Event::MatchEnded { totals } => E::MatchEnded(pb::MatchResult {
                scores: totals.iter().map(|c| convert::points(*c)).collect(),
                deals: self.game.results().len() as u32,
            }),
            Event::Disconnected { seat } | Event::Reconnected { seat } => E::Passed(pb::Passed {
                seat: u32::from(seat),
                auto: true,
            }),
        };
        pb::GameEvent {
            seq,
            at: at as i64,
            event: Some(event),
        }
    }

    /// GetState for a viewer.
    pub fn state(&self, access: Access) -> pb::GetStateResponse {
        let v = self.game.view(Live::viewer(access));
        let seats = v
            .seats
            .iter()
            .map(|s| pb::SeatState {
                seat: u32::from(s.seat),
                player: u32::from(s.player),
                name: self
                    .record
                    .players
                    .get(s.player as usize)
                    .cloned()
                    .unwrap_or_default(),
                card_count: u32::from(s.card_count),
                place: u32::from(s.place),
                team: u32::from(s.team),
                score: convert::points(s.total),
                auto_play: s.disconnected,
            })
            .collect();
        let trick = pb::Trick {
            leader: u32::from(v.trick_leader),
            top: v.top.map(|t| convert::play(t.cards, &t.hand)),
            top_seat: v.top.map(|t| u32::from(t.seat)),
            passed: v.passed.iter().map(|&s| u32::from(s)).collect(),
        };
        pb::GetStateResponse {
            seq: v.seq,
            phase: match v.phase {
                Phase::Playing => pb::Phase::Playing,
                Phase::Finished => pb::Phase::Finished,
            } as i32,
            deal_number: v.deal_number,
            turn_seat: v.turn.map(u32::from),
            turn_deadline: v.deadline.map_or(0, |d| d as i64),
            hand: v.hand.ids(),
            partner_hand: v.partner_hand.map(|h| h.ids()).unwrap_or_default(),
            seats,
            trick: Some(trick),
            scores: Some(pb::Scores {
                total: v.totals.iter().map(|c| convert::points(*c)).collect(),
                deals: v.results.iter().map(deal_result).collect(),
            }),
            variant: self.record.variant.clone(),
            variant_version: self.record.version.clone(),
            your_seat: v.your_seat.map(u32::from),
            shown_card: Some(v.shown_card.id()),
            finishing_order: v.finishing_order.iter().map(|&s| u32::from(s)).collect(),
            deals: v.deals,
        }
    }

    /// GetHints for a player.
    pub fn hints(&self, player: u8) -> Result<pb::GetHintsResponse, ApiError> {
        if self.finished() {
            return Err(ApiError::new(Reason::GameOver, "the match is over"));
        }
        let seat = self
            .game
            .seat_of(player)
            .ok_or_else(|| ApiError::new(Reason::BadRequest, "no such player"))?;
        let your_turn = self.game.turn() == Some(seat);
        let (plays, can_pass) = self.game.legal_plays(seat);
        let hand = self.game.hand(seat);
        let plays = plays
            .iter()
            .filter_map(|p| {
                hand.take(p.cards)
                    .map(|cards| convert::play(cards, &p.hand))
            })
            .collect();
        Ok(pb::GetHintsResponse {
            plays,
            can_pass: can_pass && your_turn,
            your_turn,
        })
    }

    /// GetReplay.
    pub fn replay(&self) -> pb::GetReplayResponse {
        let actions = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let (kind, cards, declared) = match s.entry.action {
                    Action::Play { cards, declared } => (
                        "play",
                        cards.ids(),
                        declared.map(|d| pb::Declared {
                            r#type: convert::hand_type(d.kind) as i32,
                            key: d.key.map(|k| k.symbol().to_string()).unwrap_or_default(),
                        }),
                    ),
                    Action::Pass => ("pass", Vec::new(), None),
                    Action::Leave => ("leave", Vec::new(), None),
                    Action::Timeout => ("timeout", Vec::new(), None),
                    Action::Disconnect => ("disconnect", Vec::new(), None),
                    Action::Reconnect => ("reconnect", Vec::new(), None),
                    Action::ReconnectExpired => ("reconnect_expired", Vec::new(), None),
                };
                pb::ReplayAction {
                    seq: i as u64 + 1,
                    player: u32::from(s.entry.player),
                    kind: kind.into(),
                    cards,
                    declared,
                    at: s.entry.at as i64,
                    state_hash: s.hash.clone(),
                }
            })
            .collect();
        pb::GetReplayResponse {
            seed: self.record.seed.clone(),
            variant: self.record.variant.clone(),
            variant_version: self.record.version.clone(),
            actions,
            options: self.record.options.clone().into_iter().collect(),
            // The deals the match was created with: an escape shortens the match in the engine
            // state, but a replay starts from the configuration at creation.
            deals: Live::config(&self.record, &self.hooks, true).deals,
            preset_hands: self.record.preset_hands.as_ref().map(|h| pb::PresetHands {
                hands: h
                    .iter()
                    .map(|c| pb::CardList { cards: c.clone() })
                    .collect(),
            }),
            final_scores: self
                .game
                .totals()
                .iter()
                .map(|c| convert::points(*c))
                .collect(),
            engine_version: crate::game::ENGINE_VERSION.into(),
            created_at: self.record.created_at as i64,
            turn_ms: self.game.config().turn_ms.unwrap_or(0),
            max_consecutive_timeouts: self.game.config().max_consecutive_timeouts,
            reconnect_ms: self.game.config().reconnect_ms,
        }
    }

    /// The engine state (tests, tools).
    pub fn game(&self) -> &Game {
        &self.game
    }
}

/// An action applied to a copy, waiting for the store.
pub struct Prepared {
    pub log: LogEntry,
    game: Game,
    events: Vec<Event>,
    stored: Stored,
}

impl Prepared {
    pub fn finished(&self) -> bool {
        self.game.phase() == Phase::Finished
    }
}

fn outcome_name(o: Option<Outcome>) -> &'static str {
    match o {
        Some(Outcome::Double) => "double",
        Some(Outcome::Single) => "single",
        Some(Outcome::Draw) => "draw",
        None => "escape",
    }
}

fn deal_result(r: &DealResult) -> pb::DealResult {
    pb::DealResult {
        deal_number: r.deal_number,
        outcome: match r.outcome {
            Some(Outcome::Double) => pb::Outcome::Double,
            Some(Outcome::Single) => pb::Outcome::Single,
            Some(Outcome::Draw) => pb::Outcome::Draw,
            None => pb::Outcome::Escape,
        } as i32,
        places: r.places.iter().map(|&s| u32::from(s)).collect(),
        scores: r
            .settlement
            .scores
            .iter()
            .map(|c| convert::points(*c))
            .collect(),
        lines: r
            .settlement
            .lines
            .iter()
            .map(|l| pb::ScoreLine {
                seat: u32::from(l.seat),
                label: l.label.clone(),
                amount: convert::points(l.amount),
                detail: l.detail.clone(),
            })
            .collect(),
        players: r.players.iter().map(|&p| u32::from(p)).collect(),
        escaped: r.escaped.map(u32::from),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hand::{Declared, HandType};

    #[test]
    fn stored_entries_read_back() {
        let cards = CardSet::from_ids(&[0, 53, 54, 107]).unwrap();
        let actions = [
            Action::Play {
                cards,
                declared: None,
            },
            Action::Play {
                cards,
                declared: Some(Declared {
                    kind: HandType::Bomb,
                    key: None,
                }),
            },
            Action::Pass,
            Action::Leave,
            Action::Timeout,
            Action::Disconnect,
            Action::Reconnect,
            Action::ReconnectExpired,
        ];
        for (i, action) in actions.into_iter().enumerate() {
            let stored = Stored {
                entry: Entry {
                    player: 3,
                    action,
                    at: 1_700_000_000_000 + i as u64,
                },
                request_id: (i % 2 == 0).then(|| format!("r{i}")),
                hash: "ab".repeat(32),
            };
            let bytes = serde_json::to_vec(&stored).unwrap();
            let back: Stored = serde_json::from_slice(&bytes)
                .unwrap_or_else(|e| panic!("{}: {e}", String::from_utf8_lossy(&bytes)));
            assert_eq!(back.entry, stored.entry);
            assert_eq!(back.request_id, stored.request_id);
            assert_eq!(back.hash, stored.hash);
        }
        let bad: Result<Stored, _> = serde_json::from_slice(
            br#"{"entry":{"player":0,"action":{"kind":"fly"},"at":1},"hash":""}"#,
        );
        assert!(bad.is_err());
    }
}
