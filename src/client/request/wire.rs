//! The protocol fields a request carries on the wire, and the checks of what
//! comes back: the era's `_meta`, `resultType`, and the decoding of a result.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::Error;
use crate::pending::{PendingRequest, RequestOptions};
use crate::transport::Transport;

use crate::client::subscription::ListenFilter;
use crate::client::telemetry::Operation;

/// What the client adds to every request: its era's fields and its default limit.
#[derive(Debug, Default)]
pub(crate) struct Protocol<'a> {
    /// The client's limit for a call that has none of its own or from the transport.
    pub(crate) default_limit: Option<std::time::Duration>,
    /// The 2026-07-28 protocol fields for `_meta`; `None` in the legacy era.
    pub(crate) fields: Option<&'a Map<String, Value>>,
    /// The same fields (and log level) serialized as the members of `_meta`,
    /// written as they are into requests that carry no `_meta` of their own.
    pub(crate) members: Option<std::borrow::Cow<'a, str>>,
    /// The log level asked for, sent as `io.modelcontextprotocol/logLevel`.
    pub(crate) log_level: Option<Value>,
}

/// The 2026-07-28 extension that lets a tool call become a task.
pub(crate) const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The `_meta` key of the log level a 2026-07-28 request asks for.
pub(crate) const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// Checks the `resultType` of a 2026-07-28 result that must be final
/// (`server/discover`): absent or `complete`; anything else is an error that
/// says what came.
pub(crate) fn complete(method: &str, result: &Value) -> Result<(), Error> {
    match result.get("resultType") {
        None => Ok(()),
        Some(Value::String(kind)) if kind == "complete" => Ok(()),
        Some(Value::String(kind)) if kind == "input_required" => Err(Error::Protocol(format!(
            "the server asked for input to answer {method} (resultType input_required), \
             which that method cannot ask for"
        ))),
        Some(other) => Err(Error::Protocol(format!(
            "the server answered {method} with an unknown resultType {other}"
        ))),
    }
}

/// Whether a 2026-07-28 result asks for input; an error if it is neither that
/// nor complete.
pub(crate) fn input_required(method: &str, result: &Value) -> Result<bool, Error> {
    match result.get("resultType") {
        Some(Value::String(kind)) if kind == "input_required" => Ok(true),
        // A task (the tasks extension): only a tool call may become one.
        Some(Value::String(kind)) if kind == "task" && method == "tools/call" => Ok(false),
        _ => complete(method, result).map(|()| false),
    }
}

pub(crate) fn into_object(meta: Value) -> Result<Map<String, Value>, Error> {
    match meta {
        Value::Object(map) => Ok(map),
        other => Err(Error::Protocol(format!(
            "CallOptions::meta takes a JSON object of _meta keys, not {other}"
        ))),
    }
}

/// Opens `subscriptions/listen` for `filter` on `transport`, with the
/// session's protocol fields; long-lived, so no time limit of the transport's
/// ends it.
pub(crate) fn send_listen(
    transport: &Transport,
    filter: &ListenFilter,
    protocol: &Protocol<'_>,
    operation: Option<&Operation<'_>>,
) -> PendingRequest {
    let mut meta = protocol.fields.cloned().unwrap_or_default();
    if let Some(level) = &protocol.log_level {
        meta.insert(META_LOG_LEVEL.into(), level.clone());
    }
    let mut params = serde_json::json!({ "notifications": filter.to_json(), "_meta": meta });
    if let Some(operation) = operation {
        operation.propagate_into(&mut params);
    }
    transport.send_request_with(
        "subscriptions/listen",
        Some(params),
        RequestOptions::new().timeout(None),
    )
}

/// `params` with the era's protocol fields (and log level) added to its `_meta`
/// where the caller set none of the same name, and the call's own `meta`
/// merged over it.
pub(crate) fn with_meta(
    method: &str,
    params: Option<Value>,
    protocol: Option<&Map<String, Value>>,
    log_level: Option<&Value>,
    meta: Option<&Map<String, Value>>,
) -> Result<Option<Value>, Error> {
    if protocol.is_none() && meta.is_none() {
        return Ok(params);
    }
    let mut params = match params.unwrap_or_else(|| Value::Object(Map::new())) {
        Value::Object(map) => map,
        other => {
            return Err(Error::Protocol(format!(
                "the params of {method} must be a JSON object to carry _meta, not {other}"
            )))
        }
    };
    let target = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(target) = target else {
        return Err(Error::Protocol(format!(
            "the _meta of {method}'s params must be a JSON object"
        )));
    };
    for (key, value) in protocol.into_iter().flatten() {
        if !target.contains_key(key) {
            target.insert(key.clone(), value.clone());
        }
    }
    if let Some(level) = log_level {
        target
            .entry(META_LOG_LEVEL)
            .or_insert_with(|| level.clone());
    }
    for (key, value) in meta.into_iter().flatten() {
        target.insert(key.clone(), value.clone());
    }
    Ok(Some(Value::Object(params)))
}

/// Reads a result as the type the protocol says it has.
pub(crate) fn decode<T: DeserializeOwned>(method: &str, value: Value) -> Result<T, Error> {
    serde_json::from_value(value).map_err(|e| {
        Error::Protocol(format!(
            "the {method} result does not fit the protocol: {e}"
        ))
    })
}

/// MissingRequiredClientCapability (2026-07-28): the server will not serve
/// this request to a client that does not declare what `data` names.
const MISSING_CAPABILITY: i64 = -32021;

/// A missing-capability error made to say what the server requires.
pub(crate) fn explain_missing_capability(error: Error) -> Error {
    match error {
        Error::Rpc(mut rpc) if rpc.code == MISSING_CAPABILITY => {
            let required = rpc
                .data
                .as_ref()
                .and_then(|d| d.get("requiredCapabilities"))
                .map_or_else(|| "(it did not say which)".to_owned(), Value::to_string);
            rpc.message = format!(
                "{} (the server requires client capabilities this client does not declare: {required})",
                rpc.message
            );
            Error::Rpc(rpc)
        }
        other => other,
    }
}
