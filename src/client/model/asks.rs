//! Typed views of what a server asks the client (`elicitation/create`,
//! `sampling/createMessage`) and builders of the answers, so that a handler
//! need not read or write the spec's JSON by hand: a handler takes them
//! directly (`IntoHandler`'s typed form), or converts in the wire form.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::error::RpcError;
use crate::message::ServerRequest;

use super::types::Extra;

/// The params of a request as `T`, or the `-32602` a server should get for
/// params that are not what the method takes.
fn params<T: DeserializeOwned>(request: &ServerRequest) -> Result<T, RpcError> {
    let params = request.params.clone().unwrap_or(Value::Null);
    serde_json::from_value(params).map_err(|e| RpcError {
        code: -32602,
        message: format!("invalid params of {}: {e}", request.method),
        data: None,
    })
}

/// What an `elicitation/create` asks of the user: a form to fill in, or a
/// URL to open (with the user's consent).
///
/// # Examples
///
/// ```no_run
/// # futures::executor::block_on(async {
/// use serde_json::json;
/// use stdio_mcp::client::{Client, ElicitRequest, ElicitResult};
///
/// let client = Client::builder(["my-mcp-server"])
///     .on_elicitation(|request: ElicitRequest| async move {
///         Ok::<_, stdio_mcp::RpcError>(match request {
///             ElicitRequest::Form { message, .. } => {
///                 println!("the server asks: {message}");
///                 ElicitResult::accept(json!({"name": "octocat"}))
///             }
///             ElicitRequest::Url { .. } => ElicitResult::decline(),
///             _ => ElicitResult::cancel(),
///         })
///     })
///     .connect()
///     .await?;
/// # Ok::<(), stdio_mcp::Error>(()) });
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ElicitRequest {
    /// Form mode (also a request without `mode`): data for `requested_schema`.
    Form {
        /// Why the server asks.
        message: String,
        /// A flat JSON Schema of the answer's `content`.
        requested_schema: Value,
    },
    /// URL mode: the user is to open `url` out of band.
    Url {
        /// Why the server asks.
        message: String,
        /// Where to send the user.
        url: String,
        /// The server's id of this elicitation (named again in
        /// `notifications/elicitation/complete`).
        elicitation_id: String,
    },
}

impl ElicitRequest {
    /// Reads an `elicitation/create` request.
    ///
    /// # Errors
    ///
    /// A `-32602` [`RpcError`], ready to return from the handler, when the
    /// params are not an elicitation.
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::json;
    /// use stdio_mcp::client::ElicitRequest;
    /// use stdio_mcp::ServerRequest;
    ///
    /// let request = ServerRequest {
    ///     id: json!(1),
    ///     method: "elicitation/create".into(),
    ///     params: Some(json!({"message": "Your name?", "requestedSchema": {"type": "object"}})),
    /// };
    /// let asked = ElicitRequest::from_request(&request).unwrap();
    /// assert_eq!(asked.message(), "Your name?");
    /// assert!(matches!(asked, ElicitRequest::Form { .. }));
    /// ```
    pub fn from_request(request: &ServerRequest) -> Result<Self, RpcError> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Asked {
            mode: Option<String>,
            message: String,
            requested_schema: Option<Value>,
            url: Option<String>,
            elicitation_id: Option<String>,
        }
        let asked: Asked = params(request)?;
        let missing = |field: &str| RpcError {
            code: -32602,
            message: format!("invalid params of elicitation/create: no {field}"),
            data: None,
        };
        match asked.mode.as_deref() {
            None | Some("form") => Ok(ElicitRequest::Form {
                message: asked.message,
                requested_schema: asked
                    .requested_schema
                    .ok_or_else(|| missing("requestedSchema"))?,
            }),
            Some("url") => Ok(ElicitRequest::Url {
                message: asked.message,
                url: asked.url.ok_or_else(|| missing("url"))?,
                elicitation_id: asked
                    .elicitation_id
                    .ok_or_else(|| missing("elicitationId"))?,
            }),
            Some(other) => Err(RpcError {
                code: -32602,
                message: format!("elicitation mode {other:?} is not supported"),
                data: None,
            }),
        }
    }

    /// Why the server asks.
    ///
    /// # Examples
    ///
    /// ```
    /// use stdio_mcp::client::ElicitRequest;
    ///
    /// let asked = ElicitRequest::Url {
    ///     message: "Sign in to continue".into(),
    ///     url: "https://example.com/login".into(),
    ///     elicitation_id: "e1".into(),
    /// };
    /// assert_eq!(asked.message(), "Sign in to continue");
    /// ```
    #[must_use]
    pub fn message(&self) -> &str {
        match self {
            ElicitRequest::Form { message, .. } | ElicitRequest::Url { message, .. } => message,
        }
    }
}

/// The answer to an `elicitation/create`: the user accepted (with the form's
/// content, or consent to open the URL), declined, or dismissed it.
/// `.into()` makes it the handler's `Value`.
///
/// ```
/// use serde_json::{json, Value};
/// use stdio_mcp::client::ElicitResult;
///
/// let accepted: Value = ElicitResult::accept(json!({"name": "octocat"})).into();
/// assert_eq!(accepted, json!({"action": "accept", "content": {"name": "octocat"}}));
/// let declined: Value = ElicitResult::decline().into();
/// assert_eq!(declined, json!({"action": "decline"}));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ElicitResult {
    action: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<Value>,
}

impl ElicitResult {
    /// The user submitted the form: `content` (anything that serializes to a
    /// JSON object matching the requested schema).
    ///
    /// # Examples
    ///
    /// ```
    /// use serde::Serialize;
    /// use stdio_mcp::client::ElicitResult;
    ///
    /// #[derive(Serialize)]
    /// struct Contact { name: String, age: u32 }
    ///
    /// let answer = ElicitResult::accept(Contact { name: "Ada".into(), age: 36 });
    /// assert_eq!(serde_json::to_value(answer).unwrap()["content"]["age"], 36);
    /// ```
    pub fn accept(content: impl Serialize) -> Self {
        ElicitResult {
            action: "accept",
            content: Some(serde_json::to_value(content).unwrap_or(Value::Null)),
        }
    }

    /// The user consented to open the URL of a URL-mode elicitation (no content).
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::{json, Value};
    /// use stdio_mcp::client::ElicitResult;
    ///
    /// let consent: Value = ElicitResult::accept_url().into();
    /// assert_eq!(consent, json!({"action": "accept"}));
    /// ```
    #[must_use]
    pub fn accept_url() -> Self {
        ElicitResult {
            action: "accept",
            content: None,
        }
    }

    /// The user said no.
    ///
    /// # Examples
    ///
    /// ```
    /// let no = stdio_mcp::client::ElicitResult::decline();
    /// assert_eq!(serde_json::to_value(no).unwrap()["action"], "decline");
    /// ```
    #[must_use]
    pub fn decline() -> Self {
        ElicitResult {
            action: "decline",
            content: None,
        }
    }

    /// The user dismissed the question without choosing.
    ///
    /// # Examples
    ///
    /// ```
    /// let dismissed = stdio_mcp::client::ElicitResult::cancel();
    /// assert_eq!(serde_json::to_value(dismissed).unwrap()["action"], "cancel");
    /// ```
    #[must_use]
    pub fn cancel() -> Self {
        ElicitResult {
            action: "cancel",
            content: None,
        }
    }
}

impl From<ElicitResult> for Value {
    fn from(result: ElicitResult) -> Value {
        let mut value = json!({ "action": result.action });
        if let Some(content) = result.content {
            value["content"] = content;
        }
        value
    }
}

/// One message of a sampling conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// `user` or `assistant`.
    pub role: String,
    /// Its content: a text, image or audio block (or, with tools, a list of
    /// blocks), as the server sent it.
    pub content: Value,
}

/// What a `sampling/createMessage` asks the client's model for.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use stdio_mcp::client::CreateMessageRequest;
/// use stdio_mcp::ServerRequest;
///
/// let request = ServerRequest {
///     id: json!(7),
///     method: "sampling/createMessage".into(),
///     params: Some(json!({
///         "messages": [{"role": "user", "content": {"type": "text", "text": "Hi"}}],
///         "maxTokens": 100,
///         "systemPrompt": "Be brief."
///     })),
/// };
/// let asked = CreateMessageRequest::from_request(&request).unwrap();
/// assert_eq!(asked.max_tokens, 100);
/// assert_eq!(asked.system_prompt.as_deref(), Some("Be brief."));
/// assert_eq!(asked.messages[0].content["text"], "Hi");
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageRequest {
    /// The conversation so far.
    pub messages: Vec<SamplingMessage>,
    /// The most tokens to sample.
    pub max_tokens: u64,
    /// The system prompt the server asks for.
    #[serde(default)]
    pub system_prompt: Option<String>,
    /// Sampling temperature.
    #[serde(default)]
    pub temperature: Option<f64>,
    /// Sequences that end the sample.
    #[serde(default)]
    pub stop_sequences: Option<Vec<String>>,
    /// Hints for choosing a model.
    #[serde(default)]
    pub model_preferences: Option<Value>,
    /// Which servers' context to include (`none`, `thisServer`, `allServers`).
    #[serde(default)]
    pub include_context: Option<String>,
    /// Tools the model may call (when the client declared `sampling.tools`).
    #[serde(default)]
    pub tools: Option<Vec<Value>>,
    /// How the model is to choose among `tools`.
    #[serde(default)]
    pub tool_choice: Option<Value>,
    /// Everything else the server sent (`metadata`, `_meta`, …).
    #[serde(flatten)]
    pub extra: Extra,
}

impl CreateMessageRequest {
    /// Reads a `sampling/createMessage` request.
    ///
    /// # Errors
    ///
    /// A `-32602` [`RpcError`], ready to return from the handler, when the
    /// params are not a sampling request.
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::json;
    /// use stdio_mcp::client::CreateMessageRequest;
    /// use stdio_mcp::ServerRequest;
    ///
    /// let bad = ServerRequest { id: json!(1), method: "sampling/createMessage".into(), params: None };
    /// assert_eq!(CreateMessageRequest::from_request(&bad).unwrap_err().code, -32602);
    /// ```
    pub fn from_request(request: &ServerRequest) -> Result<Self, RpcError> {
        params(request)
    }
}

/// The answer to a `sampling/createMessage`: the model's message.
/// `.into()` makes it the handler's `Value`.
///
/// ```
/// use serde_json::{json, Value};
/// use stdio_mcp::client::CreateMessageResult;
///
/// let answer: Value = CreateMessageResult::text("my-model-1", "Hello!").into();
/// assert_eq!(answer, json!({
///     "role": "assistant",
///     "content": {"type": "text", "text": "Hello!"},
///     "model": "my-model-1",
///     "stopReason": "endTurn"
/// }));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageResult {
    /// `assistant`.
    pub role: String,
    /// The sampled content block(s).
    pub content: Value,
    /// The model that sampled it.
    pub model: String,
    /// Why sampling stopped: `endTurn`, `stopSequence`, `maxTokens`, `toolUse`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

impl CreateMessageResult {
    /// A text the model `model` wrote, ending its turn.
    ///
    /// # Examples
    ///
    /// ```
    /// let answer = stdio_mcp::client::CreateMessageResult::text("m", "Hi");
    /// assert_eq!(answer.content["text"], "Hi");
    /// ```
    pub fn text(model: impl Into<String>, text: impl Into<String>) -> Self {
        Self::content(model, json!({ "type": "text", "text": text.into() }))
    }

    /// An image the model `model` made: `data` in base64, of `mime_type`.
    ///
    /// # Examples
    ///
    /// ```
    /// let answer = stdio_mcp::client::CreateMessageResult::image("m", "iVBORw0KGgo=", "image/png");
    /// assert_eq!(answer.content["type"], "image");
    /// ```
    pub fn image(
        model: impl Into<String>,
        data: impl Into<String>,
        mime_type: impl Into<String>,
    ) -> Self {
        Self::content(model, media("image", data.into(), mime_type.into()))
    }

    /// Audio the model `model` made: `data` in base64, of `mime_type`.
    ///
    /// # Examples
    ///
    /// ```
    /// let answer = stdio_mcp::client::CreateMessageResult::audio("m", "UklGRg==", "audio/wav");
    /// assert_eq!(answer.content["mimeType"], "audio/wav");
    /// ```
    pub fn audio(
        model: impl Into<String>,
        data: impl Into<String>,
        mime_type: impl Into<String>,
    ) -> Self {
        Self::content(model, media("audio", data.into(), mime_type.into()))
    }

    /// The model `model` asks to use tool `name` with `input` (the call's id
    /// `id`), stopping for it (`toolUse`): for a server that offered tools
    /// ([`ClientBuilder::sampling_tools`](crate::client::ClientBuilder::sampling_tools)).
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::json;
    ///
    /// let answer = stdio_mcp::client::CreateMessageResult::tool_use("m", "call-1", "get_weather", json!({"city": "Oslo"}));
    /// assert_eq!(answer.stop_reason.as_deref(), Some("toolUse"));
    /// assert_eq!(answer.content["name"], "get_weather");
    /// ```
    pub fn tool_use(
        model: impl Into<String>,
        id: impl Into<String>,
        name: impl Into<String>,
        input: Value,
    ) -> Self {
        let mut answer = Self::content(
            model,
            json!({ "type": "tool_use", "id": id.into(), "name": name.into(), "input": input }),
        );
        answer.stop_reason = Some("toolUse".into());
        answer
    }

    /// Any content block (or an array of them) the model `model` made,
    /// ending its turn.
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::json;
    ///
    /// let both = json!([{"type": "text", "text": "Here:"}, {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]);
    /// let answer = stdio_mcp::client::CreateMessageResult::content("m", both);
    /// assert!(answer.content.is_array());
    /// ```
    pub fn content(model: impl Into<String>, content: Value) -> Self {
        CreateMessageResult {
            role: "assistant".into(),
            content,
            model: model.into(),
            stop_reason: Some("endTurn".into()),
        }
    }

    /// The same answer, stopped for `reason` (`endTurn`, `stopSequence`,
    /// `maxTokens`, `toolUse`).
    ///
    /// # Examples
    ///
    /// ```
    /// let answer = stdio_mcp::client::CreateMessageResult::text("m", "…").stop_reason("maxTokens");
    /// assert_eq!(answer.stop_reason.as_deref(), Some("maxTokens"));
    /// ```
    #[must_use]
    pub fn stop_reason(mut self, reason: impl Into<String>) -> Self {
        self.stop_reason = Some(reason.into());
        self
    }
}

/// A content block of base64 `data` of `mime_type`: an image or audio.
fn media(kind: &str, data: String, mime_type: String) -> Value {
    json!({ "type": kind, "data": data, "mimeType": mime_type })
}

impl From<CreateMessageResult> for Value {
    fn from(result: CreateMessageResult) -> Value {
        serde_json::to_value(result).unwrap_or(Value::Null)
    }
}

/// Completes an accepted elicitation `answer` with the `default` of each
/// property of `schema` that its content leaves out (SEP-1034). Anything
/// else (a decline, a URL-mode answer, a schema without defaults) is left
/// as it is.
pub(crate) fn fill_defaults(schema: &Value, answer: &mut Value) {
    if answer.get("action").and_then(Value::as_str) != Some("accept") {
        return;
    }
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    let defaults = properties
        .iter()
        .filter_map(|(name, property)| Some((name, property.get("default")?)));
    for (name, default) in defaults {
        let content = &mut answer["content"];
        if content.is_null() {
            *content = json!({});
        }
        if let Some(content) = content.as_object_mut() {
            content
                .entry(name.clone())
                .or_insert_with(|| default.clone());
        }
    }
}
