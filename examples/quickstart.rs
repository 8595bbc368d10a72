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

use std::time::Duration;

use serde_json::json;
use stdio_mcp::client::Client;
use stdio_mcp::Transport;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if demo::serve_if_asked() {
        return Ok(());
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
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
