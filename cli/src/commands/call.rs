//! `stdio-mcp call SERVER TOOL [ARG...]`: a tool called, its progress and task shown, its result printed.

use std::time::Duration;

use stdio_mcp::client::CallOptions;
use stdio_mcp::group::ServerState;

use super::*;
use crate::arguments;
use crate::failure::{did_you_mean, Failure, SERVER_SAID_NO};
use crate::output::outln;
use crate::session::{failed, print_json, Session};

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
}
