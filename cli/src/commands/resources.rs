//! `stdio-mcp resources [SERVER]`.

use serde_json::{json, Value};

use super::*;
use crate::failure::Failure;
use crate::output::outln;
use crate::session::{print_json, Session};

impl Session {
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
