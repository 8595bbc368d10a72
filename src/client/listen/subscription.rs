//! `listen` subscriptions: the filter a caller asks with, the open
//! listeners each notification is matched against (a modern stream's
//! `subscriptionId`, or a legacy server's own notifications), and the
//! `Stream` a caller reads.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender};
use futures::channel::oneshot;
use futures::{FutureExt, Stream, StreamExt};
use serde_json::{json, Value};

use crate::error::Error;
use crate::message::Notification;
use crate::pending::PendingRequest;

/// What a legacy `listen` stream holds of its client: the resources it asked
/// the server for, released when the stream is dropped.
pub(crate) trait Holds: Send + Sync {
    /// The stream now holds a subscription to `uri`.
    fn add(&self, uri: &str);
}

const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

/// The notifications a [`Client::listen`](crate::client::Client::listen) subscription
/// asks for: nothing at first, then one kind per call.
///
/// # Examples
///
/// ```
/// use stdio_mcp::client::ListenFilter;
///
/// let filter = ListenFilter::new()
///     .tools_list_changed()
///     .resource("file:///project/config.json");
/// # let _ = filter;
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[must_use]
pub struct ListenFilter {
    tools: bool,
    prompts: bool,
    resources: bool,
    uris: Vec<String>,
}

impl ListenFilter {
    /// Asks for nothing yet.
    ///
    /// # Examples
    ///
    /// ```
    /// let filter = stdio_mcp::client::ListenFilter::new();
    /// # let _ = filter;
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// `notifications/tools/list_changed`.
    ///
    /// # Examples
    ///
    /// ```
    /// let filter = stdio_mcp::client::ListenFilter::new().tools_list_changed();
    /// # let _ = filter;
    /// ```
    pub fn tools_list_changed(mut self) -> Self {
        self.tools = true;
        self
    }

    /// `notifications/prompts/list_changed`.
    ///
    /// # Examples
    ///
    /// ```
    /// let filter = stdio_mcp::client::ListenFilter::new().prompts_list_changed();
    /// # let _ = filter;
    /// ```
    pub fn prompts_list_changed(mut self) -> Self {
        self.prompts = true;
        self
    }

    /// `notifications/resources/list_changed`.
    ///
    /// # Examples
    ///
    /// ```
    /// let filter = stdio_mcp::client::ListenFilter::new().resources_list_changed();
    /// # let _ = filter;
    /// ```
    pub fn resources_list_changed(mut self) -> Self {
        self.resources = true;
        self
    }

    /// `notifications/resources/updated` for the resource at `uri`.
    ///
    /// # Examples
    ///
    /// ```
    /// let filter = stdio_mcp::client::ListenFilter::new().resource("file:///notes.md");
    /// # let _ = filter;
    /// ```
    pub fn resource(mut self, uri: impl Into<String>) -> Self {
        self.uris.push(uri.into());
        self
    }

    pub(crate) fn uris(&self) -> &[String] {
        &self.uris
    }

    /// The spec's `notifications` filter object.
    pub(crate) fn to_json(&self) -> Value {
        let mut filter = json!({});
        for (on, key) in [
            (self.tools, "toolsListChanged"),
            (self.prompts, "promptsListChanged"),
            (self.resources, "resourcesListChanged"),
        ] {
            if on {
                filter[key] = json!(true);
            }
        }
        if !self.uris.is_empty() {
            filter["resourceSubscriptions"] = json!(self.uris);
        }
        filter
    }

    /// Whether a legacy server's notification is one this filter asks for.
    fn matches(&self, notification: &Notification) -> bool {
        match notification.method.as_str() {
            "notifications/tools/list_changed" => self.tools,
            "notifications/prompts/list_changed" => self.prompts,
            "notifications/resources/list_changed" => self.resources,
            "notifications/resources/updated" => notification
                .params
                .as_ref()
                .and_then(|p| p.get("uri"))
                .and_then(Value::as_str)
                .is_some_and(|uri| self.uris.iter().any(|u| u == uri)),
            _ => false,
        }
    }
}

/// How a subscription's notifications are recognized.
enum Match {
    /// 2026-07-28: by the `subscriptionId` in `_meta` (the listen request's id).
    Modern(Value),
    /// Earlier revisions: by method (and URI, the filter's), from the server's one stream.
    Legacy,
}

struct Listener {
    key: u64,
    matcher: Match,
    sender: UnboundedSender<Notification>,
    /// Told the acknowledged filter, once (modern only).
    ack: Option<oneshot::Sender<Value>>,
    /// What it asked for, to ask a restarted server again.
    filter: ListenFilter,
    /// The open `subscriptions/listen` request (modern); its end ends the stream.
    request: Option<PendingRequest>,
    /// The stream's task, woken when a restarted server takes the subscription back.
    waker: Option<Waker>,
}

/// The open subscriptions.
#[derive(Default)]
pub(crate) struct Listeners {
    open: Mutex<Vec<Listener>>,
    next_key: AtomicU64,
    /// The server is started again when it exits: its subscriptions wait for that.
    survive_exits: AtomicBool,
}

impl Listeners {
    /// A legacy subscription: the server's own notifications that `filter` asks for.
    pub(crate) fn add(&self, filter: ListenFilter, sender: UnboundedSender<Notification>) -> u64 {
        let key = self.next_key.fetch_add(1, Ordering::Relaxed);
        self.lock().push(Listener {
            key,
            matcher: Match::Legacy,
            sender,
            ack: None,
            filter,
            request: None,
            waker: None,
        });
        key
    }

    /// Sends a listen request and registers its listener in one step, so
    /// that no acknowledgment can come before its listener.
    pub(crate) fn open(
        &self,
        filter: ListenFilter,
        send: impl FnOnce(&ListenFilter) -> PendingRequest,
        sender: UnboundedSender<Notification>,
        ack: oneshot::Sender<Value>,
    ) -> u64 {
        let mut open = self.lock();
        let request = send(&filter);
        let key = self.next_key.fetch_add(1, Ordering::Relaxed);
        open.push(Listener {
            key,
            matcher: Match::Modern(json!(request.id())),
            sender,
            ack: Some(ack),
            filter,
            request: Some(request),
            waker: None,
        });
        key
    }

    /// Whether subscription `key` has ended: `Ready` with how its listen
    /// request ended (`None` once it is gone). A server's exit does not end it
    /// when the server is to be started again.
    pub(crate) fn poll_end(
        &self,
        key: u64,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Value, Error>>> {
        let survive_exits = self.survive_exits.load(Ordering::Acquire);
        let mut open = self.lock();
        let Some(listener) = open.iter_mut().find(|l| l.key == key) else {
            return Poll::Ready(None);
        };
        if let Some(request) = &mut listener.request {
            match request.poll_unpin(cx) {
                Poll::Ready(Err(error)) if survive_exits && is_exit(&error) => {
                    listener.request = None;
                }
                Poll::Ready(outcome) => return Poll::Ready(Some(outcome)),
                Poll::Pending => return Poll::Pending,
            }
        }
        listener.waker = Some(cx.waker().clone());
        Poll::Pending
    }

    pub(crate) fn remove(&self, key: u64) {
        let gone: Vec<Listener> = {
            let mut open = self.lock();
            let (gone, kept) = std::mem::take(&mut *open)
                .into_iter()
                .partition(|l| l.key == key);
            *open = kept;
            gone
        };
        // Dropped outside the lock: an open listen request is cancelled on the wire.
        drop(gone);
    }

    /// Ends every subscription (the client closed, or gave up on its server):
    /// each stream yields what it has, then ends.
    pub(crate) fn end_all(&self) {
        let gone = std::mem::take(&mut *self.lock());
        drop(gone);
    }

    /// From now on subscriptions outlive the server's exits (restarts are on).
    pub(crate) fn survive_exits(&self) {
        self.survive_exits.store(true, Ordering::Release);
    }

    /// A restarted server: tells each stream of the gap with `gap`, and
    /// sends each modern subscription's listen request again through `send`
    /// (a legacy server's resources are subscribed again by the client).
    pub(crate) fn reopen(
        &self,
        gap: &Notification,
        mut send: impl FnMut(&ListenFilter) -> PendingRequest,
    ) {
        let mut wakers = Vec::new();
        {
            let mut open = self.lock();
            for listener in open.iter_mut() {
                let _ = listener.sender.unbounded_send(gap.clone());
                if let Match::Modern(_) = listener.matcher {
                    let request = send(&listener.filter);
                    listener.matcher = Match::Modern(json!(request.id()));
                    // The previous one, if it is still here, is of the dead server.
                    listener.request = Some(request);
                    wakers.extend(listener.waker.take());
                }
            }
        }
        wakers.into_iter().for_each(Waker::wake);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Listener>> {
        crate::lock::lock(&self.open)
    }

    pub(crate) fn deliver(&self, notification: &Notification) {
        let id = notification
            .params
            .as_ref()
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(SUBSCRIPTION_ID));
        let mut open = self.lock();
        for listener in open.iter_mut() {
            match (&listener.matcher, id) {
                (Match::Modern(mine), Some(id)) if mine == id => {
                    if notification.method == ACKNOWLEDGED {
                        if let Some(ack) = listener.ack.take() {
                            let agreed = notification
                                .params
                                .as_ref()
                                .and_then(|p| p.get("notifications"));
                            let _ = ack.send(agreed.cloned().unwrap_or(Value::Null));
                        }
                    } else {
                        let _ = listener.sender.unbounded_send(notification.clone());
                    }
                }
                (Match::Legacy, None) if listener.filter.matches(notification) => {
                    let _ = listener.sender.unbounded_send(notification.clone());
                }
                _ => {}
            }
        }
    }
}

/// Whether a listen request ended because its server did (not by its answer).
fn is_exit(error: &Error) -> bool {
    matches!(
        error,
        Error::Exited { .. }
            | Error::NotAlive
            | Error::StdoutClosed
            | Error::MessageTooLarge { .. }
    )
}

/// The notifications of one subscription, from [`Client::listen`](crate::client::Client::listen):
/// a [`Stream`] that ends when the server ends the subscription or exits.
/// Dropping it cancels the subscription (`notifications/cancelled` for the
/// listen request; with a legacy server, `resources/unsubscribe` for the
/// resources it alone wanted).
///
/// # Examples
///
/// ```no_run
/// # futures::executor::block_on(async {
/// use futures::StreamExt;
/// use stdio_mcp::client::{Client, ListenFilter};
///
/// let client = Client::connect(["my-mcp-server"]).await?;
/// let mut changes = client.listen(ListenFilter::new().tools_list_changed()).await?;
/// while let Some(change) = changes.next().await {
///     println!("{}: the tools changed", change.method);
/// }
/// # Ok::<(), stdio_mcp::Error>(()) });
/// ```
pub struct Subscription {
    notifications: UnboundedReceiver<Notification>,
    listeners: Arc<Listeners>,
    /// This subscription's entry among the listeners (holding the sender and
    /// the open listen request).
    key: u64,
    /// Until the listen request has ended.
    open: bool,
    acknowledged: Option<Value>,
    /// Legacy: the resources it subscribed to, unsubscribed when it is dropped.
    hold: Option<Box<dyn Holds>>,
}

impl Subscription {
    pub(crate) fn new(
        notifications: UnboundedReceiver<Notification>,
        listeners: Arc<Listeners>,
        key: u64,
        acknowledged: Option<Value>,
        hold: Option<Box<dyn Holds>>,
    ) -> Self {
        Subscription {
            notifications,
            listeners,
            key,
            open: true,
            acknowledged,
            hold,
        }
    }

    /// Legacy: notes that `uri` was subscribed to for this stream.
    pub(crate) fn holds(&self, uri: &str) {
        if let Some(hold) = &self.hold {
            hold.add(uri);
        }
    }

    /// The filter the server agreed to honour (2026-07-28: from its
    /// acknowledgment; `None` with a legacy server).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::{Client, ListenFilter};
    ///
    /// let client = Client::connect(["my-mcp-server"]).await?;
    /// let changes = client.listen(ListenFilter::new().tools_list_changed()).await?;
    /// println!("agreed: {:?}", changes.acknowledged());
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    #[must_use]
    pub fn acknowledged(&self) -> Option<&Value> {
        self.acknowledged.as_ref()
    }
}

impl Stream for Subscription {
    type Item = Notification;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Notification>> {
        let this = self.get_mut();
        if this.open && this.listeners.poll_end(this.key, cx).is_ready() {
            // Ended by the server (or its exit): no more will come, and
            // what came before is still delivered, then the end.
            this.open = false;
            this.listeners.remove(this.key);
        }
        this.notifications.poll_next_unpin(cx)
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        // Dropping the open listen request cancels it on the wire.
        self.listeners.remove(self.key);
    }
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("key", &self.key)
            .field("open", &self.open)
            .field("acknowledged", &self.acknowledged)
            .field("legacy_hold", &self.hold.is_some())
            .finish()
    }
}
