//! The `test/*` methods a test calls to make the peer misbehave on cue, and
//! the plain MCP methods the demo does not serve (subscriptions, listen,
//! multi round-trip, logging level).

use std::io::{self, Write};
use std::sync::Arc;
use std::time::Duration;
use std::{env, process, thread};

use serde_json::{json, Value};

use super::{answer, close_stdout, send, stdin_pipe_size, write_line, Peer};

impl Peer {
    /// Answers `method`, which nothing before knew.
    pub(super) fn scripted(&mut self, id: Value, method: &str, params: Value) {
        if let Some(reached) = super::reach::handle(method, &params) {
            return answer(&self.out, &id, Ok(reached));
        }
        #[cfg(target_os = "linux")]
        if let Some(tried) = super::escape::handle(method, &params) {
            return answer(&self.out, &id, Ok(tried));
        }
        let out = Arc::clone(&self.out);
        let notify = |method: &str, params: Value| {
            send(
                &out,
                &json!({ "jsonrpc": "2.0", "method": method, "params": params }),
            );
        };
        let outcome = match method {
            "test/echo" => Ok(params),
            "resources/subscribe"
                if params["uri"]
                    .as_str()
                    .is_some_and(|u| u.starts_with("refuse:")) =>
            {
                Err((-32602, "no such resource".into()))
            }
            "resources/subscribe" | "resources/unsubscribe" | "logging/setLevel" => Ok(json!({})),
            "test/string_id" => {
                let id = Value::String(id.to_string());
                return answer(&self.out, &id, Ok(params));
            }
            "test/received" => Ok(json!(self.received)),
            "test/notify" => {
                let count = params["count"].as_u64().unwrap_or(1);
                for i in 0..count {
                    notify("notifications/progress", json!({ "progress": i }));
                }
                Ok(json!({ "sent": count }))
            }
            "test/raw" => {
                // Writes each given line verbatim, `$ID` replaced by this request's id.
                for line in params["lines"].as_array().into_iter().flatten() {
                    let line = line
                        .as_str()
                        .unwrap_or_default()
                        .replace("$ID", &id.to_string());
                    write_line(&self.out, &line);
                }
                return;
            }
            "test/raw_bytes" => {
                let bytes: Vec<u8> = params["bytes"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|b| b.as_u64().map(|b| b as u8))
                    .collect();
                let mut out = self.out.lock().unwrap();
                let _ = out.write_all(&bytes);
                let _ = out.flush();
                return;
            }
            "test/never" => return,
            "subscriptions/listen" => {
                // Acknowledged at once with the filter; answered only when ended
                // (`test/end_listens`).
                let filter = params["notifications"].clone();
                send(
                    &out,
                    &json!({ "jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                             "params": { "_meta": { "io.modelcontextprotocol/subscriptionId": id },
                                         "notifications": filter } }),
                );
                self.listens.push((id, filter));
                return;
            }
            "test/changed" => {
                // What changed: `tools`, `prompts`, `resources` (list changes) or
                // `uri` (a resource update). A modern peer sends it on each
                // listen that asked for it; a legacy one, to everyone.
                let (method, flag, uri) = match params["what"].as_str().unwrap_or("tools") {
                    "prompts" => (
                        "notifications/prompts/list_changed",
                        "promptsListChanged",
                        None,
                    ),
                    "resources" => (
                        "notifications/resources/list_changed",
                        "resourcesListChanged",
                        None,
                    ),
                    "uri" => (
                        "notifications/resources/updated",
                        "",
                        params["uri"].as_str(),
                    ),
                    _ => ("notifications/tools/list_changed", "toolsListChanged", None),
                };
                let mut body = match uri {
                    Some(uri) => json!({ "uri": uri }),
                    None => json!({}),
                };
                if self.modern_versions().is_none() {
                    send(
                        &out,
                        &json!({ "jsonrpc": "2.0", "method": method, "params": body }),
                    );
                    return answer(&self.out, &id, Ok(json!({ "sent": 1 })));
                }
                let mut sent = 0;
                for (listen, filter) in &self.listens {
                    let wanted = match uri {
                        Some(uri) => filter["resourceSubscriptions"]
                            .as_array()
                            .is_some_and(|uris| uris.iter().any(|u| u == uri)),
                        None => filter[flag] == json!(true),
                    };
                    if wanted {
                        body["_meta"] = json!({ "io.modelcontextprotocol/subscriptionId": listen });
                        send(
                            &out,
                            &json!({ "jsonrpc": "2.0", "method": method, "params": body.clone() }),
                        );
                        sent += 1;
                    }
                }
                Ok(json!({ "sent": sent }))
            }
            "test/end_listens" => {
                // Ends every subscription gracefully: each listen gets its answer.
                for (listen, _) in std::mem::take(&mut self.listens) {
                    let meta = json!({ "io.modelcontextprotocol/subscriptionId": listen });
                    answer(
                        &self.out,
                        &listen,
                        Ok(json!({ "resultType": "complete", "_meta": meta })),
                    );
                }
                Ok(json!({}))
            }
            "test/mrtr" => {
                // Multi round-trip: asks for `kinds` (input request methods) until
                // it has been retried `rounds` times with every answer and the
                // requestState it gave, then answers with what it got.
                let rounds = params["rounds"].as_u64().unwrap_or(1);
                let round = params["requestState"]
                    .as_str()
                    .and_then(|s| s.strip_prefix("opaque-round-"))
                    .and_then(|n| n.parse::<u64>().ok());
                // `reject_state`: the state it handed out comes back refused,
                // as a server that finds it expired or tampered with would.
                let rejected = params["reject_state"] == json!(true) && round.is_some();
                if (params["requestState"].is_string() && round.is_none()) || rejected {
                    return answer(
                        &self.out,
                        &id,
                        Err((-32602, "requestState rejected".into())),
                    );
                }
                let done = round.unwrap_or(0);
                let answered = params["inputResponses"].as_object().map_or(0, |m| m.len());
                let kinds: Vec<String> = params["kinds"]
                    .as_array()
                    .map(|k| {
                        k.iter()
                            .filter_map(|m| m.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_else(|| vec!["elicitation/create".into()]);
                if done >= rounds && answered == kinds.len() {
                    Ok(
                        json!({ "resultType": "complete", "inputResponses": params["inputResponses"], "rounds": done }),
                    )
                } else {
                    let requests: serde_json::Map<String, Value> = kinds
                        .iter()
                        .enumerate()
                        .map(|(i, m)| {
                            // `ask_params`: what each input request asks, instead of a message.
                            let asked = match &params["ask_params"] {
                                Value::Null => json!({ "message": format!("round {done}") }),
                                given => given.clone(),
                            };
                            (format!("ask-{i}"), json!({ "method": m, "params": asked }))
                        })
                        .collect();
                    Ok(
                        json!({ "resultType": "input_required", "inputRequests": requests,
                               "requestState": format!("opaque-round-{}", done + 1) }),
                    )
                }
            }
            "test/progress" => {
                // `steps` progress notifications for the request's progress token,
                // `every_ms` apart, then the answer.
                let steps = params["steps"].as_u64().unwrap_or(3);
                let every = Duration::from_millis(params["every_ms"].as_u64().unwrap_or(0));
                let token = params["_meta"]["progressToken"].clone();
                let crash_at = params["crash_at"].as_u64();
                thread::spawn(move || {
                    for step in 1..=steps {
                        if crash_at == Some(step) {
                            eprintln!("peer: crashing in the middle of a call");
                            process::exit(5);
                        }
                        thread::sleep(every);
                        send(
                            &out,
                            &json!({ "jsonrpc": "2.0", "method": "notifications/progress",
                                     "params": { "progressToken": token, "progress": step, "total": steps } }),
                        );
                    }
                    answer(&out, &id, Ok(params));
                });
                return;
            }
            "test/sleep" => {
                let ms = params["ms"].as_u64().unwrap_or(0);
                thread::spawn(move || {
                    thread::sleep(Duration::from_millis(ms));
                    answer(&out, &id, Ok(params));
                });
                return;
            }
            "test/pause" => {
                // Unlike test/sleep, stops reading stdin meanwhile: the pipe fills.
                thread::sleep(Duration::from_millis(params["ms"].as_u64().unwrap_or(0)));
                Ok(params)
            }
            "test/stdin_pipe_size" => Ok(stdin_pipe_size()),
            "test/stderr" => {
                let mut err = io::stderr().lock();
                for line in params["lines"].as_array().into_iter().flatten() {
                    let _ = writeln!(err, "{}", line.as_str().unwrap_or_default());
                }
                let bytes = params["bytes"].as_u64().unwrap_or(0);
                let filler = "e".repeat(99);
                for _ in 0..bytes / 100 {
                    let _ = writeln!(err, "{filler}");
                }
                let _ = err.flush();
                Ok(json!({ "written": bytes }))
            }
            "test/exit" | "test/signal" => {
                let mut err = io::stderr().lock();
                for line in params["stderr"].as_array().into_iter().flatten() {
                    let _ = writeln!(err, "{}", line.as_str().unwrap_or_default());
                }
                let _ = err.flush();
                if let Some(partial) = params["stdout"].as_str() {
                    // Dies in the middle of a line: no newline after it.
                    let mut out = self.out.lock().unwrap();
                    let _ = out.write_all(partial.as_bytes());
                    let _ = out.flush();
                }
                #[cfg(unix)]
                if let Some(signal) = params["signal"].as_i64() {
                    // SAFETY: raising a signal at ourselves has no preconditions.
                    unsafe {
                        libc::raise(signal as libc::c_int);
                    }
                }
                process::exit(params["code"].as_i64().unwrap_or(0) as i32);
            }
            "test/close_stdout" => {
                close_stdout();
                return;
            }
            "test/ask" => {
                let ask_id = format!("ask-{}", self.next_ask);
                self.next_ask += 1;
                self.asks.insert(ask_id.clone(), id);
                let mut request =
                    json!({ "jsonrpc": "2.0", "id": ask_id, "method": params["method"] });
                if !params["params"].is_null() {
                    request["params"] = params["params"].clone();
                }
                return send(&self.out, &request);
            }
            "test/env" => {
                let name = params["name"].as_str().unwrap_or_default();
                Ok(env::var(name).map_or(Value::Null, Value::String))
            }
            "test/env_names" => Ok(json!(env::vars_os()
                .map(|(k, _)| k.to_string_lossy().into_owned())
                .collect::<Vec<_>>())),
            "test/cwd" => Ok(json!(env::current_dir()
                .map(|d| d.display().to_string())
                .unwrap_or_default())),
            "test/huge" => Ok(json!(
                "x".repeat(params["bytes"].as_u64().unwrap_or(0) as usize)
            )),
            _ => Err((-32601, format!("Method not found: {method}"))),
        };
        answer(&self.out, &id, outcome);
    }
}
