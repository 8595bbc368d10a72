//! What a server offers besides tools, typed: prompts, resources and their
//! templates, and completions. Like every type the client reads, each keeps
//! the members it does not model in `extra`.

use serde::{Deserialize, Serialize};

use super::types::{Content, Extra, ResourceContents};

/// A prompt template the server offers.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use stdio_mcp::client::Prompt;
///
/// let p: Prompt = serde_json::from_value(json!({
///     "name": "review",
///     "arguments": [{"name": "code", "required": true}]
/// })).unwrap();
/// assert!(p.arguments[0].required);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prompt {
    /// The name to get it by.
    pub name: String,
    /// Human-readable name, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The arguments it takes.
    #[serde(default)]
    pub arguments: Vec<PromptArgument>,
    /// Everything else.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One argument of a [`Prompt`].
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use stdio_mcp::client::Prompt;
///
/// let p: Prompt = serde_json::from_value(json!({
///     "name": "review",
///     "arguments": [{"name": "code", "required": true}]
/// })).unwrap();
/// assert!(p.arguments[0].required);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// What it means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether it must be given.
    #[serde(default)]
    pub required: bool,
    /// Everything else.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The result of `prompts/get`.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use stdio_mcp::client::GetPromptResult;
///
/// let r: GetPromptResult = serde_json::from_value(json!({"messages": [
///     {"role": "user", "content": {"type": "text", "text": "Review this"}}
/// ]})).unwrap();
/// assert_eq!(r.messages[0].role, "user");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetPromptResult {
    /// A description of the prompt, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages, in order.
    #[serde(default)]
    pub messages: Vec<PromptMessage>,
    /// Everything else.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One message of a prompt.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use stdio_mcp::client::Prompt;
///
/// let p: Prompt = serde_json::from_value(json!({
///     "name": "review",
///     "arguments": [{"name": "code", "required": true}]
/// })).unwrap();
/// assert!(p.arguments[0].required);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// `user` or `assistant`.
    pub role: String,
    /// What it says.
    pub content: Content,
    /// Everything else.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A resource the server offers.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use stdio_mcp::client::Resource;
///
/// let r: Resource = serde_json::from_value(json!({"uri": "file:///notes.md", "name": "notes", "mimeType": "text/markdown"})).unwrap();
/// assert_eq!(r.mime_type.as_deref(), Some("text/markdown"));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resource {
    /// Its URI.
    pub uri: String,
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// Human-readable name, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type, if given.
    #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Everything else (`size`, `annotations`, …).
    #[serde(flatten)]
    pub extra: Extra,
}

/// A family of resources described by a URI template.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use stdio_mcp::client::ResourceTemplate;
///
/// let t: ResourceTemplate = serde_json::from_value(json!({"uriTemplate": "file:///{path}", "name": "files"})).unwrap();
/// assert_eq!(t.uri_template, "file:///{path}");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceTemplate {
    /// The RFC 6570 URI template.
    #[serde(rename = "uriTemplate")]
    pub uri_template: String,
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// What it describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Everything else.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The result of `resources/read`.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use stdio_mcp::client::ReadResourceResult;
///
/// let r: ReadResourceResult = serde_json::from_value(json!({"contents": [{"uri": "file:///a", "blob": "AAE="}]})).unwrap();
/// assert_eq!(r.contents[0].blob.as_deref(), Some("AAE="));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadResourceResult {
    /// One or more contents.
    #[serde(default)]
    pub contents: Vec<ResourceContents>,
    /// Everything else.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The result of `completion/complete`.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use stdio_mcp::client::CompleteResult;
///
/// let r: CompleteResult = serde_json::from_value(json!({"completion": {"values": ["python", "pytorch"], "hasMore": true}})).unwrap();
/// assert_eq!(r.completion.values.len(), 2);
/// assert!(r.completion.has_more);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompleteResult {
    /// The suggestions.
    pub completion: Completion,
    /// Everything else.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Completion suggestions for one argument.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use stdio_mcp::client::Completion;
///
/// let c: Completion = serde_json::from_value(json!({"values": ["a"], "total": 10})).unwrap();
/// assert_eq!(c.total, Some(10));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    /// Suggested values, best first.
    #[serde(default)]
    pub values: Vec<String>,
    /// How many there are in all, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether there are more than `values` holds.
    #[serde(rename = "hasMore", default)]
    pub has_more: bool,
    /// Everything else.
    #[serde(flatten)]
    pub extra: Extra,
}
