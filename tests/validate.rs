//! Feature `validate`: tool arguments and results checked against the tools'
//! JSON Schemas, in each mode, with schemas that cannot be used.
#![cfg(feature = "validate")]

mod common;

use std::sync::{Arc, Mutex};

use common::{peer, received, run};
use serde_json::{json, Value};
use stdio_mcp::client::{Checked, Client, ClientBuilder, Invalid, Validation};
use stdio_mcp::ErrorKind;

/// A client of the peer with the schema tools, and what it reported.
fn with_schemas(modern: bool) -> (ClientBuilder, Arc<Mutex<Vec<Invalid>>>) {
    let flags: &[&str] = if modern {
        &["--schemas", "--discover", "modern"]
    } else {
        &["--schemas"]
    };
    let reports = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&reports);
    let builder =
        Client::builder(peer(flags)).on_invalid(move |i| log.lock().unwrap().push(i.clone()));
    (builder, reports)
}

async fn sent(client: &Client, method: &str) -> usize {
    received(&client.transport())
        .await
        .iter()
        .filter(|l| l["method"] == method)
        .count()
}

#[test]
fn enforced_arguments_that_do_not_match_are_never_sent_and_say_what_to_fix() {
    run(20, async {
        for modern in [false, true] {
            let (builder, reports) = with_schemas(modern);
            let client = builder
                .validate_arguments(Validation::Enforce)
                .connect()
                .await
                .unwrap();
            let e = client
                .call_tool("ten", json!({"p0": 1, "p3": "x", "extra": true}))
                .await
                .unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArguments);
            let text = e.to_string();
            assert!(
                text.starts_with(
                    "server \"stdio-mcp-peer\": MCP call not sent: the arguments of tool ten \
                     do not match its inputSchema:\n- "
                ),
                "{text}"
            );
            for line in [
                "\n- /p0: 1 is not of type \"string\"",
                "\n- /: \"p1\" is a required property",
                "\n- /p3: \"x\" is not of type \"boolean\"",
            ] {
                assert!(text.contains(line), "{line:?} in {text}");
            }
            assert!(
                text.contains("extra"),
                "the unexpected property is named: {text}"
            );
            assert_eq!(sent(&client, "tools/call").await, 0, "nothing was written");
            // Matching arguments go through; the list was read once for both.
            let ok = client
                .call_tool("ten", json!({"p0": "a", "p1": 2}))
                .await
                .unwrap();
            assert_eq!(ok.text(), "ok");
            assert_eq!(sent(&client, "tools/list").await, 1);
            assert_eq!(reports.lock().unwrap().len(), 1);
            assert_eq!(reports.lock().unwrap()[0].checked, Checked::Arguments);
            client.close().await.unwrap();
        }
    });
}

#[test]
fn warned_arguments_are_reported_and_sent_and_off_checks_nothing() {
    run(20, async {
        let (builder, reports) = with_schemas(false);
        let client = builder
            .validate_arguments(Validation::Warn)
            .connect()
            .await
            .unwrap();
        let r = client.call_tool("ten", json!({"p0": 1})).await.unwrap();
        assert_eq!(r.text(), "ok", "the server had the call");
        let reports = reports.lock().unwrap().clone();
        assert_eq!(reports.len(), 1);
        assert_eq!(reports[0].tool, "ten");
        assert!(!reports[0].unusable_schema);
        assert_eq!(reports[0].problems.len(), 2, "{:?}", reports[0].problems);
        client.close().await.unwrap();

        let (builder, reports) = with_schemas(false);
        let client = builder.connect().await.unwrap();
        client.call_tool("ten", json!({"p0": 1})).await.unwrap();
        assert!(reports.lock().unwrap().is_empty());
        assert_eq!(sent(&client, "tools/list").await, 0, "Off lists nothing");
        client.close().await.unwrap();
    });
}

#[test]
fn results_are_checked_against_the_output_schema() {
    run(20, async {
        let (builder, reports) = with_schemas(true);
        let client = builder
            .validate_results(Validation::Enforce)
            .connect()
            .await
            .unwrap();
        let good = client
            .call_tool("weather", json!({"give": {"celsius": 21.5}}))
            .await
            .unwrap();
        assert_eq!(good.structured_content, Some(json!({"celsius": 21.5})));
        let e = client
            .call_tool("weather", json!({"give": {"celsius": "warm"}}))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Protocol);
        assert!(
            e.to_string().contains(
                "the structured result of tool weather do not match its outputSchema:\n\
                 - /celsius: \"warm\" is not of type \"number\""
            ),
            "{e}"
        );
        assert_eq!(reports.lock().unwrap().len(), 1);
        // Tools without an output schema are not checked.
        client
            .call_tool("add", json!({"a": 1, "b": 2}))
            .await
            .unwrap();
        client.close().await.unwrap();

        let (builder, reports) = with_schemas(true);
        let client = builder
            .validate_results(Validation::Warn)
            .connect()
            .await
            .unwrap();
        let warned = client
            .call_tool("weather", json!({"give": {"celsius": "warm"}}))
            .await
            .unwrap();
        assert_eq!(warned.structured_content, Some(json!({"celsius": "warm"})));
        assert_eq!(reports.lock().unwrap()[0].checked, Checked::Result);
        client.close().await.unwrap();
    });
}

#[test]
fn schemas_that_cannot_be_used_are_reported_once_and_not_enforced() {
    run(20, async {
        let (builder, reports) = with_schemas(false);
        let client = builder
            .validate_arguments(Validation::Enforce)
            .connect()
            .await
            .unwrap();
        // A $ref to the network is never fetched (no such feature is built):
        // the schema does not compile, at once, and the calls go through.
        for tool in ["netref", "broken", "netref", "broken"] {
            let r = client.call_tool(tool, json!({"any": 1})).await.unwrap();
            assert_eq!(r.text(), "ok", "{tool}");
        }
        let seen = reports.lock().unwrap().clone();
        let unusable: Vec<&str> = seen.iter().map(|r| r.tool.as_str()).collect();
        assert_eq!(unusable, ["netref", "broken"], "each reported once");
        assert!(seen.iter().all(|r| r.unusable_schema));
        assert!(
            seen[0].to_string().starts_with(
                "the inputSchema of tool netref cannot be used, so its arguments are not checked"
            ),
            "{}",
            seen[0]
        );
        // A refreshed list drops the compiled schemas: reported again.
        client.list_tools().await.unwrap();
        client.call_tool("netref", Value::Null).await.unwrap();
        assert_eq!(reports.lock().unwrap().len(), 3);
        client.close().await.unwrap();
    });
}
