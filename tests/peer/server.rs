//! `stdio-mcp-peer`: the scriptable MCP server the tests and benches drive.
//!
//! It is a real child process speaking newline-delimited JSON-RPC on stdio. Besides
//! the demo MCP methods (`demo.rs`) it answers `test/*` requests that make it
//! misbehave on cue, and it remembers every line it read so a test can ask what
//! the transport wrote (`test/received`).
//!
//! Flags: `--ignore-eof` (keep running after stdin ends), `--ignore-term`
//! (ignore SIGTERM), `--banner` (print a non-JSON line first), `--no-read`
//! (never read stdin), `--grandchild` (start a long-lived, silent copy of itself that
//! shares the pipes), `--detached-grandchild` (the same, but on `/dev/null` instead of
//! the pipes and ignoring SIGTERM, as a daemonised helper would), `--watchdog SECS` (exit after that long whatever happens; default 60),
//! `--paged` (list tools one per page), `--schemas` (more tools, with schemas to
//! validate against: `schemas.rs`), `--initialize MODE` (answer `initialize`
//! with protocol version MODE, or `exit` to die, or `never` to stay silent),
//! `--discover MODE` (its answer to the 2026-07-28 probe `server/discover`:
//! `modern` speaks only 2026-07-28 and refuses `initialize`; `dual` speaks both
//! eras; `silent` never answers it; `exit` dies on it; `offer:V1,V2` answers
//! `-32022` listing V1, V2 unless the version asked for is one of them;
//! `reject-first` answers the first probe `-32022` listing 2026-07-28;
//! `result-type:T` is modern but tags every other result `resultType: T`;
//! `reject-always` refuses every probe so; `malformed` answers it without
//! `supportedVersions`; `empty` answers it `{}`; `die-quietly` loses its
//! session on it without a word on stdout and exits 1 on the next line it
//! reads, as servers on the Python SDK before 1.9.4 do), `--noise N` (write
//! N lines that are not JSON-RPC before anything else).
//! Without it the peer is a legacy server: `server/discover` is an unknown method.
//! `--tasks` adds tools that run as tasks, in its era's wire (`tasks.rs`).
//! `--log-lines FILE` appends each line it reads to FILE.
//! `--catalog TAG` adds prompts and resources (`catalog.rs`).
//! `--scenario NAME` (and `--canary URL`) answers as a scenario of the official
//! conformance suite does (`conformance.rs`).

mod catalog;
mod conformance;
mod demo;
mod schemas;
mod tasks;

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use std::{env, io, process, thread};

use serde_json::{json, Value};

type Out = Arc<Mutex<io::Stdout>>;

fn write_line(out: &Out, line: &str) {
    let mut out = out.lock().unwrap();
    // A closed stdout is one of the scenarios; write errors are expected then.
    let _ = out.write_all(line.as_bytes());
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

fn send(out: &Out, message: &Value) {
    write_line(out, &message.to_string());
}

fn answer(out: &Out, id: &Value, outcome: Result<Value, (i64, String)>) {
    send(
        out,
        &match outcome {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Err((code, message)) => {
                json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
            }
        },
    );
}

struct Flags {
    ignore_eof: bool,
    ignore_term: bool,
    banner: bool,
    no_read: bool,
    grandchild: bool,
    detached_grandchild: bool,
    watchdog: u64,
    paged: bool,
    schemas: bool,
    initialize: Option<String>,
    discover: Option<String>,
    /// Exit (code 7) on this request instead of answering it.
    crash_after: Option<u64>,
    /// Exit (code 9) at start if this file exists; create it otherwise.
    crash_on_restart: Option<String>,
    /// Append a line to this file at start (tests count the starts).
    log_start: Option<String>,
    /// Wait this many milliseconds before reading (a slow start).
    start_delay: u64,
    /// Lines of noise written at start.
    noise: u64,
    /// Append each line read to this file (for a test that cannot ask).
    log_lines: Option<String>,
    scenario: Option<String>,
    canary: Option<String>,
    catalog: Option<String>,
    tasks: bool,
}

fn flags() -> Flags {
    let mut f = Flags {
        ignore_eof: false,
        ignore_term: false,
        banner: false,
        no_read: false,
        grandchild: false,
        detached_grandchild: false,
        watchdog: 60,
        paged: false,
        schemas: false,
        initialize: None,
        discover: None,
        crash_after: None,
        crash_on_restart: None,
        log_start: None,
        start_delay: 0,
        noise: 0,
        log_lines: None,
        scenario: None,
        canary: None,
        catalog: None,
        tasks: false,
    };
    let mut args = env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--ignore-eof" => f.ignore_eof = true,
            "--ignore-term" => f.ignore_term = true,
            "--banner" => f.banner = true,
            "--no-read" => f.no_read = true,
            "--grandchild" => f.grandchild = true,
            "--detached-grandchild" => f.detached_grandchild = true,
            "--paged" => f.paged = true,
            "--schemas" => f.schemas = true,
            "--initialize" => f.initialize = args.next(),
            "--discover" => f.discover = args.next(),
            "--crash-after" => f.crash_after = args.next().and_then(|s| s.parse().ok()),
            "--crash-on-restart" => f.crash_on_restart = args.next(),
            "--log-start" => f.log_start = args.next(),
            "--tasks" => f.tasks = true,
            "--start-delay" => {
                f.start_delay = args.next().and_then(|s| s.parse().ok()).unwrap_or(0)
            }
            "--scenario" => f.scenario = args.next(),
            "--log-lines" => f.log_lines = args.next(),
            "--catalog" => f.catalog = args.next(),
            "--canary" => f.canary = args.next(),
            "--noise" => f.noise = args.next().and_then(|s| s.parse().ok()).unwrap_or(0),
            "--watchdog" => f.watchdog = args.next().and_then(|s| s.parse().ok()).unwrap_or(60),
            other => {
                eprintln!("stdio-mcp-peer: unknown flag {other}");
                process::exit(2);
            }
        }
    }
    f
}

fn main() {
    let flags = flags();
    let watchdog = flags.watchdog;
    thread::spawn(move || {
        thread::sleep(Duration::from_secs(watchdog));
        eprintln!("stdio-mcp-peer: watchdog expired");
        process::exit(3);
    });
    // Windows has no SIGTERM: there the close ladder's second step is the end.
    #[cfg(unix)]
    if flags.ignore_term {
        // SAFETY: installing SIG_IGN for SIGTERM has no preconditions.
        unsafe {
            libc::signal(libc::SIGTERM, libc::SIG_IGN);
        }
    }
    if flags.grandchild || flags.detached_grandchild {
        // Inherits our stdio (or none); it outlives us unless its group is signalled.
        let child = env::current_exe().and_then(|me| {
            let mut command = process::Command::new(me);
            command.args(["--no-read", "--watchdog", "30"]);
            if flags.detached_grandchild {
                command
                    .arg("--ignore-term")
                    .stdin(process::Stdio::null())
                    .stdout(process::Stdio::null())
                    .stderr(process::Stdio::null());
            }
            command.spawn()
        });
        if let Ok(child) = child {
            eprintln!("grandchild {}", child.id());
        }
    }
    if let Some(marker) = &flags.crash_on_restart {
        if std::path::Path::new(marker).exists() {
            eprintln!("peer: started before, refusing to start again");
            process::exit(9);
        }
        let _ = std::fs::write(marker, b"started");
    }
    if let Some(log) = &flags.log_start {
        let logged = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .and_then(|mut file| io::Write::write_all(&mut file, b"started\n"));
        if let Err(e) = logged {
            eprintln!("peer: cannot log the start to {log}: {e}");
        }
    }
    thread::sleep(Duration::from_millis(flags.start_delay));
    let out: Out = Arc::new(Mutex::new(io::stdout()));
    if flags.banner {
        write_line(&out, "stdio-mcp-peer starting (this line is not JSON)");
    }
    for i in 0..flags.noise {
        write_line(&out, &format!("[log] starting step {i}: not JSON-RPC"));
    }
    if flags.no_read {
        loop {
            thread::sleep(Duration::from_secs(3600));
        }
    }
    let mut peer = Peer {
        paged: flags.paged,
        schemas: flags.schemas,
        initialize: flags.initialize.clone(),
        discover: flags.discover.clone(),
        probes: 0,
        doomed: false,
        crash_after: flags.crash_after,
        requests: 0,
        listens: Vec::new(),
        out,
        received: Vec::new(),
        asks: HashMap::new(),
        next_ask: 1,
        catalog: flags.catalog.clone(),
        scenario: flags
            .scenario
            .clone()
            .map(|name| conformance::Scenario::new(name, flags.canary.clone())),
        tasks: flags
            .tasks
            .then(|| tasks::Tasks::new(flags.discover.as_deref() == Some("modern"))),
    };
    let stdin = io::stdin();
    let mut line = Vec::new();
    let mut input = stdin.lock();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line).trim_end().to_owned();
        if let Some(log) = &flags.log_lines {
            let logged = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(log)
                .and_then(|mut file| writeln!(file, "{text}"));
            if let Err(e) = logged {
                eprintln!("peer: cannot log a line to {log}: {e}");
            }
        }
        peer.line(text);
    }
    if flags.ignore_eof {
        loop {
            thread::sleep(Duration::from_secs(3600));
        }
    }
}

struct Peer {
    paged: bool,
    schemas: bool,
    initialize: Option<String>,
    discover: Option<String>,
    probes: u32,
    /// Its session died on the probe (`--discover die-quietly`).
    doomed: bool,
    crash_after: Option<u64>,
    /// Requests taken so far (besides the handshake, the probe and `test/received`).
    requests: u64,
    /// Open `subscriptions/listen` requests: their id and filter.
    listens: Vec<(Value, Value)>,
    out: Out,
    received: Vec<String>,
    /// Server requests we sent (by their id) and the client request waiting on each.
    asks: HashMap<String, Value>,
    next_ask: u64,
    scenario: Option<conformance::Scenario>,
    /// `--catalog TAG`: prompts and resources too.
    catalog: Option<String>,
    tasks: Option<tasks::Tasks>,
}

impl Peer {
    fn line(&mut self, text: String) {
        if self.doomed {
            eprintln!("peer: the session is gone; exiting on the next line");
            process::exit(1);
        }
        let message: Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(_) => {
                self.received.push(text);
                return;
            }
        };
        let id = message.get("id").cloned();
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned);
        match (id, method) {
            (Some(id), Some(method)) => {
                let params = message.get("params").cloned().unwrap_or(Value::Null);
                if method != "test/received" {
                    self.received.push(text);
                }
                if !matches!(
                    method.as_str(),
                    "test/received" | "initialize" | "server/discover"
                ) {
                    self.requests += 1;
                    if self.crash_after == Some(self.requests) {
                        eprintln!("peer: crashing on request {}", self.requests);
                        process::exit(7);
                    }
                }
                self.request(id, &method, params);
            }
            (Some(id), None) => {
                // An answer to one of our server requests.
                self.received.push(text);
                let key = id.as_str().unwrap_or_default().to_owned();
                let out = Arc::clone(&self.out);
                if let Some(scenario) = &mut self.scenario {
                    if scenario.answered(&out, &id, &message) {
                        return;
                    }
                }
                if let Some(tasks) = &mut self.tasks {
                    if tasks.answered(&out, &key, &message) {
                        return;
                    }
                }
                if let Some(original) = self.asks.remove(&key) {
                    answer(&self.out, &original, Ok(json!({ "answer": message })));
                }
            }
            (None, Some(method)) => {
                if method == "notifications/cancelled" {
                    // A cancelled listen ends its subscription.
                    let cancelled = &message["params"]["requestId"];
                    self.listens.retain(|(id, _)| id != cancelled);
                }
                self.received.push(text);
            }
            _ => self.received.push(text),
        }
    }

    /// The versions this peer speaks in the 2026-07-28 way, if it is modern.
    fn modern_versions(&self) -> Option<Vec<String>> {
        let mode = self.discover.as_deref()?;
        Some(match mode {
            "modern" | "reject-first" | "reject-always" => vec!["2026-07-28".into()],
            "dual" => vec!["2026-07-28".into(), "2025-11-25".into()],
            m if m.starts_with("result-type:") => vec!["2026-07-28".into()],
            m if m.starts_with("offer:") => m[6..].split(',').map(str::to_owned).collect(),
            _ => return None,
        })
    }

    /// The 2026-07-28 side: `server/discover`, and the protocol version every
    /// request must carry. `Some` when the request was answered here.
    fn modern(&mut self, id: &Value, method: &str, params: &Value) -> Option<()> {
        let mode = self.discover.clone()?;
        if method == "server/discover" {
            match mode.as_str() {
                "silent" => return Some(()),
                "exit" => process::exit(7),
                "die-quietly" => {
                    eprintln!("peer: validation error: unknown method server/discover");
                    self.doomed = true;
                    return Some(());
                }
                "empty" => {
                    answer(&self.out, id, Ok(json!({})));
                    return Some(());
                }
                "malformed" => {
                    answer(
                        &self.out,
                        id,
                        Ok(json!({ "resultType": "complete", "capabilities": {} })),
                    );
                    return Some(());
                }
                _ => {}
            }
        }
        let versions = self.modern_versions()?;
        if method == "test/received" {
            // The tests' window on the wire works in either era.
            return None;
        }
        let asked = params["_meta"]["io.modelcontextprotocol/protocolVersion"].as_str();
        if method == "initialize" {
            // A modern-only peer has no handshake.
            let legacy = versions.iter().any(|v| v.as_str() < "2026-07-28");
            return (!legacy).then(|| {
                answer(
                    &self.out,
                    id,
                    Err((-32601, "Method not found: initialize".into())),
                )
            });
        }
        let Some(asked) = asked else {
            // A request without the 2026-07-28 fields: only a dual peer takes it.
            return (mode != "dual" && !versions.iter().any(|v| v.as_str() < "2026-07-28")).then(
                || {
                    answer(
                        &self.out,
                        id,
                        Err((
                            -32602,
                            "missing io.modelcontextprotocol/protocolVersion".into(),
                        )),
                    )
                },
            );
        };
        let unsupported = !versions.iter().any(|v| v == asked)
            || (mode == "reject-first" && method == "server/discover" && self.probes == 0)
            || (mode == "reject-always" && method == "server/discover");
        if method == "server/discover" {
            self.probes += 1;
        }
        if unsupported {
            let error = json!({ "code": -32022, "message": "Unsupported protocol version",
                                "data": { "supported": versions, "requested": asked } });
            send(
                &self.out,
                &json!({ "jsonrpc": "2.0", "id": id, "error": error }),
            );
            return Some(());
        }
        if method == "server/discover" {
            let result = json!({
                "resultType": "complete",
                "supportedVersions": versions,
                "capabilities": { "tools": { "listChanged": true }, "prompts": {}, "resources": {} },
                "instructions": "A demo server: try the echo, add and countdown tools.",
                "ttlMs": 60000,
                "cacheScope": "public",
                "_meta": { "io.modelcontextprotocol/serverInfo": { "name": "stdio-mcp-demo", "version": "0.1.0" } },
            });
            let mut result = result;
            if self.tasks.is_some() {
                let (name, settings) = tasks::Tasks::extension();
                result["capabilities"]["extensions"] = json!({ name: settings });
            }
            answer(&self.out, id, Ok(result));
            return Some(());
        }
        None
    }

    fn request(&mut self, id: Value, method: &str, params: Value) {
        if let Some(scenario) = &mut self.scenario {
            if scenario.request(&self.out, &id, method, &params) {
                return;
            }
        }
        if let Some(tag) = &self.catalog {
            if let Some(outcome) = catalog::handle(tag, method, &params) {
                return answer(&self.out, &id, outcome);
            }
            if method == "initialize" {
                let mut ignore = |_: &str, _: Value| {};
                let mut result = demo::handle(method, &params, &mut ignore).unwrap().unwrap();
                for (key, value) in catalog::capabilities().as_object().unwrap() {
                    result["capabilities"][key] = value.clone();
                }
                return answer(&self.out, &id, Ok(result));
            }
        }
        if self.modern(&id, method, &params).is_some() {
            return;
        }
        if let Some(tag) = self
            .discover
            .as_deref()
            .and_then(|m| m.strip_prefix("result-type:"))
        {
            if method != "test/received" {
                let out = Arc::clone(&self.out);
                let mut ignore = |_: &str, _: Value| {};
                let mut result = demo::handle(method, &params, &mut ignore)
                    .and_then(Result::ok)
                    .unwrap_or_else(|| json!({}));
                result["resultType"] = json!(tag);
                return answer(&out, &id, Ok(result));
            }
        }
        let out = Arc::clone(&self.out);
        let mut notify = |method: &str, params: Value| {
            send(
                &out,
                &json!({ "jsonrpc": "2.0", "method": method, "params": params }),
            );
        };
        match (method, self.initialize.as_deref()) {
            ("initialize", Some("exit")) => {
                eprintln!("peer: refusing to start");
                process::exit(9);
            }
            ("initialize", Some("never")) => return,
            ("initialize", Some(version)) => {
                let mut result = demo::handle(method, &params, &mut notify).unwrap().unwrap();
                result["protocolVersion"] = json!(version);
                return answer(&self.out, &id, Ok(result));
            }
            _ => {}
        }
        if let Some(tasks) = &mut self.tasks {
            match method {
                "initialize" => {
                    let mut result = demo::handle(method, &params, &mut notify).unwrap().unwrap();
                    result["capabilities"]["tasks"] = tasks::Tasks::legacy_capability();
                    return answer(&out, &id, Ok(result));
                }
                "tools/list" => {
                    let mut all = demo::handle(method, &params, &mut notify).unwrap().unwrap();
                    all["tools"].as_array_mut().unwrap().extend(tasks::tools());
                    return answer(&out, &id, Ok(all));
                }
                "test/task_updates" => return answer(&out, &id, Ok(tasks.updates())),
                _ if tasks.handle(&out, &id, method, &params) => return,
                _ => {}
            }
        }
        if self.schemas {
            if method == "tools/list" {
                let mut all = demo::handle(method, &params, &mut notify).unwrap().unwrap();
                let tools = all["tools"].as_array_mut().unwrap();
                tools.extend(schemas::tools());
                return answer(&self.out, &id, Ok(all));
            }
            if let Some(result) = (method == "tools/call")
                .then(|| schemas::call(&params))
                .flatten()
            {
                return answer(&self.out, &id, Ok(result));
            }
        }
        if method == "tools/list" && self.paged {
            // One tool a page; the cursor is the index of the next one.
            let all = demo::handle(method, &params, &mut notify).unwrap().unwrap();
            let tools = all["tools"].as_array().unwrap();
            let at: usize = params["cursor"].as_str().map_or(0, |c| c.parse().unwrap());
            let mut page = json!({ "tools": [tools[at].clone()] });
            if at + 1 < tools.len() {
                page["nextCursor"] = json!((at + 1).to_string());
            }
            if self.modern_versions().is_some() {
                // Caching hints that differ per page: the second is the shortest and private.
                page["ttlMs"] = json!([60_000, 1_000, 30_000][at % 3]);
                page["cacheScope"] = json!(if at == 1 { "private" } else { "public" });
            }
            return answer(&self.out, &id, Ok(page));
        }
        if let Some(outcome) = demo::handle(method, &params, &mut notify) {
            return answer(&self.out, &id, outcome);
        }
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

/// The capacity of the pipe on our stdin (Linux); null elsewhere.
#[cfg(target_os = "linux")]
fn stdin_pipe_size() -> Value {
    // SAFETY: F_GETPIPE_SZ only reads a property of descriptor 0.
    let size = unsafe { libc::fcntl(0, libc::F_GETPIPE_SZ) };
    json!(size)
}

#[cfg(not(target_os = "linux"))]
fn stdin_pipe_size() -> Value {
    Value::Null
}

/// Closes this process's stdout while it goes on running; later writes fail.
#[cfg(unix)]
fn close_stdout() {
    // SAFETY: closing our own stdout descriptor; later writes fail with EBADF.
    unsafe {
        libc::close(1);
    }
}

#[cfg(windows)]
fn close_stdout() {
    use windows_sys::Win32::Foundation::CloseHandle;
    use windows_sys::Win32::System::Console::{GetStdHandle, STD_OUTPUT_HANDLE};
    // SAFETY: closes this process's own stdout handle; later writes fail.
    unsafe {
        CloseHandle(GetStdHandle(STD_OUTPUT_HANDLE));
    }
}
