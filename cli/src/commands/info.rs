//! `stdio-mcp info [SERVER]`: what a server said of itself.

use serde_json::json;

use crate::failure::Failure;
use crate::output::outln;
use crate::session::{print_json, Session};

impl Session {
    /// `info SERVER`.
    pub(crate) async fn info(&self, server: Option<String>) -> Result<(), Failure> {
        let (config, server) = self.config_for(server.as_deref())?;
        let Some(server) = server else {
            return Err(Failure::usage(
                "info needs a SERVER, or a server's command after --",
            ));
        };
        let group = self.group(config).await;
        let client = group.client(&server).await?;
        let info = json!({
            "serverInfo": client.server_info(),
            "era": client.era().to_string(),
            "protocolVersion": client.protocol_version(),
            "capabilities": client.server_capabilities(),
            "instructions": client.instructions(),
        });
        group.close().await;
        if self.cli.json {
            print_json(&info);
            return Ok(());
        }
        let s = client.server_info();
        outln!("server:    {} {}", s.name, s.version);
        outln!(
            "era:       {} (MCP {})",
            client.era(),
            client.protocol_version()
        );
        let capabilities = serde_json::to_value(client.server_capabilities()).unwrap_or_default();
        let offered: Vec<&String> = capabilities
            .as_object()
            .map(|c| c.keys().collect())
            .unwrap_or_default();
        outln!(
            "offers:    {}",
            offered
                .iter()
                .map(|k| k.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        if let Some(instructions) = client.instructions() {
            outln!("instructions:\n{instructions}");
        }
        Ok(())
    }
}
