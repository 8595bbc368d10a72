//! The MCP client against the repo's peer: handshake, negotiation, pagination,
//! progress, and the server's own requests.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{peer, received, run};
use serde_json::{json, Value};
use stdio_mcp::client::{CallToolResult, Client, Content, Era, Progress, Tool};
use stdio_mcp::Error;
use stdio_mcp::ServerRequest;

#[test]
fn connect_performs_the_handshake() {
    run(10, async {
        let client = Client::connect(peer(&[])).await.unwrap();
        assert_eq!(client.server_info().name, "stdio-mcp-demo");
        assert_eq!(client.protocol_version(), "2025-11-25");
        assert!(client.server_capabilities().tools.is_some());
        assert!(client.instructions().unwrap().contains("demo server"));
        // A legacy server (the peer answers server/discover "method not
        // found"): the probe first, then the handshake.
        assert_eq!(client.era(), Era::Legacy);
        let lines = received(&client.transport()).await;
        assert_eq!(lines[0]["method"], "server/discover");
        let meta = &lines[0]["params"]["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientInfo"]["name"],
            "stdio-mcp"
        );
        // No handlers: only the tasks extension (tests/it/tasks.rs).
        assert_eq!(
            meta["io.modelcontextprotocol/clientCapabilities"],
            json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
        );
        assert_eq!(lines[1]["method"], "initialize");
        assert_eq!(lines[1]["params"]["protocolVersion"], "2025-11-25");
        assert_eq!(lines[1]["params"]["clientInfo"]["name"], "stdio-mcp");
        assert_eq!(
            lines[1]["params"]["capabilities"],
            json!({"tasks": {}}),
            "no handlers: only tasks"
        );
        assert_eq!(
            lines[2],
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        );
        client.ping().await.unwrap();
        client.close().await.unwrap();
    });
}

#[test]
fn an_older_supported_revision_is_accepted() {
    run(10, async {
        for version in ["2024-11-05", "2025-03-26", "2025-06-18"] {
            let client = Client::connect(peer(&["--initialize", version]))
                .await
                .unwrap();
            assert_eq!(client.protocol_version(), version);
            client.close().await.unwrap();
        }
    });
}

#[test]
fn an_unsupported_revision_fails_naming_both() {
    run(10, async {
        let e = Client::connect(peer(&["--initialize", "1999-01-01"]))
            .await
            .unwrap_err();
        assert!(matches!(e.inner(), Error::Protocol(_)), "{e}");
        let text = e.to_string();
        assert!(
            text.contains("1999-01-01") && text.contains("2025-11-25"),
            "{text}"
        );
    });
}

#[test]
fn a_server_dying_in_the_handshake_gives_the_exit_error() {
    run(10, async {
        let e = Client::connect(peer(&["--initialize", "exit"]))
            .await
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "server \"stdio-mcp-peer\": MCP server process exited (code 9): peer: refusing to start"
        );
    });
}

#[test]
fn a_silent_server_times_out_in_the_handshake() {
    run(10, async {
        let e = Client::builder(peer(&["--initialize", "never"]))
            .handshake_timeout(Duration::from_millis(300))
            .connect()
            .await
            .unwrap_err();
        assert_eq!(e.category(), Some("timeout"), "{e}");
        // The time since the start depends on the machine; the rest is exact.
        let text = e.to_string();
        let (head, tail) = text.split_once(" (").unwrap();
        assert_eq!(
            head,
            "server \"stdio-mcp-peer\": MCP server did not answer initialize within 0.3s"
        );
        assert!(
            tail.ends_with("s since it started); it wrote nothing on stdout"),
            "{text}"
        );
    });
}

#[test]
fn list_tools_follows_every_page() {
    run(10, async {
        let client = Client::connect(peer(&["--paged"])).await.unwrap();
        let tools = common::tool_names(&client).await;
        assert_eq!(tools, ["echo", "add", "countdown"]);
        let lines = received(&client.transport()).await;
        let cursors: Vec<&Value> = lines
            .iter()
            .filter(|l| l["method"] == "tools/list")
            .map(|l| &l["params"]["cursor"])
            .collect();
        assert_eq!(cursors, [&Value::Null, &json!("1"), &json!("2")]);
        client.close().await.unwrap();
    });
}

#[test]
fn call_tool_returns_typed_content_and_errors() {
    run(10, async {
        let client = Client::connect(peer(&[])).await.unwrap();
        let r = client
            .call_tool("echo", json!({"message": "hi"}))
            .await
            .unwrap();
        assert_eq!(r.text(), "Echo: hi");
        assert!(!r.is_error);
        let r = client
            .call_tool("add", json!({"a": 2, "b": 40}))
            .await
            .unwrap();
        assert_eq!(r.text(), "42");
        let e = client
            .call_tool("no-such-tool", json!({}))
            .await
            .unwrap_err();
        assert_eq!(e.rpc_error().unwrap().code, -32602);
        client.close().await.unwrap();
    });
}

#[test]
fn progress_reaches_its_own_call_in_order_before_the_result() {
    run(10, async {
        let seen_by_user: Arc<Mutex<usize>> = Arc::default();
        let counter = Arc::clone(&seen_by_user);
        let client = Client::connect(peer(&[]).on_notification(move |n| {
            if n.method == "notifications/progress" {
                *counter.lock().unwrap() += 1;
            }
        }))
        .await
        .unwrap();
        let a: Arc<Mutex<Vec<Progress>>> = Arc::default();
        let b: Arc<Mutex<Vec<Progress>>> = Arc::default();
        let (log_a, log_b) = (Arc::clone(&a), Arc::clone(&b));
        let call_a = client.call_tool_with_progress("countdown", json!({"from": 5}), move |p| {
            log_a.lock().unwrap().push(p.clone())
        });
        let call_b = client.call_tool_with_progress("countdown", json!({"from": 3}), move |p| {
            log_b.lock().unwrap().push(p.clone())
        });
        let (ra, rb) = futures::join!(call_a, call_b);
        assert_eq!(ra.unwrap().text(), "Liftoff");
        assert_eq!(rb.unwrap().text(), "Liftoff");
        let steps = |log: &Arc<Mutex<Vec<Progress>>>| -> Vec<(f64, Option<f64>)> {
            log.lock()
                .unwrap()
                .iter()
                .map(|p| (p.progress, p.total))
                .collect()
        };
        assert_eq!(
            steps(&a),
            [
                (1.0, Some(5.0)),
                (2.0, Some(5.0)),
                (3.0, Some(5.0)),
                (4.0, Some(5.0)),
                (5.0, Some(5.0))
            ]
        );
        assert_eq!(
            steps(&b),
            [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]
        );
        assert_eq!(a.lock().unwrap()[0].message.as_deref(), Some("4 to go"));
        // The user's own handler still saw every notification.
        assert_eq!(*seen_by_user.lock().unwrap(), 8);
        client.close().await.unwrap();
    });
}

#[test]
fn the_server_ping_is_answered() {
    run(10, async {
        let client = Client::connect(peer(&[])).await.unwrap();
        let r = client
            .transport()
            .send_request("test/ask", Some(json!({"method": "ping"})))
            .await
            .unwrap();
        assert_eq!(r["answer"]["result"], json!({}));
        client.close().await.unwrap();
    });
}

#[test]
fn server_requests_without_a_handler_get_method_not_found() {
    run(10, async {
        let client = Client::connect(peer(&[])).await.unwrap();
        for method in [
            "roots/list",
            "sampling/createMessage",
            "elicitation/create",
            "x/unknown",
        ] {
            let r = client
                .transport()
                .send_request("test/ask", Some(json!({"method": method})))
                .await
                .unwrap();
            assert_eq!(r["answer"]["error"]["code"], -32601, "{method}");
        }
        client.close().await.unwrap();
    });
}

#[test]
fn handlers_answer_and_are_declared_as_capabilities() {
    run(10, async {
        let client = Client::builder(peer(&[]).on_request(|r| {
            (r.method == "x/custom").then(|| Ok(json!({"custom": true})))
        }))
        .client_info("tester", "9.9")
        .on_roots_list(|_: ServerRequest| async { Ok(json!({"roots": [{"uri": "file:///tmp", "name": "tmp"}]})) })
        .on_sampling(|r: ServerRequest| async move { Ok(json!({"role": "assistant", "content": {"type": "text", "text": "sampled"}, "model": "m", "echo": r.params})) })
        .on_elicitation(|_: ServerRequest| async { Ok(json!({"action": "decline"})) })
        .connect()
        .await
        .unwrap();
        let ask = |method: &'static str| {
            client.transport().send_request(
                "test/ask",
                Some(json!({"method": method, "params": {"p": 1}})),
            )
        };
        assert_eq!(
            ask("roots/list").await.unwrap()["answer"]["result"]["roots"][0]["name"],
            "tmp"
        );
        assert_eq!(
            ask("sampling/createMessage").await.unwrap()["answer"]["result"]["echo"],
            json!({"p": 1})
        );
        assert_eq!(
            ask("elicitation/create").await.unwrap()["answer"]["result"]["action"],
            "decline"
        );
        assert_eq!(
            ask("x/custom").await.unwrap()["answer"]["result"],
            json!({"custom": true})
        );
        let lines = received(&client.transport()).await;
        let init = lines.iter().find(|l| l["method"] == "initialize").unwrap();
        assert_eq!(
            init["params"]["capabilities"],
            json!({"roots": {"listChanged": true}, "sampling": {}, "elicitation": {"form": {}}, "tasks": {}})
        );
        assert_eq!(
            init["params"]["clientInfo"],
            json!({"name": "tester", "version": "9.9"})
        );
        client.close().await.unwrap();
    });
}

#[test]
fn connect_with_runs_the_driver_where_asked() {
    smol::block_on(common::within(10, async {
        let client = Client::builder(peer(&[]))
            .connect_with(|driver| smol::spawn(driver).detach())
            .await
            .unwrap();
        assert_eq!(
            client
                .call_tool("echo", json!({"message": "smol"}))
                .await
                .unwrap()
                .text(),
            "Echo: smol"
        );
        client.close().await.unwrap();
    }));
}

#[test]
fn fields_the_types_do_not_model_are_kept() {
    let tool: Tool = serde_json::from_value(json!({
        "name": "t", "inputSchema": {"type": "object"}, "icons": [{"src": "x.png"}], "_meta": {"k": 1}
    }))
    .unwrap();
    assert_eq!(tool.extra["icons"], json!([{"src": "x.png"}]));
    assert_eq!(
        serde_json::to_value(&tool).unwrap()["_meta"],
        json!({"k": 1})
    );

    let wire = json!({
        "content": [
            {"type": "text", "text": "a", "annotations": {"priority": 1}},
            {"type": "image", "data": "AAA=", "mimeType": "image/png"},
            {"type": "audio", "data": "BBB=", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "demo://1", "name": "one", "mimeType": "text/plain"},
            {"type": "resource", "resource": {"uri": "demo://2", "text": "two", "custom": 2}},
            {"type": "hologram", "beam": 7}
        ],
        "structuredContent": {"n": 1},
        "isError": true,
        "_meta": {"trace": "x"}
    });
    let result: CallToolResult = serde_json::from_value(wire.clone()).unwrap();
    assert!(result.is_error, "a tool failure is a result, not an Err");
    assert!(
        matches!(&result.content[0], Content::Text { extra, .. } if extra["annotations"] == json!({"priority": 1}))
    );
    assert!(matches!(&result.content[3], Content::ResourceLink { uri, .. } if uri == "demo://1"));
    assert!(
        matches!(&result.content[4], Content::Resource { resource, .. } if resource.extra["custom"] == 2)
    );
    assert!(matches!(&result.content[5], Content::Other(v) if v["beam"] == 7));
    // Nothing lost: it serializes back to what was on the wire.
    assert_eq!(serde_json::to_value(&result).unwrap(), wire);
}

#[test]
fn a_waiting_handler_stalls_nothing() {
    run(20, async {
        // The elicitation handler waits for a person (here: a channel we hold).
        let (person, answer) = futures::channel::oneshot::channel::<Value>();
        let answer = Arc::new(Mutex::new(Some(answer)));
        let client = Client::builder(peer(&[]))
            .on_elicitation(move |_request: ServerRequest| {
                let answer = answer.lock().unwrap().take();
                async move {
                    match answer {
                        Some(answer) => Ok(answer.await.unwrap_or(json!({"action": "cancel"}))),
                        None => Ok(json!({"action": "decline"})),
                    }
                }
            })
            .connect()
            .await
            .unwrap();
        let asking = client.transport().send_request(
            "test/ask",
            Some(json!({"method": "elicitation/create", "params": {"message": "name?"}})),
        );
        // While it waits, the same server answers other requests...
        for i in 0..20 {
            let echoed = client
                .transport()
                .send_request("test/echo", Some(json!({ "i": i })))
                .await
                .unwrap();
            assert_eq!(echoed["i"], i);
        }
        // ...and so does another server on the same background thread.
        let other = Client::connect(peer(&[])).await.unwrap();
        other.ping().await.unwrap();
        other.close().await.unwrap();
        // The person answers; the server gets it.
        person
            .send(json!({"action": "accept", "content": {"name": "Ada"}}))
            .unwrap();
        let answered = asking.await.unwrap();
        assert_eq!(answered["answer"]["result"]["content"]["name"], "Ada");
        client.close().await.unwrap();
    });
}
