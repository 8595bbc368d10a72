//! The connected client: what the server said of itself, and every request
//! of the MCP API, in whichever era the server speaks.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use crate::child::ExitStatus;
use crate::error::Error;
use crate::transport::{Close, Transport};

use super::answers::InputHandlers;
use super::era::Era;
use super::inbound::Inbound;
use super::life::{ClientState, Life};
use super::model::types::{Implementation, ServerCapabilities};
use super::request::{CallOptions, Caller};
use super::session::Session;
use super::subscription::Subscription;
use super::telemetry::Instruments;
use super::tools::cache::ToolCache;
use super::tools::guard::Guard;
use super::tools::ledger::ToolLedger;
use super::wire::{decode, explain_missing_capability, Protocol, META_LOG_LEVEL};

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
///
/// let client = Client::connect(["uvx", "mcp-server-time"]).await?;
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
    pub(super) inbound: Arc<Inbound>,
    next_token: AtomicU64,
    /// The limit of a call that has none of its own or from the transport.
    request_timeout: Option<Duration>,
    /// The server's name in errors: its config name, else its program.
    pub(super) name: String,
    /// The tool list `tools()` serves.
    pub(super) tools: ToolCache,
    /// Approval, trust, who hears of tool changes.
    pub(super) guard: Guard,
    /// The listings noted for tool changes, and what is held back.
    pub(super) ledger: ToolLedger,
    /// The listen for a modern server's tools `list_changed`: `None` until
    /// the first `tools()`, then the stream if the server took it.
    pub(super) tool_watch: futures::lock::Mutex<Option<Option<Subscription>>>,
    /// What is checked against the tools' schemas.
    #[cfg(feature = "validate")]
    pub(super) checks: super::validation::Checks,
    /// Spans and metrics (feature `opentelemetry`; else nothing).
    pub(super) telemetry: Instruments,
}

impl Drop for Connected {
    fn drop(&mut self) {
        // A session not closed ends with the last handle: how the server went.
        let error = match self.life.state() {
            ClientState::Exited => Some("exited"),
            ClientState::GaveUp => Some("gave_up"),
            _ => None,
        };
        self.telemetry
            .session_ended(&self.session.protocol_version, error);
    }
}

impl Client {
    pub(super) fn new(
        life: Arc<Life>,
        session: Session,
        inputs: InputHandlers,
        inbound: Arc<Inbound>,
        request_timeout: Option<Duration>,
        name: String,
        mut guard: Guard,
    ) -> Self {
        let tracking = guard.on_changed.is_some() || guard.on_listed.is_some();
        let ledger = ToolLedger::new(tracking, guard.hold, guard.baseline.take());
        Client {
            inner: Arc::new(Connected {
                life,
                session,
                inputs,
                inbound,
                next_token: AtomicU64::new(1),
                request_timeout,
                name,
                tools: ToolCache::default(),
                guard,
                ledger,
                tool_watch: futures::lock::Mutex::new(None),
                #[cfg(feature = "validate")]
                checks: super::validation::Checks::default(),
                telemetry: Instruments::new(),
            }),
        }
    }

    /// The new client, with the instruments its connect began with.
    pub(super) fn with_telemetry(mut self, telemetry: Instruments) -> Self {
        Arc::get_mut(&mut self.inner)
            .expect("a client just made has no clone")
            .telemetry = telemetry;
        self
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
    /// let client = stdio_mcp::client::Client::connect(["my-mcp-server"]).await?;
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
    /// let client = stdio_mcp::client::Client::connect(["my-mcp-server"]).await?;
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
    /// let client = Client::connect(["my-mcp-server"]).await?;
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
    /// let client = Client::connect(["my-mcp-server"]).await?;
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
    /// let client = stdio_mcp::client::Client::connect(["my-mcp-server"]).await?;
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
    /// let client = stdio_mcp::client::Client::connect(["my-mcp-server"]).await?;
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
    /// let client = Client::builder(["my-mcp-server"])
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

    pub(super) async fn typed<T: DeserializeOwned>(
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
    /// What this client's requests go through ([`Caller::call`]).
    pub(super) fn caller(&self) -> Caller<'_> {
        Caller {
            life: &self.inner.life,
            inbound: &self.inner.inbound,
            inputs: &self.inner.inputs,
            protocol: self.protocol(),
            version: &self.inner.session.protocol_version,
            telemetry: &self.inner.telemetry,
            within: None,
        }
    }

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

    /// A progress token no other call of this client has.
    pub(super) fn progress_token(&self) -> Value {
        Value::String(format!(
            "stdio-mcp-{}",
            self.inner.next_token.fetch_add(1, Ordering::Relaxed)
        ))
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
    /// let client = Client::connect(["my-mcp-server"]).await?;
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
        let outcome = self
            .caller()
            .call(|| self.progress_token(), method, params, options)
            .await;
        self.named(outcome.map_err(explain_missing_capability))
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
    /// let client = stdio_mcp::client::Client::connect(["my-mcp-server"]).await?;
    /// let status = client.close().await?;
    /// println!("the server exited with {status}");
    /// assert!(!client.transport().is_alive());
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn close(&self) -> ClientClose {
        let inner = &self.inner;
        inner
            .telemetry
            .session_ended(&inner.session.protocol_version, None);
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
    /// let client = Client::connect(["my-mcp-server"]).await?;
    /// assert_eq!(client.state(), ClientState::Ready);
    /// client.close().await?;
    /// assert_eq!(client.state(), ClientState::Closed);
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    #[must_use]
    pub fn state(&self) -> ClientState {
        self.inner.life.state()
    }

    /// Whether `other` is a handle of this same client.
    pub(crate) fn same(&self, other: &Client) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Resolves at the next change of [`state`](Self::state) (a group
    /// watches its members so).
    pub(crate) async fn next_change(&self) {
        self.inner.life.next_change().await;
    }

    /// Why calls fail for good, once they do (the exit of a server no policy
    /// restarts, or the policy's give-up), naming the server.
    pub(crate) fn failure(&self) -> Option<Error> {
        self.inner.life.failure().map(|e| e.named(&self.inner.name))
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
/// let client = stdio_mcp::client::Client::connect(["my-mcp-server"]).await?;
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
pub(super) fn excerpt(value: &Value) -> String {
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
