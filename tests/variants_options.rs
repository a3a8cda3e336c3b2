//! Variant options: strict bool parsing, errors that name the option (never the script's file),
//! and the machine-readable schema checked against the validator at every boundary it claims.

use std::collections::BTreeMap;

use shuangkou::variants::{self, Bounds, Number, OptionSchema, OptionType, OptionValue, Registry};

/// Every embedded variant's compiled script.
fn all() -> Vec<std::sync::Arc<variants::CompiledVariant>> {
    variants::EMBEDDED
        .iter()
        .map(|(id, _)| variants::builtin(id).expect("embedded scripts compile"))
        .collect()
}

/// Parses one `name=value` override of `v` and configures it (what the CLI and service do).
fn set(v: &std::sync::Arc<variants::CompiledVariant>, pair: &str) -> Result<(), String> {
    let o = v
        .parse_overrides(&[pair.to_string()])
        .map_err(|e| e.to_string())?;
    v.configure(&o).map(|_| ()).map_err(|e| e.to_string())
}

/// An error message about option `name`: names it, and no file or script origin.
fn assert_names_option(message: &str, name: &str) {
    assert!(message.contains(name), "{message:?} does not name {name}");
    for leak in ["embedded:", ".rhai", "options:"] {
        assert!(!message.contains(leak), "{message:?} leaks {leak:?}");
    }
}

#[test]
fn bools_are_exactly_true_or_false() {
    let mut checked = 0;
    for v in all() {
        for o in v.options() {
            if OptionSchema::of(o).value_type != OptionType::Bool {
                continue;
            }
            for good in ["true", "false"] {
                set(&v, &format!("{}={good}", o.name))
                    .unwrap_or_else(|e| panic!("{} {}={good}: {e}", v.id(), o.name));
            }
            // The one option grammar (docs/VARIANTS.md): no whitespace around a value either.
            for bad in [
                "yes", "no", "1", "0", "on", "off", "True", "FALSE", "", " true ",
            ] {
                let e = set(&v, &format!("{}={bad}", o.name)).expect_err(&format!(
                    "{} {}={bad} accepted",
                    v.id(),
                    o.name
                ));
                assert_names_option(&e, &o.name);
                assert!(e.contains("true or false"), "{e}");
            }
            checked += 1;
        }
    }
    // Every shipped variant declares cyclic_chain_bombs (docs/rules/RULES.md §8 #10–11) as a bool.
    assert!(checked >= variants::EMBEDDED.len() - 1, "{checked}");
}

#[test]
fn option_errors_name_the_option_not_the_file() {
    let jj = variants::builtin("jj").unwrap();
    for (pair, name) in [
        ("reconnect_seconds=abc", "reconnect_seconds"),
        ("reconnect_seconds=-5", "reconnect_seconds"),
        ("tianwang=nonsense", "tianwang"),
        ("no_such_option=1", "no_such_option"),
        ("missing_equals", "missing_equals"),
    ] {
        let e = set(&jj, pair).expect_err(pair);
        assert_names_option(&e, name);
    }
    // A combination the script refuses (`throw` in rules(opts)) is an option error too.
    let erren = variants::builtin("erren").unwrap();
    let e = set(&erren, "double_min_cards=2").expect_err("2 is below single_min_cards");
    assert!(e.starts_with("options refused by erren: "), "{e}");
    assert_names_option(&e, "double_min_cards");
    // JSON overrides (the service's path) go through configure() alone.
    let json: BTreeMap<String, OptionValue> =
        serde_json::from_str(r#"{"cyclic_chain_bombs": 1}"#).unwrap();
    let e = jj
        .configure(&json)
        .expect_err("an int for a bool")
        .to_string();
    assert_names_option(&e, "cyclic_chain_bombs");
}

/// A value of `schema` at a claimed bound, as `key=value` text.
fn text(n: Number) -> String {
    match n {
        Number::Int(i) => i.to_string(),
        Number::Float(x) => x.to_string(),
    }
}

fn list(element: i64, len: usize) -> String {
    vec![element.to_string(); len].join(",")
}

/// Checks every claim of one option's schema against the validator. A value the schema allows
/// passes the per-option checks; with the other options at their defaults the script may still
/// refuse the combination (`throw` in `rules(opts)`), and then says so as an option error.
fn check_claims(v: &std::sync::Arc<variants::CompiledVariant>, s: &OptionSchema) {
    let id = v.id();
    let name = &s.name;
    let ok = |value: &str| {
        let pair = format!("{name}={value}");
        let o = v
            .parse_overrides(std::slice::from_ref(&pair))
            .unwrap_or_else(|e| panic!("{id}: schema allows {pair}, refused: {e}"));
        if let Err(e) = v.configure(&o) {
            let e = e.to_string();
            assert!(e.starts_with(&format!("options refused by {id}: ")), "{e}");
            assert_names_option(&e, name);
        }
    };
    let refused = |value: &str| {
        let e = set(v, &format!("{name}={value}"))
            .err()
            .unwrap_or_else(|| panic!("{id}: schema forbids {name}={value}, accepted"));
        assert_names_option(&e, name);
    };
    // The default is valid and is what an unconfigured game gets.
    let defaults = v.with_defaults().unwrap();
    assert_eq!(defaults.option(name), Some(&s.default), "{id} {name}");
    assert!(!s.description.is_empty(), "{id} {name}");
    match s.value_type {
        OptionType::Int | OptionType::Float => {
            let Some(Bounds { min, max }) = s.range else {
                panic!("{id} {name}: a number without a range");
            };
            assert!(s.choices.is_empty() && s.length.is_none(), "{id} {name}");
            ok(&text(min));
            ok(&text(max));
            match (min, max) {
                (Number::Int(lo), Number::Int(hi)) => {
                    assert_eq!(s.value_type, OptionType::Int);
                    refused(&(lo - 1).to_string());
                    refused(&(hi + 1).to_string());
                    refused("1.5");
                }
                (Number::Float(lo), Number::Float(hi)) => {
                    assert_eq!(s.value_type, OptionType::Float);
                    refused(&(lo - 0.5).to_string());
                    refused(&(hi + 0.5).to_string());
                }
                _ => panic!("{id} {name}: mixed bounds"),
            }
        }
        OptionType::Bool => {
            assert!(s.choices.is_empty() && s.range.is_none() && s.length.is_none());
            assert!(matches!(s.default, OptionValue::Bool(_)), "{id} {name}");
        }
        OptionType::Choice => {
            assert!(!s.choices.is_empty() && s.range.is_none() && s.length.is_none());
            let OptionValue::Text(d) = &s.default else {
                panic!("{id} {name}: a choice with a non-text default");
            };
            assert!(s.choices.contains(d), "{id} {name}");
            for c in &s.choices {
                ok(c);
            }
            refused("not_one_of_the_choices");
        }
        OptionType::IntList => {
            let (Some(Bounds { min, max }), Some(len)) = (s.range, s.length) else {
                panic!("{id} {name}: a list without range or length");
            };
            let (Number::Int(lo), Number::Int(hi)) = (min, max) else {
                panic!("{id} {name}: float bounds on an int list");
            };
            let n = len.min.max(1);
            ok(&list(lo, n));
            ok(&list(hi, len.max));
            refused(&list(lo, len.max + 1));
            if len.min > 1 {
                refused(&list(lo, len.min - 1));
            }
            refused(&list(lo - 1, n));
            refused(&list(hi + 1, n));
        }
    }
}

#[test]
fn the_schema_agrees_with_the_validator_at_every_bound() {
    let registry = Registry::embedded().unwrap();
    for v in all() {
        let schema = registry.option_schema(v.id()).expect("an active variant");
        let names: Vec<&str> = schema.iter().map(|s| s.name.as_str()).collect();
        let declared: Vec<&str> = v.options().iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, declared, "{}", v.id());
        for s in &schema {
            check_claims(&v, s);
        }
    }
    assert!(registry.option_schema("no_such_variant").is_none());
}

#[test]
fn hand_checked_entries_of_the_schema() {
    // Seed 002 (二人雙扣): the reconnect window is 90 seconds.
    let registry = Registry::embedded().unwrap();
    let erren = registry.option_schema("erren").unwrap();
    let reconnect = erren
        .iter()
        .find(|s| s.name == "reconnect_seconds")
        .expect("erren declares reconnect_seconds");
    assert_eq!(reconnect.value_type, OptionType::Int);
    assert_eq!(reconnect.default, OptionValue::Int(90));
    // docs/rules/RULES.md §8 #1: 天王 sits where the variant's default says, among the four placements.
    let jj = registry.option_schema("jj").unwrap();
    let tianwang = jj.iter().find(|s| s.name == "tianwang").unwrap();
    assert_eq!(tianwang.value_type, OptionType::Choice);
    let mut choices = tianwang.choices.clone();
    choices.sort();
    for c in &choices {
        assert!(
            ["above_all", "max_of_7", "max_of_8", "min_of_7"].contains(&c.as_str()),
            "{c}"
        );
    }
}

/// A variant with a contribution table describes it as its default pays it (issue 44: the
/// description said the points were paid "to the bomber" while the default is paid by each other
/// player): "each other player pays the bomber a / b / c, so the bomber gets 3a / 3b / 3c", read
/// from the option's default, not from the description.
#[test]
fn descriptions_state_the_default_contribution_table() {
    let mut described = 0;
    for v in all() {
        let Some(spec) = v.options().iter().find(|o| o.name == "contribution_each") else {
            continue;
        };
        let OptionValue::IntList(each) = spec.default_value() else {
            panic!("{}: contribution_each is an int_list", v.id());
        };
        let join = |xs: &[i64]| {
            xs.iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(" / ")
        };
        let gets: Vec<i64> = each.iter().map(|e| 3 * e).collect();
        let want = format!(
            "each other player pays the bomber {}, so the bomber gets {}",
            join(&each),
            join(&gets)
        );
        let description = &v.meta().description;
        assert!(
            description.contains(&want),
            "{}: {description:?} does not say {want:?}",
            v.id()
        );
        described += 1;
    }
    assert!(described >= 3, "baibian, huopin and qianbian: {described}");
}
