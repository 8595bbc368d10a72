//! What a caller sees of a task: its status as it changes, and whether a
//! tool may be called as one.

use serde_json::Value;

use super::types::Tool;

/// Where a task stands, as [`CallOptions::on_task`](crate::client::CallOptions::on_task)
/// reports it: when the call becomes a task, then at each change of its
/// status or message.
///
/// # Examples
///
/// ```
/// use stdio_mcp::client::TaskStatus;
///
/// let status = TaskStatus {
///     task_id: "786512e2".into(),
///     status: "working".into(),
///     status_message: Some("Gathering sources...".into()),
/// };
/// assert!(!status.is_terminal());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskStatus {
    /// The id the server gave the task; [`Client::task`](crate::client::Client::task)
    /// follows it again.
    pub task_id: String,
    /// `working`, `input_required`, `completed`, `failed` or `cancelled`.
    pub status: String,
    /// What the server says of it, if anything.
    pub status_message: Option<String>,
}

impl TaskStatus {
    /// Whether the task has ended (`completed`, `failed` or `cancelled`).
    ///
    /// # Examples
    ///
    /// ```
    /// use stdio_mcp::client::TaskStatus;
    ///
    /// let done = TaskStatus { task_id: "t".into(), status: "completed".into(), status_message: None };
    /// assert!(done.is_terminal());
    /// ```
    #[must_use]
    pub fn is_terminal(&self) -> bool {
        matches!(self.status.as_str(), "completed" | "failed" | "cancelled")
    }

    /// The status of a task object as the server sent it (`None` when it has
    /// no `taskId` or `status` string).
    pub(crate) fn of(task: &Value) -> Option<Self> {
        Some(TaskStatus {
            task_id: task.get("taskId")?.as_str()?.to_owned(),
            status: task.get("status")?.as_str()?.to_owned(),
            status_message: task
                .get("statusMessage")
                .and_then(Value::as_str)
                .map(str::to_owned),
        })
    }
}

/// Whether a tool may be called as a task (`execution.taskSupport` of the
/// 2025-11-25 revision; a 2026-07-28 server decides per call).
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use stdio_mcp::client::{TaskSupport, Tool};
///
/// let tool: Tool = serde_json::from_value(json!({
///     "name": "research",
///     "inputSchema": {"type": "object"},
///     "execution": {"taskSupport": "required"}
/// })).unwrap();
/// assert_eq!(tool.task_support(), TaskSupport::Required);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TaskSupport {
    /// Never as a task (also when the tool says nothing).
    #[default]
    Forbidden,
    /// Either way: [`CallOptions::as_task`](crate::client::CallOptions::as_task) chooses.
    Optional,
    /// Only as a task: `call_tool` makes it one.
    Required,
}

impl Tool {
    /// Whether this tool may, or must, be called as a task.
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::json;
    /// use stdio_mcp::client::{TaskSupport, Tool};
    ///
    /// let tool: Tool = serde_json::from_value(json!({"name": "add", "inputSchema": {}})).unwrap();
    /// assert_eq!(tool.task_support(), TaskSupport::Forbidden);
    /// ```
    #[must_use]
    pub fn task_support(&self) -> TaskSupport {
        let support = self
            .extra
            .get("execution")
            .and_then(|e| e.get("taskSupport"))
            .and_then(Value::as_str);
        match support {
            Some("required") => TaskSupport::Required,
            Some("optional") => TaskSupport::Optional,
            _ => TaskSupport::Forbidden,
        }
    }
}
