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

use super::flow::Turns;
use super::hooks::{BombFact, Centi, InHandWorth, VariantHooks};
use crate::accessors::accessors;
use crate::cards::{Card, CardSet, RankCounts};
use crate::determinism::{Encoding, HashPrefix, replay_log, state_hash, state_hash_from};
use crate::game::engine_error::EngineError;
use crate::moves;
use crate::rules::Rules;
use crate::seat::{Player, Seat, Seating};
use serde::{Deserialize, Serialize};

mod actions;
mod chained;
mod kept;
mod packed;
mod results;
#[cfg(test)]
mod tests;
mod types;

pub use actions::SETTLEMENT_FAILED;
use actions::Step;
pub use results::{RESULTS_KEPT, Results};
pub use types::{Action, DealResult, Entry, Event, GameConfig, GameError, HashScheme, Phase, Top};

/// The engine version recorded with every game (part of what the state is a function of).
pub const ENGINE_VERSION: &str = concat!("shuangkou-engine/", env!("CARGO_PKG_VERSION"));

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
            return Err(EngineError::Setup(format!("{n} players")).into());
        }
        // Incoherent rules (e.g. more cards dealt than the decks hold) would break the deal.
        rules
            .validate()
            .map_err(|e| EngineError::Setup(format!("bad rules: {e}")))?;
        if config.deals == 0 {
            return Err(EngineError::Setup("a match has at least one deal".into()).into());
        }
        if let Some(p) = &preset {
            if p.len() != n {
                return Err(EngineError::Setup(format!(
                    "preset hands for {} seats, not {n}",
                    p.len()
                ))
                .into());
            }
            let mut all = CardSet::EMPTY;
            for (seat, h) in p.iter().enumerate() {
                // An empty hand could be chosen to lead and would then have no legal action.
                if h.is_empty() || h.len() > rules.hand_size as usize {
                    return Err(EngineError::Setup(format!(
                        "preset hand of seat {seat} has {} cards (1..={} allowed)",
                        h.len(),
                        rules.hand_size
                    ))
                    .into());
                }
                if !h.intersection(all).is_empty() {
                    return Err(EngineError::Setup("a card is in two preset hands".into()).into());
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
            shown_card: Card::new(0).map_err(|e| EngineError::Setup(e.to_string()))?,
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
        Ok(replay_log(self, entries, hashes, apply, Game::state_hash)
            .map_err(EngineError::Replay)?)
    }

    // ---- accessors ----

    accessors! {
        copy {
            phase: Phase, seq: u64, deal_number: u32, deadline: Option<u64>, trick_leader: Seat,
            shown_card: Card,
        }
        borrow { config: GameConfig, rules: Rules, seating: Seating, out: [Seat], totals: [Centi] }
    }
    pub fn players(&self) -> u8 {
        self.rules.players
    }
    pub fn turn(&self) -> Option<Seat> {
        (self.phase == Phase::Playing).then_some(self.turn)
    }
    pub fn top(&self) -> Option<&Top> {
        self.top.as_ref()
    }
    pub fn hand(&self, seat: Seat) -> CardSet {
        self.hands.get(seat.index()).copied().unwrap_or_default()
    }
    /// The settled deals kept in memory, oldest first (the latest [`RESULTS_KEPT`]; every one
    /// after [`Game::keep_every_result`]): deals `results_first_kept() + 1 ..= results_settled()`,
    /// decoded from the compact form they are kept in.
    pub fn results(&self) -> Vec<DealResult> {
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
    /// the deals settled), decoded.
    pub fn results_in(&self, range: std::ops::Range<u32>) -> Option<Vec<DealResult>> {
        let first = self.results.first_kept();
        let start = range.start.checked_sub(first)? as usize;
        let end = range.end.checked_sub(first)? as usize;
        self.results.kept_at(start..end)
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
        self.state_hash_from(scheme, &HashPrefix::default())
    }

    /// [`Game::state_hash_with`], resumed from `prefix` where the encoding starts with it (the
    /// game's own, [`Game::hash_prefix`], kept beside it: the same hash without compressing
    /// the configuration, rules and seed again on every action).
    pub fn state_hash_from(&self, scheme: HashScheme, prefix: &HashPrefix) -> String {
        match scheme {
            HashScheme::Json => state_hash(self, Encoding::Json),
            HashScheme::Compact => state_hash_from(self, Encoding::Compact, prefix),
            // The state without its settled deals, borrowed (no copy), then the digest that
            // stands for them.
            HashScheme::Chained => chained::chained_hash(self, prefix),
        }
    }

    /// The [`HashPrefix`] of this game's compact state encodings: the whole blocks of its
    /// configuration, rules, seed and preset hands, which no action changes (an escape's
    /// shorter match does, and the hash is then computed whole: the prefix is a shortcut,
    /// checked byte for byte).
    pub fn hash_prefix(&self) -> HashPrefix {
        chained::prefix(self)
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
}

/// The bombs a hand still holds, in their best arrangement (see [`super::bombs::in_hand`]:
/// disjoint bombs, wild jokers assigned, what the variant pays for them by level (`worth`) as
/// high as possible, then Σ 2^stars — or 2^cards under the classic order; an exact search).
pub fn best_bombs(
    seat: Seat,
    hand: RankCounts,
    rules: &Rules,
    worth: Option<&InHandWorth>,
) -> Vec<BombFact> {
    super::bombs::in_hand(hand, seat, rules, worth)
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
