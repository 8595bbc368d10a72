//! The listings: the servers, and the tools, prompts and resources of one
//! server or of all.

use serde_json::{json, Value};
use stdio_mcp::client::Era;
use stdio_mcp::group::ServerState;

use crate::commands::{failed, print_json, Session};
use crate::failure::Failure;
use crate::output::{self, errln, outln};
use crate::view::View;

impl Session {
    /// `servers`: each configured server's state, era, tool count and file.
    pub(crate) async fn servers_list(&self) -> Result<(), Failure> {
        let mut config = self.servers.config.clone();
        // A project's servers that may not start are listed, not started.
        let held = self.leave_out_held(&mut config)?;
        let skipped = config.skipped().to_vec();
        let group = self.group(config).await;
        let tools = group.tools().await;
        output::warn(group.warnings());
        let mut rows = Vec::new();
        for (name, state) in group.servers() {
            let count = tools.iter().filter(|t| t.server == name).count();
            let mut source = self.servers.sources.get(&name).cloned().unwrap_or_default();
            // What is left of a project's servers after `held` is trusted.
            let trust = self.is_project_server(&name).then_some("trusted");
            if trust.is_some() {
                source.push_str(" (project, trusted)");
            }
            let entry = self.servers.config.server(&name);
            let sandboxed = entry.is_some_and(|entry| entry.sandbox.is_some());
            if sandboxed {
                source.push_str(" (sandboxed)");
            }
            let error = match &state {
                ServerState::Failed(why) => Some(why.clone()),
                _ => None,
            };
            let sandbox = entry.map_or(Value::Null, crate::reach::rules_json);
            let fetches = entry.map_or(Value::Null, crate::reach::fetch_json);
            rows.push(
                json!({ "name": name, "state": state_name(&state), "era": era_name(&state),
                              "tools": count, "source": source, "error": error, "trust": trust,
                              "sandboxed": sandboxed, "sandbox": sandbox, "fetches": fetches }),
            );
        }
        for h in &held {
            let mut source = format!("{} (project, {})", h.file.display(), h.state);
            let entry = self.servers.config.server(&h.name);
            let sandboxed = entry.is_some_and(|entry| entry.sandbox.is_some());
            if sandboxed {
                source.push_str(" (sandboxed)");
            }
            let sandbox = entry.map_or(Value::Null, crate::reach::rules_json);
            let fetches = entry.map_or(Value::Null, crate::reach::fetch_json);
            rows.push(
                json!({ "name": h.name, "state": h.state_name(), "era": null, "tools": 0,
                        "source": source, "error": null, "trust": h.state_name(),
                        "sandboxed": sandboxed, "sandbox": sandbox, "fetches": fetches }),
            );
        }
        for s in &skipped {
            let source = self
                .servers
                .sources
                .get(&s.name)
                .cloned()
                .unwrap_or_default();
            rows.push(
                json!({ "name": s.name, "state": "skipped", "era": null, "tools": 0,
                              "source": source, "error": s.reason, "trust": null, "sandboxed": null,
                              "sandbox": null, "fetches": null }),
            );
        }
        if self.cli.json {
            print_json(&json!({ "servers": rows }));
        } else if rows.is_empty() {
            outln!(
                "no servers: name a config file with --config, or give a server's command after --"
            );
        } else {
            outln!(
                "{:<20} {:<9} {:<7} {:>5}  SOURCE",
                "NAME",
                "STATE",
                "ERA",
                "TOOLS"
            );
            for row in &rows {
                outln!(
                    "{:<20} {:<9} {:<7} {:>5}  {}",
                    row["name"].as_str().unwrap_or_default(),
                    row["state"].as_str().unwrap_or_default(),
                    row["era"].as_str().unwrap_or("-"),
                    row["tools"].as_u64().unwrap_or(0),
                    row["source"].as_str().unwrap_or_default()
                );
                if let Some(error) = row["error"].as_str() {
                    outln!("    {error}");
                }
                let rules = self
                    .servers
                    .config
                    .server(row["name"].as_str().unwrap_or_default());
                if let Some(line) = rules.and_then(crate::reach::fetch_line) {
                    outln!("    fetches: {line}");
                }
                for line in rules.map(crate::reach::rule_lines).unwrap_or_default() {
                    outln!("    sandbox: {line}");
                }
            }
        }
        group.close().await;
        Ok(())
    }

    /// `tools [SERVER]`: one server's tools by their own names, or every
    /// server's under the group's names.
    pub(crate) async fn tools(&self, server: Option<String>) -> Result<(), Failure> {
        let (config, server) = self.config_for(server.as_deref())?;
        let group = self.group(config).await;
        let tools = group.tools().await;
        output::warn(group.warnings());
        let failures: Vec<(String, String)> = group
            .servers()
            .into_iter()
            .filter_map(|(name, state)| match state {
                ServerState::Failed(why) => Some((name, why)),
                _ => None,
            })
            .collect();
        group.close().await;
        if let (Some(server), Some((_, why))) = (&server, failures.first()) {
            return Err(failed(server, why));
        }
        for (name, why) in &failures {
            errln!("stdio-mcp: {name}: {why}");
        }
        let single = server.is_some();
        if self.cli.json {
            let listed: Vec<Value> = tools
                .iter()
                .map(|t| listed(json!(t.tool), (!single).then_some((&t.name, &t.server))))
                .collect();
            print_json(&json!({ "tools": listed }));
            return Ok(());
        }
        for t in &tools {
            let name = if single { &t.tool.name } else { &t.name };
            let description = t.tool.description.as_deref().unwrap_or_default();
            let first = description.lines().next().unwrap_or_default();
            outln!("{name:<32} {:<25} {first}", marks(&t.tool));
        }
        Ok(())
    }

    /// `prompts [SERVER]`.
    pub(crate) async fn prompts(&self, server: Option<String>) -> Result<(), Failure> {
        let (config, server) = self.config_for(server.as_deref())?;
        let group = self.group(config).await;
        start_all(&group).await;
        let prompts = group.prompts().await;
        let single = server.is_some();
        if self.cli.json {
            let listed: Vec<Value> = prompts
                .iter()
                .map(|p| listed(json!(p.prompt), (!single).then_some((&p.name, &p.server))))
                .collect();
            print_json(&json!({ "prompts": listed }));
        } else {
            for p in &prompts {
                let name = if single { &p.prompt.name } else { &p.name };
                outln!(
                    "{name:<32} {}",
                    p.prompt.description.as_deref().unwrap_or_default()
                );
            }
        }
        group.close().await;
        Ok(())
    }

    /// `resources [SERVER]`.
    pub(crate) async fn resources(&self, server: Option<String>) -> Result<(), Failure> {
        let (config, _) = self.config_for(server.as_deref())?;
        let group = self.group(config).await;
        start_all(&group).await;
        let resources = group.resources().await;
        if self.cli.json {
            let listed: Vec<Value> = resources
                .iter()
                .map(|r| {
                    let mut resource = serde_json::to_value(&r.resource).unwrap_or_default();
                    resource["server"] = json!(r.server);
                    resource
                })
                .collect();
            print_json(&json!({ "resources": listed }));
        } else {
            for r in &resources {
                outln!("{:<40} {} ({})", r.resource.uri, r.resource.name, r.server);
            }
        }
        group.close().await;
        Ok(())
    }
}

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
