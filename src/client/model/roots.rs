//! What a server asks with `roots/list`, typed: the folders it may work in.

use std::path::Path;

use serde::Serialize;
use serde_json::{json, Value};

use crate::error::RpcError;
use crate::message::ServerRequest;

/// A `roots/list` request, typed: it asks only for the list (its `_meta`,
/// if any, is kept).
///
/// # Examples
///
/// ```no_run
/// # futures::executor::block_on(async {
/// use stdio_mcp::client::{Client, ListRootsRequest, Root};
/// use stdio_mcp::RpcError;
///
/// let client = Client::builder(["my-mcp-server"])
///     .on_roots_list(|_: ListRootsRequest| async move {
///         Ok::<_, RpcError>(vec![Root::folder("/home/me/project")])
///     })
///     .connect()
///     .await?;
/// # Ok::<(), stdio_mcp::Error>(()) });
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ListRootsRequest {
    /// The request's `_meta`, if it had one.
    pub meta: Option<Value>,
}

impl ListRootsRequest {
    /// The typed view of a `roots/list` request.
    ///
    /// # Errors
    ///
    /// `-32602` when its params are not an object.
    ///
    /// # Examples
    ///
    /// ```
    /// use stdio_mcp::client::ListRootsRequest;
    /// use stdio_mcp::ServerRequest;
    ///
    /// let request = ServerRequest { id: 1.into(), method: "roots/list".into(), params: None };
    /// assert_eq!(ListRootsRequest::from_request(&request)?.meta, None);
    /// # Ok::<(), stdio_mcp::RpcError>(())
    /// ```
    pub fn from_request(request: &ServerRequest) -> Result<Self, RpcError> {
        match &request.params {
            None | Some(Value::Null) => Ok(ListRootsRequest { meta: None }),
            Some(Value::Object(params)) => Ok(ListRootsRequest {
                meta: params.get("_meta").cloned(),
            }),
            Some(_) => Err(RpcError {
                code: -32602,
                message: "invalid params of roots/list: not an object".into(),
                data: None,
            }),
        }
    }
}

/// A folder the client lets the server work in: a `file://` URI and a name.
///
/// # Examples
///
/// ```
/// use stdio_mcp::client::Root;
///
/// let root = Root::new("file:///srv/data").named("data");
/// assert_eq!(serde_json::to_value(&root)?, serde_json::json!({"uri": "file:///srv/data", "name": "data"}));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Root {
    /// The root's URI (`file://` for a folder).
    pub uri: String,
    /// A name to show for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Root {
    /// A root of this URI.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(stdio_mcp::client::Root::new("file:///srv").uri, "file:///srv");
    /// ```
    pub fn new(uri: impl Into<String>) -> Self {
        Root {
            uri: uri.into(),
            name: None,
        }
    }

    /// A folder as a root: its `file://` URI (absolute, `/` separators),
    /// named after the folder.
    ///
    /// # Examples
    ///
    /// ```
    /// let root = stdio_mcp::client::Root::folder("/home/me/project");
    /// assert_eq!(root.uri, "file:///home/me/project");
    /// assert_eq!(root.name.as_deref(), Some("project"));
    /// ```
    pub fn folder(path: impl AsRef<Path>) -> Self {
        let path = path.as_ref();
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let text = absolute.to_string_lossy().replace('\\', "/");
        let uri = if text.starts_with('/') {
            format!("file://{text}")
        } else {
            format!("file:///{text}")
        };
        Root {
            uri,
            name: path.file_name().map(|n| n.to_string_lossy().into_owned()),
        }
    }

    /// This root with a name.
    ///
    /// # Examples
    ///
    /// ```
    /// let root = stdio_mcp::client::Root::new("file:///srv").named("server data");
    /// assert_eq!(root.name.as_deref(), Some("server data"));
    /// ```
    #[must_use]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// The answer to `roots/list` for these roots.
pub(crate) fn roots_answer(roots: &[Root]) -> Value {
    json!({ "roots": roots })
}
