//! The MCP methods as typed calls of a [`Client`]: listings (every page),
//! tools, prompts, resources, completion, logging, roots; each in whichever
//! era the server speaks.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{json, Value};

use crate::error::Error;

use super::call::{CallOptions, ProgressRoute};
use super::connected::{excerpt, Client};
use super::era::Era;
use super::listing::{ListItem, Listing};
use super::offers::{
    CompleteResult, GetPromptResult, Prompt, ReadResourceResult, Resource, ResourceTemplate,
};
use super::task::{created_task, Following};
use super::task_status::TaskSupport;
use super::types::{CallToolResult, LoggingLevel, Progress, Tool};
use super::wire::decode;

impl Client {
    /// Every item of a paginated list, following `nextCursor` to the last
    /// page, with the pages' caching hints (see [`Listing`]).
    ///
    /// # Errors
    ///
    /// The transport's error; [`Error::Protocol`] when a page does not fit
    /// the protocol or the server hands out the same cursor twice.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::{Client, ResourceTemplate};
    ///
    /// let client = Client::connect(stdio_mcp::Transport::builder(["my-mcp-server"])).await?;
    /// let templates = client.listing::<ResourceTemplate>().await?;
    /// println!("{} templates, cache scope {:?}", templates.items.len(), templates.cache_scope);
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn listing<T: ListItem>(&self) -> Result<Listing<T>, Error> {
        let listing = self.every_page::<T>().await;
        self.named(listing)
    }

    pub(super) async fn every_page<T: ListItem>(&self) -> Result<Listing<T>, Error> {
        let (method, key) = (T::METHOD, T::FIELD);
        let mut listing = Listing {
            items: Vec::new(),
            fresh_until: None,
            cache_scope: None,
        };
        let mut every_page_has_ttl = true;
        let mut cursor: Option<Value> = None;
        let mut seen = HashSet::new();
        loop {
            let params = cursor.take().map(|c| json!({ "cursor": c }));
            let mut page = self.request(method, params, CallOptions::new()).await?;
            let arrived = std::time::Instant::now();
            let list = page.get_mut(key).map(Value::take).unwrap_or(Value::Null);
            if !list.is_null() {
                listing.items.extend(decode::<Vec<T>>(method, list)?);
            }
            match page.get("ttlMs").and_then(Value::as_i64) {
                Some(ttl) => {
                    let until = arrived + Duration::from_millis(ttl.max(0).unsigned_abs());
                    listing.fresh_until = Some(listing.fresh_until.map_or(until, |u| u.min(until)));
                }
                None => every_page_has_ttl = false,
            }
            if let Some(scope) = page.get("cacheScope").and_then(Value::as_str) {
                if listing.cache_scope.as_deref() != Some("private") {
                    listing.cache_scope = Some(scope.to_owned());
                }
            }
            match page.get("nextCursor") {
                Some(next) if !next.is_null() => {
                    if !seen.insert(next.to_string()) {
                        return Err(Error::Protocol(format!(
                            "{method} returned the cursor {next} twice; stopping rather than looping"
                        )));
                    }
                    cursor = Some(next.clone());
                }
                _ => break,
            }
        }
        if !every_page_has_ttl {
            listing.fresh_until = None;
        }
        Ok(listing)
    }

    /// Checks the server answers.
    ///
    /// # Errors
    ///
    /// The transport's error if it does not.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::connect(stdio_mcp::Transport::builder(["my-mcp-server"])).await?;
    /// client.ping().await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn ping(&self) -> Result<(), Error> {
        // 2026-07-28 has no ping: its lightest request is server/discover.
        let method = match self.inner.session.era {
            Era::Modern => "server/discover",
            _ => "ping",
        };
        self.request(method, None, CallOptions::new())
            .await
            .map(drop)
    }

    /// Every tool, across all pages, asked of the server now; the list
    /// [`tools`](Self::tools) serves is refreshed with it.
    ///
    /// # Errors
    ///
    /// The transport's error, or [`Error::Protocol`] for a malformed list.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::connect(stdio_mcp::Transport::builder(["my-mcp-server"])).await?;
    /// for tool in client.list_tools().await? {
    ///     println!("{}: {}", tool.name, tool.description.unwrap_or_default());
    /// }
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn list_tools(&self) -> Result<Vec<Tool>, Error> {
        let version = self.tools_version();
        let listing = self.listing::<Tool>().await?;
        self.inner
            .tools
            .store(&listing.items, listing.fresh_until, version);
        Ok(listing.items)
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
    /// let client = stdio_mcp::client::Client::connect(stdio_mcp::Transport::builder(["my-mcp-server"])).await?;
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
    /// let client = stdio_mcp::client::Client::connect(stdio_mcp::Transport::builder(["my-mcp-server"])).await?;
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
    /// let client = Client::connect(stdio_mcp::Transport::builder(["my-mcp-server"])).await?;
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
        let mut params = match arguments {
            // No arguments: the key is left out.
            Value::Null => json!({ "name": name }),
            Value::Object(_) => json!({ "name": name, "arguments": arguments }),
            other => {
                return self.named(Err(Error::InvalidArguments(format!(
                    "the arguments of tool {name} must be a JSON object, not {}",
                    excerpt(&other)
                ))))
            }
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
        let result = self.request("tools/call", Some(params), options).await?;
        let result: CallToolResult = match created_task(era, &result) {
            Some(task) => {
                let following = Following {
                    on_task,
                    limit: limit.map(|limit| (limit, started + limit)),
                    cancel_on_drop: true,
                };
                let followed = self.follow_task(era, task, following).await;
                self.named(followed)?
            }
            None => self.named(decode("tools/call", result))?,
        };
        #[cfg(feature = "validate")]
        {
            let checked = self.check_result(name, &result).await;
            self.named(checked)?;
        }
        Ok(result)
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

    /// Every prompt, across all pages.
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
    /// for prompt in client.list_prompts().await? {
    ///     println!("{} ({} arguments)", prompt.name, prompt.arguments.len());
    /// }
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, Error> {
        Ok(self.listing::<Prompt>().await?.items)
    }

    /// A prompt filled in with `arguments` (an object of strings, or `Value::Null`).
    ///
    /// # Errors
    ///
    /// The transport's error.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::connect(stdio_mcp::Transport::builder(["my-mcp-server"])).await?;
    /// let prompt = client.get_prompt("review", serde_json::json!({"code": "fn main() {}"})).await?;
    /// for message in prompt.messages {
    ///     println!("{}: {:?}", message.role, message.content);
    /// }
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn get_prompt(&self, name: &str, arguments: Value) -> Result<GetPromptResult, Error> {
        let mut params = json!({ "name": name });
        if !arguments.is_null() {
            params["arguments"] = arguments;
        }
        self.typed("prompts/get", Some(params)).await
    }

    /// Every resource, across all pages.
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
    /// for resource in client.list_resources().await? {
    ///     println!("{} {}", resource.uri, resource.name);
    /// }
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn list_resources(&self) -> Result<Vec<Resource>, Error> {
        Ok(self.listing::<Resource>().await?.items)
    }

    /// Every resource template, across all pages.
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
    /// for template in client.list_resource_templates().await? {
    ///     println!("{}", template.uri_template);
    /// }
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, Error> {
        Ok(self.listing::<ResourceTemplate>().await?.items)
    }

    /// Reads a resource.
    ///
    /// # Errors
    ///
    /// The transport's error.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::connect(stdio_mcp::Transport::builder(["my-mcp-server"])).await?;
    /// let read = client.read_resource("file:///notes.md").await?;
    /// println!("{}", read.contents[0].text.as_deref().unwrap_or("(binary)"));
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        self.typed("resources/read", Some(json!({ "uri": uri })))
            .await
    }

    /// The least severe `notifications/message` the server should send.
    ///
    /// # Errors
    ///
    /// The transport's error.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::connect(stdio_mcp::Transport::builder(["my-mcp-server"])).await?;
    /// client.set_logging_level(stdio_mcp::client::LoggingLevel::Warning).await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn set_logging_level(&self, level: LoggingLevel) -> Result<(), Error> {
        if self.inner.session.era == Era::Modern {
            // 2026-07-28 has no logging/setLevel: the level rides on each request.
            self.inner.life.set_log_level(level);
            return Ok(());
        }
        self.request(
            "logging/setLevel",
            Some(json!({ "level": level })),
            CallOptions::new(),
        )
        .await?;
        // Kept, to be asked again of a restarted server.
        self.inner.life.set_log_level(level);
        Ok(())
    }

    /// Completion suggestions for argument `name` (typed so far: `value`) of the
    /// prompt or resource template `reference`, e.g.
    /// `json!({"type": "ref/prompt", "name": "greeting"})`.
    ///
    /// # Errors
    ///
    /// The transport's error.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::connect(stdio_mcp::Transport::builder(["my-mcp-server"])).await?;
    /// let ref_ = serde_json::json!({"type": "ref/prompt", "name": "review"});
    /// let done = client.complete(ref_, "language", "py").await?;
    /// println!("{:?}", done.completion.values);
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn complete(
        &self,
        reference: Value,
        name: &str,
        value: &str,
    ) -> Result<CompleteResult, Error> {
        let params = json!({ "ref": reference, "argument": { "name": name, "value": value } });
        self.typed("completion/complete", Some(params)).await
    }

    /// Tells the server that the roots the client offers have changed
    /// (`notifications/roots/list_changed`): it asks again through the
    /// [`on_roots_list`](super::ClientBuilder::on_roots_list) handler.
    ///
    /// # Errors
    ///
    /// [`Error::Protocol`] with a modern server, which has no such
    /// notification (it asks for the roots with each request that needs them);
    /// the transport's error when the server is gone.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use serde_json::json;
    /// use stdio_mcp::client::Client;
    /// use stdio_mcp::Transport;
    ///
    /// let client = Client::builder(Transport::builder(["my-mcp-server"]))
    ///     .on_roots_list(|_| async { Ok(json!({"roots": [{"uri": "file:///srv"}]})) })
    ///     .connect()
    ///     .await?;
    /// // The user opened another folder:
    /// client.notify_roots_changed()?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn notify_roots_changed(&self) -> Result<(), Error> {
        if self.inner.session.era == Era::Modern {
            return self.named(Err(Error::Protocol(format!(
                "MCP {} has no notifications/roots/list_changed: a modern server asks for \
                 the roots with each request that needs them",
                self.inner.session.protocol_version
            ))));
        }
        let sent = self
            .inner
            .life
            .current()
            .send_notification("notifications/roots/list_changed", None);
        self.named(sent)
    }
}
