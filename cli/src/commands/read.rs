//! `stdio-mcp read SERVER URI`.

use crate::failure::Failure;
use crate::output::outln;
use crate::session::{print_json, Session};

impl Session {
    /// `read SERVER URI`.
    pub(crate) async fn read(&self, server: Option<String>, uri: &str) -> Result<(), Failure> {
        let (config, server) = self.config_for(server.as_deref())?;
        let group = self.group(config).await;
        let client = group.client(&server.unwrap_or_default()).await?;
        let read = client.read_resource(uri).await?;
        if self.cli.json {
            print_json(&serde_json::to_value(&read).unwrap_or_default());
        } else {
            for part in serde_json::to_value(&read.contents)
                .unwrap_or_default()
                .as_array()
                .into_iter()
                .flatten()
            {
                match part["text"].as_str() {
                    Some(text) => outln!("{text}"),
                    None => outln!(
                        "({} bytes of {})",
                        part["blob"].as_str().map_or(0, |b| b.len() * 3 / 4),
                        part["mimeType"].as_str().unwrap_or("binary data")
                    ),
                }
            }
        }
        group.close().await;
        Ok(())
    }
}
