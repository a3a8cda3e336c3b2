//! Golden rule vectors: sections A (classification) and B (comparisons) of
//! `docs/rules/VECTORS.md`, stored one case per line in `tests/data/vectors.txt`.
//!
//! The data file's header comment explains the format. Every line is checked; all failures are
//! collected and reported together, each with its id and the full line.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use shuangkou::cards::{Rank, RankCounts};
use shuangkou::classify;
use shuangkou::compare;
use shuangkou::hand::{Hand, HandType, PlayError};
use shuangkou::rules::Rules;

const DATA: &str = include_str!("data/vectors.txt");

/// One expected interpretation of a classification line.
struct Expected {
    kind: HandType,
    len: u8,
    /// `None` = `key=-` (三王 / 天王).
    key: Option<Rank>,
    /// `None` = `stars=-`.
    stars: Option<u8>,
    /// `(X, Y)`: group size and links of a chain bomb.
    shape: Option<(u8, u8)>,
    cyclic: bool,
    /// The ranks after wild substitution, when the vector states them.
    subst: Option<RankCounts>,
    /// The interpretation as written in the data file.
    text: String,
}

/// One case of the data file.
enum Case {
    /// Cards and every interpretation expected (empty = invalid).
    Classify {
        cards: RankCounts,
        expected: Vec<Expected>,
    },
    /// Does `a` (the new play) beat `b` (the play on the table)?
    Compare {
        a: RankCounts,
        b: RankCounts,
        beats: bool,
    },
}

/// Expands the `RxN` shorthand (N cards of rank R) into ranks.
fn expand(text: &str) -> Result<Vec<Rank>, String> {
    let mut out = Vec::new();
    for token in text.split_whitespace() {
        let (rank, n) = match token.split_once(['x', 'X']) {
            Some((r, n)) => (
                r,
                n.parse::<usize>()
                    .map_err(|e| format!("bad count in {token:?}: {e}"))?,
            ),
            None => (token, 1),
        };
        let rank: Rank = rank.parse().map_err(|e| format!("{e}"))?;
        out.extend(std::iter::repeat_n(rank, n));
    }
    Ok(out)
}

/// A physical play: at most as many copies of each rank as the two decks hold.
fn parse_play(text: &str) -> Result<RankCounts, String> {
    let rc = RankCounts::from_ranks(expand(text)?).map_err(|e| format!("{e}"))?;
    if rc.is_empty() {
        return Err("empty play".into());
    }
    Ok(rc)
}

/// Ranks after substitution: a wild-extended bomb may exceed the eight physical copies
/// (`4x9`, 九相), so only the four-bit counter limits the count.
fn parse_ranks(text: &str) -> Result<RankCounts, String> {
    let mut rc = RankCounts::EMPTY;
    for r in expand(text)? {
        let n = rc.get(r) + 1;
        if n > 15 {
            return Err(format!("more than 15 of {r}"));
        }
        rc = rc.with(r, n);
    }
    Ok(rc)
}

/// `value` or `-` (none).
fn opt<T>(value: &str, parse: impl Fn(&str) -> Result<T, String>) -> Result<Option<T>, String> {
    if value == "-" {
        Ok(None)
    } else {
        parse(value).map(Some)
    }
}

/// `TYPE LEN key=K stars=S [shape=XxY] [cyclic] [as=RANKS]`.
fn parse_expected(text: &str) -> Result<Expected, String> {
    let (head, subst) = match text.split_once(" as=") {
        Some((head, ranks)) => (head, Some(parse_ranks(ranks)?)),
        None => (text, None),
    };
    let mut tokens = head.split_whitespace();
    let kind: HandType = tokens.next().ok_or("missing type")?.parse()?;
    let len: u8 = tokens
        .next()
        .ok_or("missing length")?
        .parse()
        .map_err(|e| format!("bad length: {e}"))?;
    let mut key = None;
    let mut stars = None;
    let mut shape = None;
    let mut cyclic = false;
    for token in tokens {
        match token.split_once('=') {
            Some(("key", v)) => {
                key = Some(opt(v, |s| s.parse::<Rank>().map_err(|e| format!("{e}")))?);
            }
            Some(("stars", v)) => {
                stars = Some(opt(v, |s| {
                    s.parse::<u8>().map_err(|e| format!("bad stars: {e}"))
                })?);
            }
            Some(("shape", v)) => {
                let (x, y) = v.split_once('x').ok_or(format!("bad shape {v:?}"))?;
                let x = x.parse().map_err(|e| format!("bad shape {v:?}: {e}"))?;
                let y = y.parse().map_err(|e| format!("bad shape {v:?}: {e}"))?;
                shape = Some((x, y));
            }
            None if token == "cyclic" => cyclic = true,
            _ => return Err(format!("unknown field {token:?}")),
        }
    }
    Ok(Expected {
        kind,
        len,
        key: key.ok_or("missing key=")?,
        stars: stars.ok_or("missing stars=")?,
        shape,
        cyclic,
        subst,
        text: text.trim().to_string(),
    })
}

/// `preset [field=value …]`: the preset's `Rules` with the named serde fields replaced.
fn parse_rules(text: &str) -> Result<Rules, String> {
    let mut tokens = text.split_whitespace();
    let preset = tokens.next().ok_or("missing variant")?;
    let mut rules = Rules::preset(preset).map_err(|e| format!("{e}"))?;
    for token in tokens {
        let (field, value) = token
            .split_once('=')
            .ok_or(format!("modifier {token:?} is not field=value"))?;
        rules = set_field(&rules, field, value)?;
    }
    rules
        .validate()
        .map_err(|e| format!("rules {text:?}: {e}"))?;
    Ok(rules)
}

/// Replaces one field of `rules` through its serde form. A value that is not JSON (`true`, `3`)
/// is a string (an enum variant). Enum variants are tried as written and with the `_` before a
/// digit dropped or added, so `min_of_7` (the docs/rules/RULES.md name, MIN_OF_7) and serde's derived
/// snake-case spelling `min_of7` are both accepted.
fn set_field(rules: &Rules, field: &str, value: &str) -> Result<Rules, String> {
    let mut fields = rules.fields();
    let object = &mut fields;
    if !object.contains_key(field) {
        return Err(format!("Rules has no field {field:?}"));
    }
    let candidates: Vec<serde_json::Value> = match serde_json::from_str(value) {
        Ok(v) => vec![v],
        Err(_) => {
            let chars: Vec<char> = value.chars().collect();
            let mut dropped = String::new();
            let mut added = String::new();
            for (i, &c) in chars.iter().enumerate() {
                let next_is_digit = chars.get(i + 1).is_some_and(char::is_ascii_digit);
                if !(c == '_' && next_is_digit) {
                    dropped.push(c);
                }
                if c.is_ascii_digit() && i > 0 && chars[i - 1].is_ascii_alphabetic() {
                    added.push('_');
                }
                added.push(c);
            }
            [value.to_string(), dropped, added]
                .into_iter()
                .map(serde_json::Value::String)
                .collect()
        }
    };
    let mut last_error = String::new();
    for candidate in candidates {
        object.insert(field.to_string(), candidate);
        match serde_json::from_value::<Rules>(serde_json::Value::Object(object.clone())) {
            Ok(r) => return Ok(r),
            Err(e) => last_error = format!("{field}={value}: {e}"),
        }
    }
    Err(last_error)
}

/// Parses one non-comment line (after its id) into its rules and case.
fn parse_line(line: &str) -> Result<(Rules, Case), String> {
    let fields: Vec<&str> = line.split('|').map(str::trim).collect();
    if fields[0].is_empty() {
        return Err("missing id".into());
    }
    let rules = parse_rules(fields.get(1).copied().unwrap_or(""))?;
    let case = match fields.len() {
        4 => {
            let cards = parse_play(fields[2])?;
            let expected = if fields[3] == "invalid" {
                Vec::new()
            } else {
                fields[3]
                    .split(';')
                    .map(parse_expected)
                    .collect::<Result<_, _>>()?
            };
            Case::Classify { cards, expected }
        }
        5 => {
            let beats = match fields[4] {
                "yes" => true,
                "no" => false,
                other => return Err(format!("expected yes or no, not {other:?}")),
            };
            Case::Compare {
                a: parse_play(fields[2])?,
                b: parse_play(fields[3])?,
                beats,
            }
        }
        n => {
            return Err(format!(
                "{n} fields; expected 4 (classification) or 5 (comparison)"
            ));
        }
    };
    Ok((rules, case))
}

/// A hand in the data file's notation (for failure messages).
fn show(h: &Hand) -> String {
    let mut s = format!("{} {}", h.kind, h.len);
    match h.key() {
        Some(k) => write!(s, " key={k}"),
        None => write!(s, " key=-"),
    }
    .ok();
    match h.stars {
        Some(n) => write!(s, " stars={n}"),
        None => write!(s, " stars=-"),
    }
    .ok();
    if h.kind == HandType::ChainBomb {
        write!(s, " shape={}x{}", h.group, h.links).ok();
    }
    if h.cyclic {
        s.push_str(" cyclic");
    }
    write!(s, " as={}", h.substituted).ok();
    if !h.wilds.is_empty() {
        write!(s, " (wilds {:?})", h.wilds).ok();
    }
    s
}

fn show_all(hands: &[Hand]) -> String {
    if hands.is_empty() {
        "invalid".into()
    } else {
        hands.iter().map(show).collect::<Vec<_>>().join(" ; ")
    }
}

fn matches(e: &Expected, h: &Hand) -> bool {
    h.kind == e.kind
        && h.len == e.len
        && h.key() == e.key
        && h.stars == e.stars
        && e.shape.is_none_or(|(x, y)| (h.group, h.links) == (x, y))
        && h.cyclic == e.cyclic
        && e.subst.is_none_or(|s| h.substituted == s)
}

/// An interpretation must account for exactly the cards played: `len` cards stand for
/// `substituted`, and undoing the wild substitutions (`wilds`) gives back the cards.
fn check_consistent(cards: RankCounts, h: &Hand) -> Result<(), String> {
    let mut back = h.substituted;
    for (joker, became) in h.wilds.iter() {
        back = back
            .minus(RankCounts::EMPTY.with(became, 1))
            .ok_or_else(|| format!("wild {joker}={became} not in the substituted ranks"))?;
        back.add(joker, 1);
    }
    if back == cards && h.substituted.total() == u32::from(h.len) {
        Ok(())
    } else {
        Err(format!(
            "inconsistent interpretation of {cards}: {}",
            show(h)
        ))
    }
}

/// Checks a classification case; `Err` describes the disagreement.
fn check_classify(cards: RankCounts, expected: &[Expected], rules: &Rules) -> Result<(), String> {
    let got = classify::classify(cards, rules);
    for h in &got {
        check_consistent(cards, h)?;
    }
    // Each expected interpretation must match a distinct returned one, and nothing else returned.
    let mut used = vec![false; got.len()];
    let mut all_found = true;
    for e in expected {
        match (0..got.len()).find(|&i| !used[i] && matches(e, &got[i])) {
            Some(i) => used[i] = true,
            None => all_found = false,
        }
    }
    if all_found && got.len() == expected.len() {
        Ok(())
    } else {
        let want: Vec<&str> = expected.iter().map(|e| e.text.as_str()).collect();
        Err(format!(
            "expected {}\n    got      {}",
            if want.is_empty() {
                "invalid".to_string()
            } else {
                want.join(" ; ")
            },
            show_all(&got)
        ))
    }
}

/// Whether `a` beats `b` through `classify::resolve`, cross-checked against `compare::beats` on
/// every interpretation of `a`.
fn resolve_beats(a: RankCounts, b: &Hand, rules: &Rules) -> Result<bool, String> {
    let via_resolve = match classify::resolve(a, Some(b), None, rules) {
        Ok(_) => true,
        // Several interpretations beat the table; any of them is enough.
        Err(PlayError::Ambiguous { .. }) => true,
        Err(PlayError::DoesNotBeat(_)) => false,
        Err(e) => return Err(format!("play {a} against {}: {e}", show(b))),
    };
    let interpretations = classify::classify(a, rules);
    let via_beats = interpretations.iter().any(|h| compare::beats(b, h, rules));
    if via_resolve != via_beats {
        return Err(format!(
            "resolve says {via_resolve} but compare::beats on [{}] says {via_beats}",
            show_all(&interpretations)
        ));
    }
    Ok(via_resolve)
}

/// Checks a comparison case, and the antisymmetry: if A beats B, B does not beat A.
fn check_compare(a: RankCounts, b: RankCounts, beats: bool, rules: &Rules) -> Result<(), String> {
    let b_hand = classify::resolve(b, None, None, rules).map_err(|e| format!("B {b}: {e}"))?;
    let got = resolve_beats(a, &b_hand, rules)?;
    if got != beats {
        return Err(format!(
            "A [{}] {} B [{}]",
            show_all(&classify::classify(a, rules)),
            if got { "beats" } else { "does not beat" },
            show(&b_hand)
        ));
    }
    if got {
        for a_hand in classify::classify(a, rules)
            .iter()
            .filter(|h| compare::beats(&b_hand, h, rules))
        {
            if resolve_beats(b, a_hand, rules)? {
                return Err(format!(
                    "not antisymmetric: A [{}] beats B [{}] and B beats A",
                    show(a_hand),
                    show(&b_hand)
                ));
            }
        }
    }
    Ok(())
}

/// The docs/rules/VECTORS.md ids of sections A and B, which the data file must all contain.
fn required_ids() -> impl Iterator<Item = String> {
    (1..=67)
        .map(|i| format!("V{i:02}"))
        .chain((1..=30).map(|i| format!("K{i:02}")))
}

#[test]
fn rule_vectors() {
    let mut failures = Vec::new();
    let mut ids = BTreeSet::new();
    let (mut cases, mut classify_cases, mut compare_cases) = (0, 0, 0);
    for (n, raw) in DATA.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        cases += 1;
        let id = line.split('|').next().unwrap_or("").trim().to_string();
        let result = if ids.insert(id.clone()) {
            parse_line(line)
        } else {
            Err(format!("duplicate id {id}"))
        }
        .and_then(|(rules, case)| match case {
            Case::Classify { cards, expected } => {
                classify_cases += 1;
                check_classify(cards, &expected, &rules)
            }
            Case::Compare { a, b, beats } => {
                compare_cases += 1;
                check_compare(a, b, beats, &rules)
            }
        });
        if let Err(e) = result {
            failures.push(format!("{id} (line {}): {line}\n    {e}", n + 1));
        }
    }
    for id in required_ids() {
        let present = ids.iter().any(|have| {
            have.strip_prefix(id.as_str())
                .is_some_and(|rest| rest.len() <= 1)
        });
        if !present {
            failures.push(format!("{id}: missing from tests/data/vectors.txt"));
        }
    }
    println!("{classify_cases} classification and {compare_cases} comparison cases");
    assert!(
        failures.is_empty(),
        "{} of {} vector cases failed:\n{}",
        failures.len(),
        cases,
        failures.join("\n")
    );
}
