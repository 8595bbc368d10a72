//! The client's hold on its server: the process calls go to now (replaced by
//! each restart), whether the client is closed or gave up, and what a
//! restarted legacy server must be asked for again (log level, subscriptions).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use event_listener::{Event, EventListener};
use serde_json::json;

use crate::error::Error;
use crate::transport::{Close, Transport};

use crate::client::inbound::Inbound;
use crate::client::model::types::LoggingLevel;
use crate::client::subscription::Holds;

/// The client's side of its server's life: the process calls go to now,
/// whether the client gave up on it, and whether it was closed.
pub(crate) struct Life {
    state: Mutex<LifeState>,
    /// Notified when the process is replaced, given up on, or closed.
    changed: Event,
    restarts: AtomicU64,
    /// Whether an exit is followed by a restart.
    restarting: bool,
    inbound: Arc<Inbound>,
}

struct LifeState {
    transport: Transport,
    /// The error calls fail with once the client gave up on its server.
    gave_up: Option<Error>,
    closed: bool,
    /// The level asked for with `set_logging_level` (sent in each modern
    /// request; asked again of a restarted legacy server).
    log_level: Option<LoggingLevel>,
    /// The resources subscribed to (legacy) and who wants them; subscribed
    /// again after a restart.
    subscribed: BTreeMap<String, Holders>,
}

/// Who wants the updates of one resource (legacy era).
#[derive(Default)]
struct Holders {
    /// `Client::subscribe` asked for them.
    asked: bool,
    /// The `listen` streams that asked for them, by key.
    streams: BTreeSet<u64>,
}

/// The resources a legacy `listen` stream subscribed to. Dropped with the
/// stream, it unsubscribes those that neither `subscribe` nor another stream
/// still wants, without waiting for the answers.
pub(crate) struct Hold {
    /// Weak: a stream that outlives its client keeps no server alive.
    life: Weak<Life>,
    key: u64,
}

impl Hold {
    pub(crate) fn new(life: &Arc<Life>, key: u64) -> Self {
        Hold {
            life: Arc::downgrade(life),
            key,
        }
    }
}

impl Holds for Hold {
    /// Notes that subscribing to `uri` for this stream succeeded.
    fn add(&self, uri: &str) {
        if let Some(life) = self.life.upgrade() {
            let mut state = life.lock();
            let holders = state.subscribed.entry(uri.to_owned()).or_default();
            holders.streams.insert(self.key);
        }
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        let Some(life) = self.life.upgrade() else {
            return;
        };
        let (transport, unwanted) = {
            let mut state = life.lock();
            let mut unwanted = Vec::new();
            state.subscribed.retain(|uri, holders| {
                let released = holders.streams.remove(&self.key);
                let keep = holders.asked || !holders.streams.is_empty();
                if released && !keep {
                    unwanted.push(uri.clone());
                }
                keep || !released
            });
            (state.transport.clone(), unwanted)
        };
        for uri in unwanted {
            // Refused only when the process is gone, and its subscriptions with it.
            let _ = transport.send_detached("resources/unsubscribe", Some(&json!({ "uri": uri })));
        }
    }
}

impl Life {
    pub(crate) fn new(transport: Transport, restarting: bool, inbound: Arc<Inbound>) -> Arc<Self> {
        if restarting {
            inbound.listeners.survive_exits();
        }
        Arc::new(Life {
            state: Mutex::new(LifeState {
                transport,
                gave_up: None,
                closed: false,
                log_level: None,
                subscribed: BTreeMap::new(),
            }),
            changed: Event::new(),
            restarts: AtomicU64::new(0),
            restarting,
            inbound,
        })
    }

    fn lock(&self) -> MutexGuard<'_, LifeState> {
        crate::lock::lock(&self.state)
    }

    /// The current process's transport, as it is.
    pub(crate) fn current(&self) -> Transport {
        self.lock().transport.clone()
    }

    /// The transport a call should use: after an exit that a restart will
    /// follow, the restarted one (waiting for it); the last exit error once
    /// the client gave up.
    pub(crate) async fn transport(&self) -> Result<Transport, Error> {
        loop {
            let listener = {
                let state = self.lock();
                if let Some(error) = &state.gave_up {
                    return Err(error.clone());
                }
                if !self.restarting || state.closed || state.transport.is_alive() {
                    return Ok(state.transport.clone());
                }
                self.changed.listen()
            };
            listener.await;
        }
    }

    /// Whether `transport`'s end (it refused a send) is followed by a
    /// restart: restarts are on, and neither the client nor the transport
    /// was closed nor given up on.
    pub(crate) fn restarts_after(&self, transport: &Transport) -> bool {
        let state = self.lock();
        self.restarting && !state.closed && state.gave_up.is_none() && !transport.close_asked()
    }

    pub(crate) fn log_level(&self) -> Option<LoggingLevel> {
        self.lock().log_level
    }

    pub(crate) fn set_log_level(&self, level: LoggingLevel) {
        self.lock().log_level = Some(level);
    }

    /// Notes that `subscribe` (`on`) or `unsubscribe` of `uri` succeeded. An
    /// unsubscribe ends the updates for the `listen` streams too.
    pub(crate) fn subscribed(&self, uri: &str, on: bool) {
        let mut state = self.lock();
        if on {
            state.subscribed.entry(uri.to_owned()).or_default().asked = true;
        } else {
            state.subscribed.remove(uri);
        }
    }

    pub(crate) fn restarts(&self) -> u64 {
        self.restarts.load(Ordering::Relaxed)
    }

    /// Where the client's server is now.
    pub(crate) fn state(&self) -> ClientState {
        let state = self.lock();
        if state.closed || state.transport.close_asked() {
            ClientState::Closed
        } else if state.gave_up.is_some() {
            ClientState::GaveUp
        } else if state.transport.is_alive() {
            ClientState::Ready
        } else if self.restarting {
            ClientState::Restarting
        } else {
            ClientState::Exited
        }
    }

    /// Why calls fail for good, once they do: the policy's give-up, or the
    /// exit of a server that no policy restarts.
    pub(crate) fn failure(&self) -> Option<Error> {
        let state = self.lock();
        if let Some(error) = &state.gave_up {
            return Some(error.clone());
        }
        let exited = !self.restarting && !state.closed && !state.transport.close_asked();
        (exited && !state.transport.is_alive()).then(|| exit_error(&state.transport))
    }

    /// Resolves at the next change of [`state`](Self::state): the process's
    /// exit, a new process, a give-up or a close.
    pub(crate) async fn next_change(&self) {
        let listener = self.changed.listen();
        let transport = self.current();
        if transport.is_alive() {
            let exited = transport.exited();
            futures::future::select(listener, exited).await;
        } else {
            listener.await;
        }
    }

    /// Closes the current process for good: no restart follows.
    pub(crate) fn close(&self) -> Close {
        let transport = {
            let mut state = self.lock();
            state.closed = true;
            state.transport.clone()
        };
        self.changed.notify(usize::MAX);
        self.inbound.listeners.end_all();
        transport.close()
    }

    pub(in crate::client) fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Makes `transport` the one calls go to, unless the client was closed
    /// meanwhile (then it is handed back). `prepare` runs first, under the
    /// same lock: whoever it tells of the new process finds it installed.
    pub(in crate::client) fn install<T>(
        &self,
        transport: Transport,
        prepare: impl FnOnce(&Transport) -> T,
    ) -> Result<T, Transport> {
        let prepared = {
            let mut state = self.lock();
            if state.closed {
                return Err(transport);
            }
            let prepared = prepare(&transport);
            state.transport = transport;
            prepared
        };
        self.changed.notify(usize::MAX);
        Ok(prepared)
    }

    /// No more restarts: calls fail with `error` from now on.
    pub(in crate::client) fn give_up(&self, error: Error) {
        {
            let mut state = self.lock();
            if state.closed || state.gave_up.is_some() {
                return;
            }
            state.gave_up = Some(error);
        }
        self.changed.notify(usize::MAX);
        self.inbound.listeners.end_all();
    }
}

/// The error of a server's exit: its code or signal, and its stderr's tail.
pub(crate) fn exit_error(transport: &Transport) -> Error {
    Error::Exited {
        status: transport
            .exit_status()
            .unwrap_or_else(crate::child::ExitStatus::unknown),
        stderr_tail: transport.stderr_tail(),
    }
}

/// Where a client's server is, for a host to show: [`Client::state`](crate::client::Client::state).
///
/// ```no_run
/// # futures::executor::block_on(async {
/// use stdio_mcp::client::{Client, ClientState, RestartPolicy};
///
/// let client = Client::builder(["my-mcp-server"])
///     .restart(RestartPolicy::default())
///     .connect()
///     .await?;
/// match client.state() {
///     ClientState::Ready => println!("connected"),
///     ClientState::Restarting => println!("reconnecting…"),
///     ClientState::GaveUp => println!("the server is down for good"),
///     ClientState::Exited => println!("the server exited"),
///     ClientState::Closed => println!("closed"),
///     _ => println!("a state this version does not know"),
/// }
/// # Ok::<(), stdio_mcp::Error>(()) });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ClientState {
    /// The server runs and takes calls.
    Ready,
    /// The server exited; the restart policy is starting it again, and calls
    /// made meanwhile wait for the new process.
    Restarting,
    /// The server is gone for good: it exited and the restart policy gave up
    /// (calls fail with [`ErrorKind::GaveUp`](crate::ErrorKind::GaveUp)).
    GaveUp,
    /// The server exited and there is no restart policy: calls fail with its
    /// exit error (code, stderr).
    Exited,
    /// `close()` was called.
    Closed,
}

/// What the restart supervisor asks of the client's life.
impl Life {
    /// Resolves at the next change: a new process, a close, a give-up, or the
    /// client's end.
    pub(in crate::client) fn changed(&self) -> EventListener {
        self.changed.listen()
    }

    /// Counts one more restart; returns the count since connect.
    pub(in crate::client) fn count_restart(&self) -> u64 {
        self.restarts.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// What a restarted legacy server is asked for again: the log level and
    /// the resources subscribed to.
    pub(in crate::client) fn to_restore(&self) -> (Option<LoggingLevel>, BTreeSet<String>) {
        let state = self.lock();
        (state.log_level, state.subscribed.keys().cloned().collect())
    }

    pub(in crate::client) fn inbound(&self) -> Arc<Inbound> {
        Arc::clone(&self.inbound)
    }

    /// The current process has ended: the client is closed if `close()` was
    /// asked of it; else the process is handed back, as an unexpected end.
    pub(in crate::client) fn ended(&self) -> Option<Transport> {
        let current = self.current();
        if current.close_asked() {
            self.lock().closed = true;
            self.changed.notify(usize::MAX);
        }
        (!self.is_closed()).then_some(current)
    }
}

impl Drop for Life {
    fn drop(&mut self) {
        // A supervisor waiting out a backoff learns that nobody is left to serve.
        self.changed.notify(usize::MAX);
    }
}

impl fmt::Debug for Life {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.lock();
        f.debug_struct("Life")
            .field("transport", &state.transport)
            .field("restarts", &self.restarts())
            .field("gave_up", &state.gave_up)
            .field("closed", &state.closed)
            .finish()
    }
}
