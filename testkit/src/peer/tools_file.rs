//! `--tools-file PATH`: the peer's tools are what PATH holds (a JSON array
//! of definitions), read again at each listing, so that a test can change
//! them while the peer runs or between runs. A call to one of them answers
//! with its name and arguments; with an argument `write: PATH` it first
//! writes PATH, and reports the OS's refusal as the tool's error. A legacy peer watches the file and sends
//! `notifications/tools/list_changed` when what it holds changes, as a
//! server whose tools change does (a modern one is told to with `test/changed`).

use serde_json::{json, Value};

/// Calls `announce` each time the file holds other tools than before (a
/// file caught half-written is not read as a change).
pub fn watch(path: String, announce: impl Fn() + Send + 'static) {
    std::thread::spawn(move || {
        let parse = |text: &str| serde_json::from_str::<Vec<Value>>(text).ok();
        let mut held = std::fs::read_to_string(&path).ok().and_then(|t| parse(&t));
        loop {
            std::thread::sleep(std::time::Duration::from_millis(50));
            let now = std::fs::read_to_string(&path).ok().and_then(|t| parse(&t));
            if now.is_some() && now != held {
                held = now;
                announce();
            }
        }
    });
}

fn read(path: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        eprintln!("peer: cannot read {path}: {e}");
        "[]".to_owned()
    });
    serde_json::from_str(&text).unwrap_or_default()
}

pub fn handle(path: &str, method: &str, params: &Value) -> Option<Result<Value, (i64, String)>> {
    match method {
        "tools/list" => Some(Ok(json!({ "tools": read(path) }))),
        "tools/call" => {
            let name = params["name"].as_str()?;
            read(path).iter().find(|tool| tool["name"] == name)?;
            if let Some(target) = params["arguments"]["write"].as_str() {
                let (text, failed) = match std::fs::write(target, "written by the peer\n") {
                    Ok(()) => (format!("wrote {target}"), false),
                    Err(e) => (format!("cannot write {target}: {e}"), true),
                };
                return Some(Ok(
                    json!({ "content": [{ "type": "text", "text": text }], "isError": failed }),
                ));
            }
            let text = format!("{name} called with {}", params["arguments"]);
            Some(Ok(json!({ "content": [{ "type": "text", "text": text }] })))
        }
        _ => None,
    }
}
