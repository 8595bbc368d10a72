//! How one request is made: the protocol fields its era puts in `_meta`, the
//! check of its `resultType`, and the call's own limits, `_meta` and progress.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use async_io::Timer;
use futures::task::AtomicWaker;
use futures::FutureExt;
use serde_json::{Map, Value};

use crate::error::Error;
use crate::pending::{PendingRequest, RequestOptions};
use crate::transport::Transport;

use super::inbound::{token_key, ProgressRoutes};
use super::types::Progress;

type ProgressCallback = Box<dyn FnMut(&Progress) + Send>;

/// How one call is made: [`Client::request`](super::Client::request) and
/// [`Client::call_tool_with`](super::Client::call_tool_with).
///
/// By default a call has the transport's time limit, which progress does not
/// extend. With [`reset_timeout_on_progress`](Self::reset_timeout_on_progress)
/// the limit counts from the latest progress notification instead, and
/// [`max_total_time`](Self::max_total_time) caps the whole call whatever
/// progress comes. A call that runs out of time is cancelled on the wire
/// (`notifications/cancelled` with a reason) and fails with category `"timeout"`.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use serde_json::json;
/// use stdio_mcp::client::CallOptions;
///
/// let options = CallOptions::new()
///     .timeout(Duration::from_secs(30))          // quiet for 30 s: give up
///     .reset_timeout_on_progress(true)           // each progress starts it again
///     .max_total_time(Duration::from_secs(600))  // but never more than 10 min
///     .meta(json!({ "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" }))
///     .on_progress(|p| println!("{} of {:?}", p.progress, p.total));
/// # let _ = options;
/// ```
#[must_use]
#[derive(Default)]
pub struct CallOptions {
    timeout: Option<Duration>,
    reset_on_progress: bool,
    max_total: Option<Duration>,
    meta: Option<Value>,
    on_progress: Option<ProgressCallback>,
}

impl CallOptions {
    /// The transport's default limit, no extra `_meta`, no progress callback.
    ///
    /// # Examples
    ///
    /// ```
    /// let options = stdio_mcp::client::CallOptions::new();
    /// # let _ = options;
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// This call's time limit, instead of the transport's default.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// let options = stdio_mcp::client::CallOptions::new().timeout(Duration::from_secs(5));
    /// # let _ = options;
    /// ```
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// Whether each progress notification of this call starts its time limit
    /// again (default: no, the limit bounds the whole call). Asks the server
    /// for progress (a `progressToken`) when set.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use stdio_mcp::client::CallOptions;
    ///
    /// let options = CallOptions::new()
    ///     .timeout(Duration::from_secs(10))
    ///     .reset_timeout_on_progress(true);
    /// # let _ = options;
    /// ```
    pub fn reset_timeout_on_progress(mut self, reset: bool) -> Self {
        self.reset_on_progress = reset;
        self
    }

    /// A cap on the whole call that progress never extends.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// let options = stdio_mcp::client::CallOptions::new().max_total_time(Duration::from_secs(300));
    /// # let _ = options;
    /// ```
    pub fn max_total_time(mut self, cap: Duration) -> Self {
        self.max_total = Some(cap);
        self
    }

    /// Extra `_meta` keys for this request (an object), e.g. `traceparent`;
    /// merged over any `_meta` already in the params.
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::json;
    /// let options = stdio_mcp::client::CallOptions::new().meta(json!({ "tenant": "blue" }));
    /// # let _ = options;
    /// ```
    pub fn meta(mut self, meta: Value) -> Self {
        self.meta = Some(meta);
        self
    }

    /// Called with each progress notification of this call, in order, all
    /// before the call completes. Asks the server for progress.
    ///
    /// # Examples
    ///
    /// ```
    /// let options = stdio_mcp::client::CallOptions::new()
    ///     .on_progress(|p| eprintln!("{}/{:?} {}", p.progress, p.total, p.message.as_deref().unwrap_or("")));
    /// # let _ = options;
    /// ```
    pub fn on_progress(mut self, callback: impl FnMut(&Progress) + Send + 'static) -> Self {
        self.on_progress = Some(Box::new(callback));
        self
    }

    fn wants_progress(&self) -> bool {
        self.on_progress.is_some() || self.reset_on_progress
    }
}

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("timeout", &self.timeout)
            .field("reset_timeout_on_progress", &self.reset_on_progress)
            .field("max_total_time", &self.max_total)
            .field("meta", &self.meta)
            .field("on_progress", &self.on_progress.is_some())
            .finish()
    }
}

/// What the session's era adds to every request.
#[derive(Debug, Default)]
pub(crate) struct Protocol {
    /// The 2026-07-28 protocol fields (and log level), for `_meta`; `None` in
    /// the legacy era.
    pub(crate) meta: Option<Map<String, Value>>,
}

/// Checks a 2026-07-28 result's `resultType`: absent or `complete` is a
/// result; anything else is an error that says what came.
pub(crate) fn complete(method: &str, result: &Value) -> Result<(), Error> {
    match result.get("resultType") {
        None => Ok(()),
        Some(Value::String(kind)) if kind == "complete" => Ok(()),
        Some(Value::String(kind)) if kind == "input_required" => Err(Error::Protocol(format!(
            "the server needs more input to answer {method} (resultType input_required), \
             and this client does not answer input requests yet"
        ))),
        Some(other) => Err(Error::Protocol(format!(
            "the server answered {method} with an unknown resultType {other}"
        ))),
    }
}

/// When the latest progress of a call came, and who waits to hear of it.
#[derive(Default)]
struct LastProgress {
    at: Mutex<Option<Instant>>,
    waker: AtomicWaker,
}

/// Sends `method` with `params` as `options` say and waits for its result.
pub(crate) async fn call(
    transport: &Transport,
    progress: &ProgressRoutes,
    protocol: Protocol,
    token: impl FnOnce() -> Value,
    method: &str,
    params: Option<Value>,
    options: CallOptions,
) -> Result<Value, Error> {
    let modern = protocol.meta.is_some();
    let result = limited(
        transport, progress, protocol, token, method, params, options,
    )
    .await?;
    if modern {
        complete(method, &result)?;
    }
    Ok(result)
}

async fn limited(
    transport: &Transport,
    progress: &ProgressRoutes,
    protocol: Protocol,
    token: impl FnOnce() -> Value,
    method: &str,
    params: Option<Value>,
    mut options: CallOptions,
) -> Result<Value, Error> {
    let mut meta = options.meta.take().map(into_object).transpose()?;
    let mut route = None;
    let last = Arc::new(LastProgress::default());
    if options.wants_progress() {
        let token = token();
        let key = token_key(&token);
        meta.get_or_insert_with(Map::new)
            .insert("progressToken".into(), token);
        let mut user = options.on_progress.take();
        let seen = Arc::clone(&last);
        progress.add(key.clone(), move |p: &Progress| {
            if let Some(user) = &mut user {
                user(p);
            }
            *seen.at.lock().unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
            seen.waker.wake();
        });
        // Unregistered however the call ends, drop included.
        route = Some(Route(progress, key));
    }
    let params = with_meta(method, params, protocol.meta, meta)?;
    let limit = options.timeout.or(transport.timeout());
    let managed = options.reset_on_progress || options.max_total.is_some();
    if !managed {
        let request = RequestOptions::new().timeout(limit);
        return transport.send_request_with(method, params, request).await;
    }
    // The limits are kept here: the transport's own would not restart.
    let request = transport.send_request_with(method, params, RequestOptions::new().timeout(None));
    let limits = Limits {
        method,
        started: Instant::now(),
        idle: limit,
        reset: options.reset_on_progress,
        total: options.max_total,
    };
    let outcome = limits.wait(request, &last).await;
    drop(route);
    outcome
}

struct Route<'a>(&'a ProgressRoutes, String);

impl Drop for Route<'_> {
    fn drop(&mut self) {
        self.0.remove(&self.1);
    }
}

struct Limits<'a> {
    method: &'a str,
    started: Instant,
    idle: Option<Duration>,
    reset: bool,
    total: Option<Duration>,
}

impl Limits<'_> {
    /// The earliest deadline now, and the limit it stands for.
    fn deadline(&self, last: &LastProgress) -> Option<(Instant, Duration)> {
        let since = match *last.at.lock().unwrap_or_else(PoisonError::into_inner) {
            Some(at) if self.reset => at,
            _ => self.started,
        };
        let idle = self.idle.map(|d| (since + d, d));
        let total = self.total.map(|d| (self.started + d, d));
        match (idle, total) {
            (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
            (a, b) => a.or(b),
        }
    }

    async fn wait(self, mut request: PendingRequest, last: &LastProgress) -> Result<Value, Error> {
        let mut timer: Option<(Timer, Instant, Duration)> = None;
        let fired = futures::future::poll_fn(|cx: &mut Context<'_>| {
            last.waker.register(cx.waker());
            if let Poll::Ready(outcome) = request.poll_unpin(cx) {
                return Poll::Ready(Err(outcome));
            }
            // Recomputed at each wake-up: a progress may have moved the deadline.
            let Some((at, limit)) = self.deadline(last) else {
                return Poll::Pending;
            };
            let (timer, when, current) = timer.get_or_insert_with(|| (Timer::at(at), at, limit));
            if *when != at {
                timer.set_at(at);
                (*when, *current) = (at, limit);
            }
            match Pin::new(timer).poll(cx) {
                Poll::Ready(_) => Poll::Ready(Ok(*current)),
                Poll::Pending => Poll::Pending,
            }
        })
        .await;
        let limit = match fired {
            Err(outcome) => return outcome,
            Ok(limit) => limit,
        };
        let reason = format!("timed out after {}s", limit.as_secs_f64());
        match request.cancel(&reason) {
            // The answer came in the meantime: it wins.
            Some(answer) => answer,
            None => Err(Error::Timeout {
                method: self.method.to_owned(),
                after: limit,
            }),
        }
    }
}

fn into_object(meta: Value) -> Result<Map<String, Value>, Error> {
    match meta {
        Value::Object(map) => Ok(map),
        other => Err(Error::Protocol(format!(
            "CallOptions::meta takes a JSON object of _meta keys, not {other}"
        ))),
    }
}

/// `params` with the era's protocol fields added to its `_meta` where the
/// caller set none of the same name, and the call's own `meta` merged over it.
fn with_meta(
    method: &str,
    params: Option<Value>,
    protocol: Option<Map<String, Value>>,
    meta: Option<Map<String, Value>>,
) -> Result<Option<Value>, Error> {
    if protocol.is_none() && meta.is_none() {
        return Ok(params);
    }
    let mut params = match params.unwrap_or_else(|| Value::Object(Map::new())) {
        Value::Object(map) => map,
        other => {
            return Err(Error::Protocol(format!(
                "the params of {method} must be a JSON object to carry _meta, not {other}"
            )))
        }
    };
    let target = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(target) = target else {
        return Err(Error::Protocol(format!(
            "the _meta of {method}'s params must be a JSON object"
        )));
    };
    for (key, value) in protocol.into_iter().flatten() {
        target.entry(key).or_insert(value);
    }
    target.extend(meta.into_iter().flatten());
    Ok(Some(Value::Object(params)))
}
