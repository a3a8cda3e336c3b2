//! The machine-readable option schema of a variant: what a platform needs to build a table form
//! without reading prose (per option: name, type, default, choices, value range, list length,
//! description).
//!
//! A flat, wire-friendly view of the specs a script declares ([`OptionSpec`]): every field is
//! present for every option (empty or `None` where the type has no such constraint), so the
//! service can map it one to one onto `ListVariants` and the CLI prints it as JSON. It is derived
//! from the specs, never written by hand, so it cannot disagree with the validator
//! ([`OptionSpec::check`]). Depends only on [`options`](super::options); no Rhai.

use serde::Serialize;

use super::options::{OptionKind, OptionSpec, OptionValue};

/// The type of an option's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OptionType {
    Int,
    Float,
    Bool,
    /// One string of `choices`.
    Choice,
    /// A list of integers (each within `range`, its length within `length`).
    IntList,
}

impl OptionType {
    /// The name used in scripts and JSON (`int`, `float`, `bool`, `choice`, `int_list`).
    pub fn name(self) -> &'static str {
        match self {
            OptionType::Int => "int",
            OptionType::Float => "float",
            OptionType::Bool => "bool",
            OptionType::Choice => "choice",
            OptionType::IntList => "int_list",
        }
    }
}

/// A numeric bound: an integer for `int` and `int_list` options, a float for `float` options.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Number {
    Int(i64),
    Float(f64),
}

/// An inclusive range `min..=max`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Bounds<T> {
    pub min: T,
    pub max: T,
}

/// One option, as a platform reads it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OptionSchema {
    pub name: String,
    #[serde(rename = "type")]
    pub value_type: OptionType,
    /// The value a game gets when the option is not set.
    pub default: OptionValue,
    /// The allowed values of a `choice` option (empty for the other types).
    pub choices: Vec<String>,
    /// The allowed values of a number, or of every element of an `int_list`.
    pub range: Option<Bounds<Number>>,
    /// The allowed number of elements of an `int_list`.
    pub length: Option<Bounds<usize>>,
    /// One line for operators: what the option changes and where its default comes from.
    pub description: String,
}

impl OptionSchema {
    /// The schema of one declared option.
    pub fn of(spec: &OptionSpec) -> OptionSchema {
        // A number option: its type and range, no choices, no length.
        let number =
            |value_type, min, max| (value_type, Vec::new(), Some(Bounds { min, max }), None);
        let (value_type, choices, range, length) = match &spec.kind {
            OptionKind::Int { min, max, .. } => {
                number(OptionType::Int, Number::Int(*min), Number::Int(*max))
            }
            OptionKind::Float { min, max, .. } => {
                number(OptionType::Float, Number::Float(*min), Number::Float(*max))
            }
            OptionKind::Bool { .. } => (OptionType::Bool, Vec::new(), None, None),
            OptionKind::Choice { choices, .. } => (OptionType::Choice, choices.clone(), None, None),
            OptionKind::IntList {
                min,
                max,
                min_len,
                max_len,
                ..
            } => (
                OptionType::IntList,
                Vec::new(),
                Some(Bounds {
                    min: Number::Int(*min),
                    max: Number::Int(*max),
                }),
                Some(Bounds {
                    min: *min_len,
                    max: *max_len,
                }),
            ),
        };
        OptionSchema {
            name: spec.name.clone(),
            value_type,
            default: spec.default_value(),
            choices,
            range,
            length,
            description: spec.doc.clone(),
        }
    }

    /// The schema of every declared option, in declaration order.
    pub fn of_all(specs: &[OptionSpec]) -> Vec<OptionSchema> {
        specs.iter().map(OptionSchema::of).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_int_list_has_element_range_and_length() {
        let spec = OptionSpec {
            name: "table".into(),
            kind: OptionKind::IntList {
                default: vec![2, 4],
                min: 0,
                max: 100,
                min_len: 1,
                max_len: 7,
            },
            doc: "d".into(),
        };
        let json = serde_json::to_value(OptionSchema::of(&spec)).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "name": "table", "type": "int_list", "default": [2, 4], "choices": [],
                "range": {"min": 0, "max": 100}, "length": {"min": 1, "max": 7},
                "description": "d"
            })
        );
    }
}
