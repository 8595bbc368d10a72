//! What asks one server: a tool call, a prompt, a resource read, its info.

use std::time::Duration;

use serde_json::{json, Value};
use stdio_mcp::client::CallOptions;
use stdio_mcp::group::ServerState;

use crate::arguments;
use crate::commands::{failed, print_json, Session};
use crate::failure::{did_you_mean, Failure, SERVER_SAID_NO};
use crate::output::outln;

impl Session {
    /// `call SERVER TOOL [ARG...]`.
    pub(crate) async fn call(
        &self,
        server: Option<String>,
        tool: &str,
        words: &[String],
        whole: Option<&str>,
    ) -> Result<(), Failure> {
        let (config, server) = self.config_for(server.as_deref())?;
        let server = server.unwrap_or_default();
        let group = self.group(config).await;
        let tools = group.tools().await;
        if let Some((_, ServerState::Failed(why))) = group.servers().first() {
            return Err(failed(&server, why));
        }
        let Some(found) = tools.iter().find(|t| t.tool.name == tool) else {
            let known = tools.iter().map(|t| t.tool.name.as_str());
            let hint = did_you_mean(tool, known);
            return Err(Failure {
                server: Some(server.clone()),
                ..Failure::usage(format!("server {server:?} has no tool {tool:?}{hint}"))
            });
        };
        let arguments = arguments::parse(words, whole, &found.tool.input_schema)?;
        let client = group.client(&server).await?;
        let (bar, tasks) = (self.bar.clone(), self.bar.clone());
        let mut options = CallOptions::new()
            .on_progress(move |p| bar.progress(p))
            .on_task(move |t| tasks.task(t));
        if let Some(secs) = self.cli.timeout {
            options = options.timeout(Duration::from_secs_f64(secs.max(0.0)));
        }
        let result = client.call_tool_with(tool, arguments, options).await;
        self.bar.finish();
        let result = result?;
        if self.cli.json {
            print_json(&serde_json::to_value(&result).unwrap_or_default());
        } else {
            print_content(&serde_json::to_value(&result.content).unwrap_or_default());
            if let Some(structured) = &result.structured_content {
                if result.text().is_empty() {
                    outln!(
                        "{}",
                        serde_json::to_string_pretty(structured).unwrap_or_default()
                    );
                }
            }
        }
        group.close().await;
        if result.is_error {
            return Err(Failure {
                code: SERVER_SAID_NO,
                kind: "tool".into(),
                // Its text is on stdout already: said once, not again here.
                message: format!("the tool {tool} reported an error (its result is above)"),
                server: Some(server),
                printed: true,
            });
        }
        Ok(())
    }

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
