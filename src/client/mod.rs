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

// From the wire up: what a request carries (wire), the handlers and routes of
// what the server sends (handlers, inbound), the client's hold on its process
// (life), one request (request; its time limits: limits), the era's opening
// (session, connect), restarts (restart), where the server comes from
// (origin); then the public client, one topic a file: the handle (client),
// the MCP methods (methods), tools (tools), tasks (tasks), change
// notifications (listen), and the builder (builder, with Client::connect).
mod builder;
// The handle's file, as the layout in docs/design.md names it.
#[allow(clippy::module_inception)]
mod client;
mod connect;
mod era;
mod guard;
mod handlers;
mod inbound;
mod life;
mod limits;
mod listen;
mod methods;
mod model;
mod noise;
mod nudge;
mod origin;
mod request;
mod restart;
mod server_requests;
mod session;
mod subscription;
mod tasks;
mod tool_cache;
mod tool_ledger;
mod tool_safety;
mod tools;
#[cfg(feature = "validate")]
mod validation;
mod wire;

pub use builder::ClientBuilder;
pub use client::{Client, ClientClose};
pub use era::{
    Era, DEFAULT_HANDSHAKE_TIMEOUT, DEFAULT_PROBE_TIMEOUT, DEFAULT_REQUEST_TIMEOUT,
    LEGACY_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS,
};
pub use handlers::{IntoHandler, ServerRequestHandler, TypedForm, WireForm};
pub use life::ClientState;
pub(crate) use model::approval::{approve_hook, ApproveHook};
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
pub(crate) use model::tool_changes::compare as compare_tools;
pub use model::tool_changes::{ToolChange, ToolChanges};
pub use model::types::{
    CallToolResult, Content, Extra, Implementation, LoggingLevel, Progress, ResourceContents,
    ServerCapabilities, Tool,
};
pub use request::CallOptions;
pub use restart::{RestartInfo, RestartPolicy, RESTARTED};
pub use subscription::{ListenFilter, Subscription};
#[cfg(feature = "validate")]
pub use validation::{Checked, Invalid, Validation};
