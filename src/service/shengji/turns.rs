//! Turns at a 升級 table: whose action the game waits for, how long that seat has (the variant's
//! `turn_seconds`, unless the server runs `--no-turn-timers`), how long a disconnected seat keeps
//! its place (`reconnect_seconds`), and the 托管 decision taken for a seat that let its deadline
//! pass or is disconnected.
//!
//! The seat to act: while dealing, the seat that deals (the deal's first seat: the dealer from
//! deal 2 on, the seed's seat in deal 1; any seat may deal, this one is waited for); in the
//! exchange, the dealer (it buries); in play, the seat whose card the trick waits for.
//!
//! The 托管 decision is the rule bot's (`shengji::bot::RuleBot`) from that seat's [`View`] only,
//! seeded like Shuangkou's (`bots::decision_seed`: the public seed commitment, the seq, the
//! player). While dealing it declares where the bot would (and the engine accepts it), otherwise
//! it deals the rest of the cards and, once all 48 are out, closes the deal: a timed-out dealer
//! costs two deadlines, and every seat can still declare before the close. Pure: no clock read.

use crate::cards::CardSet;
use crate::game::EngineError;
use crate::seat::{Player, Seat};
use crate::service::bots::decision_seed;
use crate::service::status::{ApiError, Reason};
use crate::shengji::bot::RuleBot;
use crate::shengji::{Action, Game, Phase, ShengjiHooks, View};
use crate::variants::{OptionValue, ShengjiScript};

use super::entry::Command;

/// Cards of the bottom (the stock left when all 48 are dealt).
const BOTTOM: u8 = 6;

/// The clock settings of one table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timers {
    /// Milliseconds a seat has to act (the variant's `turn_seconds`): the rule a logged 托管
    /// entry is checked against on replay, whether or not this server times turns out.
    pub turn_ms: u64,
    /// This server times turns out (not `serve --no-turn-timers`).
    pub on: bool,
    /// Milliseconds a disconnected seat keeps its place.
    pub reconnect_ms: u64,
}

fn seconds(hooks: &ShengjiScript, name: &str, default: i64) -> u64 {
    let s = match hooks.option(name) {
        Some(OptionValue::Int(i)) => *i,
        _ => default,
    };
    s.max(1) as u64 * 1000
}

impl Timers {
    /// The variant options' timers; turns are timed out unless the server turns them off.
    pub fn of(hooks: &ShengjiScript, turn_timers: bool) -> Timers {
        Timers {
            turn_ms: seconds(hooks, "turn_seconds", 30),
            on: turn_timers,
            reconnect_ms: seconds(hooks, "reconnect_seconds", 90),
        }
    }

    /// Milliseconds a seat has to act on this server; `None`: no turn deadlines.
    pub fn live_turn_ms(&self) -> Option<u64> {
        self.on.then_some(self.turn_ms)
    }
}

/// The seat the game waits for (`None` once the match is over).
pub fn seat_to_act(game: &Game) -> Option<u8> {
    match game.phase() {
        Phase::Dealing => Some(game.first_seat().number()),
        Phase::Exchange | Phase::Playing => game.turn().map(Seat::number),
        Phase::Finished => None,
    }
}

/// The 托管 decision for `seat` at table seq `seq`, from `view` (that seat's, with the table's
/// seq) only. `game` is used for one thing: to try a declaration the bot wants on a copy (the
/// engine's own rules decide, as GetHints does), so 托管 never sends a refused action.
pub fn decide(
    game: &Game,
    hooks: &ShengjiScript,
    view: &View,
    seed_commitment: &str,
    seat: u8,
) -> Result<Command, ApiError> {
    let seed = decision_seed(seed_commitment, view.seq, Player::new(seat));
    let mut head = [0u8; 8];
    head.copy_from_slice(&seed[..8]);
    let bot = RuleBot {
        seed: u64::from_le_bytes(head),
        bury_points: hooks.bury_points_allowed(),
    };
    let chosen = bot.decide(view);
    let none = || ApiError::new(Reason::Unavailable, "the 托管 bot found no action");
    match view.phase {
        Phase::Dealing => {
            if let Some(Action::Declare { card, .. }) = chosen {
                let declare = Action::Declare {
                    seat: Seat::new(seat),
                    card,
                };
                if game.clone().apply(hooks, declare).is_ok() {
                    return Ok(Command::Declare(card));
                }
            }
            let rest = view.stock_count.saturating_sub(BOTTOM);
            Ok(Command::Deal(u32::from(rest.max(1))))
        }
        Phase::Exchange => match chosen {
            Some(Action::Bury { cards, .. }) => Ok(Command::Bury(cards)),
            _ => Err(none()),
        },
        Phase::Playing => match chosen {
            Some(Action::Play { card, .. }) => Ok(Command::Play(card)),
            _ => lowest(view.legal).map(Command::Play).ok_or_else(none),
        },
        Phase::Finished => Err(EngineError::GameOver.into()),
    }
}

fn lowest(cards: CardSet) -> Option<crate::cards::Card> {
    cards.iter().next()
}
