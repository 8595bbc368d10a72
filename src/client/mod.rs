//! A thin MCP client on top of the [`Transport`](crate::Transport): the handshake, typed results,
//! pagination, progress, and answers to what the server asks.
//!
//! ```no_run
//! # futures::executor::block_on(async {
//! use serde_json::json;
//! use stdio_mcp::client::Client;
//! use stdio_mcp::Transport;
//!
//! let client = Client::connect(Transport::builder(["npx", "-y", "@modelcontextprotocol/server-everything"])).await?;
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
// (life), one call (call), the era's opening (session), restarts (restart),
// then the public client (connected, listen, catalog, a task followed: task)
// and its builder.
mod asks;
mod builder;
mod call;
mod catalog;
mod connect;
mod connected;
mod era;
mod handlers;
mod inbound;
mod life;
mod limits;
mod listen;
mod listing;
mod methods;
mod noise;
mod offers;
mod origin;
mod restart;
mod server_requests;
mod session;
mod subscription;
mod task;
mod task_status;
mod tool_cache;
mod types;
#[cfg(feature = "validate")]
mod validation;
mod wire;

pub use asks::{
    CreateMessageRequest, CreateMessageResult, ElicitRequest, ElicitResult, SamplingMessage,
};
pub use builder::ClientBuilder;
pub use call::CallOptions;
pub use connected::{Client, ClientClose};
pub use era::{
    Era, DEFAULT_HANDSHAKE_TIMEOUT, DEFAULT_PROBE_TIMEOUT, DEFAULT_REQUEST_TIMEOUT,
    LEGACY_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS,
};
pub use handlers::ServerRequestHandler;
pub use life::ClientState;
pub use listing::{ListItem, Listing};
pub use offers::{
    CompleteResult, Completion, GetPromptResult, Prompt, PromptArgument, PromptMessage,
    ReadResourceResult, Resource, ResourceTemplate,
};
pub use restart::{RestartInfo, RestartPolicy, RESTARTED};
pub use subscription::{ListenFilter, Subscription};
pub use task_status::{TaskStatus, TaskSupport};
pub use types::{
    CallToolResult, Content, Extra, Implementation, LoggingLevel, Progress, ResourceContents,
    ServerCapabilities, Tool,
};
#[cfg(feature = "validate")]
pub use validation::{Checked, Invalid, Validation};
