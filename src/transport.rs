//! The cheap, cloneable handle users send through, and the future `close()` returns.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use crate::child::ExitStatus;
use crate::error::{Error, RpcError};
use crate::message::{push_notification, push_request, push_request_with_meta, push_response};
use crate::pending::{PendingRequest, RequestOptions};
use crate::shared::{Deadline, Shared, Slot};

/// A handle on one running MCP server: send requests and notifications, answer
/// its requests, close it.
///
/// Cloning is cheap (a reference count); all clones talk to the same child.
/// When every clone and every [`PendingRequest`] is gone, the driver closes the
/// child as [`close`](Self::close) does.
///
/// ```no_run
/// # futures::executor::block_on(async {
/// use serde_json::json;
/// use stdio_mcp::Transport;
///
/// let t = Transport::builder(["my-mcp-server", "--stdio"]).spawn()?;
/// let init = t
///     .send_request("initialize", Some(json!({
///         "protocolVersion": "2025-11-25",
///         "capabilities": {},
///         "clientInfo": {"name": "demo", "version": "1"}
///     })))
///     .await?;
/// t.send_notification("notifications/initialized", None)?;
/// let tools = t.send_request("tools/list", None).await?;
/// println!("{init}\n{tools}");
/// t.close().await?;
/// # Ok::<(), stdio_mcp::Error>(()) });
/// ```
pub struct Transport {
    shared: Arc<Shared>,
}

impl Transport {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        shared.add_handle();
        Transport { shared }
    }

    /// Sends a request; the returned future resolves to its `result`.
    ///
    /// The line is queued before this returns, so requests reach the server in
    /// call order. It fails (when awaited) with [`Error::NotAlive`] if the child
    /// has exited or `close()` was called. The transport's default timeout applies.
    ///
    /// # Examples
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use serde_json::json;
    ///
    /// // A one-line server: answers request 1, then waits for the end of its input.
    /// let server = r#"read line; echo '{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}'; cat >/dev/null"#;
    /// let t = stdio_mcp::Transport::builder(["sh", "-c", server]).spawn()?;
    /// let tools = t.send_request("tools/list", None).await?;
    /// assert_eq!(tools, json!({"tools": []}));
    /// t.close().await?;
    /// # Ok::<(), stdio_mcp::Error>(()) }).unwrap();
    /// ```
    pub fn send_request(&self, method: &str, params: Option<Value>) -> PendingRequest {
        self.send_request_with(method, params, RequestOptions::new())
    }

    /// [`send_request`](Self::send_request) with per-request options.
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use std::time::Duration;
    /// use serde_json::json;
    /// use stdio_mcp::{RequestOptions, Transport};
    ///
    /// let t = Transport::builder(["my-mcp-server"]).spawn()?;
    /// let slow = t.send_request_with(
    ///     "tools/call",
    ///     Some(json!({ "name": "build", "arguments": {} })),
    ///     RequestOptions::new().timeout(Duration::from_secs(600)),
    /// );
    /// let result = slow.await?;
    /// # let _ = result; Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn send_request_with(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> PendingRequest {
        self.send_borrowed(method, params.as_ref(), options)
    }

    /// [`send_request_with`](Self::send_request_with) from borrowed params (the
    /// line is written at the call), so a caller may send them again.
    pub(crate) fn send_borrowed(
        &self,
        method: &str,
        params: Option<&Value>,
        options: RequestOptions,
    ) -> PendingRequest {
        self.send_line(method, options, |out, id| {
            push_request(out, id, method, params)
        })
    }

    /// A request whose params (without `_meta`) get `meta`, the members of a
    /// `_meta` object already serialized, written into the line.
    pub(crate) fn send_with_meta(
        &self,
        method: &str,
        params: Option<&Map<String, Value>>,
        meta: &str,
        options: RequestOptions,
    ) -> PendingRequest {
        self.send_line(method, options, |out, id| {
            push_request_with_meta(out, id, method, params, meta)
        })
    }

    /// Queues a request line `write` makes for its id, and registers it.
    fn send_line(
        &self,
        method: &str,
        options: RequestOptions,
        write: impl FnOnce(&mut Vec<u8>, u64),
    ) -> PendingRequest {
        if let Some(notification) = options.resolve_on_notification {
            return PendingRequest::refused(Error::ResolveOnNotification { notification });
        }
        let mut limits = (None, None);
        let queued = self.queue_request(
            |default_timeout| {
                let timeout = options.timeout.unwrap_or(default_timeout);
                // The swept limit serves only a request that has no other.
                let swept = options.swept.filter(|_| timeout.is_none());
                limits = (timeout, swept);
                let deadline = swept.map(|after| Deadline {
                    at: Instant::now() + after,
                    after,
                });
                Slot::Waiting(None, deadline)
            },
            write,
        );
        match queued {
            Ok(id) => {
                let (timeout, swept) = limits;
                PendingRequest::waiting(Arc::clone(&self.shared), id, method, timeout, swept)
            }
            Err(refusal) => PendingRequest::refused(refusal),
        }
    }

    /// Sends a request nobody waits for: its answer is dropped when it comes
    /// (for clean-up that must not block, such as unsubscribing from a drop).
    pub(crate) fn send_detached(&self, method: &str, params: Option<&Value>) -> Result<(), Error> {
        event!(debug, method, "detached request queued");
        self.queue_request(
            |_| Slot::Detached,
            |out, id| push_request(out, id, method, params),
        )
        .map(drop)
    }

    /// Queues a request line `write` makes for its id and registers the slot
    /// `slot` makes (from the transport's default limit) for its answer.
    fn queue_request(
        &self,
        slot: impl FnOnce(Option<Duration>) -> Slot,
        write: impl FnOnce(&mut Vec<u8>, u64),
    ) -> Result<u64, Error> {
        let mut sent = Err(Error::NotAlive);
        self.shared.send(|state| {
            if let Some(refusal) = state.phase.refusal() {
                sent = Err(refusal.clone());
                return false;
            }
            let id = self.shared.next_id();
            write(&mut state.outgoing, id);
            // Registered with the line, under the same lock: no answer can beat it.
            let slot = slot(state.default_timeout);
            if let Slot::Waiting(_, Some(deadline)) = &slot {
                state.watch_deadline(deadline.at);
            }
            state.pending.insert(id, slot);
            sent = Ok(id);
            true
        });
        sent
    }

    /// Sends a notification (no answer expected).
    ///
    /// # Errors
    ///
    /// [`Error::NotAlive`] if the child has exited or `close()` was called.
    ///
    /// # Examples
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// let t = stdio_mcp::Transport::builder(["cat"]).spawn()?;
    /// t.send_notification("notifications/initialized", None)?;
    /// t.close().await?;
    /// assert!(t.send_notification("notifications/initialized", None).is_err());
    /// # Ok::<(), stdio_mcp::Error>(()) }).unwrap();
    /// ```
    pub fn send_notification(&self, method: &str, params: Option<Value>) -> Result<(), Error> {
        event!(debug, method, "notification queued");
        self.queue(|out| push_notification(out, method, params.as_ref()))
    }

    /// Answers a request the server sent (see [`TransportBuilder::on_request`](crate::TransportBuilder::on_request)), passing its
    /// `id` back unchanged.
    ///
    /// ```no_run
    /// use std::sync::mpsc;
    /// use serde_json::json;
    /// use stdio_mcp::Transport;
    ///
    /// let (asked, questions) = mpsc::channel();
    /// let t = Transport::builder(["my-mcp-server"])
    ///     .on_request(move |r| {
    ///         asked.send(r.clone()).ok();
    ///         None // answered below, once we know
    ///     })
    ///     .spawn()?;
    /// for request in questions {
    ///     t.respond(request.id, Ok(json!({ "action": "accept" })))?;
    /// }
    /// # Ok::<(), stdio_mcp::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::NotAlive`] if the child has exited or `close()` was called.
    pub fn respond(&self, id: Value, outcome: Result<Value, RpcError>) -> Result<(), Error> {
        self.queue(|out| push_response(out, &id, &outcome))
    }

    fn queue(&self, write: impl FnOnce(&mut Vec<u8>)) -> Result<(), Error> {
        let mut outcome = Ok(());
        self.shared.send(|state| match state.phase.refusal() {
            Some(refusal) => {
                outcome = Err(refusal.clone());
                false
            }
            None => {
                write(&mut state.outgoing);
                true
            }
        });
        outcome
    }

    /// Changes the default time limit for requests sent from now on; requests
    /// already sent keep theirs. `None` is no limit.
    ///
    /// # Examples
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use std::time::Duration;
    ///
    /// let t = stdio_mcp::Transport::builder(["cat"]).spawn()?;
    /// t.set_timeout(Some(Duration::from_millis(100)));
    /// // `cat` echoes the request back: a request, not an answer, so it times out.
    /// let error = t.send_request("slow", None).await.unwrap_err();
    /// assert_eq!(error.category(), Some("timeout"));
    /// t.close().await?;
    /// # Ok::<(), stdio_mcp::Error>(()) }).unwrap();
    /// ```
    pub fn set_timeout(&self, limit: impl Into<Option<Duration>>) {
        self.shared.lock().default_timeout = limit.into();
    }

    /// The default time limit new requests get.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let t = stdio_mcp::Transport::builder(["my-mcp-server"]).spawn()?;
    /// assert_eq!(t.timeout(), None); // no limit unless one is set
    /// # Ok::<(), stdio_mcp::Error>(())
    /// ```
    #[must_use]
    pub fn timeout(&self) -> Option<Duration> {
        self.shared.lock().default_timeout
    }

    /// True while the child can carry requests; false once it has exited, closed
    /// its stdout, or `close()` was called.
    ///
    /// # Examples
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// let t = stdio_mcp::Transport::builder(["cat"]).spawn()?;
    /// assert!(t.is_alive());
    /// let closing = t.close();
    /// assert!(!t.is_alive());
    /// closing.await?;
    /// # Ok::<(), stdio_mcp::Error>(()) }).unwrap();
    /// ```
    #[must_use]
    pub fn is_alive(&self) -> bool {
        self.shared.lock().phase.is_open()
    }

    /// How many bytes written to the child's stdin it has not read yet, where
    /// the system tells (Linux); `None` elsewhere, or once stdin is closed.
    pub(crate) fn unread_input(&self) -> Option<usize> {
        self.shared.lock().direct.as_ref().and_then(|d| d.unread())
    }

    /// The last 20 non-empty lines the child wrote to stderr, oldest first,
    /// still there after it exited.
    ///
    /// # Examples
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// let t = stdio_mcp::Transport::builder(["sh", "-c", "echo one >&2; echo two >&2"]).spawn()?;
    /// t.close().await?;
    /// assert_eq!(t.stderr_tail(), ["one", "two"]);
    /// # Ok::<(), stdio_mcp::Error>(()) }).unwrap();
    /// ```
    #[must_use]
    pub fn stderr_tail(&self) -> Vec<String> {
        self.shared.lock().stderr_tail.iter().cloned().collect()
    }

    /// Whether the child runs in a sandbox, and a view of its stderr tail
    /// that keeps no handle on it (so the child still closes with its last).
    pub(crate) fn failure_context(&self) -> (bool, impl Fn() -> Vec<String>) {
        let shared = Arc::clone(&self.shared);
        (self.shared.sandboxed, move || {
            shared.lock().stderr_tail.iter().cloned().collect()
        })
    }

    /// How the child ended, once it has.
    ///
    /// # Examples
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// let t = stdio_mcp::Transport::builder(["sh", "-c", "exit 3"]).spawn()?;
    /// t.close().await?;
    /// assert_eq!(t.exit_status().unwrap().code(), Some(3));
    /// # Ok::<(), stdio_mcp::Error>(()) }).unwrap();
    /// ```
    #[must_use]
    pub fn exit_status(&self) -> Option<ExitStatus> {
        self.shared.lock().phase.status()
    }

    /// Always false: a JSON-RPC line on stdin has no headers to mirror parameters into.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let t = stdio_mcp::Transport::builder(["my-mcp-server"]).spawn()?;
    /// assert!(!t.mirrors_header_params());
    /// # Ok::<(), stdio_mcp::Error>(())
    /// ```
    #[must_use]
    pub fn mirrors_header_params(&self) -> bool {
        false
    }

    /// How many stdout lines were discarded as unusable (see [`TransportBuilder::on_discarded`](crate::TransportBuilder::on_discarded)).
    ///
    /// # Examples
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// let t = stdio_mcp::Transport::builder(["echo", "a banner, not JSON"]).spawn()?;
    /// t.close().await?;
    /// assert_eq!(t.discarded_lines(), 1);
    /// # Ok::<(), stdio_mcp::Error>(()) }).unwrap();
    /// ```
    #[must_use]
    pub fn discarded_lines(&self) -> u64 {
        self.shared
            .discarded
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The child's process id.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let t = stdio_mcp::Transport::builder(["my-mcp-server"]).spawn()?;
    /// println!("server pid {}", t.pid());
    /// # Ok::<(), stdio_mcp::Error>(())
    /// ```
    #[must_use]
    pub fn pid(&self) -> u32 {
        self.shared.pid
    }

    /// Shuts the child down: what is queued is written, its stdin closed; if it
    /// still runs 2 s later it gets SIGTERM, 2 s after that SIGKILL. A server that
    /// exits when its input ends is never signalled.
    ///
    /// Takes effect at the call: [`is_alive`](Self::is_alive) turns false and new
    /// sends fail, while requests already sent keep waiting until the child exits.
    /// The returned future resolves once it has; every call gets the same outcome.
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::Transport;
    ///
    /// let t = Transport::builder(["my-mcp-server"]).spawn()?;
    /// let closing = t.close();
    /// assert!(!t.is_alive()); // at once
    /// closing.await?;         // once the server has exited
    /// println!("{:?}", t.exit_status());
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn close(&self) -> Close {
        // Only the first close of an open transport has anything to tell the driver.
        self.shared.for_driver(|state| {
            state.close_asked = true;
            state.phase.stop(Error::NotAlive)
        });
        Close::new(Arc::clone(&self.shared))
    }

    /// Resolves when the child has exited (and the close ladder is done with
    /// its group), whatever ended it; closes nothing.
    pub(crate) fn exited(&self) -> Close {
        Close::new(Arc::clone(&self.shared))
    }

    /// Whether [`close`](Self::close) was called (a client does not restart
    /// a server it was asked to close).
    pub(crate) fn close_asked(&self) -> bool {
        self.shared.lock().close_asked
    }
}

impl Clone for Transport {
    fn clone(&self) -> Self {
        Transport::new(Arc::clone(&self.shared))
    }
}

impl Drop for Transport {
    fn drop(&mut self) {
        self.shared.release_handle();
    }
}

impl fmt::Debug for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Transport")
            .field("pid", &self.shared.pid)
            .field("alive", &self.is_alive())
            .finish()
    }
}

/// Resolves once the child has exited after [`Transport::close`](crate::Transport::close).
///
/// `Ok(())` however the child ended (a signal from the close ladder included);
/// [`Error::CloseLeftLoop`] if the driver was dropped first. Every call to `close()`
/// gets a future with the same outcome. The close itself starts when `close()` is
/// called, whether or not this future is ever polled.
///
/// # Examples
///
/// ```
/// # futures::executor::block_on(async {
/// let t = stdio_mcp::Transport::builder(["cat"]).spawn()?;
/// let (a, b) = futures::join!(t.close(), t.close());
/// assert!(a.is_ok() && b.is_ok());
/// # Ok::<(), stdio_mcp::Error>(()) }).unwrap();
/// ```
#[must_use = "close() starts the shutdown; await this to know the child has exited"]
pub struct Close {
    shared: Arc<Shared>,
}

impl Close {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Close { shared }
    }
}

impl Future for Close {
    type Output = Result<(), Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut state = self.shared.lock();
        if let Some(outcome) = state.phase.outcome() {
            return Poll::Ready(outcome.clone());
        }
        // Checked and registered under one lock, so the driver's wake-up cannot
        // fall in between. One waker per task, however often it polls.
        if !state.close_wakers.iter().any(|w| w.will_wake(cx.waker())) {
            state.close_wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

impl fmt::Debug for Close {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Close")
            .field("pid", &self.shared.pid)
            .finish_non_exhaustive()
    }
}
