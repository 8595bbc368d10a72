//! JSON-RPC messages: the lines we write, and what a line read from the server is.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, RpcError};

/// A notification the server sent of its own accord (a line with a `method` and no `id`).
///
/// Delivered to [`TransportBuilder::on_notification`](crate::TransportBuilder::on_notification) the moment it is read.
///
/// ```
/// use serde_json::json;
/// use stdio_mcp::Notification;
///
/// let n = Notification { method: "notifications/message".into(), params: Some(json!({"level": "info"})) };
/// assert_eq!(n.params.unwrap()["level"], "info");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The notification's method, e.g. `notifications/progress`.
    pub method: String,
    /// Its `params`, or `None` when the key was absent.
    pub params: Option<Value>,
}

/// A request the server sent to this client (a line with an `id` and a `method`
/// but neither `result` nor `error`).
///
/// Delivered to [`TransportBuilder::on_request`](crate::TransportBuilder::on_request); answer it there
/// or later with [`Transport::respond`](crate::Transport::respond), passing `id` back.
///
/// # Examples
///
/// ```no_run
/// use serde_json::json;
///
/// let t = stdio_mcp::Transport::builder(["my-mcp-server"])
///     .on_request(|request| {
///         println!("server asks {} (id {})", request.method, request.id);
///         (request.method == "ping").then(|| Ok(json!({})))
///     })
///     .spawn()?;
/// # Ok::<(), stdio_mcp::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ServerRequest {
    /// The id exactly as the server sent it (a number or a string).
    pub id: Value,
    /// The request's method, e.g. `roots/list` or `ping`.
    pub method: String,
    /// Its `params`, or `None` when the key was absent.
    pub params: Option<Value>,
}

/// A stdout line that was not a usable JSON-RPC message, handed to
/// [`TransportBuilder::on_discarded`](crate::TransportBuilder::on_discarded).
///
/// Such lines are never fatal: a server printing a banner or a stray debug line
/// keeps working.
///
/// # Examples
///
/// ```no_run
/// let t = stdio_mcp::Transport::builder(["my-mcp-server"])
///     .on_discarded(|d| eprintln!("ignored ({}): {}", d.reason, d.line))
///     .spawn()?;
/// # Ok::<(), stdio_mcp::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct DiscardedLine {
    /// Why it was discarded, e.g. `"not valid JSON"` or `"response to an unknown or cancelled id"`.
    pub reason: &'static str,
    /// The line, decoded lossily and cut to its first 1 KiB.
    pub line: String,
}

/// The reason of a discarded line that is a response nobody waits for (one
/// that came too late, or a server's mistake): JSON-RPC, unlike other noise.
pub(crate) const UNKNOWN_ID: &str = "response to an unknown or cancelled id";

/// How much of a discarded line is kept for the handler.
const DISCARDED_EXCERPT: usize = 1024;

impl DiscardedLine {
    pub(crate) fn new(reason: &'static str, line: &[u8]) -> Self {
        let excerpt = &line[..line.len().min(DISCARDED_EXCERPT)];
        DiscardedLine {
            reason,
            line: String::from_utf8_lossy(excerpt).into_owned(),
        }
    }
}

// ----- outgoing -----

#[derive(Serialize)]
struct OutNotification<'a> {
    jsonrpc: &'static str,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a Value>,
}

#[derive(Serialize)]
struct OutResponse<'a> {
    jsonrpc: &'static str,
    id: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<OutError<'a>>,
}

#[derive(Serialize)]
struct OutError<'a> {
    code: i64,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<&'a Value>,
}

/// Appends one compact JSON line. Compact serde_json output never contains a raw
/// newline (they are escaped inside strings), so the line cannot be split.
fn push_line<T: Serialize>(out: &mut Vec<u8>, message: &T) {
    serde_json::to_writer(&mut *out, message).expect("a JSON value always serializes");
    out.push(b'\n');
}

pub(crate) fn push_request(out: &mut Vec<u8>, id: u64, method: &str, params: Option<&Value>) {
    // The fixed parts are written as they are: escaping them byte by byte was
    // a third of the caller's cost of a call. What may need escaping goes
    // through serde_json.
    let json = "a JSON value always serializes";
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    serde_json::to_writer(&mut *out, &id).expect(json);
    out.extend_from_slice(br#","method":"#);
    serde_json::to_writer(&mut *out, method).expect(json);
    if let Some(params) = params {
        out.extend_from_slice(br#","params":"#);
        serde_json::to_writer(&mut *out, params).expect(json);
    }
    out.extend_from_slice(b"}\n");
}

/// A request whose params (an object without `_meta`, or none) get a `_meta`
/// written from `meta`: the members of that object, already serialized
/// (`"key":value,...`). Saves building the same `_meta` for every request.
pub(crate) fn push_request_with_meta(
    out: &mut Vec<u8>,
    id: u64,
    method: &str,
    params: Option<&Map<String, Value>>,
    meta: &str,
) {
    let json = "a JSON value always serializes";
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    serde_json::to_writer(&mut *out, &id).expect(json);
    out.extend_from_slice(br#","method":"#);
    serde_json::to_writer(&mut *out, method).expect(json);
    out.extend_from_slice(br#","params":"#);
    match params {
        Some(params) if !params.is_empty() => {
            serde_json::to_writer(&mut *out, params).expect(json);
            // Reopen the object: its closing brace comes after _meta.
            out.pop();
            out.extend_from_slice(br#","_meta":{"#);
        }
        _ => out.extend_from_slice(br#"{"_meta":{"#),
    }
    out.extend_from_slice(meta.as_bytes());
    out.extend_from_slice(b"}}}\n");
}

pub(crate) fn push_notification(out: &mut Vec<u8>, method: &str, params: Option<&Value>) {
    let message = OutNotification {
        jsonrpc: "2.0",
        method,
        params,
    };
    push_line(out, &message);
}

pub(crate) fn push_response(out: &mut Vec<u8>, id: &Value, outcome: &Result<Value, RpcError>) {
    let message = match outcome {
        Ok(result) => OutResponse {
            jsonrpc: "2.0",
            id,
            result: Some(result),
            error: None,
        },
        Err(e) => OutResponse {
            jsonrpc: "2.0",
            id,
            result: None,
            error: Some(OutError {
                code: e.code,
                message: &e.message,
                data: e.data.as_ref(),
            }),
        },
    };
    push_line(out, &message);
}

/// `notifications/cancelled` for request `id`, with a reason when there is one.
pub(crate) fn push_cancel(out: &mut Vec<u8>, id: u64, reason: Option<&str>) {
    let params = match reason {
        Some(reason) => serde_json::json!({ "requestId": id, "reason": reason }),
        None => serde_json::json!({ "requestId": id }),
    };
    push_notification(out, "notifications/cancelled", Some(&params));
}

// ----- incoming -----

/// What one JSON value read from the server's stdout turned out to be.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// An answer to request `id`, already turned into the request's outcome.
    Response {
        id: Option<u64>,
        outcome: Result<Value, Error>,
    },
    Notification(Notification),
    Request(ServerRequest),
    /// Not a JSON-RPC message we can use; the text says why.
    Invalid(&'static str),
}

/// The members of a message we look at. `Some(Value::Null)` is a key present with
/// `null`, `None` an absent key: JSON-RPC gives the two different meanings.
#[derive(Deserialize)]
struct RawMessage {
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    method: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    params: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    result: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    error: Option<Value>,
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Parses one line and hands each message it holds to `each` (a JSON array holds
/// several). `Err` says why the line as a whole is unusable.
pub(crate) fn parse_line(line: &[u8], mut each: impl FnMut(Incoming)) -> Result<(), &'static str> {
    // One check of the whole line; parsing from `str` then skips checking each
    // string again (a third of the parse time for a short response).
    let Ok(line) = std::str::from_utf8(line) else {
        return Err("not valid UTF-8");
    };
    let first = line.bytes().find(|b| !b.is_ascii_whitespace());
    match first {
        None => Err("empty line"),
        Some(b'{') => match serde_json::from_str::<RawMessage>(line) {
            Ok(raw) => {
                each(classify(raw));
                Ok(())
            }
            Err(_) => Err("not valid JSON"),
        },
        Some(b'[') => match serde_json::from_str::<Vec<Value>>(line) {
            Ok(items) if items.is_empty() => Err("empty batch"),
            Ok(items) => {
                for item in items {
                    each(match RawMessage::deserialize(item) {
                        Ok(raw) => classify(raw),
                        Err(_) => Incoming::Invalid("batch element is not a JSON-RPC message"),
                    });
                }
                Ok(())
            }
            Err(_) => Err("not valid JSON"),
        },
        Some(_) => Err(match serde_json::from_str::<Value>(line) {
            Ok(_) => "JSON value that is not a JSON-RPC message",
            Err(_) => "not valid JSON",
        }),
    }
}

fn classify(raw: RawMessage) -> Incoming {
    let RawMessage {
        id,
        method,
        params,
        result,
        error,
    } = raw;
    let answers = result.is_some() || error.is_some();
    match (id, method) {
        (None, Some(Value::String(method))) if !answers => {
            Incoming::Notification(Notification { method, params })
        }
        (Some(id), Some(Value::String(method))) if !answers && !id.is_null() => {
            Incoming::Request(ServerRequest { id, method, params })
        }
        (Some(id), _) => Incoming::Response {
            id: request_id(&id),
            outcome: outcome(result, error),
        },
        (None, _) => Incoming::Invalid("message with neither an id nor a method"),
    }
}

/// Our ids are integers; a server may echo one back as its decimal string.
fn request_id(id: &Value) -> Option<u64> {
    match id {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse::<u64>().ok().filter(|n| n.to_string() == *s),
        _ => None,
    }
}

fn outcome(result: Option<Value>, error: Option<Value>) -> Result<Value, Error> {
    match (result, error) {
        (_, Some(error)) if !error.is_null() => Err(error_outcome(error)),
        // `"error": null` beside a result is a success, as JSON-RPC 1.0 wrote it.
        (Some(result), _) => Ok(result),
        (None, Some(_)) => Err(Error::InvalidResponse(
            "a null error and no result".to_owned(),
        )),
        (None, None) => Err(Error::InvalidResponse(
            "neither a result nor an error".to_owned(),
        )),
    }
}

/// A JSON-RPC error object becomes `Error::Rpc`; anything else the server put
/// under `error` becomes `Error::ErrorResponse` with its text.
fn error_outcome(error: Value) -> Error {
    if let Value::Object(map) = &error {
        if let Some(code) = map.get("code").and_then(Value::as_i64) {
            let message = match map.get("message") {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => String::new(),
            };
            return Error::Rpc(RpcError {
                code,
                message,
                data: map.get("data").cloned(),
            });
        }
    }
    Error::ErrorResponse(match error {
        Value::String(s) => s,
        other => other.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{push_request, push_request_with_meta};

    #[test]
    fn a_request_line_is_one_line_of_the_json_it_stands_for() {
        let odd = "we\"ird\nméthod\u{1}";
        let cases = [
            (
                7,
                "ping",
                None,
                json!({ "jsonrpc": "2.0", "id": 7, "method": "ping" }),
            ),
            (
                u64::MAX,
                odd,
                Some(json!({ "a": [1, "x\ny"] })),
                json!({ "jsonrpc": "2.0", "id": u64::MAX, "method": odd, "params": { "a": [1, "x\ny"] } }),
            ),
        ];
        for (id, method, params, expected) in cases {
            let mut out = b"before\n".to_vec();
            push_request(&mut out, id, method, params.as_ref());
            let line = &out[b"before\n".len()..];
            assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
            assert_eq!(line.last(), Some(&b'\n'));
            let parsed: serde_json::Value = serde_json::from_slice(line).unwrap();
            assert_eq!(parsed, expected);
        }
    }

    /// The spliced `_meta` gives the same JSON as the params with it merged in.
    #[test]
    fn a_request_with_spliced_meta_is_the_json_with_meta_merged() {
        let meta =
            json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28", "k": { "x": [1] } });
        let members = meta.to_string();
        let members = &members[1..members.len() - 1];
        let cases = [
            (None, json!({ "_meta": meta })),
            (Some(json!({})), json!({ "_meta": meta })),
            (
                Some(json!({ "name": "echo", "arguments": { "s": "a\"}" } })),
                json!({ "name": "echo", "arguments": { "s": "a\"}" }, "_meta": meta }),
            ),
        ];
        for (params, expected) in cases {
            let mut out = Vec::new();
            push_request_with_meta(
                &mut out,
                3,
                "tools/call",
                params.as_ref().and_then(|p| p.as_object()),
                members,
            );
            assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1);
            let line: serde_json::Value = serde_json::from_slice(&out).unwrap();
            assert_eq!(line["params"], expected);
            assert_eq!(line["id"], 3);
        }
    }
}
