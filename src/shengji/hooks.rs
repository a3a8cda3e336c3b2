//! The platform settings of 升級 (docs/rules/SHENGJI.md A3) as a hooks trait: the upgrade bands, the 摳底
//! multiplier, whether points may be buried, the match end and the next dealer.
//!
//! As with Shuangkou's `VariantHooks`, the engine computes plain facts and the hooks turn them into
//! plain decisions; they never see or change the game state, and the engine validates what they
//! return before applying it. [`StandardHooks`] is the plain-Rust default (the seed's rules), so
//! the core runs without the script host; a Rhai script implements the same trait later. A failing
//! hook reports Shuangkou's [`HookError`], and the action that needed it is rejected.
//!
//! Pure: depends on `crate::game::hooks::HookError` (a plain struct) and `serde` only.

use serde::{Deserialize, Serialize};

pub use crate::game::hooks::HookError;

use super::order::{Level, SEATS};
use crate::seat::Seat;

/// The two sides of a deal.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// 莊家: the dealer and its partner (「打家」 in the seed's upgrade table).
    Dealer,
    /// 閑家: the other team, who collect points.
    Opponents,
}

/// What the 摳底 hook is told when the 閑家 win the last trick.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct BottomFacts {
    /// Points among the buried cards.
    pub buried_points: u32,
    /// The seat that won the last trick.
    pub last_trick_winner: Seat,
    /// The card that won it.
    pub winning_card: crate::cards::Card,
}

/// What the upgrade hook is told at the end of a deal.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct UpgradeFacts {
    /// The 閑家's points P: their tricks plus the 摳底 bonus.
    pub opponents_points: u32,
    /// The level played (the 莊家 side's).
    pub level: Level,
    /// The 閑家's level.
    pub opponents_level: Level,
}

/// Who goes up, and by how many levels.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct Upgrade {
    pub side: Side,
    /// Levels gained (0..=12; the level is capped at A).
    pub levels: u8,
}

/// What the match-end hook is told after a deal's upgrade.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct MatchFacts {
    /// The team (0: seats 0 and 2, 1: seats 1 and 3) that dealt.
    pub dealer_team: u8,
    /// The level the deal was played at.
    pub level_played: Level,
    /// Levels by team before and after the upgrade.
    pub levels_before: [Level; 2],
    pub levels_after: [Level; 2],
    /// True when the 莊家 side went up (kept the deal).
    pub dealer_kept: bool,
}

/// What the next-dealer hook is told.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct NextDealerFacts {
    /// The dealer of the deal just ended.
    pub dealer: Seat,
    /// True when the 莊家 side went up (kept the deal).
    pub dealer_kept: bool,
}

/// The platform settings of 升級.
pub trait ShengjiHooks: Send + Sync {
    /// Whether the dealer may bury point cards (option `bury_points`).
    fn bury_points_allowed(&self) -> bool;
    /// The 摳底 multiplier on the buried points when the 閑家 win the last trick (1..=100).
    fn bottom_multiplier(&self, facts: &BottomFacts) -> Result<u32, HookError>;
    /// The upgrade on the 閑家's points.
    fn upgrade(&self, facts: &UpgradeFacts) -> Result<Upgrade, HookError>;
    /// The winning team, if the match ends after this deal.
    fn match_winner(&self, facts: &MatchFacts) -> Result<Option<u8>, HookError>;
    /// The dealer of the next deal (a seat 0..4).
    fn next_dealer(&self, facts: &NextDealerFacts) -> Result<Seat, HookError>;
}

/// How the match ends.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Finish {
    /// The first team to reach A wins (「先達到A級的一方為勝方」).
    #[default]
    ReachA,
    /// A team at A must still win a deal as 莊家 at A (option `finish = defend_a`).
    DefendA,
}

/// The seed's rules in plain Rust.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct StandardHooks {
    pub bury_points: bool,
    pub multiplier: u32,
    pub finish: Finish,
}

impl Default for StandardHooks {
    fn default() -> StandardHooks {
        StandardHooks {
            bury_points: true,
            multiplier: 2,
            finish: Finish::ReachA,
        }
    }
}

/// The seed's upgrade table (「0分：打家升三級；40分以下：打家升一級；40-60：閑家升一級；以後每20分
/// 一級」) read as half-open bands on the 閑家's points P: 0 → 莊家 +3; 0 < P < 40 → 莊家 +1;
/// 40 ≤ P < 60 → 閑家 +1; then one more level per further 20 (60 → +2, 80 → +3, …).
pub fn standard_upgrade(points: u32) -> Upgrade {
    match points {
        0 => Upgrade {
            side: Side::Dealer,
            levels: 3,
        },
        1..40 => Upgrade {
            side: Side::Dealer,
            levels: 1,
        },
        _ => Upgrade {
            side: Side::Opponents,
            levels: u8::try_from(1 + (points - 40) / 20)
                .unwrap_or(u8::MAX)
                .min(12),
        },
    }
}

/// The seed's rotation (「莊家升級時，下一副牌由其對家當莊家。閑家上台時，下一副牌由此副牌的莊家的
/// 下家當莊家」): the 莊家 side keeps the deal → the dealer's partner deals; the 閑家 take over →
/// the seat after the dealer.
pub fn standard_next_dealer(facts: &NextDealerFacts) -> Seat {
    match facts.dealer.partner(SEATS) {
        Some(partner) if facts.dealer_kept => partner,
        _ => facts.dealer.next(SEATS),
    }
}

impl ShengjiHooks for StandardHooks {
    fn bury_points_allowed(&self) -> bool {
        self.bury_points
    }

    fn bottom_multiplier(&self, _facts: &BottomFacts) -> Result<u32, HookError> {
        Ok(self.multiplier)
    }

    fn upgrade(&self, facts: &UpgradeFacts) -> Result<Upgrade, HookError> {
        Ok(standard_upgrade(facts.opponents_points))
    }

    fn match_winner(&self, facts: &MatchFacts) -> Result<Option<u8>, HookError> {
        let dealer = facts.dealer_team % 2;
        Ok(match self.finish {
            // The team that went up this deal wins when it is at A now.
            Finish::ReachA => {
                let up = if facts.dealer_kept {
                    dealer
                } else {
                    1 - dealer
                };
                (facts.levels_after[up as usize] == Level::ACE).then_some(up)
            }
            Finish::DefendA => {
                (facts.dealer_kept && facts.level_played == Level::ACE).then_some(dealer)
            }
        })
    }

    fn next_dealer(&self, facts: &NextDealerFacts) -> Result<Seat, HookError> {
        Ok(standard_next_dealer(facts))
    }
}
