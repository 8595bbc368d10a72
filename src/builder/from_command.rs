//! A server's command line, as the words of an array or a `Vec`, taken
//! wherever a transport builder is (`Client::connect(["uvx", "mcp-server-time"])`).

use std::ffi::OsStr;

use super::TransportBuilder;

/// A command line as a transport builder: `Client::connect(["uvx", "mcp-server-time"])`.
///
/// # Examples
///
/// ```
/// use stdio_mcp::TransportBuilder;
///
/// let builder = TransportBuilder::from(["uvx", "mcp-server-time"]);
/// # let _ = builder;
/// ```
impl<S: AsRef<OsStr>, const N: usize> From<[S; N]> for TransportBuilder {
    fn from(command: [S; N]) -> Self {
        TransportBuilder::new(command)
    }
}

/// A command line as a transport builder.
///
/// # Examples
///
/// ```
/// use stdio_mcp::TransportBuilder;
///
/// let builder = TransportBuilder::from(vec!["npx".to_owned(), "-y".into(), "server".into()]);
/// # let _ = builder;
/// ```
impl<S: AsRef<OsStr>> From<Vec<S>> for TransportBuilder {
    fn from(command: Vec<S>) -> Self {
        TransportBuilder::new(command)
    }
}
