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
        /// The limit in bytes ([`TransportBuilder::max_message_size`](crate::TransportBuilder::max_message_size)).
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
    /// An error of a [`Client`](crate::client::Client) call, naming the server it
    /// came from (its config name, else its program): every error a client
    /// returns is one. [`kind`](Error::kind), [`category`](Error::category) and
    /// [`rpc_error`](Error::rpc_error) look through it; [`inner`](Error::inner)
    /// gives the error without the name.
    Server {
        /// The server's config name, else its program.
        server: String,
        /// What went wrong.
        error: Box<Error>,
    },
    /// The client's restart policy gave up on its server: it exited more often
    /// than the policy allows. No call goes to it any more.
    GaveUp {
        /// The policy's limit of restarts (within the window)...
        restarts: u32,
        /// ...and the window.
        within: Duration,
        /// How the server ended the last time (its exit code and stderr).
        last: Box<Error>,
    },
    /// A call on a client after its `close()`.
    Closed,
    /// Connecting a client timed out: what it waited for, how long in all,
    /// and what the server wrote on stdout instead of an answer.
    ConnectTimeout(Box<ConnectDiagnosis>),
    /// While connecting, the server wrote 100 stdout lines that are not
    /// JSON-RPC and no JSON-RPC message: it does not speak MCP on stdout (a
    /// program that is not an MCP server, or one that logs to stdout), and
    /// the connect ends at once instead of waiting out its time limits.
    Noise {
        /// How many lines it had written.
        lines: u64,
        /// The first of them, each cut to 200 characters.
        first: Vec<String>,
    },
    /// The call's params or arguments cannot be sent (not a JSON object, or a
    /// call option that does not fit); nothing was written.
    InvalidArguments(String),
    /// A host configuration file could not be read ([`crate::config`]).
    Config(Box<crate::config::error::ConfigError>),
    /// A tool reported failure (`isError: true`), made an error by
    /// [`CallToolResult::into_result`](crate::client::CallToolResult::into_result);
    /// this holds the text it gave.
    Tool(String),
    /// A task ended cancelled (by the server, or by a `tasks/cancel`).
    Cancelled {
        /// The task's id.
        task_id: String,
        /// The server's status message, if it gave one.
        message: Option<String>,
    },
    /// A tool call the client refused before writing it: the host's approval
    /// hook said no ([`ClientBuilder::approve_calls`](crate::client::ClientBuilder::approve_calls)),
    /// or the tool's definition is new or changed and awaits
    /// [`accept_tool_changes`](crate::client::Client::accept_tool_changes).
    Denied {
        /// The tool's name on the wire.
        tool: String,
        /// Why: the hook's reason, or what awaits acceptance.
        reason: String,
    },
}

/// What a connect that timed out knows: what got no answer, how long it
/// waited, and what the server wrote on stdout instead ([`Error::ConnectTimeout`]).
///
/// ```
/// use std::time::Duration;
/// use stdio_mcp::{ConnectDiagnosis, Error};
///
/// let e = Error::ConnectTimeout(Box::new(ConnectDiagnosis {
///     waited_for: "initialize within 60s".into(),
///     waited: Duration::from_secs(61),
///     noise: 2,
///     first_noise: Some("Starting...".into()),
///     hint: None,
///     sandboxed: false,
///     stderr_tail: Vec::new(),
/// }));
/// assert_eq!(
///     e.to_string(),
///     "MCP server did not answer initialize within 60s (61.0s since it started); \
///      it wrote 2 stdout lines that are not JSON-RPC, the first: \"Starting...\""
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectDiagnosis {
    /// What got no answer, e.g. `initialize within 60s, after a server/discover
    /// probe that got no answer within 10s`.
    pub waited_for: String,
    /// From the server's start to the failure.
    pub waited: Duration,
    /// How many stdout lines were not JSON-RPC (banners, logs, garbage).
    pub noise: u64,
    /// The first of them, cut to 200 characters.
    pub first_noise: Option<String>,
    /// What to try, when there is something.
    pub hint: Option<String>,
    /// It runs in a sandbox (which may be why it never answered).
    pub sandboxed: bool,
    /// Its last stderr lines, where a server says what failed.
    pub stderr_tail: Vec<String>,
}

/// What kind of failure an [`Error`] is: what a caller can do about it, in
/// one value to match on. [`Error::kind`] gives it.
///
/// ```
/// use stdio_mcp::{Error, ErrorKind, RpcError};
///
/// let e = Error::Rpc(RpcError { code: -32602, message: "bad".into(), data: None });
/// assert_eq!(e.kind(), ErrorKind::Rpc);
/// assert_eq!(Error::NotAlive.kind(), ErrorKind::Exited);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The server could not be started: no such program, no permission, no
    /// such directory, an empty command.
    Start,
    /// The server process is gone (it exited, or closed its stdout), so the
    /// call cannot be answered.
    Exited,
    /// No answer came within the call's time limit.
    Timeout,
    /// The server answered with a JSON-RPC error object ([`Error::rpc_error`]).
    Rpc,
    /// What the server sent does not fit the protocol (a malformed answer, a
    /// failed handshake, an over-long line).
    Protocol,
    /// The client was closed by `close()` before the call.
    Closed,
    /// The restart policy gave up on the server.
    GaveUp,
    /// The call's own input was refused before anything was written.
    InvalidArguments,
    /// The driver was dropped before the server exited.
    DriverDropped,
    /// A host configuration file could not be read.
    Config,
    /// A tool reported failure (`isError: true`), through
    /// [`CallToolResult::into_result`](crate::client::CallToolResult::into_result).
    Tool,
    /// A task ended cancelled.
    Cancelled,
    /// A tool call refused before it was written: by the host's approval
    /// hook, or because the tool's definition awaits acceptance.
    Denied,
}

impl ErrorKind {
    /// The kind's stable name, in lower case with underscores (`start`,
    /// `exited`, `timeout`, `rpc`, `protocol`, `closed`, `gave_up`,
    /// `invalid_arguments`, `driver_dropped`, `config`, `tool`,
    /// `cancelled`, `denied`): what a program that prints a kind (the
    /// command line's `--json`) writes, whatever the variant is called.
    ///
    /// # Examples
    ///
    /// ```
    /// use stdio_mcp::ErrorKind;
    ///
    /// assert_eq!(ErrorKind::GaveUp.as_str(), "gave_up");
    /// assert_eq!(ErrorKind::Timeout.to_string(), "timeout");
    /// ```
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Start => "start",
            ErrorKind::Exited => "exited",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Rpc => "rpc",
            ErrorKind::Protocol => "protocol",
            ErrorKind::Closed => "closed",
            ErrorKind::GaveUp => "gave_up",
            ErrorKind::InvalidArguments => "invalid_arguments",
            ErrorKind::DriverDropped => "driver_dropped",
            ErrorKind::Config => "config",
            ErrorKind::Tool => "tool",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Denied => "denied",
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Error {
    /// What kind of failure this is (through a server's name, if it has one).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use stdio_mcp::{Error, ErrorKind};
    ///
    /// let e = Error::Timeout { method: "tools/call".into(), after: Duration::from_secs(300) };
    /// assert_eq!(e.kind(), ErrorKind::Timeout);
    /// ```
    #[must_use]
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Server { error, .. } => error.kind(),
            Error::Start { .. } | Error::EmptyCommand => ErrorKind::Start,
            Error::Rpc(_) => ErrorKind::Rpc,
            Error::ErrorResponse(_)
            | Error::InvalidResponse(_)
            | Error::MessageTooLarge { .. }
            | Error::Noise { .. }
            | Error::Protocol(_) => ErrorKind::Protocol,
            Error::Timeout { .. } | Error::ConnectTimeout(_) => ErrorKind::Timeout,
            Error::Exited { .. } | Error::NotAlive | Error::StdoutClosed => ErrorKind::Exited,
            Error::LeftLoop | Error::CloseLeftLoop => ErrorKind::DriverDropped,
            Error::ResolveOnNotification { .. } | Error::InvalidArguments(_) => {
                ErrorKind::InvalidArguments
            }
            Error::GaveUp { .. } => ErrorKind::GaveUp,
            Error::Closed => ErrorKind::Closed,
            Error::Config(_) => ErrorKind::Config,
            Error::Tool(_) => ErrorKind::Tool,
            Error::Cancelled { .. } => ErrorKind::Cancelled,
            Error::Denied { .. } => ErrorKind::Denied,
        }
    }

    /// The name of the server a client's error came from (its config name,
    /// else its program); `None` for a transport's own errors.
    ///
    /// # Examples
    ///
    /// ```
    /// use stdio_mcp::Error;
    ///
    /// let e = Error::Server { server: "time".into(), error: Box::new(Error::NotAlive) };
    /// assert_eq!(e.server(), Some("time"));
    /// assert_eq!(e.to_string(), "server \"time\": MCP server process has exited");
    /// ```
    #[must_use]
    pub fn server(&self) -> Option<&str> {
        match self {
            Error::Server { server, .. } => Some(server),
            _ => None,
        }
    }

    /// This error without the server's name: the transport's own error.
    ///
    /// # Examples
    ///
    /// ```
    /// use stdio_mcp::Error;
    ///
    /// let e = Error::Server { server: "time".into(), error: Box::new(Error::NotAlive) };
    /// assert!(matches!(e.inner(), Error::NotAlive));
    /// ```
    #[must_use]
    pub fn inner(&self) -> &Error {
        match self {
            Error::Server { error, .. } => error.inner(),
            other => other,
        }
    }

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
        match self.inner() {
            Error::Rpc(_) => Some("mcp"),
            Error::Timeout { .. } | Error::ConnectTimeout(_) => Some("timeout"),
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
        match self.inner() {
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
                if status.sandboxed() {
                    if let Some(cause) = crate::sandbox::likely_cause(stderr_tail) {
                        write!(f, "; likely: {cause}")?;
                    }
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
            Error::Server { server, error } => {
                write!(f, "server {server:?}: {error}")?;
                if error.kind() == ErrorKind::DriverDropped {
                    // The transport's text speaks of its loop; say what to do.
                    f.write_str(
                        " (its driver was dropped while the server ran: keep the driver \
                         that connect_with or spawn_with_driver handed out running)",
                    )?;
                }
                Ok(())
            }
            Error::GaveUp {
                restarts,
                within,
                last,
            } => write!(
                f,
                "MCP server exited again after {restarts} restarts within {}s, the restart \
                 policy's limit: it is not restarted any more; its last exit: {last}",
                within.as_secs_f64()
            ),
            Error::Closed => f.write_str("MCP client was closed: no more calls go to its server"),
            Error::Cancelled { task_id, message } => {
                write!(f, "MCP task {task_id} was cancelled")?;
                match message {
                    Some(message) => write!(f, ": {message}"),
                    None => Ok(()),
                }
            }
            Error::Denied { tool, reason } => {
                write!(f, "MCP tool call {tool} was not sent: {reason}")
            }
            Error::ConnectTimeout(diagnosis) => {
                let ConnectDiagnosis {
                    waited_for,
                    waited,
                    noise,
                    first_noise,
                    hint,
                    sandboxed,
                    stderr_tail,
                } = diagnosis.as_ref();
                let place = if *sandboxed { ", in its sandbox" } else { "" };
                write!(
                    f,
                    "MCP server did not answer {waited_for} ({:.1}s since it started{place})",
                    waited.as_secs_f64()
                )?;
                match first_noise {
                    Some(first) => write!(
                        f,
                        "; it wrote {noise} stdout line{} that {} not JSON-RPC, the first: {first:?}",
                        if *noise == 1 { "" } else { "s" },
                        if *noise == 1 { "is" } else { "are" },
                    )?,
                    None => f.write_str("; it wrote nothing on stdout")?,
                }
                if !stderr_tail.is_empty() {
                    write!(f, "; its stderr: {}", stderr_tail.join(" | "))?;
                }
                let cause = sandboxed
                    .then(|| crate::sandbox::likely_cause(stderr_tail))
                    .flatten();
                if let Some(cause) = cause {
                    write!(f, "; likely: {cause}")?;
                }
                if let Some(hint) = hint {
                    write!(f, "; {hint}")?;
                }
                Ok(())
            }
            Error::Noise { lines, first } => {
                write!(
                    f,
                    "MCP server wrote {lines} stdout lines that are not JSON-RPC, and no \
                     JSON-RPC message, while connecting: it does not speak MCP on its stdout; \
                     the first lines: "
                )?;
                for (i, line) in first.iter().enumerate() {
                    let sep = if i == 0 { "" } else { " | " };
                    write!(f, "{sep}{line:?}")?;
                }
                Ok(())
            }
            Error::InvalidArguments(what) => write!(f, "MCP call not sent: {what}"),
            Error::Config(error) => write!(f, "MCP configuration: {error}"),
            Error::Tool(text) => write!(f, "MCP tool reported an error: {text}"),
        }
    }
}

/// A wrapper prints its inner error in its own text, so its `source()` is
/// the inner error's source, never the inner error again: `anyhow`'s `{:#}`
/// and `std::error::Report` print each cause once.
///
/// ```
/// use std::error::Error as _;
/// use stdio_mcp::Error;
///
/// let e = Error::Server { server: "time".into(), error: Box::new(Error::NotAlive) };
/// assert_eq!(e.to_string(), "server \"time\": MCP server process has exited");
/// assert!(e.source().is_none());
/// ```
impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Server { error, .. } => error.source(),
            Error::GaveUp { last, .. } => last.source(),
            _ => None,
        }
    }
}

impl Error {
    /// This error, naming `server` (once: an error already named keeps its name).
    pub(crate) fn named(self, server: &str) -> Error {
        match self {
            named @ Error::Server { .. } => named,
            error => Error::Server {
                server: server.to_owned(),
                error: Box::new(error),
            },
        }
    }
}

impl From<crate::config::error::ConfigError> for Error {
    fn from(e: crate::config::error::ConfigError) -> Self {
        Error::Config(Box::new(e))
    }
}

impl From<RpcError> for Error {
    fn from(e: RpcError) -> Self {
        Error::Rpc(e)
    }
}
