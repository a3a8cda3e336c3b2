//! Fuzz target: the JSON-lines protocol of `shuangkou rules batch`.
//!
//! Arbitrary UTF-8 goes into `batch_line`: the reply must be one line of valid JSON, an object
//! with a boolean `ok`, and on failure a known error code and a message. The raw bytes (any
//! encoding, several lines) also go through `batch`, which must answer every line with exactly one
//! line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use shuangkou::cli::rules::{batch, batch_line};

const CODES: [&str; 11] = [
    "BAD_REQUEST",
    "UNKNOWN_VARIANT",
    "BAD_OPTION",
    "BAD_CARD",
    "BAD_CARD_ID",
    "DUPLICATE_CARD",
    "NOT_A_COMBINATION",
    "AMBIGUOUS_PLAY",
    "DECLARED_MISMATCH",
    "TOO_MANY_CARDS",
    "DOES_NOT_BEAT",
];

fn check_reply(line: &str) {
    assert!(!line.contains('\n'), "reply spans lines: {line:?}");
    let v: Value = serde_json::from_str(line).expect("reply is JSON");
    let ok = v
        .get("ok")
        .and_then(Value::as_bool)
        .expect("reply has a boolean ok");
    if !ok {
        let code = v.get("error").and_then(Value::as_str).expect("error code");
        assert!(CODES.contains(&code), "unknown error code {code}");
        assert!(v.get("message").is_some_and(Value::is_string));
    } else {
        assert!(v.get("error").is_none());
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        check_reply(&batch_line(text));
    }
    if data.len() <= 4096 {
        let mut out = Vec::new();
        batch(data, &mut out).expect("writing to a Vec cannot fail");
        let lines = data.split(|&b| b == b'\n').count() - usize::from(data.ends_with(b"\n"));
        let lines = if data.is_empty() { 0 } else { lines };
        let text = String::from_utf8(out).expect("replies are UTF-8");
        assert_eq!(text.lines().count(), lines, "one reply per line");
        for reply in text.lines() {
            check_reply(reply);
        }
    }
});
