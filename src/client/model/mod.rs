//! The MCP shapes a client's user reads and writes — tools and their
//! results, content, prompts and resources, what a server asks and how it is
//! answered, tasks' status, pages of a listing, roots, what a host is told
//! about a tool and its changes — apart from the machinery in `client/`
//! that moves them. Their public paths are `stdio_mcp::client::*`.

pub(crate) mod approval;
pub(crate) mod asks;
pub(crate) mod hints;
pub(crate) mod listing;
pub(crate) mod offers;
pub(crate) mod roots;
pub(crate) mod task_status;
pub(crate) mod tool_changes;
pub(crate) mod types;
