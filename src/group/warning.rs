//! What in a group's configuration looks like it works and does not.

use std::fmt;

/// A warning of [`Group::warnings`](super::Group::warnings): the server it
/// is about and what is wrong; shown as `server "NAME": MESSAGE`.
///
/// # Examples
///
/// ```no_run
/// # futures::executor::block_on(async {
/// let group = stdio_mcp::group::Group::builder(stdio_mcp::config::Config::load(".mcp.json")?).connect().await;
/// group.tools().await;
/// for warning in group.warnings().iter().filter(|w| w.server == "github") {
///     eprintln!("warning: {warning}");
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(()) });
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GroupWarning {
    /// The server's name in the configuration.
    pub server: String,
    /// What is wrong, e.g. `excludeTools entry "delete_*" matches none of
    /// its 12 tools`.
    pub message: String,
}

impl fmt::Display for GroupWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "server {:?}: {}", self.server, self.message)
    }
}
