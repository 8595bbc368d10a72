//! Handlers of what the server asks in their typed form: the typed request
//! in, the typed answer out, in both eras; a request the typed form cannot
//! read never reaches the handler; a handler that panics is answered
//! `-32603` and the client serves on; and a client started in one step from
//! its command.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::{answer_to, received, run};
use serde_json::json;
use stdio_mcp::client::{
    CallOptions, Client, CreateMessageRequest, CreateMessageResult, ElicitRequest, ElicitResult,
    Era, ListRootsRequest, Root,
};
use stdio_mcp::RpcError;

/// A client of the peer (started from its command, in one step) whose
/// handlers take the typed forms; `calls` counts the elicitation handler's calls.
async fn typed_client(flags: &[&str], era: Era, calls: Arc<AtomicUsize>) -> Client {
    let command: Vec<String> = std::iter::once(common::peer_exe().to_owned())
        .chain(flags.iter().map(|f| f.to_string()))
        .collect();
    Client::builder(command)
        .era(era)
        .on_elicitation(move |request: ElicitRequest| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move {
                match request {
                    ElicitRequest::Form { message, .. } if message == "panic" => {
                        panic!("the handler panics")
                    }
                    ElicitRequest::Form { .. } => Ok(ElicitResult::accept(json!({"age": 7}))),
                    _ => Ok(ElicitResult::decline()),
                }
            }
        })
        .on_sampling(|asked: CreateMessageRequest| async move {
            if asked.max_tokens == 0 {
                return Err(RpcError {
                    code: -1,
                    message: "no tokens".into(),
                    data: None,
                });
            }
            Ok(CreateMessageResult::image(
                "test-model",
                "iVBORw0KGgo=",
                "image/png",
            ))
        })
        .on_roots_list(|_: ListRootsRequest| async {
            Ok::<_, RpcError>(vec![Root::new("file:///srv").named("srv")])
        })
        .connect()
        .await
        .unwrap()
}

#[test]
fn typed_handlers_take_typed_requests_and_give_typed_answers() {
    run(15, async {
        let calls = Arc::new(AtomicUsize::new(0));
        let client = typed_client(&[], Era::Legacy, Arc::clone(&calls)).await;
        // The schema's default fills what the typed answer left out.
        let form = json!({
            "message": "Who are you?",
            "requestedSchema": {"type": "object", "properties": {
                "name": {"type": "string", "default": "Ada"}, "age": {"type": "integer"}}}
        });
        assert_eq!(
            answer_to(&client, "elicitation/create", form).await["result"],
            json!({"action": "accept", "content": {"age": 7, "name": "Ada"}})
        );
        let sampling = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Draw"}}], "maxTokens": 5});
        assert_eq!(
            answer_to(&client, "sampling/createMessage", sampling).await["result"],
            json!({"role": "assistant", "model": "test-model", "stopReason": "endTurn",
                   "content": {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}})
        );
        let refused = json!({"messages": [], "maxTokens": 0});
        assert_eq!(
            answer_to(&client, "sampling/createMessage", refused).await["error"]["message"],
            "no tokens"
        );
        assert_eq!(
            answer_to(&client, "roots/list", json!({})).await["result"],
            json!({"roots": [{"uri": "file:///srv", "name": "srv"}]})
        );
        client.close().await.unwrap();
    });
}

#[test]
fn a_request_the_typed_form_cannot_read_never_reaches_the_handler() {
    run(15, async {
        let calls = Arc::new(AtomicUsize::new(0));
        let client = typed_client(&[], Era::Legacy, Arc::clone(&calls)).await;
        let no_schema = json!({"message": "Who are you?"});
        let error = answer_to(&client, "elicitation/create", no_schema).await["error"].clone();
        assert_eq!(error["code"], -32602, "{error}");
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains("requestedSchema"),
            "{error}"
        );
        assert_eq!(
            calls.load(Ordering::SeqCst),
            0,
            "the handler was not called"
        );
        client.close().await.unwrap();
    });
}

#[test]
fn a_typed_handler_that_panics_is_answered_internal_error_and_the_client_serves_on() {
    run(15, async {
        let calls = Arc::new(AtomicUsize::new(0));
        let client = typed_client(&[], Era::Legacy, Arc::clone(&calls)).await;
        let form =
            json!({"message": "panic", "requestedSchema": {"type": "object", "properties": {}}});
        let error = answer_to(&client, "elicitation/create", form).await["error"].clone();
        assert_eq!(error["code"], -32603, "{error}");
        // Still serving: the next question is answered.
        let form =
            json!({"message": "again", "requestedSchema": {"type": "object", "properties": {}}});
        assert_eq!(
            answer_to(&client, "elicitation/create", form).await["result"]["action"],
            "accept"
        );
        assert_eq!(
            client
                .request("test/echo", Some(json!({"n": 5})), CallOptions::new())
                .await
                .unwrap(),
            json!({"n": 5})
        );
        client.close().await.unwrap();
    });
}

/// A modern server's input request the typed form cannot read fails the
/// call naming the method and what was wrong, and no answer is sent back.
#[test]
fn a_modern_input_request_the_typed_form_cannot_read_fails_the_call() {
    run(15, async {
        let calls = Arc::new(AtomicUsize::new(0));
        let client = typed_client(&["--discover", "modern"], Era::Auto, Arc::clone(&calls)).await;
        assert_eq!(client.era(), Era::Modern);
        let error = client
            .request(
                "test/mrtr",
                Some(json!({ "kinds": ["elicitation/create"] })),
                CallOptions::new(),
            )
            .await
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("elicitation/create") && error.contains("requestedSchema"),
            "{error}"
        );
        assert_eq!(calls.load(Ordering::SeqCst), 0);
        let lines = received(&client.transport()).await;
        let tries = lines.iter().filter(|l| l["method"] == "test/mrtr").count();
        assert_eq!(tries, 1, "no inputResponses were sent: {lines:?}");
        client.close().await.unwrap();
    });
}

/// Under Tokio too (the handlers run beside the transport's I/O).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_handlers_under_tokio() {
    common::within(15, async {
        let calls = Arc::new(AtomicUsize::new(0));
        let client = typed_client(&[], Era::Legacy, calls).await;
        assert_eq!(
            answer_to(&client, "roots/list", json!({})).await["result"]["roots"][0]["uri"],
            "file:///srv"
        );
        client.close().await.unwrap();
    })
    .await;
}
