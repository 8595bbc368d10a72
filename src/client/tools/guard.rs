//! What stands between a host's model and a server's tools, as a client is
//! built with it: the approval hook, whether the server is trusted, who
//! hears of tool changes, and whether changes are held until accepted (the
//! builder's methods that set it are in `builder.rs`).

use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use std::future::Future;

use crate::client::model::approval::{Approval, ToolCall};
use crate::client::model::tool_changes::ToolChanges;
use crate::client::model::types::Tool;

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

/// The hook, boxed: called before each `tools/call` is written.
pub(crate) type ApproveHook = Arc<dyn Fn(ToolCall) -> BoxFuture<'static, Approval> + Send + Sync>;

/// Boxes the user's hook.
pub(crate) fn approve_hook<F, Fut>(hook: F) -> ApproveHook
where
    F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Approval> + Send + 'static,
{
    Arc::new(move |call| hook(call).boxed())
}
