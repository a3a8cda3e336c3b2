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
//!
//! Layout: this file (the contract check and [`CompiledVariant`]), [`error`] ([`VariantError`]),
//! [`configured`] ([`ScriptVariant`] and its hooks), [`returned`] (hook results read back).

mod configured;
mod error;
mod returned;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use rhai::{AST, Dynamic, FuncArgs, Map};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::engine::{self, describe, to_json};
use super::options::{OptionSpec, OptionValue, OptionValues, parse_specs};
use crate::game::hooks::{HookError, SumRule};
use crate::rules::Rules;

pub use configured::ScriptVariant;
pub use error::VariantError;
pub use returned::{MAX_LINES, points};
pub(crate) use returned::{Returned, parse_seating};

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
        Ok(ScriptVariant::new(
            Arc::clone(self),
            values,
            rules,
            sum_rule,
        ))
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
