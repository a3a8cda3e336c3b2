//! An [`Answer`] as the batch protocol's JSON reply ([`Reply`]) or as readable lines for the
//! command line, and the texts both use (a play's description, why a play does not beat).

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::cards::Rank;
use crate::hand::{self, Hand};
use crate::hints;
use crate::moves::Play;
use crate::rules::{EqualStarBombs, Rules};

use super::MAX_MESSAGE_CHARS;

/// A successful answer.
#[derive(Debug)]
pub(super) enum Answer {
    Interpretations(hand::Interpretations),
    Beats {
        beats: bool,
        prev: Hand,
        /// The interpretation that beats, or every interpretation when none does.
        candidates: Vec<Hand>,
    },
    Plays(Vec<Play>),
    /// One page of the legal plays (`plays` with a paging flag).
    PlaysPage(hints::Page),
}

/// One reply line. Field order is the wire order; absent fields are omitted.
#[derive(Debug, Default, Serialize)]
pub(super) struct Reply {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) id: Option<Value>,
    pub(super) ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) error: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) interpretations: Option<Vec<InterpretationJson>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) beats: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) plays: Option<Vec<PlayJson>>,
    /// A page of plays: where it starts and the counts.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub(super) page: Option<PageJson>,
}

/// The counts of a page of `plays`.
#[derive(Debug, Serialize)]
pub(super) struct PageJson {
    pub(super) offset: usize,
    pub(super) total: usize,
    pub(super) total_all: usize,
    pub(super) by_type: Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) next_offset: Option<usize>,
}

/// One interpretation of `classify` (and of an `AMBIGUOUS_PLAY` error).
#[derive(Debug, Serialize)]
pub(super) struct InterpretationJson {
    #[serde(rename = "type")]
    pub(super) kind: &'static str,
    pub(super) length: u8,
    pub(super) key: Option<Rank>,
    pub(super) stars: Option<u8>,
    #[serde(rename = "as")]
    pub(super) as_ranks: String,
    #[serde(skip_serializing_if = "is_false")]
    pub(super) cyclic: bool,
}

impl InterpretationJson {
    pub(super) fn new(h: &Hand) -> InterpretationJson {
        InterpretationJson {
            kind: h.kind.name(),
            length: h.len,
            key: h.key(),
            stars: h.stars,
            as_ranks: h.substituted.to_string(),
            cyclic: h.cyclic,
        }
    }
}

/// One play of `plays`.
#[derive(Debug, Serialize)]
pub(super) struct PlayJson {
    pub(super) cards: String,
    #[serde(rename = "type")]
    pub(super) kind: &'static str,
    pub(super) length: u8,
    pub(super) key: Option<Rank>,
    pub(super) stars: Option<u8>,
    #[serde(rename = "as", skip_serializing_if = "Option::is_none")]
    pub(super) as_ranks: Option<String>,
    #[serde(skip_serializing_if = "is_false")]
    pub(super) cyclic: bool,
}

impl PlayJson {
    pub(super) fn new(p: &Play) -> PlayJson {
        let h = &p.hand;
        PlayJson {
            cards: p.cards.to_string(),
            kind: h.kind.name(),
            length: h.len,
            key: h.key(),
            stars: h.stars,
            as_ranks: (!h.wilds.is_empty()).then(|| h.substituted.to_string()),
            cyclic: h.cyclic,
        }
    }
}

pub(super) fn is_false(b: &bool) -> bool {
    !*b
}

impl Answer {
    pub(super) fn reply(&self, id: Option<Value>) -> Reply {
        let mut r = Reply {
            id,
            ok: true,
            ..Reply::default()
        };
        match self {
            Answer::Interpretations(all) => {
                r.interpretations = Some(all.iter().map(InterpretationJson::new).collect());
            }
            Answer::Beats { beats, .. } => r.beats = Some(*beats),
            Answer::Plays(plays) => r.plays = Some(plays.iter().map(PlayJson::new).collect()),
            Answer::PlaysPage(p) => {
                r.plays = Some(p.plays.iter().map(PlayJson::new).collect());
                r.page = Some(PageJson {
                    offset: p.offset,
                    total: p.total,
                    total_all: p.total_all,
                    by_type: p
                        .by_type
                        .iter()
                        .map(|(t, n)| (t.name().to_string(), Value::from(*n)))
                        .collect(),
                    next_offset: p.next_offset,
                });
            }
        }
        r
    }

    /// Readable lines.
    pub(super) fn human(&self, rules: &Rules) -> String {
        let mut s = String::new();
        match self {
            Answer::Interpretations(all) => {
                for h in all {
                    let _ = writeln!(s, "{}", describe(h));
                }
            }
            Answer::Beats {
                beats,
                prev,
                candidates,
            } => {
                let what = candidates
                    .iter()
                    .map(describe)
                    .collect::<Vec<_>>()
                    .join("\n    or ");
                let verdict = if *beats {
                    "yes, beats"
                } else {
                    "no, does not beat"
                };
                let _ = writeln!(s, "{verdict}\n  on the table: {}", describe(prev));
                let _ = writeln!(s, "  played as:    {what}");
                if !beats {
                    let _ = writeln!(s, "  ({})", why_not(prev, candidates, rules));
                }
            }
            Answer::Plays(plays) => play_lines(&mut s, plays),
            Answer::PlaysPage(p) => {
                play_lines(&mut s, &p.plays);
                let _ = writeln!(
                    s,
                    "plays {}–{} of {} matching ({} legal in all){}",
                    p.offset + usize::from(!p.plays.is_empty()),
                    p.offset + p.plays.len(),
                    p.total,
                    p.total_all,
                    p.next_offset
                        .map(|o| format!("; next page: --offset {o}"))
                        .unwrap_or_default()
                );
            }
        }
        s
    }
}

/// One readable line per play: its cards, then its interpretation.
pub(super) fn play_lines(s: &mut String, plays: &[Play]) {
    let width = plays
        .iter()
        .map(|p| p.cards.to_string().len())
        .max()
        .unwrap_or(0);
    for p in plays {
        let _ = writeln!(s, "{:<width$}  {}", p.cards.to_string(), describe(&p.hand));
    }
}

/// The reason none of `candidates` beats `prev`.
pub(super) fn why_not(prev: &Hand, candidates: &[Hand], rules: &Rules) -> &'static str {
    if prev.is_bomb() {
        if candidates.iter().any(Hand::is_bomb) {
            if rules.equal_star_bombs == EqualStarBombs::FirstStands && rules.has_stars() {
                "a bomb needs more stars: of two bombs with equal stars the first played stands (equal_star_bombs = first_stands)"
            } else if rules.has_stars() {
                "a bomb needs more stars, or equal stars with fewer cards or a higher rank"
            } else {
                "a bomb needs more cards, or as many cards and a higher rank"
            }
        } else {
            "only a stronger bomb beats a bomb"
        }
    } else if candidates
        .iter()
        .any(|h| h.kind == prev.kind && h.len == prev.len)
    {
        "same type and length, but the key rank is not higher"
    } else {
        "a non-bomb must have the same type and number of cards (or play a bomb)"
    }
}

/// One readable line for an interpretation: type, length, key, stars, substitution, wilds.
pub(super) fn describe(h: &Hand) -> String {
    let key = h.key().map_or("-", Rank::symbol);
    let stars = h.stars.map_or_else(|| "-".to_string(), |n| format!("{n}★"));
    let mut s = format!(
        "{:<12} {:>2} card{}  key {:<2}  stars {:<3}  as {}",
        h.kind.name(),
        h.len,
        if h.len == 1 { " " } else { "s" },
        key,
        stars,
        h.substituted
    );
    if !h.wilds.is_empty() {
        let w: Vec<String> = h.wilds.iter().map(|(j, r)| format!("{j}→{r}")).collect();
        let _ = write!(s, "  (wild {})", w.join(", "));
    }
    if h.cyclic {
        s.push_str("  (cyclic 循環)");
    }
    s
}

/// Shortens text echoed into messages.
pub(super) fn cut(s: &str) -> String {
    if s.chars().count() <= MAX_MESSAGE_CHARS {
        return s.to_string();
    }
    let mut out: String = s.chars().take(MAX_MESSAGE_CHARS).collect();
    out.push('…');
    out
}
