//! The one Rhai engine configuration of the service, and the plumbing around a script call.
//!
//! Every script runs on the same [`Engine`], built once here ([`engine`]): a raw engine (no file,
//! network, time or module access; `import`, `export` and `eval` disabled), the standard library
//! minus its clock, strict variables, missing map properties as errors, `print` / `debug` routed to
//! `tracing`, and hard limits on operations, call depth, expression depth and data sizes
//! ([`LIMITS`]). A script that errors, loops or exceeds a limit yields a typed
//! [`HookError`] with the file, line and column; a panic inside the engine is caught and reported
//! the same way.
//!
//! Beside it: `values.rs`, the strict conversions between Rhai values and JSON (`to_json`,
//! `from_json`) and from script numbers to [`Centi`]; `shuangkou.rs`, the script types of the
//! Shuangkou family registered in this shared engine (the bomb fact, `Bomb`). Both are
//! re-exported here, so `variants::engine::X` names each.

mod shuangkou;
#[cfg(test)]
mod tests;
mod values;

pub use shuangkou::BOMB_KEYS;
pub use values::{MAX_POINTS, describe, from_json, to_centi, to_centi_saturating, to_json};

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::LazyLock;

use rhai::packages::{
    ArithmeticPackage, BasicArrayPackage, BasicFnPackage, BasicIteratorPackage, BasicMapPackage,
    BasicMathPackage, BasicStringPackage, LanguageCorePackage, LogicPackage, MoreStringPackage,
    Package,
};
use rhai::{AST, CallFnOptions, Dynamic, Engine, EvalAltResult, FuncArgs, ParseError, Scope};

use crate::game::hooks::HookError;

/// The sandbox limits every script runs under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Operations per hook call (a loop iteration, a function call, an expression… each count).
    pub max_operations: u64,
    /// Nested function calls.
    pub max_call_levels: usize,
    /// Nesting of expressions, at global level and inside functions (checked when compiling).
    pub max_expr_depth: usize,
    pub max_fn_expr_depth: usize,
    /// Characters in one string.
    pub max_string_size: usize,
    /// Elements in one array.
    pub max_array_size: usize,
    /// Properties in one object map.
    pub max_map_size: usize,
    /// Variables alive at once.
    pub max_variables: usize,
    /// Functions defined in one script.
    pub max_functions: usize,
    /// Bytes of one script file.
    pub max_script_bytes: usize,
}

/// The limits of the service's engine. A settlement of the shipped scripts needs a few thousand
/// operations; the cap stops a runaway script within milliseconds.
pub const LIMITS: Limits = Limits {
    max_operations: 1_000_000,
    max_call_levels: 24,
    max_expr_depth: 64,
    max_fn_expr_depth: 48,
    max_string_size: 16 * 1024,
    max_array_size: 4_096,
    max_map_size: 256,
    max_variables: 512,
    max_functions: 256,
    max_script_bytes: 256 * 1024,
};

static ENGINE: LazyLock<Engine> = LazyLock::new(build);

/// The shared engine (built on first use).
pub fn engine() -> &'static Engine {
    &ENGINE
}

/// Builds the engine: the single place where the sandbox is configured.
fn build() -> Engine {
    let mut engine = Engine::new_raw();
    // The standard library without `BasicTimePackage` (a clock would make scripts
    // non-deterministic) and without blobs and bit fields (not needed).
    for module in [
        LanguageCorePackage::new().as_shared_module(),
        ArithmeticPackage::new().as_shared_module(),
        LogicPackage::new().as_shared_module(),
        BasicStringPackage::new().as_shared_module(),
        MoreStringPackage::new().as_shared_module(),
        BasicIteratorPackage::new().as_shared_module(),
        BasicFnPackage::new().as_shared_module(),
        BasicMathPackage::new().as_shared_module(),
        BasicArrayPackage::new().as_shared_module(),
        BasicMapPackage::new().as_shared_module(),
    ] {
        engine.register_global_module(module);
    }
    // No module resolver is installed (a raw engine has none), and the keywords are disabled
    // outright so that a script using them fails to compile with a clear message.
    for symbol in ["import", "export", "eval"] {
        engine.disable_symbol(symbol);
    }
    engine
        .set_optimization_level(rhai::OptimizationLevel::Full)
        .set_strict_variables(true)
        .set_fail_on_invalid_map_property(true)
        .set_max_operations(LIMITS.max_operations)
        .set_max_call_levels(LIMITS.max_call_levels)
        .set_max_expr_depths(LIMITS.max_expr_depth, LIMITS.max_fn_expr_depth)
        .set_max_string_size(LIMITS.max_string_size)
        .set_max_array_size(LIMITS.max_array_size)
        .set_max_map_size(LIMITS.max_map_size)
        .set_max_variables(LIMITS.max_variables)
        .set_max_functions(LIMITS.max_functions)
        // No string interner: it is one engine-wide lock taken (for writing) whenever a script
        // builds a string, e.g. every interpolated `detail`, serializing hook calls across the
        // service's threads; the strings the scripts build are short-lived anyway.
        .set_max_strings_interned(0);
    shuangkou::register_bomb(&mut engine);
    engine.on_print(|text| {
        tracing::info!(target: "shuangkou::variants::script", "{text}");
    });
    engine.on_debug(|text, source, pos| {
        tracing::debug!(
            target: "shuangkou::variants::script",
            source = source.unwrap_or(""),
            line = pos.line().unwrap_or(0),
            column = pos.position().unwrap_or(0),
            "{text}"
        );
    });
    engine
}

/// Compiles a script; a syntax error (or an exceeded parse limit) comes back with its location.
pub fn compile(origin: &str, source: &str) -> Result<AST, CompileError> {
    if source.len() > LIMITS.max_script_bytes {
        return Err(CompileError {
            message: format!(
                "the script has {} bytes, more than the limit of {}",
                source.len(),
                LIMITS.max_script_bytes
            ),
            line: None,
            column: None,
        });
    }
    let compiled = catch_unwind(AssertUnwindSafe(|| engine().compile(source)));
    match compiled {
        Ok(Ok(mut ast)) => {
            ast.set_source(origin);
            Ok(ast)
        }
        Ok(Err(e)) => Err(CompileError::from_parse(&e)),
        Err(_) => Err(CompileError {
            message: "the script engine panicked while compiling (a bug in the engine)".into(),
            line: None,
            column: None,
        }),
    }
}

/// A compile (syntax) error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileError {
    pub message: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
}

impl CompileError {
    fn from_parse(e: &ParseError) -> CompileError {
        let pos = e.position();
        CompileError {
            message: e.err_type().to_string(),
            line: pos.line(),
            column: pos.position(),
        }
    }
}

/// Calls the script function `name` of `ast` with `args`. Errors become a [`HookError`] for
/// `hook`, located in `origin` (`source`, the script text, locates errors that Rhai reports
/// without a position at the line of the function they happened in).
pub fn call(
    ast: &AST,
    origin: &str,
    source: Option<&str>,
    hook: &str,
    name: &str,
    args: impl FuncArgs,
) -> Result<Dynamic, HookError> {
    let mut scope = Scope::new();
    let options = CallFnOptions::new().eval_ast(false).rewind_scope(false);
    let result = catch_unwind(AssertUnwindSafe(|| {
        engine().call_fn_with_options::<Dynamic>(options, &mut scope, ast, name, args)
    }));
    match result {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => {
            let mut err = hook_error(hook, origin, &e);
            if let (Some(src), Some(loc)) = (source, err.location.as_deref())
                && loc == origin
            {
                // No position from Rhai (e.g. an operation limit hit inside a loop): point at the
                // function that was running.
                let func = innermost_function(&e).unwrap_or(name);
                if let Some(line) = fn_line(src, func) {
                    err.location = Some(format!("{origin}:{line}"));
                    err.message.push_str(&format!(" (in function {func})"));
                }
            }
            Err(err)
        }
        Err(_) => Err(HookError {
            hook: hook.to_string(),
            message: "the script engine panicked (a bug in the engine); the call was abandoned"
                .into(),
            location: None,
            limit: false,
        }),
    }
}

/// The innermost script function an error happened in.
fn innermost_function(err: &EvalAltResult) -> Option<&str> {
    let mut found = None;
    let mut e = err;
    while let EvalAltResult::ErrorInFunctionCall(name, _, next, _) = e {
        found = Some(name.as_str());
        e = next;
    }
    found
}

/// The 1-based line where `fn name(` is defined in `source`.
fn fn_line(source: &str, name: &str) -> Option<usize> {
    let needle = format!("fn {name}(");
    source
        .lines()
        .position(|l| {
            let t = l.trim_start();
            t.starts_with(&needle)
                || t.strip_prefix("private ")
                    .is_some_and(|r| r.starts_with(&needle))
        })
        .map(|i| i + 1)
}

/// Turns a Rhai error into a [`HookError`]: the innermost error's message and position, the
/// chain of script functions it happened in, and whether a sandbox limit was hit.
pub fn hook_error(hook: &str, origin: &str, err: &EvalAltResult) -> HookError {
    let mut chain = Vec::new();
    let mut inner = err;
    let mut outer_pos = err.position();
    loop {
        match inner {
            EvalAltResult::ErrorInFunctionCall(name, _, next, pos) => {
                chain.push(name.clone());
                if !pos.is_none() {
                    outer_pos = *pos;
                }
                inner = next;
            }
            EvalAltResult::ErrorInModule(_, next, _) => inner = next,
            _ => break,
        }
    }
    let limit = matches!(
        inner,
        EvalAltResult::ErrorTooManyOperations(_)
            | EvalAltResult::ErrorStackOverflow(_)
            | EvalAltResult::ErrorDataTooLarge(..)
            | EvalAltResult::ErrorTooManyVariables(_)
            | EvalAltResult::ErrorTooManyModules(_)
    );
    let mut message = match inner {
        EvalAltResult::ErrorTooManyOperations(_) => format!(
            "the script ran more than {} operations (an endless loop?)",
            LIMITS.max_operations
        ),
        EvalAltResult::ErrorStackOverflow(_) => format!(
            "the script nested more than {} function calls (runaway recursion?)",
            LIMITS.max_call_levels
        ),
        EvalAltResult::ErrorDataTooLarge(what, _) => format!(
            "{what} exceeds the sandbox limit (strings {} chars, arrays {} items, maps {} \
             properties)",
            LIMITS.max_string_size, LIMITS.max_array_size, LIMITS.max_map_size
        ),
        EvalAltResult::ErrorFunctionNotFound(sig, _)
            if chain.is_empty() && sig.starts_with(hook) =>
        {
            format!("the script has no function {sig}")
        }
        EvalAltResult::Exit(..) => "the script called exit()".into(),
        other => {
            // Display appends " (line L, position C)"; the location is reported separately.
            let text = other.to_string();
            let suffix = format!(" ({})", other.position());
            match text.strip_suffix(&suffix) {
                Some(t) if !other.position().is_none() => t.to_string(),
                _ => text,
            }
        }
    };
    if !chain.is_empty() {
        message.push_str(&format!(" (in {})", chain.join(" → ")));
    }
    let pos = if inner.position().is_none() {
        outer_pos
    } else {
        inner.position()
    };
    let location = match (pos.line(), pos.position()) {
        (Some(l), Some(c)) => Some(format!("{origin}:{l}:{c}")),
        (Some(l), None) => Some(format!("{origin}:{l}")),
        _ => Some(origin.to_string()),
    };
    HookError {
        hook: hook.to_string(),
        message,
        location,
        limit,
    }
}
