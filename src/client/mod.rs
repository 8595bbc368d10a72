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
mod approval;
mod asks;
mod builder;
// The handle's file, as the layout in docs/design.md names it.
#[allow(clippy::module_inception)]
mod client;
mod connect;
mod era;
mod guard;
mod handlers;
mod hints;
mod inbound;
mod life;
mod limits;
mod listen;
mod listing;
mod methods;
mod noise;
mod nudge;
mod offers;
mod origin;
mod request;
mod restart;
mod roots;
mod server_requests;
mod session;
mod subscription;
mod task_status;
mod tasks;
mod tool_cache;
mod tool_changes;
mod tool_ledger;
mod tool_safety;
mod tools;
mod types;
#[cfg(feature = "validate")]
mod validation;
mod wire;

pub(crate) use approval::{approve_hook, ApproveHook};
pub use approval::{Approval, ToolCall};
pub use asks::{
    CreateMessageRequest, CreateMessageResult, ElicitRequest, ElicitResult, SamplingMessage,
};
pub use builder::ClientBuilder;
pub use client::{Client, ClientClose};
pub use era::{
    Era, DEFAULT_HANDSHAKE_TIMEOUT, DEFAULT_PROBE_TIMEOUT, DEFAULT_REQUEST_TIMEOUT,
    LEGACY_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS,
};
pub use handlers::{IntoHandler, ServerRequestHandler, TypedForm, WireForm};
pub use hints::ToolHints;
pub use life::ClientState;
pub use listing::{ListItem, Listing};
pub use offers::{
    CompleteResult, Completion, GetPromptResult, Prompt, PromptArgument, PromptMessage,
    ReadResourceResult, Resource, ResourceTemplate,
};
pub use request::CallOptions;
pub use restart::{RestartInfo, RestartPolicy, RESTARTED};
pub use roots::{ListRootsRequest, Root};
pub use subscription::{ListenFilter, Subscription};
pub use task_status::{TaskStatus, TaskSupport};
pub(crate) use tool_changes::compare as compare_tools;
pub use tool_changes::{ToolChange, ToolChanges};
pub use types::{
    CallToolResult, Content, Extra, Implementation, LoggingLevel, Progress, ResourceContents,
    ServerCapabilities, Tool,
};
#[cfg(feature = "validate")]
pub use validation::{Checked, Invalid, Validation};
