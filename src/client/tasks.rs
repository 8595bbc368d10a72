//! Tasks: a tool call the server runs in the background, followed to its end
//! in either wire — 2025-11-25's (`params.task`, `tasks/get`, then
//! `tasks/result`, which also carries what the server asks meanwhile) or the
//! 2026-07-28 extension's (`resultType: "task"`, `tasks/get` with the result
//! inline, `tasks/update` for its input requests) — and cancelled with
//! `tasks/cancel` when the caller gives up.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::{Duration, Instant};

use async_io::Timer;
use futures::future::Either;
use futures::FutureExt;
use serde_json::{json, Map, Value};

use crate::error::{Error, RpcError};

use super::client::Client;
use super::era::Era;
use super::model::task_status::TaskStatus;
use super::model::types::CallToolResult;
use super::request::{answer_inputs, CallOptions, TaskCallback};
use super::wire::{decode, with_meta};

/// Between polls when the server suggests nothing.
const DEFAULT_POLL: Duration = Duration::from_secs(1);
/// The shortest wait between polls, whatever the server suggests: never a busy loop.
const MIN_POLL: Duration = Duration::from_millis(10);

/// The task object of a `tools/call` result, if the server made the call a
/// task. A task is spoken of in two ways: in the modern era (the 2026-07-28
/// tasks extension) its result comes inline in `tasks/get`; in the legacy
/// era (2025-11-25) from `tasks/result`.
pub(super) fn created_task(era: Era, result: &Value) -> Option<&Value> {
    match era {
        Era::Modern => (result.get("resultType")? == "task").then_some(result),
        _ => result
            .get("task")
            .filter(|task| task.is_object() && result.get("content").is_none()),
    }
}

/// How a task is followed: who hears of its status, by when it must end,
/// and whether giving up cancels it.
pub(super) struct Following {
    pub(super) on_task: Option<TaskCallback>,
    /// The caller's own limit on the whole call, and when it runs out.
    pub(super) limit: Option<(Duration, Instant)>,
    pub(super) cancel_on_drop: bool,
}

impl Client {
    /// Follows the task `task` (as the server described it) to its end, or
    /// until the caller's limit runs out, whatever it is waiting for then (a
    /// poll, a handler's answer): dropping the follower cancels the task.
    pub(super) async fn follow_task(
        &self,
        era: Era,
        task: &Value,
        following: Following,
    ) -> Result<CallToolResult, Error> {
        let Some((limit, at)) = following.limit else {
            return self.follow_to_the_end(era, task, following).await;
        };
        let followed = self.follow_to_the_end(era, task, following);
        futures::pin_mut!(followed);
        match futures::future::select(followed, Timer::at(at)).await {
            Either::Left((outcome, _)) => outcome,
            Either::Right(_) => {
                let id = task.get("taskId").and_then(Value::as_str).unwrap_or("?");
                Err(Error::Timeout {
                    method: format!("tools/call (task {id})"),
                    after: limit,
                })
            }
        }
    }

    /// The follower itself: polls, reports, answers and fetches until the
    /// task ends.
    async fn follow_to_the_end(
        &self,
        era: Era,
        task: &Value,
        following: Following,
    ) -> Result<CallToolResult, Error> {
        let Some(mut status) = TaskStatus::of(task) else {
            return Err(Error::Protocol(format!(
                "the server's task has no taskId or status: {task}"
            )));
        };
        let id = status.task_id.clone();
        let mut follower = Follower {
            client: self,
            id: id.clone(),
            on_task: following.on_task,
            reported: None,
            answered: HashSet::new(),
        };
        // Whatever ends the wait early (a drop, an error, the limit) cancels the task.
        let mut guard = CancelOnDrop {
            client: self,
            id: following.cancel_on_drop.then(|| id.clone()),
        };
        self.inner.inbound.watch_task(&id);
        let _unwatch = Unwatch(self, id.clone());
        let mut task = task.clone();
        let mut interval = poll_interval(&task);
        let mut result: Option<Answer<'_>> = None;
        loop {
            follower.report(&status);
            match (status.status.as_str(), era) {
                ("cancelled", _) => {
                    guard.id = None;
                    return Err(Error::Cancelled {
                        task_id: id.clone(),
                        message: status.status_message,
                    });
                }
                ("completed" | "failed", Era::Modern) => {
                    guard.id = None;
                    return ended(&id, &status, &task);
                }
                ("completed" | "failed" | "input_required", Era::Legacy) if result.is_none() => {
                    // Blocks until the task ends, carrying the server's questions meanwhile.
                    // No per-request limit: it lasts as long as the task.
                    let unbounded = CallOptions::new().unbounded();
                    result =
                        Some(ask(self, "tasks/result", json!({ "taskId": id }), unbounded).boxed());
                }
                ("input_required", Era::Modern) => follower.answer(&task).await?,
                _ => {}
            }
            // A 2025-11-25 task that ended needs no more polls, only its result.
            let polling = !(era == Era::Legacy && status.is_terminal());
            let mut next_poll = polling.then(|| Timer::after(interval));
            let woke = futures::future::poll_fn(|cx| {
                if let Some(request) = &mut result {
                    if let Poll::Ready(outcome) = request.as_mut().poll(cx) {
                        return Poll::Ready(Woke::Result(outcome));
                    }
                }
                if let Poll::Ready(news) = self.inner.inbound.poll_task_news(&id, cx) {
                    return Poll::Ready(Woke::News(news));
                }
                if let Some(timer) = &mut next_poll {
                    if timer.poll_unpin(cx).is_ready() {
                        return Poll::Ready(Woke::Poll);
                    }
                }
                Poll::Pending
            })
            .await;
            task = match woke {
                Woke::Result(outcome) => {
                    guard.id = None;
                    return result_of(&id, outcome?);
                }
                Woke::News(news) => news,
                Woke::Poll => {
                    ask(
                        self,
                        "tasks/get",
                        json!({ "taskId": id }),
                        CallOptions::new(),
                    )
                    .await?
                }
            };
            status = TaskStatus::of(&task).ok_or_else(|| {
                Error::Protocol(format!(
                    "the server's tasks/get for task {id} has no status: {task}"
                ))
            })?;
            interval = poll_interval(&task);
        }
    }

    /// Sends `tasks/cancel` for task `id` without waiting (a drop cannot wait).
    fn cancel_now(&self, id: &str) {
        let params = with_meta(
            "tasks/cancel",
            Some(json!({ "taskId": id })),
            self.inner.session.meta.as_ref(),
            None,
            None,
        );
        if let Ok(params) = params {
            // A server already gone has nothing to cancel.
            let _ = self
                .inner
                .life
                .current()
                .send_detached("tasks/cancel", params.as_ref());
        }
    }

    /// Follows the task `id` to its end and returns its result: a task a
    /// call started before (its id from
    /// [`CallOptions::on_task`](super::CallOptions::on_task)), in this run or
    /// an earlier one. Dropping this stops following; it does not cancel the
    /// task ([`cancel_task`](Self::cancel_task) does).
    ///
    /// # Errors
    ///
    /// The server's error for an id it does not know (or no longer keeps);
    /// [`ErrorKind::Cancelled`](crate::ErrorKind::Cancelled) for a task that
    /// ended cancelled; a failed task's error; as for
    /// [`call_tool`](Self::call_tool) otherwise.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::connect(["my-mcp-server"]).await?;
    /// // An id persisted from `CallOptions::on_task` before the host restarted:
    /// let report = client.task("786512e2-9e0d-44bd-8f29-789f320fe840").await?;
    /// println!("{}", report.text());
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn task(&self, id: &str) -> Result<CallToolResult, Error> {
        let followed = async {
            let era = self.era();
            let task = ask(
                self,
                "tasks/get",
                json!({ "taskId": id }),
                CallOptions::new(),
            )
            .await?;
            let following = Following {
                on_task: None,
                limit: None,
                cancel_on_drop: false,
            };
            self.follow_task(era, &task, following).await
        };
        let followed = followed.await;
        self.named(followed)
    }

    /// Asks the server to cancel task `id` (`tasks/cancel`). The task may
    /// still end otherwise: cancelling is the server's to honour.
    ///
    /// # Errors
    ///
    /// The server's error (an unknown id, a task that already ended).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::connect(["my-mcp-server"]).await?;
    /// client.cancel_task("786512e2-9e0d-44bd-8f29-789f320fe840").await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn cancel_task(&self, id: &str) -> Result<(), Error> {
        let params = json!({ "taskId": id });
        self.request("tasks/cancel", Some(params), CallOptions::new())
            .await
            .map(drop)
    }
}

/// A request under way whose answer the follower waits for.
type Answer<'a> = Pin<Box<dyn Future<Output = Result<Value, Error>> + Send + 'a>>;

enum Woke {
    Result(Result<Value, Error>),
    News(Value),
    Poll,
}

/// One task followed: its requests, its reports, the input answered.
struct Follower<'a> {
    client: &'a Client,
    id: String,
    on_task: Option<TaskCallback>,
    reported: Option<(String, Option<String>)>,
    /// The keys of the input requests answered (each is answered once).
    answered: HashSet<String>,
}

impl Follower<'_> {
    /// Tells the caller of a new status or message.
    fn report(&mut self, status: &TaskStatus) {
        let now = (status.status.clone(), status.status_message.clone());
        if self.reported.as_ref() == Some(&now) {
            return;
        }
        self.reported = Some(now);
        if let Some(on_task) = &mut self.on_task {
            on_task(status);
        }
    }

    /// Answers the input requests of `task` not answered yet, through the
    /// client's handlers, with one `tasks/update`.
    async fn answer(&mut self, task: &Value) -> Result<(), Error> {
        let mut open = Map::new();
        if let Some(Value::Object(requests)) = task.get("inputRequests") {
            for (key, request) in requests {
                if !self.answered.contains(key) {
                    open.insert(key.clone(), request.clone());
                }
            }
        }
        if open.is_empty() {
            return Ok(());
        }
        let keys: Vec<String> = open.keys().cloned().collect();
        let asked = json!({ "inputRequests": open });
        let responses = answer_inputs(&self.client.inner.inputs, "tasks/get", &asked).await?;
        self.answered.extend(keys);
        let params = json!({ "taskId": self.id, "inputResponses": responses });
        ask(self.client, "tasks/update", params, CallOptions::new())
            .await
            .map(drop)
    }
}

/// One request about a task, in the session's era; forgotten, never
/// cancelled, if dropped.
async fn ask(
    client: &Client,
    method: &str,
    params: Value,
    options: CallOptions,
) -> Result<Value, Error> {
    client
        .caller()
        .call(|| Value::Null, method, Some(params), options.quiet())
        .await
}

/// The suggested wait before the next poll, in either wire's name.
fn poll_interval(task: &Value) -> Duration {
    let millis = task
        .get("pollIntervalMs")
        .or_else(|| task.get("pollInterval"))
        .and_then(Value::as_u64);
    millis
        .map_or(DEFAULT_POLL, Duration::from_millis)
        .max(MIN_POLL)
}

/// The end of a 2026-07-28 task: its inline result, or its error.
fn ended(id: &str, status: &TaskStatus, task: &Value) -> Result<CallToolResult, Error> {
    if status.status == "completed" {
        let Some(result) = task.get("result").filter(|r| r.is_object()) else {
            return Err(Error::Protocol(format!(
                "the server's completed task {id} has no result object"
            )));
        };
        return result_of(id, result.clone());
    }
    let error = task.get("error");
    let code = error.and_then(|e| e.get("code")).and_then(Value::as_i64);
    let message = error.and_then(|e| e.get("message")).and_then(Value::as_str);
    match (code, message) {
        (Some(code), Some(message)) => Err(Error::Rpc(RpcError {
            code,
            message: message.to_owned(),
            data: error.and_then(|e| e.get("data")).cloned(),
        })),
        _ => Err(Error::Protocol(format!(
            "the server's task {id} failed without a JSON-RPC error: {}",
            status.status_message.as_deref().unwrap_or("no message")
        ))),
    }
}

fn result_of(id: &str, result: Value) -> Result<CallToolResult, Error> {
    decode(&format!("tools/call (task {id})"), result)
}

/// Sends `tasks/cancel` for the task when dropped still armed.
struct CancelOnDrop<'a> {
    client: &'a Client,
    id: Option<String>,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.client.cancel_now(&id);
        }
    }
}

/// Stops keeping the task's notifications, however the follower ends.
struct Unwatch<'a>(&'a Client, String);

impl Drop for Unwatch<'_> {
    fn drop(&mut self) {
        self.0.inner.inbound.unwatch_task(&self.1);
    }
}
