//! Start every stdio server of an MCP configuration file, list each one's
//! tools and era as it becomes ready, and close them all.
//!
//! ```text
//! cargo run --example config                                  # examples/demo.mcp.json
//! cargo run --example config -- ~/.config/Claude/claude_desktop_config.json
//! cargo run --example config -- .vscode/mcp.json
//! ```
//!
//! With no path it reads `examples/demo.mcp.json`, whose servers are this
//! program itself started as the demo server (`${STDIO_MCP_DEMO_SERVER}` is
//! set to it), so it needs nothing installed.

#[path = "../tests/peer/demo.rs"]
mod demo;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use futures::stream::{FuturesUnordered, StreamExt};
use stdio_mcp::client::{Client, Era};
use stdio_mcp::config::{Config, ServerConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if demo::serve_if_asked() {
        return Ok(());
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (path, demo_server) = match args.first() {
        Some(path) => (PathBuf::from(path), None),
        None => (
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/demo.mcp.json"),
            Some(std::env::current_exe()?.display().to_string()),
        ),
    };
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let config = Config::parse_with(&text, Some(&path), |name| match (name, &demo_server) {
        ("STDIO_MCP_DEMO_SERVER", Some(me)) => Some(me.clone()),
        _ => std::env::var(name).ok(),
    })?;
    println!(
        "{}: {} stdio servers, {} skipped",
        path.display(),
        config.servers().len(),
        config.skipped().len()
    );
    for skipped in config.skipped() {
        println!("{}: skipped ({})", skipped.name, skipped.reason);
    }
    for warning in config.warnings() {
        eprintln!("warning: {warning}");
    }
    futures::executor::block_on(start_all(config.servers()));
    Ok(())
}

/// Connects to every server at once; prints a line as each becomes ready.
async fn start_all(servers: &[ServerConfig]) {
    let started = Instant::now();
    let mut connecting: FuturesUnordered<_> = servers
        .iter()
        .map(|server| async move { (server, ready(server).await) })
        .collect();
    let mut clients = Vec::new();
    while let Some((server, outcome)) = connecting.next().await {
        let at = started.elapsed().as_millis();
        match outcome {
            Ok((client, tools)) => {
                let era = match client.era() {
                    Era::Modern => "modern",
                    _ => "legacy",
                };
                println!(
                    "{}: ready after {at} ms, {era} era (MCP {}), {} tools: {}",
                    server.name,
                    client.protocol_version(),
                    tools.len(),
                    tools.join(", ")
                );
                clients.push((server, client));
            }
            Err(error) => println!("{}: failed after {at} ms: {error}", server.name),
        }
    }
    for (server, client) in clients {
        match client.close().await {
            Ok(status) => println!("{}: closed ({status})", server.name),
            Err(error) => println!("{}: close failed: {error}", server.name),
        }
    }
}

async fn ready(server: &ServerConfig) -> Result<(Client, Vec<String>), stdio_mcp::Error> {
    // `npx`/`uvx` servers may download themselves first.
    let transport = server.builder().timeout(Duration::from_secs(120));
    let client = Client::builder(transport)
        .probe_timeout(Duration::from_secs(60))
        .connect()
        .await?;
    let tools = client.list_tools().await?;
    Ok((client, tools.into_iter().map(|t| t.name).collect()))
}
