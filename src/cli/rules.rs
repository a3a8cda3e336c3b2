//! `shuangkou rules`: classify plays, compare them and list legal plays, from the command line or
//! as a JSON-lines protocol (`batch`).
//!
//! This is how operators and support staff answer "why was this play rejected?" and how other
//! tools (load generators, test harnesses, platform backends in other languages) ask the rules
//! core questions without linking it. Subcommands:
//!
//! - `classify --variant ID CARDS...`: every interpretation (牌型) of the cards;
//! - `beats --variant ID --prev CARDS CARDS...`: does the play beat the play on the table;
//! - `plays --variant ID --hand CARDS [--prev CARDS]`: every legal play, weakest first (提示);
//!   with `--limit N`, `--offset K` or `--type T` (repeatable) one page of them (`hints::page`:
//!   at most 500 plays, only the given types), and the JSON reply adds `offset`, `total`
//!   (matching plays), `total_all`, `by_type` and `next_offset` (absent on the last page);
//! - `batch`: one JSON request per stdin line, one JSON reply per stdout line.
//!
//! Each of the first three prints readable lines, or with `--json` exactly the reply `batch`
//! would give. Exit codes: 0 answered (for `beats`: the cards beat), 1 `beats` answered "no",
//! 2 bad input (the JSON reply or an error message says why).
//!
//! The batch protocol (one line in, one line out, stdout flushed per line):
//!
//! ```text
//! {"op":"classify","variant":"baibian","cards":"7 7 7 7 BJ"}
//!   → {"ok":true,"interpretations":[{"type":"bomb","length":5,"key":"7","stars":5,"as":"7 7 7 7 7"}]}
//! {"op":"beats","variant":"classic","prev":"2 2 2 2","cards":"6 6 6 6 6"}
//!   → {"ok":true,"beats":true}
//! {"op":"plays","variant":"qianbian","hand":"3 3 BJ","prev":null}
//!   → {"ok":true,"plays":[{"cards":"3","type":"single","length":1,"key":"3","stars":null}, …]}
//! anything wrong
//!   → {"ok":false,"error":"NOT_A_COMBINATION","message":"…"}
//! ```
//!
//! Request fields: `op` (`classify` / `beats` / `plays`), `variant`, optional `id` (any JSON value,
//! echoed first in the reply), optional `options` (an object overriding fields of the variant's
//! rule settings, e.g. `{"cyclic_chain_bombs":true}`); `classify`: `cards`; `beats`: `prev`,
//! `cards`; `plays`: `hand`, optional `prev` (absent, `null` or empty = leading). Cards are text
//! notation (`"3 3 BJ"`) or an array of card ids 0..=107. An ambiguous previous play (千變
//! `3 4 5 SJ BJ BJ`) takes `prev_type` (and optionally `prev_key`) to say how it was played.
//!
//! Interpretation fields: `type` (`single` `pair` `triple` `straight` `pair_chain` `triple_chain`
//! `bomb` `three_jokers` `four_jokers` `chain_bomb`), `length` (cards), `key` (comparison rank;
//! `null` for 三王 / 天王), `stars` (star level of a bomb; `null` for non-bombs and in variants
//! without stars), `as` (the ranks after wild substitution: what the wild jokers became; in `plays`
//! only when a wild joker stands for another rank), `cyclic` (only present, as `true`, for a chain
//! bomb through 2, 循環炸彈).
//!
//! Error codes: `BAD_REQUEST` (not JSON, not an object, missing or unknown field, unknown op),
//! `UNKNOWN_VARIANT`, `BAD_OPTION`, `BAD_CARD` (bad notation, naming the token), `BAD_CARD_ID`,
//! `DUPLICATE_CARD`, `NOT_A_COMBINATION`, `AMBIGUOUS_PLAY` (with the `interpretations`),
//! `DECLARED_MISMATCH` (`prev_type`/`prev_key` do not fit the previous play), `TOO_MANY_CARDS`
//! (`plays` on a hand larger than the variant deals: a whole deck has millions of plays; or a
//! play with more cards than a hand holds, such as a 30-card chain bomb: docs/rules/RULES.md §2 item 2).

use std::fmt::Write as _;
use std::io::{self, BufRead, Write};
use std::process::ExitCode;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::cards::{CardError, CardSet, Rank, RankCounts};
use crate::classify;
use crate::hand::{self, Declared, Hand, HandType, PlayError};
use crate::hints;
use crate::moves::{self, Play};
use crate::rules::{EqualStarBombs, Rules};

/// Longest request line `batch` reads; longer lines are answered with `BAD_REQUEST` and skipped.
pub const MAX_LINE_BYTES: usize = 1 << 20;
/// Longest error message (in characters); longer ones (echoing huge input) are cut.
const MAX_MESSAGE_CHARS: usize = 300;

/// Exit code: answered (for `beats`: the cards beat the previous play).
const EXIT_OK: u8 = 0;
/// Exit code: `beats` answered "no".
const EXIT_NO: u8 = 1;
/// Exit code: bad input (card, variant, combination, request).
const EXIT_BAD_INPUT: u8 = 2;

/// The subcommands of `shuangkou rules`.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Every interpretation of a play: type, length, key, stars, what the wild jokers became.
    Classify(ClassifyArgs),
    /// Does a play beat the play on the table? (exit 0 yes, 1 no, 2 bad input)
    Beats(BeatsArgs),
    /// Every legal play of a hand, weakest first (leading, or following --prev).
    Plays(PlaysArgs),
    /// JSON lines: one request per stdin line, one reply per stdout line.
    Batch,
    /// 升級 (`--game shengji`): the cards a hand may play to a trick, and the trick's winner.
    Follow(super::shengji::FollowArgs),
}

/// Options every question takes.
#[derive(Debug, clap::Args)]
struct Common {
    /// Variant id (classic, jj, baibian, huopin, qianbian, erren).
    #[arg(long)]
    variant: String,
    /// Override a rule setting of the variant, e.g. `--option cyclic_chain_bombs=true`
    /// (repeatable; names and values as in the variant's rule settings).
    #[arg(long = "option", value_name = "KEY=VALUE")]
    options: Vec<String>,
    /// Cards are physical card ids 0..=107 instead of rank notation.
    #[arg(long)]
    ids: bool,
    /// Print the JSON reply of the batch protocol instead of readable lines.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
pub struct ClassifyArgs {
    #[command(flatten)]
    common: Common,
    /// The cards, e.g. `7 7 7 7 BJ` (one quoted argument or several).
    #[arg(required = true, num_args = 1.., value_name = "CARDS")]
    cards: Vec<String>,
}

#[derive(Debug, clap::Args)]
pub struct BeatsArgs {
    #[command(flatten)]
    common: Common,
    /// The play on the table.
    #[arg(long, value_name = "CARDS")]
    prev: String,
    #[command(flatten)]
    declared: PrevDeclared,
    /// The new play.
    #[arg(required = true, num_args = 1.., value_name = "CARDS")]
    cards: Vec<String>,
}

#[derive(Debug, clap::Args)]
pub struct PlaysArgs {
    #[command(flatten)]
    common: Common,
    /// The hand.
    #[arg(long, value_name = "CARDS")]
    hand: String,
    /// The play to beat (omit when leading).
    #[arg(long, value_name = "CARDS")]
    prev: Option<String>,
    #[command(flatten)]
    declared: PrevDeclared,
    /// Print one page of at most this many plays (0 = the default page of 20; at most 500).
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Start the page after this many (matching) plays.
    #[arg(long, value_name = "K")]
    offset: Option<usize>,
    /// Only plays of this type (`single`, `pair`, …, `bomb`, `chain_bomb`; repeatable).
    #[arg(long = "type", value_name = "TYPE")]
    types: Vec<String>,
}

impl PlaysArgs {
    /// The page asked for, if any paging flag was given.
    fn query(&self) -> Result<Option<hints::Query>, Failure> {
        if self.limit.is_none() && self.offset.is_none() && self.types.is_empty() {
            return Ok(None);
        }
        let types = self
            .types
            .iter()
            .map(|t| t.parse::<HandType>().map_err(Failure::bad_request))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some(hints::Query {
            limit: self.limit.unwrap_or(0),
            start: hints::Start::Offset(self.offset.unwrap_or(0)),
            types,
        }))
    }
}

/// How an ambiguous previous play was declared.
#[derive(Debug, clap::Args)]
struct PrevDeclared {
    /// Type the previous play was played as, when its cards fit several (e.g. `straight`).
    #[arg(long, value_name = "TYPE")]
    prev_type: Option<String>,
    /// Key rank the previous play was played as (with --prev-type).
    #[arg(long, value_name = "RANK", requires = "prev_type")]
    prev_key: Option<String>,
}

/// Runs the subcommand; returns the process exit code.
pub fn run(command: Command) -> ExitCode {
    let code = match command {
        Command::Follow(a) => return super::shengji::follow(&a),
        Command::Batch => match batch(io::stdin().lock(), io::stdout().lock()) {
            Ok(()) => EXIT_OK,
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => EXIT_OK,
            Err(e) => {
                eprintln!("shuangkou rules batch: {e}");
                EXIT_NO
            }
        },
        Command::Classify(a) => answer(&a.common, |rules| {
            let cards = cards_arg(&a.cards.join(" "), a.common.ids)?;
            classify_op(cards, rules).map(Answer::Interpretations)
        }),
        Command::Beats(a) => answer(&a.common, |rules| {
            let prev = cards_arg(&a.prev, a.common.ids)?;
            let declared = declared(
                a.declared.prev_type.as_deref(),
                a.declared.prev_key.as_deref(),
            )?;
            let cards = cards_arg(&a.cards.join(" "), a.common.ids)?;
            beats_op(prev, declared, cards, rules)
        }),
        Command::Plays(a) => answer(&a.common, |rules| {
            let hand = cards_arg(&a.hand, a.common.ids)?;
            let prev = match a.prev.as_deref() {
                Some(p) if !p.trim().is_empty() => Some(cards_arg(p, a.common.ids)?),
                _ => None,
            };
            let declared = declared(
                a.declared.prev_type.as_deref(),
                a.declared.prev_key.as_deref(),
            )?;
            plays_op(hand, prev, declared, rules, a.query()?)
        }),
    };
    ExitCode::from(code)
}

/// Answers one command-line question and prints it (JSON or readable); returns the exit code.
fn answer(common: &Common, question: impl FnOnce(&Rules) -> Result<Answer, Failure>) -> u8 {
    let options = match parse_cli_options(&common.options) {
        Ok(o) => o,
        Err(f) => return report_failure(&f, common.json),
    };
    let result = rules_for(&common.variant, options.as_ref()).and_then(|rules| {
        let answer = question(&rules)?;
        Ok((answer, rules))
    });
    let (answer, rules) = match result {
        Ok(x) => x,
        Err(f) => return report_failure(&f, common.json),
    };
    let code = match answer {
        Answer::Beats { beats: false, .. } => EXIT_NO,
        _ => EXIT_OK,
    };
    let text = if common.json {
        to_json_line(&answer.reply(None))
    } else {
        answer.human(&rules)
    };
    let mut out = io::stdout().lock();
    // A closed pipe (`… | head`) is not an error worth a message.
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    code
}

fn report_failure(f: &Failure, json: bool) -> u8 {
    if json {
        let mut out = io::stdout().lock();
        let _ = out
            .write_all(to_json_line(&f.reply(None)).as_bytes())
            .and_then(|()| out.flush());
    } else {
        eprintln!("error {}: {}", f.code, f.message);
        for h in &f.interpretations {
            eprintln!("  {}", describe(h));
        }
    }
    EXIT_BAD_INPUT
}

// ---------------------------------------------------------------------------------------------
// The questions, shared by the command line and the batch protocol.

/// Why a question could not be answered: a stable code, a message, and for `AMBIGUOUS_PLAY` the
/// interpretations to choose from.
#[derive(Debug, Clone)]
struct Failure {
    code: &'static str,
    message: String,
    interpretations: Vec<Hand>,
}

impl Failure {
    fn new(code: &'static str, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
            interpretations: Vec::new(),
        }
    }

    fn bad_request(message: impl Into<String>) -> Failure {
        Failure::new("BAD_REQUEST", message)
    }

    fn reply(&self, id: Option<Value>) -> Reply {
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

/// A successful answer.
#[derive(Debug)]
enum Answer {
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

/// The rule settings of a variant id, with `options` overriding fields of the settings.
///
/// The one place that turns a variant id into rules (the variant registry replaces the presets
/// here).
fn rules_for(variant: &str, options: Option<&Map<String, Value>>) -> Result<Rules, Failure> {
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
fn with_options(rules: Rules, options: &Map<String, Value>) -> Result<Rules, Failure> {
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
fn parse_cli_options(options: &[String]) -> Result<Option<Map<String, Value>>, Failure> {
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
fn cards_arg(text: &str, ids: bool) -> Result<RankCounts, Failure> {
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
fn declared(kind: Option<&str>, key: Option<&str>) -> Result<Option<Declared>, Failure> {
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
fn too_large(e: hand::LargerThanHand) -> Failure {
    Failure::new("TOO_MANY_CARDS", e.to_string())
}

fn classify_op(cards: RankCounts, rules: &Rules) -> Result<hand::Interpretations, Failure> {
    hand::check_size(cards, rules).map_err(too_large)?;
    let all = classify::classify(cards, rules);
    if all.is_empty() {
        return Err(PlayError::NotACombination(cards).into());
    }
    Ok(all)
}

fn beats_op(
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

fn plays_op(
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
fn previous_play(
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

// ---------------------------------------------------------------------------------------------
// The batch protocol.

/// One reply line. Field order is the wire order; absent fields are omitted.
#[derive(Debug, Default, Serialize)]
struct Reply {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<Value>,
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    interpretations: Option<Vec<InterpretationJson>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    beats: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    plays: Option<Vec<PlayJson>>,
    /// A page of plays: where it starts and the counts.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    page: Option<PageJson>,
}

/// The counts of a page of `plays`.
#[derive(Debug, Serialize)]
struct PageJson {
    offset: usize,
    total: usize,
    total_all: usize,
    by_type: Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    next_offset: Option<usize>,
}

/// One interpretation of `classify` (and of an `AMBIGUOUS_PLAY` error).
#[derive(Debug, Serialize)]
struct InterpretationJson {
    #[serde(rename = "type")]
    kind: &'static str,
    length: u8,
    key: Option<Rank>,
    stars: Option<u8>,
    #[serde(rename = "as")]
    as_ranks: String,
    #[serde(skip_serializing_if = "is_false")]
    cyclic: bool,
}

impl InterpretationJson {
    fn new(h: &Hand) -> InterpretationJson {
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
struct PlayJson {
    cards: String,
    #[serde(rename = "type")]
    kind: &'static str,
    length: u8,
    key: Option<Rank>,
    stars: Option<u8>,
    #[serde(rename = "as", skip_serializing_if = "Option::is_none")]
    as_ranks: Option<String>,
    #[serde(skip_serializing_if = "is_false")]
    cyclic: bool,
}

impl PlayJson {
    fn new(p: &Play) -> PlayJson {
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

fn is_false(b: &bool) -> bool {
    !*b
}

impl Answer {
    fn reply(&self, id: Option<Value>) -> Reply {
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
    fn human(&self, rules: &Rules) -> String {
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
fn play_lines(s: &mut String, plays: &[Play]) {
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
fn why_not(prev: &Hand, candidates: &[Hand], rules: &Rules) -> &'static str {
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
fn describe(h: &Hand) -> String {
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
fn cut(s: &str) -> String {
    if s.chars().count() <= MAX_MESSAGE_CHARS {
        return s.to_string();
    }
    let mut out: String = s.chars().take(MAX_MESSAGE_CHARS).collect();
    out.push('…');
    out
}

/// Serializes a reply as one line (with the newline).
fn to_json_line(reply: &Reply) -> String {
    let mut s = serde_json::to_string(reply).unwrap_or_else(|_| {
        r#"{"ok":false,"error":"INTERNAL","message":"the reply could not be encoded"}"#.to_string()
    });
    s.push('\n');
    s
}

/// Answers one request line of the batch protocol with one reply line (no newline). Never panics.
pub fn batch_line(line: &str) -> String {
    let value: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => {
            let f = Failure::bad_request(format!("the line is not a JSON value: {e}"));
            return reply_line(&f.reply(None));
        }
    };
    let id = value.get("id").cloned();
    let reply = match request(&value) {
        Ok(answer) => answer.reply(id),
        Err(f) => f.reply(id),
    };
    reply_line(&reply)
}

fn reply_line(reply: &Reply) -> String {
    let mut s = to_json_line(reply);
    s.pop();
    s
}

/// The fields each op accepts.
const COMMON_FIELDS: [&str; 4] = ["op", "id", "variant", "options"];

fn request(value: &Value) -> Result<Answer, Failure> {
    let Some(obj) = value.as_object() else {
        return Err(Failure::bad_request("a request is a JSON object"));
    };
    let op = match obj.get("op") {
        Some(Value::String(s)) => s.as_str(),
        Some(_) => return Err(Failure::bad_request("field \"op\" must be a string")),
        None => return Err(Failure::bad_request("missing field \"op\"")),
    };
    let fields: &[&str] = match op {
        "classify" => &["cards"],
        "beats" => &["prev", "prev_type", "prev_key", "cards"],
        "plays" => &["hand", "prev", "prev_type", "prev_key"],
        other => {
            return Err(Failure::bad_request(format!(
                "unknown op {:?} (known: classify, beats, plays)",
                cut(other)
            )));
        }
    };
    if let Some(k) = obj
        .keys()
        .find(|k| !COMMON_FIELDS.contains(&k.as_str()) && !fields.contains(&k.as_str()))
    {
        return Err(Failure::bad_request(format!(
            "unknown field {:?} for op {op} (known: {}, {})",
            cut(k),
            COMMON_FIELDS.join(", "),
            fields.join(", ")
        )));
    }
    let variant = match obj.get("variant") {
        Some(Value::String(s)) => s.as_str(),
        Some(_) => return Err(Failure::bad_request("field \"variant\" must be a string")),
        None => return Err(Failure::bad_request("missing field \"variant\"")),
    };
    let options = match obj.get("options") {
        None | Some(Value::Null) => None,
        Some(Value::Object(o)) => Some(o),
        Some(_) => return Err(Failure::bad_request("field \"options\" must be an object")),
    };
    let rules = rules_for(variant, options)?;
    let declared_prev = || {
        let text = |name: &str| match obj.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(_) => Err(Failure::bad_request(format!(
                "field {name:?} must be a string"
            ))),
        };
        declared(text("prev_type")?, text("prev_key")?)
    };
    match op {
        "classify" => {
            let cards = required_cards(obj, "cards")?;
            classify_op(cards, &rules).map(Answer::Interpretations)
        }
        "beats" => {
            let prev = required_cards(obj, "prev")?;
            let declared = declared_prev()?;
            let cards = required_cards(obj, "cards")?;
            beats_op(prev, declared, cards, &rules)
        }
        _ => {
            let hand = required_cards(obj, "hand")?;
            let prev = cards_field(obj, "prev")?.filter(|p| !p.is_empty());
            let declared = declared_prev()?;
            plays_op(hand, prev, declared, &rules, None)
        }
    }
}

fn required_cards(obj: &Map<String, Value>, name: &str) -> Result<RankCounts, Failure> {
    cards_field(obj, name)?.ok_or_else(|| Failure::bad_request(format!("missing field {name:?}")))
}

/// A cards field: text notation or an array of card ids; `None` when absent or `null`.
fn cards_field(obj: &Map<String, Value>, name: &str) -> Result<Option<RankCounts>, Failure> {
    match obj.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.parse::<RankCounts>()?)),
        Some(Value::Array(items)) => {
            let mut ids = Vec::with_capacity(items.len().min(108));
            for item in items {
                let id = item
                    .as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| {
                        Failure::new(
                            "BAD_CARD_ID",
                            format!("card id {} is not a number 0..=107", cut(&item.to_string())),
                        )
                    })?;
                ids.push(id);
                if ids.len() > 108 {
                    break; // a duplicate is certain; from_ids reports it
                }
            }
            Ok(Some(CardSet::from_ids(&ids)?.rank_counts()))
        }
        Some(_) => Err(Failure::bad_request(format!(
            "field {name:?} must be card notation (a string) or an array of card ids"
        ))),
    }
}

/// Runs the batch protocol: one reply line per request line, flushed per line. Lines longer than
/// `MAX_LINE_BYTES` or not UTF-8 get a `BAD_REQUEST` reply.
pub fn batch(mut input: impl BufRead, mut output: impl Write) -> io::Result<()> {
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n =
            io::Read::take(&mut input, MAX_LINE_BYTES as u64 + 1).read_until(b'\n', &mut buf)?;
        if n == 0 {
            return Ok(());
        }
        let reply = if buf.last() != Some(&b'\n') && buf.len() > MAX_LINE_BYTES {
            skip_line(&mut input)?;
            reply_line(
                &Failure::bad_request(format!("the line is longer than {MAX_LINE_BYTES} bytes"))
                    .reply(None),
            )
        } else {
            while matches!(buf.last(), Some(b'\n' | b'\r')) {
                buf.pop();
            }
            match std::str::from_utf8(&buf) {
                Ok(line) => batch_line(line),
                Err(_) => reply_line(&Failure::bad_request("the line is not UTF-8").reply(None)),
            }
        };
        output.write_all(reply.as_bytes())?;
        output.write_all(b"\n")?;
        output.flush()?;
    }
}

/// Discards input up to and including the next newline.
fn skip_line(input: &mut impl BufRead) -> io::Result<()> {
    loop {
        let available = input.fill_buf()?;
        if available.is_empty() {
            return Ok(());
        }
        match available.iter().position(|&b| b == b'\n') {
            Some(i) => {
                input.consume(i + 1);
                return Ok(());
            }
            None => {
                let len = available.len();
                input.consume(len);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_examples() {
        assert_eq!(
            batch_line(r#"{"op":"classify","variant":"baibian","cards":"7 7 7 7 BJ"}"#),
            r#"{"ok":true,"interpretations":[{"type":"bomb","length":5,"key":"7","stars":5,"as":"7 7 7 7 7"}]}"#
        );
        assert_eq!(
            batch_line(
                r#"{"op":"beats","variant":"classic","prev":"2 2 2 2","cards":"6 6 6 6 6"}"#
            ),
            r#"{"ok":true,"beats":true}"#
        );
    }

    #[test]
    fn long_lines_are_skipped_with_one_reply() {
        let mut input = vec![b'7'; MAX_LINE_BYTES + 10];
        input.push(b'\n');
        input.extend_from_slice(br#"{"op":"classify","variant":"classic","cards":"3"}"#);
        input.push(b'\n');
        let mut out = Vec::new();
        batch(&input[..], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[0].contains("BAD_REQUEST"));
        assert!(lines[1].starts_with(r#"{"ok":true"#));
    }

    #[test]
    fn options_override_rule_settings() {
        let line = r#"{"op":"classify","variant":"baibian","options":{"cyclic_chain_bombs":"true"},"cards":"K K K K A A A A 2 2 2 2"}"#;
        let out = batch_line(line);
        assert!(out.contains(r#""cyclic":true"#), "{out}");
        let bad =
            batch_line(r#"{"op":"classify","variant":"baibian","options":{"nope":1},"cards":"3"}"#);
        assert!(bad.contains("BAD_OPTION"), "{bad}");
    }
}
