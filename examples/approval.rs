//! A host that stands between a model and a server's tools: it asks a person
//! before any tool that is not known to be read-only, tells them when the
//! server changes a tool, and holds a changed tool back until they accept it.
//!
//! ```text
//! cargo run --example approval -- npx -y @modelcontextprotocol/server-filesystem /tmp
//! cargo run --example approval -- --trust uvx mcp-server-time
//! ```
//!
//! It reads what the "model" wants from stdin, one line at a time:
//! `tools`, `call NAME {"json": "arguments"}`, `held`, `accept`, `quit`. The
//! same lines answer its questions (`y` allows). Without `--trust` the
//! server's annotations are shown but not acted on: every call is asked.
//!
//! To watch a tool change mid-run, run the repository's test peer with a
//! tools file and edit the file while the example runs:
//!
//! ```text
//! cargo build -p stdio-mcp-testkit --bin stdio-mcp-peer
//! echo '[{"name":"read","description":"Reads.","inputSchema":{"type":"object"},
//!         "annotations":{"readOnlyHint":true}}]' > /tmp/tools.json
//! cargo run --example approval -- --trust target/debug/stdio-mcp-peer --tools-file /tmp/tools.json
//! ```

use std::sync::Arc;

use futures::channel::mpsc;
use futures::lock::Mutex;
use futures::StreamExt;
use serde_json::Value;
use stdio_mcp::client::{Approval, Client, ToolCall, ToolChanges};

/// The person at the terminal: the lines they type, shared by the loop
/// that reads commands and the hook that asks questions.
type Person = Arc<Mutex<mpsc::UnboundedReceiver<String>>>;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut command: Vec<String> = std::env::args().skip(1).collect();
    let trusted = command.first().map(String::as_str) == Some("--trust");
    if trusted {
        command.remove(0);
    }
    if command.is_empty() {
        return Err("usage: approval [--trust] COMMAND [ARGS...]".into());
    }
    // Stdin is read on a thread of its own: nothing blocks the executor.
    let (lines, typed) = mpsc::unbounded();
    std::thread::spawn(move || {
        for line in std::io::stdin().lines().map_while(Result::ok) {
            if lines.unbounded_send(line).is_err() {
                break;
            }
        }
    });
    let person: Person = Arc::new(Mutex::new(typed));
    futures::executor::block_on(host(command, trusted, person))
}

async fn host(
    command: Vec<String>,
    trusted: bool,
    person: Person,
) -> Result<(), Box<dyn std::error::Error>> {
    let asked = Arc::clone(&person);
    let client = Client::builder(command)
        .trusted(trusted)
        .hold_tool_changes(true)
        .on_tools_changed(report)
        .approve_calls(move |call: ToolCall| ask(Arc::clone(&asked), call))
        .connect()
        .await?;
    client.tools().await?; // the definitions the person starts from
    loop {
        let Some(line) = person.lock().await.next().await else {
            break;
        };
        let (word, rest) = line.trim().split_once(' ').unwrap_or((line.trim(), ""));
        match word {
            "tools" => {
                for tool in client.tools().await? {
                    let hints = tool.hints();
                    println!(
                        "  {} (claims read-only: {}, destructive: {})",
                        tool.name, hints.read_only, hints.destructive
                    );
                }
            }
            "call" => {
                let (name, arguments) = rest.split_once(' ').unwrap_or((rest, "{}"));
                let arguments: Value = match serde_json::from_str(arguments) {
                    Ok(arguments) => arguments,
                    Err(e) => {
                        println!("  the arguments are not JSON: {e}");
                        continue;
                    }
                };
                match client.call_tool(name, arguments).await {
                    Ok(result) => println!("  result: {}", result.text()),
                    Err(error) => println!("  refused: {error}"),
                }
            }
            "held" => {
                let held = client.held_tool_changes();
                for tool in &held.added {
                    println!("  new: {}", tool.name);
                }
                for change in &held.changed {
                    println!(
                        "  changed: {} ({})",
                        change.after.name,
                        change.fields.join(", ")
                    );
                }
            }
            "accept" => {
                client.accept_tool_changes();
                println!("  accepted");
            }
            "quit" => break,
            other => println!("  tools | call NAME JSON | held | accept | quit (not {other:?})"),
        }
    }
    client.close().await?;
    Ok(())
}

/// What the server changed, as it is found.
fn report(changes: &ToolChanges) {
    for tool in &changes.added {
        println!("  [the server added {}: held until accepted]", tool.name);
    }
    for tool in &changes.removed {
        println!("  [the server removed {}]", tool.name);
    }
    for change in &changes.changed {
        println!(
            "  [the server changed {}'s {}: held until accepted]",
            change.after.name,
            change.fields.join(", ")
        );
        if change.before.description != change.after.description {
            println!(
                "    was: {}",
                change.before.description.as_deref().unwrap_or("")
            );
            println!(
                "    now: {}",
                change.after.description.as_deref().unwrap_or("")
            );
        }
    }
}

/// Allows what a trusted server says cannot change anything; asks the
/// person about the rest.
async fn ask(person: Person, call: ToolCall) -> Approval {
    if call.hints.read_only {
        return Approval::Allow;
    }
    let trust = if call.trusted {
        "trusted"
    } else {
        "not trusted: its claims are not acted on"
    };
    println!(
        "  {} wants to run {} with {} (it claims read-only: {}, destructive: {}; {trust}). Allow? [y/N]",
        call.server, call.tool.name, call.arguments, call.claimed.read_only, call.claimed.destructive
    );
    match person.lock().await.next().await.as_deref().map(str::trim) {
        Some("y" | "yes") => Approval::Allow,
        _ => Approval::Deny("the person said no".into()),
    }
}
