//! Rule settings: every card-rule difference between the variants as one typed value.
//!
//! The classifier (`hand`), the bomb order (`compare`) and the enumerator (`moves`) read these
//! settings and contain no variant-specific constants. docs/rules/RULES.md Part A lists the six variants,
//! §8 the contradictions between sources and the defaults chosen for them. The presets below are
//! the card rules of the six variants; the variant scripts (`variants/*.rhai`) become their single
//! source once they exist. Depends only on `cards`.

use serde::{Deserialize, Serialize};

use crate::cards::{Rank, RankCounts};

/// Which jokers act as wild cards (財神 / 百變 / 千變) when mixed with other cards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WildJokers {
    /// No wild cards (classic 經典雙扣).
    None,
    /// The two big jokers (正司令為財神: 百變, JJ).
    Big,
    /// All four jokers (正負司令為財神: 千變, 二人).
    All,
}

/// Where the four-joker bomb 天王 sits in the bomb order (docs/rules/RULES.md §4.4, §8 #1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TianWang {
    /// Above every other bomb (classic "天王炸彈最大").
    AboveAll,
    /// 7★, the largest 7★ bomb (S0-BB; the default of the star system).
    #[serde(rename = "max_of_7")]
    MaxOf7,
    /// 7★, the smallest 7★ bomb (S1).
    #[serde(rename = "min_of_7")]
    MinOf7,
    /// 8★, the largest 8★ bomb (P-YXN, C-TCY).
    #[serde(rename = "max_of_8")]
    MaxOf8,
}

/// The family of bomb order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BombOrder {
    /// More cards beat fewer; equal counts by rank (classic 經典雙扣, docs/rules/RULES.md §4.3).
    Classic,
    /// Star levels (星級 / 線 / 相): higher star, then fewer cards, then rank (§4.4).
    Stars,
}

/// Tie-break between bombs of equal star level and equal card count (§8 #9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EqualStarTieBreak {
    /// The higher top rank wins (S0-BB, S1; default).
    TopRank,
    /// The larger group size X wins, then the top rank (C-DEALER, C-TCY "901>504>405").
    LargerGroup,
}

/// Whether a later bomb of the same star level can beat the one on the table (§8 #27).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EqualStarBombs {
    /// Equal star levels are broken by fewer cards, then the tie-break (S1's main text, S0-BB,
    /// S4; default).
    #[default]
    Tiebreak,
    /// The bomb played first stands: only a higher star level beats it (S1's note
    /// 「線數一樣,誰先出誰大」).
    FirstStands,
}

impl EqualStarBombs {
    /// True for the default, `tiebreak`.
    pub fn is_tiebreak(&self) -> bool {
        *self == EqualStarBombs::Tiebreak
    }
}

/// Chain bombs (X相Y連環炸彈 / 連炸).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChainBombs {
    /// Not a combination (classic).
    None,
    /// Every group has the same number of cards X (JJ, 百變).
    Equal,
    /// Groups of at least four cards whose counts may differ (千變, 二人).
    Unequal,
}

/// Star level of a chain bomb whose groups differ in size (§5, §8 #12).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnequalChainLevel {
    /// Smallest group + links (S2).
    MinPlusLinks,
    /// max(smallest group + links, largest group) (S4; default).
    MaxWithLargestGroup,
}

/// The card rules of a variant: what is a combination and what beats what.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rules {
    /// Players at the table: 4 (two teams) or 2.
    pub players: u8,
    /// Cards dealt to each player.
    pub hand_size: u8,
    /// Which jokers are wild.
    pub wild_jokers: WildJokers,
    /// A wild big joker may stand for a small joker, so `SJ BJ` is a pair of small jokers
    /// (§3, §8 #19).
    pub big_joker_as_small: bool,
    /// Any three jokers form the 三王 bomb (the smallest 6★).
    pub three_jokers: bool,
    /// Where 天王 (four jokers) sits.
    pub tianwang: TianWang,
    /// Bomb order family.
    pub bomb_order: BombOrder,
    /// Equal-star, equal-count tie-break.
    pub equal_star_tie_break: EqualStarTieBreak,
    /// Whether equal star levels are broken at all (`first_stands`: the first bomb stands).
    /// Absent in older settings, which mean `tiebreak`; left out of the serde form when it is
    /// `tiebreak`, so that games under the older settings keep their state hashes (compact
    /// encodings go through `rules::compact`; editors of settings use `Rules::fields`).
    #[serde(default, skip_serializing_if = "EqualStarBombs::is_tiebreak")]
    pub equal_star_bombs: EqualStarBombs,
    /// Chain bombs.
    pub chain_bombs: ChainBombs,
    /// Level of unequal chain bombs.
    pub unequal_chain_level: UnequalChainLevel,
    /// Chain bombs may run through 2 (循環炸彈: K-A-2, A-2-3, 2-3-4); they are the smallest of their
    /// class (§2 item 5, §8 #10–11). Off by default.
    pub cyclic_chain_bombs: bool,
    /// Shortest straight (順子), in cards.
    pub min_straight: u8,
    /// Fewest pairs in a pair chain (連對).
    pub min_pair_chain: u8,
    /// Fewest triples in a triple chain (連三張).
    pub min_triple_chain: u8,
    /// Fewest links (groups) in a chain bomb.
    pub min_chain_links: u8,
    /// Most links in a chain bomb.
    pub max_chain_links: u8,
    /// Fewest natural (non-wild) cards in a straight or chain (C-DML uses 2; texts: none → 0).
    pub min_naturals_in_sequence: u8,
    /// Two players: the loser holding at least this many cards is 雙扣 (S2: 12).
    pub two_player_double_min: u8,
    /// Two players: the loser holding at least this many cards (and fewer than the 雙扣
    /// threshold) is 單扣; fewer is 平扣 (S2: 7).
    pub two_player_single_min: u8,
}

/// Errors in a rule-settings value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RulesError {
    #[error("players must be 2 or 4, not {0}")]
    Players(u8),
    #[error("hand size {hand_size} × {players} players exceeds the 108 cards")]
    HandSize { players: u8, hand_size: u8 },
    #[error("{name} = {value} is outside {min}..={max}")]
    OutOfRange {
        name: &'static str,
        value: u8,
        min: u8,
        max: u8,
    },
    #[error(
        "classic bomb order has no star levels: 三王, chain bombs, wild cards and equal_star_bombs = first_stands need bomb_order = stars"
    )]
    ClassicWithStarFeatures,
    #[error("no preset named {0:?} (known: classic, jj, baibian, huopin, qianbian, erren)")]
    UnknownPreset(String),
}

impl Rules {
    /// The ids of the built-in presets.
    pub const PRESET_IDS: [&'static str; 6] =
        ["classic", "jj", "baibian", "huopin", "qianbian", "erren"];

    /// Classic 經典雙扣 (S0-CL, S4): no wilds, no 三王, no chain bombs, 天王 on top, more cards win.
    pub const CLASSIC: Rules = Rules {
        players: 4,
        hand_size: 27,
        wild_jokers: WildJokers::None,
        big_joker_as_small: false,
        three_jokers: false,
        tianwang: TianWang::AboveAll,
        bomb_order: BombOrder::Classic,
        equal_star_tie_break: EqualStarTieBreak::TopRank,
        equal_star_bombs: EqualStarBombs::Tiebreak,
        chain_bombs: ChainBombs::None,
        unequal_chain_level: UnequalChainLevel::MaxWithLargestGroup,
        cyclic_chain_bombs: false,
        min_straight: 5,
        min_pair_chain: 3,
        min_triple_chain: 3,
        min_chain_links: 3,
        max_chain_links: 6,
        min_naturals_in_sequence: 0,
        two_player_double_min: 12,
        two_player_single_min: 7,
    };

    /// 百變雙扣 (S0-BB): big jokers wild, star levels, 三王, 天王 the largest 7★, equal chain bombs.
    /// The other settings (hand size, sequence lengths, chain links, the 2-player thresholds) are
    /// the classic ones.
    pub const BAIBIAN: Rules = Rules {
        wild_jokers: WildJokers::Big,
        big_joker_as_small: true,
        three_jokers: true,
        tianwang: TianWang::MaxOf7,
        bomb_order: BombOrder::Stars,
        chain_bombs: ChainBombs::Equal,
        ..Rules::CLASSIC
    };

    /// JJ雙扣 (S0-JJ): card rules as 百變 (the JJ text has no comparison paragraph, §4.4).
    pub const JJ: Rules = Rules::BAIBIAN;

    /// 火拼雙扣 with seed 001's figures: 天王 is the smallest 7-line bomb.
    pub const HUOPIN: Rules = Rules {
        tianwang: TianWang::MinOf7,
        ..Rules::BAIBIAN
    };

    /// 千變雙扣 (S1 note, S2): all four jokers wild; chain bombs may have unequal groups.
    pub const QIANBIAN: Rules = Rules {
        wild_jokers: WildJokers::All,
        chain_bombs: ChainBombs::Unequal,
        ..Rules::BAIBIAN
    };

    /// 二人雙扣 (S2, S4): two players, 27 cards each, 千變 card rules.
    pub const ERREN: Rules = Rules {
        players: 2,
        ..Rules::QIANBIAN
    };

    /// The preset with this id.
    pub fn preset(id: &str) -> Result<Rules, RulesError> {
        match id {
            "classic" => Ok(Rules::CLASSIC),
            "jj" => Ok(Rules::JJ),
            "baibian" => Ok(Rules::BAIBIAN),
            "huopin" => Ok(Rules::HUOPIN),
            "qianbian" => Ok(Rules::QIANBIAN),
            "erren" => Ok(Rules::ERREN),
            other => Err(RulesError::UnknownPreset(other.to_string())),
        }
    }

    /// Checks that the settings are coherent (used for settings that come from outside).
    pub fn validate(&self) -> Result<(), RulesError> {
        if self.players != 2 && self.players != 4 {
            return Err(RulesError::Players(self.players));
        }
        if self.hand_size == 0 || self.players as usize * self.hand_size as usize > 108 {
            return Err(RulesError::HandSize {
                players: self.players,
                hand_size: self.hand_size,
            });
        }
        let ranges: [(&'static str, u8, u8, u8); 6] = [
            ("min_straight", self.min_straight, 2, 12),
            ("min_pair_chain", self.min_pair_chain, 2, 12),
            ("min_triple_chain", self.min_triple_chain, 2, 12),
            ("min_chain_links", self.min_chain_links, 2, 13),
            (
                "max_chain_links",
                self.max_chain_links,
                self.min_chain_links,
                13,
            ),
            (
                "min_naturals_in_sequence",
                self.min_naturals_in_sequence,
                0,
                12,
            ),
        ];
        for (name, value, min, max) in ranges {
            if value < min || value > max {
                return Err(RulesError::OutOfRange {
                    name,
                    value,
                    min,
                    max,
                });
            }
        }
        if self.bomb_order == BombOrder::Classic
            && (self.three_jokers
                || self.chain_bombs != ChainBombs::None
                || self.wild_jokers != WildJokers::None
                || self.tianwang != TianWang::AboveAll
                || self.equal_star_bombs != EqualStarBombs::Tiebreak)
        {
            return Err(RulesError::ClassicWithStarFeatures);
        }
        Ok(())
    }

    /// Every setting by serde name, defaults included (the serde form leaves out
    /// `equal_star_bombs` when it is `tiebreak`): what editors of settings start from.
    pub fn fields(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut fields = match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(m)) => m,
            _ => serde_json::Map::new(),
        };
        if !fields.contains_key("equal_star_bombs") {
            fields.insert(
                "equal_star_bombs".into(),
                serde_json::Value::from("tiebreak"),
            );
        }
        fields
    }

    /// True if this rank's cards are wild under these settings.
    #[inline]
    pub const fn is_wild(&self, rank: Rank) -> bool {
        match self.wild_jokers {
            WildJokers::None => false,
            WildJokers::Big => rank.index() == 14,
            WildJokers::All => rank.index() >= 13,
        }
    }

    /// Splits a play into its natural cards and its wild jokers: (naturals, wild small jokers,
    /// wild big jokers). Jokers that are not wild under these settings stay natural.
    #[inline]
    pub fn split_wilds(&self, cards: RankCounts) -> (RankCounts, u8, u8) {
        let sj = cards.get(Rank::SMALL_JOKER);
        let bj = cards.get(Rank::BIG_JOKER);
        let ws = if self.is_wild(Rank::SMALL_JOKER) {
            sj
        } else {
            0
        };
        let wb = if self.is_wild(Rank::BIG_JOKER) { bj } else { 0 };
        let nat = cards
            .with(Rank::SMALL_JOKER, sj - ws)
            .with(Rank::BIG_JOKER, bj - wb);
        (nat, ws, wb)
    }

    /// True if bombs carry star levels.
    pub const fn has_stars(&self) -> bool {
        matches!(self.bomb_order, BombOrder::Stars)
    }
}

/// The serde form of `Rules` inside compact (non-human-readable) encodings such as the state
/// hash's postcard, for `#[serde(with = "crate::rules::compact")]`.
///
/// Compact formats carry no field names, so the derived form cannot leave out
/// `equal_star_bombs` and still decode. Here it is folded into the variant index of
/// `equal_star_tie_break` (0 and 1 as before; 2 and 3 with `first_stands`), so that a game under
/// the older settings encodes byte for byte as before (its state hash is unchanged) and every
/// game decodes. Human-readable formats (JSON) use the derived form.
pub mod compact {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::{
        BombOrder, ChainBombs, EqualStarBombs, EqualStarTieBreak, Rules, TianWang,
        UnequalChainLevel, WildJokers,
    };

    /// `equal_star_tie_break` and `equal_star_bombs` in one variant index.
    #[derive(Clone, Copy, Serialize, Deserialize)]
    enum TieBreak {
        TopRank,
        LargerGroup,
        TopRankFirstStands,
        LargerGroupFirstStands,
    }

    /// `Rules` field for field, in declaration order, without `equal_star_bombs`.
    #[derive(Serialize, Deserialize)]
    struct Compact {
        players: u8,
        hand_size: u8,
        wild_jokers: WildJokers,
        big_joker_as_small: bool,
        three_jokers: bool,
        tianwang: TianWang,
        bomb_order: BombOrder,
        equal_star_tie_break: TieBreak,
        chain_bombs: ChainBombs,
        unequal_chain_level: UnequalChainLevel,
        cyclic_chain_bombs: bool,
        min_straight: u8,
        min_pair_chain: u8,
        min_triple_chain: u8,
        min_chain_links: u8,
        max_chain_links: u8,
        min_naturals_in_sequence: u8,
        two_player_double_min: u8,
        two_player_single_min: u8,
    }

    pub fn serialize<S: Serializer>(r: &Rules, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            return r.serialize(s);
        }
        let first = r.equal_star_bombs == EqualStarBombs::FirstStands;
        let equal_star_tie_break = match (r.equal_star_tie_break, first) {
            (EqualStarTieBreak::TopRank, false) => TieBreak::TopRank,
            (EqualStarTieBreak::LargerGroup, false) => TieBreak::LargerGroup,
            (EqualStarTieBreak::TopRank, true) => TieBreak::TopRankFirstStands,
            (EqualStarTieBreak::LargerGroup, true) => TieBreak::LargerGroupFirstStands,
        };
        Compact {
            players: r.players,
            hand_size: r.hand_size,
            wild_jokers: r.wild_jokers,
            big_joker_as_small: r.big_joker_as_small,
            three_jokers: r.three_jokers,
            tianwang: r.tianwang,
            bomb_order: r.bomb_order,
            equal_star_tie_break,
            chain_bombs: r.chain_bombs,
            unequal_chain_level: r.unequal_chain_level,
            cyclic_chain_bombs: r.cyclic_chain_bombs,
            min_straight: r.min_straight,
            min_pair_chain: r.min_pair_chain,
            min_triple_chain: r.min_triple_chain,
            min_chain_links: r.min_chain_links,
            max_chain_links: r.max_chain_links,
            min_naturals_in_sequence: r.min_naturals_in_sequence,
            two_player_double_min: r.two_player_double_min,
            two_player_single_min: r.two_player_single_min,
        }
        .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Rules, D::Error> {
        if d.is_human_readable() {
            return Rules::deserialize(d);
        }
        let c = Compact::deserialize(d)?;
        let (equal_star_tie_break, equal_star_bombs) = match c.equal_star_tie_break {
            TieBreak::TopRank => (EqualStarTieBreak::TopRank, EqualStarBombs::Tiebreak),
            TieBreak::LargerGroup => (EqualStarTieBreak::LargerGroup, EqualStarBombs::Tiebreak),
            TieBreak::TopRankFirstStands => {
                (EqualStarTieBreak::TopRank, EqualStarBombs::FirstStands)
            }
            TieBreak::LargerGroupFirstStands => {
                (EqualStarTieBreak::LargerGroup, EqualStarBombs::FirstStands)
            }
        };
        Ok(Rules {
            players: c.players,
            hand_size: c.hand_size,
            wild_jokers: c.wild_jokers,
            big_joker_as_small: c.big_joker_as_small,
            three_jokers: c.three_jokers,
            tianwang: c.tianwang,
            bomb_order: c.bomb_order,
            equal_star_tie_break,
            equal_star_bombs,
            chain_bombs: c.chain_bombs,
            unequal_chain_level: c.unequal_chain_level,
            cyclic_chain_bombs: c.cyclic_chain_bombs,
            min_straight: c.min_straight,
            min_pair_chain: c.min_pair_chain,
            min_triple_chain: c.min_triple_chain,
            min_chain_links: c.min_chain_links,
            max_chain_links: c.max_chain_links,
            min_naturals_in_sequence: c.min_naturals_in_sequence,
            two_player_double_min: c.two_player_double_min,
            two_player_single_min: c.two_player_single_min,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_are_valid_and_distinct_where_the_rules_differ() {
        for id in Rules::PRESET_IDS {
            let r = Rules::preset(id).unwrap();
            r.validate().unwrap_or_else(|e| panic!("{id}: {e}"));
        }
        assert_ne!(Rules::BAIBIAN, Rules::HUOPIN);
        assert_ne!(Rules::BAIBIAN, Rules::QIANBIAN);
        assert_eq!(Rules::ERREN.players, 2);
        assert!(Rules::preset("nope").is_err());
    }

    #[test]
    fn validation_rejects_incoherent_settings() {
        let bad = Rules {
            three_jokers: true,
            ..Rules::CLASSIC
        };
        assert_eq!(bad.validate(), Err(RulesError::ClassicWithStarFeatures));
        let bad = Rules {
            players: 3,
            ..Rules::BAIBIAN
        };
        assert_eq!(bad.validate(), Err(RulesError::Players(3)));
        let bad = Rules {
            hand_size: 30,
            ..Rules::BAIBIAN
        };
        assert!(matches!(bad.validate(), Err(RulesError::HandSize { .. })));
        let bad = Rules {
            equal_star_bombs: EqualStarBombs::FirstStands,
            ..Rules::CLASSIC
        };
        assert_eq!(bad.validate(), Err(RulesError::ClassicWithStarFeatures));
    }

    #[test]
    fn equal_star_bombs_reads_and_writes_as_before_by_default() {
        // The default is left out of the serde form (state hashes of older games unchanged) and
        // an absent field reads as tiebreak; `fields` lists it for editors.
        let json = serde_json::to_value(Rules::HUOPIN).unwrap();
        assert!(json.get("equal_star_bombs").is_none());
        let back: Rules = serde_json::from_value(json).unwrap();
        assert_eq!(back, Rules::HUOPIN);
        assert_eq!(Rules::HUOPIN.fields()["equal_star_bombs"], "tiebreak");
        let first = Rules {
            equal_star_bombs: EqualStarBombs::FirstStands,
            ..Rules::HUOPIN
        };
        let json = serde_json::to_value(first).unwrap();
        assert_eq!(json["equal_star_bombs"], "first_stands");
        assert_eq!(serde_json::from_value::<Rules>(json).unwrap(), first);
        assert_eq!(
            serde_json::Value::Object(first.fields()),
            serde_json::to_value(first).unwrap()
        );
    }
}
