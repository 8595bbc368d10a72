//! What the server sends the client unasked, routed: the progress of calls
//! to their callbacks, tasks' status news to their followers, tools changes
//! to the tool cache and a group's hook, and the rest to the `listen`
//! subscriptions (`subscription.rs`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use serde_json::Value;

use crate::message::Notification;
use crate::route::NotificationHandler;

use crate::client::model::types::Progress;
use crate::client::subscription::Listeners;

/// What a call's progress route does with each progress (`call::ProgressRoute`).
type RouteCallback = Arc<Mutex<dyn FnMut(&Progress) + Send>>;

/// Where the server's notifications go besides the user's handler: progress to
/// the call that owns its token, subscriptions' notifications to their streams.
#[derive(Default)]
pub(crate) struct Inbound {
    /// Per token, the route of the call that owns it.
    calls: Mutex<HashMap<String, RouteCallback>>,
    pub(crate) listeners: Arc<Listeners>,
    /// The tools `list_changed` notifications read so far (the tool cache
    /// compares it with the count it listed at).
    tool_changes: AtomicU64,
    /// Told of each change of the tools (a group's catalog).
    tools_stale: Option<ToolsStale>,
    /// The latest status notification of each task followed, and who waits.
    tasks: Mutex<HashMap<String, TaskNews>>,
}

/// What a task's follower has not read yet.
#[derive(Default)]
struct TaskNews {
    latest: Option<Value>,
    waker: Option<Waker>,
}

/// A hook told that a server's tools may have changed.
pub(crate) type ToolsStale = Arc<dyn Fn() + Send + Sync>;

impl Inbound {
    pub(crate) fn new(tools_stale: Option<ToolsStale>) -> Self {
        Inbound {
            tools_stale,
            ..Inbound::default()
        }
    }

    /// Tells the hook, if any, that the tools may have changed.
    pub(crate) fn tools_stale(&self) {
        if let Some(hook) = &self.tools_stale {
            hook();
        }
    }

    pub(crate) fn add(&self, token: String, callback: impl FnMut(&Progress) + Send + 'static) {
        let callback: RouteCallback = Arc::new(Mutex::new(callback));
        self.lock().insert(token, callback);
    }

    /// Starts keeping the status notifications of task `id` (until
    /// [`unwatch_task`](Self::unwatch_task)).
    pub(crate) fn watch_task(&self, id: &str) {
        self.lock_tasks().entry(id.to_owned()).or_default();
    }

    pub(crate) fn unwatch_task(&self, id: &str) {
        self.lock_tasks().remove(id);
    }

    /// The task's latest status notification not read yet; else `Pending`,
    /// woken when one comes.
    pub(crate) fn poll_task_news(&self, id: &str, cx: &mut Context<'_>) -> Poll<Value> {
        let mut tasks = self.lock_tasks();
        let Some(news) = tasks.get_mut(id) else {
            return Poll::Pending;
        };
        match news.latest.take() {
            Some(latest) => Poll::Ready(latest),
            None => {
                news.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }

    fn lock_tasks(&self) -> std::sync::MutexGuard<'_, HashMap<String, TaskNews>> {
        crate::lock::lock(&self.tasks)
    }

    /// Keeps a task status notification for the task's follower, if any.
    fn task_news(&self, notification: &Notification) {
        let Some(params) = &notification.params else {
            return;
        };
        let Some(id) = params.get("taskId").and_then(Value::as_str) else {
            return;
        };
        let waker = match self.lock_tasks().get_mut(id) {
            Some(news) => {
                news.latest = Some(params.clone());
                news.waker.take()
            }
            None => None,
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// How many tools `list_changed` notifications the server sent.
    pub(crate) fn tool_changes(&self) -> u64 {
        self.tool_changes.load(Ordering::Acquire)
    }

    /// Removes the route of `token`.
    pub(crate) fn remove(&self, token: &str) {
        self.lock().remove(token);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, RouteCallback>> {
        crate::lock::lock(&self.calls)
    }

    /// Hands a `notifications/progress` to the call that owns its token, if any.
    fn deliver(&self, notification: &Notification) {
        let Some(params) = &notification.params else {
            return;
        };
        let Some(token) = params.get("progressToken").map(token_key) else {
            return;
        };
        // Not called under the map's lock: the callback may start other calls.
        let callback = self.lock().get(&token).cloned();
        if let (Some(callback), Ok(progress)) = (callback, serde_json::from_value(params.clone())) {
            let mut callback = crate::lock::lock(&callback);
            (*callback)(&progress);
        }
    }

    pub(crate) fn into_handler(
        self: Arc<Self>,
        mut user: Option<NotificationHandler>,
    ) -> NotificationHandler {
        Box::new(move |notification: &Notification| {
            if notification.method == "notifications/progress" {
                self.deliver(notification);
            }
            // 2025-11-25 names it so; the 2026-07-28 tasks extension, shorter.
            if matches!(
                notification.method.as_str(),
                "notifications/tasks/status" | "notifications/tasks"
            ) {
                self.task_news(notification);
            }
            if notification.method == "notifications/tools/list_changed" {
                self.tool_changes.fetch_add(1, Ordering::Release);
                self.tools_stale();
            }
            self.listeners.deliver(notification);
            if let Some(user) = &mut user {
                user(notification);
            }
        })
    }
}

/// Tokens may be strings or numbers; `7` and `"7"` are different tokens.
pub(crate) fn token_key(token: &Value) -> String {
    token.to_string()
}
