//! Per-call control with `CallOptions`: a limit that progress restarts, a cap
//! that it never extends, extra `_meta`, a progress callback for any method,
//! and clear errors for params that cannot carry `_meta`.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{cancels, peer, received, run};
use serde_json::json;
use stdio_mcp::client::{CallOptions, Client};

/// `steps` progress notifications, `every_ms` apart, then the answer.
fn slow(steps: u64, every_ms: u64) -> Option<serde_json::Value> {
    Some(json!({ "steps": steps, "every_ms": every_ms }))
}

#[test]
fn progress_restarts_the_limit_only_when_asked() {
    run(20, async {
        let client = Client::connect(peer(&[])).await.unwrap();
        // Eight steps 100 ms apart: 800 ms in all, never 250 ms without progress.
        let limit = || CallOptions::new().timeout(Duration::from_millis(250));
        let restarted = client
            .request(
                "test/progress",
                slow(8, 100),
                limit().reset_timeout_on_progress(true),
            )
            .await
            .unwrap();
        assert_eq!(restarted["steps"], 8);
        let started = Instant::now();
        let error = client
            .request("test/progress", slow(8, 100), limit())
            .await
            .unwrap_err();
        assert_eq!(error.category(), Some("timeout"));
        assert_eq!(
            error.to_string(),
            "server \"stdio-mcp-peer\": MCP stdio request test/progress timed out after 0.25s"
        );
        // Well before the 800 ms the call would have taken.
        assert!(started.elapsed() < Duration::from_millis(700));
        client.close().await.unwrap();
    });
}

#[test]
fn the_total_cap_holds_whatever_progress_comes() {
    run(20, async {
        let client = Client::connect(peer(&[])).await.unwrap();
        let started = Instant::now();
        let options = CallOptions::new()
            .timeout(Duration::from_millis(250))
            .reset_timeout_on_progress(true)
            .max_total_time(Duration::from_millis(400));
        let error = client
            .request("test/progress", slow(12, 100), options)
            .await
            .unwrap_err();
        let took = started.elapsed();
        assert_eq!(
            error.to_string(),
            "server \"stdio-mcp-peer\": MCP stdio request test/progress timed out after 0.4s"
        );
        // The cap, not the 1.2 s the call would have taken.
        assert!(
            took >= Duration::from_millis(390) && took < Duration::from_millis(1100),
            "{took:?}"
        );
        // Cancelled on the wire, with the reason.
        let lines = received(&client.transport()).await;
        let cancel = cancels(&lines);
        assert_eq!(cancel.len(), 1, "{lines:?}");
        assert_eq!(cancel[0]["params"]["reason"], "timed out after 0.4s");
        client.close().await.unwrap();
    });
}

#[test]
fn progress_of_any_method_reaches_its_callback_in_order() {
    run(20, async {
        let client = Client::connect(peer(&[])).await.unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let options = CallOptions::new().on_progress(move |p| log.lock().unwrap().push(p.progress));
        client
            .request("test/progress", slow(4, 5), options)
            .await
            .unwrap();
        assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0, 4.0]);
        client.close().await.unwrap();
    });
}

#[test]
fn extra_meta_is_merged_into_the_params() {
    run(10, async {
        let client = Client::connect(peer(&[])).await.unwrap();
        let traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        let params = json!({ "a": 1, "_meta": { "mine": true } });
        let echoed = client
            .request(
                "test/echo",
                Some(params),
                CallOptions::new().meta(json!({ "traceparent": traceparent })),
            )
            .await
            .unwrap();
        assert_eq!(
            echoed,
            json!({ "a": 1, "_meta": { "mine": true, "traceparent": traceparent } })
        );
        // No params at all: an object is made to carry them.
        let echoed = client
            .request(
                "test/echo",
                None,
                CallOptions::new().meta(json!({ "k": "v" })),
            )
            .await
            .unwrap();
        assert_eq!(echoed, json!({ "_meta": { "k": "v" } }));
        // call_tool_with: the tool's params carry it too.
        let result = client
            .call_tool_with(
                "echo",
                json!({ "message": "hi" }),
                CallOptions::new().meta(json!({ "traceparent": traceparent })),
            )
            .await
            .unwrap();
        assert_eq!(result.text(), "Echo: hi");
        let lines = received(&client.transport()).await;
        let call = lines.iter().find(|l| l["method"] == "tools/call").unwrap();
        assert_eq!(call["params"]["_meta"]["traceparent"], traceparent);
        client.close().await.unwrap();
    });
}

#[test]
fn meta_that_cannot_be_carried_is_a_clear_error_and_sends_nothing() {
    run(10, async {
        let client = Client::connect(peer(&[])).await.unwrap();
        let not_an_object = client
            .request(
                "test/echo",
                Some(json!([1, 2])),
                CallOptions::new().meta(json!({ "k": 1 })),
            )
            .await
            .unwrap_err();
        assert_eq!(
            not_an_object.to_string(),
            "server \"stdio-mcp-peer\": MCP call not sent: the params of test/echo must be a JSON object, not [1,2]"
        );
        assert_eq!(not_an_object.kind(), stdio_mcp::ErrorKind::InvalidArguments);
        let bad_meta = client
            .request("test/echo", None, CallOptions::new().meta(json!("k")))
            .await
            .unwrap_err();
        assert!(
            bad_meta
                .to_string()
                .contains("CallOptions::meta takes a JSON object"),
            "{bad_meta}"
        );
        let lines = received(&client.transport()).await;
        assert!(
            !lines.iter().any(|l| l["method"] == "test/echo"),
            "{lines:?}"
        );
        client.close().await.unwrap();
    });
}

/// `timeout(None)` is no limit for this call, as `RequestOptions` says it:
/// not the client's, nor the transport's.
#[test]
fn a_call_with_no_limit_outlasts_the_clients_and_the_transports() {
    run(20, async {
        let client = Client::builder(peer(&[]).timeout(Duration::from_millis(100)))
            .request_timeout(Duration::from_millis(100))
            .connect()
            .await
            .unwrap();
        let sleep = || Some(json!({ "ms": 400 }));
        let error = client
            .request("test/sleep", sleep(), CallOptions::new())
            .await
            .unwrap_err();
        assert_eq!(error.category(), Some("timeout"));
        let answered = client
            .request("test/sleep", sleep(), CallOptions::new().timeout(None))
            .await;
        assert!(answered.is_ok(), "{answered:?}");
        client.close().await.unwrap();
    });
}
