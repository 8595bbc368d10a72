//! What changed between two listings of a server's tools: the tools added,
//! the tools removed, and each changed definition with the fields that
//! differ. Two definitions are the same when their digests are
//! ([`Tool::digest`]): `_meta`, key order and spacing are no change.

use super::types::Tool;

/// The tools of one server that changed between two listings (see
/// [`ClientBuilder::on_tools_changed`](crate::client::ClientBuilder::on_tools_changed)),
/// or that await acceptance ([`Client::held_tool_changes`](crate::client::Client::held_tool_changes)).
///
/// # Examples
///
/// ```
/// use stdio_mcp::client::ToolChanges;
///
/// fn log(changes: &ToolChanges) {
///     for tool in &changes.added {
///         eprintln!("new tool {}", tool.name);
///     }
///     for change in &changes.changed {
///         eprintln!("tool {} changed: {}", change.after.name, change.fields.join(", "));
///     }
///     for tool in &changes.removed {
///         eprintln!("tool {} is gone", tool.name);
///     }
/// }
/// assert!(ToolChanges::default().is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ToolChanges {
    /// Tools the server did not list before, in the server's order.
    pub added: Vec<Tool>,
    /// Tools the server no longer lists, in the order it used to list them.
    pub removed: Vec<Tool>,
    /// Tools whose definitions changed, in the server's order.
    pub changed: Vec<ToolChange>,
}

/// One tool whose definition changed: before, after, and which of its
/// top-level fields differ.
///
/// # Examples
///
/// ```
/// use stdio_mcp::client::ToolChange;
///
/// fn describe(change: &ToolChange) -> String {
///     let was = change.before.hints().read_only;
///     let is = change.after.hints().read_only;
///     format!("{}: {} (read-only {was} → {is})", change.after.name, change.fields.join(", "))
/// }
/// # let _ = describe;
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolChange {
    /// The definition held before.
    pub before: Tool,
    /// The definition the server gives now.
    pub after: Tool,
    /// The top-level keys of the wire definition that differ (`"annotations"`,
    /// `"description"`, `"inputSchema"`, …), sorted; `_meta` is never one.
    pub fields: Vec<String>,
}

impl ToolChanges {
    /// Whether nothing changed.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(stdio_mcp::client::ToolChanges::default().is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }

    /// Only the tools whose names `keep` says yes to (a group's
    /// `includeTools` / `excludeTools`).
    pub(crate) fn retain(mut self, keep: impl Fn(&str) -> bool) -> Self {
        self.added.retain(|tool| keep(&tool.name));
        self.removed.retain(|tool| keep(&tool.name));
        self.changed.retain(|change| keep(&change.after.name));
        self
    }
}
