//! Start every stdio server of an MCP configuration file as one group: each
//! server's state, era and tools, the group's merged tool list; then close
//! them all. With `--cache FILE`, the group keeps its catalog there and a
//! second run starts nothing: its tools come from the file, and a server
//! would start on its first call.
//!
//! ```text
//! cargo run --example config                                  # examples/demo.mcp.json
//! cargo run --example config -- ~/.config/Claude/claude_desktop_config.json
//! cargo run --example config -- --cache /tmp/catalog.json .vscode/mcp.json
//! ```
//!
//! With no path it reads `examples/demo.mcp.json`, whose servers are this
//! program itself started as the demo server (`${STDIO_MCP_DEMO_SERVER}` is
//! set to it), so it needs nothing installed.

#[path = "support/demo.rs"]
mod demo;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use stdio_mcp::config::Config;
use stdio_mcp::group::{Group, ServerState};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if demo::serve_if_asked() {
        return Ok(());
    }
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let cache = match args.iter().position(|a| a == "--cache") {
        Some(at) if at + 1 < args.len() => Some(PathBuf::from(
            args.drain(at..=at + 1).nth(1).unwrap_or_default(),
        )),
        Some(_) => return Err("--cache needs a file".into()),
        None => None,
    };
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
    futures::executor::block_on(start_all(config, cache))
}

/// Starts the group, prints each server and the merged tools, closes it.
async fn start_all(
    config: Config,
    cache: Option<PathBuf>,
) -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let mut builder = Group::builder(config)
        // `npx`/`uvx` servers may download themselves first.
        .start_timeout(Duration::from_secs(120))
        .client(|_name, client| client.probe_timeout(Duration::from_secs(60)));
    if let Some(cache) = cache {
        builder = builder.catalog_cache(cache);
    }
    let group = builder.connect().await;
    let at = started.elapsed().as_millis();
    let tools = group.tools().await;
    let servers = group.servers();
    let mut running = 0;
    for (name, state) in &servers {
        let own: Vec<&str> = tools
            .iter()
            .filter(|t| &t.server == name)
            .map(|t| t.tool.name.as_str())
            .collect();
        let own = format!("{} tools: {}", own.len(), own.join(", "));
        match state {
            ServerState::Ready(era) => {
                running += 1;
                let client = group.client(name).await?;
                let version = client.protocol_version();
                println!("{name}: ready after {at} ms, {era} era (MCP {version}), {own}");
            }
            ServerState::Idle => {
                println!("{name}: idle (not started; from the catalog cache), {own}")
            }
            ServerState::Failed(why) => println!("{name}: failed after {at} ms: {why}"),
            other => println!("{name}: {other:?}"),
        }
    }
    println!("{running} of {} servers started", servers.len());
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    println!("the group's {} tools: {}", names.len(), names.join(", "));
    group.close().await;
    println!("closed");
    Ok(())
}
