//! Configuring a client, every setting in one place: the handlers and the
//! answers to what the server asks, the era, the time limits, the restart
//! policy, the checks, and what guards its tools; `connect` starts it
//! (`connect/`).

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::builder::TransportBuilder;
use crate::driver::Driver;
use crate::error::Error;
use crate::message::Notification;

use super::answers::{InputHandlers, IntoHandler};
use super::client::Client;
use super::era::{Era, DEFAULT_HANDSHAKE_TIMEOUT, DEFAULT_PROBE_TIMEOUT, DEFAULT_REQUEST_TIMEOUT};
use super::inbound::ToolsStale;
use super::model::approval::{Approval, ToolCall};
use super::model::asks::{CreateMessageRequest, ElicitRequest};
use super::model::roots::ListRootsRequest;
use super::model::tool_changes::ToolChanges;
use super::model::types::Tool;
use super::model::types::{Extra, Implementation};
use super::origin;
use super::restart::{RestartHook, RestartInfo, RestartPolicy, SpawnHook};
use super::tools::guard::Guard;
use super::tools::guard::ListedHook;
use super::tools::guard::{approve_hook, ApproveHook};
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
        match super::connect::open(self, run_driver, &name).await {
            Ok(client) => Ok(client),
            Err(error) => Err(error.named(&name)),
        }
    }

    // Answers to what the server asks (roots, sampling, elicitation).

    /// Answers the server's `roots/list`; declares the `roots` capability.
    ///
    /// The handler takes the typed request and returns the roots
    /// (`|_: ListRootsRequest| async { Ok(vec![Root::folder(..)]) }`), or the
    /// wire form (`|request: ServerRequest|` returning the result's JSON); see
    /// [`IntoHandler`]. Handlers are async and run beside the transport's I/O:
    /// one that waits delays no other request of this server or of any other.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::{Client, ListRootsRequest, Root};
    /// use stdio_mcp::RpcError;
    ///
    /// let client = Client::builder(["my-mcp-server"])
    ///     .on_roots_list(|_: ListRootsRequest| async {
    ///         Ok::<_, RpcError>(vec![Root::folder("/home/me/project")])
    ///     })
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn on_roots_list<Form>(
        mut self,
        handler: impl IntoHandler<ListRootsRequest, Form>,
    ) -> Self {
        self.inputs.roots = Some(handler.into_handler());
        self
    }

    /// Answers the server's `sampling/createMessage`; declares `sampling`.
    /// The handler takes a [`CreateMessageRequest`] and returns a
    /// [`CreateMessageResult`](crate::client::CreateMessageResult) (text, or the
    /// other content its builders make), or the wire form ([`IntoHandler`]).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::{Client, CreateMessageRequest, CreateMessageResult};
    /// use stdio_mcp::RpcError;
    ///
    /// let client = Client::builder(["my-mcp-server"])
    ///     .on_sampling(|request: CreateMessageRequest| async move {
    ///         if request.messages.is_empty() {
    ///             return Err(RpcError { code: -1, message: "nothing to answer".into(), data: None });
    ///         }
    ///         Ok(CreateMessageResult::text("my-model", "Hello!"))
    ///     })
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn on_sampling<Form>(
        mut self,
        handler: impl IntoHandler<CreateMessageRequest, Form>,
    ) -> Self {
        self.inputs.sampling = Some(handler.into_handler());
        self
    }

    /// Answers the server's `elicitation/create`; declares `elicitation`. The
    /// handler takes an [`ElicitRequest`] and returns an
    /// [`ElicitResult`](crate::client::ElicitResult) (an accepted form gets the
    /// schema's defaults: [`elicitation_defaults`](Self::elicitation_defaults)),
    /// or the wire form ([`IntoHandler`]). It may take its time (ask a
    /// person): nothing else waits for it.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use serde_json::json;
    /// use stdio_mcp::client::{Client, ElicitRequest, ElicitResult};
    /// use stdio_mcp::RpcError;
    ///
    /// let client = Client::builder(["my-mcp-server"])
    ///     .on_elicitation(|request: ElicitRequest| async move {
    ///         Ok::<_, RpcError>(match request {
    ///             ElicitRequest::Form { message, .. } => {
    ///                 println!("the server asks: {message}");
    ///                 ElicitResult::accept(json!({"name": "octocat"}))
    ///             }
    ///             _ => ElicitResult::decline(),
    ///         })
    ///     })
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn on_elicitation<Form>(mut self, handler: impl IntoHandler<ElicitRequest, Form>) -> Self {
        self.inputs.elicitation = Some(handler.into_handler());
        self
    }

    /// Declares that the [`on_elicitation`](Self::on_elicitation) handler
    /// also takes URL-mode elicitations (`elicitation.url`; form mode is
    /// always declared with a handler). Such a request asks the user to open a
    /// URL: see [`ElicitRequest::Url`](crate::client::ElicitRequest::Url).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::{Client, ElicitRequest, ElicitResult};
    /// use stdio_mcp::RpcError;
    ///
    /// let client = Client::builder(["my-mcp-server"])
    ///     .on_elicitation(|request: ElicitRequest| async move {
    ///         Ok::<_, RpcError>(match request {
    ///             ElicitRequest::Url { url, .. } => {
    ///                 println!("open {url}");
    ///                 ElicitResult::accept_url()
    ///             }
    ///             _ => ElicitResult::decline(),
    ///         })
    ///     })
    ///     .elicitation_url(true)
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn elicitation_url(mut self, takes_urls: bool) -> Self {
        self.inputs.elicitation_url = takes_urls;
        self
    }

    /// Whether an accepted form elicitation gets the schema's defaults for
    /// the fields the handler left out (SEP-1034; on by default). The
    /// server's `requestedSchema` may give a `default` for each property
    /// (string, number, integer, boolean, enum); with this on, a handler that
    /// answers `accept` without such a field has it filled in from there
    /// before the answer leaves, in both eras and for a task's questions.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use serde_json::json;
    /// use stdio_mcp::client::{Client, ElicitRequest, ElicitResult};
    /// use stdio_mcp::RpcError;
    ///
    /// let client = Client::builder(["my-mcp-server"])
    ///     // The answer leaves exactly as the handler wrote it.
    ///     .on_elicitation(|_: ElicitRequest| async { Ok::<_, RpcError>(ElicitResult::accept(json!({}))) })
    ///     .elicitation_defaults(false)
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn elicitation_defaults(mut self, fill: bool) -> Self {
        self.inputs.elicitation_defaults = fill;
        self
    }

    /// Declares that the [`on_sampling`](Self::on_sampling) handler passes
    /// `tools` and `toolChoice` on to its model (`sampling.tools`).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::{Client, CreateMessageRequest, CreateMessageResult};
    /// use stdio_mcp::RpcError;
    ///
    /// let client = Client::builder(["my-mcp-server"])
    ///     .on_sampling(|asked: CreateMessageRequest| async move {
    ///         println!("{} tools offered", asked.tools.map_or(0, |t| t.len()));
    ///         Ok::<_, RpcError>(CreateMessageResult::text("my-model", "…"))
    ///     })
    ///     .sampling_tools(true)
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn sampling_tools(mut self, takes_tools: bool) -> Self {
        self.inputs.sampling_tools = takes_tools;
        self
    }

    // Tools a host can trust: the approval hook, trust, tool changes.

    /// Calls `hook` before every `tools/call` this client would write
    /// ([`call_tool`](crate::client::Client::call_tool), `call_tool_with`, a group's
    /// call, a task's start), after the arguments are checked, with the
    /// call ([`ToolCall`]): the tool's definition as the client holds it
    /// (listed first if it holds none), the arguments, and the hints to act
    /// on. [`Approval::Deny`] fails the call with
    /// [`ErrorKind::Denied`](crate::ErrorKind::Denied) and writes nothing.
    ///
    /// The hook may take its time (ask a person): a call dropped meanwhile
    /// drops the hook's future and writes nothing. A hook that panics fails
    /// that call (`Denied`, saying so); the client serves on.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::{Approval, Client, ToolCall};
    ///
    /// let client = Client::builder(["my-mcp-server"])
    ///     .approve_calls(|call: ToolCall| async move {
    ///         if call.hints.read_only {
    ///             Approval::Allow
    ///         } else {
    ///             Approval::Deny(format!("{} may write, and nobody is here to ask", call.tool.name))
    ///         }
    ///     })
    ///     .connect()
    ///     .await?;
    /// # let _ = client; Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn approve_calls<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Approval> + Send + 'static,
    {
        self.guard.approve = Some(approve_hook(hook));
        self
    }

    /// Whether the host believes what this server claims of its tools: the
    /// hints [`ToolCall::hints`] gives the approval hook are the server's
    /// when it is trusted, the specification's defaults when not (the
    /// default, unless the config entry says `"trust": true`).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::builder(["my-own-server"]).trusted(true).connect().await?;
    /// # let _ = client; Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn trusted(mut self, trusted: bool) -> Self {
        self.guard.trusted = trusted;
        self
    }

    /// Calls `hook` when a listing of the server's tools differs from the
    /// one before ([`ToolChanges`]: added, removed, changed with the fields
    /// that differ, compared by [`Tool::digest`]). The first listing is the
    /// baseline; every later one counts: [`tools`](crate::client::Client::tools)
    /// after a `list_changed`, a restart or the list's `ttlMs`, and
    /// [`list_tools`](crate::client::Client::list_tools). Called on the task that
    /// listed, once per listing that changed something.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::{Client, ToolChanges};
    ///
    /// let client = Client::builder(["my-mcp-server"])
    ///     .on_tools_changed(|changes: &ToolChanges| {
    ///         for change in &changes.changed {
    ///             eprintln!("{} changed: {}", change.after.name, change.fields.join(", "));
    ///         }
    ///     })
    ///     .connect()
    ///     .await?;
    /// # let _ = client; Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn on_tools_changed(mut self, hook: impl Fn(&ToolChanges) + Send + Sync + 'static) -> Self {
        self.guard.on_changed = Some(Arc::new(hook));
        self
    }

    /// With `true`, a tool added or changed since the first listing is
    /// neither listed ([`tools`](crate::client::Client::tools),
    /// [`list_tools`](crate::client::Client::list_tools)) nor callable (the call
    /// fails [`ErrorKind::Denied`](crate::ErrorKind::Denied)) until
    /// [`accept_tool_changes`](crate::client::Client::accept_tool_changes); a tool
    /// removed goes at once. Default `false`.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::builder(["my-mcp-server"])
    ///     .hold_tool_changes(true)
    ///     .connect()
    ///     .await?;
    /// # let _ = client; Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn hold_tool_changes(mut self, hold: bool) -> Self {
        self.guard.hold = hold;
        self
    }

    /// [`approve_calls`](Self::approve_calls) with a hook already boxed (a group's).
    pub(crate) fn approve_with(mut self, hook: ApproveHook) -> Self {
        self.guard.approve = Some(hook);
        self
    }

    /// Tells `hook` of every listing (a group keeps its catalog with it).
    pub(crate) fn on_tools_listed(mut self, hook: ListedHook) -> Self {
        self.guard.on_listed = Some(hook);
        self
    }

    /// Compares the first listing with `tools` (and, holding changes,
    /// accepts them): what a group's catalog cache knew of the server.
    pub(crate) fn tool_baseline(mut self, tools: Vec<Tool>) -> Self {
        self.guard.baseline = Some(tools);
        self
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
