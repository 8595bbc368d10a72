//! How one request is made: its options, `_meta` and progress route, and
//! the rounds of a multi round-trip request (its time limits: `limits.rs`).

pub(super) mod limits;
pub(super) mod wire;

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use crate::error::Error;
use crate::message::ServerRequest;

use super::answers::InputHandlers;
use super::inbound::{token_key, Inbound};
use super::life::Life;
use super::limits::{Body, LastProgress, Limits};
use super::model::task_status::TaskStatus;
use super::model::types::Progress;
#[cfg(feature = "opentelemetry")]
use super::telemetry::in_span;
use super::telemetry::{Instruments, Operation};
use super::wire::{input_required, into_object, with_meta, Protocol};

pub(super) type ProgressCallback = Box<dyn FnMut(&Progress) + Send>;
pub(super) type TaskCallback = Box<dyn FnMut(&TaskStatus) + Send>;

/// How one call is made: [`Client::request`](super::Client::request) and
/// [`Client::call_tool_with`](super::Client::call_tool_with).
///
/// By default a call has the transport's time limit if it has one, which
/// progress does not extend; else the client's
/// ([`request_timeout`](super::ClientBuilder::request_timeout), 5 minutes),
/// which each progress the call hears of restarts. With
/// [`reset_timeout_on_progress`](Self::reset_timeout_on_progress) any limit
/// counts from the latest progress notification instead, and
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
    as_task: bool,
    on_task: Option<TaskCallback>,
    /// Dropped early, the request is forgotten, not cancelled (a task's polls).
    quiet: bool,
    /// No limit at all, not even the transport's (`tasks/result`, which
    /// waits for the task's end; the caller's own limit bounds the task).
    unbounded: bool,
    /// The progress token its caller routes already (a tool call, whose
    /// task outlives the request), and what that route tells of the latest
    /// progress: the request does not route it again.
    routed: Option<(Value, Arc<LastProgress>)>,
}

impl CallOptions {
    /// The default limit — the transport's `timeout` if it has one, else the
    /// client's [`request_timeout`](super::ClientBuilder::request_timeout)
    /// (5 minutes unless changed), which each progress the call hears of
    /// restarts — no extra `_meta`, no progress callback.
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

    /// This call's time limit, instead of the client's default: `Some(d)`
    /// (or `d`) is a limit of `d`, `None` no limit at all — the same shape as
    /// [`RequestOptions::timeout`](crate::RequestOptions::timeout). A call
    /// that becomes a task is bounded by it (and by
    /// [`max_total_time`](Self::max_total_time)) from its start to the task's
    /// end, whatever progress comes; running out cancels the task.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use stdio_mcp::client::CallOptions;
    ///
    /// let five_seconds = CallOptions::new().timeout(Duration::from_secs(5));
    /// let no_limit = CallOptions::new().timeout(None);
    /// # let _ = (five_seconds, no_limit);
    /// ```
    pub fn timeout(mut self, limit: impl Into<Option<Duration>>) -> Self {
        match limit.into() {
            Some(limit) => {
                self.timeout = Some(limit);
                self.unbounded = false;
            }
            None => {
                self.timeout = None;
                self.unbounded = true;
            }
        }
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

    /// Whether a tool whose task support is optional is called as a task
    /// (a 2025-11-25 server that offers tasks for `tools/call`; default: no).
    /// A tool that requires it is always called as a task, one that forbids
    /// it never; a 2026-07-28 server decides for itself.
    ///
    /// # Examples
    ///
    /// ```
    /// let options = stdio_mcp::client::CallOptions::new().as_task(true);
    /// # let _ = options;
    /// ```
    pub fn as_task(mut self, as_task: bool) -> Self {
        self.as_task = as_task;
        self
    }

    /// Called when the call becomes a task (its id, to persist for
    /// [`Client::task`](super::Client::task)) and at each change of its status
    /// or status message.
    ///
    /// # Examples
    ///
    /// ```
    /// let options = stdio_mcp::client::CallOptions::new().on_task(|t| {
    ///     eprintln!("task {}: {} {}", t.task_id, t.status, t.status_message.as_deref().unwrap_or(""));
    /// });
    /// # let _ = options;
    /// ```
    pub fn on_task(mut self, callback: impl FnMut(&TaskStatus) + Send + 'static) -> Self {
        self.on_task = Some(Box::new(callback));
        self
    }

    fn wants_progress(&self) -> bool {
        self.on_progress.is_some() || self.reset_on_progress
    }

    /// A request dropped early is forgotten, never cancelled on the wire.
    pub(super) fn quiet(mut self) -> Self {
        self.quiet = true;
        self
    }

    /// The progress callback, taken out.
    pub(super) fn take_on_progress(&mut self) -> Option<ProgressCallback> {
        self.on_progress.take()
    }

    /// No time limit, neither the transport's nor the client's.
    pub(super) fn unbounded(mut self) -> Self {
        self.unbounded = true;
        self
    }

    /// What following a task needs of the options: whether to ask for one,
    /// the status callback, and the call's own limits (the time limit and the cap).
    pub(super) fn take_task_part(&mut self) -> (bool, Option<TaskCallback>, Option<Duration>) {
        let limit = match (self.timeout, self.max_total) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        (self.as_task, self.on_task.take(), limit)
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
            .field("as_task", &self.as_task)
            .field("on_task", &self.on_task.is_some())
            .finish()
    }
}

/// Rounds of input a 2026-07-28 request may ask for before the call fails.
pub(crate) const MAX_INPUT_ROUNDS: usize = 8;

/// The one route of a call's progress token, for as long as the call lasts
/// (a tool call that becomes a task: until the task ends): the user's
/// callback, and when the latest progress came, which a limit restarted by
/// progress counts from. Removed however the call ends, drop included.
pub(super) struct ProgressRoute<'a> {
    inbound: &'a Inbound,
    key: String,
    token: Value,
    last: Arc<LastProgress>,
}

impl<'a> ProgressRoute<'a> {
    pub(super) fn open(
        inbound: &'a Inbound,
        token: Value,
        mut user: Option<ProgressCallback>,
    ) -> Self {
        let key = token_key(&token);
        let last = Arc::new(LastProgress::default());
        let seen = Arc::clone(&last);
        inbound.add(key.clone(), move |p: &Progress| {
            if let Some(user) = &mut user {
                user(p);
            }
            *crate::lock::lock(&seen.at) = Some(Instant::now());
            seen.waker.wake();
        });
        ProgressRoute {
            inbound,
            key,
            token,
            last,
        }
    }

    /// `options` for the request that carries this route's token: it
    /// follows the progress routed here instead of routing it again.
    pub(super) fn carried_by(&self, mut options: CallOptions) -> CallOptions {
        options.routed = Some(self.carried());
        options
    }

    /// The token to send, and what the route tells of the latest progress.
    fn carried(&self) -> (Value, Arc<LastProgress>) {
        (self.token.clone(), Arc::clone(&self.last))
    }
}

impl Drop for ProgressRoute<'_> {
    fn drop(&mut self) {
        self.inbound.remove(&self.key);
    }
}

/// What every request of a client goes through: its server's life, the
/// routes of what the server sends unasked, the handlers of the input a
/// request may need, and the era's protocol fields.
pub(crate) struct Caller<'a> {
    pub(crate) life: &'a Life,
    pub(crate) inbound: &'a Inbound,
    pub(crate) inputs: &'a InputHandlers,
    pub(crate) protocol: Protocol<'a>,
    /// The session's protocol version and the client's instruments (read
    /// only with the feature `opentelemetry`).
    pub(crate) version: &'a str,
    #[cfg_attr(not(feature = "opentelemetry"), allow(dead_code))]
    pub(crate) telemetry: &'a Instruments,
    /// The span this request is part of, when its caller made it (a tool
    /// call's, which outlives the request when it becomes a task); else the
    /// request makes its own.
    #[cfg_attr(not(feature = "opentelemetry"), allow(dead_code))]
    pub(crate) within: Option<&'a Operation<'a>>,
}

impl<'a> Caller<'a> {
    /// Sends `method` with `params` as `options` say and waits for its
    /// result; in the 2026-07-28 era, answers the input the server asks for
    /// and retries. `token` makes the progress token of a call that follows
    /// its progress and has none routed yet.
    #[cfg(feature = "opentelemetry")]
    pub(crate) async fn call<T: FnOnce() -> Value>(
        self,
        token: T,
        method: &str,
        params: Option<Value>,
        options: CallOptions,
    ) -> Result<Value, Error> {
        if let Some(operation) = self.within {
            return self.rounds(token, method, params, options, operation).await;
        }
        let operation = self
            .telemetry
            .operation(method, params.as_ref(), self.version);
        let outcome = in_span!(
            operation,
            self.rounds(token, method, params, options, &operation)
        );
        operation.end(outcome.as_ref());
        outcome
    }

    /// As with the feature; without it there is no span, and the rounds are
    /// the call (no future around them).
    #[cfg(not(feature = "opentelemetry"))]
    pub(crate) fn call<'c, T: FnOnce() -> Value>(
        self,
        token: T,
        method: &'c str,
        params: Option<Value>,
        options: CallOptions,
    ) -> impl std::future::Future<Output = Result<Value, Error>> + use<'a, 'c, T> {
        self.rounds(token, method, params, options, &Operation::NONE)
    }

    /// The call itself: sent, and sent again with the answers to the input
    /// the server asks for.
    async fn rounds<T: FnOnce() -> Value>(
        self,
        token: T,
        method: &str,
        params: Option<Value>,
        mut options: CallOptions,
        operation: &Operation<'_>,
    ) -> Result<Value, Error> {
        let Caller {
            life,
            inbound,
            inputs,
            protocol,
            version,
            ..
        } = self;
        let mut meta = options.meta.take().map(into_object).transpose()?;
        operation.propagate(&mut meta, params.as_ref());
        // Only a call that follows its progress needs to hear of it; its token
        // is routed once, here or by its caller.
        // Unregistered however the call ends, drop included.
        let route = (options.routed.is_none() && options.wants_progress())
            .then(|| ProgressRoute::open(inbound, token(), options.on_progress.take()));
        let routed = options.routed.take();
        let last = routed
            .or_else(|| route.as_ref().map(ProgressRoute::carried))
            .map(|(token, last)| {
                meta.get_or_insert_with(Map::new)
                    .insert("progressToken".into(), token);
                last
            });
        let limits = Limits {
            method,
            started: Instant::now(),
            timeout: options.timeout,
            default: protocol.default_limit,
            reset: options.reset_on_progress,
            total: options.max_total,
            quiet: options.quiet,
            unbounded: options.unbounded,
        };
        let Some(fields) = protocol.fields else {
            let params = with_meta(method, params, None, None, meta.as_ref())?;
            return limits
                .send(
                    life,
                    Body::Whole(params.as_ref()),
                    last.as_deref(),
                    operation,
                )
                .await;
        };
        let members = protocol.members.as_deref().unwrap_or_default();
        // Params with no `_meta` of their own (nearly all) get the protocol
        // fields written straight into the line; others have them merged in.
        let spliced = meta.is_none()
            && match &params {
                None => true,
                Some(Value::Object(p)) => !p.contains_key("_meta"),
                Some(_) => false,
            };
        // Kept after sending: a retry is the same params with the answers added.
        let mut params = if spliced {
            params
        } else {
            with_meta(
                method,
                params,
                Some(fields),
                protocol.log_level.as_ref(),
                meta.as_ref(),
            )?
        };
        for round in 0..=MAX_INPUT_ROUNDS {
            let body = if spliced {
                Body::Spliced(params.as_ref().and_then(Value::as_object), members)
            } else {
                Body::Whole(params.as_ref())
            };
            // A retry is a span of its own, under the call's.
            let again = (round > 0).then(|| operation.retry(method, params.as_ref(), version));
            let sent = limits
                .send(
                    life,
                    body,
                    last.as_deref(),
                    again.as_ref().unwrap_or(operation),
                )
                .await;
            if let Some(again) = again {
                again.end(sent.as_ref());
            }
            let result = sent?;
            if !input_required(method, &result)? {
                return Ok(result);
            }
            if round == MAX_INPUT_ROUNDS {
                break;
            }
            let responses = answer_inputs(inputs, method, &result).await?;
            params = retry(
                method,
                params,
                responses,
                result.get("requestState").cloned(),
            )?;
        }
        Err(Error::Protocol(format!(
            "the server still needed input to answer {method} after {MAX_INPUT_ROUNDS} rounds"
        )))
    }
}

/// Answers every input request of an `input_required` result through the
/// client's handlers, all at once.
pub(super) async fn answer_inputs(
    inputs: &InputHandlers,
    method: &str,
    result: &Value,
) -> Result<Map<String, Value>, Error> {
    let malformed = |what: &str| {
        Error::Protocol(format!(
            "the server asked for input to {method} with a malformed inputRequests: {what}"
        ))
    };
    let requests = match result.get("inputRequests") {
        None | Some(Value::Null) => return Ok(Map::new()),
        Some(Value::Object(requests)) => requests,
        Some(other) => return Err(malformed(&other.to_string())),
    };
    let mut answers = Vec::with_capacity(requests.len());
    for (key, request) in requests {
        let Some(asked) = request.get("method").and_then(Value::as_str) else {
            return Err(malformed(&format!("{key} has no method")));
        };
        let handler = inputs.for_method(asked).map_err(|missing| {
            Error::Protocol(format!("to answer {method} the server asks for {missing}"))
        })?;
        let question = ServerRequest {
            id: Value::String(key.clone()),
            method: asked.to_owned(),
            params: request.get("params").cloned(),
        };
        let key = key.clone();
        let asked = asked.to_owned();
        let answer = handler(question);
        answers.push(async move {
            match answer.await {
                Ok(value) => Ok((key, value)),
                Err(error) => Err(Error::Protocol(format!(
                    "the {asked} handler failed: {error}"
                ))),
            }
        });
    }
    Ok(futures::future::try_join_all(answers)
        .await?
        .into_iter()
        .collect())
}

/// The params of the retry: the original ones with the answers and the
/// server's `requestState`, untouched (and none if it gave none).
fn retry(
    method: &str,
    params: Option<Value>,
    responses: Map<String, Value>,
    state: Option<Value>,
) -> Result<Option<Value>, Error> {
    let mut params = match params.unwrap_or_else(|| Value::Object(Map::new())) {
        Value::Object(map) => map,
        other => {
            return Err(Error::Protocol(format!(
                "the params of {method} must be a JSON object to carry inputResponses, not {other}"
            )))
        }
    };
    params.insert("inputResponses".into(), Value::Object(responses));
    match state {
        Some(state) => params.insert("requestState".into(), state),
        None => params.remove("requestState"),
    };
    Ok(Some(Value::Object(params)))
}
