//! `shuangkou rules plays --limit/--offset/--type`: the real binary's pages, walked to the end,
//! are exactly its full `rules plays --json` list (issue 14's 千變 hand with 24,205 leads), the
//! counts agree with the full list, and bad paging input is a clear error (exit 2).

pub mod cli_support;

use std::process::Output;

use serde_json::Value;

/// `rules plays` of the issue's hand with `extra`.
fn plays(extra: &[&str]) -> Output {
    cli_support::run(&cli_support::issue_plays(extra), "", false)
}

fn reply(out: &Output) -> Value {
    let text = String::from_utf8(out.stdout.clone()).expect("UTF-8");
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn list(v: &Value) -> Vec<Value> {
    v["plays"].as_array().expect("plays").clone()
}

/// Every page from offset 0 with `limit` and `types`; (the plays, the last reply).
fn walk(limit: usize, types: &[&str]) -> (Vec<Value>, Value) {
    let mut got = Vec::new();
    loop {
        let mut args = vec![
            "--json".to_string(),
            "--limit".into(),
            limit.to_string(),
            "--offset".into(),
            got.len().to_string(),
        ];
        for t in types {
            args.push("--type".into());
            args.push(t.to_string());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = plays(&args);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let v = reply(&out);
        assert_eq!(v["offset"].as_u64(), Some(got.len() as u64), "{v}");
        let page = list(&v);
        assert!(page.len() <= limit);
        got.extend(page);
        match v.get("next_offset") {
            Some(n) => assert_eq!(n.as_u64(), Some(got.len() as u64)),
            None => return (got, v),
        }
    }
}

#[test]
fn pages_walk_to_exactly_the_full_list() {
    let full_out = plays(&["--json"]);
    assert_eq!(full_out.status.code(), Some(0));
    let full = list(&reply(&full_out));
    assert_eq!(full.len(), 24_205, "issue 14 counts 24,205 leads");
    let (got, last) = walk(500, &[]);
    assert!(got == full, "the pages differ from the full list");
    assert_eq!(last["total"].as_u64(), Some(24_205));
    assert_eq!(last["total_all"].as_u64(), Some(24_205));
    let by_type = last["by_type"].as_object().expect("by_type");
    let sum: u64 = by_type.values().filter_map(Value::as_u64).sum();
    assert_eq!(sum, 24_205);
    // One type, and two, against filtering the full list.
    for types in [&["bomb"][..], &["four_jokers", "triple_chain"][..]] {
        let want: Vec<Value> = full
            .iter()
            .filter(|p| types.iter().any(|t| p["type"] == *t))
            .cloned()
            .collect();
        let (got, last) = walk(37, types);
        assert!(got == want, "pages of {types:?}");
        assert_eq!(last["total"].as_u64(), Some(want.len() as u64));
        for t in types {
            let n = full.iter().filter(|p| p["type"] == *t).count() as u64;
            assert_eq!(by_type[*t].as_u64(), Some(n), "{t}");
        }
    }
}

#[test]
fn a_page_is_bounded_and_bad_input_is_refused() {
    // The default page: 20 plays and the counts, never the 3 MB list.
    let out = plays(&["--json", "--offset", "0"]);
    let v = reply(&out);
    assert_eq!(list(&v).len(), 20);
    assert_eq!(v["next_offset"].as_u64(), Some(20));
    assert!(out.stdout.len() < 10_000, "{} bytes", out.stdout.len());
    for (args, words) in [
        (&["--limit", "501"][..], "limit 501"),
        (&["--type", "nonsense"][..], "nonsense"),
        (&["--offset", "24206"][..], "24206"),
    ] {
        let mut a = vec!["--json"];
        a.extend_from_slice(args);
        let out = plays(&a);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let v = reply(&out);
        assert_eq!(v["error"], "BAD_REQUEST", "{v}");
        assert!(v["message"].as_str().unwrap().contains(words), "{v}");
    }
    // Readable output ends with where the page is.
    let out = plays(&["--limit", "2", "--type", "four_jokers"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.ends_with("plays 1–1 of 1 matching (24205 legal in all)\n"),
        "{text}"
    );
}
