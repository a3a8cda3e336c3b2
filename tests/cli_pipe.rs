//! A closed stdout pipe (`shuangkou … | head -1`) ends every command-line tool quietly: no
//! `failed printing to stdout` panic, exit 0 or the SIGPIPE death every Unix filter dies (the
//! tools restore the default disposition). `serve` keeps SIGPIPE ignored: a SIGPIPE (what a
//! write to a socket or pipe closed by its peer raises) never kills the server.

pub mod cli_support;
pub mod deploy_support;

use std::os::unix::process::ExitStatusExt;
use std::process::Command;
use std::time::Duration;

const SIGPIPE: i32 = 13;

/// Runs the binary with `args` and `stdin`, its stdout's read end closed before it writes.
fn with_closed_stdout(args: &[&str], stdin: &str) {
    let out = cli_support::run(args, stdin, true);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("panicked") && !stderr.contains("failed printing"),
        "{args:?} panicked on a closed pipe: {stderr}"
    );
    assert!(
        out.status.success() || out.status.signal() == Some(SIGPIPE),
        "{args:?}: {:?}, stderr: {stderr}",
        out.status
    );
}

#[test]
fn every_tool_ends_quietly_on_a_closed_pipe() {
    let facts = r#"{"places":[0,2,1,3],"bombs_played":[]}"#;
    let batch = format!(
        "{}\n",
        r#"{"op":"classify","variant":"baibian","cards":"7 7 7 7 BJ"}"#
    )
    .repeat(200);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["variants", "list", "--options"], ""),
        (vec!["variants", "list", "--json"], ""),
        (vec!["variants", "check", "--random", "1"], ""),
        (vec!["variants", "settle", "jj"], facts),
        (vec!["simulate", "--variant", "classic", "--deals", "1"], ""),
        (cli_support::issue_plays(&[]), ""),
        (cli_support::issue_plays(&["--limit", "5"]), ""),
        (
            vec!["rules", "classify", "--variant", "baibian", "7 7 7 7 BJ"],
            "",
        ),
        (vec!["rules", "batch"], &batch),
        (vec!["--help"], ""),
        (vec!["variants", "--help"], ""),
    ];
    for (args, stdin) in cases {
        with_closed_stdout(&args, stdin);
    }
}

#[tokio::test]
async fn serve_survives_sigpipe() {
    let mut server = deploy_support::Server::start(&[]);
    server.ready(Duration::from_secs(60)).await;
    let status = Command::new("kill")
        .arg("-PIPE")
        .arg(server.pid().to_string())
        .status()
        .expect("run kill");
    assert!(status.success());
    // A server that died of the signal cannot answer: `ready` panics with its exit status.
    server.ready(Duration::from_secs(30)).await;
    assert_eq!(server.try_exit(), None, "{}", server.log());
}
