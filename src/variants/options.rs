//! Typed game options of a variant: the specs a script declares in `options()` and the values a
//! game is configured with.
//!
//! A spec has a type (`int`, `float`, `bool`, `choice`, `int_list`), a default, a range (numbers,
//! list elements and list lengths) or the list of choices, and a one-line `doc`. Values come from
//! the defaults, overridden per game from JSON (the service) or `key=value` text (the CLI); each
//! override is checked against its spec, an unknown key is an error. Hooks receive the values as a
//! Rhai map (`opts`).

use std::collections::BTreeMap;
use std::fmt;

use rhai::{Dynamic, Map};
use serde::{Deserialize, Serialize};

use super::engine::describe;
use crate::quote::clip;

/// One option value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OptionValue {
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
    IntList(Vec<i64>),
}

impl fmt::Display for OptionValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptionValue::Bool(b) => write!(f, "{b}"),
            OptionValue::Int(i) => write!(f, "{i}"),
            OptionValue::Float(x) => write!(f, "{x}"),
            OptionValue::Text(s) => write!(f, "{s}"),
            OptionValue::IntList(v) => {
                let parts: Vec<String> = v.iter().map(i64::to_string).collect();
                write!(f, "[{}]", parts.join(","))
            }
        }
    }
}

impl OptionValue {
    fn to_dynamic(&self) -> Dynamic {
        match self {
            OptionValue::Bool(b) => Dynamic::from_bool(*b),
            OptionValue::Int(i) => Dynamic::from_int(*i),
            OptionValue::Float(x) => Dynamic::from_float(*x),
            OptionValue::Text(s) => Dynamic::from(s.clone()),
            OptionValue::IntList(v) => {
                Dynamic::from_array(v.iter().map(|i| Dynamic::from_int(*i)).collect())
            }
        }
    }
}

/// The type, default and range of an option.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OptionKind {
    Int {
        default: i64,
        min: i64,
        max: i64,
    },
    Float {
        default: f64,
        min: f64,
        max: f64,
    },
    Bool {
        default: bool,
    },
    Choice {
        default: String,
        choices: Vec<String>,
    },
    IntList {
        default: Vec<i64>,
        /// Range of every element.
        min: i64,
        max: i64,
        /// Range of the number of elements.
        min_len: usize,
        max_len: usize,
    },
}

/// An option a variant declares.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OptionSpec {
    pub name: String,
    #[serde(flatten)]
    pub kind: OptionKind,
    /// One line for operators: what it changes and where the default comes from.
    pub doc: String,
}

impl OptionSpec {
    /// The default value.
    pub fn default_value(&self) -> OptionValue {
        match &self.kind {
            OptionKind::Int { default, .. } => OptionValue::Int(*default),
            OptionKind::Float { default, .. } => OptionValue::Float(*default),
            OptionKind::Bool { default } => OptionValue::Bool(*default),
            OptionKind::Choice { default, .. } => OptionValue::Text(default.clone()),
            OptionKind::IntList { default, .. } => OptionValue::IntList(default.clone()),
        }
    }

    /// The type and range in words (`int 0..=100`, `one of random, seat0`…).
    pub fn range_text(&self) -> String {
        match &self.kind {
            OptionKind::Int { min, max, .. } => format!("int {min}..={max}"),
            OptionKind::Float { min, max, .. } => format!("float {min}..={max}"),
            OptionKind::Bool { .. } => "bool".into(),
            OptionKind::Choice { choices, .. } => format!("one of {}", choices.join(", ")),
            OptionKind::IntList {
                min,
                max,
                min_len,
                max_len,
                ..
            } => format!("{min_len}..={max_len} ints, each {min}..={max}"),
        }
    }

    /// Checks a value against the spec, converting an int to a float where a float is expected.
    pub fn check(&self, value: OptionValue) -> Result<OptionValue, String> {
        let name = &self.name;
        match (&self.kind, value) {
            (OptionKind::Int { min, max, .. }, OptionValue::Int(i)) => {
                if i < *min || i > *max {
                    Err(format!("option {name} = {i} is outside {min}..={max}"))
                } else {
                    Ok(OptionValue::Int(i))
                }
            }
            (
                OptionKind::Float { min, max, .. },
                v @ (OptionValue::Int(_) | OptionValue::Float(_)),
            ) => {
                let x = match v {
                    OptionValue::Int(i) => i as f64,
                    OptionValue::Float(x) => x,
                    _ => unreachable!("matched above"),
                };
                if !x.is_finite() || x < *min || x > *max {
                    Err(format!("option {name} = {x} is outside {min}..={max}"))
                } else {
                    Ok(OptionValue::Float(x))
                }
            }
            (OptionKind::Bool { .. }, OptionValue::Bool(b)) => Ok(OptionValue::Bool(b)),
            (OptionKind::Choice { choices, .. }, OptionValue::Text(s)) => {
                if choices.contains(&s) {
                    Ok(OptionValue::Text(s))
                } else {
                    Err(format!(
                        "option {name} = {} is not one of {}",
                        clip(&s),
                        choices.join(", ")
                    ))
                }
            }
            (
                OptionKind::IntList {
                    min,
                    max,
                    min_len,
                    max_len,
                    ..
                },
                OptionValue::IntList(v),
            ) => {
                if v.len() < *min_len || v.len() > *max_len {
                    return Err(format!(
                        "option {name} has {} elements; expected {min_len}..={max_len}",
                        v.len()
                    ));
                }
                if let Some(bad) = v.iter().find(|i| **i < *min || **i > *max) {
                    return Err(format!(
                        "option {name}: element {bad} is outside {min}..={max}"
                    ));
                }
                Ok(OptionValue::IntList(v))
            }
            (_, v) => Err(format!(
                "option {name} = {} has the wrong type; expected {}",
                clip(&v.to_string()),
                self.range_text()
            )),
        }
    }

    /// Parses `text` (the right side of `key=value`) as a value of this option, by the one
    /// grammar of option values (docs/VARIANTS.md, "Option value grammar"), the same for the CLI
    /// and CreateGame: no surrounding or inner whitespace; an `int` is `-?[0-9]+`; a `float` is
    /// `-?[0-9]+(\.[0-9]+)?`; a `bool` is exactly `true` or `false`; a `choice` is one of its
    /// choices exactly; an `int_list` is `a,b,c` or `[a,b,c]` of `int`s with no empty element
    /// (`[]` or nothing: the empty list). The value is not echoed whole in a refusal.
    pub fn parse(&self, text: &str) -> Result<OptionValue, String> {
        let name = &self.name;
        let shown = clip(text);
        let value = match &self.kind {
            OptionKind::Int { .. } => OptionValue::Int(
                int_text(text)
                    .ok_or_else(|| format!("option {name}: {shown} is not an integer"))?,
            ),
            OptionKind::Float { .. } => OptionValue::Float(
                float_text(text)
                    .ok_or_else(|| format!("option {name}: {shown} is not a number"))?,
            ),
            // Exactly `true` or `false`, as in JSON and Rhai: `yes`, `1` or `on` would be a
            // second spelling a platform has to learn (and `1` is a number elsewhere).
            OptionKind::Bool { .. } => OptionValue::Bool(match text {
                "true" => true,
                "false" => false,
                _ => return Err(format!("option {name}: {shown} is not true or false")),
            }),
            OptionKind::Choice { .. } => OptionValue::Text(text.to_string()),
            OptionKind::IntList { .. } => {
                OptionValue::IntList(int_list_text(text).ok_or_else(|| {
                    format!("option {name}: {shown} is not a list of integers like [2,6,10]")
                })?)
            }
        };
        self.check(value)
    }
}

/// `-?[0-9]+` as an i64 (None: another spelling, or out of range).
fn int_text(text: &str) -> Option<i64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// `-?[0-9]+(\.[0-9]+)?` as an f64.
fn float_text(text: &str) -> Option<f64> {
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    let (whole, fraction) = match unsigned.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (unsigned, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || fraction.is_some_and(|f| !digits(f)) {
        return None;
    }
    text.parse().ok().filter(|x: &f64| x.is_finite())
}

/// `a,b,c` or `[a,b,c]` of [`int_text`]s; `[]` and the empty text are the empty list.
fn int_list_text(text: &str) -> Option<Vec<i64>> {
    let inner = match text.strip_prefix('[') {
        Some(rest) => rest.strip_suffix(']')?,
        None => text,
    };
    if inner.is_empty() {
        return Some(Vec::new());
    }
    inner.split(',').map(int_text).collect()
}

/// Reads the map returned by a script's `options()`.
pub fn parse_specs(value: &Dynamic) -> Result<Vec<OptionSpec>, String> {
    let map = value.read_lock::<Map>().ok_or_else(|| {
        format!(
            "options() must return a map of option specs, not {}",
            describe(value)
        )
    })?;
    let mut out = Vec::with_capacity(map.len());
    for (name, spec) in map.iter() {
        let spec = parse_spec(name, spec).map_err(|e| format!("options().{name}: {e}"))?;
        out.push(spec);
    }
    Ok(out)
}

fn parse_spec(name: &str, value: &Dynamic) -> Result<OptionSpec, String> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    {
        return Err("option names are lower-case letters, digits and _".into());
    }
    let map = value.read_lock::<Map>().ok_or_else(|| {
        format!(
            "expected a map #{{ type, default, …, doc }}, not {}",
            describe(value)
        )
    })?;
    let get = |key: &str| map.get(key).cloned();
    let ty = get("type")
        .and_then(|v| v.into_immutable_string().ok())
        .ok_or("missing `type` (int, float, bool, choice, int_list)")?;
    let doc = get("doc")
        .and_then(|v| v.into_immutable_string().ok())
        .ok_or("missing `doc` (a line for operators)")?
        .to_string();
    let allowed: &[&str] = match ty.as_str() {
        "int" | "float" => &["type", "default", "min", "max", "doc"],
        "bool" => &["type", "default", "doc"],
        "choice" => &["type", "default", "choices", "doc"],
        "int_list" => &["type", "default", "min", "max", "min_len", "max_len", "doc"],
        other => {
            return Err(format!(
                "unknown type {other:?} (int, float, bool, choice, int_list)"
            ));
        }
    };
    if let Some(extra) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(format!(
            "unexpected key `{extra}` for type {ty} (allowed: {})",
            allowed.join(", ")
        ));
    }
    let int = |key: &str| -> Result<i64, String> {
        let v = get(key).ok_or(format!("missing `{key}`"))?;
        v.as_int()
            .map_err(|_| format!("`{key}` must be an integer, not {}", describe(&v)))
    };
    let num = |key: &str| -> Result<f64, String> {
        let v = get(key).ok_or(format!("missing `{key}`"))?;
        v.as_float()
            .or_else(|_| v.as_int().map(|i| i as f64))
            .map_err(|_| format!("`{key}` must be a number, not {}", describe(&v)))
    };
    let ints = |key: &str| -> Result<Vec<i64>, String> {
        let v = get(key).ok_or(format!("missing `{key}`"))?;
        let arr = v
            .read_lock::<rhai::Array>()
            .ok_or(format!("`{key}` must be an array of integers"))?;
        arr.iter()
            .map(|x| {
                x.as_int()
                    .map_err(|_| format!("`{key}` must hold integers, not {}", describe(x)))
            })
            .collect()
    };
    let kind = match ty.as_str() {
        "int" => OptionKind::Int {
            default: int("default")?,
            min: int("min")?,
            max: int("max")?,
        },
        "float" => OptionKind::Float {
            default: num("default")?,
            min: num("min")?,
            max: num("max")?,
        },
        "bool" => OptionKind::Bool {
            default: get("default")
                .and_then(|v| v.as_bool().ok())
                .ok_or("`default` must be true or false")?,
        },
        "choice" => {
            let choices = get("choices")
                .and_then(|v| v.into_typed_array::<rhai::ImmutableString>().ok())
                .ok_or("`choices` must be an array of strings")?
                .into_iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>();
            if choices.is_empty() {
                return Err("`choices` is empty".into());
            }
            OptionKind::Choice {
                default: get("default")
                    .and_then(|v| v.into_immutable_string().ok())
                    .ok_or("`default` must be a string")?
                    .to_string(),
                choices,
            }
        }
        _ => {
            let default = ints("default")?;
            let len_of = |key: &str, fallback: usize| -> Result<usize, String> {
                match get(key) {
                    None => Ok(fallback),
                    Some(_) => {
                        usize::try_from(int(key)?).map_err(|_| format!("`{key}` must be ≥ 0"))
                    }
                }
            };
            OptionKind::IntList {
                min: int("min")?,
                max: int("max")?,
                min_len: len_of("min_len", default.len())?,
                max_len: len_of("max_len", default.len())?,
                default,
            }
        }
    };
    let spec = OptionSpec {
        name: name.to_string(),
        kind,
        doc,
    };
    spec.check(spec.default_value())
        .map_err(|e| format!("the default is invalid: {e}"))?;
    Ok(spec)
}

/// The option values of one configured variant (every declared option has a value).
#[derive(Clone, Debug, PartialEq, Default, Serialize)]
pub struct OptionValues {
    values: BTreeMap<String, OptionValue>,
}

impl OptionValues {
    /// The defaults, with `overrides` applied and checked.
    pub fn new(
        specs: &[OptionSpec],
        overrides: &BTreeMap<String, OptionValue>,
    ) -> Result<OptionValues, String> {
        let mut values: BTreeMap<String, OptionValue> = specs
            .iter()
            .map(|s| (s.name.clone(), s.default_value()))
            .collect();
        for (k, v) in overrides {
            let spec = specs.iter().find(|s| s.name == *k).ok_or_else(|| {
                let known: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
                format!("unknown option {} (known: {})", clip(k), known.join(", "))
            })?;
            values.insert(k.clone(), spec.check(v.clone())?);
        }
        Ok(OptionValues { values })
    }

    /// Parses `key=value` overrides against the specs.
    pub fn parse_overrides(
        specs: &[OptionSpec],
        pairs: &[String],
    ) -> Result<BTreeMap<String, OptionValue>, String> {
        let mut out = BTreeMap::new();
        for pair in pairs {
            let (k, v) = pair
                .split_once('=')
                .ok_or_else(|| format!("option {} is not key=value", clip(pair)))?;
            let spec = specs.iter().find(|s| s.name == k).ok_or_else(|| {
                let known: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
                format!("unknown option {} (known: {})", clip(k), known.join(", "))
            })?;
            out.insert(k.to_string(), spec.parse(v)?);
        }
        Ok(out)
    }

    /// Overrides from a script map (the `options` of a declared example).
    pub fn overrides_from_map(value: &Dynamic) -> Result<BTreeMap<String, OptionValue>, String> {
        if value.is_unit() {
            return Ok(BTreeMap::new());
        }
        let map = value
            .read_lock::<Map>()
            .ok_or_else(|| format!("`options` must be a map, not {}", describe(value)))?;
        let mut out = BTreeMap::new();
        for (k, v) in map.iter() {
            let json = super::engine::to_json(v).map_err(|e| format!("options.{k}: {e}"))?;
            let ov: OptionValue = serde_json::from_value(json)
                .map_err(|_| format!("options.{k}: unsupported value {}", describe(v)))?;
            out.insert(k.to_string(), ov);
        }
        Ok(out)
    }

    /// The value of `name`.
    pub fn get(&self, name: &str) -> Option<&OptionValue> {
        self.values.get(name)
    }

    /// Every (name, value), by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &OptionValue)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The values as the `opts` map the hooks receive.
    pub fn to_map(&self) -> Map {
        self.values
            .iter()
            .map(|(k, v)| (k.as_str().into(), v.to_dynamic()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs() -> Vec<OptionSpec> {
        vec![
            OptionSpec {
                name: "rake_percent".into(),
                kind: OptionKind::Float {
                    default: 0.0,
                    min: 0.0,
                    max: 50.0,
                },
                doc: "rake".into(),
            },
            OptionSpec {
                name: "table".into(),
                kind: OptionKind::IntList {
                    default: vec![2, 4, 6],
                    min: 0,
                    max: 100,
                    min_len: 1,
                    max_len: 7,
                },
                doc: "t".into(),
            },
        ]
    }

    #[test]
    fn overrides_are_parsed_and_checked() {
        let s = specs();
        let o =
            OptionValues::parse_overrides(&s, &["rake_percent=5".into(), "table=3,9,15".into()])
                .unwrap();
        let v = OptionValues::new(&s, &o).unwrap();
        assert_eq!(v.get("rake_percent"), Some(&OptionValue::Float(5.0)));
        assert_eq!(v.get("table"), Some(&OptionValue::IntList(vec![3, 9, 15])));
        assert!(OptionValues::parse_overrides(&s, &["rake_percent=60".into()]).is_err());
        assert!(OptionValues::parse_overrides(&s, &["nope=1".into()]).is_err());
        assert!(OptionValues::parse_overrides(&s, &["table=[]".into()]).is_err());
        let json: BTreeMap<String, OptionValue> =
            serde_json::from_str(r#"{"rake_percent": 3, "table": [1]}"#).unwrap();
        let v = OptionValues::new(&s, &json).unwrap();
        assert_eq!(v.get("rake_percent"), Some(&OptionValue::Float(3.0)));
    }

    /// The issue's malformed values, each refused by the one grammar, beside the spellings it
    /// takes (the oracle is the grammar as docs/VARIANTS.md writes it).
    #[test]
    fn one_grammar_refuses_every_malformed_spelling() {
        let s = specs();
        let parse = |pair: &str| OptionValues::parse_overrides(&s, &[pair.to_string()]);
        for bad in [
            "[2,", "[2", "2,", ",2", "[[2]]", "[2,,3]", "2 3", "[2;3]", " [2]", "[2] ", "[ 2]",
            "+2", "2.0", "0x2", "[2]]", "[-]", "--2",
        ] {
            let e = parse(&format!("table={bad}")).expect_err(bad);
            assert!(e.contains("table"), "{bad}: {e}");
        }
        for (good, want) in [
            ("[2,6,10]", vec![2, 6, 10]),
            ("2,6,10", vec![2, 6, 10]),
            ("[7]", vec![7]),
            ("-0", vec![0]),
        ] {
            let o = parse(&format!("table={good}")).expect(good);
            assert_eq!(o.get("table"), Some(&OptionValue::IntList(want)), "{good}");
        }
        for bad in [" 4", "4 ", "4.", ".5", "1e3", "inf", "NaN", "+4", "4,0", ""] {
            assert!(parse(&format!("rake_percent={bad}")).is_err(), "{bad:?}");
        }
        for (good, want) in [("4", 4.0), ("4.0", 4.0), ("4.25", 4.25)] {
            let o = parse(&format!("rake_percent={good}")).expect(good);
            assert_eq!(
                o.get("rake_percent"),
                Some(&OptionValue::Float(want)),
                "{good}"
            );
        }
        assert!(
            parse(" rake_percent=4").is_err(),
            "no whitespace around the name"
        );
        let long = "9".repeat(10_000);
        let e = parse(&format!("table={long}")).unwrap_err();
        assert!(e.len() < 200, "the value is clipped: {} bytes", e.len());
        assert!(e.contains("(10000 bytes)"), "{e}");
    }

    #[test]
    fn an_int_option_takes_integers_only() {
        let spec = OptionSpec {
            name: "double_points".into(),
            kind: OptionKind::Int {
                default: 4,
                min: 0,
                max: 100,
            },
            doc: "d".into(),
        };
        assert_eq!(spec.parse("4"), Ok(OptionValue::Int(4)));
        for bad in [" 4", "4 ", "4.0", "+4", "", "4e0"] {
            assert!(spec.parse(bad).is_err(), "{bad:?}");
        }
    }
}
