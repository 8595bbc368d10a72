//! A thin MCP client on top of the [`Transport`]: the handshake, typed results,
//! pagination, progress, and answers to what the server asks.
//!
//! ```no_run
//! # futures::executor::block_on(async {
//! use serde_json::json;
//! use stdio_mcp::client::Client;
//! use stdio_mcp::Transport;
//!
//! let client = Client::connect(Transport::builder(["npx", "-y", "@modelcontextprotocol/server-everything"])).await?;
//! println!("{} {}", client.server_info().name, client.protocol_version());
//! for tool in client.list_tools().await? {
//!     println!("{}: {}", tool.name, tool.description.unwrap_or_default());
//! }
//! let result = client.call_tool("echo", json!({"message": "hi"})).await?;
//! println!("{}", result.text());
//! client.close().await?;
//! # Ok::<(), stdio_mcp::Error>(()) });
//! ```

mod call;
mod inbound;
mod types;

use std::collections::HashSet;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::builder::Builder;
use crate::driver::Driver;
use crate::error::{Error, RpcError};
use crate::message::ServerRequest;
use crate::pending::RequestOptions;
use crate::transport::Close;
use crate::transport::Transport;

pub use call::CallOptions;
pub use inbound::ServerRequestHandler;
use inbound::{ProgressRoutes, ServerRequests};
pub use types::{
    CallToolResult, CompleteResult, Completion, Content, Extra, GetPromptResult, Implementation,
    LoggingLevel, Progress, Prompt, PromptArgument, PromptMessage, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, ServerCapabilities, Tool,
};

/// Protocol revisions this client speaks, newest first. It offers the first.
///
/// # Examples
///
/// ```
/// use stdio_mcp::client::SUPPORTED_PROTOCOL_VERSIONS;
///
/// assert_eq!(SUPPORTED_PROTOCOL_VERSIONS[0], "2025-11-25"); // offered first
/// ```
pub const SUPPORTED_PROTOCOL_VERSIONS: [&str; 4] =
    ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// How long the handshake may take when the transport has no timeout of its own.
///
/// # Examples
///
/// ```
/// assert_eq!(stdio_mcp::client::DEFAULT_HANDSHAKE_TIMEOUT.as_secs(), 60);
/// ```
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);

/// The server's answer to `initialize`.
#[derive(Debug, Clone, Deserialize)]
struct InitializeResult {
    #[serde(rename = "protocolVersion")]
    protocol_version: String,
    #[serde(default)]
    capabilities: ServerCapabilities,
    #[serde(rename = "serverInfo")]
    server_info: Implementation,
    #[serde(default)]
    instructions: Option<String>,
}

/// Configures a [`Client`] before it connects: client info, handlers for the
/// server's requests, the handshake's time limit.
///
/// ```no_run
/// # futures::executor::block_on(async {
/// use serde_json::json;
/// use stdio_mcp::client::Client;
/// use stdio_mcp::Transport;
///
/// let client = Client::builder(Transport::builder(["my-mcp-server"]))
///     .client_info("my-app", "1.0.0")
///     .on_roots_list(|_| Some(Ok(json!({"roots": [{"uri": "file:///srv", "name": "srv"}]}))))
///     .connect()
///     .await?;
/// # let _ = client; Ok::<(), stdio_mcp::Error>(()) });
/// ```
#[must_use = "a client builder does nothing until connect() is called"]
pub struct ClientBuilder {
    transport: Builder,
    client_info: Implementation,
    requests: ServerRequests,
    handshake_timeout: Duration,
}

impl ClientBuilder {
    /// Starts from a transport builder (command, environment, handlers).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::ClientBuilder;
    /// use stdio_mcp::Transport;
    ///
    /// let client = ClientBuilder::new(Transport::builder(["my-mcp-server"])).connect().await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn new(transport: Builder) -> Self {
        ClientBuilder {
            transport,
            client_info: Implementation {
                name: env!("CARGO_PKG_NAME").to_owned(),
                version: env!("CARGO_PKG_VERSION").to_owned(),
                title: None,
                extra: Extra::new(),
            },
            requests: ServerRequests::default(),
            handshake_timeout: DEFAULT_HANDSHAKE_TIMEOUT,
        }
    }

    /// The name and version sent as `clientInfo` (default: this crate's).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::Client;
    /// use stdio_mcp::Transport;
    ///
    /// let client = Client::builder(Transport::builder(["my-mcp-server"]))
    ///     .client_info("my-editor", "2.4.0")
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn client_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.client_info.name = name.into();
        self.client_info.version = version.into();
        self
    }

    /// Answers the server's `roots/list`; declares the `roots` capability.
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
    ///     .on_roots_list(|_| Some(Ok(json!({"roots": [{"uri": "file:///home/me/project"}]}))))
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn on_roots_list(
        mut self,
        handler: impl FnMut(&ServerRequest) -> Option<Result<Value, RpcError>> + Send + 'static,
    ) -> Self {
        self.requests.roots = Some(Box::new(handler));
        self
    }

    /// Answers the server's `sampling/createMessage`; declares `sampling`.
    /// Return `None` to answer later with [`Transport::respond`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::Client;
    /// use stdio_mcp::{RpcError, Transport};
    ///
    /// let client = Client::builder(Transport::builder(["my-mcp-server"]))
    ///     .on_sampling(|_| Some(Err(RpcError { code: -1, message: "the user declined".into(), data: None })))
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn on_sampling(
        mut self,
        handler: impl FnMut(&ServerRequest) -> Option<Result<Value, RpcError>> + Send + 'static,
    ) -> Self {
        self.requests.sampling = Some(Box::new(handler));
        self
    }

    /// Answers the server's `elicitation/create`; declares `elicitation`.
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
    ///     .on_elicitation(|_| Some(Ok(json!({"action": "decline"}))))
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn on_elicitation(
        mut self,
        handler: impl FnMut(&ServerRequest) -> Option<Result<Value, RpcError>> + Send + 'static,
    ) -> Self {
        self.requests.elicitation = Some(Box::new(handler));
        self
    }

    /// The time limit for `initialize` when the transport has no timeout set
    /// (default 60 s), so a server that never answers cannot hang the caller.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use std::time::Duration;
    /// use stdio_mcp::client::Client;
    /// use stdio_mcp::Transport;
    ///
    /// let client = Client::builder(Transport::builder(["npx", "-y", "some-mcp-server"]))
    ///     .handshake_timeout(Duration::from_secs(120)) // npx may download first
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn handshake_timeout(mut self, limit: Duration) -> Self {
        self.handshake_timeout = limit;
        self
    }

    /// Starts the server on the shared background thread and performs the handshake.
    ///
    /// # Errors
    ///
    /// The transport's error when the server cannot start, dies, or does not answer
    /// in time; [`Error::Protocol`] when it answers with a revision this client
    /// does not support. The server is closed on every failure.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::Client;
    /// use stdio_mcp::Transport;
    ///
    /// let client = Client::builder(Transport::builder(["my-mcp-server"]))
    ///     .client_info("my-host", "1.0")
    ///     .connect()
    ///     .await?;
    /// println!("{}", client.server_info().name);
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn connect(self) -> Result<Client, Error> {
        self.connect_with(crate::background::run).await
    }

    /// As [`connect`](Self::connect), but hands the driver to `run_driver`
    /// (e.g. `|d| { smol::spawn(d).detach(); }`) instead of the background thread.
    ///
    /// # Errors
    ///
    /// As for [`connect`](Self::connect).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # smol::block_on(async {
    /// use stdio_mcp::client::Client;
    /// use stdio_mcp::Transport;
    ///
    /// // The driver runs as a smol task instead of on the shared background thread.
    /// let client = Client::builder(Transport::builder(["my-mcp-server"]))
    ///     .connect_with(|driver| smol::spawn(driver).detach())
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn connect_with(self, run_driver: impl FnOnce(Driver)) -> Result<Client, Error> {
        let ClientBuilder {
            mut transport,
            client_info,
            mut requests,
            handshake_timeout,
        } = self;
        let capabilities = requests.capabilities();
        requests.other = transport.handlers.request.take();
        transport.handlers.request = Some(requests.into_handler());
        let progress = Arc::new(ProgressRoutes::default());
        let user_notifications = transport.handlers.notification.take();
        transport.handlers.notification =
            Some(Arc::clone(&progress).into_handler(user_notifications));

        let (transport, driver) = transport.spawn_with_driver()?;
        run_driver(driver);
        let init = match handshake(&transport, &client_info, capabilities, handshake_timeout).await
        {
            Ok(init) => init,
            Err(e) => {
                // Never leave a half-started server behind.
                let _ = transport.close().await;
                return Err(e);
            }
        };
        Ok(Client {
            transport,
            init,
            progress,
            next_token: AtomicU64::new(1),
        })
    }
}

async fn handshake(
    transport: &Transport,
    client_info: &Implementation,
    capabilities: Value,
    limit: Duration,
) -> Result<InitializeResult, Error> {
    let offered = SUPPORTED_PROTOCOL_VERSIONS[0];
    let params = json!({
        "protocolVersion": offered,
        "capabilities": capabilities,
        "clientInfo": client_info,
    });
    let options = RequestOptions::new().timeout(transport.timeout().unwrap_or(limit));
    let answer = transport
        .send_request_with("initialize", Some(params), options)
        .await?;
    let init: InitializeResult = decode("initialize", answer)?;
    if !SUPPORTED_PROTOCOL_VERSIONS.contains(&init.protocol_version.as_str()) {
        return Err(Error::Protocol(format!(
            "the server answered protocol version {}, which this client does not support \
             (it offered {offered}; it supports {})",
            init.protocol_version,
            SUPPORTED_PROTOCOL_VERSIONS.join(", ")
        )));
    }
    transport.send_notification("notifications/initialized", None)?;
    event!(info, protocol_version = %init.protocol_version, "MCP handshake done");
    Ok(init)
}

fn decode<T: DeserializeOwned>(method: &str, value: Value) -> Result<T, Error> {
    serde_json::from_value(value).map_err(|e| {
        Error::Protocol(format!(
            "the {method} result does not fit the protocol: {e}"
        ))
    })
}

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
pub struct Client {
    transport: Transport,
    init: InitializeResult,
    progress: Arc<ProgressRoutes>,
    next_token: AtomicU64,
}

impl Client {
    /// Spawns the server, sends `initialize` and `notifications/initialized`.
    ///
    /// # Errors
    ///
    /// See [`ClientBuilder::connect`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::Client;
    /// use stdio_mcp::Transport;
    ///
    /// let client = Client::connect(Transport::builder(["npx", "-y", "@modelcontextprotocol/server-everything"])).await?;
    /// println!("{} speaks {}", client.server_info().name, client.protocol_version());
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn connect(transport: Builder) -> Result<Client, Error> {
        ClientBuilder::new(transport).connect().await
    }

    /// A [`ClientBuilder`], to set handlers and client info before connecting.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::Client;
    /// use stdio_mcp::Transport;
    ///
    /// let client = Client::builder(Transport::builder(["my-mcp-server"])).connect().await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn builder(transport: Builder) -> ClientBuilder {
        ClientBuilder::new(transport)
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
        &self.init.server_info
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
        &self.init.capabilities
    }

    /// The protocol revision both sides agreed on.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::connect(stdio_mcp::Transport::builder(["my-mcp-server"])).await?;
    /// assert!(stdio_mcp::client::SUPPORTED_PROTOCOL_VERSIONS.contains(&client.protocol_version()));
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    #[must_use]
    pub fn protocol_version(&self) -> &str {
        &self.init.protocol_version
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
        self.init.instructions.as_deref()
    }

    /// The underlying transport (for raw requests, `respond`, `stderr_tail`, …).
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
    pub fn transport(&self) -> &Transport {
        &self.transport
    }

    async fn typed<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> Result<T, Error> {
        decode(method, self.transport.send_request(method, params).await?)
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
        let token = || {
            Value::String(format!(
                "stdio-mcp-{}",
                self.next_token.fetch_add(1, Ordering::Relaxed)
            ))
        };
        call::call(
            &self.transport,
            &self.progress,
            token,
            method,
            params,
            options,
        )
        .await
    }

    /// Every item of a paginated list, following `nextCursor` to the last page.
    async fn list_all<T: DeserializeOwned>(
        &self,
        method: &str,
        key: &str,
    ) -> Result<Vec<T>, Error> {
        let mut items = Vec::new();
        let mut cursor: Option<Value> = None;
        let mut seen = HashSet::new();
        loop {
            let params = cursor.take().map(|c| json!({ "cursor": c }));
            let mut page = self.transport.send_request(method, params).await?;
            let list = page.get_mut(key).map(Value::take).unwrap_or(Value::Null);
            if !list.is_null() {
                items.extend(decode::<Vec<T>>(method, list)?);
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
                _ => return Ok(items),
            }
        }
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
        self.transport.send_request("ping", None).await.map(drop)
    }

    /// Every tool, across all pages.
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
        self.list_all("tools/list", "tools").await
    }

    /// Calls a tool. A tool that reports failure gives `Ok` with `is_error: true`.
    ///
    /// # Errors
    ///
    /// The transport's error (an unknown tool is usually `Error::Rpc`).
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
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult, Error> {
        self.typed(
            "tools/call",
            Some(json!({ "name": name, "arguments": arguments })),
        )
        .await
    }

    /// Calls a tool with a progress token; each `notifications/progress` for it is
    /// handed to `on_progress` in order, all before this resolves. Other calls
    /// never see them.
    ///
    /// The request's time limit does not restart on progress: it is the limit of
    /// the whole call. For calls that may legitimately run long, set no timeout
    /// (the default) or send the request yourself with [`RequestOptions`].
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
        arguments: Value,
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
        arguments: Value,
        options: CallOptions,
    ) -> Result<CallToolResult, Error> {
        let params = json!({ "name": name, "arguments": arguments });
        decode(
            "tools/call",
            self.request("tools/call", Some(params), options).await?,
        )
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
        self.list_all("prompts/list", "prompts").await
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
        self.list_all("resources/list", "resources").await
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
        self.list_all("resources/templates/list", "resourceTemplates")
            .await
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

    /// Asks for `notifications/resources/updated` when the resource changes;
    /// they arrive at the transport builder's `on_notification`.
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
    /// client.subscribe("file:///notes.md").await?; // updates arrive as notifications/resources/updated
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn subscribe(&self, uri: &str) -> Result<(), Error> {
        self.transport
            .send_request("resources/subscribe", Some(json!({ "uri": uri })))
            .await
            .map(drop)
    }

    /// Stops the updates [`subscribe`](Self::subscribe) asked for.
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
    /// client.subscribe("file:///notes.md").await?;
    /// client.unsubscribe("file:///notes.md").await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), Error> {
        self.transport
            .send_request("resources/unsubscribe", Some(json!({ "uri": uri })))
            .await
            .map(drop)
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
        self.transport
            .send_request("logging/setLevel", Some(json!({ "level": level })))
            .await
            .map(drop)
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

    /// Closes the server (see [`Transport::close`]).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::connect(stdio_mcp::Transport::builder(["my-mcp-server"])).await?;
    /// client.close().await?;
    /// assert!(!client.transport().is_alive());
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn close(&self) -> Close {
        self.transport.close()
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.init.server_info.name)
            .field("protocol_version", &self.init.protocol_version)
            .field("transport", &self.transport)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("transport", &self.transport)
            .field("client_info", &self.client_info)
            .field("handshake_timeout", &self.handshake_timeout)
            .finish_non_exhaustive()
    }
}
