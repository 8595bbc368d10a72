//! Where a server of a group is, as the group tells its host.

use crate::client::Era;

/// Where a server of a group is.
///
/// ```no_run
/// # futures::executor::block_on(async {
/// use stdio_mcp::group::{Group, ServerState};
///
/// let group = Group::builder(stdio_mcp::config::Config::load(".mcp.json")?).connect().await;
/// let ready = group
///     .servers()
///     .into_iter()
///     .filter(|(_, state)| matches!(state, ServerState::Ready(_)))
///     .count();
/// println!("{ready} servers ready");
/// # Ok::<(), Box<dyn std::error::Error>>(()) });
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerState {
    /// Not running: its tools come from the catalog cache (or, after an
    /// idle close, its last listing), and its next call starts it.
    Idle,
    /// Starting.
    Starting,
    /// Running, speaking this era.
    Ready(Era),
    /// Exited; its restart policy is starting it again.
    Restarting,
    /// Could not start, or is gone for good: the whole error (exit code,
    /// stderr tail), or its config entry's error.
    Failed(String),
    /// Closed (by `close`, `stop`, or a `reload` that removed it).
    Closed,
}
