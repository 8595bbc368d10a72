//! The eras of MCP this client speaks, their protocol revisions, and the
//! default time limits of finding the server's era.

use std::time::Duration;

/// Protocol revisions this client speaks, newest first. It offers the first.
///
/// # Examples
///
/// ```
/// use stdio_mcp::client::SUPPORTED_PROTOCOL_VERSIONS;
///
/// assert_eq!(SUPPORTED_PROTOCOL_VERSIONS[0], "2025-11-25"); // offered first
/// ```
pub const SUPPORTED_PROTOCOL_VERSIONS: [&str; 4] =
    ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

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
/// answers. [`Client::era`](super::Client::era) tells which one it is talking.
///
/// # Examples
///
/// ```no_run
/// # futures::executor::block_on(async {
/// use stdio_mcp::client::{Client, Era};
/// use stdio_mcp::Transport;
///
/// let client = Client::builder(Transport::builder(["uvx", "mcp-server-time"]))
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
