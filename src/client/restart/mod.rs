//! A client that outlives its server: the restart policy, what each restart
//! reports, and the supervisor that starts the server again when it exits on
//! its own.
//!
//! The supervisor rides on the driver the client hands out (`Driver::then`):
//! once the first process is done, and each time a process ends without
//! `close()`, it waits out the backoff, starts the same command again (a
//! legacy server is handshaken again), re-opens the subscriptions, and drives
//! the new process itself. It needs no executor of its own: it runs wherever
//! the driver runs.

pub(super) mod life;

use std::collections::{BTreeSet, VecDeque};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use futures::channel::oneshot;
use futures::future::{select, Either};
use futures::FutureExt;
use serde_json::{json, Map, Value};

use crate::builder::TransportBuilder;
use crate::child::ExitStatus;
use crate::error::Error;
use crate::message::Notification;
use crate::pending::{PendingRequest, RequestOptions};
use crate::route::SharedHandlers;
use crate::transport::Transport;

use super::era::Era;
use super::inbound::Inbound;
use super::life::{exit_error, Life};
use super::model::types::{Implementation, LoggingLevel};
use super::noise::Noise;
use super::origin;
use super::session::{handshake, Hello};
use super::telemetry::Instruments;
use super::wire::{send_listen, Protocol};

/// The method of the item a [`Subscription`](super::Subscription) yields when
/// its server was started again: notifications may have been missed between
/// the exit and the new process taking the subscription back. Its params:
/// `{"restarts": n}`, the client's restart count.
///
/// # Examples
///
/// ```no_run
/// # futures::executor::block_on(async {
/// use futures::StreamExt;
/// use stdio_mcp::client::{Client, ListenFilter, RestartPolicy, RESTARTED};
///
/// let client = Client::builder(["my-mcp-server"])
///     .restart(RestartPolicy::default())
///     .connect()
///     .await?;
/// let mut changes = client.listen(ListenFilter::new().tools_list_changed()).await?;
/// while let Some(change) = changes.next().await {
///     if change.method == RESTARTED {
///         println!("the server restarted: list the tools again, changes may be missed");
///     }
/// }
/// # Ok::<(), stdio_mcp::Error>(()) });
/// ```
pub const RESTARTED: &str = "stdio-mcp/restarted";

/// When a client starts its server again after it exits on its own
/// ([`ClientBuilder::restart`](super::ClientBuilder::restart)).
///
/// At most [`max_restarts`](Self::max_restarts) restarts within a sliding
/// [`within`](Self::within) window; the delay before each doubles from the
/// backoff's initial delay up to its maximum (the first restart in a window
/// waits the initial delay). Past the limit the client gives up: calls fail
/// with the last exit error. Default: 5 restarts within 60 s, backoff from
/// 100 ms to 5 s.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use stdio_mcp::client::RestartPolicy;
///
/// let policy = RestartPolicy::new()
///     .max_restarts(3)
///     .within(Duration::from_secs(30))
///     .backoff(Duration::from_millis(200), Duration::from_secs(2));
/// # let _ = policy;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestartPolicy {
    max_restarts: u32,
    within: Duration,
    initial: Duration,
    max: Duration,
}

impl RestartPolicy {
    /// The default policy: 5 restarts within 60 s, backoff 100 ms to 5 s.
    ///
    /// # Examples
    ///
    /// ```
    /// use stdio_mcp::client::RestartPolicy;
    ///
    /// assert_eq!(RestartPolicy::new(), RestartPolicy::default());
    /// ```
    #[must_use]
    pub fn new() -> Self {
        RestartPolicy {
            max_restarts: 5,
            within: Duration::from_secs(60),
            initial: Duration::from_millis(100),
            max: Duration::from_secs(5),
        }
    }

    /// How many restarts the window allows; `0` never restarts.
    ///
    /// # Examples
    ///
    /// ```
    /// let policy = stdio_mcp::client::RestartPolicy::new().max_restarts(10);
    /// # let _ = policy;
    /// ```
    #[must_use]
    pub fn max_restarts(mut self, restarts: u32) -> Self {
        self.max_restarts = restarts;
        self
    }

    /// The sliding window the restarts are counted in: a server that ran
    /// longer than this since its restarts is restarted as if for the first time.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let policy = stdio_mcp::client::RestartPolicy::new().within(Duration::from_secs(600));
    /// # let _ = policy;
    /// ```
    #[must_use]
    pub fn within(mut self, window: Duration) -> Self {
        self.within = window;
        self
    }

    /// The delay before the first restart of a window, doubled for each
    /// further one up to `max` (raised to `initial` if below it).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let policy = stdio_mcp::client::RestartPolicy::new()
    ///     .backoff(Duration::from_millis(50), Duration::from_secs(1));
    /// # let _ = policy;
    /// ```
    #[must_use]
    pub fn backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.initial = initial;
        self.max = max.max(initial);
        self
    }

    /// The wait before restart number `attempt` (1 for the first) of a window.
    fn delay(&self, attempt: u32) -> Duration {
        let doublings = attempt.saturating_sub(1).min(31);
        self.initial
            .checked_mul(1 << doublings)
            .map_or(self.max, |d| d.min(self.max))
    }
}

impl Default for RestartPolicy {
    fn default() -> Self {
        Self::new()
    }
}

/// What [`ClientBuilder::on_restart`](super::ClientBuilder::on_restart) is told
/// just before the server is started again.
///
/// # Examples
///
/// ```
/// use stdio_mcp::client::RestartInfo;
///
/// fn report(info: &RestartInfo) {
///     eprintln!(
///         "restart {} after exit {:?}; last stderr: {:?}",
///         info.attempt,
///         info.exit_status.and_then(|s| s.code()),
///         info.stderr_tail.last()
///     );
/// }
/// # let _ = report;
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RestartInfo {
    /// This restart's number within the policy's window, 1 for the first.
    pub attempt: u32,
    /// How the previous process ended (`None` if it never started).
    pub exit_status: Option<ExitStatus>,
    /// The last lines the previous process wrote to stderr, oldest first.
    pub stderr_tail: Vec<String>,
}

pub(crate) type RestartHook = Arc<dyn Fn(&RestartInfo) + Send + Sync>;

/// Everything needed to start the server again and make it ready for calls.
/// Told of each process a client starts (a group awaits them all at its close).
pub(crate) type SpawnHook = Arc<dyn Fn(&Transport) + Send + Sync>;

pub(crate) struct Restarter {
    pub(crate) builder: TransportBuilder,
    pub(crate) handlers: SharedHandlers,
    pub(crate) policy: RestartPolicy,
    pub(crate) on_restart: Option<RestartHook>,
    pub(crate) on_spawn: Option<SpawnHook>,
    pub(crate) session: Again,
}

/// What makes a new process ready for the client's session.
pub(crate) struct Again {
    pub(crate) client_info: Implementation,
    pub(crate) capabilities: Value,
    pub(crate) handshake_timeout: Duration,
    pub(crate) era: Era,
    pub(crate) protocol_version: String,
    /// The 2026-07-28 protocol fields, to ask for subscriptions again.
    pub(crate) meta: Option<Map<String, Value>>,
    /// The client's instruments: a handshake again is a span too.
    pub(crate) telemetry: Instruments,
}

/// What a supervisor is handed once its client is connected. Dropped
/// unreceived (the driver was dropped first), it gives the client up.
pub(crate) struct Handoff {
    restarter: Restarter,
    /// The client's life, held weakly, so the supervisor never keeps it alive.
    guard: EndGuard,
}

impl Handoff {
    pub(crate) fn new(life: &Arc<Life>, restarter: Restarter) -> Self {
        Handoff {
            restarter,
            guard: EndGuard(Arc::downgrade(life)),
        }
    }
}

/// Marks the client given up on if its supervisor stops (or never starts)
/// before the client was closed (its driver dropped), so no call waits for a
/// restart that cannot come.
struct EndGuard(Weak<Life>);

impl Drop for EndGuard {
    fn drop(&mut self) {
        if let Some(life) = self.0.upgrade() {
            life.give_up(Error::LeftLoop);
        }
    }
}

/// Runs once the first process is done: if its client connected
/// (`handoff`), restarts the server by the policy each time it exits without
/// being closed, driving each new process itself.
pub(crate) async fn supervise(handoff: oneshot::Receiver<Handoff>) {
    // A failed connect drops the sender: nothing to restart.
    let Ok(Handoff { restarter, guard }) = handoff.await else {
        return;
    };
    let life = guard.0.clone();
    let mut restarts_in_window: VecDeque<Instant> = VecDeque::new();
    let Some(mut loss) = unexpected_exit(&life) else {
        return;
    };
    loop {
        let now = Instant::now();
        while restarts_in_window
            .front()
            .is_some_and(|t| now.duration_since(*t) > restarter.policy.within)
        {
            restarts_in_window.pop_front();
        }
        let attempt = u32::try_from(restarts_in_window.len()).unwrap_or(u32::MAX);
        if attempt >= restarter.policy.max_restarts {
            event!(warn, error = %loss, "MCP server exited too often: not restarting it");
            if let Some(live) = life.upgrade() {
                live.give_up(Error::GaveUp {
                    restarts: restarter.policy.max_restarts,
                    within: restarter.policy.within,
                    last: Box::new(loss),
                });
            }
            return;
        }
        let attempt = attempt + 1;
        // The backoff, cut short if the client is closed or dropped.
        let closing = match life.upgrade() {
            Some(live) if !live.is_closed() => live.changed(),
            _ => return,
        };
        let delay = restarter.policy.delay(attempt);
        select(async_io::Timer::after(delay), closing).await;
        let Some(live) = life.upgrade() else { return };
        if live.is_closed() {
            return;
        }
        restarts_in_window.push_back(Instant::now());
        let count = live.count_restart();
        event!(info, attempt, restarts = count, error = %loss, "starting the MCP server again");
        if let Some(hook) = &restarter.on_restart {
            let (exit_status, stderr_tail) = match &loss {
                Error::Exited {
                    status,
                    stderr_tail,
                } => (Some(*status), stderr_tail.clone()),
                _ => (None, Vec::new()),
            };
            hook(&RestartInfo {
                attempt,
                exit_status,
                stderr_tail,
            });
        }
        let closing = live.changed();
        let (log_level, subscribed) = live.to_restore();
        drop(live);
        let (transport, next) =
            match origin::spawn(restarter.builder.again(restarter.handlers.handlers())) {
                Ok(started) => started,
                Err(error) => {
                    loss = error;
                    continue;
                }
            };
        if let Some(hook) = &restarter.on_spawn {
            hook(&transport);
        }
        // Ready for calls (a legacy server handshaken), unless closed meanwhile:
        // dropping the new driver then kills the new process.
        let readying = next.run_until(restarter.session.ready(&transport, log_level).boxed());
        let (ready, mut driver) = match select(readying, closing).await {
            Either::Left((done, _)) => done,
            Either::Right(_) => return,
        };
        if let Err(error) = ready {
            event!(warn, error = %error, "the restarted MCP server is not usable: closing it");
            let died = matches!(
                error,
                Error::Exited { .. } | Error::NotAlive | Error::StdoutClosed
            );
            let closed = transport.close();
            (&mut driver).await;
            let _ = closed.await;
            // A server that died while being readied: its exit and stderr tell why.
            loss = if died { exit_error(&transport) } else { error };
            continue;
        }
        let Some(live) = life.upgrade() else { return };
        // Subscriptions are asked for before any call can reach the new process.
        let inbound = live.inbound();
        let installed = live.install(transport.clone(), |transport| {
            restarter
                .session
                .reopen(&inbound, transport, count, subscribed, log_level)
        });
        drop(live);
        let subscribed = match installed {
            Ok(subscribed) => subscribed,
            Err(transport) => {
                let closed = transport.close();
                driver.await;
                let _ = closed.await;
                return;
            }
        };
        // The new process may offer other tools than the last.
        inbound.tools_stale();
        let confirming = restarter.session.confirm(subscribed);
        let ((), driver) = driver.run_until(confirming).await;
        drop(transport);
        driver.await;
        let Some(next_loss) = unexpected_exit(&life) else {
            return;
        };
        loss = next_loss;
    }
}

/// After a process ended: why, if it exited on its own; `None` if the client
/// is gone or closed it (closing the transport itself counts as closing).
fn unexpected_exit(life: &Weak<Life>) -> Option<Error> {
    Some(exit_error(&life.upgrade()?.ended()?))
}

impl Again {
    /// A new process made ready for calls: a legacy server is handshaken
    /// again, must agree on the same revision, and is asked for the log
    /// level the client had set.
    async fn ready(
        &self,
        transport: &Transport,
        log_level: Option<LoggingLevel>,
    ) -> Result<(), Error> {
        if self.era != Era::Legacy {
            return Ok(());
        }
        let hello = Hello {
            client_info: &self.client_info,
            capabilities: &self.capabilities,
            handshake_timeout: self.handshake_timeout,
            probe_timeout: self.handshake_timeout,
            noise: &Noise::default(),
            deadline: None,
            telemetry: &self.telemetry,
        };
        let session = handshake(transport, &hello, Some(&self.protocol_version)).await?;
        if session.protocol_version != self.protocol_version {
            return Err(Error::Protocol(format!(
                "the restarted server answered protocol version {}; the client speaks {}",
                session.protocol_version, self.protocol_version
            )));
        }
        if let Some(level) = log_level {
            transport
                .send_request_with(
                    "logging/setLevel",
                    Some(json!({ "level": level })),
                    RequestOptions::new().timeout(self.handshake_timeout),
                )
                .await?;
        }
        Ok(())
    }

    /// Takes the subscriptions back to the new process and tells each stream
    /// of the gap; asks a legacy server again for the resources in
    /// `subscribed`, returning those requests.
    fn reopen(
        &self,
        inbound: &Inbound,
        transport: &Transport,
        restarts: u64,
        subscribed: BTreeSet<String>,
        log_level: Option<LoggingLevel>,
    ) -> Vec<(String, PendingRequest)> {
        let gap = Notification {
            method: RESTARTED.into(),
            params: Some(json!({ "restarts": restarts })),
        };
        let protocol = Protocol {
            fields: self.meta.as_ref(),
            log_level: log_level.map(|level| json!(level)),
            ..Protocol::default()
        };
        inbound.listeners.reopen(&gap, |filter| {
            send_listen(transport, filter, &protocol, None)
        });
        subscribed
            .into_iter()
            .map(|uri| {
                let request = transport.send_request_with(
                    "resources/subscribe",
                    Some(json!({ "uri": uri })),
                    RequestOptions::new().timeout(self.handshake_timeout),
                );
                (uri, request)
            })
            .collect()
    }

    /// Waits for the legacy resource subscriptions to be answered.
    async fn confirm(&self, subscribed: Vec<(String, PendingRequest)>) {
        for (_uri, request) in subscribed {
            if let Err(_error) = request.await {
                event!(warn, uri = %_uri, error = %_error, "the restarted MCP server refused a resource subscription");
            }
        }
    }
}
