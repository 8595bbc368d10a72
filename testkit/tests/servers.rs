//! The two servers answer: each is built (a test of this package makes
//! cargo build its binaries, which the Wine run relies on), found by
//! [`stdio_mcp_testkit::exe`], and speaks JSON-RPC on stdio.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

fn first_answer(name: &str, request: &str) -> String {
    let mut child = Command::new(stdio_mcp_testkit::exe(name))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{request}").unwrap();
    // Read on a thread of its own: a silent server fails the test, not hangs it.
    let stdout = child.stdout.take().unwrap();
    let (sent, answer) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = sent.send(line);
    });
    let line = match answer.recv_timeout(std::time::Duration::from_secs(20)) {
        Ok(line) => line,
        Err(_) => {
            let _ = child.kill();
            panic!("{name} did not answer within 20 s");
        }
    };
    drop(stdin);
    assert!(
        child.wait().unwrap().success(),
        "{name} exits at the end of its input"
    );
    line
}

#[test]
fn the_peer_and_the_bench_server_answer_initialize() {
    let request = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    for (name, server) in [
        ("stdio-mcp-peer", "stdio-mcp-demo"),
        ("stdio-mcp-bench-server", "stdio-mcp-bench-server"),
    ] {
        let answer: serde_json::Value = serde_json::from_str(&first_answer(name, request)).unwrap();
        assert_eq!(answer["id"], 1, "{name}: {answer}");
        assert_eq!(
            answer["result"]["serverInfo"]["name"], server,
            "{name}: {answer}"
        );
    }
}
