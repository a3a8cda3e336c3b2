//! Bots: seats played by the engine from a player's view only.
//!
//! Pure and synchronous like the rules core: no async, wire, script, store, logging or metrics
//! types. A bot sees a [`PlayerView`] (its own hand, the partner's hand where the variant shows
//! it, card counts, cards played, the trick, places, scores), the variant's card rules, a
//! settlement to score sampled deals with (any [`VariantHooks`]: the scripts in production, the
//! plain test double in tests) and a seeded RNG. Every decision is a legal play (from
//! [`crate::moves`]) or a pass where passing is legal.
//!
//! - [`view`]: the player view (the only input about the game);
//! - [`plan`]: hand planning (plays still needed, bombs, 記牌);
//! - [`scoring`]: what the settlement pays (deal scores, bomb worth by star level);
//! - [`simple`]: the `basic` (托管) and `greedy` policies;
//! - [`heuristic`]: the `heuristic` policy;
//! - [`world`] and [`search`]: determinized Monte Carlo search over sampled hidden hands;
//! - [`styles`]: named bots, including the six player styles of seed 000.

pub mod heuristic;
pub mod plan;
pub mod scoring;
pub mod search;
pub mod simple;
pub mod styles;
pub mod view;
pub mod world;

use std::time::Duration;

use rand_chacha::ChaCha8Rng;

pub use styles::{BotError, NAMES};
pub use view::PlayerView;

use crate::cards::CardSet;
use crate::game::Action;
use crate::game::hooks::VariantHooks;
use crate::hand::Declared;
use crate::moves::Play;
use scoring::ScoringProfile;

/// What a bot does on its turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Decision {
    Pass,
    Play(Play),
}

impl Decision {
    /// The game action for this decision, with physical cards taken from `hand` (the lowest ids
    /// of each rank) and the interpretation declared; `None` if the hand lacks the cards.
    pub fn action(self, hand: CardSet) -> Option<Action> {
        match self {
            Decision::Pass => Some(Action::Pass),
            Decision::Play(p) => Some(Action::Play {
                cards: hand.take(p.cards)?,
                declared: Some(Declared {
                    kind: p.hand.kind,
                    key: p.hand.key(),
                }),
            }),
        }
    }

    pub fn is_bomb(self) -> bool {
        matches!(self, Decision::Play(p) if p.hand.is_bomb())
    }
}

/// The base policy a bot runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// 托管 as the engine plays it: pass where it may, otherwise lead the weakest play.
    Basic,
    /// The simple rule bot.
    Greedy,
    /// Hand planning, partnership, bombs by need and by score.
    Heuristic,
    /// Determinized Monte Carlo search with heuristic playouts.
    Search,
}

/// How much a search may think: playouts per decision and an optional wall-clock cap. With no
/// time cap a search is a pure function of the view and the seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    pub playouts: u32,
    pub time_cap: Option<Duration>,
}

/// The style parameters every policy reads (see `docs/BOTS.md`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// 0..1: how readily the bot spends high cards and overtakes (raised by tilt).
    pub aggression: f32,
    /// Bombs an opponent who holds the trick when that opponent has at most this many cards.
    pub bomb_threshold: u8,
    /// Bombs whenever a bomb beats the trick (鬥氣型).
    pub bomb_eager: bool,
    /// 0..1: probability it plays with its partner (does not overtake it, feeds it).
    pub support: f32,
    /// 0..1: probability it uses the cards played so far (記牌) in a decision.
    pub memory: f32,
    /// 0..1: probability of a careless decision (any legal one).
    pub noise: f32,
    /// Aggression added per deal its team lost in a row; at 0.5 or more it also bombs eagerly.
    pub tilt: f32,
}

impl Params {
    /// The plain heuristic's settings.
    pub const STANDARD: Params = Params {
        aggression: 0.3,
        bomb_threshold: 6,
        bomb_eager: false,
        support: 1.0,
        memory: 1.0,
        noise: 0.0,
        tilt: 0.0,
    };

    /// The settings after `lost` deals lost in a row.
    pub fn tilted(&self, lost: u32) -> Params {
        let extra = self.tilt * lost as f32;
        Params {
            aggression: (self.aggression + extra).min(1.0),
            bomb_eager: self.bomb_eager || extra >= 0.5,
            bomb_threshold: self
                .bomb_threshold
                .saturating_add((extra * 8.0).min(27.0) as u8),
            ..*self
        }
    }
}

/// A named bot: a policy, its style and its budget.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BotSpec {
    pub name: &'static str,
    pub kind: Kind,
    pub params: Params,
    pub budget: Budget,
}

impl BotSpec {
    /// The name [`styles::spec`] reads back as this bot: `search:N` for a search with N playouts
    /// and no time cap, else the bot's name.
    pub fn label(&self) -> String {
        match (self.kind, self.budget.time_cap) {
            (Kind::Search, None) if self.name == "search" => {
                format!("search:{}", self.budget.playouts)
            }
            _ => self.name.to_string(),
        }
    }
}

/// A bot ready to play one variant: its spec and what that variant's settlement pays.
#[derive(Clone, Debug)]
pub struct Bot {
    spec: BotSpec,
    profile: ScoringProfile,
}

impl Bot {
    /// A bot for the variant whose settlement `hooks` computes.
    pub fn new(spec: BotSpec, hooks: &dyn VariantHooks) -> Bot {
        Bot {
            spec,
            profile: ScoringProfile::probe(hooks),
        }
    }

    /// A bot by name (`basic`, `greedy`, `heuristic`, `search`, `search:N` for N playouts, or a
    /// style: `pingfan`, `sasa`, `chuantong`, `zhuanmen`, `laoshou`, `douqi`).
    pub fn named(name: &str, hooks: &dyn VariantHooks) -> Result<Bot, BotError> {
        Ok(Bot::new(styles::spec(name)?, hooks))
    }

    pub fn spec(&self) -> &BotSpec {
        &self.spec
    }

    pub fn profile(&self) -> &ScoringProfile {
        &self.profile
    }

    /// The decision for the seat of `view`: always a legal play, or a pass where passing is
    /// legal. `scoring` settles the deals a search samples.
    pub fn decide(
        &self,
        view: &PlayerView,
        scoring: &dyn VariantHooks,
        rng: &mut ChaCha8Rng,
    ) -> Decision {
        let params = self.spec.params.tilted(view.lost_streak());
        match self.spec.kind {
            Kind::Basic => simple::basic(view),
            Kind::Greedy => simple::greedy(view),
            Kind::Heuristic => heuristic::decide(view, &params, &self.profile, rng),
            Kind::Search => {
                search::decide(view, &params, &self.profile, self.spec.budget, scoring, rng)
            }
        }
    }
}
