//! What MCP servers send back, typed where the protocol fixes a shape.
//!
//! Every struct keeps the members it does not model in `extra` (flattened), so a
//! field a server adds — or a newer protocol revision defines — is never lost.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Members a type does not model, exactly as the server sent them.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use stdio_mcp::client::Tool;
///
/// let tool: Tool = serde_json::from_value(json!({
///     "name": "echo", "inputSchema": {"type": "object"}, "x-owner": "ops"
/// })).unwrap();
/// assert_eq!(tool.extra["x-owner"], "ops"); // kept, though not modelled
/// ```
pub type Extra = Map<String, Value>;

/// Name and version of an MCP implementation (`serverInfo`, `clientInfo`).
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use stdio_mcp::client::Implementation;
///
/// let info: Implementation = serde_json::from_value(json!({"name": "mcp-server-time", "version": "1.0"})).unwrap();
/// assert_eq!(info.name, "mcp-server-time");
/// assert_eq!(info.title, None);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Implementation {
    /// Machine name, e.g. `mcp-servers/everything`.
    pub name: String,
    /// Version string.
    #[serde(default)]
    pub version: String,
    /// Human-readable name, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Everything else the server sent.
    #[serde(flatten)]
    pub extra: Extra,
}

/// What a server declared it can do (`capabilities` in its `initialize` answer).
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use stdio_mcp::client::ServerCapabilities;
///
/// let caps: ServerCapabilities = serde_json::from_value(json!({"tools": {"listChanged": true}})).unwrap();
/// assert!(caps.tools.is_some());
/// assert!(caps.resources.is_none());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerCapabilities {
    /// Present if the server has tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Value>,
    /// Present if the server has prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<Value>,
    /// Present if the server has resources (`subscribe`, `listChanged` inside).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Value>,
    /// Present if the server sends log messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<Value>,
    /// Present if the server offers argument completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<Value>,
    /// Non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Value>,
    /// Everything else the server declared.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A tool the server offers.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use stdio_mcp::client::Tool;
///
/// let tool: Tool = serde_json::from_value(json!({
///     "name": "add",
///     "description": "Adds two numbers.",
///     "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}}}
/// })).unwrap();
/// assert_eq!(tool.name, "add");
/// assert_eq!(tool.input_schema["type"], "object");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    /// The name to call it by.
    pub name: String,
    /// Human-readable name, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of its arguments.
    #[serde(rename = "inputSchema", default)]
    pub input_schema: Value,
    /// JSON Schema of its structured result, if it has one.
    #[serde(
        rename = "outputSchema",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub output_schema: Option<Value>,
    /// Hints such as `readOnlyHint`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Everything else the server sent.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The result of `tools/call`. A tool that failed reports `is_error: true` here:
/// that is a result, not an `Err`.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use stdio_mcp::client::CallToolResult;
///
/// let failed: CallToolResult = serde_json::from_value(json!({
///     "content": [{"type": "text", "text": "no such city"}],
///     "isError": true
/// })).unwrap();
/// assert!(failed.is_error);
/// assert_eq!(failed.text(), "no such city");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallToolResult {
    /// What the tool returned.
    #[serde(default)]
    pub content: Vec<Content>,
    /// Its structured result, if it declared an output schema.
    #[serde(
        rename = "structuredContent",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub structured_content: Option<Value>,
    /// True when the tool itself reports failure.
    #[serde(rename = "isError", default)]
    pub is_error: bool,
    /// Everything else the server sent.
    #[serde(flatten)]
    pub extra: Extra,
}

impl CallToolResult {
    /// The structured result as `T`: from `structuredContent` when the tool
    /// gave one, else from its text content read as JSON (what tools without
    /// an output schema return).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Protocol`](crate::ErrorKind::Protocol), saying which of
    /// the two it read and why that is no `T`.
    ///
    /// # Examples
    ///
    /// ```
    /// use serde::Deserialize;
    /// use serde_json::json;
    /// use stdio_mcp::client::CallToolResult;
    ///
    /// #[derive(Deserialize)]
    /// struct Weather { celsius: f64 }
    ///
    /// let r: CallToolResult = serde_json::from_value(json!({
    ///     "content": [{"type": "text", "text": "{\"celsius\": 21.5}"}],
    ///     "structuredContent": {"celsius": 21.5}
    /// })).unwrap();
    /// assert_eq!(r.structured::<Weather>()?.celsius, 21.5);
    /// # Ok::<(), stdio_mcp::Error>(())
    /// ```
    pub fn structured<T: DeserializeOwned>(&self) -> Result<T, crate::Error> {
        if let Some(structured) = &self.structured_content {
            return T::deserialize(structured).map_err(|e| {
                crate::Error::Protocol(format!(
                    "the tool's structuredContent is not a {}: {e}",
                    std::any::type_name::<T>()
                ))
            });
        }
        let text = self.text();
        serde_json::from_str(&text).map_err(|e| {
            crate::Error::Protocol(format!(
                "the tool result has no structuredContent, and its text is not a {} in JSON \
                 ({e}): {}",
                std::any::type_name::<T>(),
                excerpt(&text)
            ))
        })
    }

    /// This result, or the tool's failure as an error: an `isError` result
    /// becomes an [`Error::Tool`](crate::Error::Tool) with its text (kind
    /// [`ErrorKind::Tool`](crate::ErrorKind::Tool)), for callers that want
    /// `?` to stop at a failed tool.
    ///
    /// # Errors
    ///
    /// [`Error::Tool`](crate::Error::Tool) when `is_error` is set.
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::json;
    /// use stdio_mcp::client::CallToolResult;
    /// use stdio_mcp::ErrorKind;
    ///
    /// let failed: CallToolResult = serde_json::from_value(json!({
    ///     "content": [{"type": "text", "text": "no such city"}], "isError": true
    /// })).unwrap();
    /// let e = failed.into_result().unwrap_err();
    /// assert_eq!(e.kind(), ErrorKind::Tool);
    /// assert_eq!(e.to_string(), "MCP tool reported an error: no such city");
    /// ```
    pub fn into_result(self) -> Result<CallToolResult, crate::Error> {
        if self.is_error {
            return Err(crate::Error::Tool(self.text()));
        }
        Ok(self)
    }

    /// The text of every `text` content, joined with newlines.
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::json;
    /// use stdio_mcp::client::CallToolResult;
    ///
    /// let r: CallToolResult = serde_json::from_value(json!({"content": [
    ///     {"type": "text", "text": "one"},
    ///     {"type": "image", "data": "iVBORw0=", "mimeType": "image/png"},
    ///     {"type": "text", "text": "two"}
    /// ]})).unwrap();
    /// assert_eq!(r.text(), "one\ntwo");
    /// ```
    #[must_use]
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|c| match c {
                Content::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// One piece of content in a tool result or a prompt message.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use stdio_mcp::client::Content;
///
/// let text: Content = serde_json::from_value(json!({"type": "text", "text": "hi"})).unwrap();
/// assert!(matches!(text, Content::Text { ref text, .. } if text == "hi"));
/// // A type this crate does not know is kept whole.
/// let new: Content = serde_json::from_value(json!({"type": "hologram", "frames": 3})).unwrap();
/// assert!(matches!(new, Content::Other(_)));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum Content {
    /// Plain text.
    #[serde(rename = "text")]
    Text {
        /// The text.
        text: String,
        /// Everything else (e.g. `annotations`).
        #[serde(flatten)]
        extra: Extra,
    },
    /// An image, base64-encoded.
    #[serde(rename = "image")]
    Image {
        /// Base64 data.
        data: String,
        /// E.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// Everything else.
        #[serde(flatten)]
        extra: Extra,
    },
    /// Audio, base64-encoded.
    #[serde(rename = "audio")]
    Audio {
        /// Base64 data.
        data: String,
        /// E.g. `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// Everything else.
        #[serde(flatten)]
        extra: Extra,
    },
    /// A link to a resource the client may read.
    #[serde(rename = "resource_link")]
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// Its name.
        #[serde(default)]
        name: String,
        /// Everything else (`description`, `mimeType`, …).
        #[serde(flatten)]
        extra: Extra,
    },
    /// A resource embedded in the result.
    #[serde(rename = "resource")]
    Resource {
        /// The resource's contents.
        resource: ResourceContents,
        /// Everything else.
        #[serde(flatten)]
        extra: Extra,
    },
    /// A content type this crate does not know, kept whole.
    #[serde(untagged)]
    Other(Value),
}

/// The contents of a resource: text or base64 `blob`.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use stdio_mcp::client::ResourceContents;
///
/// let c: ResourceContents = serde_json::from_value(json!({"uri": "file:///a.txt", "mimeType": "text/plain", "text": "hello"})).unwrap();
/// assert_eq!(c.text.as_deref(), Some("hello"));
/// assert_eq!(c.blob, None);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// Its MIME type, if given.
    #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Text contents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Binary contents, base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
    /// Everything else.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One `notifications/progress` for a call made with
/// [`Client::call_tool_with_progress`](crate::client::Client::call_tool_with_progress).
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use stdio_mcp::client::Progress;
///
/// let p: Progress = serde_json::from_value(json!({"progressToken": 1, "progress": 2.0, "total": 4.0, "message": "half"})).unwrap();
/// assert_eq!((p.progress, p.total), (2.0, Some(4.0)));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// How far along; grows with each notification.
    pub progress: f64,
    /// The total, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// A message describing the step, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Everything else (the `progressToken` among it).
    #[serde(flatten)]
    pub extra: Extra,
}

/// Severity for [`Client::set_logging_level`](crate::client::Client::set_logging_level), as RFC 5424 names them.
///
/// # Examples
///
/// ```
/// use stdio_mcp::client::LoggingLevel;
///
/// assert_eq!(serde_json::to_value(LoggingLevel::Warning).unwrap(), "warning");
/// assert!(LoggingLevel::Error != LoggingLevel::Debug);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum LoggingLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

/// A text as an error quotes it: cut after 200 characters.
fn excerpt(text: &str) -> String {
    match text.char_indices().nth(200) {
        Some((at, _)) => format!("{:?}…", &text[..at]),
        None => format!("{text:?}"),
    }
}
