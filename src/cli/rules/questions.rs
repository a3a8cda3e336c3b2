//! The questions `shuangkou rules` answers (classify, beats, plays), shared by the command line
//! and the batch protocol: the variant's rules with option overrides, the cards, and a typed
//! [`Answer`] or [`Failure`].

use serde_json::{Map, Value};

use crate::cards::{CardError, CardSet, Rank, RankCounts};
use crate::classify;
use crate::hand::{self, Declared, Hand, HandType, PlayError};
use crate::hints;
use crate::moves;
use crate::rules::Rules;

use super::reply::{Answer, InterpretationJson, Reply, cut};

/// Why a question could not be answered: a stable code, a message, and for `AMBIGUOUS_PLAY` the
/// interpretations to choose from.
#[derive(Debug, Clone)]
pub(super) struct Failure {
    pub(super) code: &'static str,
    pub(super) message: String,
    pub(super) interpretations: Vec<Hand>,
}

impl Failure {
    pub(super) fn new(code: &'static str, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
            interpretations: Vec::new(),
        }
    }

    pub(super) fn bad_request(message: impl Into<String>) -> Failure {
        Failure::new("BAD_REQUEST", message)
    }

    pub(super) fn reply(&self, id: Option<Value>) -> Reply {
        Reply {
            id,
            ok: false,
            error: Some(self.code),
            message: Some(cut(&self.message)),
            interpretations: (!self.interpretations.is_empty()).then(|| {
                self.interpretations
                    .iter()
                    .map(InterpretationJson::new)
                    .collect()
            }),
            ..Reply::default()
        }
    }
}

impl From<PlayError> for Failure {
    fn from(e: PlayError) -> Failure {
        let code = match &e {
            PlayError::NotACombination(_) => "NOT_A_COMBINATION",
            PlayError::Ambiguous { .. } => "AMBIGUOUS_PLAY",
            PlayError::DeclaredMismatch(_) => "DECLARED_MISMATCH",
            PlayError::DoesNotBeat(_) => "DOES_NOT_BEAT",
        };
        let interpretations = match &e {
            PlayError::Ambiguous { options, .. } => options.clone(),
            _ => Vec::new(),
        };
        Failure {
            code,
            message: e.to_string(),
            interpretations,
        }
    }
}

impl From<CardError> for Failure {
    fn from(e: CardError) -> Failure {
        let code = match e {
            CardError::UnknownToken(_) | CardError::TooManyCopies { .. } => "BAD_CARD",
            CardError::BadCardId(_) => "BAD_CARD_ID",
            CardError::DuplicateCard(_) => "DUPLICATE_CARD",
        };
        Failure::new(code, e.to_string())
    }
}

/// The rule settings of a variant id, with `options` overriding fields of the settings.
///
/// The one place that turns a variant id into rules (the variant registry replaces the presets
/// here).
pub(super) fn rules_for(
    variant: &str,
    options: Option<&Map<String, Value>>,
) -> Result<Rules, Failure> {
    // The variant scripts are the single source of the card rules.
    let rules = crate::variants::builtin_rules(variant).map_err(|_| {
        Failure::new(
            "UNKNOWN_VARIANT",
            format!(
                "unknown variant {:?} (known: {})",
                cut(variant),
                crate::variants::EMBEDDED
                    .iter()
                    .map(|(id, _)| *id)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    })?;
    match options {
        None => Ok(rules),
        Some(o) if o.is_empty() => Ok(rules),
        Some(o) => with_options(rules, o),
    }
}

/// Applies `options` (rule-setting field → value) to `rules` and checks the result.
pub(super) fn with_options(rules: Rules, options: &Map<String, Value>) -> Result<Rules, Failure> {
    let bad = |m: String| Failure::new("BAD_OPTION", m);
    let mut fields = rules.fields();
    for (key, value) in options {
        let Some(slot) = fields.get_mut(key) else {
            let known: Vec<&str> = fields.keys().map(String::as_str).collect();
            return Err(bad(format!(
                "unknown option {:?} (known: {})",
                cut(key),
                known.join(", ")
            )));
        };
        // Option values may arrive as strings (`"true"`, `"3"`, `"max_of_8"`): take them as the
        // type the setting has.
        *slot = match (&*slot, value) {
            (Value::Bool(_), Value::String(s)) => s
                .parse::<bool>()
                .map(Value::Bool)
                .map_err(|_| bad(format!("option {key}: {:?} is not true or false", cut(s))))?,
            (Value::Number(_), Value::String(s)) => s
                .parse::<u64>()
                .map(Value::from)
                .map_err(|_| bad(format!("option {key}: {:?} is not a number", cut(s))))?,
            _ => value.clone(),
        };
    }
    let rules: Rules = serde_json::from_value(Value::Object(fields))
        .map_err(|e| bad(format!("bad option value: {e}")))?;
    rules.validate().map_err(|e| bad(e.to_string()))?;
    Ok(rules)
}

/// `--option key=value` arguments as a JSON object (values parsed as JSON when they are JSON,
/// strings otherwise).
pub(super) fn parse_cli_options(options: &[String]) -> Result<Option<Map<String, Value>>, Failure> {
    if options.is_empty() {
        return Ok(None);
    }
    let mut map = Map::new();
    for o in options {
        let Some((k, v)) = o.split_once('=') else {
            return Err(Failure::new(
                "BAD_OPTION",
                format!("option {o:?} is not KEY=VALUE"),
            ));
        };
        let v = v.trim();
        let value = serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.to_string()));
        map.insert(k.trim().to_string(), value);
    }
    Ok(Some(map))
}

/// Cards from the command line: rank notation, or card ids with `--ids`.
pub(super) fn cards_arg(text: &str, ids: bool) -> Result<RankCounts, Failure> {
    if !ids {
        return Ok(text.parse::<RankCounts>()?);
    }
    let mut list = Vec::new();
    for token in text
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|t| !t.is_empty())
    {
        let id = token.parse::<u32>().map_err(|_| {
            Failure::new(
                "BAD_CARD_ID",
                format!("card id {:?} is not a number 0..=107", cut(token)),
            )
        })?;
        list.push(id);
    }
    Ok(CardSet::from_ids(&list)?.rank_counts())
}

/// A declared interpretation from a type name and an optional key rank.
pub(super) fn declared(kind: Option<&str>, key: Option<&str>) -> Result<Option<Declared>, Failure> {
    let Some(kind) = kind else {
        return match key {
            Some(_) => Err(Failure::bad_request("prev_key needs prev_type")),
            None => Ok(None),
        };
    };
    let kind: HandType = kind.parse().map_err(|e: String| Failure::bad_request(e))?;
    let key = match key {
        Some(k) => Some(
            k.parse::<Rank>()
                .map_err(|e| Failure::bad_request(e.to_string()))?,
        ),
        None => None,
    };
    Ok(Some(Declared { kind, key }))
}

/// A play larger than a hand (docs/rules/RULES.md §2 item 2).
pub(super) fn too_large(e: hand::LargerThanHand) -> Failure {
    Failure::new("TOO_MANY_CARDS", e.to_string())
}

pub(super) fn classify_op(
    cards: RankCounts,
    rules: &Rules,
) -> Result<hand::Interpretations, Failure> {
    hand::check_size(cards, rules).map_err(too_large)?;
    let all = classify::classify(cards, rules);
    if all.is_empty() {
        return Err(PlayError::NotACombination(cards).into());
    }
    Ok(all)
}

pub(super) fn beats_op(
    prev: RankCounts,
    declared: Option<Declared>,
    cards: RankCounts,
    rules: &Rules,
) -> Result<Answer, Failure> {
    let prev = previous_play(prev, declared, rules)?;
    hand::check_size(cards, rules).map_err(too_large)?;
    match classify::resolve(cards, Some(&prev), None, rules) {
        Ok(h) => Ok(Answer::Beats {
            beats: true,
            prev,
            candidates: vec![h],
        }),
        // Several interpretations beat it (not possible with one interpretation per type, but
        // harmless): it beats.
        Err(PlayError::Ambiguous { options, .. }) => Ok(Answer::Beats {
            beats: true,
            prev,
            candidates: options,
        }),
        Err(PlayError::DoesNotBeat(_)) => Ok(Answer::Beats {
            beats: false,
            prev,
            candidates: classify::classify(cards, rules).to_vec(),
        }),
        Err(e) => Err(e.into()),
    }
}

pub(super) fn plays_op(
    hand: RankCounts,
    prev: Option<RankCounts>,
    declared: Option<Declared>,
    rules: &Rules,
    page: Option<hints::Query>,
) -> Result<Answer, Failure> {
    let prev = match prev {
        Some(p) => Some(previous_play(p, declared, rules)?),
        None if declared.is_some() => {
            return Err(Failure::bad_request("prev_type without a previous play"));
        }
        None => None,
    };
    // A hand never holds more than was dealt; bigger ones (a whole deck) have millions of plays.
    if hand.total() > u32::from(rules.hand_size) {
        return Err(Failure::new(
            "TOO_MANY_CARDS",
            format!(
                "the hand has {} cards; a hand of this variant holds at most {}",
                hand.total(),
                rules.hand_size
            ),
        ));
    }
    if let Some(q) = page {
        return hints::page(hand, prev.as_ref(), rules, &q)
            .map(Answer::PlaysPage)
            .map_err(|e| Failure::bad_request(e.to_string()));
    }
    Ok(Answer::Plays(moves::legal_plays(
        hand,
        prev.as_ref(),
        rules,
    )))
}

/// The interpretation of the play on the table (declared when its cards fit several types).
pub(super) fn previous_play(
    cards: RankCounts,
    declared: Option<Declared>,
    rules: &Rules,
) -> Result<Hand, Failure> {
    classify::resolve(cards, None, declared, rules).map_err(|e| {
        let mut f = Failure::from(e);
        if f.code == "AMBIGUOUS_PLAY" {
            f.message
                .push_str(" (give prev_type, and prev_key if needed)");
        }
        f
    })
}
