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
//! Also here: the strict conversions between Rhai values and JSON (`to_json`, `from_json`) and
//! from script numbers to [`Centi`].

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::LazyLock;

use rhai::packages::{
    ArithmeticPackage, BasicArrayPackage, BasicFnPackage, BasicIteratorPackage, BasicMapPackage,
    BasicMathPackage, BasicStringPackage, LanguageCorePackage, LogicPackage, MoreStringPackage,
    Package,
};
use rhai::{AST, CallFnOptions, Dynamic, Engine, EvalAltResult, FuncArgs, Map, ParseError, Scope};

use crate::game::hooks::{BombFact, Centi, HookError};

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
    register_bomb(&mut engine);
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

/// The keys of a bomb, as the scripts read them (`b.seat`, `b["seat"]`).
pub const BOMB_KEYS: [&str; 7] = ["seat", "kind", "cards", "len", "stars", "group", "links"];

/// One property of a bomb as a script value.
fn bomb_property(b: &BombFact, key: &str) -> Option<Dynamic> {
    let int = |v: u8| Dynamic::from_int(i64::from(v));
    Some(match key {
        "seat" => int(b.seat.number()),
        "kind" => Dynamic::from(b.kind.name()),
        "cards" => Dynamic::from(b.cards.to_string()),
        "len" => int(b.len),
        "stars" => b.stars.map_or(Dynamic::UNIT, int),
        "group" => int(b.group),
        "links" => int(b.links),
        _ => return None,
    })
}

/// A bomb in the facts is the core's `BombFact` itself, a script type named `Bomb` with read-only
/// properties `seat`, `kind`, `cards`, `len`, `stars`, `group`, `links` (also readable as
/// `b["stars"]`), `to_map()` and a map-like `to_string()`. A value rather than an object map:
/// copying one (a `for` loop, an argument, `top = b`) copies 16 bytes instead of a seven-entry
/// map, and `cards` is written out only when a script reads it.
fn register_bomb(engine: &mut Engine) {
    fn int(v: u8) -> rhai::INT {
        rhai::INT::from(v)
    }
    fn to_map(b: &mut BombFact) -> Map {
        BOMB_KEYS
            .iter()
            .filter_map(|k| Some(((*k).into(), bomb_property(b, k)?)))
            .collect()
    }
    fn show(b: &mut BombFact) -> String {
        let stars = b.stars.map_or("()".to_string(), |s| s.to_string());
        format!(
            "#{{cards: \"{}\", group: {}, kind: \"{}\", len: {}, links: {}, seat: {}, stars: {stars}}}",
            b.cards,
            b.group,
            b.kind.name(),
            b.len,
            b.links,
            b.seat
        )
    }
    engine
        .register_type_with_name::<BombFact>("Bomb")
        .register_get("seat", |b: &mut BombFact| int(b.seat.number()))
        .register_get("kind", |b: &mut BombFact| b.kind.name())
        .register_get("cards", |b: &mut BombFact| b.cards.to_string())
        .register_get("len", |b: &mut BombFact| int(b.len))
        .register_get("stars", |b: &mut BombFact| {
            b.stars.map_or(Dynamic::UNIT, |s| Dynamic::from_int(int(s)))
        })
        .register_get("group", |b: &mut BombFact| int(b.group))
        .register_get("links", |b: &mut BombFact| int(b.links))
        .register_indexer_get(
            |b: &mut BombFact, key: &str| -> Result<Dynamic, Box<EvalAltResult>> {
                bomb_property(b, key).ok_or_else(|| {
                    format!(
                        "a bomb has no property `{key}` (it has {})",
                        BOMB_KEYS.join(", ")
                    )
                    .into()
                })
            },
        )
        .register_fn("to_map", to_map)
        .register_fn("to_string", show)
        .register_fn("to_debug", show);
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

/// A Rhai value as JSON: integers, floats, booleans, strings, arrays, maps and `()` (null).
/// Anything else (function pointers, timestamps…) is an error naming its type.
pub fn to_json(value: &Dynamic) -> Result<serde_json::Value, String> {
    use serde_json::Value;
    if value.is_unit() {
        return Ok(Value::Null);
    }
    if let Ok(b) = value.as_bool() {
        return Ok(Value::Bool(b));
    }
    if let Ok(i) = value.as_int() {
        return Ok(Value::from(i));
    }
    if let Ok(f) = value.as_float() {
        return serde_json::Number::from_f64(f)
            .map(Value::Number)
            .ok_or_else(|| format!("the number {f} is not finite"));
    }
    if let Ok(c) = value.as_char() {
        return Ok(Value::String(c.to_string()));
    }
    if value.is_string() {
        return Ok(Value::String(value.to_string()));
    }
    if value.is_array() {
        let arr = value.read_lock::<rhai::Array>().ok_or("unreadable array")?;
        return arr
            .iter()
            .enumerate()
            .map(|(i, v)| to_json(v).map_err(|e| format!("[{i}]: {e}")))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array);
    }
    if value.is_map() {
        let map = value.read_lock::<Map>().ok_or("unreadable map")?;
        let mut out = serde_json::Map::new();
        for (k, v) in map.iter() {
            out.insert(k.to_string(), to_json(v).map_err(|e| format!(".{k}: {e}"))?);
        }
        return Ok(Value::Object(out));
    }
    Err(format!(
        "a value of type {} has no JSON form",
        value.type_name()
    ))
}

/// JSON as a Rhai value (numbers that fit `i64` become integers, others floats).
pub fn from_json(value: &serde_json::Value) -> Dynamic {
    use serde_json::Value;
    match value {
        Value::Null => Dynamic::UNIT,
        Value::Bool(b) => Dynamic::from_bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Dynamic::from_int(i),
            None => Dynamic::from_float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => Dynamic::from(s.clone()),
        Value::Array(a) => Dynamic::from_array(a.iter().map(from_json).collect()),
        Value::Object(o) => {
            let map: Map = o
                .iter()
                .map(|(k, v)| (k.as_str().into(), from_json(v)))
                .collect();
            Dynamic::from_map(map)
        }
    }
}

/// The largest magnitude, in points, a script may return for one line (about 10^13, far beyond
/// any real stake, and safely inside `i64` hundredths when summed).
pub const MAX_POINTS: f64 = 1e13;

/// A script number of points in hundredths, saturated at the host's line limit: a finite number
/// whose magnitude exceeds [`MAX_POINTS`] becomes ±[`MAX_POINTS`] (in hundredths), and the second
/// value says it did (the settlement then carries a `saturated` note, see docs/VARIANTS.md
/// "Saturation"). Non-finite numbers and values that are not numbers stay errors (a script bug).
pub fn to_centi_saturating(value: &Dynamic) -> Result<(Centi, bool), String> {
    let cap = (MAX_POINTS as Centi) * 100;
    if let Ok(i) = value.as_int() {
        if (i as f64).abs() > MAX_POINTS {
            return Ok((if i < 0 { -cap } else { cap }, true));
        }
        return Ok((i * 100, false));
    }
    if let Ok(f) = value.as_float()
        && f.is_finite()
        && f.abs() > MAX_POINTS
    {
        return Ok((if f < 0.0 { -cap } else { cap }, true));
    }
    to_centi(value).map(|c| (c, false))
}

/// A script number (integer or float points) in hundredths of a point.
///
/// Integers are exact. Floats are multiplied by 100 and rounded to the nearest integer, halves
/// away from zero (so 0.125 points is 13 hundredths and −0.125 is −13). Non-finite numbers and
/// magnitudes above [`MAX_POINTS`] are errors.
pub fn to_centi(value: &Dynamic) -> Result<Centi, String> {
    if let Ok(i) = value.as_int() {
        if (i as f64).abs() > MAX_POINTS {
            return Err(format!("{i} points is out of range (at most ±10^13)"));
        }
        return Ok(i * 100);
    }
    if let Ok(f) = value.as_float() {
        if !f.is_finite() {
            return Err(format!("{f} is not a finite number"));
        }
        if f.abs() > MAX_POINTS {
            return Err(format!("{f} points is out of range (at most ±10^13)"));
        }
        return Ok((f * 100.0).round() as Centi);
    }
    Err(format!(
        "expected a number of points (integer or float), found {}",
        describe(value)
    ))
}

/// A test of a value's type (`Dynamic::is_map`…).
type IsType = fn(&Dynamic) -> bool;

/// The names [`describe`] gives the script types, in the order they are tested; any other type
/// goes by Rhai's name.
const TYPE_NAMES: [(IsType, &str); 7] = [
    (Dynamic::is_unit, "()"),
    (Dynamic::is_map, "map"),
    (Dynamic::is_array, "array"),
    (Dynamic::is_string, "string"),
    (Dynamic::is_int, "integer"),
    (Dynamic::is_float, "float"),
    (Dynamic::is_bool, "bool"),
];

/// A short description of a value for error messages: its type and, when short, the value.
pub fn describe(value: &Dynamic) -> String {
    let ty = TYPE_NAMES
        .iter()
        .find(|(is, _)| is(value))
        .map_or_else(|| value.type_name(), |&(_, name)| name);
    let text = value.to_string();
    if value.is_unit() || text.chars().count() > 60 {
        ty.to_string()
    } else {
        format!("{ty} {text}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `f(bomb)` of a one-function script on the bomb `7 7 7 7 7 BJ` of seat 2 (6★).
    fn on_bomb(body: &str) -> Result<Dynamic, Box<EvalAltResult>> {
        let cards: crate::cards::RankCounts = "7 7 7 7 7 BJ".parse().unwrap();
        let bomb = crate::variants::facts::bomb_fact(
            crate::seat::Seat::new(2),
            cards,
            &crate::rules::Rules::BAIBIAN,
        )
        .unwrap();
        let ast = engine().compile(format!("fn f(b) {{ {body} }}")).unwrap();
        engine().call_fn::<Dynamic>(&mut Scope::new(), &ast, "f", (Dynamic::from(bomb),))
    }

    #[test]
    fn a_bomb_reads_like_a_map_and_cannot_be_changed() {
        let get = |body: &str| on_bomb(body).unwrap_or_else(|e| panic!("{body}: {e}"));
        assert_eq!(get("b.seat").as_int(), Ok(2));
        assert_eq!(get("b.stars").as_int(), Ok(6));
        assert_eq!(get("b[\"stars\"]").as_int(), Ok(6));
        assert_eq!(get("b.len + b.group + b.links").as_int(), Ok(6 + 6 + 1));
        assert_eq!(get("b.cards").into_string().unwrap(), "7 7 7 7 7 BJ");
        assert_eq!(get("b.kind").into_string().unwrap(), "bomb");
        assert_eq!(get("type_of(b)").into_string().unwrap(), "Bomb");
        assert_eq!(get("b.to_map().stars + b.to_map().seat").as_int(), Ok(8));
        assert_eq!(get("b.to_map().keys().len()").as_int(), Ok(7));
        assert_eq!(
            get("`${b}`").into_string().unwrap(),
            "#{cards: \"7 7 7 7 7 BJ\", group: 6, kind: \"bomb\", len: 6, links: 1, seat: 2, stars: 6}"
        );
        // A copy is a copy: the facts cannot be changed through it either.
        assert_eq!(get("let c = b; c.stars").as_int(), Ok(6));
        assert!(on_bomb("let c = b; c.stars = 9; c").is_err());
        assert_eq!(
            get("let m = b.to_map(); m.stars = 9; b.stars").as_int(),
            Ok(6)
        );
        for bad in ["b.stars = 9; b", "b.nothing", "b[\"nothing\"]"] {
            let e = on_bomb(bad).expect_err(bad);
            eprintln!("{bad}: {e}");
        }
        let e = on_bomb("b[\"nothing\"]").unwrap_err().to_string();
        assert!(e.contains("a bomb has no property `nothing`"), "{e}");
    }

    #[test]
    fn centi_rounding_is_half_away_from_zero() {
        assert_eq!(to_centi(&Dynamic::from_int(4)), Ok(400));
        assert_eq!(to_centi(&Dynamic::from_float(9.5)), Ok(950));
        assert_eq!(to_centi(&Dynamic::from_float(0.125)), Ok(13));
        assert_eq!(to_centi(&Dynamic::from_float(-0.125)), Ok(-13));
        assert_eq!(to_centi(&Dynamic::from_float(0.333)), Ok(33));
        assert!(to_centi(&Dynamic::from_float(f64::NAN)).is_err());
        assert!(to_centi(&Dynamic::from_float(1e14)).is_err());
        assert!(to_centi(&Dynamic::from("4")).is_err());
    }

    #[test]
    fn points_beyond_the_line_limit_saturate_and_say_so() {
        let cap = 1_000_000_000_000_000; // 10^13 points in hundredths
        let sat = |v: Dynamic| to_centi_saturating(&v);
        assert_eq!(sat(Dynamic::from_int(4)), Ok((400, false)));
        assert_eq!(sat(Dynamic::from_int(10_000_000_000_000)), Ok((cap, false)));
        assert_eq!(sat(Dynamic::from_int(10_000_000_000_001)), Ok((cap, true)));
        assert_eq!(sat(Dynamic::from_int(i64::MIN)), Ok((-cap, true)));
        assert_eq!(sat(Dynamic::from_float(-1e30)), Ok((-cap, true)));
        assert_eq!(sat(Dynamic::from_float(0.125)), Ok((13, false)));
        assert!(sat(Dynamic::from_float(f64::INFINITY)).is_err());
        assert!(sat(Dynamic::from("4")).is_err());
    }

    #[test]
    fn json_round_trip() {
        let v: serde_json::Value =
            serde_json::json!({"a": [1, 2.5, "x", true, null], "b": {"c": -3}});
        assert_eq!(to_json(&from_json(&v)).unwrap(), v);
    }

    #[test]
    fn import_and_eval_do_not_compile() {
        for src in [
            "import \"x\" as y;",
            "fn f() { eval(\"1\") }",
            "export const X = 1;",
        ] {
            assert!(compile("t.rhai", src).is_err(), "{src}");
        }
    }

    #[test]
    fn errors_carry_file_line_and_column() {
        let ast = compile("t.rhai", "fn f(x) {\n  let y = x.nope;\n  y\n}").unwrap();
        let mut m = Map::new();
        m.insert("a".into(), Dynamic::from_int(1));
        let e = call(&ast, "t.rhai", None, "settle", "f", (Dynamic::from_map(m),)).unwrap_err();
        assert_eq!(e.location.as_deref(), Some("t.rhai:2:13"), "{e}");
        assert!(e.message.contains("nope"), "{e}");
        assert!(!e.limit);
    }
}
