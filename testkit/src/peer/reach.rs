//! `test/write`, `test/read`, `test/connect`, `test/child_write`: what the
//! peer can reach of its machine, for the sandbox's tests. Each answers
//! `{"ok": true}` (a read with its `bytes`) or the OS's error as
//! `{"ok": false, "error": TEXT}`; `test/pid` answers the peer's pid.

use std::time::Duration;

use serde_json::{json, Value};

fn outcome<T>(result: std::io::Result<T>) -> Value {
    match result {
        Ok(_) => json!({ "ok": true }),
        Err(e) => json!({ "ok": false, "error": e.to_string() }),
    }
}

pub fn handle(method: &str, params: &Value) -> Option<Value> {
    let path = params["path"].as_str().unwrap_or_default();
    Some(match method {
        "test/write" => outcome(std::fs::write(path, "written by the peer\n")),
        "test/read" => match std::fs::read(path) {
            Ok(bytes) => json!({ "ok": true, "bytes": bytes.len() }),
            Err(e) => json!({ "ok": false, "error": e.to_string() }),
        },
        "test/pid" => json!(std::process::id()),
        "test/connect" => {
            let address = params["address"].as_str().unwrap_or_default();
            let connected = address
                .parse()
                .map_err(std::io::Error::other)
                .and_then(|a| std::net::TcpStream::connect_timeout(&a, Duration::from_secs(2)));
            outcome(connected)
        }
        // A child of the peer writes: a sandbox confines what it starts too.
        "test/child_write" => {
            let status = std::process::Command::new("sh")
                .args(["-c", "echo child > \"$1\"", "sh", path])
                .status();
            match status {
                Ok(s) if s.success() => json!({ "ok": true }),
                Ok(s) => json!({ "ok": false, "error": format!("sh exited: {s}") }),
                Err(e) => json!({ "ok": false, "error": e.to_string() }),
            }
        }
        _ => return None,
    })
}
