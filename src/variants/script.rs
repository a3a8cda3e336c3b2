//! A compiled variant script and its configured form, which implements
//! [`VariantHooks`](crate::game::hooks::VariantHooks).
//!
//! [`CompiledVariant`] is one version of one script: the AST (compiled once, shared), the content
//! hash that pins games to it, its metadata, option specs and default rules. Compiling checks the
//! contract: every required function with the right parameters, `meta()`, `options()`,
//! `rules(opts)` (converted to [`Rules`] through its serde names and validated) and
//! `sum_rule(opts)`. [`ScriptVariant`] is a compiled variant with a game's option values; its
//! hooks convert the facts to Rhai maps, call the script under the sandbox, and read the result
//! back strictly (a wrong shape is a [`HookError`] naming the offending field).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use rhai::{AST, Array, Dynamic, FuncArgs, Map};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::engine::{self, describe, to_centi_saturating, to_json};
use super::facts;
use super::options::{OptionSpec, OptionValue, OptionValues, parse_specs};
use crate::game::hooks::{
    Centi, DealFacts, EscapeFacts, HookError, LineItem, Seat, SeatingDecision, SeatingFacts,
    Settlement, SumRule, TimeoutFacts, VariantHooks,
};
use crate::rules::Rules;

/// Why a variant script cannot be used (or a version cannot become active).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VariantError {
    #[error("{origin}: cannot read the script: {message}")]
    Io { origin: String, message: String },
    #[error("{origin}{}: syntax error: {message}", at(*.line, *.column))]
    Syntax {
        origin: String,
        message: String,
        line: Option<usize>,
        column: Option<usize>,
    },
    #[error("{origin}: contract: {message}")]
    Contract { origin: String, message: String },
    #[error("{origin}: {error}")]
    Hook { origin: String, error: HookError },
    #[error("{origin}: example {name:?} failed: {message}")]
    Example {
        origin: String,
        name: String,
        message: String,
    },
    #[error(
        "{origin}: random check failed (seed {seed}, case {case}, {hook}): {message}\n  facts: {facts}"
    )]
    Random {
        origin: String,
        seed: u64,
        case: usize,
        hook: String,
        message: String,
        facts: String,
    },
    /// A bad option value or name: the message names the option (the script's file is not the
    /// caller's business, so it is kept out of the message).
    #[error("{message}")]
    Options { origin: String, message: String },
    #[error("no variant {0:?}")]
    Unknown(String),
}

fn at(line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!(":{l}:{c}"),
        (Some(l), None) => format!(":{l}"),
        _ => String::new(),
    }
}

impl VariantError {
    /// The file or origin the error is about (empty for `Unknown`).
    pub fn origin(&self) -> &str {
        match self {
            VariantError::Io { origin, .. }
            | VariantError::Syntax { origin, .. }
            | VariantError::Contract { origin, .. }
            | VariantError::Hook { origin, .. }
            | VariantError::Example { origin, .. }
            | VariantError::Random { origin, .. }
            | VariantError::Options { origin, .. } => origin,
            VariantError::Unknown(_) => "",
        }
    }
}

/// The functions every variant script defines, with their parameters.
pub const REQUIRED_FUNCTIONS: [(&str, &[&str]); 9] = [
    ("meta", &[]),
    ("options", &[]),
    ("rules", &["opts"]),
    ("sum_rule", &["opts"]),
    ("seating", &["facts", "opts"]),
    ("settle", &["facts", "opts"]),
    ("settle_escape", &["facts", "opts"]),
    ("timeout_is_escape", &["facts", "opts"]),
    ("examples", &[]),
];

/// What `meta()` declares.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Meta {
    /// Stable id (`classic`, `jj`…); equals the file name without `.rhai`.
    pub id: String,
    /// Display name (經典雙扣…).
    pub name: String,
    /// 4 (two teams) or 2.
    pub players: u8,
    /// One paragraph for operators and lobbies.
    pub description: String,
    /// Which rule text the variant follows (seed, docs/rules/RULES.md sections).
    pub source: String,
    /// 雙明: partners see each other's hands (JJ).
    pub partners_see_hands: bool,
    /// The bot that plays 托管 in this variant's games unless CreateGame names one (any name
    /// `bot::styles::spec` accepts); `None` = the server's `--auto-policy`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto_policy: Option<String>,
}

/// The content hash of a script: SHA-256 of its bytes, lower-case hex. Games pin this.
pub fn content_hash(source: &str) -> String {
    hex::encode(Sha256::digest(source.as_bytes()))
}

/// One compiled version of one variant script.
pub struct CompiledVariant {
    origin: String,
    hash: String,
    source: Arc<str>,
    ast: Arc<AST>,
    meta: Meta,
    specs: Vec<OptionSpec>,
    default_rules: Rules,
}

impl fmt::Debug for CompiledVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompiledVariant")
            .field("id", &self.meta.id)
            .field("hash", &self.short_hash())
            .field("origin", &self.origin)
            .finish()
    }
}

/// Compiles a script of any family (a syntax error with its location) and checks that it defines
/// the `required` functions.
pub(super) fn checked_ast(
    origin: &str,
    source: &str,
    required: &[(&str, &[&str])],
) -> Result<AST, VariantError> {
    let ast = engine::compile(origin, source).map_err(|e| VariantError::Syntax {
        origin: origin.to_string(),
        message: e.message,
        line: e.line,
        column: e.column,
    })?;
    check_functions(&ast, origin, required)?;
    Ok(ast)
}

/// Checks that `ast` defines every function of `required` with its parameters (the contract of
/// a script family).
fn check_functions(
    ast: &AST,
    origin: &str,
    required: &[(&str, &[&str])],
) -> Result<(), VariantError> {
    let mut missing = Vec::new();
    for (name, params) in required {
        let found: Vec<_> = ast.iter_functions().filter(|f| f.name == *name).collect();
        if found.is_empty() {
            missing.push(format!("{name}({})", params.join(", ")));
        } else if !found.iter().any(|f| f.params.len() == params.len()) {
            let have: Vec<String> = found
                .iter()
                .map(|f| format!("{name}({})", f.params.join(", ")))
                .collect();
            return Err(contract(
                origin,
                format!(
                    "{name} must take ({}); the script defines {}",
                    params.join(", "),
                    have.join(", ")
                ),
            ));
        }
    }
    if !missing.is_empty() {
        return Err(contract(
            origin,
            format!("missing hook function(s): {}", missing.join(", ")),
        ));
    }
    Ok(())
}

/// A bad option value or name given to the script `origin` ([`VariantError::Options`]).
pub(super) fn options_error(origin: &str, message: String) -> VariantError {
    VariantError::Options {
        origin: origin.to_string(),
        message,
    }
}

pub(super) fn contract(origin: &str, message: impl Into<String>) -> VariantError {
    VariantError::Contract {
        origin: origin.to_string(),
        message: message.into(),
    }
}

/// The contract checks every family's compile makes, in this order: `source` compiles with its
/// family's `functions` defined, `meta()` reads as the family's meta (`read_meta`), its id
/// (`id_of`) names the file `expected_id` (when the script comes from a file), and `options()`
/// returns option specs.
pub(super) fn compile_contract<M>(
    origin: &str,
    source: &str,
    expected_id: Option<&str>,
    functions: &[(&str, &[&str])],
    read_meta: impl FnOnce(&Dynamic) -> Result<M, VariantError>,
    id_of: impl FnOnce(&M) -> &str,
) -> Result<(AST, M, Vec<OptionSpec>), VariantError> {
    let ast = checked_ast(origin, source, functions)?;
    let meta = read_meta(&call_hook(&ast, origin, source, "meta", ())?)?;
    named_as_file(origin, id_of(&meta), expected_id)?;
    let specs_v = call_hook(&ast, origin, source, "options", ())?;
    let specs = parse_specs(&specs_v).map_err(|m| contract(origin, m))?;
    Ok((ast, meta, specs))
}

/// `meta().id` must be the file's stem `expected` (when the script comes from a file).
fn named_as_file(origin: &str, id: &str, expected: Option<&str>) -> Result<(), VariantError> {
    match expected {
        Some(file) if file != id => Err(contract(
            origin,
            format!("meta().id is {id:?} but the file is named {file}.rhai"),
        )),
        _ => Ok(()),
    }
}

/// Calls the script function `name` of `ast` while compiling or checking the script `origin`
/// (its text `source`): a failure is the variant's [`VariantError::Hook`].
pub(super) fn call_hook(
    ast: &AST,
    origin: &str,
    source: &str,
    name: &str,
    args: impl FuncArgs,
) -> Result<Dynamic, VariantError> {
    engine::call(ast, origin, Some(source), name, name, args).map_err(|e| hook_err(origin, e))
}

pub(super) fn hook_err(origin: &str, error: HookError) -> VariantError {
    VariantError::Hook {
        origin: origin.to_string(),
        error,
    }
}

fn shape_error(hook: &str, origin: &str, message: String) -> HookError {
    HookError {
        hook: hook.to_string(),
        message,
        location: Some(origin.to_string()),
        limit: false,
    }
}

impl CompiledVariant {
    /// Compiles `source` (named `origin` in messages, e.g. the file path) and checks the contract.
    /// `expected_id` (the file stem) must equal `meta().id` when given. The declared examples and
    /// the random settlements are checked separately (`check::run`).
    pub fn compile(
        origin: &str,
        source: &str,
        expected_id: Option<&str>,
    ) -> Result<CompiledVariant, VariantError> {
        let (ast, meta, specs) = compile_contract(
            origin,
            source,
            expected_id,
            &REQUIRED_FUNCTIONS,
            |v| parse_meta(v).map_err(|m| contract(origin, format!("meta(): {m}"))),
            |meta| &meta.id,
        )?;
        let ast = Arc::new(ast);
        let mut compiled = CompiledVariant {
            origin: origin.to_string(),
            hash: content_hash(source),
            source: Arc::from(source),
            ast,
            meta,
            specs,
            default_rules: Rules::CLASSIC,
        };
        let defaults = OptionValues::new(&compiled.specs, &BTreeMap::new())
            .map_err(|m| contract(origin, m))?;
        let (rules, _) = compiled.eval_rules(&defaults)?;
        compiled.default_rules = rules;
        Ok(compiled)
    }

    /// Evaluates `rules(opts)` and `sum_rule(opts)` for these option values.
    fn eval_rules(&self, values: &OptionValues) -> Result<(Rules, SumRule), VariantError> {
        let origin = &self.origin;
        let opts = Dynamic::from_map(values.to_map());
        let v = call_hook(&self.ast, origin, &self.source, "rules", (opts.clone(),))?;
        let json =
            to_json(&v).map_err(|m| contract(origin, format!("rules(opts) returned {m}")))?;
        let rules: Rules = serde_json::from_value(json)
            .map_err(|e| contract(origin, format!("rules(opts): {e}")))?;
        rules
            .validate()
            .map_err(|e| contract(origin, format!("rules(opts): {e}")))?;
        if rules.players != self.meta.players {
            return Err(contract(
                origin,
                format!(
                    "rules(opts).players = {} but meta().players = {}",
                    rules.players, self.meta.players
                ),
            ));
        }
        let s = call_hook(&self.ast, origin, &self.source, "sum_rule", (opts,))?;
        let sum_rule = match s.clone().into_immutable_string().ok().as_deref() {
            Some("zero") => SumRule::Zero,
            Some("zero_before_rake") => SumRule::ZeroBeforeRake,
            Some("unchecked") => SumRule::Unchecked,
            _ => {
                return Err(contract(
                    origin,
                    format!(
                        "sum_rule(opts) must return \"zero\", \"zero_before_rake\" or \"unchecked\", not {}",
                        describe(&s)
                    ),
                ));
            }
        };
        Ok((rules, sum_rule))
    }

    /// The variant id.
    pub fn id(&self) -> &str {
        &self.meta.id
    }

    /// The content hash (SHA-256 hex) that pins games to this version.
    pub fn hash(&self) -> &str {
        &self.hash
    }

    /// The first 12 hex digits of the hash, for display.
    pub fn short_hash(&self) -> &str {
        &self.hash[..12.min(self.hash.len())]
    }

    /// Where the script came from (a path, or `embedded:<id>.rhai`).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The script text (to archive a pinned version).
    pub fn source(&self) -> &str {
        &self.source
    }

    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    /// The declared options.
    pub fn options(&self) -> &[OptionSpec] {
        &self.specs
    }

    /// The card rules under the default options.
    pub fn rules(&self) -> &Rules {
        &self.default_rules
    }

    pub(crate) fn ast(&self) -> &AST {
        &self.ast
    }

    /// This version with a game's options (`overrides` on top of the defaults).
    pub fn configure(
        self: &Arc<Self>,
        overrides: &BTreeMap<String, OptionValue>,
    ) -> Result<ScriptVariant, VariantError> {
        let values = OptionValues::new(&self.specs, overrides)
            .map_err(|m| options_error(&self.origin, m))?;
        let (rules, sum_rule) = self
            .eval_rules(&values)
            .map_err(|e| self.options_refused(e))?;
        Ok(ScriptVariant {
            compiled: Arc::clone(self),
            opts: Dynamic::from_map(values.to_map()),
            values: Arc::new(values),
            rules,
            sum_rule,
        })
    }

    /// A `throw` of `rules(opts)` is the script refusing an incoherent set of options (the
    /// contract's way to say so): an option error carrying the script's message, without the
    /// file and line. Every other error stays a script error.
    fn options_refused(&self, e: VariantError) -> VariantError {
        match e {
            VariantError::Hook { origin, error } if error.hook == "rules" && !error.limit => {
                match error.message.strip_prefix("Runtime error: ") {
                    Some(thrown) => VariantError::Options {
                        origin,
                        message: format!("options refused by {}: {thrown}", self.meta.id),
                    },
                    None => VariantError::Hook { origin, error },
                }
            }
            e => e,
        }
    }

    /// This version with its default options.
    pub fn with_defaults(self: &Arc<Self>) -> Result<ScriptVariant, VariantError> {
        self.configure(&BTreeMap::new())
    }

    /// Parses `key=value` overrides against this version's options.
    pub fn parse_overrides(
        &self,
        pairs: &[String],
    ) -> Result<BTreeMap<String, OptionValue>, VariantError> {
        OptionValues::parse_overrides(&self.specs, pairs)
            .map_err(|m| options_error(&self.origin, m))
    }
}

fn parse_meta(v: &Dynamic) -> Result<Meta, String> {
    let map = v
        .read_lock::<Map>()
        .ok_or_else(|| format!("must return a map, not {}", describe(v)))?;
    const KEYS: [&str; 7] = [
        "id",
        "name",
        "players",
        "description",
        "source",
        "partners_see_hands",
        "auto_policy",
    ];
    if let Some(k) = map.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(format!("unexpected key `{k}` (keys: {})", KEYS.join(", ")));
    }
    let text = |k: &str| -> Result<String, String> {
        map.get(k)
            .and_then(|v| v.clone().into_immutable_string().ok())
            .map(|s| s.to_string())
            .ok_or_else(|| format!("`{k}` must be a string"))
    };
    let id = text("id")?;
    if id.is_empty()
        || !id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
    {
        return Err(format!(
            "id {id:?} must be lower-case letters, digits, _ or -"
        ));
    }
    let players = map
        .get("players")
        .and_then(|v| v.as_int().ok())
        .filter(|p| *p == 2 || *p == 4)
        .ok_or("`players` must be 2 or 4")? as u8;
    let partners_see_hands = map
        .get("partners_see_hands")
        .and_then(|v| v.as_bool().ok())
        .ok_or("`partners_see_hands` must be true or false")?;
    let auto_policy = match map.get("auto_policy") {
        None => None,
        Some(_) => {
            let name = text("auto_policy")?;
            crate::bot::styles::spec(&name).map_err(|e| format!("`auto_policy`: {e}"))?;
            Some(name)
        }
    };
    Ok(Meta {
        id,
        name: text("name")?,
        players,
        description: text("description")?,
        source: text("source")?,
        partners_see_hands,
        auto_policy,
    })
}

/// A compiled variant configured with a game's option values: the deal engine's
/// [`VariantHooks`]. Cheap to clone (the AST and option values are shared).
#[derive(Clone)]
pub struct ScriptVariant {
    compiled: Arc<CompiledVariant>,
    values: Arc<OptionValues>,
    /// The `opts` argument of every hook, built once per configuration (each call gets a copy,
    /// so that a script cannot change what the next call sees).
    opts: Dynamic,
    rules: Rules,
    sum_rule: SumRule,
}

impl fmt::Debug for ScriptVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScriptVariant")
            .field("id", &self.compiled.id())
            .field("hash", &self.compiled.short_hash())
            .field("options", &self.values)
            .finish()
    }
}

/// The most line items a settlement may have.
pub const MAX_LINES: usize = 512;

impl ScriptVariant {
    /// The compiled version (id, hash, meta…).
    pub fn compiled(&self) -> &Arc<CompiledVariant> {
        &self.compiled
    }

    /// The option values of this configuration.
    pub fn option_values(&self) -> &OptionValues {
        &self.values
    }

    /// One option value (e.g. `turn_seconds`, `deals_per_match`, `reconnect_seconds`).
    pub fn option(&self, name: &str) -> Option<&OptionValue> {
        self.values.get(name)
    }

    fn call(&self, hook: &str, facts: Dynamic) -> Result<Dynamic, HookError> {
        engine::call(
            self.compiled.ast(),
            self.compiled.origin(),
            Some(self.compiled.source()),
            hook,
            hook,
            (facts, self.opts.clone()),
        )
    }

    /// What `hook` of this configuration returned is read back for.
    fn returned<'a>(&'a self, hook: &'a str) -> Returned<'a> {
        Returned {
            hook,
            origin: self.compiled.origin(),
            players: self.rules.players,
        }
    }

    fn settlement(&self, hook: &str, v: Dynamic) -> Result<Settlement, HookError> {
        parse_settlement(&v, self.returned(hook))
    }
}

/// What a hook returned is read back for: the hook `hook` of the script `origin`, in a game of
/// `players` seats. Its shape errors name both.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Returned<'a> {
    pub hook: &'a str,
    pub origin: &'a str,
    pub players: u8,
}

impl Returned<'_> {
    /// A shape error: `{hook} returned {message}`.
    fn err(&self, message: String) -> HookError {
        let hook = self.hook;
        shape_error(hook, self.origin, format!("{hook} returned {message}"))
    }

    /// The map the hook returned, holding no key but `keys`; `shape` (e.g. `#{ leader, swap }`)
    /// names what was expected in the error.
    fn map<'v>(
        &self,
        v: &'v Dynamic,
        keys: &[&str],
        shape: &str,
    ) -> Result<impl std::ops::Deref<Target = Map> + 'v, HookError> {
        let map = v
            .read_lock::<Map>()
            .ok_or_else(|| self.err(format!("{}; expected {shape}", describe(v))))?;
        if let Some(k) = map.keys().find(|k| !keys.contains(&k.as_str())) {
            return Err(self.err(format!("an unexpected key `{k}`; expected {shape}")));
        }
        Ok(map)
    }
}

fn parse_settlement(v: &Dynamic, of: Returned) -> Result<Settlement, HookError> {
    let players = of.players;
    let err = |m: String| of.err(m);
    let map = of.map(v, &["lines"], "#{ lines: [...] }")?;
    let lines_v = map
        .get("lines")
        .ok_or_else(|| err("a map without `lines`; expected #{ lines: [...] }".into()))?;
    let lines = lines_v.read_lock::<Array>().ok_or_else(|| {
        err(format!(
            "lines = {}; expected an array of line items",
            describe(lines_v)
        ))
    })?;
    let mut out = Settlement {
        scores: vec![0; players as usize],
        lines: Vec::with_capacity(lines.len()),
    };
    let mut notes: Vec<LineItem> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        parse_line(line, players, &mut out.lines, &mut notes)
            .map_err(|m| err(format!("lines[{i}]: {m}")))?;
        if out.lines.len() > MAX_LINES {
            return Err(err(format!(
                "more than {MAX_LINES} line items (lines[{i}] passes the limit)"
            )));
        }
    }
    // At most one `saturated` note per seat (zero points: the sums stay as they are).
    out.lines.extend(notes);
    for (j, item) in out.lines.iter().enumerate() {
        let slot = &mut out.scores[item.seat.index()];
        *slot = slot.checked_add(item.amount).ok_or_else(|| {
            err(format!(
                "line item {j} (seat {}): the seat's total overflows",
                item.seat
            ))
        })?;
    }
    Ok(out)
}

/// Reads one line of a settlement into `out`: `#{ seat, label, points, detail }` is one line
/// item; `#{ label, points: [p0, p1, …], detail }` (points by seat, one entry per player) is one
/// line item for every seat whose entry is not zero, in seat order, sharing label and detail.
/// An amount beyond the host's line limit is saturated, and the seat gets a zero-point
/// `saturated` note in `notes` (the first such amount of the seat is the one described).
fn parse_line(
    v: &Dynamic,
    players: u8,
    out: &mut Vec<LineItem>,
    notes: &mut Vec<LineItem>,
) -> Result<(), String> {
    let map = v.read_lock::<Map>().ok_or_else(|| {
        format!(
            "{}; expected #{{ seat, label, points, detail }} or #{{ label, points: [by seat], detail }}",
            describe(v)
        )
    })?;
    const KEYS: [&str; 4] = ["seat", "label", "points", "detail"];
    if let Some(k) = map.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(format!(
            "unexpected key `{k}` (keys: seat, label, points, detail)"
        ));
    }
    let get = |k: &str| map.get(k).ok_or_else(|| format!("missing `{k}`"));
    let label_v = get("label")?;
    let label_ref = label_v
        .as_immutable_string_ref()
        .map_err(|_| format!("label = {}; expected a string", describe(label_v)))?;
    let label = label_ref.as_str();
    if label.is_empty()
        || label.len() > 32
        || !label
            .bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_')
    {
        return Err(format!(
            "label {label:?} must be 1–32 lower-case letters, digits or _"
        ));
    }
    let detail_v = get("detail")?;
    let detail_ref = detail_v
        .as_immutable_string_ref()
        .map_err(|_| format!("detail = {}; expected a string", describe(detail_v)))?;
    // A detail longer than 256 characters (e.g. the list of every bomb of a heavy deal) is cut
    // to 255 and an ellipsis: the settlement stands. A string of at most 256 bytes has at most
    // 256 characters: count only longer ones.
    let detail: std::borrow::Cow<str> =
        if detail_ref.len() > 256 && detail_ref.chars().count() > 256 {
            let mut cut: String = detail_ref.chars().take(255).collect();
            cut.push('…');
            cut.into()
        } else {
            detail_ref.as_str().into()
        };
    let detail = detail.as_ref();
    let points_v = get("points")?;
    if let Some(by_seat) = points_v.read_lock::<Array>() {
        if map.contains_key("seat") {
            return Err(
                "points is an array (points by seat) and `seat` is given: use one or the other"
                    .into(),
            );
        }
        if by_seat.len() != players as usize {
            return Err(format!(
                "points has {} entries; points by seat needs one per player ({players})",
                by_seat.len()
            ));
        }
        for (seat, p) in by_seat.iter().enumerate() {
            let (amount, saturated) =
                to_centi_saturating(p).map_err(|m| format!("points[{seat}]: {m}"))?;
            if saturated {
                note_saturation(notes, Seat::at(seat), label, p);
            }
            if amount != 0 {
                out.push(LineItem {
                    seat: Seat::at(seat),
                    label: label.to_string(),
                    amount,
                    detail: detail.to_string(),
                });
            }
        }
        return Ok(());
    }
    let seat_v = get("seat")?;
    let seat = seat_v
        .as_int()
        .ok()
        .filter(|s| (0..players as i64).contains(s))
        .ok_or_else(|| {
            format!(
                "seat = {} is not a seat 0..{}",
                describe(seat_v),
                players.saturating_sub(1)
            )
        })
        .map(|s| Seat::new(s as u8))?;
    let (amount, saturated): (Centi, bool) =
        to_centi_saturating(points_v).map_err(|m| format!("points: {m}"))?;
    if saturated {
        note_saturation(notes, seat, label, points_v);
    }
    out.push(LineItem {
        seat,
        label: label.to_string(),
        amount,
        detail: detail.to_string(),
    });
    Ok(())
}

/// Records that `seat`'s amount `raw` on the line `label` was saturated (once per seat).
fn note_saturation(notes: &mut Vec<LineItem>, seat: Seat, label: &str, raw: &Dynamic) {
    if notes.iter().any(|n| n.seat == seat) {
        return;
    }
    let cap = engine::MAX_POINTS;
    notes.push(LineItem {
        seat,
        label: crate::game::hooks::SATURATED.to_string(),
        amount: 0,
        detail: format!("{label}: {raw} points capped at ±{cap:e} (the host's line limit)"),
    });
}

/// Reads a seating decision (`#{ leader, swap }`, `swap` = `()` or `[a, b]`).
pub(crate) fn parse_seating(v: &Dynamic, of: Returned) -> Result<SeatingDecision, HookError> {
    let players = of.players;
    let err = |m: String| of.err(m);
    let map = of.map(v, &["leader", "swap"], "#{ leader, swap }")?;
    let seat = |v: &Dynamic, what: &str| -> Result<Seat, HookError> {
        v.as_int()
            .ok()
            .filter(|s| (0..players as i64).contains(s))
            .map(|s| Seat::new(s as u8))
            .ok_or_else(|| {
                err(format!(
                    "{what} = {}; expected a seat 0..{}",
                    describe(v),
                    players.saturating_sub(1)
                ))
            })
    };
    let leader = seat(
        map.get("leader").ok_or_else(|| err("no `leader`".into()))?,
        "leader",
    )?;
    let swap = match map.get("swap") {
        None => None,
        Some(s) if s.is_unit() => None,
        Some(s) => {
            let arr = s
                .read_lock::<Array>()
                .filter(|a| a.len() == 2)
                .ok_or_else(|| {
                    err(format!(
                        "swap = {}; expected () or [seat, seat]",
                        describe(s)
                    ))
                })?;
            let a = seat(&arr[0], "swap[0]")?;
            let b = seat(&arr[1], "swap[1]")?;
            if a == b {
                return Err(err(format!(
                    "swap = [{a}, {b}]: a seat cannot swap with itself"
                )));
            }
            Some((a, b))
        }
    };
    Ok(SeatingDecision { leader, swap })
}

impl ScriptVariant {
    /// Runs one hook call and records it in the script metrics (calls, latency, errors, limit
    /// hits — by variant, version and hook), shape errors included.
    fn observed<T>(
        &self,
        hook: &'static str,
        f: impl FnOnce() -> Result<T, HookError>,
    ) -> Result<T, HookError> {
        let start = Instant::now();
        let r = f();
        let (error, limit) = match &r {
            Ok(_) => (false, false),
            Err(e) => (true, e.limit),
        };
        crate::metrics::script_call(
            self.compiled.id(),
            self.compiled.hash(),
            hook,
            start.elapsed().as_secs_f64(),
            error,
            limit,
        );
        r
    }
}

impl VariantHooks for ScriptVariant {
    fn rules(&self) -> &Rules {
        &self.rules
    }

    fn partners_see_hands(&self) -> bool {
        self.compiled.meta.partners_see_hands
    }

    fn sum_rule(&self) -> SumRule {
        self.sum_rule
    }

    fn seating(&self, f: &SeatingFacts) -> Result<SeatingDecision, HookError> {
        self.observed("seating", || {
            let v = self.call("seating", facts::seating_map(f))?;
            parse_seating(&v, self.returned("seating"))
        })
    }

    fn settle(&self, f: &DealFacts) -> Result<Settlement, HookError> {
        self.observed("settle", || {
            let v = self.call("settle", facts::deal_map(f))?;
            self.settlement("settle", v)
        })
    }

    fn settle_escape(&self, f: &EscapeFacts) -> Result<Settlement, HookError> {
        self.observed("settle_escape", || {
            let v = self.call("settle_escape", facts::escape_map(f))?;
            self.settlement("settle_escape", v)
        })
    }

    fn timeout_is_escape(&self, f: &TimeoutFacts) -> Result<bool, HookError> {
        self.observed("timeout_is_escape", || {
            let v = self.call("timeout_is_escape", facts::timeout_map(f))?;
            v.as_bool().map_err(|_| {
                shape_error(
                    "timeout_is_escape",
                    self.compiled.origin(),
                    format!(
                        "timeout_is_escape returned {}; expected true or false",
                        describe(&v)
                    ),
                )
            })
        })
    }
}

/// Hundredths as a points string (`950` → `9.5`, `-400` → `-4`).
pub fn points(centi: impl Into<i128>) -> String {
    let c: i128 = centi.into();
    let sign = if c < 0 { "-" } else { "" };
    let a = c.unsigned_abs();
    let (whole, frac) = (a / 100, a % 100);
    match frac {
        0 => format!("{sign}{whole}"),
        f if f % 10 == 0 => format!("{sign}{whole}.{}", f / 10),
        f => format!("{sign}{whole}.{f:02}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A four-seat `settle` of the script "test".
    const SETTLE: Returned = Returned {
        hook: "settle",
        origin: "test",
        players: 4,
    };

    /// classic.rhai with `line` added to its `meta()` map.
    fn classic_with_meta(line: &str) -> String {
        let src = super::super::EMBEDDED
            .iter()
            .find(|(id, _)| *id == "classic")
            .unwrap()
            .1;
        let at = "        partners_see_hands: false,\n";
        assert!(src.contains(at), "classic.rhai's meta() changed shape");
        src.replacen(at, &format!("{at}        {line}\n"), 1)
    }

    #[test]
    fn meta_may_name_the_variants_tuoguan_bot_and_an_unknown_one_is_rejected() {
        let plain = CompiledVariant::compile("classic.rhai", &classic_with_meta(""), None).unwrap();
        assert_eq!(plain.meta().auto_policy, None);
        let named = classic_with_meta(r#"auto_policy: "search:40","#);
        let v = CompiledVariant::compile("classic.rhai", &named, None).unwrap();
        assert_eq!(v.meta().auto_policy.as_deref(), Some("search:40"));
        for bad in [r#"auto_policy: "grandmaster","#, "auto_policy: 3,"] {
            let e = CompiledVariant::compile("classic.rhai", &classic_with_meta(bad), None)
                .expect_err(bad)
                .to_string();
            assert!(e.contains("auto_policy"), "{bad}: {e}");
        }
    }

    #[test]
    fn points_by_seat_are_one_line_item_per_seat_with_points() {
        let v: Dynamic = engine::engine()
            .eval(
                r#"#{ lines: [
                    #{ label: "base", points: [4, 0, -4, 0.5], detail: "雙扣" },
                    #{ seat: 1, label: "rake", points: -1, detail: "稅" },
                    #{ label: "contribution", points: [0, 0, 0, 0], detail: "nothing" },
                ] }"#,
            )
            .unwrap();
        let s = parse_settlement(&v, SETTLE).unwrap();
        assert_eq!(s.scores, vec![400, -100, -400, 50]);
        let items: Vec<_> = s
            .lines
            .iter()
            .map(|l| {
                (
                    l.seat.number(),
                    l.label.as_str(),
                    l.amount,
                    l.detail.as_str(),
                )
            })
            .collect();
        assert_eq!(
            items,
            vec![
                (0, "base", 400, "雙扣"),
                (2, "base", -400, "雙扣"),
                (3, "base", 50, "雙扣"),
                (1, "rake", -100, "稅"),
            ]
        );
    }

    proptest::proptest! {
        // As tests/properties.rs: no failure files in the source tree; proptest prints the
        // failing case and its seed.
        #![proptest_config(proptest::test_runner::Config {
            failure_persistence: None,
            ..proptest::test_runner::Config::default()
        })]

        /// Points by seat and one line per seat are the same settlement: equal scores, and the
        /// by-seat form lists exactly the seats with points, in seat order.
        #[test]
        fn points_by_seat_equal_one_line_per_seat(
            rows in proptest::collection::vec(proptest::collection::vec(-1000i64..1000, 4), 0..20),
        ) {
            let line = |seat: Option<usize>, points: Dynamic| {
                let mut m = Map::new();
                if let Some(s) = seat {
                    m.insert("seat".into(), Dynamic::from_int(s as i64));
                }
                m.insert("label".into(), "x".into());
                m.insert("points".into(), points);
                m.insert("detail".into(), "".into());
                Dynamic::from_map(m)
            };
            let settlement = |lines: Array| {
                let mut m = Map::new();
                m.insert("lines".into(), Dynamic::from_array(lines));
                Dynamic::from_map(m)
            };
            let by_seat: Array = rows
                .iter()
                .map(|r| line(None, Dynamic::from_array(r.iter().map(|&p| p.into()).collect())))
                .collect();
            let per_seat: Array = rows
                .iter()
                .flat_map(|r| {
                    r.iter()
                        .enumerate()
                        .filter(|(_, p)| **p != 0)
                        .map(|(s, &p)| line(Some(s), p.into()))
                        .collect::<Vec<_>>()
                })
                .collect();
            let a = parse_settlement(&settlement(by_seat), SETTLE).unwrap();
            let b = parse_settlement(&settlement(per_seat), SETTLE).unwrap();
            proptest::prop_assert_eq!(&a.scores, &b.scores);
            proptest::prop_assert_eq!(&a.lines, &b.lines);
            let sums: Vec<i64> = (0..4).map(|s| rows.iter().map(|r| r[s] * 100).sum()).collect();
            proptest::prop_assert_eq!(a.scores, sums);
        }
    }

    #[test]
    fn a_settlement_has_at_most_max_lines_line_items() {
        // (A script cannot build this: its map-size limit counts every line's keys first.)
        let line = |n: i64| {
            let mut m = Map::new();
            m.insert("label".into(), "x".into());
            m.insert("points".into(), Dynamic::from_array(vec![n.into(); 4]));
            m.insert("detail".into(), "".into());
            Dynamic::from_map(m)
        };
        let settlement = |maps: usize| {
            let mut m = Map::new();
            m.insert(
                "lines".into(),
                Dynamic::from_array((0..maps).map(|_| line(1)).collect()),
            );
            Dynamic::from_map(m)
        };
        let ok = parse_settlement(&settlement(MAX_LINES / 4), SETTLE).unwrap();
        assert_eq!(ok.lines.len(), MAX_LINES);
        assert_eq!(ok.scores, vec![100 * (MAX_LINES / 4) as i64; 4]);
        let e = parse_settlement(&settlement(MAX_LINES / 4 + 1), SETTLE).unwrap_err();
        assert!(
            e.message
                .contains("more than 512 line items (lines[128] passes the limit)"),
            "{e}"
        );
    }

    /// Both families refuse a file whose stem is not the script's `meta().id`, and take it when
    /// it is (or when the script comes from no file).
    #[test]
    fn a_script_must_be_named_after_its_meta_id() {
        let classic = classic_with_meta("");
        let shengji = super::super::SHENGJI_EMBEDDED[0].1;
        let refused = |r: Result<(), VariantError>, id: &str| match r {
            Err(VariantError::Contract { message, .. }) => assert_eq!(
                message,
                format!("meta().id is {id:?} but the file is named other.rhai")
            ),
            other => panic!("expected a contract error for {id}, got {other:?}"),
        };
        refused(
            CompiledVariant::compile("other.rhai", &classic, Some("other")).map(|_| ()),
            "classic",
        );
        refused(
            super::super::ShengjiVariant::compile("other.rhai", shengji, Some("other")).map(|_| ()),
            "shengji",
        );
        assert!(CompiledVariant::compile("classic.rhai", &classic, Some("classic")).is_ok());
        assert!(CompiledVariant::compile("inline", &classic, None).is_ok());
        assert!(
            super::super::ShengjiVariant::compile("shengji.rhai", shengji, Some("shengji")).is_ok()
        );
    }
}
