//! Tools a host can trust, as a client uses them: the approval before a
//! call, what a listing changed, what is held and its acceptance. Their
//! settings are the builder's (`builder.rs`), the state is in `guard.rs` and
//! `ledger.rs`, the shapes in `model/approval.rs` and `model/tool_changes.rs`.

use std::sync::Arc;

use serde_json::Value;

use crate::error::Error;

use crate::client::client::Client;
use crate::client::model::approval::{Approval, ToolCall};
use crate::client::model::hints::ToolHints;
use crate::client::model::tool_changes::ToolChanges;
use crate::client::model::types::Tool;
use crate::client::tools::ledger::Held;

impl Client {
    /// The tool changes that await [`accept_tool_changes`](Self::accept_tool_changes)
    /// (with [`ClientBuilder::hold_tool_changes`](crate::client::ClientBuilder::hold_tool_changes)):
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
    pub(in crate::client) fn note_listing(&self, tools: &Arc<[Tool]>) {
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
    pub(in crate::client) fn visible(&self, tools: Arc<[Tool]>) -> Arc<[Tool]> {
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
    pub(in crate::client) async fn approve(
        &self,
        name: &str,
        arguments: &Value,
    ) -> Result<(), Error> {
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
        let answer = crate::hook_panic::run_hook(|| hook(call)).await;
        let reason = match answer {
            Ok(Approval::Allow) => return Ok(()),
            Ok(Approval::Deny(reason)) => format!("the host denied it: {reason}"),
            Err(panic) => format!(
                "the host's approval hook panicked{}",
                crate::hook_panic::panic_text(panic.as_ref())
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
