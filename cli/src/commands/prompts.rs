//! `stdio-mcp prompts [SERVER]`.

use serde_json::{json, Value};

use super::*;
use crate::failure::Failure;
use crate::output::outln;
use crate::session::{print_json, Session};

impl Session {
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
}
