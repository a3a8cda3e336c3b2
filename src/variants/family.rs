//! Game families of variant scripts: which game a script is for, and what the registry needs of
//! a compiled version of any family.
//!
//! A script names its game in `meta().game` (`"shengji"` for 升級); without the key it is a
//! Shuangkou script (the six Shuangkou scripts predate the key and keep their content hashes).
//! The registry ([`Registry`](super::Registry)) is generic over [`Family`]: one registry per game
//! family, each loading only the scripts of its game from the same directory, with the same
//! versioning, pinning, activation checks and hot reload.

use std::sync::Arc;

use rhai::Map;

use super::check::CheckReport;
use super::engine;
use super::script::{CompiledVariant, VariantError};

/// The game of Shuangkou scripts (and of every script that does not say).
pub const SHUANGKOU: &str = "shuangkou";

/// A family's compile: a script's origin (named in messages), its text and the id its file
/// name expects → a compiled version whose contract was checked.
pub type Compile<V> = fn(&str, &str, Option<&str>) -> Result<V, VariantError>;

/// A family's activation checks of a compiled version: the declared examples and `random`
/// random hook calls drawn from `seed`.
pub type Check<V> = fn(&Arc<V>, usize, u64) -> Result<CheckReport, VariantError>;

/// What the registry needs of a compiled version of one game family.
pub trait Family: Send + Sync + Sized + 'static {
    /// The `meta().game` of this family's scripts.
    const GAME: &'static str;
    /// The scripts compiled into the binary for this family, by id.
    const EMBEDDED: &'static [(&'static str, &'static str)];
    /// Compiles a script and checks its contract (`expected_id`: the file stem).
    const COMPILE: Compile<Self>;
    /// Runs the activation checks: the declared examples and `random` random hook calls.
    const CHECK: Check<Self>;
    fn id(&self) -> &str;
    /// The content hash (SHA-256 of the text, hex) games pin.
    fn hash(&self) -> &str;
    fn short_hash(&self) -> &str {
        &self.hash()[..12.min(self.hash().len())]
    }
    fn source(&self) -> &str;
}

impl Family for CompiledVariant {
    const GAME: &'static str = SHUANGKOU;
    const EMBEDDED: &'static [(&'static str, &'static str)] = &super::EMBEDDED;
    const COMPILE: Compile<Self> = CompiledVariant::compile;
    const CHECK: Check<Self> = super::check::run;
    fn id(&self) -> &str {
        CompiledVariant::id(self)
    }
    fn hash(&self) -> &str {
        CompiledVariant::hash(self)
    }
    fn short_hash(&self) -> &str {
        CompiledVariant::short_hash(self)
    }
    fn source(&self) -> &str {
        CompiledVariant::source(self)
    }
}

/// The game a script is for: its `meta().game`, or [`SHUANGKOU`] when it has none — or when the
/// script does not compile or its `meta()` fails (the Shuangkou registry then reports why, as it
/// always did).
pub fn game_of(origin: &str, source: &str) -> String {
    let game = || -> Option<String> {
        let ast = engine::compile(origin, source).ok()?;
        let meta = engine::call(&ast, origin, Some(source), "meta", "meta", ()).ok()?;
        let map = meta.read_lock::<Map>()?;
        let game = map.get("game")?.clone().into_immutable_string().ok()?;
        Some(game.to_string())
    };
    game().unwrap_or_else(|| SHUANGKOU.to_string())
}
