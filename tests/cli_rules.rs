//! `shuangkou rules`: the real binary's subcommands (classify, beats, plays, batch), their JSON
//! replies and exit codes, and the batch protocol's answers to malformed input.

use std::process::Output;

use serde_json::Value;
use shuangkou::cli::rules::batch_line;

pub mod cli_support;

/// Runs `shuangkou rules ARGS` with `stdin`; returns its output.
fn rules(args: &[&str], stdin: &[u8]) -> Output {
    let mut all = vec!["rules"];
    all.extend_from_slice(args);
    cli_support::run_bytes(&all, stdin, false)
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8")
}

/// Line `index` of `text` starts with `start` and holds `part`.
fn assert_line(text: &str, index: usize, start: &str, part: &str) {
    let line = text.lines().nth(index).unwrap_or_default();
    assert!(line.starts_with(start) && line.contains(part), "{text}");
}

fn json(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

/// The `error` code of a failed reply (asserting `ok` is false).
fn error_code(reply: &str) -> String {
    let v = json(reply);
    assert_eq!(v["ok"], Value::Bool(false), "{reply}");
    assert!(v["message"].is_string(), "{reply}");
    v["error"].as_str().expect("error code").to_string()
}

const ISSUE_CLASSIFY: &str = r#"{"op":"classify","variant":"baibian","cards":"7 7 7 7 BJ"}"#;
const ISSUE_CLASSIFY_REPLY: &str = r#"{"ok":true,"interpretations":[{"type":"bomb","length":5,"key":"7","stars":5,"as":"7 7 7 7 7"}]}"#;
const ISSUE_BEATS: &str =
    r#"{"op":"beats","variant":"classic","prev":"2 2 2 2","cards":"6 6 6 6 6"}"#;
const ISSUE_BEATS_REPLY: &str = r#"{"ok":true,"beats":true}"#;
const ISSUE_PLAYS: &str =
    r#"{"op":"plays","variant":"qianbian","hand":"3 4 5 6 7 7 7 7 9 SJ BJ","prev":null}"#;

#[test]
fn classify_prints_every_interpretation() {
    let out = rules(
        &["classify", "--variant", "baibian", "7", "7", "7", "7", "BJ"],
        b"",
    );
    assert!(out.status.success());
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1, "{text}");
    for part in ["bomb", "5 cards", "key 7", "5★", "as 7 7 7 7 7", "BJ→7"] {
        assert!(text.contains(part), "{part:?} missing from {text}");
    }
    // One quoted argument or several: the same answer.
    let quoted = rules(&["classify", "--variant", "baibian", "7 7 7 7 BJ"], b"");
    assert_eq!(stdout(&quoted), text);

    // 千變: two interpretations, one per line.
    let out = rules(
        &["classify", "--variant", "qianbian", "3 4 5 SJ BJ BJ"],
        b"",
    );
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_line(&text, 0, "straight", "key 8");
    assert_line(&text, 1, "pair_chain", "key 5");
}

#[test]
fn classify_json_is_the_batch_reply() {
    let out = rules(
        &["classify", "--variant", "baibian", "--json", "7 7 7 7 BJ"],
        b"",
    );
    assert!(out.status.success());
    assert_eq!(stdout(&out), format!("{ISSUE_CLASSIFY_REPLY}\n"));
    // Card ids: 7♠ 7♥ 7♣ 7♦ and a big joker.
    let out = rules(
        &[
            "classify",
            "--variant",
            "baibian",
            "--json",
            "--ids",
            "4,17,30,43,53",
        ],
        b"",
    );
    assert_eq!(stdout(&out), format!("{ISSUE_CLASSIFY_REPLY}\n"));
}

#[test]
fn classify_errors_exit_2() {
    let out = rules(&["classify", "--variant", "baibian", "3", "X"], b"");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("BAD_CARD") && err.contains("\"X\""), "{err}");

    let out = rules(&["classify", "--variant", "baibian", "--json", "3 4"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(error_code(stdout(&out).trim_end()), "NOT_A_COMBINATION");

    let out = rules(&["classify", "--variant", "nope", "--json", "3"], b"");
    assert_eq!(error_code(stdout(&out).trim_end()), "UNKNOWN_VARIANT");
}

#[test]
fn beats_answers_and_exit_codes() {
    let yes = rules(
        &[
            "beats",
            "--variant",
            "classic",
            "--prev",
            "2 2 2 2",
            "6 6 6 6 6",
        ],
        b"",
    );
    assert_eq!(yes.status.code(), Some(0));
    assert!(stdout(&yes).starts_with("yes"), "{}", stdout(&yes));

    let no = rules(
        &["beats", "--variant", "baibian", "--prev", "5 5", "3", "3"],
        b"",
    );
    assert_eq!(no.status.code(), Some(1));
    let text = stdout(&no);
    assert!(
        text.starts_with("no") && text.contains("key rank"),
        "{text}"
    );

    let json_yes = rules(
        &[
            "beats",
            "--variant",
            "classic",
            "--json",
            "--prev",
            "2 2 2 2",
            "6 6 6 6 6",
        ],
        b"",
    );
    assert_eq!(stdout(&json_yes), format!("{ISSUE_BEATS_REPLY}\n"));
    let json_no = rules(
        &[
            "beats",
            "--variant",
            "classic",
            "--json",
            "--prev",
            "6 6 6 6 6",
            "2 2 2 2",
        ],
        b"",
    );
    assert_eq!(json_no.status.code(), Some(1));
    assert_eq!(stdout(&json_no), "{\"ok\":true,\"beats\":false}\n");

    // An ambiguous play on the table must be declared.
    let amb = rules(
        &[
            "beats",
            "--variant",
            "qianbian",
            "--json",
            "--prev",
            "3 4 5 SJ BJ BJ",
            "4 5 6 7 8 9",
        ],
        b"",
    );
    assert_eq!(amb.status.code(), Some(2));
    let reply = stdout(&amb);
    assert_eq!(error_code(reply.trim_end()), "AMBIGUOUS_PLAY");
    assert_eq!(
        json(reply.trim_end())["interpretations"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
    let declared = rules(
        &[
            "beats",
            "--variant",
            "qianbian",
            "--json",
            "--prev",
            "3 4 5 SJ BJ BJ",
            "--prev-type",
            "straight",
            "4 5 6 7 8 9",
        ],
        b"",
    );
    assert_eq!(stdout(&declared), "{\"ok\":true,\"beats\":true}\n");
}

#[test]
fn plays_lists_weakest_first() {
    let out = rules(
        &["plays", "--variant", "baibian", "--hand", "3 3 4 BJ"],
        b"",
    );
    assert!(out.status.success());
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 7, "{text}");
    assert_line(&text, 0, "3 ", "single");
    assert_line(&text, 6, "3 3 BJ", "triple");

    let out = rules(
        &[
            "plays",
            "--variant",
            "baibian",
            "--json",
            "--hand",
            "3 3 4 BJ",
            "--prev",
            "3 3",
        ],
        b"",
    );
    assert_eq!(
        stdout(&out),
        "{\"ok\":true,\"plays\":[{\"cards\":\"4 BJ\",\"type\":\"pair\",\"length\":2,\"key\":\"4\",\"stars\":null,\"as\":\"4 4\"}]}\n"
    );

    // More cards than a hand of the variant holds (27).
    let out = rules(
        &[
            "plays",
            "--variant",
            "qianbian",
            "--json",
            "--hand",
            &"3 4 5 6 7 8 9 ".repeat(4),
        ],
        b"",
    );
    assert_eq!(error_code(stdout(&out).trim_end()), "TOO_MANY_CARDS");
}

#[test]
fn batch_answers_the_issue_examples_exactly() {
    let input = format!("{ISSUE_CLASSIFY}\n{ISSUE_BEATS}\n{ISSUE_PLAYS}\n");
    let out = rules(&["batch"], input.as_bytes());
    assert!(out.status.success());
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(lines[0], ISSUE_CLASSIFY_REPLY);
    assert_eq!(lines[1], ISSUE_BEATS_REPLY);
    assert!(
        lines[2].starts_with(
            r#"{"ok":true,"plays":[{"cards":"3","type":"single","length":1,"key":"3","stars":null},"#
        ),
        "{}",
        lines[2]
    );
    let plays = json(lines[2]);
    let plays = plays["plays"].as_array().expect("plays");
    // 千變: the 7s with wild jokers are 5★ and 6★ bombs; the strongest play is last.
    let last = plays.last().expect("a play");
    assert_eq!(last["type"], "bomb");
    assert_eq!(last["stars"], 6);
    assert_eq!(last["as"], "7 7 7 7 7 7");
    for p in plays {
        for field in ["cards", "type", "length", "key", "stars"] {
            assert!(p.get(field).is_some(), "{field} missing in {p}");
        }
    }
    // The library function gives the same lines.
    assert_eq!(batch_line(ISSUE_CLASSIFY), lines[0]);
    assert_eq!(batch_line(ISSUE_BEATS), lines[1]);
    assert_eq!(batch_line(ISSUE_PLAYS), lines[2]);
}

#[test]
fn batch_rejects_bad_requests_line_by_line() {
    let cases: [(&str, &str); 16] = [
        ("this is not json", "BAD_REQUEST"),
        ("", "BAD_REQUEST"),
        ("[1,2,3]", "BAD_REQUEST"),
        (r#"{"variant":"classic","cards":"3"}"#, "BAD_REQUEST"),
        (r#"{"op":"shuffle","variant":"classic"}"#, "BAD_REQUEST"),
        (r#"{"op":"classify","variant":"classic"}"#, "BAD_REQUEST"),
        (
            r#"{"op":"classify","variant":"classic","cards":"3","prv":"4"}"#,
            "BAD_REQUEST",
        ),
        (
            r#"{"op":"classify","variant":"nope","cards":"3"}"#,
            "UNKNOWN_VARIANT",
        ),
        (
            r#"{"op":"classify","variant":"classic","cards":"3 X 4"}"#,
            "BAD_CARD",
        ),
        (
            r#"{"op":"classify","variant":"classic","cards":"7 7 7 7 7 7 7 7 7"}"#,
            "BAD_CARD",
        ),
        (
            r#"{"op":"classify","variant":"classic","cards":[0,200]}"#,
            "BAD_CARD_ID",
        ),
        (
            r#"{"op":"classify","variant":"classic","cards":[4,4]}"#,
            "DUPLICATE_CARD",
        ),
        (
            r#"{"op":"classify","variant":"classic","cards":"3 4"}"#,
            "NOT_A_COMBINATION",
        ),
        (
            r#"{"op":"beats","variant":"classic","prev":"3 4","cards":"5"}"#,
            "NOT_A_COMBINATION",
        ),
        (
            r#"{"op":"plays","variant":"qianbian","hand":"3 3","prev":"3 4 5 SJ BJ BJ"}"#,
            "AMBIGUOUS_PLAY",
        ),
        (
            r#"{"op":"classify","variant":"baibian","options":{"nope":1},"cards":"3"}"#,
            "BAD_OPTION",
        ),
    ];
    let input: String = cases.iter().map(|(line, _)| format!("{line}\n")).collect();
    let out = rules(&["batch"], input.as_bytes());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), cases.len(), "{text}");
    for ((request, code), reply) in cases.iter().zip(&lines) {
        assert_eq!(&error_code(reply), code, "{request} → {reply}");
    }
    let bad_token = json(lines[8]);
    assert!(
        bad_token["message"]
            .as_str()
            .is_some_and(|m| m.contains("\"X\"")),
        "{bad_token}"
    );
    let ninth = json(lines[9]);
    assert!(
        ninth["message"]
            .as_str()
            .is_some_and(|m| m.contains("copy 9")),
        "{ninth}"
    );
    assert_eq!(
        json(lines[14])["interpretations"].as_array().map(Vec::len),
        Some(2)
    );
}

#[test]
fn batch_echoes_ids_and_accepts_card_ids() {
    let reply =
        batch_line(r#"{"id":"r1","op":"beats","variant":"baibian","prev":[0,13],"cards":[1,14]}"#);
    assert_eq!(reply, r#"{"id":"r1","ok":true,"beats":true}"#);
    let reply = batch_line(r#"{"id":5,"op":"classify","variant":"nope","cards":"3"}"#);
    assert!(
        reply.starts_with(r#"{"id":5,"ok":false,"error":"UNKNOWN_VARIANT""#),
        "{reply}"
    );
}

#[test]
fn batch_survives_huge_lines() {
    // Over the line limit: skipped with one reply, and the next line is still answered.
    let mut input = vec![b'{'; 3 << 20];
    input.push(b'\n');
    input.extend_from_slice(ISSUE_BEATS.as_bytes());
    input.push(b'\n');
    // Under the limit but huge: a card string of half a megabyte.
    let big = format!(
        r#"{{"op":"classify","variant":"qianbian","cards":"{}"}}"#,
        "7 ".repeat(250_000)
    );
    input.extend_from_slice(big.as_bytes());
    input.push(b'\n');
    // A deeply nested value.
    input.extend_from_slice("[".repeat(100_000).as_bytes());
    input.push(b'\n');
    // Not UTF-8.
    input.extend_from_slice(b"\xff\xfe{\"op\"}\n");
    let out = rules(&["batch"], &input);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{}", &text[..text.len().min(2000)]);
    assert_eq!(error_code(lines[0]), "BAD_REQUEST");
    assert_eq!(lines[1], ISSUE_BEATS_REPLY);
    assert_eq!(error_code(lines[2]), "BAD_CARD");
    assert!(
        lines[2].len() < 2000,
        "the message echoes too much: {} bytes",
        lines[2].len()
    );
    assert_eq!(error_code(lines[3]), "BAD_REQUEST");
    assert_eq!(error_code(lines[4]), "BAD_REQUEST");
}

/// Issue 18, case 1 (seed 001, S1's note 「線數一樣,誰先出誰大」; docs/rules/RULES.md §8 #27): by default
/// (`tiebreak`, S1's main text) a later 7線 bomb of a higher rank beats the one on the table;
/// under `equal_star_bombs=first_stands` it does not, and `rules plays` offers no bomb of the
/// same level when following.
#[test]
fn equal_star_bombs_first_stands() {
    let beats = |extra: &[&str]| {
        let mut args = vec![
            "beats",
            "--variant",
            "huopin",
            "--prev",
            "7 7 7 7 7 7 7",
            "8 8 8 8 8 8 8",
        ];
        args.extend_from_slice(extra);
        rules(&args, b"")
    };
    assert_eq!(beats(&[]).status.code(), Some(0), "tiebreak: 8×7 beats 7×7");
    let out = beats(&["--option", "equal_star_bombs=first_stands"]);
    assert_eq!(out.status.code(), Some(1), "first_stands: {}", stdout(&out));
    assert!(
        stdout(&out).contains("first played stands"),
        "{}",
        stdout(&out)
    );
    // A higher level still beats.
    let out = rules(
        &[
            "beats",
            "--variant",
            "huopin",
            "--option",
            "equal_star_bombs=first_stands",
            "--prev",
            "7 7 7 7 7 7 7",
            "3 3 3 3 3 3 3 3",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0));
    // Following 7×7: the hand's 8×7 (7線) is offered only under tiebreak; 3×8 (8線) always.
    let plays = |option: &str| -> Vec<String> {
        let line = format!(
            r#"{{"op":"plays","variant":"huopin","options":{{"equal_star_bombs":"{option}"}},"hand":"8 8 8 8 8 8 8 3 3 3 3 3 3 3 3 4","prev":"7 7 7 7 7 7 7"}}"#
        );
        let v = json(&batch_line(&line));
        assert_eq!(v["ok"], Value::Bool(true), "{v}");
        v["plays"]
            .as_array()
            .expect("plays")
            .iter()
            .map(|p| p["cards"].as_str().expect("cards").to_string())
            .collect()
    };
    let tie = plays("tiebreak");
    let first = plays("first_stands");
    assert!(tie.iter().any(|c| c == "8 8 8 8 8 8 8"), "{tie:?}");
    assert!(!first.iter().any(|c| c == "8 8 8 8 8 8 8"), "{first:?}");
    assert!(first.iter().all(|c| c.split(' ').count() >= 8), "{first:?}");
    assert!(first.iter().any(|c| c == "3 3 3 3 3 3 3 3"), "{first:?}");
    // Classic has no star levels: the option is refused there.
    let out = rules(
        &[
            "beats",
            "--variant",
            "classic",
            "--option",
            "equal_star_bombs=first_stands",
            "--prev",
            "7 7 7 7",
            "8 8 8 8",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
}

/// Issue 18, case 5 (docs/rules/RULES.md §2 item 2, §8 #22): a chain bomb of 5 links of 6 cards (30) does
/// not fit a 27-card hand: `classify` rejects it with `TOO_MANY_CARDS`, naming the limit; 5 × 5
/// (25 cards) is a 10★ chain bomb.
#[test]
fn chain_bombs_larger_than_the_hand_are_rejected() {
    let out = rules(
        &[
            "classify",
            "--variant",
            "baibian",
            "--json",
            "3 3 3 3 3 3 4 4 4 4 4 4 5 5 5 5 5 5 6 6 6 6 6 6 7 7 7 7 7 7",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    let reply = stdout(&out);
    assert_eq!(error_code(reply.trim()), "TOO_MANY_CARDS");
    let message = json(reply.trim())["message"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(
        message.contains("30") && message.contains("27"),
        "{message}"
    );
    let out = rules(
        &[
            "classify",
            "--variant",
            "baibian",
            "--json",
            "3 3 3 3 3 4 4 4 4 4 5 5 5 5 5 6 6 6 6 6 7 7 7 7 7",
        ],
        b"",
    );
    assert!(out.status.success());
    let v = json(stdout(&out).trim());
    assert_eq!(v["interpretations"][0]["type"], "chain_bomb");
    assert_eq!(v["interpretations"][0]["stars"], 10);
    // The same limit when the play is the new play of `beats`.
    let line = r#"{"op":"beats","variant":"qianbian","prev":"3 3 3 3","cards":"3 3 3 3 3 3 4 4 4 4 4 4 5 5 5 5 5 5 6 6 6 6 6 6 7 7 7 7"}"#;
    assert_eq!(error_code(&batch_line(line)), "TOO_MANY_CARDS");
}
