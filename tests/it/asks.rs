//! Typed views of what servers ask (elicitation in form and URL modes,
//! sampling) answered through the result builders, and what the client
//! declares it can do, in both eras.

use crate::common;

use common::{answer_to, peer, received, run};
use serde_json::json;
use stdio_mcp::client::{
    CallOptions, Client, ClientBuilder, CreateMessageRequest, CreateMessageResult, ElicitRequest,
    ElicitResult, Era,
};
use stdio_mcp::ServerRequest;
use stdio_mcp::TransportBuilder;

/// A client whose handlers read the typed requests and answer with the builders.
fn typed(server: TransportBuilder) -> ClientBuilder {
    Client::builder(server)
        .on_elicitation(|request: ServerRequest| async move {
            Ok(match ElicitRequest::from_request(&request)? {
                ElicitRequest::Form {
                    message,
                    requested_schema,
                } => ElicitResult::accept(json!({
                    "heard": message,
                    "fields": requested_schema["properties"].as_object().map_or(0, |p| p.len()),
                }))
                .into(),
                ElicitRequest::Url { url, .. } if url.starts_with("https://") => {
                    ElicitResult::accept_url().into()
                }
                _ => ElicitResult::decline().into(),
            })
        })
        .elicitation_url(true)
        .on_sampling(|request: ServerRequest| async move {
            let asked = CreateMessageRequest::from_request(&request)?;
            let last = asked.messages.last().map(|m| m.content["text"].clone());
            let text = format!(
                "{} tokens for {}",
                asked.max_tokens,
                last.unwrap_or_default()
            );
            Ok(CreateMessageResult::text("test-model", text).into())
        })
        .sampling_tools(true)
}

#[test]
fn typed_requests_are_answered_through_the_builders() {
    run(15, async {
        let client = typed(peer(&[])).era(Era::Legacy).connect().await.unwrap();
        let form = json!({
            "message": "Who are you?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
        });
        assert_eq!(
            answer_to(&client, "elicitation/create", form).await["result"],
            json!({"action": "accept", "content": {"heard": "Who are you?", "fields": 1}})
        );
        let url = json!({
            "mode": "url", "message": "Sign in", "url": "https://example.com/login",
            "elicitationId": "e-1"
        });
        assert_eq!(
            answer_to(&client, "elicitation/create", url).await["result"],
            json!({"action": "accept"})
        );
        // Params that are no elicitation get -32602 back, from the typed view.
        let broken = json!({"mode": "url", "message": "no url"});
        let refused = answer_to(&client, "elicitation/create", broken).await;
        assert_eq!(refused["error"]["code"], -32602);
        assert!(refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no url"));
        let sampling = json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "hello"}}],
            "maxTokens": 64
        });
        assert_eq!(
            answer_to(&client, "sampling/createMessage", sampling).await["result"],
            json!({
                "role": "assistant",
                "content": {"type": "text", "text": "64 tokens for \"hello\""},
                "model": "test-model",
                "stopReason": "endTurn"
            })
        );
        client.close().await.unwrap();
    });
}

#[test]
fn the_client_declares_what_its_handlers_take_in_both_eras() {
    run(15, async {
        let expected = json!({
            "sampling": {"tools": {}},
            "elicitation": {"form": {}, "url": {}},
        });
        let legacy = typed(peer(&[])).connect().await.unwrap();
        let lines = received(&legacy.transport()).await;
        let init = lines.iter().find(|l| l["method"] == "initialize").unwrap();
        // And tasks: tool calls may become tasks (tests/it/tasks.rs).
        let mut legacy_expected = expected.clone();
        legacy_expected["tasks"] = json!({});
        assert_eq!(init["params"]["capabilities"], legacy_expected);
        legacy.close().await.unwrap();

        let modern = typed(peer(&["--discover", "modern"]))
            .connect()
            .await
            .unwrap();
        modern.ping().await.unwrap();
        let lines = received(&modern.transport()).await;
        let meta = &lines.last().unwrap()["params"]["_meta"];
        let mut modern_expected = expected;
        modern_expected["extensions"] = json!({"io.modelcontextprotocol/tasks": {}});
        assert_eq!(
            meta["io.modelcontextprotocol/clientCapabilities"],
            modern_expected
        );
        modern.close().await.unwrap();
    });
}

#[test]
fn roots_changes_are_notified_to_a_legacy_server_and_refused_by_a_modern_one() {
    run(15, async {
        let roots = |b: TransportBuilder| {
            Client::builder(b).on_roots_list(|_: ServerRequest| async { Ok(json!({"roots": []})) })
        };
        let legacy = roots(peer(&[])).connect().await.unwrap();
        legacy.notify_roots_changed().unwrap();
        let lines = received(&legacy.transport()).await;
        let init = lines.iter().find(|l| l["method"] == "initialize").unwrap();
        assert_eq!(
            init["params"]["capabilities"]["roots"],
            json!({"listChanged": true})
        );
        assert!(lines
            .iter()
            .any(|l| l["method"] == "notifications/roots/list_changed"));
        legacy.close().await.unwrap();

        let modern = roots(peer(&["--discover", "modern"]))
            .connect()
            .await
            .unwrap();
        let e = modern.notify_roots_changed().unwrap_err();
        assert_eq!(e.kind(), stdio_mcp::ErrorKind::Protocol);
        assert!(
            e.to_string()
                .contains("asks for the roots with each request"),
            "{e}"
        );
        modern.close().await.unwrap();
    });
}

#[test]
fn an_accepted_form_gets_the_schema_defaults_in_both_eras_unless_turned_off() {
    run(20, async {
        let schema = json!({ "type": "object", "properties": {
            "name": { "type": "string", "default": "Ada" },
            "age": { "type": "integer", "default": 36 },
            "ratio": { "type": "number", "default": 0.5 },
            "tier": { "type": "string", "enum": ["free", "pro"], "default": "pro" },
            "ok": { "type": "boolean", "default": false },
            "note": { "type": "string" }
        } });
        let form = json!({ "message": "Who?", "requestedSchema": schema });
        // The handler answers only the age: the rest come from the schema.
        let client = |server: TransportBuilder, fill: bool| {
            Client::builder(server)
                .on_elicitation(|_: ServerRequest| async {
                    Ok(ElicitResult::accept(json!({"age": 7})).into())
                })
                .elicitation_defaults(fill)
                .connect()
        };
        let filled = json!({ "name": "Ada", "age": 7, "ratio": 0.5, "tier": "pro", "ok": false });
        // Legacy: the server's elicitation/create request.
        let legacy = client(peer(&[]), true).await.unwrap();
        let answered = answer_to(&legacy, "elicitation/create", form.clone()).await;
        assert_eq!(answered["result"]["content"], filled);
        legacy.close().await.unwrap();
        // Modern: an input request of a multi round-trip call.
        let modern = client(peer(&["--discover", "modern"]), true).await.unwrap();
        let done = modern
            .request(
                "test/mrtr",
                Some(json!({ "ask_params": form.clone() })),
                CallOptions::new(),
            )
            .await
            .unwrap();
        assert_eq!(done["inputResponses"]["ask-0"]["content"], filled);
        modern.close().await.unwrap();
        // Turned off: as the handler wrote it. A decline is never filled in.
        let off = client(peer(&[]), false).await.unwrap();
        let answered = answer_to(&off, "elicitation/create", form.clone()).await;
        assert_eq!(answered["result"]["content"], json!({"age": 7}));
        off.close().await.unwrap();
        let declining = Client::builder(peer(&[]))
            .on_elicitation(|_: ServerRequest| async { Ok(ElicitResult::decline().into()) })
            .connect()
            .await
            .unwrap();
        let answered = answer_to(&declining, "elicitation/create", form).await;
        assert_eq!(answered["result"], json!({"action": "decline"}));
        declining.close().await.unwrap();
    });
}
