//! Configuring a client: the handlers, the era, the time limits, the restart
//! policy and the checks; `connect` (in `connect.rs`) starts it.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::builder::TransportBuilder;
use crate::driver::Driver;
use crate::error::Error;
use crate::message::Notification;

use super::client::Client;
use super::era::{Era, DEFAULT_HANDSHAKE_TIMEOUT, DEFAULT_PROBE_TIMEOUT, DEFAULT_REQUEST_TIMEOUT};
use super::guard::Guard;
use super::handlers::InputHandlers;
use super::inbound::ToolsStale;
use super::model::types::{Extra, Implementation};
use super::origin;
use super::restart::{RestartHook, RestartInfo, RestartPolicy, SpawnHook};
#[cfg(feature = "validate")]
use super::validation::{Invalid, Validation};

/// Configures a [`Client`] before it connects: client info, async handlers for
/// what the server asks, the era, the probe's and the handshake's time limits.
///
/// ```no_run
/// # futures::executor::block_on(async {
/// use stdio_mcp::client::{Client, ListRootsRequest, Root};
/// use stdio_mcp::RpcError;
///
/// let client = Client::builder(["my-mcp-server"])
///     .client_info("my-app", "1.0.0")
///     .on_roots_list(|_: ListRootsRequest| async { Ok::<_, RpcError>(vec![Root::folder("/srv")]) })
///     .connect()
///     .await?;
/// # let _ = client; Ok::<(), stdio_mcp::Error>(()) });
/// ```
#[must_use = "a client builder does nothing until connect() is called"]
pub struct ClientBuilder {
    pub(super) transport: TransportBuilder,
    pub(super) client_info: Implementation,
    pub(super) inputs: InputHandlers,
    pub(super) handshake_timeout: Duration,
    pub(super) era: Era,
    pub(super) probe_timeout: Duration,
    pub(super) restart: Option<RestartPolicy>,
    pub(super) on_restart: Option<RestartHook>,
    pub(super) request_timeout: Option<Duration>,
    pub(super) name: Option<String>,
    /// Told when the server's tools may have changed (a group lists them again).
    pub(super) tools_stale: Option<ToolsStale>,
    /// Approval, trust, tool changes.
    pub(super) guard: Guard,
    /// How long the whole connect may take, and what sets that limit (a
    /// group's start limit); the connect then says what it waited for.
    pub(super) start_limit: Option<(Duration, &'static str)>,
    /// Told of every process started for this client (a group awaits them all).
    pub(super) on_spawn: Option<SpawnHook>,
    #[cfg(feature = "validate")]
    pub(super) checks: super::validation::Checks,
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
    pub fn new(transport: TransportBuilder) -> Self {
        let guard = Guard {
            trusted: crate::config::configured_trust(&transport),
            ..Guard::default()
        };
        ClientBuilder {
            transport,
            client_info: Implementation {
                name: env!("CARGO_PKG_NAME").to_owned(),
                version: env!("CARGO_PKG_VERSION").to_owned(),
                title: None,
                extra: Extra::new(),
            },
            inputs: InputHandlers::default(),
            handshake_timeout: DEFAULT_HANDSHAKE_TIMEOUT,
            era: Era::Auto,
            probe_timeout: DEFAULT_PROBE_TIMEOUT,
            restart: None,
            on_restart: None,
            request_timeout: Some(DEFAULT_REQUEST_TIMEOUT),
            name: None,
            tools_stale: None,
            guard,
            start_limit: None,
            on_spawn: None,
            #[cfg(feature = "validate")]
            checks: super::validation::Checks::default(),
        }
    }

    /// Calls `hook` with each process started for this client: the first,
    /// one started again after the probe, and each restart.
    pub(crate) fn on_spawn(mut self, hook: SpawnHook) -> Self {
        self.on_spawn = Some(hook);
        self
    }

    /// Bounds the whole connect by `limit`, set by `what` (named in the error
    /// of a connect cut short, with what the server wrote meanwhile).
    pub(crate) fn start_limit(mut self, limit: Duration, what: &'static str) -> Self {
        self.start_limit = Some((limit, what));
        self
    }

    /// Calls `hook` after each tools `list_changed` of the server and after
    /// each restart (a group lists the tools again, to tell its host).
    pub(crate) fn on_tools_stale(mut self, hook: ToolsStale) -> Self {
        self.tools_stale = Some(hook);
        self
    }

    /// The command line the client starts (program, arguments, environment,
    /// folder), as text.
    pub(crate) fn command_key(&self) -> String {
        origin::command_key(&self.transport)
    }

    /// The era asked for; `Auto` unless [`era`](Self::era) set one.
    pub(crate) fn era_asked(&self) -> Era {
        self.era
    }

    /// The name and version sent as `clientInfo` (default: this crate's).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::Client;
    ///
    /// let client = Client::builder(["my-mcp-server"])
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

    /// The time limit for `initialize` when the transport has no timeout set
    /// (default 60 s), so a server that never answers cannot hang the caller.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use std::time::{Duration, Instant};
    /// use stdio_mcp::client::Client;
    ///
    /// let client = Client::builder(["npx", "-y", "some-mcp-server"])
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
    ///
    /// let client = Client::builder(["my-legacy-server"])
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
    /// use std::time::{Duration, Instant};
    /// use stdio_mcp::client::Client;
    ///
    /// let client = Client::builder(["my-mcp-server"])
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
    /// `listen` subscriptions are asked for again, and each [`Subscription`](super::Subscription)
    /// yields a [`RESTARTED`](super::RESTARTED) item for the gap. When the policy gives up, calls fail with the last
    /// exit error. Restarts run wherever the driver runs (the background
    /// thread, or your executor with [`connect_with`](Self::connect_with)).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use std::time::{Duration, Instant};
    /// use stdio_mcp::client::{Client, RestartPolicy};
    ///
    /// let client = Client::builder(["npx", "-y", "some-mcp-server"])
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
    ///
    /// let client = Client::builder(["my-mcp-server"])
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

    /// The limit of a call that sets none of its own
    /// ([`CallOptions::timeout`](super::CallOptions::timeout)) and whose
    /// transport has none ([`TransportBuilder::timeout`]): by default
    /// [`DEFAULT_REQUEST_TIMEOUT`](super::DEFAULT_REQUEST_TIMEOUT), 5 minutes,
    /// restarted by each progress of a call that hears of its progress.
    /// `None` lets such calls wait as long as the server lives. It never ends
    /// a `listen` stream.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use std::time::{Duration, Instant};
    /// use stdio_mcp::client::Client;
    ///
    /// let client = Client::builder(["my-mcp-server"])
    ///     .request_timeout(Some(Duration::from_secs(30)))
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn request_timeout(mut self, limit: impl Into<Option<Duration>>) -> Self {
        self.request_timeout = limit.into();
        self
    }

    /// Called with every notification the server sends (after the client
    /// took what is its own: progress, `listen` streams), the moment it is
    /// read, in wire order; the same as the transport builder's
    /// [`TransportBuilder::on_notification`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::Client;
    ///
    /// let client = Client::builder(["my-mcp-server"])
    ///     .on_notification(|n| {
    ///         if n.method == "notifications/message" {
    ///             println!("server log: {:?}", n.params);
    ///         }
    ///     })
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn on_notification(mut self, handler: impl FnMut(&Notification) + Send + 'static) -> Self {
        self.transport = self.transport.on_notification(handler);
        self
    }

    /// What this server is called in the client's errors (by default its
    /// name in the config file it came from, else its program).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::Client;
    ///
    /// let client = Client::builder(["npx", "-y", "@modelcontextprotocol/server-everything"])
    ///     .name("everything")
    ///     .connect()
    ///     .await?;
    /// if let Err(e) = client.ping().await {
    ///     assert_eq!(e.server(), Some("everything"));
    /// }
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Checks each tool call's arguments against the tool's `inputSchema`
    /// before sending them (feature `validate`; default [`Validation::Off`]).
    /// The schemas come from the client's tool list
    /// ([`Client::tools`], listed at the first call if need be) and are
    /// compiled once per tool; a schema that does not compile is reported once
    /// and not enforced. With [`Validation::Enforce`] a call whose arguments
    /// do not match fails before anything is written, with one line per
    /// problem (its JSON pointer and what was expected), a text a model can
    /// correct its call from.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use serde_json::json;
    /// use stdio_mcp::client::{Client, Validation};
    /// use stdio_mcp::{ErrorKind, Transport};
    ///
    /// let client = Client::builder(["my-mcp-server"])
    ///     .validate_arguments(Validation::Enforce)
    ///     .connect()
    ///     .await?;
    /// if let Err(e) = client.call_tool("add", json!({"a": "one"})).await {
    ///     assert_eq!(e.kind(), ErrorKind::InvalidArguments);
    ///     println!("{e}"); // …do not match its inputSchema:\n- /a: "one" is not of type "number"…
    /// }
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    #[cfg(feature = "validate")]
    pub fn validate_arguments(mut self, mode: Validation) -> Self {
        self.checks.arguments = mode;
        self
    }

    /// Checks each tool result's `structuredContent` against the tool's
    /// `outputSchema` (feature `validate`; default [`Validation::Off`]); never
    /// a result that reports failure (`isError`). With
    /// [`Validation::Enforce`] a mismatch fails the call with
    /// [`ErrorKind::Protocol`](crate::ErrorKind::Protocol).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::{Client, Validation};
    ///
    /// let client = Client::builder(["my-mcp-server"])
    ///     .validate_results(Validation::Warn)
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    #[cfg(feature = "validate")]
    pub fn validate_results(mut self, mode: Validation) -> Self {
        self.checks.results = mode;
        self
    }

    /// Called with each mismatch found by [`validate_arguments`](Self::validate_arguments)
    /// or [`validate_results`](Self::validate_results) (in either mode), and
    /// once for each schema that cannot be compiled (feature `validate`).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::{Client, Validation};
    ///
    /// let client = Client::builder(["my-mcp-server"])
    ///     .validate_arguments(Validation::Warn)
    ///     .on_invalid(|invalid| eprintln!("{}: {:?}", invalid.tool, invalid.problems))
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    #[cfg(feature = "validate")]
    pub fn on_invalid(mut self, hook: impl Fn(&Invalid) + Send + Sync + 'static) -> Self {
        self.checks.on_invalid = Some(Arc::new(hook));
        self
    }

    /// Starts the server, its driver on the shared background thread, and
    /// finds its era (see [`era`](Self::era)): with [`Era::Auto`] a
    /// `server/discover` probe, then stateless 2026-07-28 with a modern server
    /// or the `initialize` handshake with a legacy one.
    ///
    /// # Errors
    ///
    /// Each names the server. [`ErrorKind::Start`](crate::ErrorKind::Start)
    /// when it cannot start; the exit error when it dies;
    /// [`Error::ConnectTimeout`] when it does not answer in time (what got no
    /// answer, how long, what it wrote instead); [`Error::Protocol`] when it
    /// answers with a revision this client does not support. The server is
    /// closed on every failure.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::Client;
    ///
    /// let client = Client::builder(["my-mcp-server"])
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
    ///
    /// // The driver runs as a smol task instead of on the shared background thread.
    /// let client = Client::builder(["my-mcp-server"])
    ///     .connect_with(|driver| smol::spawn(driver).detach())
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn connect_with(self, run_driver: impl FnMut(Driver)) -> Result<Client, Error> {
        let name = self
            .name
            .clone()
            .unwrap_or_else(|| origin::server_name(&self.transport));
        match self.open(run_driver, &name).await {
            Ok(client) => Ok(client),
            Err(error) => Err(error.named(&name)),
        }
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

impl Client {
    /// Starts the server and finds its era: a `server/discover` probe, then
    /// stateless 2026-07-28 with a modern server, or the `initialize`
    /// handshake (and `notifications/initialized`) with a legacy one. The
    /// defaults of [`ClientBuilder`] apply; [`Client::builder`] changes them.
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
    ///
    /// let client = Client::connect(["npx", "-y", "@modelcontextprotocol/server-everything"]).await?;
    /// println!("{} speaks {}", client.server_info().name, client.protocol_version());
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn connect(server: impl Into<TransportBuilder>) -> Result<Client, Error> {
        ClientBuilder::new(server.into()).connect().await
    }

    /// A [`ClientBuilder`], to set handlers and client info before connecting.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::Client;
    ///
    /// let client = Client::builder(["my-mcp-server"]).connect().await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn builder(server: impl Into<TransportBuilder>) -> ClientBuilder {
        ClientBuilder::new(server.into())
    }
}
