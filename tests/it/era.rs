//! Both eras of MCP: the `server/discover` probe with each of its outcomes, the
//! 2026-07-28 protocol fields on every request, the era's mappings of methods
//! it removed, `resultType`, and the modern path under every executor.

use crate::common;

use std::time::{Duration, Instant};

use common::{peer, received, run};
use serde_json::{json, Value};
use stdio_mcp::client::{CallOptions, Client, Era, LoggingLevel, Tool};
use stdio_mcp::ServerRequest;
use stdio_mcp::{Error, TransportBuilder};

const VERSION: &str = "io.modelcontextprotocol/protocolVersion";

fn discover(mode: &str) -> TransportBuilder {
    peer(&["--discover", mode])
}

async fn connect(builder: TransportBuilder, era: Era) -> Result<Client, Error> {
    Client::builder(builder)
        .era(era)
        .probe_timeout(Duration::from_millis(300))
        .connect()
        .await
}

fn methods(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .filter_map(|l| l["method"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn a_modern_only_server_is_spoken_to_statelessly() {
    run(10, async {
        let client = connect(discover("modern"), Era::Auto).await.unwrap();
        assert_eq!(client.era(), Era::Modern);
        assert_eq!(client.protocol_version(), "2026-07-28");
        assert_eq!(client.server_info().name, "stdio-mcp-demo");
        assert!(client.server_capabilities().tools.is_some());
        assert!(client.instructions().unwrap().contains("demo server"));
        let tools = client.list_tools().await.unwrap();
        assert!(tools.iter().any(|t| t.name == "echo"));
        let r = client
            .call_tool("echo", json!({ "message": "hi" }))
            .await
            .unwrap();
        assert_eq!(r.text(), "Echo: hi");
        // The caller's own _meta is kept beside the protocol fields.
        let echoed = client
            .request(
                "test/echo",
                Some(json!({ "_meta": { "mine": 1 } })),
                CallOptions::new(),
            )
            .await
            .unwrap();
        assert_eq!(echoed["_meta"]["mine"], 1);
        assert_eq!(echoed["_meta"][VERSION], "2026-07-28");
        let lines = received(&client.transport()).await;
        assert!(
            !methods(&lines).contains(&"initialize".to_owned()),
            "{lines:?}"
        );
        for line in lines.iter().filter(|l| l.get("id").is_some()) {
            let meta = &line["params"]["_meta"];
            assert_eq!(meta[VERSION], "2026-07-28", "{line}");
            assert_eq!(
                meta["io.modelcontextprotocol/clientInfo"]["name"], "stdio-mcp",
                "{line}"
            );
            assert!(
                meta["io.modelcontextprotocol/clientCapabilities"].is_object(),
                "{line}"
            );
        }
        client.close().await.unwrap();
    });
}

#[test]
fn methods_the_modern_era_removed_map_to_its_own_or_say_why() {
    run(10, async {
        let client = connect(discover("modern"), Era::Auto).await.unwrap();
        client.ping().await.unwrap();
        client
            .set_logging_level(LoggingLevel::Warning)
            .await
            .unwrap();
        let echoed = client
            .request("test/echo", None, CallOptions::new())
            .await
            .unwrap();
        assert_eq!(
            echoed["_meta"]["io.modelcontextprotocol/logLevel"],
            "warning"
        );
        let error = client.subscribe("file:///a").await.unwrap_err();
        assert!(
            error.to_string().contains("subscriptions/listen"),
            "{error}"
        );
        let lines = received(&client.transport()).await;
        let sent = methods(&lines);
        assert!(
            !sent
                .iter()
                .any(|m| m == "ping" || m == "logging/setLevel" || m == "resources/subscribe"),
            "{sent:?}"
        );
        assert_eq!(
            sent.iter().filter(|m| *m == "server/discover").count(),
            2,
            "probe and ping: {sent:?}"
        );
        client.close().await.unwrap();
    });
}

#[test]
fn a_dual_server_speaks_the_newest_era() {
    run(10, async {
        let client = connect(discover("dual"), Era::Auto).await.unwrap();
        assert_eq!(
            (client.era(), client.protocol_version()),
            (Era::Modern, "2026-07-28")
        );
        client
            .call_tool("echo", json!({ "message": "x" }))
            .await
            .unwrap();
        client.close().await.unwrap();
        // Asked for the handshake, the same server does it.
        let client = connect(discover("dual"), Era::Legacy).await.unwrap();
        assert_eq!(
            (client.era(), client.protocol_version()),
            (Era::Legacy, "2025-11-25")
        );
        let lines = received(&client.transport()).await;
        assert_eq!(
            methods(&lines)[0],
            "initialize",
            "no probe with Era::Legacy"
        );
        client.close().await.unwrap();
    });
}

#[test]
fn a_legacy_server_that_stays_silent_is_handshaken_after_the_probe_timeout() {
    run(10, async {
        let started = Instant::now();
        let client = connect(discover("silent"), Era::Auto).await.unwrap();
        assert!(started.elapsed() >= Duration::from_millis(300));
        assert_eq!(client.era(), Era::Legacy);
        let lines = received(&client.transport()).await;
        // The silent probe is cancelled on the wire before the handshake.
        assert_eq!(
            &methods(&lines)[..3],
            ["server/discover", "notifications/cancelled", "initialize"]
        );
        client.close().await.unwrap();
    });
}

#[test]
fn a_legacy_server_that_exits_on_the_probe_is_started_again_once() {
    run(10, async {
        let client = connect(discover("exit"), Era::Auto).await.unwrap();
        assert_eq!(client.era(), Era::Legacy);
        client
            .call_tool("echo", json!({ "message": "again" }))
            .await
            .unwrap();
        // A new process: it has seen the handshake and nothing of the probe.
        let lines = received(&client.transport()).await;
        assert_eq!(methods(&lines)[0], "initialize", "{lines:?}");
        client.close().await.unwrap();
        // Era::Modern does not start it again: it says what the server did.
        let error = connect(discover("exit"), Era::Modern).await.unwrap_err();
        assert!(
            error.to_string().contains("does not speak MCP 2026-07-28"),
            "{error}"
        );
        assert!(error.to_string().contains("exited"), "{error}");
    });
}

#[test]
fn unsupported_version_answers_lead_to_a_common_version_or_a_clear_error() {
    run(15, async {
        // (A refusal of the very version it lists: tests/it/connect.rs.)
        // Only a legacy version in common: the handshake, offering that one.
        let client = connect(discover("offer:2025-06-18"), Era::Auto)
            .await
            .unwrap();
        assert_eq!(client.era(), Era::Legacy);
        let lines = received(&client.transport()).await;
        let init = lines.iter().find(|l| l["method"] == "initialize").unwrap();
        assert_eq!(init["params"]["protocolVersion"], "2025-06-18");
        client.close().await.unwrap();
        // Nothing in common: an error naming both sides' versions.
        let error = connect(discover("offer:2099-01-01"), Era::Auto)
            .await
            .unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("2099-01-01")
                && text.contains("2026-07-28")
                && text.contains("2025-11-25"),
            "{text}"
        );
    });
}

#[test]
fn era_modern_refuses_a_legacy_server_naming_its_answer() {
    run(10, async {
        let error = connect(peer(&[]), Era::Modern).await.unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("does not speak MCP 2026-07-28 (Era::Modern)"),
            "{text}"
        );
        assert!(text.contains("-32601"), "{text}");
    });
}

#[test]
fn era_legacy_against_a_modern_only_server_fails_with_its_answer() {
    run(10, async {
        let error = connect(discover("modern"), Era::Legacy).await.unwrap_err();
        assert_eq!(error.rpc_error().map(|e| e.code), Some(-32601), "{error}");
    });
}

#[test]
fn results_that_are_not_complete_are_errors_that_say_so() {
    run(10, async {
        let client = connect(discover("result-type:bogus"), Era::Auto)
            .await
            .unwrap();
        let error = client
            .call_tool("echo", json!({ "message": "x" }))
            .await
            .unwrap_err();
        assert!(
            error.to_string().contains("unknown resultType \"bogus\""),
            "{error}"
        );
        client.close().await.unwrap();
        let client = connect(discover("result-type:input_required"), Era::Auto)
            .await
            .unwrap();
        let error = client
            .call_tool("echo", json!({ "message": "x" }))
            .await
            .unwrap_err();
        // Asked for input again and again (nothing to answer, so retried at
        // once, as the spec allows): the rounds are bounded.
        assert!(error.to_string().contains("after 8 rounds"), "{error}");
        client.close().await.unwrap();
    });
}

/// A modern server asking for input, with the client's async handlers.
async fn with_handlers() -> Client {
    Client::builder(discover("modern"))
        .on_elicitation(|r: ServerRequest| async move {
            Ok(json!({ "action": "accept", "content": { "asked": r.params.unwrap()["message"] } }))
        })
        .on_sampling(|_: ServerRequest| async {
            Ok(json!({ "role": "assistant", "content": { "type": "text", "text": "Paris" }, "model": "m" }))
        })
        .on_roots_list(|_: ServerRequest| async { Ok(json!({ "roots": [{ "uri": "file:///srv" }] })) })
        .connect()
        .await
        .unwrap()
}

#[test]
fn input_required_is_answered_by_the_handlers_and_retried_with_the_state() {
    run(10, async {
        let client = with_handlers().await;
        let kinds = json!(["elicitation/create", "sampling/createMessage", "roots/list"]);
        let done = client
            .request(
                "test/mrtr",
                Some(json!({ "kinds": kinds, "rounds": 2 })),
                CallOptions::new(),
            )
            .await
            .unwrap();
        assert_eq!(done["rounds"], 2);
        assert_eq!(
            done["inputResponses"]["ask-0"]["content"]["asked"],
            "round 1"
        );
        assert_eq!(done["inputResponses"]["ask-1"]["content"]["text"], "Paris");
        assert_eq!(
            done["inputResponses"]["ask-2"]["roots"][0]["uri"],
            "file:///srv"
        );
        // On the wire: three requests with new ids, the state echoed untouched,
        // the original params kept.
        let lines = received(&client.transport()).await;
        let tries: Vec<&Value> = lines
            .iter()
            .filter(|l| l["method"] == "test/mrtr")
            .collect();
        assert_eq!(tries.len(), 3, "{tries:?}");
        assert!(tries[0]["params"].get("requestState").is_none());
        assert_eq!(tries[1]["params"]["requestState"], "opaque-round-1");
        assert_eq!(tries[2]["params"]["requestState"], "opaque-round-2");
        assert_ne!(tries[0]["id"], tries[1]["id"]);
        for retry in &tries[1..] {
            assert_eq!(retry["params"]["kinds"], kinds);
            assert_eq!(retry["params"]["_meta"][VERSION], "2026-07-28");
        }
        // call_tool goes the same way.
        client.close().await.unwrap();
    });
}

#[test]
fn input_required_is_bounded_and_missing_handlers_are_named() {
    run(10, async {
        let client = with_handlers().await;
        let error = client
            .request(
                "test/mrtr",
                Some(json!({ "rounds": 20 })),
                CallOptions::new(),
            )
            .await
            .unwrap_err();
        assert!(error.to_string().contains("after 8 rounds"), "{error}");
        client.close().await.unwrap();
        // No elicitation handler: the error names the method asked for.
        let bare = connect(discover("modern"), Era::Auto).await.unwrap();
        let error = bare
            .request(
                "test/mrtr",
                Some(json!({ "kinds": ["elicitation/create"] })),
                CallOptions::new(),
            )
            .await
            .unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("elicitation/create") && text.contains("on_elicitation"),
            "{text}"
        );
        // A method the protocol does not define: named too.
        let error = bare
            .request(
                "test/mrtr",
                Some(json!({ "kinds": ["tasks/invent"] })),
                CallOptions::new(),
            )
            .await
            .unwrap_err();
        assert!(
            error.to_string().contains("unknown method tasks/invent"),
            "{error}"
        );
        bare.close().await.unwrap();
    });
}

#[test]
fn a_request_state_the_server_rejects_surfaces_its_error() {
    run(10, async {
        let client = with_handlers().await;
        // The server hands out a state, the client answers and sends it back
        // untouched, and the server refuses it: its error is the call's.
        let error = client
            .request(
                "test/mrtr",
                Some(json!({ "reject_state": true })),
                CallOptions::new(),
            )
            .await
            .unwrap_err();
        assert_eq!(error.rpc_error().map(|e| e.code), Some(-32602), "{error}");
        assert!(
            error.to_string().contains("requestState rejected"),
            "{error}"
        );
        let lines = received(&client.transport()).await;
        let tries: Vec<&Value> = lines
            .iter()
            .filter(|l| l["method"] == "test/mrtr")
            .collect();
        assert_eq!(tries.len(), 2, "the first try and one retry: {tries:?}");
        assert_eq!(tries[1]["params"]["requestState"], "opaque-round-1");
        assert!(tries[1]["params"]["inputResponses"]["ask-0"].is_object());
        client.close().await.unwrap();
    });
}

/// The modern path under each executor the crate promises.
async fn modern_round() {
    let client = connect(discover("modern"), Era::Auto).await.unwrap();
    assert_eq!(client.era(), Era::Modern);
    let r = client
        .call_tool("add", json!({ "a": 2, "b": 3 }))
        .await
        .unwrap();
    assert_eq!(r.text(), "5");
    client.close().await.unwrap();
}

#[test]
fn modern_under_futures_block_on() {
    run(10, modern_round());
}

#[test]
fn modern_under_smol() {
    smol::block_on(common::within(10, modern_round()));
}

#[async_std::test]
async fn modern_under_async_std() {
    common::within(10, modern_round()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_under_tokio() {
    common::within(10, modern_round()).await;
}

#[test]
fn each_explicit_era_against_each_kind_of_server() {
    run(20, async {
        for (server, era, speaks) in [
            (discover("modern"), Era::Modern, Some(Era::Modern)),
            (discover("dual"), Era::Modern, Some(Era::Modern)),
            (discover("dual"), Era::Legacy, Some(Era::Legacy)),
            (peer(&[]), Era::Legacy, Some(Era::Legacy)),
            (discover("silent"), Era::Modern, None),
            (discover("silent"), Era::Legacy, Some(Era::Legacy)),
            (discover("exit"), Era::Legacy, Some(Era::Legacy)),
        ] {
            let outcome = connect(server, era).await;
            match (speaks, outcome) {
                (Some(expected), Ok(client)) => {
                    assert_eq!(client.era(), expected, "{era:?}");
                    client.ping().await.unwrap();
                    client.close().await.unwrap();
                }
                (None, Err(error)) => assert!(!error.to_string().is_empty()),
                (expected, outcome) => panic!("{era:?}: expected {expected:?}, got {outcome:?}"),
            }
        }
    });
}

#[test]
fn list_pages_caching_hints_are_kept_the_shortest_and_most_private() {
    run(20, async {
        let client = Client::connect(peer(&["--discover", "modern", "--paged"]))
            .await
            .unwrap();
        assert_eq!(client.era(), Era::Modern);
        let asked = Instant::now();
        let tools = client.listing::<Tool>().await.unwrap();
        let names: Vec<&str> = tools.items.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["echo", "add", "countdown"]);
        // Pages said 60 s, 1 s and 30 s: the list is fresh for about 1 s.
        let until = tools.fresh_until.expect("every page had a ttlMs");
        assert!(until > asked + Duration::from_millis(900), "{until:?}");
        assert!(until <= Instant::now() + Duration::from_millis(1000));
        assert!(tools.is_fresh());
        assert_eq!(tools.cache_scope.as_deref(), Some("private"));
        client.close().await.unwrap();

        // A legacy server gives no hints: nothing is promised fresh.
        let client = Client::connect(peer(&["--paged"])).await.unwrap();
        let tools = client.listing::<Tool>().await.unwrap();
        assert_eq!(tools.items.len(), 3);
        assert_eq!(tools.fresh_until, None);
        assert!(!tools.is_fresh());
        assert_eq!(tools.cache_scope, None);
        client.close().await.unwrap();
    });
}
