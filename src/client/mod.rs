//! A thin MCP client on top of the [`Transport`](crate::Transport): the handshake, typed results,
//! pagination, progress, and answers to what the server asks.
//!
//! ```no_run
//! # futures::executor::block_on(async {
//! use serde_json::json;
//! use stdio_mcp::client::Client;
//!
//! let client = Client::connect(["npx", "-y", "@modelcontextprotocol/server-everything"]).await?;
//! println!("{} {}", client.server_info().name, client.protocol_version());
//! for tool in client.list_tools().await? {
//!     println!("{}: {}", tool.name, tool.description.unwrap_or_default());
//! }
//! let result = client.call_tool("echo", json!({"message": "hi"})).await?;
//! println!("{}", result.text());
//! client.close().await?;
//! # Ok::<(), stdio_mcp::Error>(()) });
//! ```

// By concept: the handle (client.rs) and every setting of its builder
// (builder.rs); connecting — the probe, the handshake, the era, what the
// server writes meanwhile, where it comes from (connect/); one request — its
// options, time limits, wire fields and input rounds (request/); what the
// server sends unasked — `listen` streams and routing (listen/); tools — the
// catalog and its cache, the ledger of changes, the approval hook, the
// schema checks (tools/); answers to what the server asks (answers/); the
// process's life and restarts (restart/); the MCP methods (methods.rs) and
// tasks (tasks.rs); the MCP shapes a user reads (model/); OpenTelemetry's
// spans and metrics of each request and session (telemetry.rs).
mod answers;
mod builder;
// The handle's file, as the layout in docs/design.md names it.
#[allow(clippy::module_inception)]
mod client;
mod connect;
mod listen;
mod methods;
mod model;
mod request;
mod restart;
mod tasks;
mod telemetry;
mod tools;

// The modules of the concept folders, by their own names.
use connect::{era, noise, nudge, origin, session};
use listen::{inbound, subscription};
use request::{limits, wire};
use restart::life;
#[cfg(feature = "validate")]
use tools::validation;

pub use answers::{IntoHandler, ServerRequestHandler, TypedForm, WireForm};
pub use builder::ClientBuilder;
pub use client::{Client, ClientClose};
pub use era::{
    Era, DEFAULT_HANDSHAKE_TIMEOUT, DEFAULT_PROBE_TIMEOUT, DEFAULT_REQUEST_TIMEOUT,
    LEGACY_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS,
};
pub use life::ClientState;
pub use model::approval::{Approval, ToolCall};
pub use model::asks::{
    CreateMessageRequest, CreateMessageResult, ElicitRequest, ElicitResult, SamplingMessage,
};
pub use model::hints::ToolHints;
pub use model::listing::{ListItem, Listing};
pub use model::offers::{
    CompleteResult, Completion, GetPromptResult, Prompt, PromptArgument, PromptMessage,
    ReadResourceResult, Resource, ResourceTemplate,
};
pub use model::roots::{ListRootsRequest, Root};
pub use model::task_status::{TaskStatus, TaskSupport};
pub use model::tool_changes::{ToolChange, ToolChanges};
pub use model::types::{
    CallToolResult, Content, Extra, Implementation, LoggingLevel, Progress, ResourceContents,
    ServerCapabilities, Tool,
};
pub use request::CallOptions;
pub use restart::{RestartInfo, RestartPolicy, RESTARTED};
pub use subscription::{ListenFilter, Subscription};
pub(crate) use tools::guard::{approve_hook, ApproveHook};
pub(crate) use tools::ledger::compare as compare_tools;
#[cfg(feature = "validate")]
pub use validation::{Checked, Invalid, Validation};
