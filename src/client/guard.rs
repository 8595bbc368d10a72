//! What stands between a host's model and a server's tools, as a client is
//! built with it: the approval hook, whether the server is trusted, who
//! hears of tool changes, and whether changes are held until accepted.

use std::future::Future;
use std::sync::Arc;

use super::approval::{approve_hook, Approval, ApproveHook, ToolCall};
use super::builder::ClientBuilder;
use super::tool_changes::ToolChanges;
use super::types::Tool;

/// The user's hook, told what a listing changed.
pub(crate) type ChangesHook = Arc<dyn Fn(&ToolChanges) + Send + Sync>;
/// A group's hook, told of every listing: the tools not held back, and what
/// changed (`None` for a first listing).
pub(crate) type ListedHook = Arc<dyn Fn(&[Tool], Option<&ToolChanges>) + Send + Sync>;

/// The client's settings for its tools' safety.
#[derive(Clone, Default)]
pub(crate) struct Guard {
    pub(crate) approve: Option<ApproveHook>,
    pub(crate) trusted: bool,
    pub(crate) on_changed: Option<ChangesHook>,
    pub(crate) on_listed: Option<ListedHook>,
    pub(crate) hold: bool,
    /// Definitions known before the first listing (a group's catalog cache).
    pub(crate) baseline: Option<Vec<Tool>>,
}

impl ClientBuilder {
    /// Calls `hook` before every `tools/call` this client would write
    /// ([`call_tool`](super::Client::call_tool), `call_tool_with`, a group's
    /// call, a task's start), after the arguments are checked, with the
    /// call ([`ToolCall`]): the tool's definition as the client holds it
    /// (listed first if it holds none), the arguments, and the hints to act
    /// on. [`Approval::Deny`] fails the call with
    /// [`ErrorKind::Denied`](crate::ErrorKind::Denied) and writes nothing.
    ///
    /// The hook may take its time (ask a person): a call dropped meanwhile
    /// drops the hook's future and writes nothing. A hook that panics fails
    /// that call (`Denied`, saying so); the client serves on.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::{Approval, Client, ToolCall};
    ///
    /// let client = Client::builder(["my-mcp-server"])
    ///     .approve_calls(|call: ToolCall| async move {
    ///         if call.hints.read_only {
    ///             Approval::Allow
    ///         } else {
    ///             Approval::Deny(format!("{} may write, and nobody is here to ask", call.tool.name))
    ///         }
    ///     })
    ///     .connect()
    ///     .await?;
    /// # let _ = client; Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn approve_calls<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Approval> + Send + 'static,
    {
        self.guard.approve = Some(approve_hook(hook));
        self
    }

    /// Whether the host believes what this server claims of its tools: the
    /// hints [`ToolCall::hints`] gives the approval hook are the server's
    /// when it is trusted, the specification's defaults when not (the
    /// default, unless the config entry says `"trust": true`).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::builder(["my-own-server"]).trusted(true).connect().await?;
    /// # let _ = client; Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn trusted(mut self, trusted: bool) -> Self {
        self.guard.trusted = trusted;
        self
    }

    /// Calls `hook` when a listing of the server's tools differs from the
    /// one before ([`ToolChanges`]: added, removed, changed with the fields
    /// that differ, compared by [`Tool::digest`]). The first listing is the
    /// baseline; every later one counts: [`tools`](super::Client::tools)
    /// after a `list_changed`, a restart or the list's `ttlMs`, and
    /// [`list_tools`](super::Client::list_tools). Called on the task that
    /// listed, once per listing that changed something.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::{Client, ToolChanges};
    ///
    /// let client = Client::builder(["my-mcp-server"])
    ///     .on_tools_changed(|changes: &ToolChanges| {
    ///         for change in &changes.changed {
    ///             eprintln!("{} changed: {}", change.after.name, change.fields.join(", "));
    ///         }
    ///     })
    ///     .connect()
    ///     .await?;
    /// # let _ = client; Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn on_tools_changed(mut self, hook: impl Fn(&ToolChanges) + Send + Sync + 'static) -> Self {
        self.guard.on_changed = Some(Arc::new(hook));
        self
    }

    /// With `true`, a tool added or changed since the first listing is
    /// neither listed ([`tools`](super::Client::tools),
    /// [`list_tools`](super::Client::list_tools)) nor callable (the call
    /// fails [`ErrorKind::Denied`](crate::ErrorKind::Denied)) until
    /// [`accept_tool_changes`](super::Client::accept_tool_changes); a tool
    /// removed goes at once. Default `false`.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::builder(["my-mcp-server"])
    ///     .hold_tool_changes(true)
    ///     .connect()
    ///     .await?;
    /// # let _ = client; Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn hold_tool_changes(mut self, hold: bool) -> Self {
        self.guard.hold = hold;
        self
    }

    /// [`approve_calls`](Self::approve_calls) with a hook already boxed (a group's).
    pub(crate) fn approve_with(mut self, hook: ApproveHook) -> Self {
        self.guard.approve = Some(hook);
        self
    }

    /// Tells `hook` of every listing (a group keeps its catalog with it).
    pub(crate) fn on_tools_listed(mut self, hook: ListedHook) -> Self {
        self.guard.on_listed = Some(hook);
        self
    }

    /// Compares the first listing with `tools` (and, holding changes,
    /// accepts them): what a group's catalog cache knew of the server.
    pub(crate) fn tool_baseline(mut self, tools: Vec<Tool>) -> Self {
        self.guard.baseline = Some(tools);
        self
    }
}
