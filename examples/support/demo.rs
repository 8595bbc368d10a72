//! A small, well-behaved MCP server: the demo the quickstart talks to, and the
//! MCP part of the test peer. Std and serde_json only.

use serde_json::{json, Value};

/// Protocol revisions this server speaks, newest first.
const REVISIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Answers an MCP request, or `None` if `method` is not one this demo knows.
/// `notify` writes a notification to the client (used for progress).
pub fn handle(
    method: &str,
    params: &Value,
    notify: &mut dyn FnMut(&str, Value),
) -> Option<Result<Value, (i64, String)>> {
    Some(match method {
        "initialize" => {
            let asked = params["protocolVersion"].as_str().unwrap_or("");
            let agreed = if REVISIONS.contains(&asked) {
                asked
            } else {
                REVISIONS[0]
            };
            Ok(json!({
                "protocolVersion": agreed,
                "capabilities": { "tools": { "listChanged": false } },
                "serverInfo": { "name": "stdio-mcp-demo", "version": env!("CARGO_PKG_VERSION") },
                "instructions": "A demo server: try the echo, add and countdown tools."
            }))
        }
        "ping" => Ok(json!({})),
        "tools/list" => Ok(json!({ "tools": [
            {
                "name": "echo",
                "description": "Returns the message it is given.",
                "inputSchema": { "type": "object", "properties": { "message": { "type": "string" } }, "required": ["message"] }
            },
            {
                "name": "add",
                "description": "Adds two numbers.",
                "inputSchema": { "type": "object", "properties": { "a": { "type": "number" }, "b": { "type": "number" } }, "required": ["a", "b"] }
            },
            {
                "name": "countdown",
                "description": "Counts down from `from`, reporting progress on the way.",
                "inputSchema": { "type": "object", "properties": { "from": { "type": "integer" } } }
            }
        ]})),
        "tools/call" => call_tool(params, notify),
        _ => return None,
    })
}

fn call_tool(params: &Value, notify: &mut dyn FnMut(&str, Value)) -> Result<Value, (i64, String)> {
    let args = &params["arguments"];
    let text = match params["name"].as_str().unwrap_or("") {
        "echo" => format!("Echo: {}", args["message"].as_str().unwrap_or("")),
        "add" => {
            let (a, b) = (args["a"].as_f64(), args["b"].as_f64());
            match (a, b) {
                (Some(a), Some(b)) => format!("{}", a + b),
                _ => return Err((-32602, "add needs numbers a and b".into())),
            }
        }
        "countdown" => {
            let from = args["from"].as_u64().unwrap_or(3);
            if let Some(token) = params["_meta"].get("progressToken") {
                for done in 1..=from {
                    notify(
                        "notifications/progress",
                        json!({ "progressToken": token, "progress": done, "total": from,
                                "message": format!("{} to go", from - done) }),
                    );
                }
            }
            "Liftoff".to_owned()
        }
        other => return Err((-32602, format!("unknown tool: {other}"))),
    };
    Ok(json!({ "content": [ { "type": "text", "text": text } ], "isError": false }))
}

/// The demo server: one JSON-RPC message per line on stdin, answers on stdout.
/// Serves the demo when this program was started with `--serve` (how the
/// examples start themselves as the demo server); false otherwise.
#[allow(dead_code)] // the examples serve it; the test peer has its own loop
pub fn serve_if_asked() -> bool {
    if std::env::args().nth(1).as_deref() != Some("--serve") {
        return false;
    }
    serve();
    true
}

#[allow(dead_code)]
fn serve() {
    use std::io::{BufRead, Write};

    let stdout = std::io::stdout();
    let send = |message: Value| {
        let mut out = stdout.lock();
        let _ = writeln!(out, "{message}");
        let _ = out.flush();
    };
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let (Some(id), Some(method)) = (message.get("id").cloned(), message["method"].as_str())
        else {
            continue; // a notification or a response: nothing to answer
        };
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let mut notify = |method: &str, params: Value| {
            send(json!({ "jsonrpc": "2.0", "method": method, "params": params }))
        };
        let outcome = handle(method, &params, &mut notify)
            .unwrap_or_else(|| Err((-32601, format!("Method not found: {method}"))));
        send(match outcome {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Err((code, message)) => {
                json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
            }
        });
    }
}
