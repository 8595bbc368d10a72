//! `--catalog TAG`: prompts and resources besides the demo's tools, so that
//! a group's merged lists can be checked. Every peer lists `memo://shared`;
//! each also lists `memo://TAG`; reads and prompts say which peer answered.

use serde_json::{json, Value};

/// The capabilities to add to the demo's.
pub fn capabilities() -> Value {
    json!({ "prompts": {}, "resources": {} })
}

pub fn handle(tag: &str, method: &str, params: &Value) -> Option<Result<Value, (i64, String)>> {
    Some(match method {
        "prompts/list" => Ok(json!({ "prompts": [
            { "name": "greet", "description": "Greets someone.",
              "arguments": [{ "name": "who", "required": true }] }
        ] })),
        "prompts/get" if params["name"] == "greet" => {
            let who = params["arguments"]["who"].as_str().unwrap_or("nobody");
            Ok(json!({ "messages": [{ "role": "user",
                "content": { "type": "text", "text": format!("{tag} greets {who}") } }] }))
        }
        "prompts/get" => Err((-32602, format!("no prompt {}", params["name"]))),
        "resources/list" => Ok(json!({ "resources": [
            { "uri": "memo://shared", "name": "shared" },
            { "uri": format!("memo://{tag}"), "name": tag }
        ] })),
        "resources/read" => {
            let uri = params["uri"].as_str().unwrap_or_default();
            Ok(json!({ "contents": [{ "uri": uri, "text": format!("{uri} read from {tag}") }] }))
        }
        _ => return None,
    })
}
