//! Cancelling by drop, and time limits.

use crate::common;

use std::time::{Duration, Instant};

use common::{cancels, eventually, peer, received, run};
use serde_json::json;
use stdio_mcp::{Error, RequestOptions};

#[test]
fn dropping_a_pending_request_sends_cancelled_without_reason() {
    run(10, async {
        let t = peer(&[]).spawn().unwrap();
        let r = t.send_request("test/never", None);
        let id = r.id();
        drop(r);
        let lines = received(&t).await;
        assert_eq!(
            cancels(&lines),
            [
                &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}})
            ]
        );
        t.close().await.unwrap();
    });
}

#[test]
fn a_late_response_to_a_cancelled_request_is_discarded() {
    run(10, async {
        let t = peer(&[]).spawn().unwrap();
        drop(t.send_request("test/sleep", Some(json!({"ms": 100}))));
        eventually(5, || t.discarded_lines() == 1).await;
        assert_eq!(
            t.send_request("test/echo", Some(json!(2))).await.unwrap(),
            json!(2)
        );
        t.close().await.unwrap();
    });
}

#[test]
fn nothing_is_written_for_a_request_that_finished() {
    run(10, async {
        let t = peer(&[]).spawn().unwrap();
        // Completed and polled.
        let done = t.send_request("test/echo", Some(json!(1)));
        assert_eq!(done.await.unwrap(), json!(1));
        // Answered but never polled: the answer was read (the peer answers in order,
        // so the later echo's answer comes after it), so it counts as finished.
        let unpolled = t.send_request("test/echo", Some(json!(2)));
        assert_eq!(
            t.send_request("test/echo", Some(json!(3))).await.unwrap(),
            json!(3)
        );
        drop(unpolled);
        let lines = received(&t).await;
        assert!(cancels(&lines).is_empty(), "{lines:?}");
        t.close().await.unwrap();
    });
}

#[test]
fn dropping_after_the_exit_is_harmless_and_keeps_the_exit_error() {
    run(10, async {
        let t = peer(&[]).spawn().unwrap();
        let pending = t.send_request("test/never", None);
        let _ = t.send_request("test/exit", Some(json!({"code": 4}))).await;
        assert!(!t.is_alive());
        drop(pending);
        // A second request pending at exit still reports the exit, not a write failure.
        let t2 = peer(&[]).spawn().unwrap();
        let pending = t2.send_request("test/never", None);
        let _ = t2.send_request("test/exit", Some(json!({"code": 5}))).await;
        assert_eq!(
            pending.await.unwrap_err().to_string(),
            "MCP server process exited (code 5)"
        );
    });
}

#[test]
fn no_timeout_by_default() {
    run(10, async {
        let t = peer(&[]).spawn().unwrap();
        assert_eq!(t.timeout(), None);
        let r = t.send_request("test/sleep", Some(json!({"ms": 300}))).await;
        assert!(r.is_ok());
        t.close().await.unwrap();
    });
}

#[test]
fn timeout_fails_the_request_and_cancels_it_with_a_reason() {
    run(10, async {
        let t = peer(&[])
            .timeout(Duration::from_millis(250))
            .spawn()
            .unwrap();
        let start = Instant::now();
        let r = t.send_request("test/never", None);
        let id = r.id();
        let e = r.await.unwrap_err();
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(240) && took < Duration::from_secs(2),
            "{took:?}"
        );
        assert_eq!(
            e.to_string(),
            "MCP stdio request test/never timed out after 0.25s"
        );
        assert_eq!(e.category(), Some("timeout"));
        assert!(matches!(e, Error::Timeout { .. }));
        let lines = received(&t).await;
        let cancel = cancels(&lines);
        assert_eq!(cancel.len(), 1);
        assert_eq!(cancel[0]["params"]["requestId"], json!(id));
        assert!(cancel[0]["params"]["reason"]
            .as_str()
            .unwrap()
            .contains("timed out"));
        t.close().await.unwrap();
    });
}

#[test]
fn zero_is_a_zero_limit_not_none() {
    run(10, async {
        let t = peer(&[]).timeout(Duration::ZERO).spawn().unwrap();
        let e = t.send_request("test/never", None).await.unwrap_err();
        assert_eq!(
            e.to_string(),
            "MCP stdio request test/never timed out after 0s"
        );
        t.close().await.unwrap();
    });
}

#[test]
fn set_timeout_applies_only_to_requests_sent_afterwards() {
    run(10, async {
        let t = peer(&[]).spawn().unwrap();
        let before = t.send_request("test/sleep", Some(json!({"ms": 400})));
        t.set_timeout(Some(Duration::from_millis(100)));
        assert_eq!(t.timeout(), Some(Duration::from_millis(100)));
        let after = t.send_request("test/sleep", Some(json!({"ms": 400})));
        let (before, after) = futures::join!(before, after);
        assert!(before.is_ok(), "kept the limit it was sent with (none)");
        assert_eq!(after.unwrap_err().category(), Some("timeout"));
        t.set_timeout(None);
        assert!(t
            .send_request("test/sleep", Some(json!({"ms": 200})))
            .await
            .is_ok());
        t.close().await.unwrap();
    });
}

#[test]
fn per_request_timeout_overrides_the_default() {
    run(10, async {
        let t = peer(&[])
            .timeout(Duration::from_millis(100))
            .spawn()
            .unwrap();
        let unlimited = t.send_request_with(
            "test/sleep",
            Some(json!({"ms": 300})),
            RequestOptions::new().timeout(None),
        );
        assert!(unlimited.await.is_ok());
        let tight = t.send_request_with(
            "test/sleep",
            Some(json!({"ms": 300})),
            RequestOptions::new().timeout(Duration::from_millis(20)),
        );
        assert_eq!(
            tight.await.unwrap_err().to_string(),
            "MCP stdio request test/sleep timed out after 0.02s"
        );
        t.close().await.unwrap();
    });
}

#[test]
fn timeout_seconds_are_printed_in_shortest_form() {
    let e = |ms| Error::Timeout {
        method: "tools/call".into(),
        after: Duration::from_millis(ms),
    };
    assert_eq!(
        e(120_000).to_string(),
        "MCP stdio request tools/call timed out after 120s"
    );
    assert_eq!(
        e(250).to_string(),
        "MCP stdio request tools/call timed out after 0.25s"
    );
    assert_eq!(
        e(1_500).to_string(),
        "MCP stdio request tools/call timed out after 1.5s"
    );
}
