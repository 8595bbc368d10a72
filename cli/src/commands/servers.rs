//! `stdio-mcp servers`: every configured server, its state, era, tools and source; a project's untrusted ones listed, not started.

use serde_json::{json, Value};
use stdio_mcp::group::ServerState;

use super::*;
use crate::failure::Failure;
use crate::output::{self, outln};
use crate::session::{print_json, Session};

impl Session {
    /// `servers`: each configured server's state, era, tool count and file.
    pub(crate) async fn servers_list(&self) -> Result<(), Failure> {
        let mut config = self.servers.config.clone();
        // A project's servers that may not start are listed, not started.
        let held = self.leave_out_held(&mut config)?;
        let skipped = config.skipped().to_vec();
        let group = self.group(config).await;
        let tools = group.tools().await;
        output::warn(&group.warnings());
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
}
