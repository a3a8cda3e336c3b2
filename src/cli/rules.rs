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
//!
//! Layout: this file (the command line), [`questions`] (rules, cards, the three questions and
//! their failures), [`reply`] (answers as JSON replies and readable lines), [`batch`] (the
//! JSON-lines protocol).

mod batch;
mod questions;
mod reply;

use std::io::{self, Write};
use std::process::ExitCode;

use crate::hand::HandType;
use crate::hints;
use crate::rules::Rules;

use batch::to_json_line;
pub use batch::{batch, batch_line};
use questions::{
    Failure, beats_op, cards_arg, classify_op, declared, parse_cli_options, plays_op, rules_for,
};
use reply::{Answer, describe};

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
