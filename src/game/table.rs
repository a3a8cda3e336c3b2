//! The table: one match of Shuangkou as a deterministic state machine.
//!
//! Owns [`Game`]: dealing from a 256-bit seed (ChaCha20, one stream per deal), seating through the
//! variant's hook, turns, passes, tricks, 接風, going out, the deal's outcome and settlement,
//! escapes, turn deadlines and auto-play (托管), matches of several deals, per-viewer views and
//! the action log. The state is a pure function of (engine version, variant version, seed,
//! preset hands, actions): [`Game::replay`] re-executes a log and checks the state hash after
//! every step.
//!
//! Check, then apply: `apply` validates everything before it changes anything, and what the
//! variant hooks return is validated before it is applied, so a rejected action (or a failing
//! hook) leaves the game byte-identical. "Now" is an input; the core never reads a clock.
//!
//! Seats are positions in turn order for the current deal (partner = seat + 2 in 4-player games);
//! players are the people (index = their seat in the first deal = their token). Seat swaps of the
//! shown-card rule move players between seats and persist into later deals.

use std::sync::Arc;

use rand::seq::SliceRandom;
use rand::{Rng, RngCore};
use rand_chacha::ChaCha20Rng;
use serde::{Deserialize, Serialize};

use super::flow::Turns;
use super::hooks::{
    BombFact, Centi, DealFacts, EscapeFacts, EscapeReason, HookError, Outcome, PreviousDeal,
    SeatingFacts, Settlement, TimeoutFacts, VariantHooks,
};
use crate::cards::{Card, CardSet, RankCounts};
use crate::classify;
use crate::determinism::{
    Divergence, Encoding, apply_atomically, deal_stream, replay_log, state_hash,
};
use crate::hand::{Declared, Hand, PlayError};
use crate::moves;
use crate::rules::Rules;
use crate::seat::{Player, Seat, Seating};

mod chained;

/// The engine version recorded with every game (part of what the state is a function of).
pub const ENGINE_VERSION: &str = concat!("shuangkou-engine/", env!("CARGO_PKG_VERSION"));

/// How a state hash is computed (recorded with each stored game, so a game verifies under the
/// scheme it was played with).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HashScheme {
    /// SHA-256 of the JSON form (games recorded before the compact scheme).
    #[default]
    Json,
    /// SHA-256 of the postcard form (games recorded before the chained scheme).
    Compact,
    /// SHA-256 of the postcard form with the settled deals replaced by a running digest of them
    /// ([`Results`]): the cost of a hash does not grow with the match (every new game).
    Chained,
}

/// Settings of one match.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameConfig {
    /// Variant id and pinned version (content hash).
    pub variant: String,
    pub version: String,
    /// Deals in the match (≥ 1).
    pub deals: u32,
    /// Milliseconds a seat has to act; `None` = no deadlines.
    pub turn_ms: Option<u64>,
    /// Consecutive timeouts after which the variant decides whether the seat escaped.
    pub max_consecutive_timeouts: u32,
    /// How long a disconnected player may stay away (90 s by default).
    pub reconnect_ms: u64,
}

impl GameConfig {
    /// `deals` deals of `variant` at `version` with the engine's defaults: no turn deadline, the
    /// variant asked after 3 consecutive timeouts, a 90 s reconnect window (what simulations,
    /// the arena, benchmarks and tests play; change a field with struct update syntax).
    pub fn new(variant: impl Into<String>, version: impl Into<String>, deals: u32) -> GameConfig {
        GameConfig {
            variant: variant.into(),
            version: version.into(),
            deals,
            turn_ms: None,
            max_consecutive_timeouts: 3,
            reconnect_ms: 90_000,
        }
    }
}

/// What a player does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Action {
    /// Play these physical cards, optionally declaring the interpretation.
    Play {
        cards: CardSet,
        declared: Option<Declared>,
    },
    /// Pass (過).
    Pass,
    /// Leave the game (an escape, 逃跑).
    Leave,
    /// The seat to act let its deadline pass: the engine plays for it by the old rule (托管:
    /// pass where it may, else the weakest lead). Logs written before [`Action::Auto`] hold it
    /// and replay with that rule.
    Timeout,
    /// The service played for the seat to act (托管 by a bot): these cards, or a pass when
    /// `cards` is empty, marked automatic. Accepted once the seat's deadline passed (counted as a
    /// timeout, so the variant may rule an escape) or while its player is disconnected.
    Auto {
        cards: CardSet,
        declared: Option<Declared>,
    },
    /// The player's connection dropped.
    Disconnect,
    /// The player is back.
    Reconnect,
    /// The reconnect window of a disconnected player ran out.
    ReconnectExpired,
    /// An operator ended the match (AbortGame): the deal in progress is not settled, the totals
    /// stay those of the settled deals. Logged with the player 0 (no player acts).
    Abort,
}

/// One entry of the action log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The acting player (for `Timeout`, the player whose turn it was).
    pub player: Player,
    pub action: Action,
    /// Milliseconds since the Unix epoch when the action was accepted.
    pub at: u64,
}

/// Where the match is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Playing,
    Finished,
}

/// Why an action was rejected. The reasons are stable (the service maps them to API reasons).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    #[error("the match is over")]
    GameOver,
    #[error("no player {0}")]
    NoSuchPlayer(Player),
    #[error("it is seat {turn}'s turn, not seat {seat}'s")]
    NotYourTurn { seat: Seat, turn: Seat },
    #[error("the seat does not hold these cards")]
    CardsNotHeld,
    #[error("{0}")]
    Play(PlayError),
    #[error("the seat leads this trick and cannot pass")]
    MustLead,
    #[error("the turn deadline has not passed")]
    NotDue,
    #[error("the player is not disconnected")]
    NotDisconnected,
    #[error("the reconnect window has not run out")]
    WindowOpen,
    #[error("variant hook failed: {0}")]
    Hook(#[from] HookError),
    #[error("bad game setup: {0}")]
    Setup(String),
    #[error("{0}")]
    Replay(#[from] Divergence),
}

/// The top play of the current trick.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Top {
    pub seat: Seat,
    pub cards: CardSet,
    pub hand: Hand,
}

/// A settled deal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DealResult {
    pub deal_number: u32,
    /// `None` when the deal ended by an escape.
    pub outcome: Option<Outcome>,
    pub escaped: Option<Seat>,
    /// Seats in finishing order.
    pub places: Vec<Seat>,
    /// The player at each seat of that deal.
    pub players: Seating,
    pub settlement: Settlement,
}

/// Something that happened, in full (views redact it per viewer).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "event")]
pub enum Event {
    DealStarted {
        deal_number: u32,
        /// Player at each seat.
        players: Seating,
        leader: Seat,
        shown_card: Card,
        /// Every seat's hand (redacted in views).
        hands: Vec<CardSet>,
    },
    Played {
        seat: Seat,
        cards: CardSet,
        hand: Hand,
        cards_left: u8,
        auto: bool,
    },
    Passed {
        seat: Seat,
        auto: bool,
    },
    TrickWon {
        winner: Seat,
        leader: Seat,
        jie_feng: bool,
    },
    PlayerOut {
        seat: Seat,
        place: u8,
    },
    Escaped {
        seat: Seat,
        reason: EscapeReason,
    },
    /// A player who had already gone out this deal left (or let the reconnect window run out):
    /// not an escape; the deal plays on and the match ends with it (docs/VARIANTS.md, "Leaving
    /// after going out").
    Left {
        seat: Seat,
    },
    DealEnded(DealResult),
    MatchEnded {
        totals: Vec<Centi>,
    },
    /// The match was aborted by an operator (no MatchEnded follows).
    Aborted,
    Disconnected {
        seat: Seat,
    },
    Reconnected {
        seat: Seat,
    },
}

/// The state of one match.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Game {
    config: GameConfig,
    #[serde(with = "crate::rules::compact")]
    rules: Rules,
    partners_see_hands: bool,
    seed: [u8; 32],
    preset: Option<Vec<CardSet>>,
    phase: Phase,
    /// Actions accepted so far.
    seq: u64,
    deal_number: u32,
    /// Player at each seat.
    seating: Seating,
    /// Hand of each seat.
    hands: Vec<CardSet>,
    /// Every card dealt this deal (hands plus the table).
    dealt: CardSet,
    shown_card: Card,
    turn: Seat,
    trick_leader: Seat,
    top: Option<Top>,
    /// Seats that passed since the top play (bit per seat).
    passed: u8,
    /// Seats in the order they went out.
    out: Vec<Seat>,
    bombs: Vec<BombFact>,
    deadline: Option<u64>,
    /// Consecutive timeouts by seat.
    timeouts: Vec<u32>,
    /// When each player disconnected (by player).
    disconnected: Vec<Option<u64>>,
    totals: Vec<Centi>,
    results: Results,
}

/// How many settled deals a live game keeps in memory (the latest ones: a default GetState
/// page, `service::wire::view::DEFAULT_RESULTS_LIMIT`); earlier ones are read back from the
/// store (`service::history::settled_deals`), so a game's memory does not grow with its match.
pub const RESULTS_KEPT: usize = 16;

/// The settled deals of a match: how many, a running digest of all of them for the chained
/// state hash (`digest_k = SHA-256(digest_{k-1} ‖ postcard(result_k))`, `digest_0` all zeros),
/// the latest [`RESULTS_KEPT`] in full, shared between copies of the state (the service prepares
/// each action on a copy: only a deal's end copies them), and each player's losing streak (the
/// bots' tilt, over the whole match). A game hashed with a whole-list scheme
/// ([`HashScheme::Json`], [`HashScheme::Compact`]) keeps every deal ([`Game::keep_every_result`]).
/// Serialized as the kept list; read back, the list is taken as the whole match (the digest and
/// streaks are recomputed from it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Results {
    list: Arc<Vec<DealResult>>,
    settled: u32,
    digest: [u8; 32],
    /// Deals in a row each player's team has lost (first place on the other team), by player.
    streaks: Vec<u32>,
    keep_all: bool,
}

impl Results {
    /// Settles one more deal.
    pub fn push(&mut self, result: DealResult) {
        self.digest = chain(&self.digest, &result);
        self.settled = self.settled.saturating_add(1);
        let players = result.players.iter().count();
        self.streaks.resize(self.streaks.len().max(players), 0);
        let first = result.places.first().copied();
        for (seat, player) in result.players.iter() {
            let lost = first.is_some_and(|f| seat.team() != f.team());
            if let Some(n) = self.streaks.get_mut(player.index()) {
                *n = if lost { n.saturating_add(1) } else { 0 };
            }
        }
        let list = Arc::make_mut(&mut self.list);
        if !self.keep_all && list.len() >= RESULTS_KEPT {
            list.remove(0);
        }
        list.push(result);
    }

    /// How many deals are settled.
    pub fn settled(&self) -> u32 {
        self.settled
    }

    /// The deals kept in memory, oldest first: the last `settled()` − `first_kept()` ones.
    pub fn kept(&self) -> &[DealResult] {
        &self.list
    }

    /// The index (0-based, deal number − 1) of the first deal kept in memory.
    pub fn first_kept(&self) -> u32 {
        self.settled - self.list.len() as u32
    }

    /// No deal settled yet, for a game hashed with `scheme` (a whole-list scheme keeps every
    /// deal in memory: [`Game::keep_every_result`]).
    pub fn for_scheme(scheme: HashScheme) -> Results {
        Results {
            keep_all: scheme != HashScheme::Chained,
            ..Results::default()
        }
    }
}

/// The next link of the results digest.
fn chain(digest: &[u8; 32], result: &DealResult) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(digest);
    h.update(postcard::to_stdvec(result).unwrap_or_default());
    h.finalize().into()
}

impl Serialize for Results {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.list.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Results {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Results, D::Error> {
        let list = Vec::<DealResult>::deserialize(d)?;
        let mut results = Results::default();
        for r in list {
            results.push(r);
        }
        Ok(results)
    }
}

fn deal_rng(seed: &[u8; 32], deal_number: u32) -> ChaCha20Rng {
    deal_stream(b"shuangkou-deal", seed, deal_number)
}

/// The twin of a card: the same rank and suit in the other deck.
fn twin(card: Card) -> Card {
    let id = card.id();
    let other = if id >= 54 { id - 54 } else { id + 54 };
    Card::new(other).unwrap_or(card)
}

/// What every step of an action carries down the rules: the variant's hooks, the time the action
/// was accepted, and the events it emits, in order.
struct Step<'a> {
    hooks: &'a dyn VariantHooks,
    now: u64,
    events: &'a mut Vec<Event>,
}

impl Game {
    /// Starts a match: deals the first deal and seats it through the variant's hook.
    pub fn new(
        config: GameConfig,
        hooks: &dyn VariantHooks,
        seed: [u8; 32],
        preset: Option<Vec<CardSet>>,
        now: u64,
    ) -> Result<(Game, Vec<Event>), GameError> {
        let rules = *hooks.rules();
        let n = rules.players as usize;
        if n != 2 && n != 4 {
            return Err(GameError::Setup(format!("{n} players")));
        }
        // Incoherent rules (e.g. more cards dealt than the decks hold) would break the deal.
        rules
            .validate()
            .map_err(|e| GameError::Setup(format!("bad rules: {e}")))?;
        if config.deals == 0 {
            return Err(GameError::Setup("a match has at least one deal".into()));
        }
        if let Some(p) = &preset {
            if p.len() != n {
                return Err(GameError::Setup(format!(
                    "preset hands for {} seats, not {n}",
                    p.len()
                )));
            }
            let mut all = CardSet::EMPTY;
            for (seat, h) in p.iter().enumerate() {
                // An empty hand could be chosen to lead and would then have no legal action.
                if h.is_empty() || h.len() > rules.hand_size as usize {
                    return Err(GameError::Setup(format!(
                        "preset hand of seat {seat} has {} cards (1..={} allowed)",
                        h.len(),
                        rules.hand_size
                    )));
                }
                if !h.intersection(all).is_empty() {
                    return Err(GameError::Setup("a card is in two preset hands".into()));
                }
                all = all.union(*h);
            }
        }
        let mut game = Game {
            config,
            rules,
            partners_see_hands: hooks.partners_see_hands(),
            seed,
            preset,
            phase: Phase::Playing,
            seq: 0,
            deal_number: 0,
            seating: Seating::identity(rules.players),
            hands: vec![CardSet::EMPTY; n],
            dealt: CardSet::EMPTY,
            shown_card: Card::new(0).map_err(|e| GameError::Setup(e.to_string()))?,
            turn: Seat::default(),
            trick_leader: Seat::default(),
            top: None,
            passed: 0,
            out: Vec::new(),
            bombs: Vec::new(),
            deadline: None,
            timeouts: vec![0; n],
            disconnected: vec![None; n],
            totals: vec![0; n],
            results: Results::default(),
        };
        let mut events = Vec::new();
        game.start_deal(&mut Step {
            hooks,
            now,
            events: &mut events,
        })?;
        Ok((game, events))
    }

    /// Re-executes a log on the game as [`Game::new`] started it (with the log's creation time),
    /// checking `hashes` (the state hash after each entry, when given) at every step.
    pub fn replay(
        self,
        hooks: &dyn VariantHooks,
        entries: &[Entry],
        hashes: Option<&[String]>,
    ) -> Result<Game, GameError> {
        let apply = |g: &mut Game, e| g.apply(hooks, e).map(drop);
        Ok(replay_log(self, entries, hashes, apply, Game::state_hash)?)
    }

    // ---- accessors ----

    pub fn config(&self) -> &GameConfig {
        &self.config
    }
    pub fn rules(&self) -> &Rules {
        &self.rules
    }
    pub fn players(&self) -> u8 {
        self.rules.players
    }
    pub fn phase(&self) -> Phase {
        self.phase
    }
    pub fn seq(&self) -> u64 {
        self.seq
    }
    pub fn deal_number(&self) -> u32 {
        self.deal_number
    }
    pub fn turn(&self) -> Option<Seat> {
        (self.phase == Phase::Playing).then_some(self.turn)
    }
    pub fn deadline(&self) -> Option<u64> {
        self.deadline
    }
    pub fn top(&self) -> Option<&Top> {
        self.top.as_ref()
    }
    pub fn trick_leader(&self) -> Seat {
        self.trick_leader
    }
    pub fn seating(&self) -> &Seating {
        &self.seating
    }
    pub fn hand(&self, seat: Seat) -> CardSet {
        self.hands.get(seat.index()).copied().unwrap_or_default()
    }
    pub fn out(&self) -> &[Seat] {
        &self.out
    }
    pub fn shown_card(&self) -> Card {
        self.shown_card
    }
    pub fn totals(&self) -> &[Centi] {
        &self.totals
    }
    /// The settled deals kept in memory, oldest first (the latest [`RESULTS_KEPT`]; every one
    /// after [`Game::keep_every_result`]): deals `results_first_kept() + 1 ..= results_settled()`.
    pub fn results(&self) -> &[DealResult] {
        self.results.kept()
    }
    /// How many deals of the match are settled.
    pub fn results_settled(&self) -> u32 {
        self.results.settled()
    }
    /// The index (deal number − 1) of the first settled deal kept in memory.
    pub fn results_first_kept(&self) -> u32 {
        self.results.first_kept()
    }
    /// The settled deals with indexes (deal number − 1) in `range`, when this state keeps them
    /// all in memory (`None` when the range reaches before [`Game::results_first_kept`] or past
    /// the deals settled).
    pub fn results_in(&self, range: std::ops::Range<u32>) -> Option<&[DealResult]> {
        let first = self.results.first_kept();
        let start = range.start.checked_sub(first)? as usize;
        let end = range.end.checked_sub(first)? as usize;
        self.results.kept().get(start..end)
    }
    /// Deals in a row `player`'s team has lost (first place on the other team), this match.
    pub fn lost_streak(&self, player: Player) -> u32 {
        self.results
            .streaks
            .get(player.index())
            .copied()
            .unwrap_or(0)
    }
    /// Keeps every settled deal in memory from now on (a game hashed with a whole-list scheme:
    /// its state hash covers the list) when `scheme` is one; a no-op for [`HashScheme::Chained`].
    pub fn keep_every_result(&mut self, scheme: HashScheme) {
        if scheme != HashScheme::Chained {
            self.results.keep_all = true;
        }
    }

    /// A copy of the state without its settled deals (a snapshot stores those apart, a deal's
    /// result once, not the whole list at every deal: `service::session::snapshot`).
    pub fn without_results(&self) -> Game {
        let mut bare = self.clone();
        bare.results = Results {
            keep_all: self.results.keep_all,
            ..Results::default()
        };
        bare
    }

    /// The state with `results` as its settled deals (built with [`Results::push`], from the
    /// first deal on): the inverse of [`Game::without_results`]. The caller checks the state
    /// hash it must have.
    pub fn with_results(mut self, results: Results) -> Game {
        self.results = results;
        self
    }
    pub fn passed_seats(&self) -> Vec<Seat> {
        Seat::all(self.players())
            .filter(|s| self.passed & s.bit() != 0)
            .collect()
    }
    pub fn partners_see_hands(&self) -> bool {
        self.partners_see_hands
    }
    /// Every bomb played this deal, in order (public: they were played on the table).
    pub fn bombs_played(&self) -> &[BombFact] {
        &self.bombs
    }
    pub fn is_disconnected(&self, player: Player) -> bool {
        self.disconnected_since(player).is_some()
    }
    /// When `player` disconnected (the time of its logged `Disconnect`), while it is away.
    pub fn disconnected_since(&self, player: Player) -> Option<u64> {
        self.disconnected.get(player.index()).copied().flatten()
    }

    /// The same game with the hands replaced (same seats, any cards): for testing that views do
    /// not depend on cards a viewer cannot see. `None` unless every hand keeps its size and the
    /// hands stay disjoint and within the cards dealt.
    pub fn with_hands(&self, hands: Vec<CardSet>) -> Option<Game> {
        if hands.len() != self.hands.len() {
            return None;
        }
        let mut all = CardSet::EMPTY;
        for (new, old) in hands.iter().zip(&self.hands) {
            if new.len() != old.len() || !new.intersection(all).is_empty() {
                return None;
            }
            all = all.union(*new);
        }
        let mut g = self.clone();
        g.hands = hands;
        Some(g)
    }

    /// The seat a player sits at this deal.
    pub fn seat_of(&self, player: Player) -> Option<Seat> {
        self.seating.seat_of(player)
    }

    /// The partner seat (4 players).
    pub fn partner(&self, seat: Seat) -> Option<Seat> {
        seat.partner(self.players())
    }

    /// Cards not dealt this deal (the 54 unused cards of the 2-player game).
    pub fn unused(&self) -> CardSet {
        CardSet::FULL.difference(self.dealt)
    }

    /// Cards played this deal (on the table).
    pub fn played(&self) -> CardSet {
        self.dealt
            .difference(self.hands.iter().fold(CardSet::EMPTY, |a, h| a.union(*h)))
    }

    /// The state hash: SHA-256 of the state's compact canonical encoding, hex.
    ///
    /// The encoding is postcard (its stable 1.x wire format) of the state's serde representation:
    /// the same fields, in declaration order, as the JSON form, without field names. It runs on
    /// every action (the service records it with each log entry and verifies it on every
    /// replay), where the JSON form was the largest single cost of `SubmitPlay`. The settled
    /// deals enter it as their running digest ([`HashScheme::Chained`], [`Results`]), so its cost
    /// does not grow with the match. Games recorded with the JSON or the whole-list compact form
    /// keep theirs ([`HashScheme::Json`], [`HashScheme::Compact`], [`Game::state_hash_with`]).
    pub fn state_hash(&self) -> String {
        self.state_hash_with(HashScheme::Chained)
    }

    /// The state hash under a given scheme (games stored before the compact scheme verify with
    /// the JSON one).
    pub fn state_hash_with(&self, scheme: HashScheme) -> String {
        match scheme {
            HashScheme::Json => state_hash(self, Encoding::Json),
            HashScheme::Compact => state_hash(self, Encoding::Compact),
            // The state without its settled deals, borrowed (no copy), then the digest that
            // stands for them.
            HashScheme::Chained => chained::chained_hash(self),
        }
    }

    /// True when the seat to act has let its deadline pass at `now`.
    pub fn deadline_passed(&self, now: u64) -> bool {
        self.phase == Phase::Playing && self.deadline.is_some_and(|d| now >= d)
    }

    /// The legal plays of a seat against the current trick (leads when it leads), weakest first,
    /// and whether it may pass.
    pub fn legal_plays(&self, seat: Seat) -> (Vec<moves::Play>, bool) {
        let mut plays = Vec::new();
        let can_pass = self.legal_plays_into(seat, &mut plays);
        (plays, can_pass)
    }

    /// As [`Game::legal_plays`], into a reused buffer (cleared first); returns whether the seat
    /// may pass.
    pub fn legal_plays_into(&self, seat: Seat, plays: &mut Vec<moves::Play>) -> bool {
        let hand = self.hand(seat).rank_counts();
        let prev = self.top.as_ref().map(|t| &t.hand);
        moves::legal_plays_into(hand, prev, &self.rules, plays);
        self.top.is_some()
    }

    // ---- actions ----

    /// Applies an action (check, then apply). On error nothing changed.
    pub fn apply(
        &mut self,
        hooks: &dyn VariantHooks,
        entry: Entry,
    ) -> Result<Vec<Event>, GameError> {
        if self.phase == Phase::Finished {
            return Err(GameError::GameOver);
        }
        if entry.player.index() >= self.players() as usize {
            return Err(GameError::NoSuchPlayer(entry.player));
        }
        let mut events = Vec::new();
        // Plays that do not go out and passes are fully checked before any change and call no
        // hook, so they apply in place. Anything that may call a hook (going out ends tricks and
        // deals, escapes, timeouts) works on a copy, so a hook failure half-way leaves `self`
        // untouched.
        let in_place = match entry.action {
            Action::Pass => true,
            Action::Play { cards, .. } => self
                .seat_of(entry.player)
                .is_some_and(|s| self.hand(s).difference(cards) != CardSet::EMPTY),
            _ => false,
        };
        apply_atomically(self, in_place, |g| {
            let mut step = Step {
                hooks,
                now: entry.at,
                events: &mut events,
            };
            g.apply_inner(entry, &mut step)?;
            g.seq += 1;
            Ok::<(), GameError>(())
        })?;
        Ok(events)
    }

    fn apply_inner(&mut self, entry: Entry, step: &mut Step<'_>) -> Result<(), GameError> {
        let seat = self
            .seat_of(entry.player)
            .ok_or(GameError::NoSuchPlayer(entry.player))?;
        let now = step.now;
        match entry.action {
            Action::Play { cards, declared } => {
                self.check_turn(seat)?;
                let hand = self.check_play(seat, cards, declared)?;
                self.timeouts[seat.index()] = 0;
                self.play(seat, cards, hand, false, step)
            }
            Action::Pass => {
                self.check_turn(seat)?;
                if self.top.is_none() {
                    return Err(GameError::MustLead);
                }
                self.timeouts[seat.index()] = 0;
                self.pass(seat, false, step);
                Ok(())
            }
            Action::Leave => self.escape(seat, EscapeReason::Left, step),
            Action::Timeout => {
                self.check_turn(seat)?;
                // A disconnected seat may be played for before its deadline (托管 at once).
                if !self.deadline_passed(now) && !self.is_disconnected(entry.player) {
                    return Err(GameError::NotDue);
                }
                if self.count_timeout(step.hooks, seat)? {
                    return self.escape(seat, EscapeReason::Timeouts, step);
                }
                self.auto_play(seat, step)
            }
            Action::Auto { cards, declared } => {
                self.check_turn(seat)?;
                if self.deadline_passed(now) {
                    if self.count_timeout(step.hooks, seat)? {
                        return self.escape(seat, EscapeReason::Timeouts, step);
                    }
                } else if !self.is_disconnected(entry.player) {
                    return Err(GameError::NotDue);
                }
                if cards.is_empty() {
                    if self.top.is_none() {
                        return Err(GameError::MustLead);
                    }
                    self.pass(seat, true, step);
                    return Ok(());
                }
                let hand = self.check_play(seat, cards, declared)?;
                self.play(seat, cards, hand, true, step)
            }
            Action::Disconnect => {
                if self.disconnected[entry.player.index()].is_none() {
                    self.disconnected[entry.player.index()] = Some(now);
                    step.events.push(Event::Disconnected { seat });
                }
                Ok(())
            }
            Action::Reconnect => {
                if self.disconnected[entry.player.index()].take().is_none() {
                    return Err(GameError::NotDisconnected);
                }
                step.events.push(Event::Reconnected { seat });
                Ok(())
            }
            Action::Abort => {
                self.phase = Phase::Finished;
                self.deadline = None;
                self.top = None;
                step.events.push(Event::Aborted);
                Ok(())
            }
            Action::ReconnectExpired => {
                let Some(since) = self.disconnected[entry.player.index()] else {
                    return Err(GameError::NotDisconnected);
                };
                if now < since.saturating_add(self.config.reconnect_ms) {
                    return Err(GameError::WindowOpen);
                }
                let facts = TimeoutFacts {
                    seat,
                    consecutive_timeouts: self.timeouts[seat.index()],
                    disconnected: true,
                };
                if step.hooks.timeout_is_escape(&facts)? {
                    self.escape(seat, EscapeReason::Disconnected, step)
                } else {
                    Ok(())
                }
            }
        }
    }

    /// Counts a timeout of the seat to act; true when the variant rules it an escape.
    fn count_timeout(&mut self, hooks: &dyn VariantHooks, seat: Seat) -> Result<bool, GameError> {
        let count = self.timeouts[seat.index()] + 1;
        self.timeouts[seat.index()] = count;
        if count < self.config.max_consecutive_timeouts.max(1) {
            return Ok(false);
        }
        let facts = TimeoutFacts {
            seat,
            consecutive_timeouts: count,
            // `disconnected` means "the reconnect window ran out" (hooks.rs): a turn timeout of a
            // disconnected seat is not that; `ReconnectExpired` decides.
            disconnected: false,
        };
        Ok(hooks.timeout_is_escape(&facts)?)
    }

    fn check_turn(&self, seat: Seat) -> Result<(), GameError> {
        if seat != self.turn {
            return Err(GameError::NotYourTurn {
                seat,
                turn: self.turn,
            });
        }
        Ok(())
    }

    fn check_play(
        &self,
        seat: Seat,
        cards: CardSet,
        declared: Option<Declared>,
    ) -> Result<Hand, GameError> {
        if cards.is_empty() || !cards.is_subset(self.hand(seat)) {
            return Err(GameError::CardsNotHeld);
        }
        let prev = self.top.as_ref().map(|t| t.hand);
        classify::resolve(cards.rank_counts(), prev.as_ref(), declared, &self.rules)
            .map_err(GameError::Play)
    }

    /// 托管: pass where passing is legal, otherwise the weakest legal lead.
    fn auto_play(&mut self, seat: Seat, step: &mut Step<'_>) -> Result<(), GameError> {
        if self.top.is_some() {
            self.pass(seat, true, step);
            return Ok(());
        }
        let hand = self.hand(seat);
        let lead = moves::weakest_lead(hand.rank_counts(), &self.rules)
            .ok_or_else(|| GameError::Setup("the seat to act holds no card".into()))?;
        let cards = hand
            .take(lead.cards)
            .ok_or_else(|| GameError::Setup("auto-play picked cards not held".into()))?;
        self.play(seat, cards, lead.hand, true, step)
    }

    fn set_turn(&mut self, seat: Seat, now: u64) {
        self.turn = seat;
        self.deadline = self.config.turn_ms.map(|ms| now.saturating_add(ms));
    }

    fn play(
        &mut self,
        seat: Seat,
        cards: CardSet,
        hand: Hand,
        auto: bool,
        step: &mut Step<'_>,
    ) -> Result<(), GameError> {
        let s = seat.index();
        self.hands[s] = self.hands[s].difference(cards);
        let left = self.hands[s].len() as u8;
        if hand.is_bomb() {
            self.bombs.push(bomb_fact(seat, cards.rank_counts(), &hand));
        }
        self.top = Some(Top { seat, cards, hand });
        self.passed = 0;
        step.events.push(Event::Played {
            seat,
            cards,
            hand,
            cards_left: left,
            auto,
        });
        if left == 0 {
            self.out.push(seat);
            step.events.push(Event::PlayerOut {
                seat,
                place: self.out.len() as u8,
            });
            if self.deal_is_over() {
                return self.end_deal(step);
            }
        }
        let next = self.next_active_after(seat);
        self.set_turn(next, step.now);
        Ok(())
    }

    fn pass(&mut self, seat: Seat, auto: bool, step: &mut Step<'_>) {
        self.passed |= seat.bit();
        step.events.push(Event::Passed { seat, auto });
        let Some(top) = self.top else { return };
        if self.trick_open(top.seat, self.passed) {
            let next = self.next_active_after(seat);
            self.set_turn(next, step.now);
            return;
        }
        // Everyone else passed: the trick goes to the top play (or by 接風 to its partner).
        let (leader, jie_feng) = self.leader_after_trick(top.seat);
        step.events.push(Event::TrickWon {
            winner: top.seat,
            leader,
            jie_feng,
        });
        self.top = None;
        self.passed = 0;
        self.trick_leader = leader;
        self.set_turn(leader, step.now);
    }

    /// Every seat in finishing order ([`Turns::finishing_places`]).
    fn places(&self) -> Vec<Seat> {
        self.finishing_places(self.turn)
    }

    /// Cards left in each seat's hand, by seat.
    fn cards_left(&self) -> Vec<u8> {
        Seat::all(self.players())
            .map(|s| self.hand(s).len() as u8)
            .collect()
    }

    fn bombs_in_hands(&self) -> Vec<Vec<BombFact>> {
        Seat::all(self.players())
            .map(|s| best_bombs(s, self.hand(s).rank_counts(), &self.rules))
            .collect()
    }

    fn end_deal(&mut self, step: &mut Step<'_>) -> Result<(), GameError> {
        let places = self.places();
        let outcome = self
            .deal_outcome(&places, &self.rules)
            .ok_or_else(|| GameError::Setup("deal ended without an outcome".into()))?;
        let facts = DealFacts {
            players: self.players(),
            deal_number: self.deal_number,
            outcome,
            places: places.clone(),
            cards_left: self.cards_left(),
            bombs_played: self.bombs.clone(),
            bombs_in_hand: self.bombs_in_hands(),
        };
        let settlement = step.hooks.settle(&facts)?;
        self.settle(Some(outcome), None, places, settlement, step)
    }

    fn escape(
        &mut self,
        seat: Seat,
        reason: EscapeReason,
        step: &mut Step<'_>,
    ) -> Result<(), GameError> {
        if self.out.contains(&seat) {
            // Gone out already (no cards, no more turns this deal): not an escape. The partner
            // plays on, the deal is settled as usual, and the match ends with this deal (the
            // player is gone). RULES.md says nothing on it; see docs/VARIANTS.md.
            self.config.deals = self.deal_number;
            step.events.push(Event::Left { seat });
            return Ok(());
        }
        let facts = EscapeFacts {
            players: self.players(),
            deal_number: self.deal_number,
            escaper: seat,
            reason,
            places: self.out.clone(),
            cards_left: self.cards_left(),
            bombs_played: self.bombs.clone(),
            bombs_in_hand: self.bombs_in_hands(),
        };
        // The escape path never traps the table: an escape settlement that fails (a script
        // error or a malformed result) ends the deal with no points exchanged and the failure
        // recorded in a `settlement_failed` line per seat.
        let players = self.players();
        let settlement = step
            .hooks
            .settle_escape(&facts)
            .map_err(GameError::Hook)
            .and_then(|s| check_settlement(&s, players).map(|()| s))
            .unwrap_or_else(|e| failed_settlement(players, &e));
        step.events.push(Event::Escaped { seat, reason });
        let places = self.places();
        // An escape ends the deal and the match: the player is gone.
        self.config.deals = self.deal_number;
        self.settle(None, Some(seat), places, settlement, step)
    }

    fn settle(
        &mut self,
        outcome: Option<Outcome>,
        escaped: Option<Seat>,
        places: Vec<Seat>,
        settlement: Settlement,
        step: &mut Step<'_>,
    ) -> Result<(), GameError> {
        check_settlement(&settlement, self.players())?;
        for ((_, player), score) in self.seating.iter().zip(&settlement.scores) {
            let total = &mut self.totals[player.index()];
            *total = total.saturating_add(*score);
        }
        let result = DealResult {
            deal_number: self.deal_number,
            outcome,
            escaped,
            places,
            players: self.seating.clone(),
            settlement,
        };
        self.results.push(result.clone());
        step.events.push(Event::DealEnded(result));
        if self.deal_number >= self.config.deals {
            self.phase = Phase::Finished;
            self.deadline = None;
            self.top = None;
            step.events.push(Event::MatchEnded {
                totals: self.totals.clone(),
            });
            return Ok(());
        }
        self.start_deal(step)
    }

    /// Deals the next deal and seats it.
    fn start_deal(&mut self, step: &mut Step<'_>) -> Result<(), GameError> {
        self.deal_number += 1;
        let n = self.players() as usize;
        let size = self.rules.hand_size as usize;
        let mut rng = deal_rng(&self.seed, self.deal_number);
        let hands: Vec<CardSet> = match (&self.preset, self.deal_number) {
            (Some(p), 1) => p.clone(),
            _ => {
                let mut deck: Vec<Card> = Card::all().collect();
                deck.shuffle(&mut rng);
                (0..n)
                    .map(|s| deck[s * size..(s + 1) * size].iter().copied().collect())
                    .collect()
            }
        };
        let dealt = hands.iter().fold(CardSet::EMPTY, |a, h| a.union(*h));
        let dealt_cards: Vec<Card> = dealt.iter().collect();
        let shown = *dealt_cards
            .get(rng.random_range(0..dealt_cards.len().max(1)))
            .ok_or_else(|| GameError::Setup("nothing dealt".into()))?;
        let holder = |c: Card| hands.iter().position(|h| h.contains(c)).map(Seat::at);
        let previous = self.results.list.last().map(|r| PreviousDeal {
            outcome: r.outcome,
            // The previous deal's seats, mapped to the seats those players have now.
            places: r
                .places
                .iter()
                .filter_map(|&s| r.players.player_at(s).and_then(|p| self.seat_of(p)))
                .collect(),
            escaped: r
                .escaped
                .and_then(|s| r.players.player_at(s).and_then(|p| self.seat_of(p))),
        });
        let facts = SeatingFacts {
            players: n as u8,
            deal_number: self.deal_number,
            shown_card: shown,
            shown_holders: [holder(shown), holder(twin(shown))],
            previous,
            random: rng.next_u64(),
        };
        let decision = step.hooks.seating(&facts)?;
        if decision.leader.index() >= n {
            return Err(GameError::Hook(HookError::invalid(
                "seating",
                format!("leader {} is not a seat", decision.leader),
            )));
        }
        let mut hands = hands;
        let mut leader = decision.leader;
        if let Some((a, b)) = decision.swap {
            if a.index() >= n || b.index() >= n || a == b {
                return Err(GameError::Hook(HookError::invalid(
                    "seating",
                    format!("swap ({a}, {b}) is not two different seats"),
                )));
            }
            self.seating.swap(a, b);
            hands.swap(a.index(), b.index());
            if leader == a {
                leader = b;
            } else if leader == b {
                leader = a;
            }
        }
        self.hands = hands;
        self.dealt = dealt;
        self.shown_card = shown;
        self.top = None;
        self.passed = 0;
        self.out.clear();
        self.bombs.clear();
        self.timeouts = vec![0; n];
        self.trick_leader = leader;
        self.set_turn(leader, step.now);
        step.events.push(Event::DealStarted {
            deal_number: self.deal_number,
            players: self.seating.clone(),
            leader,
            shown_card: shown,
            hands: self.hands.clone(),
        });
        Ok(())
    }
}

fn bomb_fact(seat: Seat, cards: RankCounts, hand: &Hand) -> BombFact {
    super::bombs::fact(seat, cards, hand)
}

/// The label of the lines of a settlement the variant could not compute.
pub const SETTLEMENT_FAILED: &str = "settlement_failed";

/// The settlement recorded when the variant's escape settlement fails: no points, one
/// [`SETTLEMENT_FAILED`] line per seat saying why (at most 256 characters).
fn failed_settlement(players: u8, error: &GameError) -> Settlement {
    let detail: String = format!("the variant's settlement failed, no points exchanged: {error}")
        .chars()
        .take(256)
        .collect();
    Settlement {
        scores: vec![0; players as usize],
        lines: Seat::all(players)
            .map(|seat| super::hooks::LineItem {
                seat,
                label: SETTLEMENT_FAILED.to_string(),
                amount: 0,
                detail: detail.clone(),
            })
            .collect(),
    }
}

/// Checks a settlement's shape: one score per seat, and each seat's lines add up to its score.
fn check_settlement(s: &Settlement, players: u8) -> Result<(), GameError> {
    let bad = |message: String| GameError::Hook(HookError::invalid("settle", message));
    if s.scores.len() != players as usize {
        return Err(bad(format!(
            "{} scores for {players} seats",
            s.scores.len()
        )));
    }
    let mut sums = vec![0i64; players as usize];
    for l in &s.lines {
        let slot = sums
            .get_mut(l.seat.index())
            .ok_or_else(|| bad(format!("line for seat {}", l.seat)))?;
        *slot = slot.saturating_add(l.amount);
    }
    if s.lines.is_empty() {
        return Ok(());
    }
    for (seat, (sum, score)) in sums.iter().zip(&s.scores).enumerate() {
        if sum != score {
            return Err(bad(format!(
                "seat {seat}: lines add up to {sum}, score is {score}"
            )));
        }
    }
    Ok(())
}

/// The bombs a hand still holds, in their best arrangement (see [`super::bombs::in_hand`]:
/// disjoint bombs, wild jokers assigned, Σ 2^stars — or 2^cards under the classic order — as
/// high as possible; an exact search).
pub fn best_bombs(seat: Seat, hand: RankCounts, rules: &Rules) -> Vec<BombFact> {
    super::bombs::in_hand(hand, seat, rules)
}

/// The engine's table for the shared turn rules.
impl Turns for Game {
    fn seat_count(&self) -> u8 {
        self.players()
    }
    fn cards_left(&self, seat: Seat) -> u32 {
        self.hand(seat).len() as u32
    }
    fn out_order(&self) -> &[Seat] {
        &self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::hooks::Settlement;
    use crate::game::testing::PlainHooks;

    /// A 4-player classic game whose hands and finishers are set directly.
    fn game_with(out: &[u8], left: [&str; 4]) -> Game {
        let hooks = PlainHooks::new(Rules::CLASSIC);
        let config = GameConfig::new("places", "test", 1);
        let (mut g, _) = Game::new(config, &hooks, [3; 32], None, 0).unwrap();
        let deck = CardSet::FULL;
        for (seat, cards) in left.iter().enumerate() {
            let ranks: RankCounts = if cards.is_empty() {
                RankCounts::EMPTY
            } else {
                cards.parse().unwrap()
            };
            g.hands[seat] = deck.take(ranks).unwrap();
        }
        g.out = Seat::list(out);
        g
    }

    #[test]
    fn places_after_a_double_follow_turn_order_from_the_second_out() {
        // S0-CL 「當雙扣的情況下按照出牌順序排定第三名和第四名」 (docs/rules/RULES.md A2, §1.5, §8 #24): N and S
        // went out; turn order after S is W, then E, although E holds fewer cards.
        let g = game_with(&[0, 2], ["", "3", "", "4 5 6 7 8"]);
        assert_eq!(g.places(), Seat::list(&[0, 2, 3, 1]));
        // S then N went out: E comes after N, then W.
        let g = game_with(&[2, 0], ["", "3 4 5 6", "", "7"]);
        assert_eq!(g.places(), Seat::list(&[2, 0, 1, 3]));
        // Not a 雙扣 (an escape with N and E out): fewer cards first, then turn order.
        let g = game_with(&[0, 1], ["", "", "4 5 6 7 8", "3"]);
        assert_eq!(g.places(), Seat::list(&[0, 1, 3, 2]));
    }

    fn result(deal_number: u32, score: Centi) -> DealResult {
        DealResult {
            deal_number,
            outcome: Some(Outcome::Double),
            escaped: None,
            places: Seat::list(&[0, 2, 1, 3]),
            players: Seating::from_players(Player::list(&[0, 1, 2, 3])),
            settlement: Settlement {
                scores: vec![score, -score, score, -score],
                lines: Vec::new(),
            },
        }
    }

    #[test]
    fn the_chained_hash_covers_every_settled_deal_and_survives_a_round_trip() {
        let mut g = game_with(&[], ["3", "4", "5", "6"]);
        let mut seen = std::collections::HashSet::new();
        assert!(seen.insert(g.state_hash_with(HashScheme::Chained)));
        for k in 1..=3 {
            g.results.push(result(k, 400));
            assert!(
                seen.insert(g.state_hash_with(HashScheme::Chained)),
                "deal {k}"
            );
        }
        // An earlier deal that differs changes the hash (the digest chains every result).
        let mut other = game_with(&[], ["3", "4", "5", "6"]);
        for k in 1..=3 {
            other
                .results
                .push(result(k, if k == 1 { 200 } else { 400 }));
        }
        assert_ne!(
            other.state_hash_with(HashScheme::Chained),
            g.state_hash_with(HashScheme::Chained)
        );
        // Read back from either encoding, the digest is recomputed from the list.
        let back: Game = postcard::from_bytes(&postcard::to_stdvec(&g).unwrap()).unwrap();
        assert_eq!(back, g);
        assert_eq!(
            back.state_hash_with(HashScheme::Chained),
            g.state_hash_with(HashScheme::Chained)
        );
        let back: Game = serde_json::from_str(&serde_json::to_string(&g).unwrap()).unwrap();
        assert_eq!(
            back.state_hash_with(HashScheme::Chained),
            g.state_hash_with(HashScheme::Chained)
        );
        // The older schemes still hash the whole list.
        assert_ne!(
            g.state_hash_with(HashScheme::Compact),
            g.state_hash_with(HashScheme::Chained)
        );
    }

    /// A long match keeps its latest `RESULTS_KEPT` deals, its digest and each player's losing
    /// streak over the whole match; the oracles: the whole list kept (a whole-list scheme's
    /// results), the digest folded over it, the streak counted back over it.
    #[test]
    fn a_long_match_keeps_its_latest_deals_and_whole_match_streaks() {
        use rand::SeedableRng;
        let mut rng = ChaCha20Rng::seed_from_u64(7);
        let mut windowed = Results::for_scheme(HashScheme::Chained);
        let mut whole = Results::for_scheme(HashScheme::Compact);
        let mut all = Vec::new();
        for k in 1..=200 {
            let mut r = result(k, 100 * k as Centi);
            r.places.rotate_left(rng.random_range(0..4));
            // Long losing runs for seats 1 and 3 (first place on team 0), the last 30 deals too.
            if k % 50 < 25 || k > 170 {
                r.places = Seat::list(&[0, 1, 2, 3]);
            }
            windowed.push(r.clone());
            whole.push(r.clone());
            all.push(r);
            let n = all.len();
            assert_eq!(windowed.settled() as usize, n);
            assert_eq!(
                windowed.kept(),
                &all[n.saturating_sub(RESULTS_KEPT)..],
                "deal {k}"
            );
            assert_eq!(whole.kept(), &all[..]);
            assert_eq!(windowed.digest, whole.digest);
            for player in Player::all(4) {
                let streak = all
                    .iter()
                    .rev()
                    .take_while(|r| {
                        let mine = r.players.seat_of(player);
                        let first = r.places.first();
                        matches!((mine, first), (Some(m), Some(f)) if m.team() != f.team())
                    })
                    .count() as u32;
                assert_eq!(windowed.streaks.get(player.index()).copied(), Some(streak));
            }
        }
        let mut g = game_with(&[], ["3", "4", "5", "6"]);
        g.results = windowed;
        assert_eq!(g.results_first_kept(), 200 - RESULTS_KEPT as u32);
        assert_eq!(g.results_in(190..200), Some(&all[190..200]));
        assert_eq!(g.results_in(0..10), None, "not kept");
        assert_eq!(g.results_in(195..201), None, "past the deals settled");
        // Deals 150 to 200 (150..=174 and 171..=200): longer than the deals kept.
        assert_eq!(g.lost_streak(Player::new(1)), 51);
        assert_eq!(g.lost_streak(Player::new(0)), 0);
    }
}

#[cfg(test)]
mod encoding_tests {
    use super::*;
    use crate::game::testing::PlainHooks;
    use crate::rules::EqualStarBombs;

    fn game(rules: Rules) -> Game {
        let config = GameConfig::new("encoding", "test", 1);
        Game::new(config, &PlainHooks::new(rules), [5; 32], None, 0)
            .unwrap()
            .0
    }

    #[test]
    fn every_equal_star_setting_round_trips_in_both_encodings() {
        let first = Rules {
            equal_star_bombs: EqualStarBombs::FirstStands,
            ..Rules::HUOPIN
        };
        let default = game(Rules::HUOPIN);
        for g in [default.clone(), game(first)] {
            let compact = postcard::to_allocvec(&g).unwrap();
            assert_eq!(postcard::from_bytes::<Game>(&compact).unwrap(), g);
            let json = serde_json::to_string(&g).unwrap();
            assert_eq!(serde_json::from_str::<Game>(&json).unwrap(), g);
        }
        // The default adds no byte: the same state as before the setting existed.
        let with = game(first);
        assert_eq!(
            postcard::to_allocvec(&with).unwrap().len(),
            postcard::to_allocvec(&default).unwrap().len()
        );
        assert_ne!(with.state_hash(), default.state_hash());
    }
}
