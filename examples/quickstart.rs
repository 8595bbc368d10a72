//! Start an MCP server, list its tools, call one, and close it.
//!
//! ```text
//! cargo run --example quickstart                      # against the demo server in this repo
//! cargo run --example quickstart -- npx -y @modelcontextprotocol/server-everything
//! cargo run --example quickstart -- --call simulate-research-query '{"topic": "python", "ambiguous": true}' \
//!     npx -y @modelcontextprotocol/server-everything
//! ```
//!
//! With no command, the example starts itself again as the demo server
//! (`examples/support/demo.rs`), so it needs nothing installed. It prints the server's
//! info and tools, makes one tool call showing its progress (or the one
//! `--call TOOL ARGUMENTS` names, showing its task's status if it becomes a
//! task), and closes. A question the server asks (elicitation) is answered
//! with the first choice it offers.

#[path = "support/demo.rs"]
mod demo;

use serde_json::{json, Value};
use stdio_mcp::client::{CallOptions, Client, ElicitRequest, ElicitResult, Progress};
use stdio_mcp::{RpcError, Transport};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if demo::serve_if_asked() {
        return Ok(());
    }
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let call = if args.first().map(String::as_str) == Some("--call") {
        if args.len() < 3 {
            return Err("--call takes a tool name and its arguments as JSON".into());
        }
        let mut taken = args.drain(..3).skip(1);
        let name = taken.next().unwrap_or_default();
        let arguments: Value = serde_json::from_str(&taken.next().unwrap_or_default())
            .map_err(|e| format!("--call {name}: the arguments are not JSON: {e}"))?;
        Some((name, arguments))
    } else {
        None
    };
    let command = if args.is_empty() {
        vec![
            std::env::current_exe()?.display().to_string(),
            "--serve".into(),
        ]
    } else {
        args
    };
    println!("starting: {}", command.join(" "));
    futures::executor::block_on(run(command, call))
}

async fn run(
    command: Vec<String>,
    call: Option<(String, Value)>,
) -> Result<(), Box<dyn std::error::Error>> {
    // No time limit of the transport's: it would cut off a long call however
    // busily it reports progress. The client's own (5 minutes by default)
    // starts again with each progress report.
    let transport =
        Transport::builder(&command).on_stderr(|line| eprintln!("[server stderr] {line}"));
    let client = Client::builder(transport)
        .on_elicitation(
            |request: ElicitRequest| async move { Ok::<_, RpcError>(first_choice(request)) },
        )
        .connect()
        .await?;
    let info = client.server_info();
    println!(
        "server: {} {} ({:?} era, protocol {})",
        info.name,
        info.version,
        client.era(),
        client.protocol_version()
    );

    let tools = client.list_tools().await?;
    println!("{} tools:", tools.len());
    for tool in &tools {
        println!(
            "  {:<30} {}",
            tool.name,
            tool.description.as_deref().unwrap_or("")
        );
    }

    if let Some((name, arguments)) = call {
        println!("calling {name} {arguments}");
        let options = CallOptions::new()
            .on_task(|task| {
                let message = task.status_message.as_deref().unwrap_or("");
                println!("  task {} {}: {message}", task.task_id, task.status);
            })
            .on_progress(print_progress);
        let result = client.call_tool_with(&name, arguments, options).await?;
        println!("  -> {}", result.text());
        client.close().await?;
        return Ok(());
    }

    // One call that reports progress, if the server has one; echo otherwise.
    let candidates = [
        ("countdown", json!({ "from": 3 })),
        (
            "trigger-long-running-operation",
            json!({ "duration": 1, "steps": 3 }),
        ),
        ("echo", json!({ "message": "hello from stdio-mcp" })),
    ];
    if let Some((name, args)) = candidates
        .into_iter()
        .find(|(n, _)| tools.iter().any(|t| t.name == *n))
    {
        println!("calling {name} {args}");
        let result = client
            .call_tool_with_progress(name, args, print_progress)
            .await?;
        println!("  -> {}", result.text());
    }

    client.close().await?;
    let status = client.transport().exit_status();
    println!("closed: {}", status.map_or("?".into(), |s| s.to_string()));
    Ok(())
}

fn print_progress(p: &Progress) {
    let total = p.total.map_or(String::new(), |t| format!("/{t}"));
    println!(
        "  progress {}{total} {}",
        p.progress,
        p.message.as_deref().unwrap_or("")
    );
}

/// The answer to a form: each property's first offered choice (or its
/// default); a URL is declined.
fn first_choice(request: ElicitRequest) -> ElicitResult {
    let ElicitRequest::Form {
        message,
        requested_schema,
    } = request
    else {
        return ElicitResult::decline();
    };
    println!("  the server asks: {message}");
    let mut content = serde_json::Map::new();
    if let Some(Value::Object(properties)) = requested_schema.get("properties") {
        for (key, property) in properties {
            let choice = property
                .get("oneOf")
                .and_then(|o| o.get(0))
                .and_then(|o| o.get("const"))
                .or_else(|| property.get("enum").and_then(|e| e.get(0)))
                .or_else(|| property.get("default"));
            if let Some(choice) = choice {
                println!("  answering {key}: {choice}");
                content.insert(key.clone(), choice.clone());
            }
        }
    }
    ElicitResult::accept(content)
}
