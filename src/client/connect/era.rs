//! The eras of MCP this client speaks, their protocol revisions, and the
//! client's default time limits.

use std::fmt;
use std::time::Duration;

/// The legacy revisions this client speaks (those with the `initialize`
/// handshake), newest first; it offers the first. The stateless revisions are
/// [`MODERN_PROTOCOL_VERSIONS`].
///
/// # Examples
///
/// ```
/// use stdio_mcp::client::LEGACY_PROTOCOL_VERSIONS;
///
/// assert_eq!(LEGACY_PROTOCOL_VERSIONS[0], "2025-11-25"); // offered first
/// ```
pub const LEGACY_PROTOCOL_VERSIONS: [&str; 4] =
    ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// How long a client call may wait for its answer when neither the call
/// ([`CallOptions::timeout`](crate::client::CallOptions::timeout)) nor the transport
/// sets a limit: 5 minutes, restarted by each progress the call hears of.
/// [`ClientBuilder::request_timeout`](crate::client::ClientBuilder::request_timeout)
/// changes it.
///
/// # Examples
///
/// ```
/// assert_eq!(stdio_mcp::client::DEFAULT_REQUEST_TIMEOUT.as_secs(), 300);
/// ```
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

/// How long the handshake may take when the transport has no timeout of its own.
///
/// # Examples
///
/// ```
/// assert_eq!(stdio_mcp::client::DEFAULT_HANDSHAKE_TIMEOUT.as_secs(), 60);
/// ```
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);

/// The stateless revisions this client speaks, newest first: no handshake,
/// the protocol fields in each request's `_meta`.
///
/// # Examples
///
/// ```
/// assert_eq!(stdio_mcp::client::MODERN_PROTOCOL_VERSIONS, ["2026-07-28"]);
/// ```
pub const MODERN_PROTOCOL_VERSIONS: [&str; 1] = ["2026-07-28"];

/// How long a silent `server/discover` probe is waited for before the server
/// is taken for a legacy one that ignores unknown requests.
///
/// # Examples
///
/// ```
/// assert_eq!(stdio_mcp::client::DEFAULT_PROBE_TIMEOUT.as_secs(), 10);
/// ```
pub const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Which era of MCP a client speaks with its server.
///
/// [`Modern`](Era::Modern) is the stateless revision 2026-07-28 and later;
/// [`Legacy`](Era::Legacy) the revisions with an `initialize` handshake (up to
/// 2025-11-25). [`Auto`](Era::Auto), the default, asks the server with a
/// `server/discover` probe, as the stdio binding says, and speaks what it
/// answers. [`Client::era`](crate::client::Client::era) tells which one it is talking.
///
/// # Examples
///
/// ```no_run
/// # futures::executor::block_on(async {
/// use stdio_mcp::client::{Client, Era};
///
/// let client = Client::builder(["uvx", "mcp-server-time"])
///     .era(Era::Auto)
///     .connect()
///     .await?;
/// if client.era() == Era::Modern {
///     println!("stateless MCP {}", client.protocol_version());
/// }
/// # Ok::<(), stdio_mcp::Error>(()) });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Era {
    /// Probe with `server/discover` and speak what the server answers.
    #[default]
    Auto,
    /// Only 2026-07-28 and later: never `initialize`.
    Modern,
    /// Only the `initialize` handshake revisions.
    Legacy,
}

/// `modern`, `legacy` or `auto`, as a log line would say it.
///
/// ```
/// use stdio_mcp::client::Era;
///
/// assert_eq!(Era::Modern.to_string(), "modern");
/// assert_eq!(format!("speaking {} MCP", Era::Legacy), "speaking legacy MCP");
/// ```
impl fmt::Display for Era {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Era::Auto => "auto",
            Era::Modern => "modern",
            Era::Legacy => "legacy",
        })
    }
}
