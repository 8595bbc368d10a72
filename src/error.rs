//! The one error type of the crate, and the JSON-RPC error object it can carry.

use std::fmt;
use std::time::Duration;

use serde_json::Value;

use crate::child::ExitStatus;

/// A JSON-RPC error object sent by the server in answer to a request.
///
/// It is what [`Error::Rpc`] carries, and what a handler passes back to
/// [`Transport::respond`](crate::Transport::respond) to refuse a server request.
///
/// ```
/// use stdio_mcp::RpcError;
///
/// let e = RpcError { code: -32601, message: "Method not found".into(), data: None };
/// assert_eq!(e.to_string(), "MCP error -32601: Method not found");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The error code, e.g. `-32601` for an unknown method.
    pub code: i64,
    /// The short description the server gave.
    pub message: String,
    /// Whatever the server put under `data`, if anything.
    pub data: Option<Value>,
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MCP error {}: {}", self.code, self.message)
    }
}

impl std::error::Error for RpcError {}

/// Everything that can go wrong between this process and an MCP server.
///
/// Each variant displays a complete sentence, readable without these docs.
/// [`category`](Error::category) tells a genuine server error (`"mcp"`) and a
/// timeout (`"timeout"`) from the failures the transport raises on its own.
///
/// ```
/// use stdio_mcp::{Error, RpcError};
///
/// let e = Error::Rpc(RpcError { code: -32602, message: "bad".into(), data: None });
/// assert_eq!(e.category(), Some("mcp"));
/// assert_eq!(e.rpc_error().map(|r| r.code), Some(-32602));
/// assert_eq!(Error::NotAlive.category(), None);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Error {
    /// The child could not be started: `PROGRAM` cannot be run, or the
    /// working directory is missing. `reason` says which.
    Start {
        /// The first element of the command, as given.
        program: String,
        /// Why it could not run: no such program, permission denied, no such directory.
        reason: String,
    },
    /// The command given to [`Transport::builder`](crate::Transport::builder) was empty.
    EmptyCommand,
    /// The server answered with a JSON-RPC error object.
    Rpc(RpcError),
    /// The server answered with an `error` that is not a JSON-RPC error object
    /// (a string, number, array, or an object without `code`); this holds its text.
    ErrorResponse(String),
    /// The server answered in a shape that is neither a result nor an error; this says what was wrong.
    InvalidResponse(String),
    /// No answer arrived within the request's time limit.
    Timeout {
        /// The request's method.
        method: String,
        /// The limit it was sent with.
        after: Duration,
    },
    /// The child exited while the request was waiting.
    Exited {
        /// How it ended.
        status: ExitStatus,
        /// The last non-empty lines it wrote to stderr, oldest first.
        stderr_tail: Vec<String>,
    },
    /// The request or notification was sent after the child exited or after `close()`.
    NotAlive,
    /// The child closed its stdout while still running, so no answer can arrive.
    StdoutClosed,
    /// The child wrote a stdout line longer than the configured limit; the child was closed.
    MessageTooLarge {
        /// The limit in bytes ([`Builder::max_message_size`](crate::Builder::max_message_size)).
        limit: usize,
    },
    /// The driver was dropped while the request was waiting.
    LeftLoop,
    /// The driver was dropped while a `close()` was waiting for the child to exit.
    CloseLeftLoop,
    /// The request asked to be settled by a notification, which this transport cannot do.
    ResolveOnNotification {
        /// The notification method that was asked for.
        notification: String,
    },
    /// The MCP handshake or a typed result did not fit the protocol (client module).
    Protocol(String),
}

impl Error {
    /// `Some("mcp")` for a JSON-RPC error from the server, `Some("timeout")` for a
    /// request that ran out of time, `None` for every failure the transport raised itself.
    ///
    /// # Examples
    ///
    /// ```
    /// use stdio_mcp::{Error, RpcError};
    ///
    /// let server = Error::Rpc(RpcError { code: -32601, message: "no such method".into(), data: None });
    /// assert_eq!(server.category(), Some("mcp"));
    /// assert_eq!(Error::NotAlive.category(), None);
    /// ```
    #[must_use]
    pub fn category(&self) -> Option<&'static str> {
        match self {
            Error::Rpc(_) => Some("mcp"),
            Error::Timeout { .. } => Some("timeout"),
            _ => None,
        }
    }

    /// The server's JSON-RPC error object, when that is what this is.
    ///
    /// # Examples
    ///
    /// ```
    /// use stdio_mcp::{Error, RpcError};
    ///
    /// let error = Error::Rpc(RpcError { code: -32602, message: "bad params".into(), data: None });
    /// assert_eq!(error.rpc_error().map(|e| e.code), Some(-32602));
    /// assert_eq!(error.to_string(), "MCP error -32602: bad params");
    /// ```
    #[must_use]
    pub fn rpc_error(&self) -> Option<&RpcError> {
        match self {
            Error::Rpc(e) => Some(e),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Start { program, reason } => {
                write!(f, "MCP server failed to start: cannot run {program}: {reason}")
            }
            Error::EmptyCommand => f.write_str("MCP server failed to start: the command is empty"),
            Error::Rpc(e) => e.fmt(f),
            Error::ErrorResponse(text) => write!(f, "MCP stdio error response: {text}"),
            Error::InvalidResponse(what) => write!(f, "MCP stdio invalid response: {what}"),
            Error::Timeout { method, after } => write!(
                f,
                "MCP stdio request {method} timed out after {}s",
                after.as_secs_f64()
            ),
            Error::Exited {
                status,
                stderr_tail,
            } => {
                write!(f, "MCP server process exited ({status})")?;
                if !stderr_tail.is_empty() {
                    write!(f, ": {}", stderr_tail.join(" | "))?;
                }
                Ok(())
            }
            Error::NotAlive => f.write_str("MCP server process has exited"),
            Error::StdoutClosed => f.write_str(
                "MCP server process closed its stdout while running; no answer can arrive",
            ),
            Error::MessageTooLarge { limit } => write!(
                f,
                "MCP server sent a line longer than the limit of {limit} bytes; the server was closed"
            ),
            Error::LeftLoop => f.write_str(
                "MCP server process left the loop before the request was answered",
            ),
            Error::CloseLeftLoop => {
                f.write_str("MCP server process left the loop before it exited")
            }
            Error::ResolveOnNotification { notification } => write!(
                f,
                "MCP stdio transport cannot settle a request from a notification \
                 (resolve_on_notification = {notification}); send it without that option"
            ),
            Error::Protocol(what) => write!(f, "MCP protocol error: {what}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<RpcError> for Error {
    fn from(e: RpcError) -> Self {
        Error::Rpc(e)
    }
}
