//! The future of one request, and the options a request can be sent with.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use async_io::Timer;
use serde_json::Value;

use crate::error::Error;
use crate::message::push_cancel;
use crate::shared::{Shared, Slot};

/// Options for [`Transport::send_request_with`](crate::Transport::send_request_with).
///
/// ```
/// use std::time::Duration;
/// use stdio_mcp::RequestOptions;
///
/// let options = RequestOptions::new().timeout(Some(Duration::from_secs(5)));
/// # let _ = options;
/// ```
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct RequestOptions {
    pub(crate) timeout: Option<Option<Duration>>,
    /// A limit the driver keeps (no timer of the request's own), used when
    /// the request has no timeout of its own or from the transport.
    pub(crate) swept: Option<Duration>,
    pub(crate) header_params: Option<Value>,
    pub(crate) resolve_on_notification: Option<String>,
}

impl RequestOptions {
    /// No options: the transport's default timeout applies.
    ///
    /// # Examples
    ///
    /// ```
    /// let options = stdio_mcp::RequestOptions::new();
    /// # let _ = options;
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// This request's time limit, overriding the transport's default:
    /// `Some(d)` is a limit of `d` (zero included), `None` is no limit.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use stdio_mcp::RequestOptions;
    ///
    /// let five_seconds = RequestOptions::new().timeout(Duration::from_secs(5));
    /// let no_limit = RequestOptions::new().timeout(None);
    /// # let _ = (five_seconds, no_limit);
    /// ```
    pub fn timeout(mut self, timeout: impl Into<Option<Duration>>) -> Self {
        self.timeout = Some(timeout.into());
        self
    }

    /// A limit the driver keeps for this request when it has no timeout of
    /// its own or from the transport: no timer per request (the client's
    /// default limit, on every call).
    pub(crate) fn swept_timeout(mut self, after: Duration) -> Self {
        self.swept = Some(after);
        self
    }

    /// Accepted for parity with HTTP transports and ignored: a JSON-RPC line on
    /// stdin has no headers to mirror parameters into.
    ///
    /// # Examples
    ///
    /// ```
    /// let options = stdio_mcp::RequestOptions::new().header_params(serde_json::json!({"x": 1}));
    /// # let _ = options;
    /// ```
    pub fn header_params(mut self, params: Value) -> Self {
        self.header_params = Some(params);
        self
    }

    /// Asks for the request to be settled by the named notification instead of a
    /// response. This transport cannot do that, so such a request fails at once
    /// with [`Error::ResolveOnNotification`] rather than waiting forever.
    ///
    /// # Examples
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::RequestOptions;
    ///
    /// let t = stdio_mcp::Transport::builder(["cat"]).spawn()?;
    /// let options = RequestOptions::new().resolve_on_notification("notifications/done");
    /// assert!(t.send_request_with("work", None, options).await.is_err());
    /// t.close().await?;
    /// # Ok::<(), stdio_mcp::Error>(()) }).unwrap();
    /// ```
    pub fn resolve_on_notification(mut self, method: impl Into<String>) -> Self {
        self.resolve_on_notification = Some(method.into());
        self
    }
}

/// The answer to one request: a future resolving to the `result` value, or an [`Error`].
///
/// The request line is already queued when this is returned. Dropping it before
/// it completes cancels the request: the pending entry is removed, a late answer
/// is discarded, and `notifications/cancelled` is queued for the server (unless the
/// server has exited or `close()` was called).
///
/// ```no_run
/// # futures::executor::block_on(async {
/// use stdio_mcp::Transport;
///
/// let t = Transport::builder(["my-mcp-server"]).spawn()?;
/// let request = t.send_request("ping", None);
/// println!("sent request {}", request.id());
/// let result = request.await?;
/// # let _ = result; Ok::<(), stdio_mcp::Error>(()) });
/// ```
#[must_use = "a request is cancelled when its future is dropped"]
pub struct PendingRequest {
    state: RequestState,
    /// Dropped early, it is forgotten without `notifications/cancelled`
    /// (the requests that follow a task, which is cancelled its own way).
    quiet: bool,
}

enum RequestState {
    Waiting {
        shared: Arc<Shared>,
        id: u64,
        limit: Option<Limit>,
        #[cfg(feature = "tracing")]
        span: tracing::Span,
    },
    /// Failed before anything was written.
    Refused(Option<Error>),
    Done,
}

struct Limit {
    /// `None` when the driver sweeps this limit.
    timer: Option<Timer>,
    after: Duration,
    method: Box<str>,
}

impl PendingRequest {
    pub(crate) fn waiting(
        shared: Arc<Shared>,
        id: u64,
        method: &str,
        timeout: Option<Duration>,
        swept: Option<Duration>,
    ) -> Self {
        shared.add_handle();
        let limit = match (timeout, swept) {
            (Some(after), _) => Some((Some(Timer::after(after)), after)),
            (None, Some(after)) => Some((None, after)),
            (None, None) => None,
        };
        let limit = limit.map(|(timer, after)| Limit {
            timer,
            after,
            method: method.into(),
        });
        event!(debug, id, method, "request queued");
        PendingRequest {
            quiet: false,
            state: RequestState::Waiting {
                #[cfg(feature = "tracing")]
                span: tracing::debug_span!("mcp_request", id, method),
                shared,
                id,
                limit,
            },
        }
    }

    pub(crate) fn refused(error: Error) -> Self {
        PendingRequest {
            state: RequestState::Refused(Some(error)),
            quiet: false,
        }
    }

    /// The request's JSON-RPC id, or 0 for a request refused before it was written.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let t = stdio_mcp::Transport::builder(["my-mcp-server"]).spawn()?;
    /// let first = t.send_request("ping", None);
    /// assert_eq!(first.id(), 1);
    /// # Ok::<(), stdio_mcp::Error>(())
    /// ```
    #[must_use]
    pub fn id(&self) -> u64 {
        match &self.state {
            RequestState::Waiting { id, .. } => *id,
            _ => 0,
        }
    }

    /// Makes a drop before the answer forget the request instead of
    /// cancelling it: its answer is dropped when it comes.
    pub(crate) fn quiet(mut self) -> Self {
        self.quiet = true;
        self
    }

    /// Gives up on the request with `reason` in its `notifications/cancelled`
    /// (a time limit the caller keeps itself). An answer that already came is
    /// returned instead.
    pub(crate) fn cancel(mut self, reason: &str) -> Option<Result<Value, Error>> {
        let RequestState::Waiting { shared, id, .. } =
            std::mem::replace(&mut self.state, RequestState::Done)
        else {
            return None;
        };
        let answer = cancel(&shared, id, Some(reason));
        shared.release_handle();
        answer
    }

    /// Ends the wait, releasing this request's handle on the transport.
    fn finish(&mut self, outcome: Result<Value, Error>) -> Poll<Result<Value, Error>> {
        if let RequestState::Waiting { shared, .. } =
            std::mem::replace(&mut self.state, RequestState::Done)
        {
            shared.release_handle();
        }
        Poll::Ready(outcome)
    }
}

impl Future for PendingRequest {
    type Output = Result<Value, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        #[cfg(feature = "tracing")]
        let _entered = match &this.state {
            RequestState::Waiting { span, .. } => Some(span.clone().entered()),
            _ => None,
        };
        let (shared, id, limit) = match &mut this.state {
            RequestState::Waiting {
                shared, id, limit, ..
            } => (shared, *id, limit),
            RequestState::Refused(error) => {
                let error = error.take().expect("polled after completion");
                this.state = RequestState::Done;
                return Poll::Ready(Err(error));
            }
            RequestState::Done => panic!("PendingRequest polled after completion"),
        };

        {
            let mut state = shared.lock();
            match state.pending.get_mut(&id) {
                Some(Slot::Waiting(waker, _)) => match waker {
                    Some(w) if w.will_wake(cx.waker()) => {}
                    _ => *waker = Some(cx.waker().clone()),
                },
                Some(Slot::Answered(_)) => {
                    let Some(Slot::Answered(outcome)) = state.remove_pending(id) else {
                        unreachable!()
                    };
                    drop(state);
                    return this.finish(outcome);
                }
                Some(Slot::Expired) => {
                    state.remove_pending(id);
                    drop(state);
                    let limit = limit.as_ref().expect("only a limited request expires");
                    event!(info, after = ?limit.after, "request timed out (swept): cancelled");
                    let error = Error::Timeout {
                        method: limit.method.to_string(),
                        after: limit.after,
                    };
                    return this.finish(Err(error));
                }
                None | Some(Slot::Detached) => {
                    unreachable!("a waiting request always has its own slot")
                }
            }
        }

        // A limit the driver sweeps has no timer here.
        let Some(limit) = limit.as_mut().filter(|l| l.timer.is_some()) else {
            return Poll::Pending;
        };
        let timer = limit.timer.as_mut().expect("filtered above");
        if Pin::new(timer).poll(cx).is_pending() {
            return Poll::Pending;
        }
        // Out of time, unless the answer landed in the meantime.
        let error = Error::Timeout {
            method: limit.method.to_string(),
            after: limit.after,
        };
        let reason = format!("timed out after {}s", limit.after.as_secs_f64());
        event!(info, after = ?limit.after, "request timed out: cancelling it");
        let outcome = match cancel(shared, id, Some(&reason)) {
            Some(answer) => answer,
            None => Err(error),
        };
        this.finish(outcome)
    }
}

impl Drop for PendingRequest {
    fn drop(&mut self) {
        if let RequestState::Waiting { shared, id, .. } = &self.state {
            if self.quiet {
                forget(shared, *id);
            } else {
                // An answer already read counts as finished: no cancel for it.
                let _ = cancel(shared, *id, None);
            }
            shared.release_handle();
        }
    }
}

/// Removes request `id`. If it was still waiting and the child can take lines,
/// queues `notifications/cancelled`. Returns the answer if one had arrived.
fn cancel(shared: &Shared, id: u64, reason: Option<&str>) -> Option<Result<Value, Error>> {
    let mut answer = None;
    shared.for_driver(|state| match state.remove_pending(id) {
        Some(Slot::Answered(outcome)) => {
            answer = Some(outcome);
            false
        }
        Some(Slot::Waiting(..)) if state.phase.is_open() => {
            event!(debug, id, reason, "notifications/cancelled queued");
            push_cancel(&mut state.outgoing, id, reason);
            true
        }
        _ => false,
    });
    answer
}

/// Leaves request `id` to be answered with nobody waiting: its answer is
/// dropped when it comes, and nothing is sent.
fn forget(shared: &Shared, id: u64) {
    let mut state = shared.lock();
    if let Some(Slot::Waiting(..)) = state.remove_pending(id) {
        state.pending.insert(id, Slot::Detached);
    }
}

impl fmt::Debug for PendingRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("PendingRequest");
        match &self.state {
            RequestState::Waiting { id, limit, .. } => d
                .field("id", id)
                .field("timeout", &limit.as_ref().map(|l| l.after))
                .finish(),
            RequestState::Refused(error) => d.field("refused", error).finish(),
            RequestState::Done => d.field("done", &true).finish(),
        }
    }
}
