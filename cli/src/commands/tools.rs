//! `stdio-mcp tools [SERVER]`: one server's tools by their own names, or every server's under the group's names.

use serde_json::{json, Value};
use stdio_mcp::group::ServerState;

use super::*;
use crate::failure::Failure;
use crate::output::{self, errln, outln};
use crate::session::{failed, print_json, Session};

impl Session {
    /// `tools [SERVER]`: one server's tools by their own names, or every
    /// server's under the group's names.
    pub(crate) async fn tools(&self, server: Option<String>) -> Result<(), Failure> {
        let (config, server) = self.config_for(server.as_deref())?;
        let group = self.group(config).await;
        let tools = group.tools().await;
        output::warn(&group.warnings());
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
}
