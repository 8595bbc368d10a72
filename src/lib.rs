//! Run a [Model Context Protocol] server as a child process and talk to it over
//! its stdin and stdout, from any async executor: smol, async-std, Tokio (no
//! compat layer needed: the crate brings its own reactor thread through
//! async-io), or a plain `futures::executor::block_on`.
//!
//! Most programs want the [`client`]: [`client::Client`] starts a server, finds
//! its era of MCP (the stateless 2026-07-28, or the `initialize` handshake of
//! the revisions up to 2025-11-25) and speaks it, with typed results, progress,
//! the server's requests answered by async handlers, a default limit on every
//! call, and restarts. [`config::Config`] reads the servers of a host's
//! configuration file.
//!
//! [Model Context Protocol]: https://modelcontextprotocol.io
//!
//! # Example
//!
//! ```no_run
//! # fn main() -> Result<(), stdio_mcp::Error> {
//! # futures::executor::block_on(async {
//! use serde_json::json;
//! use stdio_mcp::client::Client;
//!
//! let client = Client::connect(["uvx", "mcp-server-time"]).await?;
//! println!("{} ({} era)", client.server_info().name, client.era());
//! for tool in client.list_tools().await? {
//!     println!("- {}", tool.name);
//! }
//! let now = client
//!     .call_tool("get_current_time", json!({"timezone": "Europe/Paris"}))
//!     .await?;
//! println!("{}", now.text());
//! let status = client.close().await?;
//! println!("the server exited: {status}");
//! # Ok(()) })
//! # }
//! ```
//!
//! # Errors
//!
//! Every failure is an [`Error`] whose text reads on its own, and every error a
//! client returns names its server:
//! `server "time": MCP server process exited (code 1): fatal: no token`.
//! [`Error::kind`] gives an [`ErrorKind`] to match on; [`Error::rpc_error`] the
//! server's JSON-RPC error.
//!
//! # The transport underneath
//!
//! A [`Transport`] is a cheap, cloneable handle that speaks any JSON-RPC over a
//! child's stdio: it queues request lines and registers their
//! [`PendingRequest`]s. One [`Driver`] future per child does all of the child's
//! I/O: it writes the queue, reads stdout line by line and routes each message,
//! drains stderr, watches for the exit and carries out [`Transport::close`].
//! [`TransportBuilder::spawn`] runs drivers on one shared background thread;
//! [`TransportBuilder::spawn_with_driver`] lets you run the driver on your own executor.
//!
//! ```
//! # fn main() -> Result<(), stdio_mcp::Error> {
//! # futures::executor::block_on(async {
//! use serde_json::json;
//! use stdio_mcp::Transport;
//!
//! // A one-line "server": reads one request, answers id 1, exits when stdin ends.
//! let server = r#"read line; echo '{"jsonrpc":"2.0","id":1,"result":{"ok":true}}'; cat >/dev/null"#;
//! let transport = Transport::builder(["sh", "-c", server]).spawn()?;
//!
//! let result = transport.send_request("ping", None).await?;
//! assert_eq!(result, json!({"ok": true}));
//!
//! transport.close().await?; // closes stdin: the server ends by itself
//! assert_eq!(transport.exit_status().unwrap().code(), Some(0));
//! # Ok(()) })
//! # }
//! ```
//!
//! [`Transport::close`] closes the child's stdin, then sends SIGTERM after 2 s and
//! SIGKILL 2 s later if it is still running. Dropping every handle does the same;
//! dropping the [`Driver`] kills the child at once. No child is left behind.
//! Lines on stdout that are not JSON-RPC (banners, logs) are discarded without
//! disturbing anything; [`TransportBuilder::on_discarded`] and
//! [`Transport::discarded_lines`] make them visible.
//!
//! # Features
//!
//! All off by default:
//!
//! - `validate`: tool arguments and results checked against the tools' JSON
//!   Schemas (`ClientBuilder::validate_arguments` and `validate_results`),
//!   through the `jsonschema`
//!   crate without its network and file access.
//! - `tracing`: a span for each server and each request, and events for the
//!   life cycle, discarded lines and each message, through the `tracing`
//!   crate; without it the crate logs nothing and pays nothing.
//! - `opentelemetry`: each request a CLIENT span and each request and session
//!   a duration, by OpenTelemetry's semantic conventions for MCP, and the
//!   caller's trace context in `params._meta`, through the `opentelemetry`
//!   API crate (the host installs the SDK); see the client docs' section
//!   "OpenTelemetry".

#![warn(missing_docs, missing_debug_implementations, rust_2018_idioms)]
// System calls only in `src/sys/`, the one module allowed `unsafe`.
#![deny(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

/// A `tracing` event when the `tracing` feature is on: `event!(info, pid, "started")`.
/// When it is off this expands to nothing, so its arguments are not evaluated.
macro_rules! event {
    ($level:ident, $($arg:tt)+) => {
        #[cfg(feature = "tracing")]
        {
            tracing::$level!($($arg)+);
        }
    };
}

// The path of one request, in order: transport -> shared -> driver -> framing
// -> message -> route -> pending. The child and the platform sit beside it;
// the client (eras, restarts) and config (host files) sit on top.
mod background;
mod builder;
mod child;
pub mod client;
pub mod config;
mod driver;
mod error;
mod framing;
pub mod group;
mod hook_panic;
mod lock;
mod message;
mod pending;
mod program_name;
mod replace_file;
mod route;
pub mod sandbox;
mod shared;
mod suggest;
#[allow(unsafe_code)]
mod sys;
mod transport;

pub use builder::{TransportBuilder, DEFAULT_MAX_MESSAGE_SIZE};

pub use child::ExitStatus;
pub use driver::Driver;
pub use driver::RunUntil;
pub use error::{ConnectDiagnosis, Error, ErrorKind, RpcError};
pub use message::{DiscardedLine, Notification, ServerRequest};
pub use pending::{PendingRequest, RequestOptions};
pub use sandbox::Sandbox;
pub use suggest::closest_name;
pub use transport::{Close, Transport};

/// Internal entry points for the fuzzer (`fuzz/`); not part of the API.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod __fuzz {
    pub use crate::route::replay::replay;
}

/// Re-exported so handlers and params can be written without a direct dependency.
pub use serde_json::{json, Value};

// The README's examples are compiled as doc tests, so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;

// So are those of the client's full description.
#[cfg(doctest)]
#[doc = include_str!("../docs/client.md")]
struct ClientExamples;

// And those of the pages on sandboxed servers and tools a host can trust.
#[cfg(doctest)]
#[doc = include_str!("../docs/sandbox.md")]
struct SandboxExamples;

#[cfg(doctest)]
#[doc = include_str!("../docs/host.md")]
struct HostExamples;
