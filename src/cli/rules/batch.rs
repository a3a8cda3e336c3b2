//! The batch protocol: one JSON request per input line, one JSON reply per output line.

use std::io::{self, BufRead, Write};

use serde_json::{Map, Value};

use crate::cards::{CardSet, RankCounts};

use super::MAX_LINE_BYTES;
use super::questions::{Failure, beats_op, classify_op, declared, plays_op, rules_for};
use super::reply::{Answer, Reply, cut};

/// Serializes a reply as one line (with the newline).
pub(super) fn to_json_line(reply: &Reply) -> String {
    let mut s = serde_json::to_string(reply).unwrap_or_else(|_| {
        r#"{"ok":false,"error":"INTERNAL","message":"the reply could not be encoded"}"#.to_string()
    });
    s.push('\n');
    s
}

/// Answers one request line of the batch protocol with one reply line (no newline). Never panics.
pub fn batch_line(line: &str) -> String {
    let value: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => {
            let f = Failure::bad_request(format!("the line is not a JSON value: {e}"));
            return reply_line(&f.reply(None));
        }
    };
    let id = value.get("id").cloned();
    let reply = match request(&value) {
        Ok(answer) => answer.reply(id),
        Err(f) => f.reply(id),
    };
    reply_line(&reply)
}

pub(super) fn reply_line(reply: &Reply) -> String {
    let mut s = to_json_line(reply);
    s.pop();
    s
}

/// The fields each op accepts.
pub(super) const COMMON_FIELDS: [&str; 4] = ["op", "id", "variant", "options"];

pub(super) fn request(value: &Value) -> Result<Answer, Failure> {
    let Some(obj) = value.as_object() else {
        return Err(Failure::bad_request("a request is a JSON object"));
    };
    let op = match obj.get("op") {
        Some(Value::String(s)) => s.as_str(),
        Some(_) => return Err(Failure::bad_request("field \"op\" must be a string")),
        None => return Err(Failure::bad_request("missing field \"op\"")),
    };
    let fields: &[&str] = match op {
        "classify" => &["cards"],
        "beats" => &["prev", "prev_type", "prev_key", "cards"],
        "plays" => &["hand", "prev", "prev_type", "prev_key"],
        other => {
            return Err(Failure::bad_request(format!(
                "unknown op {:?} (known: classify, beats, plays)",
                cut(other)
            )));
        }
    };
    if let Some(k) = obj
        .keys()
        .find(|k| !COMMON_FIELDS.contains(&k.as_str()) && !fields.contains(&k.as_str()))
    {
        return Err(Failure::bad_request(format!(
            "unknown field {:?} for op {op} (known: {}, {})",
            cut(k),
            COMMON_FIELDS.join(", "),
            fields.join(", ")
        )));
    }
    let variant = match obj.get("variant") {
        Some(Value::String(s)) => s.as_str(),
        Some(_) => return Err(Failure::bad_request("field \"variant\" must be a string")),
        None => return Err(Failure::bad_request("missing field \"variant\"")),
    };
    let options = match obj.get("options") {
        None | Some(Value::Null) => None,
        Some(Value::Object(o)) => Some(o),
        Some(_) => return Err(Failure::bad_request("field \"options\" must be an object")),
    };
    let rules = rules_for(variant, options)?;
    let declared_prev = || {
        let text = |name: &str| match obj.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(_) => Err(Failure::bad_request(format!(
                "field {name:?} must be a string"
            ))),
        };
        declared(text("prev_type")?, text("prev_key")?)
    };
    match op {
        "classify" => {
            let cards = required_cards(obj, "cards")?;
            classify_op(cards, &rules).map(Answer::Interpretations)
        }
        "beats" => {
            let prev = required_cards(obj, "prev")?;
            let declared = declared_prev()?;
            let cards = required_cards(obj, "cards")?;
            beats_op(prev, declared, cards, &rules)
        }
        _ => {
            let hand = required_cards(obj, "hand")?;
            let prev = cards_field(obj, "prev")?.filter(|p| !p.is_empty());
            let declared = declared_prev()?;
            plays_op(hand, prev, declared, &rules, None)
        }
    }
}

pub(super) fn required_cards(obj: &Map<String, Value>, name: &str) -> Result<RankCounts, Failure> {
    cards_field(obj, name)?.ok_or_else(|| Failure::bad_request(format!("missing field {name:?}")))
}

/// A cards field: text notation or an array of card ids; `None` when absent or `null`.
pub(super) fn cards_field(
    obj: &Map<String, Value>,
    name: &str,
) -> Result<Option<RankCounts>, Failure> {
    match obj.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.parse::<RankCounts>()?)),
        Some(Value::Array(items)) => {
            let mut ids = Vec::with_capacity(items.len().min(108));
            for item in items {
                let id = item
                    .as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| {
                        Failure::new(
                            "BAD_CARD_ID",
                            format!("card id {} is not a number 0..=107", cut(&item.to_string())),
                        )
                    })?;
                ids.push(id);
                if ids.len() > 108 {
                    break; // a duplicate is certain; from_ids reports it
                }
            }
            Ok(Some(CardSet::from_ids(&ids)?.rank_counts()))
        }
        Some(_) => Err(Failure::bad_request(format!(
            "field {name:?} must be card notation (a string) or an array of card ids"
        ))),
    }
}

/// Runs the batch protocol: one reply line per request line, flushed per line. Lines longer than
/// `MAX_LINE_BYTES` or not UTF-8 get a `BAD_REQUEST` reply.
pub fn batch(mut input: impl BufRead, mut output: impl Write) -> io::Result<()> {
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n =
            io::Read::take(&mut input, MAX_LINE_BYTES as u64 + 1).read_until(b'\n', &mut buf)?;
        if n == 0 {
            return Ok(());
        }
        let reply = if buf.last() != Some(&b'\n') && buf.len() > MAX_LINE_BYTES {
            skip_line(&mut input)?;
            reply_line(
                &Failure::bad_request(format!("the line is longer than {MAX_LINE_BYTES} bytes"))
                    .reply(None),
            )
        } else {
            while matches!(buf.last(), Some(b'\n' | b'\r')) {
                buf.pop();
            }
            match std::str::from_utf8(&buf) {
                Ok(line) => batch_line(line),
                Err(_) => reply_line(&Failure::bad_request("the line is not UTF-8").reply(None)),
            }
        };
        output.write_all(reply.as_bytes())?;
        output.write_all(b"\n")?;
        output.flush()?;
    }
}

/// Discards input up to and including the next newline.
pub(super) fn skip_line(input: &mut impl BufRead) -> io::Result<()> {
    loop {
        let available = input.fill_buf()?;
        if available.is_empty() {
            return Ok(());
        }
        match available.iter().position(|&b| b == b'\n') {
            Some(i) => {
                input.consume(i + 1);
                return Ok(());
            }
            None => {
                let len = available.len();
                input.consume(len);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_examples() {
        assert_eq!(
            batch_line(r#"{"op":"classify","variant":"baibian","cards":"7 7 7 7 BJ"}"#),
            r#"{"ok":true,"interpretations":[{"type":"bomb","length":5,"key":"7","stars":5,"as":"7 7 7 7 7"}]}"#
        );
        assert_eq!(
            batch_line(
                r#"{"op":"beats","variant":"classic","prev":"2 2 2 2","cards":"6 6 6 6 6"}"#
            ),
            r#"{"ok":true,"beats":true}"#
        );
    }

    #[test]
    fn long_lines_are_skipped_with_one_reply() {
        let mut input = vec![b'7'; MAX_LINE_BYTES + 10];
        input.push(b'\n');
        input.extend_from_slice(br#"{"op":"classify","variant":"classic","cards":"3"}"#);
        input.push(b'\n');
        let mut out = Vec::new();
        batch(&input[..], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[0].contains("BAD_REQUEST"));
        assert!(lines[1].starts_with(r#"{"ok":true"#));
    }

    #[test]
    fn options_override_rule_settings() {
        let line = r#"{"op":"classify","variant":"baibian","options":{"cyclic_chain_bombs":"true"},"cards":"K K K K A A A A 2 2 2 2"}"#;
        let out = batch_line(line);
        assert!(out.contains(r#""cyclic":true"#), "{out}");
        let bad =
            batch_line(r#"{"op":"classify","variant":"baibian","options":{"nope":1},"cards":"3"}"#);
        assert!(bad.contains("BAD_OPTION"), "{bad}");
    }
}
