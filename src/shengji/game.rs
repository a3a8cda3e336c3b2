//! The 升級 match as a deterministic state machine: its state, actions, events, errors, the
//! state hash and replay. The rules of each phase are in `deal` (dealing, 亮主, the bottom rule,
//! the exchange) and `play` (tricks, 摳底, upgrade, next dealer, match end).
//!
//! The state is a pure function of (engine version, seed, setup, actions): the deck of every deal
//! is shuffled by the deal's ChaCha20 stream (`crate::determinism`), and [`Game::replay`]
//! re-executes a log checking the state hash after every step. Check, then apply: an action is
//! validated completely before anything changes, and the one action that calls hooks (the last
//! card of a deal) works on a copy, so a rejected action leaves the game byte-identical.
//!
//! Seats are `crate::seat::Seat`s 0..4 in turn order; the teams are {0, 2} (team 0) and {1, 3}
//! (team 1). Nobody changes seats in 升級, so a player is the seat of its number. Seats serialize
//! as plain numbers (logs and state hashes read as when they were `u8`). Pure: no async, wire,
//! script, store or metrics types.

use serde::{Deserialize, Serialize};

use super::hooks::{ShengjiHooks, Upgrade};
use super::order::{EffSuit, Level, ONE_DECK, Order, SEATS};
use crate::accessors::accessors;
use crate::cards::{Card, CardSet, Suit};
use crate::determinism::{Encoding, apply_atomically, replay_log, state_hash};
use crate::game::engine_error::EngineError;
use crate::seat::Seat;

/// The engine version recorded with every 升級 game.
pub const ENGINE_VERSION: &str = concat!("shengji-engine/", env!("CARGO_PKG_VERSION"));

/// The domain label of 升級's deal streams.
pub(crate) const STREAM_DOMAIN: &[u8] = b"shengji-deal";

/// A match already under way: the first deal's dealer and the teams' levels (deal 1 is then not
/// contested).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct Start {
    pub dealer: Seat,
    pub levels: [Level; 2],
}

/// How a match begins.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct Setup {
    /// The 256-bit seed every deal's shuffle (and deal 1's first seat) comes from.
    pub seed: [u8; 32],
    /// The first deal's deck in dealing order (54 distinct cards, ids 0..=53: card `i < 48` goes
    /// to seat `first + i`, the last 6 are the bottom), for hand-built cases; `None`: shuffled.
    pub deck: Option<Vec<Card>>,
    /// `None`: a new match (both teams at 2, the first declarer of deal 1 becomes the dealer).
    pub start: Option<Start>,
}

impl Setup {
    /// A new match from a seed.
    pub fn seeded(seed: [u8; 32]) -> Setup {
        Setup {
            seed,
            deck: None,
            start: None,
        }
    }
}

/// What a seat (or the dealing machine) does.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Action {
    /// The next step of the deal: one card to the next seat, or, when all 48 are dealt, the end of
    /// the deal (the declaring window closes; the dealer takes the bottom).
    Deal,
    /// 亮主: show a level card from the hand; its suit becomes trump.
    Declare { seat: Seat, card: Card },
    /// The dealer buries six cards as the new bottom.
    Bury { seat: Seat, cards: CardSet },
    /// Play one card to the trick.
    Play { seat: Seat, card: Card },
}

/// Where a deal is.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Cards are being dealt; level cards may be declared.
    Dealing,
    /// The dealer holds 18 cards and buries 6.
    Exchange,
    /// Tricks.
    Playing,
    /// The match is over.
    Finished,
}

/// Why an action was rejected. Each names what was wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    #[error("no seat {0} (seats are 0..4)")]
    NoSuchSeat(Seat),
    #[error("card {0} is not in the one-deck game (ids 0..=53)")]
    NotInDeck(u32),
    #[error("{action} is not allowed in phase {phase:?}")]
    WrongPhase { action: &'static str, phase: Phase },
    #[error("seat {seat} does not hold {card}")]
    CardNotHeld { seat: Seat, card: Card },
    #[error("{card} is not a level card of level {level}")]
    NotALevelCard { card: Card, level: Level },
    #[error("trump is already declared by seat {seat} ({card})")]
    AlreadyDeclared { seat: Seat, card: Card },
    #[error("seat {seat} is not the dealer (seat {dealer})")]
    NotTheDealer { seat: Seat, dealer: Seat },
    #[error("the dealer buries exactly 6 cards, not {0}")]
    BuryCount(usize),
    #[error("the dealer does not hold every card to bury")]
    BuryNotHeld,
    #[error("this table does not allow burying point cards ({0} points)")]
    PointsBuried(u32),
    #[error("it is seat {turn}'s turn, not seat {seat}'s")]
    NotYourTurn { seat: Seat, turn: Seat },
    #[error("seat {seat} must follow the led suit {led:?} with one of {legal}")]
    MustFollow {
        seat: Seat,
        led: EffSuit,
        legal: CardSet,
    },
    /// The engine's own rejections: the match is over, a script failed, a bad setup, a replay
    /// that diverged.
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// A settled deal (public once the deal is over, buried cards included).
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct DealResult {
    pub deal_number: u32,
    pub dealer: Seat,
    pub level: Level,
    pub trump: Suit,
    pub buried: CardSet,
    pub buried_points: u32,
    /// Points won in tricks, by team.
    pub trick_points: [u32; 2],
    pub last_trick_winner: Seat,
    /// The 摳底 multiplier applied (0 when the 莊家 side won the last trick).
    pub multiplier: u32,
    /// The 摳底 bonus: buried points × multiplier.
    pub bottom_bonus: u32,
    /// The 閑家's points P (their tricks plus the bonus).
    pub opponents_points: u32,
    pub upgrade: Upgrade,
    pub levels_after: [Level; 2],
    /// `None` when the match ended.
    pub next_dealer: Option<Seat>,
    /// The winning team, when the match ended.
    pub winner: Option<u8>,
}

/// Something that happened, in full; `view::event_view` redacts it per viewer.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "event")]
pub enum Event {
    DealStarted {
        deal_number: u32,
        /// `None` while deal 1 is contested (the first declarer deals).
        dealer: Option<Seat>,
        /// The seat that gets the first card.
        first_seat: Seat,
        levels: [Level; 2],
        level: Level,
    },
    /// One card to a seat (`card` hidden from everyone else).
    CardDealt {
        seat: Seat,
        card: Option<Card>,
    },
    Declared {
        seat: Seat,
        card: Card,
        trump: Suit,
        /// True when the declaration made the seat the dealer (deal 1).
        becomes_dealer: bool,
    },
    /// Nobody declared: the bottom cards, turned over in order, fixed the trump suit.
    BottomTurned {
        cards: Vec<Card>,
        trump: Suit,
    },
    /// The dealer took the bottom (`cards` hidden from everyone else).
    BottomTaken {
        seat: Seat,
        cards: Option<CardSet>,
    },
    /// The dealer buried six cards (`cards` hidden from everyone else).
    Buried {
        seat: Seat,
        cards: Option<CardSet>,
    },
    Played {
        seat: Seat,
        card: Card,
    },
    TrickWon {
        winner: Seat,
        cards: Vec<Card>,
        points: u32,
    },
    DealEnded(DealResult),
    MatchEnded {
        /// The winning team.
        winner: u8,
    },
}

/// The state of one match.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct Game {
    pub(super) setup: Setup,
    pub(super) phase: Phase,
    /// Actions accepted so far.
    pub(super) seq: u64,
    pub(super) deal_number: u32,
    pub(super) levels: [Level; 2],
    /// `None` while deal 1 is contested and nobody declared.
    pub(super) dealer: Option<Seat>,
    /// The seat that got the first card (and deals deal 1 if nobody declares).
    pub(super) first_seat: Seat,
    /// This deal's deck in dealing order.
    pub(super) deck: Vec<Card>,
    /// Cards dealt so far (0..=48).
    pub(super) dealt: u8,
    pub(super) hands: [CardSet; 4],
    pub(super) declaration: Option<(Seat, Card)>,
    pub(super) trump: Option<Suit>,
    /// The bottom as turned over by the no-declaration rule (public); empty otherwise.
    pub(super) turned: Vec<Card>,
    /// The bottom: the six undealt cards, then (after the exchange) the buried ones.
    pub(super) bottom: CardSet,
    pub(super) turn: Seat,
    /// The current trick: (seat, card) in play order.
    pub(super) trick: Vec<(Seat, Card)>,
    pub(super) tricks_played: u8,
    /// Cards won in tricks, by team.
    pub(super) won: [CardSet; 2],
    /// The last completed trick.
    pub(super) last_trick: Vec<(Seat, Card)>,
    pub(super) results: Vec<DealResult>,
    pub(super) winner: Option<u8>,
}

impl Game {
    /// Starts a match: validates the setup and begins deal 1.
    pub fn new(setup: Setup) -> Result<(Game, Vec<Event>), GameError> {
        if let Some(deck) = &setup.deck {
            let set: CardSet = deck.iter().copied().collect();
            if deck.len() != ONE_DECK.len() || set != ONE_DECK {
                return Err(EngineError::Setup(
                    "the preset deck must hold each of the 54 cards 0..=53 once".into(),
                )
                .into());
            }
        }
        let (levels, dealer) = match setup.start {
            Some(s) if s.dealer.number() >= SEATS => return Err(GameError::NoSuchSeat(s.dealer)),
            Some(s) => (s.levels, Some(s.dealer)),
            None => ([Level::TWO; 2], None),
        };
        let mut game = Game {
            setup,
            phase: Phase::Dealing,
            seq: 0,
            deal_number: 0,
            levels,
            dealer,
            first_seat: Seat::default(),
            deck: Vec::new(),
            dealt: 0,
            hands: [CardSet::EMPTY; 4],
            declaration: None,
            trump: None,
            turned: Vec::new(),
            bottom: CardSet::EMPTY,
            turn: Seat::default(),
            trick: Vec::new(),
            tricks_played: 0,
            won: [CardSet::EMPTY; 2],
            last_trick: Vec::new(),
            results: Vec::new(),
            winner: None,
        };
        let mut events = Vec::new();
        game.start_deal(dealer, &mut events);
        Ok((game, events))
    }

    /// Re-executes a log from the start, checking `hashes` (the state hash after each action,
    /// when given) at every step.
    pub fn replay(
        setup: Setup,
        hooks: &dyn ShengjiHooks,
        actions: &[Action],
        hashes: Option<&[String]>,
    ) -> Result<Game, GameError> {
        let (game, _) = Game::new(setup)?;
        let apply = |g: &mut Game, a| g.apply(hooks, a).map(drop);
        Ok(replay_log(game, actions, hashes, apply, Game::state_hash)
            .map_err(EngineError::Replay)?)
    }

    /// Applies an action (check, then apply). On error nothing changed.
    pub fn apply(
        &mut self,
        hooks: &dyn ShengjiHooks,
        action: Action,
    ) -> Result<Vec<Event>, GameError> {
        if self.phase == Phase::Finished {
            return Err(EngineError::GameOver.into());
        }
        let mut events = Vec::new();
        match action {
            Action::Deal => {
                self.check_phase("deal", Phase::Dealing)?;
                self.deal_step(&mut events);
            }
            Action::Declare { seat, card } => {
                self.check_declare(seat, card)?;
                self.declare(seat, card, &mut events);
            }
            Action::Bury { seat, cards } => {
                self.check_bury(hooks, seat, cards)?;
                self.bury(seat, cards, &mut events);
            }
            Action::Play { seat, card } => {
                self.check_play(seat, card)?;
                // The deal's end calls hooks, whose output is validated: it works on a copy.
                let in_place = !self.ends_deal();
                apply_atomically(self, in_place, |g| g.play(hooks, seat, card, &mut events))?;
            }
        }
        self.seq += 1;
        Ok(events)
    }

    pub(super) fn check_phase(&self, action: &'static str, phase: Phase) -> Result<(), GameError> {
        if self.phase != phase {
            return Err(GameError::WrongPhase {
                action,
                phase: self.phase,
            });
        }
        Ok(())
    }

    pub(super) fn check_seat(seat: Seat) -> Result<(), GameError> {
        if seat.number() >= SEATS {
            return Err(GameError::NoSuchSeat(seat));
        }
        Ok(())
    }

    /// The state hash: SHA-256 of the state's postcard encoding, hex.
    pub fn state_hash(&self) -> String {
        state_hash(self, Encoding::Compact)
    }

    // ---- accessors ----

    accessors! {
        copy {
            phase: Phase, seq: u64, deal_number: u32, levels: [Level; 2], dealer: Option<Seat>,
            first_seat: Seat, trump: Option<Suit>, declaration: Option<(Seat, Card)>,
            /// Cards dealt so far this deal.
            dealt: u8,
            /// The bottom: the six undealt cards, then the buried ones.
            bottom: CardSet,
            tricks_played: u8,
            /// Cards won in tricks by each team.
            won: [CardSet; 2],
            /// The winning team, once the match is over.
            winner: Option<u8>,
        }
        borrow {
            setup: Setup, trick: [(Seat, Card)], last_trick: [(Seat, Card)],
            results: [DealResult],
            /// The bottom as turned over (public) when nobody declared.
            turned: [Card],
            /// The deck order of the current deal.
            deck: [Card],
        }
    }
    /// The level played this deal: the 莊家 side's (deal 1 contested: both teams are at 2).
    pub fn level(&self) -> Level {
        let seat = self.dealer.unwrap_or(self.first_seat);
        self.levels[seat.team() as usize]
    }
    /// The card order, once the trump suit is fixed.
    pub fn order(&self) -> Option<Order> {
        self.trump.map(|trump| Order {
            level: self.level(),
            trump,
        })
    }
    pub fn hand(&self, seat: Seat) -> CardSet {
        self.hands.get(seat.index()).copied().unwrap_or_default()
    }
    /// The cards not yet dealt (the bottom included, until the dealer takes it).
    pub fn stock(&self) -> CardSet {
        match self.phase {
            Phase::Dealing => self
                .deck
                .iter()
                .skip(self.dealt as usize)
                .copied()
                .collect(),
            _ => CardSet::EMPTY,
        }
    }
    /// The seat to act in the exchange and play phases.
    pub fn turn(&self) -> Option<Seat> {
        match self.phase {
            Phase::Exchange | Phase::Playing => Some(self.turn),
            _ => None,
        }
    }
    /// Every card played this deal (won tricks and the current trick).
    pub fn played(&self) -> CardSet {
        let trick: CardSet = self.trick.iter().map(|&(_, c)| c).collect();
        self.won[0].union(self.won[1]).union(trick)
    }

    /// The cards `seat` may play now (empty unless it is the seat's turn to play).
    pub fn legal_cards(&self, seat: Seat) -> CardSet {
        match self.order() {
            Some(order) if self.phase == Phase::Playing && seat == self.turn => {
                order.legal_cards(self.hand(seat), self.trick.first().map(|&(_, c)| c))
            }
            _ => CardSet::EMPTY,
        }
    }
}
