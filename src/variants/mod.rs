//! The Rhai host: variant scripts (`variants/*.rhai`), their sandbox, registry and hot reload.
//!
//! The only module that knows Rhai. It turns a script into typed card rules ([`Rules`]) and an
//! implementation of the core's [`VariantHooks`](crate::game::hooks::VariantHooks)
//! ([`ScriptVariant`]), enforces the sandbox ([`engine`]), and pins each game to the exact script
//! version it started with (the SHA-256 content hash, [`Registry::get`]).
//!
//! The script contract (docs/VARIANTS.md is the operators' guide): one file per variant defining
//! - `meta()` → `#{ id, name, players, description, source, partners_see_hands, auto_policy? }`;
//! - `options()` → `#{ name: #{ type, default, min, max | choices, doc }, … }`;
//! - `rules(opts)` → a map of the [`Rules`] fields by their serde names;
//! - `sum_rule(opts)` → `"zero"`, `"zero_before_rake"` or `"unchecked"`;
//! - hooks `seating(facts, opts)`, `settle(facts, opts)`, `settle_escape(facts, opts)`,
//!   `timeout_is_escape(facts, opts)`, and optionally `contribution(stars, opts)` (the 貢獻分
//!   units of a bomb, by which the engine arranges the bombs left in a hand);
//! - `examples()` → worked examples (facts + options → expected result) checked before a version
//!   becomes active.
//!
//! Layout: [`engine`] (the one engine configuration, error mapping, value conversions),
//! [`options`] (typed options), [`schema`] (their machine-readable schema), [`facts`] (facts ↔
//! maps and JSON, random facts), [`script`] (compiled and configured variants), [`check`]
//! (examples and random settlements), [`registry`] (versions, activation, pinning) and [`watch`]
//! (directory watcher).
//!
//! Depends on the rules core and `game::hooks`; the core never depends on this module.

pub mod check;
pub mod engine;
pub mod extremes;
pub mod facts;
pub mod family;
pub mod options;
pub mod registry;
pub mod schema;
pub mod script;
pub mod shengji;
pub mod watch;

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

pub use check::CheckReport;
pub use family::Family;
pub use options::{OptionKind, OptionSpec, OptionValue, OptionValues};
pub use registry::{Registry, RegistryConfig, RegistryError, RegistryStats, ReloadReport};
pub use schema::{Bounds, Number, OptionSchema, OptionType};
pub use script::{CompiledVariant, Meta, ScriptVariant, VariantError, content_hash};
pub use shengji::{SHENGJI_EMBEDDED, ShengjiScript, ShengjiVariant};
pub use watch::DirWatcher;

use crate::rules::Rules;

/// The scripts compiled into the binary (`variants/*.rhai` at build time), by id. They are the
/// defaults when no variants directory is configured.
pub const EMBEDDED: [(&str, &str); 6] = [
    ("classic", include_str!("../../variants/classic.rhai")),
    ("jj", include_str!("../../variants/jj.rhai")),
    ("baibian", include_str!("../../variants/baibian.rhai")),
    ("huopin", include_str!("../../variants/huopin.rhai")),
    ("qianbian", include_str!("../../variants/qianbian.rhai")),
    ("erren", include_str!("../../variants/erren.rhai")),
];

/// The origin (name in messages) of an embedded script.
pub fn embedded_origin(id: &str) -> String {
    format!("embedded:{id}.rhai")
}

type Compiled = BTreeMap<&'static str, Result<Arc<CompiledVariant>, VariantError>>;

fn embedded_compiled() -> &'static Compiled {
    static CACHE: OnceLock<Compiled> = OnceLock::new();
    CACHE.get_or_init(|| {
        EMBEDDED
            .iter()
            .map(|(id, src)| {
                (
                    *id,
                    CompiledVariant::compile(&embedded_origin(id), src, Some(id)).map(Arc::new),
                )
            })
            .collect()
    })
}

/// The embedded script `id`, compiled (once per process) and contract-checked. Its examples and
/// random checks are run by the tests and by `shuangkou variants check`, not here.
pub fn builtin(id: &str) -> Result<Arc<CompiledVariant>, VariantError> {
    match embedded_compiled().get(id) {
        Some(Ok(v)) => Ok(Arc::clone(v)),
        Some(Err(e)) => Err(e.clone()),
        None => Err(VariantError::Unknown(id.to_string())),
    }
}

/// The card rules of the embedded variant `id` under its default options: the single source of
/// the variants' [`Rules`] (replacing `Rules::preset`).
pub fn builtin_rules(id: &str) -> Result<Rules, VariantError> {
    builtin(id).map(|v| *v.rules())
}

/// Compiles a script of the game family `V` ([`CompiledVariant`] for Shuangkou,
/// [`ShengjiVariant`] for 升級), checks its contract, runs its examples and `random` random calls
/// (deals for Shuangkou) seeded by `seed`: everything a version must pass to become active.
pub fn load<V: Family>(
    origin: &str,
    source: &str,
    expected_id: Option<&str>,
    random: usize,
    seed: u64,
) -> Result<(Arc<V>, CheckReport), VariantError> {
    let compiled = Arc::new((V::COMPILE)(origin, source, expected_id)?);
    let report = (V::CHECK)(&compiled, random, seed)?;
    Ok((compiled, report))
}
