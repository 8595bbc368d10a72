//! `stdio-mcp-peer`: the scriptable MCP server the tests and benches drive.
//!
//! It is a real child process speaking newline-delimited JSON-RPC on stdio. Besides
//! the demo MCP methods (`demo.rs`) it answers `test/*` requests that make it
//! misbehave on cue, and it remembers every line it read so a test can ask what
//! the transport wrote (`test/received`).
//!
//! Flags: `--ignore-eof` (keep running after stdin ends), `--ask-on-eof` (ask
//! `roots/list` when stdin ends, then wait for the answer forever), `--ignore-term`
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
//! `--wait-for FILE` reads nothing (answers nothing) until FILE exists.
//! `--catalog TAG` adds prompts and resources (`catalog.rs`).
//! `--tools-file PATH` lists the tools PATH holds, read at each listing
//! (`tools_file.rs`).
//! `--escape` (Linux) adds the tool `escape`, which tries a way out of a
//! sandbox (`escape.rs`; also as the request `test/escape`).
//! `--scenario NAME` (and `--canary URL`) answers as a scenario of the official
//! conformance suite does (`conformance.rs`).

mod catalog;
mod conformance;
#[path = "../../../examples/support/demo.rs"]
mod demo;
#[cfg(target_os = "linux")]
mod escape;
mod flags;
mod reach;
mod schemas;
mod scripted;
mod tasks;
mod tools_file;

use flags::flags;

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

fn main() {
    let flags = flags();
    if flags.job_at_start {
        eprintln!("job at start: {}", in_a_job());
    }
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
                // Ignoring SIGTERM from its first instruction, not from when its
                // main gets there: a SIGTERM to the group right after our exit
                // must find it ignoring.
                #[cfg(unix)]
                {
                    use std::os::unix::process::CommandExt;
                    // SAFETY: only signal(2), which is async-signal-safe, runs
                    // between fork and exec; an ignored signal stays ignored
                    // across exec.
                    unsafe {
                        command.pre_exec(|| {
                            libc::signal(libc::SIGTERM, libc::SIG_IGN);
                            Ok(())
                        });
                    }
                }
            }
            command.spawn()
        });
        if let Ok(child) = child {
            eprintln!("grandchild {}", child.id());
        }
    }
    if let Some(path) = &flags.wait_for {
        // Bounded by the watchdog above.
        while !std::path::Path::new(path).exists() {
            thread::sleep(Duration::from_millis(5));
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
    if let (Some(path), None) = (&flags.tools_file, &flags.discover) {
        let out = Arc::clone(&out);
        tools_file::watch(path.clone(), move || {
            send(
                &out,
                &json!({ "jsonrpc": "2.0", "method": "notifications/tools/list_changed" }),
            );
        });
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
        out: Arc::clone(&out),
        received: Vec::new(),
        asks: HashMap::new(),
        next_ask: 1,
        catalog: flags.catalog.clone(),
        tools_file: flags.tools_file.clone(),
        escape: flags.escape,
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
    if flags.ask_on_eof {
        // As server-everything with a request of its own in flight: it waits
        // for the answer, and never exits while it waits.
        send(
            &out,
            &json!({ "jsonrpc": "2.0", "id": "late", "method": "roots/list" }),
        );
    }
    if flags.ignore_eof || flags.ask_on_eof {
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
    /// `--tools-file`: where its tools are read at each listing.
    tools_file: Option<String>,
    escape: bool,
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
        if let Some(path) = &self.tools_file {
            if let Some(outcome) = tools_file::handle(path, method, &params) {
                return answer(&self.out, &id, outcome);
            }
        }
        #[cfg(target_os = "linux")]
        if self.escape {
            if method == "tools/list" {
                let mut all = demo::handle(method, &params, &mut notify).unwrap().unwrap();
                all["tools"].as_array_mut().unwrap().push(escape::tool());
                return answer(&self.out, &id, Ok(all));
            }
            if let Some(result) = escape::call(method, &params) {
                return answer(&self.out, &id, Ok(result));
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
        self.scripted(id, method, params);
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

/// Whether this process is in a Job Object (`"yes"`, `"no"`, or `"n/a"`
/// where there are none).
#[cfg(windows)]
fn in_a_job() -> &'static str {
    use windows_sys::Win32::System::JobObjects::IsProcessInJob;
    use windows_sys::Win32::System::Threading::GetCurrentProcess;
    let mut inside = 0;
    // SAFETY: the pseudo-handle of this process, no job named (any job),
    // and a live BOOL to fill.
    let asked = unsafe { IsProcessInJob(GetCurrentProcess(), std::ptr::null_mut(), &mut inside) };
    match (asked, inside) {
        (0, _) => "unknown",
        (_, 0) => "no",
        _ => "yes",
    }
}

#[cfg(not(windows))]
fn in_a_job() -> &'static str {
    "n/a"
}
