//! `stdio-mcp trust [NAME...]` and `untrust NAME...`: a project's servers trusted as they are now, listed, or no longer trusted.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use stdio_mcp::config::{ServerConfig, TrustState};

use crate::failure::{did_you_mean, Failure};
use crate::output::outln;
use crate::project::*;
use crate::session::{print_json, Session};

impl Session {
    /// `trust [NAME…]`: trusts the project servers named, as they are now;
    /// with no name, lists the project servers and their state.
    pub(crate) fn trust(&self, names: &[String]) -> Result<(), Failure> {
        if names.is_empty() {
            return self.trust_list();
        }
        let mut store = store()?;
        let mut trusted = Vec::new();
        for name in names {
            let (file, server) = self.project_server(name)?;
            store.trust(&file, server);
            trusted.push((name, file, server));
        }
        store.save().map_err(|e| Failure::config(e.to_string()))?;
        for (name, file, server) in trusted {
            if !self.cli.json {
                outln!(
                    "trusted {name:?} of {}: {}",
                    file.display(),
                    command_line(server)
                );
            }
        }
        if self.cli.json {
            print_json(&json!({ "trusted": names }));
        }
        Ok(())
    }
    /// `untrust NAME…`: takes the trust back.
    pub(crate) fn untrust(&self, names: &[String]) -> Result<(), Failure> {
        let mut store = store()?;
        let mut taken = Vec::new();
        for name in names {
            let (file, _) = self.project_server(name)?;
            if store.untrust(&file, name) {
                taken.push(name.clone());
            }
        }
        store.save().map_err(|e| Failure::config(e.to_string()))?;
        if self.cli.json {
            print_json(&json!({ "untrusted": taken }));
        } else {
            for name in names {
                let was = if taken.contains(name) {
                    ""
                } else {
                    " (it was not trusted)"
                };
                outln!("untrusted {name:?}{was}");
            }
        }
        Ok(())
    }
    /// The project server `name`: its file and entry, or why it is none.
    fn project_server(&self, name: &str) -> Result<(PathBuf, &ServerConfig), Failure> {
        let config = &self.servers.config;
        match (self.project_file(name), config.server(name)) {
            (Some(file), Some(server)) => Ok((file.to_path_buf(), server)),
            _ => {
                let project: Vec<&str> = config
                    .names()
                    .filter(|n| self.project_file(n).is_some())
                    .collect();
                let hint = did_you_mean(name, project.iter().copied());
                let listed = if project.is_empty() {
                    " (no project file here or above defines any: .mcp.json, .vscode/mcp.json, .cursor/mcp.json)".to_owned()
                } else {
                    format!("{hint}; the project servers: {}", project.join(", "))
                };
                Err(Failure::usage(format!(
                    "{name:?} is not a project server{listed}"
                )))
            }
        }
    }
    /// `trust` alone: every project server, its state and its command line.
    fn trust_list(&self) -> Result<(), Failure> {
        let config = &self.servers.config;
        let project: Vec<&ServerConfig> = config
            .servers()
            .iter()
            .filter(|s| self.project_file(&s.name).is_some())
            .collect();
        let store = if project.is_empty() {
            None
        } else {
            Some(store()?)
        };
        let mut rows = Vec::new();
        for server in project {
            let file = self.project_file(&server.name).unwrap_or(Path::new(""));
            let state = store
                .as_ref()
                .map_or(TrustState::Untrusted, |s| s.state(file, server));
            let changes = match &state {
                TrustState::Changed(parts) => parts.clone(),
                _ => Vec::new(),
            };
            rows.push((server, file, state, changes));
        }
        if self.cli.json {
            let rows: Vec<Value> = rows
                .iter()
                .map(|(server, file, state, changes)| {
                    json!({ "name": server.name, "state": state_name(state), "file": file,
                            "command": std::iter::once(&server.command).chain(&server.args).collect::<Vec<_>>(),
                            "changes": changes, "sandbox": crate::reach::rules_json(server),
                            "fetches": crate::reach::fetch_json(server) })
                })
                .collect();
            print_json(&json!({ "servers": rows }));
            return Ok(());
        }
        for (server, file, state, _) in rows {
            let sandboxed = if server.sandbox.is_some() {
                " (sandboxed)"
            } else {
                ""
            };
            outln!(
                "{:<20} {:<40} {}{sandboxed}",
                server.name,
                state.to_string(),
                file.display()
            );
            outln!("    {}", command_line(server));
            if let Some(line) = crate::reach::fetch_line(server) {
                outln!("    fetches: {line}");
            }
            for line in crate::reach::rule_lines(server) {
                outln!("    sandbox: {line}");
            }
        }
        Ok(())
    }
}
