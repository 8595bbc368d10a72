//! Tools a host can trust, as a client offers them: the builder's settings
//! (approval hook, trust, change hook, held changes) and the client's steps
//! and calls that use them (the approval before a call, what a listing
//! changed, what is held and its acceptance). The state lives in `guard.rs`
//! and `tool_ledger.rs`; the shapes in `model/approval.rs` and
//! `model/tool_changes.rs`.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use serde_json::Value;

use crate::error::Error;

use super::builder::ClientBuilder;
use super::client::Client;
use super::guard::ListedHook;
use super::model::approval::{approve_hook, Approval, ApproveHook, ToolCall};
use super::model::hints::ToolHints;
use super::model::tool_changes::ToolChanges;
use super::model::types::Tool;
use super::tool_ledger::Held;

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

impl Client {
    /// The tool changes that await [`accept_tool_changes`](Self::accept_tool_changes)
    /// (with [`ClientBuilder::hold_tool_changes`](super::ClientBuilder::hold_tool_changes)):
    /// tools `added` since the accepted definitions and tools `changed`
    /// (before: as accepted; after: as listed now). Never a removed tool:
    /// those go at once. Empty when nothing is held.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::Client;
    ///
    /// let client = Client::builder(["my-mcp-server"]).hold_tool_changes(true).connect().await?;
    /// client.tools().await?; // the first listing: what is accepted
    /// // ... later, after the server changed a tool:
    /// client.tools().await?;
    /// for change in &client.held_tool_changes().changed {
    ///     println!("{} changed its {}", change.after.name, change.fields.join(", "));
    /// }
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    #[must_use]
    pub fn held_tool_changes(&self) -> ToolChanges {
        self.inner.ledger.held_changes()
    }

    /// Accepts every held change: the tools as last listed become listed
    /// and callable, and the definitions later listings are held against.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::Client;
    ///
    /// let client = Client::builder(["my-mcp-server"]).hold_tool_changes(true).connect().await?;
    /// client.tools().await?;
    /// if !client.held_tool_changes().is_empty() {
    ///     // A person looked at them and said yes.
    ///     client.accept_tool_changes();
    /// }
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn accept_tool_changes(&self) {
        self.inner.ledger.accept();
    }

    /// Notes a listing just stored: the hooks hear what changed.
    pub(super) fn note_listing(&self, tools: &Arc<[Tool]>) {
        let ledger = &self.inner.ledger;
        if !ledger.tracking() {
            return;
        }
        let changes = ledger.listed(tools);
        let guard = &self.inner.guard;
        if let (Some(hook), Some(changes)) = (&guard.on_changed, &changes) {
            if !changes.is_empty() {
                hook(changes);
            }
        }
        if let Some(hook) = &guard.on_listed {
            let visible = ledger.visible(Arc::clone(tools));
            hook(&visible, changes.as_ref());
        }
    }

    /// `tools` without those held back.
    pub(super) fn visible(&self, tools: Arc<[Tool]>) -> Arc<[Tool]> {
        self.inner.ledger.visible(tools)
    }

    /// `Err(Denied)` when `name` is held back.
    pub(crate) fn refuse_held(&self, name: &str) -> Result<(), Error> {
        let why = match self.inner.ledger.held(name) {
            None => return Ok(()),
            Some(Held::New) => "the tool is new since its server's tools were accepted",
            Some(Held::Changed) => "its definition changed since it was accepted",
        };
        Err(Error::Denied {
            tool: name.to_owned(),
            reason: format!("{why}, and awaits accept_tool_changes()"),
        })
    }

    /// The definitions accepted so far (a group's catalog cache keeps them).
    pub(crate) fn accepted_tools(&self) -> Option<Vec<Tool>> {
        self.inner.ledger.accepted()
    }

    /// The tools of the last listing that are held back (a group names them
    /// so that a call by that name is refused as held).
    pub(crate) async fn held_tools(&self) -> Vec<Tool> {
        let Ok(tools) = self.cached_tools().await else {
            return Vec::new();
        };
        tools
            .iter()
            .filter(|tool| self.inner.ledger.held(&tool.name).is_some())
            .cloned()
            .collect()
    }
    /// Asks the host's hook, if there is one, whether `name` may be called
    /// with `arguments`; `Err(Denied)` if not, or if the hook panicked.
    pub(super) async fn approve(&self, name: &str, arguments: &Value) -> Result<(), Error> {
        let Some(hook) = self.inner.guard.approve.clone() else {
            return Ok(());
        };
        // A failed listing is no reason to refuse: the name alone stands
        // for the tool, with the specification's defaults.
        let tool = match self.cached_tools().await {
            Ok(tools) => tools.iter().find(|t| t.name == name).cloned(),
            Err(_) => None,
        };
        let tool = tool.unwrap_or_else(|| Tool::named(name));
        let trusted = self.inner.guard.trusted;
        let claimed = tool.hints();
        let call = ToolCall {
            server: self.inner.name.clone(),
            tool,
            arguments: arguments.clone(),
            hints: if trusted {
                claimed
            } else {
                ToolHints::default()
            },
            claimed,
            trusted,
        };
        let answer = match std::panic::catch_unwind(AssertUnwindSafe(|| hook(call))) {
            Ok(answer) => AssertUnwindSafe(answer).catch_unwind().await,
            Err(panic) => Err(panic),
        };
        let reason = match answer {
            Ok(Approval::Allow) => return Ok(()),
            Ok(Approval::Deny(reason)) => format!("the host denied it: {reason}"),
            Err(panic) => format!(
                "the host's approval hook panicked{}",
                panic_text(panic.as_ref())
                    .map(|text| format!(": {text}"))
                    .unwrap_or_default()
            ),
        };
        Err(Error::Denied {
            tool: name.to_owned(),
            reason,
        })
    }
}

/// The message a panic carried, when it is text.
fn panic_text(panic: &(dyn Any + Send)) -> Option<&str> {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
}
