//! The commands, a file each, as methods of the [`Session`](crate::session::Session)
//! they run in; what several of them share is here.

mod call;
mod info;
mod prompt;
mod prompts;
mod read;
mod resources;
mod servers;
mod tools;
mod trust;

use serde_json::{json, Value};
use stdio_mcp::client::Era;
use stdio_mcp::group::ServerState;

use crate::output::{errln, outln};
use crate::view::View;

/// The era of a ready server; `null` (shown `-`) while it is not known.
fn era_name(state: &ServerState) -> Value {
    match state {
        ServerState::Ready(Era::Modern) => "modern".into(),
        ServerState::Ready(_) => "legacy".into(),
        _ => Value::Null,
    }
}

pub(crate) fn state_name(state: &ServerState) -> &'static str {
    match state {
        ServerState::Idle => "idle",
        ServerState::Starting => "starting",
        ServerState::Ready(_) => "ready",
        ServerState::Restarting => "restarting",
        ServerState::Failed(_) => "failed",
        ServerState::Closed => "closed",
        _ => "unknown",
    }
}

/// An item of a listing as the server gave it; across servers, under its
/// group name and with its server.
fn listed(mut value: Value, across: Option<(&String, &String)>) -> Value {
    if let Some((name, server)) = across {
        value["name"] = json!(name);
        value["server"] = json!(server);
    }
    value
}

/// Starts every server of `group` that the catalog cache left idle (prompts
/// and resources are asked of running servers; the cache still spares a
/// legacy server the probe). One that fails says so on stderr.
async fn start_all(group: &View) {
    let unreadable: Vec<String> = group.errors().into_iter().map(|(name, _)| name).collect();
    let names: Vec<String> = group
        .servers()
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| !unreadable.contains(name))
        .collect();
    let starts = names.iter().map(|name| group.client(name));
    for (name, started) in names.iter().zip(futures::future::join_all(starts).await) {
        if let Err(error) = started {
            errln!("stdio-mcp: {name}: {error}");
        }
    }
}

/// What the server claims a tool does, as `tools` shows it: `read-only`,
/// or `destructive` when it may destroy, and `open-world` when it reaches
/// beyond its server (the specification's defaults for what it leaves out).
fn marks(tool: &stdio_mcp::client::Tool) -> String {
    let hints = tool.hints();
    let mut marks = Vec::new();
    if hints.read_only {
        marks.push("read-only");
    }
    if hints.destructive {
        marks.push("destructive");
    }
    if hints.open_world {
        marks.push("open-world");
    }
    match marks.is_empty() {
        true => String::new(),
        false => format!("[{}]", marks.join(", ")),
    }
}

/// Prints content items for people: text as it is, the rest summarized.
fn print_content(content: &Value) {
    for item in content.as_array().into_iter().flatten() {
        match item["type"].as_str() {
            Some("text") => outln!("{}", item["text"].as_str().unwrap_or_default()),
            Some("resource") => match item["resource"]["text"].as_str() {
                Some(text) => outln!("{text}"),
                None => outln!(
                    "[resource {}]",
                    item["resource"]["uri"].as_str().unwrap_or_default()
                ),
            },
            Some("resource_link") => {
                outln!("[link {}]", item["uri"].as_str().unwrap_or_default())
            }
            Some(kind) => outln!("[{kind}: {}]", item["mimeType"].as_str().unwrap_or("data")),
            None => outln!("{item}"),
        }
    }
}
