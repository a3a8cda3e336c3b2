//! The variant hooks: the contract between the deal engine (core) and a variant's rules.
//!
//! The core computes facts (who holds the shown card, the outcome, places, bombs played, cards
//! and bombs left) and asks the variant to turn them into decisions (who leads, which seats swap)
//! and numbers (scores with a line-item breakdown). The variant never sees or changes the game
//! state itself. The production implementation runs the Rhai scripts of `variants/`
//! (`crate::variants`); tests may implement the trait in plain Rust.
//!
//! Scores are integers in hundredths of a point (`Centi`): 9.5 points is 950. Sum rules are
//! checked exactly and snapshots hash the same on every machine.
//!
//! Depends only on the rules core; no script, async or wire types.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::cards::{Card, RankCounts};
use crate::hand::HandType;
use crate::rules::Rules;

/// A score in hundredths of a point.
pub type Centi = i64;

pub use crate::seat::Seat;

/// How a deal ended, by the places of the winning team (docs/rules/RULES.md §1.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// 雙扣: the winners finished 1st and 2nd (2 players: the loser holds many cards).
    Double,
    /// 單扣: the winners finished 1st and 3rd (2 players: the loser holds a middle number).
    Single,
    /// 平扣: the winners finished 1st and 4th (2 players: the loser holds few cards).
    Draw,
}

impl Outcome {
    /// The stable snake_case name (the serde form): `double`, `single`, `draw`.
    pub const fn name(self) -> &'static str {
        match self {
            Outcome::Double => "double",
            Outcome::Single => "single",
            Outcome::Draw => "draw",
        }
    }

    /// The outcome of a 4-player deal from its places: where the first finisher's partner
    /// finished (2nd 雙扣, 3rd 單扣, 4th 平扣; docs/rules/RULES.md §1.6). `None` if the partner is not
    /// among the places.
    pub fn from_places(places: &[Seat]) -> Option<Outcome> {
        let first = *places.first()?;
        let partner = first.partner(4)?;
        match places.iter().position(|&s| s == partner)? {
            1 => Some(Outcome::Double),
            2 => Some(Outcome::Single),
            3 => Some(Outcome::Draw),
            _ => None,
        }
    }

    /// The outcome of a 2-player deal from the cards the loser holds (docs/rules/RULES.md §1.6: 雙扣 from
    /// `two_player_double_min`, 單扣 from `two_player_single_min`, 平扣 below).
    pub fn from_loser_cards(left: u8, rules: &Rules) -> Outcome {
        if left >= rules.two_player_double_min {
            Outcome::Double
        } else if left >= rules.two_player_single_min {
            Outcome::Single
        } else {
            Outcome::Draw
        }
    }
}

/// Why a player left the deal early (逃跑).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EscapeReason {
    /// The player left (LeaveGame).
    Left,
    /// The player did not come back within the reconnect window.
    Disconnected,
    /// Too many consecutive turn timeouts, and the variant counts that as an escape.
    Timeouts,
}

impl EscapeReason {
    /// The stable snake_case name (the serde form): `left`, `disconnected`, `timeouts`.
    pub const fn name(self) -> &'static str {
        match self {
            EscapeReason::Left => "left",
            EscapeReason::Disconnected => "disconnected",
            EscapeReason::Timeouts => "timeouts",
        }
    }
}

/// What a bomb kept in hand earns its holder under a variant's settlement, by star level: entry
/// `s` is the contribution (in units) of one bomb of `s` stars, and the last entry stands for
/// every level above it ([`VariantHooks::in_hand_worth`]; `super::bombs::in_hand` arranges a
/// hand's bombs for the largest sum of it).
pub type InHandWorth = [u64];

/// A bomb, played or still in a hand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BombFact {
    /// Who played (or holds) it.
    pub seat: Seat,
    /// `bomb`, `three_jokers`, `four_jokers` or `chain_bomb`.
    pub kind: HandType,
    /// The cards, as ranks.
    pub cards: RankCounts,
    /// Number of cards.
    pub len: u8,
    /// Star level (星級 / 線 / 相); `None` under the classic bomb order.
    pub stars: Option<u8>,
    /// Cards per group (the smallest group of a chain bomb).
    pub group: u8,
    /// Links of a chain bomb (1 for other bombs).
    pub links: u8,
}

/// What the seating hook is told before a deal's first lead (docs/rules/RULES.md §7).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatingFacts {
    pub players: u8,
    /// 1 for the first deal of the match.
    pub deal_number: u32,
    /// The shown card (明牌), drawn uniformly from the dealt cards.
    pub shown_card: Card,
    /// The seat holding each physical copy of the shown card's rank and suit: `[holder of the
    /// shown copy, holder of its twin]` (the twin is `None` when it was not dealt, 2 players).
    pub shown_holders: [Option<Seat>; 2],
    /// The previous deal of the match, in the current seating.
    pub previous: Option<PreviousDeal>,
    /// A random number from the deal's seeded generator, for rules that pick at random.
    pub random: u64,
}

/// A summary of the previous deal, with seats in the seating of the deal about to start.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreviousDeal {
    pub outcome: Option<Outcome>,
    /// Finishing order of the previous deal.
    pub places: Vec<Seat>,
    /// The seat that escaped, if the previous deal ended by an escape.
    pub escaped: Option<Seat>,
}

/// The seating hook's decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatingDecision {
    /// Who leads the first trick.
    pub leader: Seat,
    /// Two seats whose players (with their hands) exchange places before play starts, e.g. the
    /// holder of the twin of the shown card and the player opposite the leader.
    pub swap: Option<(Seat, Seat)>,
}

/// What both settlement hooks are told about the table when a deal ends, normally
/// ([`DealFacts`]) or by an escape ([`EscapeFacts`]); flattened into both, so the scripts and
/// the JSON facts see these as fields of the facts themselves.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableFacts {
    pub players: u8,
    pub deal_number: u32,
    /// The finishing order as far as it goes: at a normal end every seat (first the players
    /// who went out, then the rest by cards left, fewer first, then turn order); at an escape
    /// the players already out, in order.
    pub places: Vec<Seat>,
    /// Cards left in each seat's hand, by seat.
    pub cards_left: Vec<u8>,
    /// Every bomb played in the deal, in order.
    pub bombs_played: Vec<BombFact>,
    /// Bombs still in each hand at the end (best arrangement), by seat.
    pub bombs_in_hand: Vec<Vec<BombFact>>,
}

/// What the settlement hook is told when a deal ends normally.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DealFacts {
    #[serde(flatten)]
    pub table: TableFacts,
    pub outcome: Outcome,
}

/// What the escape hook is told when a player escapes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EscapeFacts {
    #[serde(flatten)]
    pub table: TableFacts,
    pub escaper: Seat,
    pub reason: EscapeReason,
}

/// What the timeout hook is told when a seat's turn deadline passes or its reconnect window runs
/// out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeoutFacts {
    pub seat: Seat,
    /// Consecutive turns this seat has timed out, this one included.
    pub consecutive_timeouts: u32,
    /// True when the reconnect window ran out (the seat is disconnected).
    pub disconnected: bool,
}

/// One line of a settlement: why a seat gains or loses points.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineItem {
    pub seat: Seat,
    /// A stable label: `base`, `multiplier`, `contribution`, `rake`, `escape`, …
    pub label: String,
    /// Points, in hundredths.
    pub amount: Centi,
    /// A human-readable explanation ("×4: winners' 6★ bomb", "6★ bomb by seat 2").
    pub detail: String,
}

/// A settlement: per-seat scores and the breakdown behind them. For every seat, the amounts of
/// its line items add up to its score.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Settlement {
    /// Score of each seat, by seat.
    pub scores: Vec<Centi>,
    pub lines: Vec<LineItem>,
}

/// The sum rule a variant declares for its settlements, checked by tests and by the variant
/// registry before a new version activates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SumRule {
    /// Scores add up to zero.
    Zero,
    /// Scores plus the rake taken (line items labelled `rake`, which are negative) add up to
    /// zero: zero-sum before the house's cut.
    ZeroBeforeRake,
    /// No constraint (a table that is not zero-sum, e.g. 百變 平扣 1/0/0/1).
    Unchecked,
}

/// A hook that failed: a script error, an exceeded limit, or output of the wrong shape. The
/// action that needed the hook is rejected and the game stays as it was.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("{hook} failed{}: {message}", location.as_ref().map(|l| format!(" at {l}")).unwrap_or_default())]
pub struct HookError {
    /// The hook (`seating`, `settle`, `settle_escape`, `timeout_is_escape`).
    pub hook: String,
    /// What went wrong.
    pub message: String,
    /// `file:line:column` in the script, when known.
    pub location: Option<String>,
    /// True when a sandbox limit (operations, depth, sizes) was hit.
    pub limit: bool,
}

impl HookError {
    /// A hook whose output has the wrong shape (the engine validates what hooks return).
    pub fn invalid(hook: &str, message: String) -> HookError {
        HookError {
            hook: hook.into(),
            message,
            location: None,
            limit: false,
        }
    }
}

/// A variant's rules as the deal engine sees them.
pub trait VariantHooks: Send + Sync {
    /// The card rules (classification, bomb order, player count).
    fn rules(&self) -> &Rules;
    /// True when partners see each other's hands (雙明, JJ).
    fn partners_see_hands(&self) -> bool;
    /// The sum rule the settlements obey.
    fn sum_rule(&self) -> SumRule;
    /// Who leads the deal, and which seats swap (docs/rules/RULES.md §7).
    fn seating(&self, facts: &SeatingFacts) -> Result<SeatingDecision, HookError>;
    /// Scores of a deal that ended normally.
    fn settle(&self, facts: &DealFacts) -> Result<Settlement, HookError>;
    /// Scores of a deal that ended by an escape.
    fn settle_escape(&self, facts: &EscapeFacts) -> Result<Settlement, HookError>;
    /// Whether a timeout (or an expired reconnect window) counts as an escape.
    fn timeout_is_escape(&self, facts: &TimeoutFacts) -> Result<bool, HookError>;
    /// What a bomb still in a hand at the end of a deal earns its holder, by star level (see
    /// [`InHandWorth`]), when the variant pays contribution (貢獻分) for such bombs
    /// by level: the engine arranges each hand's bombs for the largest sum of it (RULES.md §6.5
    /// 「手中牌貢獻分按最大計算」, §6.7). `None` (the default): nothing by level; the bombs are
    /// arranged for the largest Σ 2^stars.
    fn in_hand_worth(&self) -> Result<Option<Arc<InHandWorth>>, HookError> {
        Ok(None)
    }
}

/// The label of the zero-point note a settlement carries for a seat whose amount the host
/// saturated at its line limit (docs/VARIANTS.md "Saturation").
pub const SATURATED: &str = "saturated";

impl SumRule {
    /// Checks a settlement against the rule; the error says by how much it is off. A saturated
    /// settlement (one with a [`SATURATED`] note) is exempt: capping each amount at the line limit
    /// cannot keep an asymmetric line (e.g. an escape's −3D, +D, +D, +D) summing to zero.
    pub fn check(self, s: &Settlement) -> Result<(), String> {
        if s.lines.iter().any(|l| l.label == SATURATED) {
            return Ok(());
        }
        let total: i128 = s.scores.iter().map(|x| i128::from(*x)).sum();
        let rake: i128 = s
            .lines
            .iter()
            .filter(|l| l.label == "rake")
            .map(|l| i128::from(l.amount))
            .sum();
        match self {
            SumRule::Zero if total != 0 => Err(format!(
                "the scores add up to {total} hundredths (sum rule: zero)"
            )),
            SumRule::ZeroBeforeRake if total - rake != 0 => Err(format!(
                "the scores before the rake add up to {} hundredths (sum rule: zero_before_rake)",
                total - rake
            )),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_serde_form() {
        for o in [Outcome::Double, Outcome::Single, Outcome::Draw] {
            assert_eq!(serde_json::to_value(o).unwrap(), o.name());
        }
        for r in [
            EscapeReason::Left,
            EscapeReason::Disconnected,
            EscapeReason::Timeouts,
        ] {
            assert_eq!(serde_json::to_value(r).unwrap(), r.name());
        }
    }

    #[test]
    fn outcome_by_places_and_by_cards_left() {
        let from =
            |p: &[u8]| Outcome::from_places(&p.iter().map(|&s| Seat::new(s)).collect::<Vec<_>>());
        assert_eq!(from(&[1, 3, 0, 2]), Some(Outcome::Double));
        assert_eq!(from(&[1, 0, 3, 2]), Some(Outcome::Single));
        assert_eq!(from(&[1, 0, 2, 3]), Some(Outcome::Draw));
        assert_eq!(from(&[1, 0]), None);
        // S2: ≥12 雙扣, 7–11 單扣, 1–6 平扣.
        let r = Rules::ERREN;
        assert_eq!(Outcome::from_loser_cards(12, &r), Outcome::Double);
        assert_eq!(Outcome::from_loser_cards(11, &r), Outcome::Single);
        assert_eq!(Outcome::from_loser_cards(7, &r), Outcome::Single);
        assert_eq!(Outcome::from_loser_cards(6, &r), Outcome::Draw);
        assert_eq!(Outcome::from_loser_cards(1, &r), Outcome::Draw);
    }
}
