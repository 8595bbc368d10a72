//! A host on Tokio: a server started in one step, its questions answered by
//! typed handlers (elicitation and sampling), a call that reports progress.
//!
//! ```text
//! cargo run --example tokio_host -- npx -y @modelcontextprotocol/server-everything
//! ```
//!
//! Against server-everything it calls `trigger-elicitation-request` (the
//! server asks a form; the handler fills it from the schema's defaults and
//! choices), `trigger-sampling-request` (the server asks for a completion;
//! the handler answers as a stand-in model) and `trigger-long-running-operation`
//! (progress, printed as it comes). With no command it runs the demo server
//! of this repository, which asks nothing: only the progress call runs.

#[path = "support/demo.rs"]
mod demo;

use serde_json::{json, Map, Value};
use stdio_mcp::client::{
    CallOptions, Client, CreateMessageRequest, CreateMessageResult, ElicitRequest, ElicitResult,
};
use stdio_mcp::RpcError;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if demo::serve_if_asked() {
        return Ok(());
    }
    let mut command: Vec<String> = std::env::args().skip(1).collect();
    if command.is_empty() {
        command = vec![
            std::env::current_exe()?.display().to_string(),
            "--serve".into(),
        ];
    }
    let client = Client::builder(command)
        .on_elicitation(|request: ElicitRequest| async move {
            let ElicitRequest::Form {
                message,
                requested_schema,
            } = request
            else {
                return Ok::<_, RpcError>(ElicitResult::decline());
            };
            println!("the server asks: {message}");
            Ok(ElicitResult::accept(answers(&requested_schema)))
        })
        .on_sampling(|asked: CreateMessageRequest| async move {
            let prompt = asked
                .messages
                .last()
                .and_then(|m| m.content["text"].as_str())
                .unwrap_or_default()
                .to_owned();
            println!(
                "the server asks the model ({} tokens): {prompt}",
                asked.max_tokens
            );
            Ok::<_, RpcError>(CreateMessageResult::text(
                "stand-in-model",
                format!("You said: {prompt}"),
            ))
        })
        .connect()
        .await?;
    println!("{} ({} era)", client.server_info().name, client.era());
    let tools: Vec<String> = client
        .tools()
        .await?
        .iter()
        .map(|t| t.name.clone())
        .collect();
    let calls = [
        ("trigger-elicitation-request", json!({})),
        (
            "trigger-sampling-request",
            json!({"prompt": "hello", "maxTokens": 20}),
        ),
        (
            "trigger-long-running-operation",
            json!({"duration": 2, "steps": 4}),
        ),
        ("countdown", json!({"from": 3})),
    ];
    for (name, arguments) in calls
        .into_iter()
        .filter(|(n, _)| tools.iter().any(|t| t == n))
    {
        println!("calling {name}");
        let options = CallOptions::new().on_progress(|p| {
            println!("  progress {}/{}", p.progress, p.total.unwrap_or_default());
        });
        let result = client.call_tool_with(name, arguments, options).await?;
        println!("  -> {}", result.text().replace('\n', "\n     "));
    }
    client.close().await?;
    Ok(())
}

/// A form's answers: each property's default, else its first choice, else
/// something of its type.
fn answers(schema: &Value) -> Value {
    let mut content = Map::new();
    for (key, property) in schema["properties"].as_object().into_iter().flatten() {
        let value = property
            .get("default")
            .or_else(|| property.get("enum").and_then(|e| e.get(0)))
            .or_else(|| property.pointer("/oneOf/0/const"))
            .cloned()
            .unwrap_or_else(|| match property["type"].as_str() {
                Some("boolean") => json!(true),
                Some("integer") | Some("number") => json!(1),
                _ => json!("stdio-mcp"),
            });
        content.insert(key.clone(), value);
    }
    Value::Object(content)
}
