//! How a child process ended.

use std::fmt;

/// How the MCP server process ended: an exit code or, on Unix, the signal that killed it.
///
/// ```no_run
/// # futures::executor::block_on(async {
/// use stdio_mcp::Transport;
///
/// let t = Transport::builder(["true"]).spawn()?;
/// t.close().await?;
/// let status = t.exit_status().expect("exited");
/// assert_eq!(status.code(), Some(0));
/// # Ok::<(), stdio_mcp::Error>(()) });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ExitStatus {
    code: Option<i32>,
    signal: Option<i32>,
}

impl ExitStatus {
    /// The exit code, if the process exited normally.
    #[must_use]
    pub fn code(&self) -> Option<i32> {
        self.code
    }

    /// The number of the signal that ended the process, if one did.
    #[must_use]
    pub fn signal(&self) -> Option<i32> {
        self.signal
    }

    /// A status for an exit whose details could not be learned.
    pub(crate) fn unknown() -> Self {
        ExitStatus {
            code: None,
            signal: None,
        }
    }

    /// Whether the process exited with code 0.
    #[must_use]
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

impl From<std::process::ExitStatus> for ExitStatus {
    fn from(status: std::process::ExitStatus) -> Self {
        #[cfg(unix)]
        let signal = std::os::unix::process::ExitStatusExt::signal(&status);
        #[cfg(not(unix))]
        let signal = None;
        ExitStatus {
            code: status.code(),
            signal,
        }
    }
}

/// `code N` or `signal N`, as it appears inside the exit error.
impl fmt::Display for ExitStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.code, self.signal) {
            (Some(code), _) => write!(f, "code {code}"),
            (None, Some(signal)) => write!(f, "signal {signal}"),
            (None, None) => f.write_str("unknown status"),
        }
    }
}
