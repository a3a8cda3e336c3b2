//! `shuangkou simulate`: exactly `--deals` deals (never rounded up to whole matches), and a
//! script directory simulated as the server would load it (`--variants-dir`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn simulate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shuangkou"))
        .arg("simulate")
        .args(args)
        .output()
        .expect("the binary runs")
}

/// The JSON objects of `--json` output, one per line.
fn reports(out: &Output) -> Vec<Value> {
    String::from_utf8(out.stdout.clone())
        .expect("UTF-8")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn dir(test: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cli-simulate-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn copy_variant(id: &str, to: &Path) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("variants")
        .join(format!("{id}.rhai"));
    std::fs::copy(from, to.join(format!("{id}.rhai"))).expect("copy a script");
}

#[test]
fn exactly_the_deals_asked_for() {
    // 3 and 7 deals in matches of 2 and 3: neither is a whole number of matches.
    for (deals, per_game, seed) in [("3", "2", "1"), ("7", "3", "5"), ("1", "4", "2")] {
        let out = simulate(&[
            "--variant",
            "classic",
            "--deals",
            deals,
            "--deals-per-game",
            per_game,
            "--seed",
            seed,
            "--json",
        ]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let r = &reports(&out)[0];
        assert_eq!(r["deals"].as_u64(), deals.parse().ok(), "seed {seed}: {r}");
        let by_outcome: u64 = r["outcomes"]
            .as_object()
            .unwrap()
            .values()
            .filter_map(Value::as_u64)
            .sum();
        assert_eq!(Some(by_outcome), deals.parse().ok(), "seed {seed}: {r}");
        assert_eq!(r["violations"], 0, "seed {seed}: {r}");
    }
}

#[test]
fn without_a_variant_every_embedded_one_is_simulated() {
    let out = simulate(&["--deals", "1", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let ids: Vec<String> = reports(&out)
        .iter()
        .map(|r| r["variant"].as_str().unwrap().to_string())
        .collect();
    let embedded: Vec<&str> = shuangkou::variants::EMBEDDED
        .iter()
        .map(|(i, _)| *i)
        .collect();
    assert_eq!(ids, embedded);
}

#[test]
fn a_script_directory_is_simulated() {
    let d = dir("dir");
    copy_variant("jj", &d);
    copy_variant("erren", &d);
    let path = d.to_str().unwrap();
    let out = simulate(&["--variants-dir", path, "--deals", "3", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let all = reports(&out);
    let ids: Vec<&str> = all.iter().map(|r| r["variant"].as_str().unwrap()).collect();
    assert_eq!(ids, ["erren", "jj"]);
    assert!(
        all.iter()
            .all(|r| r["deals"] == 3 && r["hooks"] == "script")
    );
    // One variant of the directory.
    let out = simulate(&[
        "--variants-dir",
        path,
        "--variant",
        "jj",
        "--deals",
        "2",
        "--json",
    ]);
    assert_eq!(reports(&out).len(), 1, "{out:?}");
    // The directory's own script is the one simulated: a jj that cannot settle fails the run.
    let broken = std::fs::read_to_string(d.join("jj.rhai"))
        .unwrap()
        .replacen(
            "fn settle(facts, opts) {",
            "fn settle(facts, opts) { throw \"boom\";",
            1,
        );
    let d2 = dir("broken");
    std::fs::write(d2.join("jj.rhai"), broken).unwrap();
    let out = simulate(&["--variants-dir", d2.to_str().unwrap(), "--deals", "1"]);
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("boom") && stderr.contains("jj.rhai"),
        "{stderr}"
    );
    // Unknown variant in the directory, and a directory that does not exist: exit 2.
    let out = simulate(&[
        "--variants-dir",
        path,
        "--variant",
        "classic",
        "--deals",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let out = simulate(&["--variants-dir", "/nonexistent/dir", "--deals", "1"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}
