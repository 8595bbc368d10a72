//! Hostile and broken servers: what the caller observes for each misbehaviour.
//! The README's chaos table names these tests (and a few in other files).

use crate::common;

use std::sync::{Arc, Mutex};

use common::{peer, run};
use serde_json::json;
use stdio_mcp::Error;

#[test]
fn exits_mid_response() {
    run(10, async {
        let discarded: Arc<Mutex<Vec<String>>> = Arc::default();
        let log = Arc::clone(&discarded);
        let t = peer(&[])
            .on_discarded(move |d| log.lock().unwrap().push(d.line.clone()))
            .spawn()
            .unwrap();
        let r = t.send_request(
            "test/exit",
            Some(json!({"code": 1, "stdout": "{\"jsonrpc\":\"2.0\",\"id\":1,\"res", "stderr": ["crashed"]})),
        );
        assert_eq!(
            r.await.unwrap_err().to_string(),
            "MCP server process exited (code 1): crashed"
        );
        // The torn line is reported as noise, not taken as an answer.
        assert_eq!(
            *discarded.lock().unwrap(),
            ["{\"jsonrpc\":\"2.0\",\"id\":1,\"res"]
        );
    });
}

#[test]
fn sends_a_line_over_the_size_limit() {
    run(10, async {
        let t = peer(&[]).max_message_size(1 << 20).spawn().unwrap();
        let waiting = t.send_request("test/never", None);
        let huge = t.send_request("test/huge", Some(json!({"bytes": 4 << 20})));
        let e = huge.await.unwrap_err();
        assert!(
            matches!(e, Error::MessageTooLarge { limit: 1048576 }),
            "{e}"
        );
        assert_eq!(
            e.to_string(),
            "MCP server sent a line longer than the limit of 1048576 bytes; the server was closed"
        );
        assert_eq!(waiting.await.unwrap_err().to_string(), e.to_string());
        assert!(!t.is_alive());
        assert!(matches!(
            t.send_request("ping", None).await.unwrap_err(),
            Error::MessageTooLarge { .. }
        ));
        // The child is closed (it exits on EOF).
        t.close().await.unwrap();
        assert!(t.exit_status().is_some());
    });
}

#[test]
fn a_line_within_the_limit_passes() {
    run(10, async {
        let t = peer(&[]).max_message_size(1 << 20).spawn().unwrap();
        let r = t
            .send_request("test/huge", Some(json!({"bytes": 1000 * 1000})))
            .await
            .unwrap();
        assert_eq!(r.as_str().unwrap().len(), 1_000_000);
        t.close().await.unwrap();
    });
}

#[test]
fn writes_an_endless_stderr_line() {
    run(10, async {
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let log = Arc::clone(&seen);
        let t = peer(&[])
            .on_stderr(move |l| log.lock().unwrap().push(l.to_owned()))
            .spawn()
            .unwrap();
        let endless = "x".repeat(3_000_000);
        let _ = t
            .send_request("test/exit", Some(json!({ "stderr": [endless, "done"] })))
            .await;
        t.close().await.unwrap();
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[0].len(), 64 * 1024, "cut at 64 KiB, the rest dropped");
        assert_eq!(seen[1], "done");
    });
}

#[test]
fn never_reads_its_stdin() {
    run(15, async {
        let t = peer(&["--no-read"]).spawn().unwrap();
        // 20 MB of requests: far beyond the pipe's buffer; no send blocks.
        let payload = "q".repeat(100_000);
        let waiting: Vec<_> = (0..200)
            .map(|_| t.send_request("test/echo", Some(json!(payload))))
            .collect();
        // close() still finishes: the ladder gives up on the queue and signals.
        t.close().await.unwrap();
        let status = t.exit_status().unwrap();
        common::assert_ladder_step_two(status);
        for r in waiting {
            assert_eq!(
                r.await.unwrap_err().to_string(),
                format!("MCP server process exited ({status})")
            );
        }
    });
}

/// (On Windows the same holds for batch files: `platform.rs`.)
#[cfg(unix)]
#[test]
fn the_command_is_argv_never_a_shell_line() {
    run(10, async {
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let log = Arc::clone(&seen);
        let t =
            stdio_mcp::Transport::builder(["printf", "%s\\n", "a; echo injected $(id) `id` | cat"])
                .on_discarded(move |d| log.lock().unwrap().push(d.line.clone()))
                .spawn()
                .unwrap();
        t.close().await.unwrap();
        assert_eq!(*seen.lock().unwrap(), ["a; echo injected $(id) `id` | cat"]);
    });
}
