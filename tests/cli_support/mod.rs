//! Shared helper of the command-line tests (`tests/cli_*.rs`): the real `shuangkou` binary as a
//! child process, fed a stdin and read to the end.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs `shuangkou ARGS` with `stdin`; with `close_stdout`, the read end of its stdout is closed
/// before it can write (what `| head` does after the first line). Returns its output.
pub fn run(args: &[&str], stdin: &str, close_stdout: bool) -> Output {
    run_bytes(args, stdin.as_bytes(), close_stdout)
}

/// [`run`] with any bytes on stdin (the batch protocol's tests send malformed UTF-8).
pub fn run_bytes(args: &[&str], stdin: &[u8], close_stdout: bool) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_shuangkou"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    if close_stdout {
        drop(child.stdout.take());
    }
    let mut input = child.stdin.take().expect("stdin is piped");
    let data = stdin.to_vec();
    // From another thread, so a large input cannot deadlock against a full stdout pipe.
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("the binary runs");
    writer.join().expect("writer thread");
    out
}

/// The hand of the issue's paging example (a 千變 hand with many plays).
pub const ISSUE_HAND: &str = "3 3 4 4 5 5 6 6 7 7 8 8 9 9 T T J J Q Q K K A SJ SJ BJ BJ";

/// `rules plays --variant qianbian --hand ISSUE_HAND` followed by `extra`.
pub fn issue_plays<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "rules",
        "plays",
        "--variant",
        "qianbian",
        "--hand",
        ISSUE_HAND,
    ];
    args.extend_from_slice(extra);
    args
}
