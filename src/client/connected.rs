//! The connected client: what the server said of itself, and every request
//! of the MCP API, in whichever era the server speaks.

use std::collections::HashSet;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use crate::child::ExitStatus;
use crate::error::Error;
use crate::transport::{Close, Transport};

use super::call::{self, CallOptions};
use super::era::Era;
use super::handlers::InputHandlers;
use super::inbound::{Routes, Subscription};
use super::life::{ClientState, Life};
use super::session::Session;
use super::tool_cache::ToolCache;
use super::types::{
    CallToolResult, CompleteResult, GetPromptResult, Implementation, ListItem, Listing,
    LoggingLevel, Progress, Prompt, ReadResourceResult, Resource, ResourceTemplate,
    ServerCapabilities, Tool,
};
use super::wire::{decode, Protocol, META_LOG_LEVEL};

/// A connected MCP client: the handshake is done, the server is ready.
///
/// Created by [`Client::connect`] or [`Client::builder`]. Every operation is a
/// request on the underlying [`Transport`], so its timeout and errors apply.
///
/// # Examples
///
/// ```no_run
/// # futures::executor::block_on(async {
/// use serde_json::json;
/// use stdio_mcp::client::Client;
/// use stdio_mcp::Transport;
///
/// let client = Client::connect(Transport::builder(["uvx", "mcp-server-time"])).await?;
/// let now = client.call_tool("get_current_time", json!({"timezone": "Europe/Paris"})).await?;
/// println!("{}", now.text());
/// client.close().await?;
/// # Ok::<(), stdio_mcp::Error>(()) });
/// ```
#[derive(Clone)]
pub struct Client {
    pub(super) inner: Arc<Connected>,
}

/// What every clone of a client shares.
pub(super) struct Connected {
    /// The server process calls go to (replaced when it restarts).
    pub(super) life: Arc<Life>,
    pub(super) session: Session,
    /// The handlers that answer a modern server's input requests.
    pub(super) inputs: InputHandlers,
    pub(super) progress: Arc<Routes>,
    next_token: AtomicU64,
    /// The limit of a call that has none of its own or from the transport.
    request_timeout: Option<Duration>,
    /// The server's name in errors: its config name, else its program.
    name: String,
    /// The tool list `tools()` serves.
    pub(super) tools: ToolCache,
    /// The listen for a modern server's tools `list_changed`: `None` until
    /// the first `tools()`, then the stream if the server took it.
    pub(super) tool_watch: futures::lock::Mutex<Option<Option<Subscription>>>,
    /// What is checked against the tools' schemas.
    #[cfg(feature = "validate")]
    pub(super) checks: super::validation::Checks,
}

impl Client {
    pub(super) fn new(
        life: Arc<Life>,
        session: Session,
        inputs: InputHandlers,
        progress: Arc<Routes>,
        request_timeout: Option<Duration>,
        name: String,
    ) -> Self {
        Client {
            inner: Arc::new(Connected {
                life,
                session,
                inputs,
                progress,
                next_token: AtomicU64::new(1),
                request_timeout,
                name,
                tools: ToolCache::default(),
                tool_watch: futures::lock::Mutex::new(None),
                #[cfg(feature = "validate")]
                checks: super::validation::Checks::default(),
            }),
        }
    }

    /// The new client, checking what `checks` says.
    #[cfg(feature = "validate")]
    pub(super) fn with_checks(mut self, checks: super::validation::Checks) -> Self {
        Arc::get_mut(&mut self.inner)
            .expect("a client just made has no clone")
            .checks = checks;
        self
    }

    /// The server's name, version, title and whatever else it said about itself.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::connect(stdio_mcp::Transport::builder(["my-mcp-server"])).await?;
    /// println!("{} {}", client.server_info().name, client.server_info().version);
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    #[must_use]
    pub fn server_info(&self) -> &Implementation {
        &self.inner.session.server_info
    }

    /// The capabilities the server declared.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::connect(stdio_mcp::Transport::builder(["my-mcp-server"])).await?;
    /// if client.server_capabilities().tools.is_some() {
    ///     println!("{} tools", client.list_tools().await?.len());
    /// }
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    #[must_use]
    pub fn server_capabilities(&self) -> &ServerCapabilities {
        &self.inner.session.capabilities
    }

    /// The protocol revision both sides agreed on: one of
    /// [`MODERN_PROTOCOL_VERSIONS`](super::MODERN_PROTOCOL_VERSIONS) with a
    /// modern server, of [`LEGACY_PROTOCOL_VERSIONS`](super::LEGACY_PROTOCOL_VERSIONS)
    /// with a legacy one.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::{Client, Era, LEGACY_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS};
    ///
    /// let client = Client::connect(stdio_mcp::Transport::builder(["my-mcp-server"])).await?;
    /// let known = match client.era() {
    ///     Era::Modern => &MODERN_PROTOCOL_VERSIONS[..],
    ///     _ => &LEGACY_PROTOCOL_VERSIONS[..],
    /// };
    /// assert!(known.contains(&client.protocol_version()));
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    #[must_use]
    pub fn protocol_version(&self) -> &str {
        &self.inner.session.protocol_version
    }

    /// The era this client speaks with its server: [`Era::Modern`] or
    /// [`Era::Legacy`] (decided once, at connect).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::{Client, Era};
    ///
    /// let client = Client::connect(stdio_mcp::Transport::builder(["my-mcp-server"])).await?;
    /// assert_ne!(client.era(), Era::Auto);
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    #[must_use]
    pub fn era(&self) -> Era {
        self.inner.session.era
    }

    /// The server's usage instructions, if it gave any.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::connect(stdio_mcp::Transport::builder(["my-mcp-server"])).await?;
    /// if let Some(hints) = client.instructions() {
    ///     println!("the server suggests: {hints}");
    /// }
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    #[must_use]
    pub fn instructions(&self) -> Option<&str> {
        self.inner.session.instructions.as_deref()
    }

    /// A handle to the underlying transport of the current server process
    /// (for raw requests, `respond`, `stderr_tail`, …). After a restart
    /// ([`ClientBuilder::restart`](super::ClientBuilder::restart)) it is the new process's.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::connect(stdio_mcp::Transport::builder(["my-mcp-server"])).await?;
    /// let raw = client.transport().send_request("tools/list", None).await?;
    /// println!("{raw}");
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    #[must_use]
    pub fn transport(&self) -> Transport {
        self.inner.life.current()
    }

    /// How many times the server was started again since `connect`
    /// (see [`ClientBuilder::restart`](super::ClientBuilder::restart)).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::{Client, RestartPolicy};
    ///
    /// let client = Client::builder(stdio_mcp::Transport::builder(["my-mcp-server"]))
    ///     .restart(RestartPolicy::default())
    ///     .connect()
    ///     .await?;
    /// assert_eq!(client.restarts(), 0);
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    #[must_use]
    pub fn restarts(&self) -> u64 {
        self.inner.life.restarts()
    }

    async fn typed<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> Result<T, Error> {
        let result = self.request(method, params, CallOptions::new()).await?;
        self.named(decode(method, result))
    }

    /// `outcome`, its error naming this client's server; a refusal after
    /// `close()` says the client was closed.
    pub(super) fn named<T>(&self, outcome: Result<T, Error>) -> Result<T, Error> {
        outcome.map_err(|error| {
            let error = match error {
                Error::NotAlive if self.inner.life.is_closed() => Error::Closed,
                other => other,
            };
            error.named(&self.inner.name)
        })
    }

    /// The protocol fields of a request in this session's era (none in the
    /// legacy era, where the handshake carried them).
    pub(super) fn protocol(&self) -> Protocol<'_> {
        let default_limit = self.inner.request_timeout;
        let Some(fields) = &self.inner.session.meta else {
            return Protocol {
                default_limit,
                ..Protocol::default()
            };
        };
        let level = self.inner.life.log_level();
        let members = self
            .inner
            .session
            .meta_members
            .as_deref()
            .unwrap_or_default();
        let log_level = level.map(|level| json!(level));
        let members = match &log_level {
            None => std::borrow::Cow::Borrowed(members),
            Some(level) => {
                std::borrow::Cow::Owned(format!("{members},\"{}\":{level}", META_LOG_LEVEL))
            }
        };
        Protocol {
            default_limit,
            fields: Some(fields),
            members: Some(members),
            log_level,
        }
    }

    /// Sends any request with per-call `options` (time limits, extra `_meta`,
    /// progress) and returns its raw `result`.
    ///
    /// # Errors
    ///
    /// The transport's error; [`Error::Timeout`] when a limit of `options` runs
    /// out (the request is then cancelled on the wire); [`Error::Protocol`]
    /// when `_meta` cannot be added (params that are not a JSON object).
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
    /// let page = client
    ///     .request(
    ///         "resources/list",
    ///         None,
    ///         CallOptions::new().timeout(Duration::from_secs(5)).meta(json!({"traceparent": "00-..."})),
    ///     )
    ///     .await?;
    /// println!("{page}");
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        options: CallOptions,
    ) -> Result<Value, Error> {
        if let Some(other) = params.as_ref().filter(|p| !p.is_object()) {
            return self.named(Err(Error::InvalidArguments(format!(
                "the params of {method} must be a JSON object, not {}",
                excerpt(other)
            ))));
        }
        let token = || {
            Value::String(format!(
                "stdio-mcp-{}",
                self.inner.next_token.fetch_add(1, Ordering::Relaxed)
            ))
        };
        let protocol = self.protocol();
        let outcome = call::call(
            &self.inner.life,
            &self.inner.progress,
            protocol,
            &self.inner.inputs,
            token,
            method,
            params,
            options,
        )
        .await;
        self.named(outcome)
    }

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
        options: CallOptions,
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
        let params = match arguments {
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
        let result = self.request("tools/call", Some(params), options).await?;
        let result: CallToolResult = self.named(decode("tools/call", result))?;
        #[cfg(feature = "validate")]
        {
            let checked = self.check_result(name, &result).await;
            self.named(checked)?;
        }
        Ok(result)
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

    /// Closes the server for this client and every clone of it (see
    /// [`Transport::close`]): no restart follows, every
    /// [`listen`](Self::listen) stream ends after what it holds, and calls
    /// made afterwards fail with [`ErrorKind::Closed`](crate::ErrorKind::Closed).
    /// It takes effect at the call; the future resolves to how the server
    /// exited.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::connect(stdio_mcp::Transport::builder(["my-mcp-server"])).await?;
    /// let status = client.close().await?;
    /// println!("the server exited with {status}");
    /// assert!(!client.transport().is_alive());
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn close(&self) -> ClientClose {
        ClientClose {
            close: self.inner.life.close(),
            transport: self.inner.life.current(),
            client: self.clone(),
        }
    }

    /// Where the server is now: ready, restarting, gone for good, or closed.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::{Client, ClientState};
    ///
    /// let client = Client::connect(stdio_mcp::Transport::builder(["my-mcp-server"])).await?;
    /// assert_eq!(client.state(), ClientState::Ready);
    /// client.close().await?;
    /// assert_eq!(client.state(), ClientState::Closed);
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    #[must_use]
    pub fn state(&self) -> ClientState {
        self.inner.life.state()
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.inner.session.server_info.name)
            .field("era", &self.inner.session.era)
            .field("protocol_version", &self.inner.session.protocol_version)
            .field("life", &self.inner.life)
            .finish_non_exhaustive()
    }
}

/// The future of [`Client::close`]: resolves once the server has exited, to
/// its exit status (a signal's on Unix, when the close ladder needed one).
///
/// ```no_run
/// # futures::executor::block_on(async {
/// let client = stdio_mcp::client::Client::connect(stdio_mcp::Transport::builder(["my-mcp-server"])).await?;
/// let closing: stdio_mcp::client::ClientClose = client.close();
/// assert!(closing.await?.success());
/// # Ok::<(), stdio_mcp::Error>(()) });
/// ```
#[must_use = "the close takes effect at once; await this to learn how the server exited"]
pub struct ClientClose {
    close: Close,
    transport: Transport,
    client: Client,
}

impl Future for ClientClose {
    type Output = Result<ExitStatus, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let closed = std::task::ready!(Pin::new(&mut this.close).poll(cx));
        let status = closed.map(|()| {
            // Known once the close resolved: it waits for the exit.
            this.transport
                .exit_status()
                .unwrap_or_else(ExitStatus::unknown)
        });
        Poll::Ready(this.client.named(status))
    }
}

impl fmt::Debug for ClientClose {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientClose")
            .field("server", &self.client.inner.name)
            .field("close", &self.close)
            .finish()
    }
}

/// A value as an error quotes it: its JSON, cut short if long.
fn excerpt(value: &Value) -> String {
    let mut text = value.to_string();
    if text.len() > 80 {
        let mut end = 80;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}
