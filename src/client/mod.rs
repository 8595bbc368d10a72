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
mod restart;
mod session;
mod types;

use std::collections::HashSet;
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use crate::builder::Builder;
use crate::driver::Driver;
use crate::error::{Error, RpcError};
use crate::message::ServerRequest;
use crate::transport::Close;
use crate::transport::Transport;

pub use call::CallOptions;
pub use inbound::ServerRequestHandler;
use inbound::{InputHandlers, Routes};
pub use inbound::{ListenFilter, Subscription};
use restart::{Again, Handoff, Life, RestartHook, Restarter};
pub use restart::{RestartInfo, RestartPolicy, RESTARTED};
use session::{handshake, probe, Hello, Probe, Session};
pub use types::{
    CallToolResult, CompleteResult, Completion, Content, Extra, GetPromptResult, Implementation,
    ListItem, Listing, LoggingLevel, Progress, Prompt, PromptArgument, PromptMessage,
    ReadResourceResult, Resource, ResourceContents, ResourceTemplate, ServerCapabilities, Tool,
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

/// The stateless revisions this client speaks, newest first: no handshake,
/// the protocol fields in each request's `_meta`.
///
/// # Examples
///
/// ```
/// assert_eq!(stdio_mcp::client::MODERN_PROTOCOL_VERSIONS, ["2026-07-28"]);
/// ```
pub const MODERN_PROTOCOL_VERSIONS: [&str; 1] = ["2026-07-28"];

/// How long a silent `server/discover` probe is waited for before the server
/// is taken for a legacy one that ignores unknown requests.
///
/// # Examples
///
/// ```
/// assert_eq!(stdio_mcp::client::DEFAULT_PROBE_TIMEOUT.as_secs(), 10);
/// ```
pub const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Which era of MCP a client speaks with its server.
///
/// [`Modern`](Era::Modern) is the stateless revision 2026-07-28 and later;
/// [`Legacy`](Era::Legacy) the revisions with an `initialize` handshake (up to
/// 2025-11-25). [`Auto`](Era::Auto), the default, asks the server with a
/// `server/discover` probe, as the stdio binding says, and speaks what it
/// answers. [`Client::era`] tells which one it is talking.
///
/// # Examples
///
/// ```no_run
/// # futures::executor::block_on(async {
/// use stdio_mcp::client::{Client, Era};
/// use stdio_mcp::Transport;
///
/// let client = Client::builder(Transport::builder(["uvx", "mcp-server-time"]))
///     .era(Era::Auto)
///     .connect()
///     .await?;
/// if client.era() == Era::Modern {
///     println!("stateless MCP {}", client.protocol_version());
/// }
/// # Ok::<(), stdio_mcp::Error>(()) });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Era {
    /// Probe with `server/discover` and speak what the server answers.
    #[default]
    Auto,
    /// Only 2026-07-28 and later: never `initialize`.
    Modern,
    /// Only the `initialize` handshake revisions.
    Legacy,
}

/// Configures a [`Client`] before it connects: client info, async handlers for
/// what the server asks, the era, the probe's and the handshake's time limits.
///
/// ```no_run
/// # futures::executor::block_on(async {
/// use serde_json::json;
/// use stdio_mcp::client::Client;
/// use stdio_mcp::Transport;
///
/// let client = Client::builder(Transport::builder(["my-mcp-server"]))
///     .client_info("my-app", "1.0.0")
///     .on_roots_list(|_| async { Ok(json!({"roots": [{"uri": "file:///srv", "name": "srv"}]})) })
///     .connect()
///     .await?;
/// # let _ = client; Ok::<(), stdio_mcp::Error>(()) });
/// ```
#[must_use = "a client builder does nothing until connect() is called"]
pub struct ClientBuilder {
    transport: Builder,
    client_info: Implementation,
    requests: InputHandlers,
    handshake_timeout: Duration,
    era: Era,
    probe_timeout: Duration,
    restart: Option<RestartPolicy>,
    on_restart: Option<RestartHook>,
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
            requests: InputHandlers::default(),
            handshake_timeout: DEFAULT_HANDSHAKE_TIMEOUT,
            era: Era::Auto,
            probe_timeout: DEFAULT_PROBE_TIMEOUT,
            restart: None,
            on_restart: None,
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
    /// Handlers are async and run beside the transport's I/O: one that waits
    /// delays no other request of this server or of any other.
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
    ///     .on_roots_list(|_| async { Ok(json!({"roots": [{"uri": "file:///home/me/project"}]})) })
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn on_roots_list<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ServerRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        self.requests.roots = Some(inbound::handler(handler));
        self
    }

    /// Answers the server's `sampling/createMessage`; declares `sampling`.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::Client;
    /// use stdio_mcp::{RpcError, Transport};
    ///
    /// let client = Client::builder(Transport::builder(["my-mcp-server"]))
    ///     .on_sampling(|_| async {
    ///         Err(RpcError { code: -1, message: "the user declined".into(), data: None })
    ///     })
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn on_sampling<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ServerRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        self.requests.sampling = Some(inbound::handler(handler));
        self
    }

    /// Answers the server's `elicitation/create`; declares `elicitation`. The
    /// handler may take its time (ask a person): nothing else waits for it.
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
    ///     .on_elicitation(|request| async move {
    ///         println!("the server asks: {:?}", request.params);
    ///         Ok(json!({"action": "decline"}))
    ///     })
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn on_elicitation<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ServerRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        self.requests.elicitation = Some(inbound::handler(handler));
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

    /// Which era of MCP to speak (default [`Era::Auto`]: probe and follow the
    /// server). [`Era::Modern`] fails to connect to a server that does not
    /// answer the probe as a 2026-07-28 server, naming what it answered;
    /// [`Era::Legacy`] sends `initialize` without a probe.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::{Client, Era};
    /// use stdio_mcp::Transport;
    ///
    /// let client = Client::builder(Transport::builder(["my-legacy-server"]))
    ///     .era(Era::Legacy)
    ///     .connect()
    ///     .await?;
    /// assert_eq!(client.era(), Era::Legacy);
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn era(mut self, era: Era) -> Self {
        self.era = era;
        self
    }

    /// How long a silent `server/discover` probe is waited for (default 10 s)
    /// before the server is taken for a legacy one. The wait includes the
    /// server's start: one that takes longer to start (`npx` downloading a
    /// package the first time) needs more, or [`Era::Modern`] / [`Era::Legacy`]
    /// when its era is known.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use std::time::Duration;
    /// use stdio_mcp::client::Client;
    /// use stdio_mcp::Transport;
    ///
    /// let client = Client::builder(Transport::builder(["my-mcp-server"]))
    ///     .probe_timeout(Duration::from_secs(2))
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn probe_timeout(mut self, limit: Duration) -> Self {
        self.probe_timeout = limit;
        self
    }

    /// Starts the server again when it exits without [`Client::close`], by
    /// `policy` (off unless set; see [`RestartPolicy`]).
    ///
    /// Requests in flight when it exits fail with the exit error (never
    /// retried: that is the caller's choice); calls made while it restarts
    /// wait for the new process. The era is kept: a legacy server is
    /// handshaken again (and must agree on the same revision) and asked again
    /// for the log level and resource subscriptions the client had set;
    /// `listen` subscriptions are asked for again, and each [`Subscription`]
    /// yields a [`RESTARTED`] item for the gap. When the policy gives up, calls fail with the last
    /// exit error. Restarts run wherever the driver runs (the background
    /// thread, or your executor with [`connect_with`](Self::connect_with)).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use std::time::Duration;
    /// use stdio_mcp::client::{Client, RestartPolicy};
    /// use stdio_mcp::Transport;
    ///
    /// let client = Client::builder(Transport::builder(["npx", "-y", "some-mcp-server"]))
    ///     .restart(RestartPolicy::new().max_restarts(3).within(Duration::from_secs(60)))
    ///     .connect()
    ///     .await?;
    /// // Even if the server crashed in between, this goes to a running one.
    /// client.list_tools().await?;
    /// println!("{} restarts so far", client.restarts());
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn restart(mut self, policy: RestartPolicy) -> Self {
        self.restart = Some(policy);
        self
    }

    /// Called just before each restart (see [`restart`](Self::restart)) with
    /// why the previous process ended. It runs where the driver runs: keep it
    /// quick (log, count, notify), never blocking.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::{Client, RestartPolicy};
    /// use stdio_mcp::Transport;
    ///
    /// let client = Client::builder(Transport::builder(["my-mcp-server"]))
    ///     .restart(RestartPolicy::default())
    ///     .on_restart(|info| {
    ///         eprintln!("restart {} ({:?}): {:?}", info.attempt, info.exit_status, info.stderr_tail);
    ///     })
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn on_restart(mut self, hook: impl Fn(&RestartInfo) + Send + Sync + 'static) -> Self {
        self.on_restart = Some(Arc::new(hook));
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
    /// With a [`restart`](Self::restart) policy that one driver also runs every
    /// restart of the server.
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
    pub async fn connect_with(self, mut run_driver: impl FnMut(Driver)) -> Result<Client, Error> {
        let ClientBuilder {
            mut transport,
            client_info,
            requests,
            handshake_timeout,
            era,
            probe_timeout,
            restart,
            on_restart,
        } = self;
        let capabilities = requests.capabilities();
        let other = transport.handlers.request.take();
        transport.handlers.request = Some(requests.clone().into_handler(other));
        let inputs = requests;
        let progress = Arc::new(Routes::default());
        let user_notifications = transport.handlers.notification.take();
        transport.handlers.notification =
            Some(Arc::clone(&progress).into_handler(user_notifications));
        // Shared, so that a server started again calls the same handlers.
        let handlers = std::mem::take(&mut transport.handlers).share();
        // Owned copies of the configuration, made before any await: the
        // builder is not `Sync`, and this future must stay `Send`.
        let mut retry = Some(transport.again(handlers.handlers()));
        let restarting = restart.is_some();
        let restart = restart.map(|policy| (policy, transport.again(handlers.handlers())));
        let mut start = |builder: Builder| -> Result<Started, Error> {
            let (started, driver) = builder.spawn_with_driver()?;
            if !restarting {
                // The process is the client's last: its end ends every stream.
                let routes = Arc::downgrade(&progress);
                run_driver(driver.then(async move {
                    if let Some(routes) = routes.upgrade() {
                        routes.listeners.end_all();
                    }
                }));
                return Ok((started, None));
            }
            // The driver handed out is the supervisor, which drives this
            // process and, once the client is connected, its restarts.
            let (handoff, supervised) = futures::channel::oneshot::channel();
            run_driver(driver.then(restart::supervise(supervised)));
            Ok((started, Some(handoff)))
        };
        let hello = Hello {
            client_info: &client_info,
            capabilities: &capabilities,
            handshake_timeout,
            probe_timeout,
        };
        let first = start(transport.again(handlers.handlers()))?;
        drop(transport);
        let (started, outcome) = match era {
            Era::Legacy => {
                let outcome = handshake(&first.0, &hello, None).await;
                (first, outcome)
            }
            Era::Auto | Era::Modern => match probe(&first.0, &hello).await {
                Probe::Modern(session) => (first, Ok(*session)),
                Probe::Legacy { version, .. } if era == Era::Auto => {
                    let outcome = handshake(&first.0, &hello, version.as_deref()).await;
                    (first, outcome)
                }
                Probe::Exited(_) if era == Era::Auto => {
                    // It exited on the probe: a legacy server that dies on
                    // unknown requests. Started again, once, for the handshake.
                    let _ = first.0.close().await;
                    drop(first);
                    event!(info, "MCP server exited on the probe: starting it again");
                    let again = start(retry.take().expect("started again once"))?;
                    let outcome = handshake(&again.0, &hello, None).await;
                    (again, outcome)
                }
                Probe::Legacy { answer, .. } | Probe::Exited(answer) => {
                    let error = Error::Protocol(format!(
                    "the server does not speak MCP {} (Era::Modern): server/discover got {answer}",
                    MODERN_PROTOCOL_VERSIONS.join(", ")
                ));
                    (first, Err(error))
                }
                Probe::Failed(error) => (first, Err(error)),
            },
        };
        let (transport_now, handoff) = started;
        let session = match outcome {
            Ok(session) => session,
            Err(error) => {
                let _ = transport_now.close().await;
                return Err(error);
            }
        };
        event!(info, era = ?session.era, protocol_version = %session.protocol_version, "MCP session ready");
        let life = Life::new(transport_now, restarting, Arc::clone(&progress));
        if let (Some(handoff), Some((policy, builder))) = (handoff, restart) {
            let restarter = Restarter {
                builder,
                handlers: handlers.clone(),
                policy,
                on_restart,
                session: Again {
                    client_info: client_info.clone(),
                    capabilities: capabilities.clone(),
                    handshake_timeout,
                    era: session.era,
                    protocol_version: session.protocol_version.clone(),
                    meta: session.meta.clone(),
                },
            };
            // Refused when the driver is already gone: the handoff's guard
            // then gives the client up at once.
            let _ = handoff.send(Handoff::new(&life, restarter));
        }
        Ok(Client {
            life,
            session,
            inputs,
            progress,
            next_token: AtomicU64::new(1),
        })
    }
}

/// A started process: its transport and, when restarts are on, the channel
/// that hands its supervisor the connected client.
type Started = (
    Transport,
    Option<futures::channel::oneshot::Sender<Handoff>>,
);

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
    /// The server process calls go to (replaced when it restarts).
    life: Arc<Life>,
    session: Session,
    /// The handlers that answer a modern server's input requests.
    inputs: InputHandlers,
    progress: Arc<Routes>,
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
        &self.session.server_info
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
        &self.session.capabilities
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
        &self.session.protocol_version
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
        self.session.era
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
        self.session.instructions.as_deref()
    }

    /// A handle to the underlying transport of the current server process
    /// (for raw requests, `respond`, `stderr_tail`, …). After a restart
    /// ([`ClientBuilder::restart`]) it is the new process's.
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
        self.life.current()
    }

    /// How many times the server was started again since `connect`
    /// (see [`ClientBuilder::restart`]).
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
        self.life.restarts()
    }

    async fn typed<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> Result<T, Error> {
        decode(
            method,
            self.request(method, params, CallOptions::new()).await?,
        )
    }

    /// The protocol fields of a request in this session's era (none in the
    /// legacy era, where the handshake carried them).
    fn protocol(&self) -> call::Protocol<'_> {
        let Some(fields) = &self.session.meta else {
            return call::Protocol::default();
        };
        let level = self.life.log_level();
        let members = self.session.meta_members.as_deref().unwrap_or_default();
        let log_level = level.map(|level| json!(level));
        let members = match &log_level {
            None => std::borrow::Cow::Borrowed(members),
            Some(level) => {
                std::borrow::Cow::Owned(format!("{members},\"{}\":{level}", call::META_LOG_LEVEL))
            }
        };
        call::Protocol {
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
        let token = || {
            Value::String(format!(
                "stdio-mcp-{}",
                self.next_token.fetch_add(1, Ordering::Relaxed)
            ))
        };
        let protocol = self.protocol();
        call::call(
            &self.life,
            &self.progress,
            protocol,
            &self.inputs,
            token,
            method,
            params,
            options,
        )
        .await
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
        let method = match self.session.era {
            Era::Modern => "server/discover",
            _ => "ping",
        };
        self.request(method, None, CallOptions::new())
            .await
            .map(drop)
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
        Ok(self.listing::<Tool>().await?.items)
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
    /// (the default) or send the request yourself with [`RequestOptions`](crate::RequestOptions).
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
        self.resource_updates("resources/subscribe", uri).await?;
        self.life.subscribed(uri, true);
        Ok(())
    }

    /// Stops the updates [`subscribe`](Self::subscribe) asked for, those of
    /// the resource's [`listen`](Self::listen) streams too.
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
        self.resource_updates("resources/unsubscribe", uri).await?;
        self.life.subscribed(uri, false);
        Ok(())
    }

    /// Opens a subscription to the notifications `filter` asks for, and
    /// resolves once the server acknowledged it.
    ///
    /// With a 2026-07-28 server this is `subscriptions/listen`: its
    /// notifications are told apart from other subscriptions' by their
    /// `subscriptionId`, and dropping the stream cancels the listen request.
    /// With a legacy server the stream takes the matching notifications from
    /// the server's one stream, after `resources/subscribe` for each resource
    /// of the filter; dropping it stops the stream and sends
    /// `resources/unsubscribe` for each of those resources that neither
    /// [`subscribe`](Self::subscribe) nor another open stream still wants
    /// (without waiting for the answer). Notifications still reach the
    /// builder's `on_notification`.
    ///
    /// # Errors
    ///
    /// The transport's error; [`Error::Protocol`] when the server ends the
    /// subscription before acknowledging it; [`Error::Timeout`] when no
    /// acknowledgment comes within the transport's timeout (60 s without one).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use futures::StreamExt;
    /// use stdio_mcp::client::{Client, ListenFilter};
    ///
    /// let client = Client::connect(stdio_mcp::Transport::builder(["my-mcp-server"])).await?;
    /// let mut updates = client
    ///     .listen(ListenFilter::new().resource("file:///notes.md").tools_list_changed())
    ///     .await?;
    /// if let Some(update) = updates.next().await {
    ///     println!("{} {:?}", update.method, update.params);
    /// }
    /// drop(updates); // cancels the subscription
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn listen(&self, filter: ListenFilter) -> Result<Subscription, Error> {
        let (sender, receiver) = futures::channel::mpsc::unbounded();
        if self.session.era != Era::Modern {
            let uris = filter.uris().to_vec();
            let key = self.progress.listeners.add(filter, sender);
            let hold = restart::Hold::new(&self.life, key);
            // Should a subscribe fail, dropping the stream undoes the ones before.
            let subscription =
                Subscription::new(receiver, Arc::clone(&self.progress), key, None, Some(hold));
            for uri in &uris {
                self.resource_updates("resources/subscribe", uri).await?;
                subscription.holds(uri);
            }
            return Ok(subscription);
        }
        let transport = self.life.transport().await?;
        let protocol = self.protocol();
        let (ack, acknowledged) = futures::channel::oneshot::channel();
        let send = |filter: &ListenFilter| call::send_listen(&transport, filter, &protocol);
        let key = self.progress.listeners.open(filter, send, sender, ack);
        let limit = transport.timeout().unwrap_or(DEFAULT_HANDSHAKE_TIMEOUT);
        let listeners = &self.progress.listeners;
        let ended = futures::future::poll_fn(|cx| listeners.poll_end(key, cx));
        let ended = std::pin::pin!(ended);
        let waited = futures::future::select(
            acknowledged,
            futures::future::select(ended, async_io::Timer::after(limit)),
        )
        .await;
        let agreed = match waited {
            futures::future::Either::Left((Ok(agreed), _)) => agreed,
            // The listener went away before the acknowledgment: no stream to give.
            futures::future::Either::Left((Err(_), _)) => {
                listeners.remove(key);
                return Err(Error::Protocol(
                    "subscriptions/listen ended before it was acknowledged".into(),
                ));
            }
            futures::future::Either::Right((ended, _)) => {
                listeners.remove(key);
                return Err(match ended {
                    futures::future::Either::Left((Some(Err(error)), _)) => error,
                    futures::future::Either::Left((Some(Ok(_)) | None, _)) => Error::Protocol(
                        "the server ended subscriptions/listen before acknowledging it".into(),
                    ),
                    futures::future::Either::Right(_) => Error::Timeout {
                        method: "subscriptions/listen".into(),
                        after: limit,
                    },
                });
            }
        };
        Ok(Subscription::new(
            receiver,
            Arc::clone(&self.progress),
            key,
            Some(agreed),
            None,
        ))
    }

    /// `resources/subscribe` or `resources/unsubscribe` (legacy only).
    async fn resource_updates(&self, method: &str, uri: &str) -> Result<(), Error> {
        self.legacy_only(method)?;
        let params = json!({ "uri": uri });
        self.request(method, Some(params), CallOptions::new())
            .await?;
        Ok(())
    }

    /// Refuses a method 2026-07-28 removed, saying what replaced it.
    fn legacy_only(&self, method: &str) -> Result<(), Error> {
        match self.session.era {
            Era::Modern => Err(Error::Protocol(format!(
                "MCP {} has no {method}: resource updates come through subscriptions/listen \
                 (Client::listen)",
                self.session.protocol_version
            ))),
            _ => Ok(()),
        }
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
        if self.session.era == Era::Modern {
            // 2026-07-28 has no logging/setLevel: the level rides on each request.
            self.life.set_log_level(level);
            return Ok(());
        }
        self.request(
            "logging/setLevel",
            Some(json!({ "level": level })),
            CallOptions::new(),
        )
        .await?;
        // Kept, to be asked again of a restarted server.
        self.life.set_log_level(level);
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

    /// Closes the server (see [`Transport::close`]): no restart follows, and
    /// every [`listen`](Self::listen) stream ends after what it holds.
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
        self.life.close()
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.session.server_info.name)
            .field("era", &self.session.era)
            .field("protocol_version", &self.session.protocol_version)
            .field("life", &self.life)
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
