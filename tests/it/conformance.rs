//! The client scenarios of the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`), over stdio: the peer answers as each
//! scenario's server does (`testkit/src/peer/conformance.rs`), and each test checks
//! on the wire what that scenario checks. A test's name carries its scenario's id.

use crate::common;

use common::{peer, received, run};
use serde_json::{json, Value};
use stdio_mcp::client::{Client, ClientBuilder, ElicitResult, Era};
use stdio_mcp::ServerRequest;

fn scenario(name: &str) -> ClientBuilder {
    Client::builder(peer(&["--scenario", name]))
}

/// The requests (not notifications, not the tests' own) the client wrote.
fn requests(lines: &[Value]) -> Vec<&Value> {
    lines
        .iter()
        .filter(|l| l.get("id").is_some() && l["method"].is_string())
        .collect()
}

fn calls<'a>(lines: &'a [Value], tool: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|l| l["method"] == "tools/call" && l["params"]["name"] == tool)
        .collect()
}

#[test]
fn conformance_initialize() {
    run(10, async {
        let client = scenario("initialize").connect().await.unwrap();
        assert_eq!(client.era(), Era::Legacy);
        assert!(client.list_tools().await.unwrap().is_empty());
        let lines = received(&client.transport()).await;
        // mcp-client-initialization: a version it knows, and the client's name and version.
        let init = lines.iter().find(|l| l["method"] == "initialize").unwrap();
        let version = init["params"]["protocolVersion"].as_str().unwrap();
        assert!(
            ["2025-06-18", "2025-11-25", "2026-07-28"].contains(&version),
            "{version}"
        );
        let info = &init["params"]["clientInfo"];
        assert!(
            info["name"].as_str().is_some_and(|n| !n.is_empty()),
            "{info}"
        );
        assert!(
            info["version"].as_str().is_some_and(|v| !v.is_empty()),
            "{info}"
        );
        assert_eq!(client.protocol_version(), version);
        assert_eq!(client.server_info().name, "test-server");
        client.close().await.unwrap();
    });
}

#[test]
fn conformance_tools_call() {
    run(10, async {
        let client = scenario("tools_call").connect().await.unwrap();
        let tools = client.list_tools().await.unwrap();
        assert_eq!(tools[0].name, "add_numbers");
        let r = client
            .call_tool("add_numbers", json!({"a": 5, "b": 3}))
            .await
            .unwrap();
        assert_eq!(r.text(), "The sum of 5 and 3 is 8");
        // tool-add-numbers: a tools/call whose a and b are numbers.
        let lines = received(&client.transport()).await;
        let call = calls(&lines, "add_numbers")[0];
        assert!(call["params"]["arguments"]["a"].is_number(), "{call}");
        assert!(call["params"]["arguments"]["b"].is_number(), "{call}");
        client.close().await.unwrap();
    });
}

#[test]
fn conformance_elicitation_sep1034_client_defaults() {
    run(10, async {
        // The handler accepts and fills in nothing: every default must arrive.
        let client = scenario("elicitation-sep1034-client-defaults")
            .on_elicitation(|_: ServerRequest| async { Ok(ElicitResult::accept(json!({})).into()) })
            .connect()
            .await
            .unwrap();
        let r = client
            .call_tool("test_client_elicitation_defaults", json!({}))
            .await
            .unwrap();
        assert!(
            r.text().starts_with("Elicitation completed"),
            "{}",
            r.text()
        );
        let lines = received(&client.transport()).await;
        let answer = lines
            .iter()
            .find(|l| l["id"].as_str().is_some_and(|id| id.starts_with("elicit-")))
            .unwrap();
        assert_eq!(answer["result"]["action"], "accept");
        let content = &answer["result"]["content"];
        // The five checks: string, integer, number, enum, boolean defaults.
        assert_eq!(content["name"], "John Doe", "{content}");
        assert!(content["age"].is_u64() && content["age"] == 30, "{content}");
        assert!(
            content["score"].is_number() && content["score"] == 95.5,
            "{content}"
        );
        assert_eq!(content["status"], "active", "{content}");
        assert_eq!(content["verified"], true, "{content}");
        client.close().await.unwrap();
    });
}

#[test]
fn conformance_json_schema_2020_12_preservation() {
    run(10, async {
        let client = scenario("json-schema-2020-12-preservation")
            .connect()
            .await
            .unwrap();
        let tools = client.list_tools().await.unwrap();
        let focal = tools
            .iter()
            .find(|t| t.name == "json_schema_2020_12_tool")
            .unwrap();
        // Round-trip the schema as the client holds it.
        let schema = serde_json::to_value(&focal.input_schema).unwrap();
        client
            .call_tool("json_schema_echo", json!({ "schema": schema }))
            .await
            .unwrap();
        let lines = received(&client.transport()).await;
        let echoed = &calls(&lines, "json_schema_echo")[0]["params"]["arguments"]["schema"];
        // $schema, $defs (with its $anchor), additionalProperties, allOf/anyOf,
        // if/then/else: all as the server sent them (asked on the raw transport).
        let raw = client
            .transport()
            .send_request("tools/list", None)
            .await
            .unwrap();
        let sent = &raw["tools"][0]["inputSchema"];
        assert_eq!(sent["$defs"]["address"]["$anchor"], "addressDef");
        assert!(sent.get("if").is_some() && sent.get("allOf").is_some());
        assert_eq!(echoed, sent);
        client.close().await.unwrap();
    });
}

#[test]
fn conformance_json_schema_ref_no_deref() {
    run(10, async {
        // The canary: a listener on loopback that must never be connected to.
        let canary = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        canary.set_nonblocking(true).unwrap();
        let url = format!(
            "http://{}/canary/profile-schema.json",
            canary.local_addr().unwrap()
        );
        let builder = Client::builder(peer(&[
            "--scenario",
            "json-schema-ref-no-deref",
            "--canary",
            &url,
        ]));
        #[cfg(feature = "validate")]
        let builder = builder.validate_arguments(stdio_mcp::client::Validation::Enforce);
        let client = builder.connect().await.unwrap();
        assert_eq!(client.era(), Era::Modern);
        let tools = client.list_tools().await.unwrap();
        assert_eq!(tools[0].name, "lookup_user");
        // With the `validate` feature this compiles the schema; either way no fetch.
        let _ = client
            .call_tool("lookup_user", json!({"id": "ada-1"}))
            .await;
        let lines = received(&client.transport()).await;
        assert!(lines.iter().any(|l| l["method"] == "tools/list"));
        match canary.accept() {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            other => panic!("the client fetched the network $ref: {other:?}"),
        }
        client.close().await.unwrap();
    });
}

#[test]
fn conformance_request_metadata() {
    run(10, async {
        let client = scenario("request-metadata")
            .on_roots_list(|_: ServerRequest| async { Ok(json!({"roots": []})) })
            .on_elicitation(|_: ServerRequest| async { Ok(ElicitResult::decline().into()) })
            .connect()
            .await
            .unwrap();
        assert_eq!(client.era(), Era::Modern);
        client.list_tools().await.unwrap();
        client.call_tool("anything", json!({})).await.unwrap();
        let lines = received(&client.transport()).await;
        let sent = requests(&lines);
        // sep-2575-client-retry-supported-version: refused first, asked again with it.
        assert_eq!(sent[0]["method"], "server/discover");
        assert_eq!(sent[1]["method"], "server/discover");
        // Every request: the protocol version, capabilities and client info,
        // each declared capability an object.
        for request in &sent {
            let meta = &request["params"]["_meta"];
            assert_eq!(
                meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28",
                "{request}"
            );
            let capabilities = &meta["io.modelcontextprotocol/clientCapabilities"];
            assert!(capabilities.is_object(), "{request}");
            for declared in ["roots", "sampling", "elicitation"] {
                if let Some(value) = capabilities.get(declared) {
                    assert!(value.is_object(), "{declared} in {request}");
                }
            }
            assert!(
                capabilities.get("roots").is_some() && capabilities.get("elicitation").is_some()
            );
            let info = &meta["io.modelcontextprotocol/clientInfo"];
            assert!(
                info["name"].is_string() && info["version"].is_string(),
                "{request}"
            );
        }
        assert!(sent.iter().any(|r| r["method"] == "tools/list"));
        assert!(sent.iter().any(|r| r["method"] == "tools/call"));
        client.close().await.unwrap();
    });
}

#[test]
fn conformance_sep_2322_client_request_state() {
    run(10, async {
        let client = scenario("sep-2322-client-request-state")
            .on_elicitation(|_: ServerRequest| async {
                Ok(ElicitResult::accept(json!({"confirmed": true})).into())
            })
            .connect()
            .await
            .unwrap();
        let r = client
            .call_tool("test_mrtr_echo_state", json!({}))
            .await
            .unwrap();
        assert_eq!(r.text(), "echo-state-ok");
        let r = client
            .call_tool("test_mrtr_no_state", json!({}))
            .await
            .unwrap();
        assert_eq!(r.text(), "no-state-ok");
        let r = client
            .call_tool("test_mrtr_unrelated", json!({}))
            .await
            .unwrap();
        assert_eq!(r.text(), "unrelated-ok");
        let r = client
            .call_tool("test_mrtr_no_result_type", json!({}))
            .await
            .unwrap();
        assert_eq!(r.text(), "no-result-type-test-ok");
        let lines = received(&client.transport()).await;
        // sep-2322-client-request-state-echoed and -jsonrpc-id-different.
        let echo = calls(&lines, "test_mrtr_echo_state");
        assert_eq!(echo.len(), 2, "{echo:?}");
        let state = json!({ "nonce": "a1b2-c3", "originalId": echo[0]["id"] }).to_string();
        assert_eq!(echo[1]["params"]["requestState"], json!(state));
        assert_ne!(echo[0]["id"], echo[1]["id"]);
        assert_eq!(
            echo[1]["params"]["inputResponses"]["confirm"]["content"]["confirmed"],
            true
        );
        // sep-2322-client-no-state-omitted.
        let no_state = calls(&lines, "test_mrtr_no_state");
        assert_eq!(no_state.len(), 2, "{no_state:?}");
        assert!(
            no_state[1]["params"].get("requestState").is_none(),
            "{}",
            no_state[1]
        );
        // sep-2322-client-parallel-isolation.
        let unrelated = calls(&lines, "test_mrtr_unrelated");
        assert_eq!(unrelated.len(), 1);
        assert!(unrelated[0]["params"].get("inputResponses").is_none());
        assert!(unrelated[0]["params"].get("requestState").is_none());
        // sep-2322-default-result-type-complete: no retry.
        assert_eq!(calls(&lines, "test_mrtr_no_result_type").len(), 1);
        client.close().await.unwrap();
    });
}
