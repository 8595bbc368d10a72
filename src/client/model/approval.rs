//! The host's say before a tool call is written: the call as the host sees
//! it ([`ToolCall`]) and what the host answers ([`Approval`]); the step that
//! asks is `Client::approve` (`tools/safety.rs`).

use serde_json::Value;

use super::hints::ToolHints;
use super::types::Tool;

/// A tool call about to be written, as the approval hook sees it
/// ([`ClientBuilder::approve_calls`](crate::client::ClientBuilder::approve_calls)).
///
/// # Examples
///
/// ```
/// use stdio_mcp::client::{Approval, ToolCall};
///
/// // Allow what cannot change anything; refuse the rest of untrusted servers.
/// async fn approve(call: ToolCall) -> Approval {
///     if call.hints.read_only {
///         Approval::Allow
///     } else {
///         Approval::Deny(format!("{} of {} may change things", call.tool.name, call.server))
///     }
/// }
/// # let _ = approve;
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolCall {
    /// The server's name in the client's errors: the group's or config
    /// entry's name, else [`ClientBuilder::name`](crate::client::ClientBuilder::name),
    /// else the program.
    pub server: String,
    /// The tool's definition as the client holds it; only its `name` when
    /// the server's listing lacks it.
    pub tool: Tool,
    /// The arguments to be sent (`null` for none).
    pub arguments: Value,
    /// What to act on: the server's claims when the server is trusted, else
    /// the specification's defaults (not read-only, destructive, not
    /// idempotent, open-world).
    pub hints: ToolHints,
    /// What the server claims ([`Tool::hints`]), to show, not to act on
    /// unless `trusted`.
    pub claimed: ToolHints,
    /// Whether the host trusts the server
    /// ([`ClientBuilder::trusted`](crate::client::ClientBuilder::trusted), config `"trust": true`).
    pub trusted: bool,
}

/// What the approval hook answers.
///
/// # Examples
///
/// ```
/// use stdio_mcp::client::Approval;
///
/// let answer = Approval::Deny("the user said no".into());
/// assert_ne!(answer, Approval::Allow);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// Write the call.
    Allow,
    /// Write nothing; the call fails with
    /// [`ErrorKind::Denied`](crate::ErrorKind::Denied) carrying this reason.
    Deny(String),
}
