//! A client's tools: listing them, calling one (as a task when the server
//! makes it one), and the catalog [`Client::tools`] serves from a cache kept
//! fresh by the server's `ttlMs`, its tools `list_changed` notifications (a
//! modern server's through a `subscriptions/listen` the client opens for
//! them) and restarts; with feature `validate`, the checks of arguments and
//! results against the tools' schemas.

pub(super) mod cache;
pub(super) mod guard;
pub(super) mod ledger;
pub(super) mod safety;
#[cfg(feature = "validate")]
pub(super) mod validation;

use std::sync::Arc;
use std::time::Instant;

use futures::{FutureExt, StreamExt};
use serde::Serialize;
use serde_json::{json, Value};

use crate::error::Error;

use super::client::{excerpt, Client};
use super::era::Era;
use super::model::task_status::TaskSupport;
use super::model::types::{CallToolResult, Progress, Tool};
use super::request::{CallOptions, Caller, ProgressRoute};
use super::subscription::ListenFilter;
use super::tasks::{created_task, Following};
use super::telemetry::in_span;
use super::tools::cache::{Look, Version};
#[cfg(feature = "validate")]
use super::validation::{problems, Checked, Invalid, Validation};
use super::wire::{decode, explain_missing_capability};

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
    /// let client = stdio_mcp::client::Client::connect(["my-mcp-server"]).await?;
    /// // Before each turn of a conversation: no request unless the list changed.
    /// for tool in client.tools().await? {
    ///     println!("{}: {}", tool.name, tool.description.unwrap_or_default());
    /// }
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn tools(&self) -> Result<Vec<Tool>, Error> {
        let tools = self.cached_tools().await;
        self.named(tools.map(|tools| self.visible(tools).to_vec()))
    }

    /// Whether the server's fresh tool list has `name`, held back or not
    /// (read from the cache, no copy).
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
                    let tools: Arc<[Tool]> = listing.items.into();
                    let cached = Arc::clone(&tools);
                    self.inner.tools.store(cached, listing.fresh_until, version);
                    self.note_listing(&tools);
                    return Ok(tools);
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

    /// Every tool, across all pages, asked of the server now; the list
    /// [`tools`](Self::tools) serves is refreshed with it. Tools held back
    /// ([`ClientBuilder::hold_tool_changes`](super::ClientBuilder::hold_tool_changes))
    /// are left out.
    ///
    /// # Errors
    ///
    /// The transport's error, or [`Error::Protocol`] for a malformed list.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::connect(["my-mcp-server"]).await?;
    /// for tool in client.list_tools().await? {
    ///     println!("{}: {}", tool.name, tool.description.unwrap_or_default());
    /// }
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn list_tools(&self) -> Result<Vec<Tool>, Error> {
        let version = self.tools_version();
        let listing = self.listing::<Tool>().await?;
        let tools: Arc<[Tool]> = listing.items.into();
        let cached = Arc::clone(&tools);
        self.inner.tools.store(cached, listing.fresh_until, version);
        self.note_listing(&tools);
        Ok(self.visible(tools).to_vec())
    }

    /// Calls a tool. A tool that reports failure gives `Ok` with `is_error: true`.
    /// `arguments` is anything that serializes to a JSON object (`json!({..})`,
    /// a struct, a map), or to `null` for none.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidArguments`](crate::ErrorKind::InvalidArguments) when
    /// `arguments` is neither an object nor `null` (nothing is sent); else the
    /// server's or the transport's error. An unknown tool is an `Ok` result
    /// with `is_error` set from some servers (the TypeScript and Python SDKs'),
    /// an [`ErrorKind::Rpc`](crate::ErrorKind::Rpc) error (`-32602`) from others:
    /// handle both.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::connect(["my-mcp-server"]).await?;
    /// let result = client.call_tool("echo", serde_json::json!({"message": "hi"})).await?;
    /// if result.is_error {
    ///     eprintln!("the tool failed: {}", result.text());
    /// }
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<CallToolResult, Error> {
        self.call_tool_with(name, arguments, CallOptions::new())
            .await
    }

    /// Calls a tool with a progress token; each `notifications/progress` for it is
    /// handed to `on_progress` in order, all before this resolves. Other calls
    /// never see them.
    ///
    /// The client's default limit ([`ClientBuilder::request_timeout`](super::ClientBuilder::request_timeout))
    /// restarts with each progress, so a call that keeps reporting is never cut
    /// short by it. For other limits (one that progress restarts or not, a cap
    /// on the whole call) use [`call_tool_with`](Self::call_tool_with) and
    /// [`CallOptions`].
    ///
    /// # Errors
    ///
    /// As for [`call_tool`](Self::call_tool).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::connect(["my-mcp-server"]).await?;
    /// let result = client
    ///     .call_tool_with_progress("build", serde_json::json!({}), |p| {
    ///         println!("{} of {:?}: {}", p.progress, p.total, p.message.as_deref().unwrap_or(""))
    ///     })
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn call_tool_with_progress(
        &self,
        name: &str,
        arguments: impl Serialize,
        on_progress: impl FnMut(&Progress) + Send + 'static,
    ) -> Result<CallToolResult, Error> {
        self.call_tool_with(name, arguments, CallOptions::new().on_progress(on_progress))
            .await
    }

    /// [`call_tool`](Self::call_tool) with per-call `options`: time limits that
    /// progress may restart, a cap on the whole call, extra `_meta`, progress.
    ///
    /// # Errors
    ///
    /// As for [`request`](Self::request).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use std::time::Duration;
    /// use serde_json::json;
    /// use stdio_mcp::client::{CallOptions, Client};
    ///
    /// let client = Client::connect(["my-mcp-server"]).await?;
    /// let built = client
    ///     .call_tool_with(
    ///         "build",
    ///         json!({"target": "release"}),
    ///         CallOptions::new()
    ///             .timeout(Duration::from_secs(30))
    ///             .reset_timeout_on_progress(true)
    ///             .max_total_time(Duration::from_secs(1800))
    ///             .on_progress(|p| println!("{:?}", p.message)),
    ///     )
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: impl Serialize,
        mut options: CallOptions,
    ) -> Result<CallToolResult, Error> {
        let arguments = match serde_json::to_value(arguments) {
            Ok(arguments) => arguments,
            Err(error) => {
                return self.named(Err(Error::InvalidArguments(format!(
                    "the arguments of tool {name} cannot be made JSON: {error}"
                ))))
            }
        };
        #[cfg(feature = "validate")]
        {
            let checked = self.check_arguments(name, &arguments).await;
            self.named(checked)?;
        }
        if !matches!(arguments, Value::Null | Value::Object(_)) {
            return self.named(Err(Error::InvalidArguments(format!(
                "the arguments of tool {name} must be a JSON object, not {}",
                excerpt(&arguments)
            ))));
        }
        self.named(self.vet(name, &arguments).await)?;
        // No arguments: the key is left out.
        let mut params = match arguments {
            Value::Null => json!({ "name": name }),
            arguments => json!({ "name": name, "arguments": arguments }),
        };
        let (as_task, on_task, limit) = options.take_task_part();
        // A task's progress outlives its `tools/call` request: the call
        // routes its token for its whole life, and the request carries it.
        let progress = options.take_on_progress().map(|user| {
            ProgressRoute::open(&self.inner.inbound, self.progress_token(), Some(user))
        });
        if let Some(route) = &progress {
            options = route.carried_by(options);
        }
        let started = Instant::now();
        let era = self.era();
        if era == Era::Legacy && self.runs_tool_tasks() {
            let support = match self.cached_tools().await {
                Ok(tools) => tools
                    .iter()
                    .find(|tool| tool.name == name)
                    .map_or(TaskSupport::Forbidden, Tool::task_support),
                Err(_) => TaskSupport::Forbidden,
            };
            if support == TaskSupport::Required || (support == TaskSupport::Optional && as_task) {
                params["task"] = json!({});
            }
        }
        // One span for the call, a task's polls under it.
        let operation = self
            .inner
            .telemetry
            .tool_call(name, &self.inner.session.protocol_version);
        let caller = Caller {
            within: Some(&operation),
            ..self.caller()
        };
        let request = caller.call(
            || self.progress_token(),
            "tools/call",
            Some(params),
            options,
        );
        let sent = in_span!(operation, request);
        let sent = self.named(sent.map_err(explain_missing_capability));
        let called = match sent {
            Err(error) => Err(error),
            Ok(result) => match created_task(era, &result) {
                Some(task) => {
                    let following = Following {
                        on_task,
                        limit: limit.map(|limit| (limit, started + limit)),
                        cancel_on_drop: true,
                    };
                    let followed = in_span!(operation, self.follow_task(era, task, following));
                    self.named(followed)
                }
                None => self.named(decode::<CallToolResult>("tools/call", result)),
            },
        };
        operation.end_call(
            called.as_ref().is_ok_and(|r| r.is_error),
            called.as_ref().err(),
        );
        let result = called?;
        #[cfg(feature = "validate")]
        {
            let checked = self.check_result(name, &result).await;
            self.named(checked)?;
        }
        Ok(result)
    }

    /// What stands before a call is written: a held tool is refused, then
    /// the host's hook is asked. Both look at a fresh listing.
    async fn vet(&self, name: &str, arguments: &Value) -> Result<(), Error> {
        if self.inner.guard.hold {
            // A change announced since the last listing is seen first.
            let _ = self.cached_tools().await;
            self.refuse_held(name)?;
        }
        self.approve(name, arguments).await
    }

    /// Whether a 2025-11-25 server takes tool calls as tasks
    /// (`tasks.requests.tools.call` among its capabilities).
    fn runs_tool_tasks(&self) -> bool {
        self.server_capabilities()
            .extra
            .get("tasks")
            .and_then(|t| t.get("requests"))
            .and_then(|r| r.get("tools"))
            .and_then(|t| t.get("call"))
            .is_some()
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
