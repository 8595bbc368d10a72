//! `stdio-mcp prompt SERVER NAME [ARG...]`.

use serde_json::json;

use super::*;
use crate::arguments;
use crate::failure::Failure;
use crate::output::outln;
use crate::session::{print_json, Session};

impl Session {
    /// `prompt SERVER NAME [ARG...]`: prompt arguments are strings.
    pub(crate) async fn prompt(
        &self,
        server: Option<String>,
        name: &str,
        words: &[String],
    ) -> Result<(), Failure> {
        let (config, server) = self.config_for(server.as_deref())?;
        let group = self.group(config).await;
        let client = group.client(&server.unwrap_or_default()).await?;
        let strings = json!({ "type": "object", "additionalProperties": { "type": "string" } });
        let arguments = arguments::parse(words, None, &strings)?;
        let got = client.get_prompt(name, arguments).await?;
        if self.cli.json {
            print_json(&serde_json::to_value(&got).unwrap_or_default());
        } else {
            for message in serde_json::to_value(&got.messages)
                .unwrap_or_default()
                .as_array()
                .into_iter()
                .flatten()
            {
                outln!("[{}]", message["role"].as_str().unwrap_or_default());
                print_content(&json!([message["content"]]));
            }
        }
        group.close().await;
        Ok(())
    }
}
