//! Start an MCP server, list its tools, call one, and close it.
//!
//! ```text
//! cargo run --example quickstart                      # against the demo server in this repo
//! cargo run --example quickstart -- npx -y @modelcontextprotocol/server-everything
//! ```
//!
//! With no command, the example starts itself again as the demo server
//! (`tests/peer/demo.rs`), so it needs nothing installed. It prints the server's
//! info and tools, makes one tool call showing its progress, and closes.

#[path = "../tests/peer/demo.rs"]
mod demo;

use std::io::{BufRead, Write};
use std::time::Duration;

use serde_json::{json, Value};
use stdio_mcp::client::Client;
use stdio_mcp::Transport;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--serve") {
        serve_demo();
        return Ok(());
    }
    let command = if args.is_empty() {
        vec![
            std::env::current_exe()?.display().to_string(),
            "--serve".into(),
        ]
    } else {
        args
    };
    println!("starting: {}", command.join(" "));
    futures::executor::block_on(run(command))
}

async fn run(command: Vec<String>) -> Result<(), Box<dyn std::error::Error>> {
    let transport = Transport::builder(&command)
        .timeout(Duration::from_secs(60))
        .on_stderr(|line| eprintln!("[server stderr] {line}"));
    let client = Client::connect(transport).await?;
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
            .call_tool_with_progress(name, args, |p| {
                let total = p.total.map_or(String::new(), |t| format!("/{t}"));
                println!(
                    "  progress {}{total} {}",
                    p.progress,
                    p.message.as_deref().unwrap_or("")
                );
            })
            .await?;
        println!("  -> {}", result.text());
    }

    client.close().await?;
    let status = client.transport().exit_status();
    println!("closed: {}", status.map_or("?".into(), |s| s.to_string()));
    Ok(())
}

/// The demo server: one JSON-RPC message per line on stdin, answers on stdout.
fn serve_demo() {
    let stdout = std::io::stdout();
    let send = |message: Value| {
        let mut out = stdout.lock();
        let _ = writeln!(out, "{message}");
        let _ = out.flush();
    };
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let (Some(id), Some(method)) = (message.get("id").cloned(), message["method"].as_str())
        else {
            continue; // a notification or a response: nothing to answer
        };
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let mut notify = |method: &str, params: Value| {
            send(json!({ "jsonrpc": "2.0", "method": method, "params": params }))
        };
        let outcome = demo::handle(method, &params, &mut notify)
            .unwrap_or_else(|| Err((-32601, format!("Method not found: {method}"))));
        send(match outcome {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Err((code, message)) => {
                json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
            }
        });
    }
}
