//! The tool catalog of a client: [`Client::tools`] from a cache kept fresh by
//! the server's `ttlMs`, its tools `list_changed` notifications (a modern
//! server's through a `subscriptions/listen` the client opens for them) and
//! restarts.

use std::sync::Arc;

use futures::{FutureExt, StreamExt};
use serde_json::Value;

use crate::error::Error;

use super::connected::Client;
use super::era::Era;
use super::subscription::ListenFilter;
use super::tool_cache::{Look, Version};
#[cfg(feature = "validate")]
use super::types::CallToolResult;
use super::types::Tool;
#[cfg(feature = "validate")]
use super::validation::{problems, Checked, Invalid, Validation};

impl Client {
    /// The server's tools, from the list this client keeps: listed (every
    /// page) the first time, then again only when the list's `ttlMs` has run
    /// out, after the server said its tools changed (`list_changed`, in either
    /// era), or after a restart. Callers that find the list stale at the same
    /// time share one listing. [`list_tools`](Self::list_tools) always asks
    /// the server, and refreshes this list.
    ///
    /// With a modern server that declares `tools.listChanged`, the first call
    /// opens a `subscriptions/listen` for those notifications, kept while the
    /// client lives.
    ///
    /// # Errors
    ///
    /// As for [`list_tools`](Self::list_tools).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::connect(stdio_mcp::Transport::builder(["my-mcp-server"])).await?;
    /// // Before each turn of a conversation: no request unless the list changed.
    /// for tool in client.tools().await? {
    ///     println!("{}: {}", tool.name, tool.description.unwrap_or_default());
    /// }
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn tools(&self) -> Result<Vec<Tool>, Error> {
        let tools = self.cached_tools().await;
        self.named(tools.map(|tools| tools.to_vec()))
    }

    /// Whether the server's fresh tool list has `name` (read from the cache,
    /// no copy).
    pub(crate) async fn offers_tool(&self, name: &str) -> Result<bool, Error> {
        let tools = self.named(self.cached_tools().await)?;
        Ok(tools.iter().any(|tool| tool.name == name))
    }

    /// The fresh list, shared with the cache (no copy).
    pub(super) async fn cached_tools(&self) -> Result<Arc<[Tool]>, Error> {
        self.watch_tool_changes().await;
        loop {
            let version = self.tools_version();
            match self.inner.tools.look(version) {
                Look::Fresh(tools) => return Ok(tools),
                Look::Wait(listed) => listed.await,
                Look::List(_listing) => {
                    let listing = self.every_page::<Tool>().await?;
                    self.inner
                        .tools
                        .store(&listing.items, listing.fresh_until, version);
                    return Ok(listing.items.into());
                }
            }
        }
    }

    /// Where the server's tools stand now: the changes it announced and its restarts.
    pub(super) fn tools_version(&self) -> Version {
        Version {
            changes: self.inner.inbound.tool_changes(),
            restarts: self.inner.life.restarts(),
        }
    }

    /// A modern server sends `list_changed` only to a listen that asks for
    /// it: opened once, on the first call that needs the list.
    async fn watch_tool_changes(&self) {
        let announces = self
            .server_capabilities()
            .tools
            .as_ref()
            .and_then(|tools| tools.get("listChanged"))
            == Some(&Value::Bool(true));
        if self.era() != Era::Modern || !announces {
            return;
        }
        let mut watch = self.inner.tool_watch.lock().await;
        match watch.as_mut() {
            // What it delivered was counted on the way in; only drop it here.
            Some(Some(stream)) => while let Some(Some(_)) = stream.next().now_or_never() {},
            Some(None) => {}
            None => {
                let opened = self.listen(ListenFilter::new().tools_list_changed()).await;
                if let Err(_error) = &opened {
                    event!(warn, error = %_error, "could not listen for tools list_changed: the tool list is refreshed by its ttl only");
                }
                *watch = Some(opened.ok());
            }
        }
    }
}

#[cfg(feature = "validate")]
impl Client {
    /// Checks a call's arguments against the tool's `inputSchema`, as the
    /// client was built to (the tool list is read first if it is empty).
    pub(super) async fn check_arguments(&self, tool: &str, arguments: &Value) -> Result<(), Error> {
        if self.inner.checks.arguments == Validation::Off {
            return Ok(());
        }
        self.cached_tools().await?;
        let empty = Value::Object(serde_json::Map::new());
        let arguments = if arguments.is_null() {
            &empty
        } else {
            arguments
        };
        self.check(tool, Checked::Arguments, arguments)
            .map_err(Error::InvalidArguments)
    }

    /// Checks a result's `structuredContent` against the tool's
    /// `outputSchema` (never a result that reports failure).
    pub(super) async fn check_result(
        &self,
        tool: &str,
        result: &CallToolResult,
    ) -> Result<(), Error> {
        if self.inner.checks.results == Validation::Off || result.is_error {
            return Ok(());
        }
        self.cached_tools().await?;
        let missing = Value::Null;
        let structured = result.structured_content.as_ref().unwrap_or(&missing);
        self.check(tool, Checked::Result, structured)
            .map_err(Error::Protocol)
    }

    /// `Err` with the report's text when the mismatch is enforced.
    fn check(&self, tool: &str, checked: Checked, value: &Value) -> Result<(), String> {
        let checks = &self.inner.checks;
        let Some((compiled, first)) = self.inner.tools.validator(tool, checked) else {
            return Ok(());
        };
        let validator = match compiled {
            Ok(validator) => validator,
            Err(why) => {
                if first {
                    checks.report(&Invalid {
                        tool: tool.to_owned(),
                        checked,
                        problems: vec![why],
                        unusable_schema: true,
                    });
                }
                return Ok(());
            }
        };
        let problems = problems(&validator, value);
        if problems.is_empty() {
            return Ok(());
        }
        let invalid = Invalid {
            tool: tool.to_owned(),
            checked,
            problems,
            unusable_schema: false,
        };
        checks.report(&invalid);
        match checks.mode(checked) {
            Validation::Enforce => Err(invalid.to_string()),
            _ => Ok(()),
        }
    }
}
