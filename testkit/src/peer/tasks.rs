//! `--tasks`: tools that run as tasks, in the wire of the peer's era — the
//! 2025-11-25 one (`params.task`, `tasks/get`, `tasks/result`, which carries
//! an elicitation when the job asks) or the 2026-07-28 extension's
//! (`resultType: "task"`, the result inline in `tasks/get`, `inputRequests`
//! answered with `tasks/update`).
//!
//! Tools: `job` (task support required), `maybe-job` (optional) and `no-job`
//! (forbidden). A job's arguments script it: `polls` (ends on that poll,
//! default 2), `after_ms` (or once that long has passed), `intervals` (the
//! poll interval given at each poll, in ms; default 20), `outcome`
//! (`complete`, `error_result`, `fail`, `cancel`, `never`, `garbage`),
//! `ask` (needs a name first), `notify` (sends a status notification when it
//! ends by time), `require` (a 2026-07-28 extension the client must declare),
//! `lag` (polls that still show an answered input request, as an eventually
//! consistent server may), `progress` (a progress notification for the
//! call's token at each poll, before its answer).

use std::collections::HashMap;
use std::time::Instant;

use serde_json::{json, Value};

use super::{answer, send, Out};

const EXTENSION: &str = "io.modelcontextprotocol/tasks";
const CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

pub struct Tasks {
    /// The 2026-07-28 extension (else the 2025-11-25 wire).
    modern: bool,
    jobs: HashMap<String, Job>,
    next: u64,
    /// `tasks/result` requests waiting for their job's end: (request id, task).
    waiting: Vec<(Value, String)>,
    /// Elicitations asked for a job: our request id → task.
    asked: HashMap<String, String>,
    /// `tasks/update` answers taken, per input key (each should come once).
    updates: HashMap<String, u64>,
}

struct Job {
    args: Value,
    created: Instant,
    polls: u64,
    status: &'static str,
    cancelled: bool,
    /// The name given, once the job has asked for it.
    name: Option<Value>,
    elicited: bool,
    lag: u64,
    /// The poll it ended at.
    ended: u64,
    /// The call's progress token (null if none).
    token: Value,
}

impl Job {
    fn outcome(&self) -> &str {
        self.args["outcome"].as_str().unwrap_or("complete")
    }

    fn interval(&self) -> u64 {
        let intervals = self.args["intervals"].as_array();
        let at = self.polls as usize;
        intervals
            .and_then(|i| i.get(at).or(i.last()))
            .and_then(Value::as_u64)
            .unwrap_or(20)
    }

    /// Moves the job on at a poll (or a look at its state).
    fn advance(&mut self) {
        if self.cancelled || matches!(self.status, "completed" | "failed" | "cancelled") {
            return;
        }
        if self.args["ask"] == true && self.name.is_none() {
            if self.polls >= 1 {
                self.status = "input_required";
            }
            return;
        }
        if self.status == "input_required" && self.lag > 0 {
            self.lag -= 1;
            return;
        }
        let due = self.polls >= self.args["polls"].as_u64().unwrap_or(2)
            || self.args["after_ms"]
                .as_u64()
                .is_some_and(|ms| self.created.elapsed().as_millis() >= u128::from(ms));
        if !due || self.outcome() == "never" {
            self.status = "working";
            return;
        }
        self.ended = self.polls;
        self.status = match self.outcome() {
            "fail" => "failed",
            "cancel" => "cancelled",
            _ => "completed",
        };
    }

    fn result(&self) -> Value {
        match self.outcome() {
            "garbage" => json!({ "content": "not a list" }),
            "error_result" => {
                json!({ "content": [{ "type": "text", "text": "the job went wrong" }], "isError": true })
            }
            _ => {
                let who = self
                    .name
                    .as_ref()
                    .map_or(String::new(), |n| format!(" for {n}"));
                let text = format!("done after {} polls{who}", self.ended);
                json!({ "content": [{ "type": "text", "text": text }] })
            }
        }
    }

    fn error() -> Value {
        json!({ "code": -32603, "message": "the job failed" })
    }
}

pub fn tools() -> Vec<Value> {
    let schema = json!({ "type": "object" });
    ["required", "optional", "forbidden"]
        .iter()
        .zip(["job", "maybe-job", "no-job"])
        .map(|(support, name)| {
            json!({ "name": name, "inputSchema": schema, "execution": { "taskSupport": support } })
        })
        .collect()
}

impl Tasks {
    pub fn new(modern: bool) -> Self {
        Tasks {
            modern,
            jobs: HashMap::new(),
            next: 1,
            waiting: Vec::new(),
            asked: HashMap::new(),
            updates: HashMap::new(),
        }
    }

    /// What the server declares: the 2025-11-25 capability (the modern
    /// extension is added to `server/discover` by its caller).
    pub fn legacy_capability() -> Value {
        json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } })
    }

    pub fn extension() -> (&'static str, Value) {
        (EXTENSION, json!({}))
    }

    fn task(&self, id: &str, job: &Job) -> Value {
        let message = match job.status {
            "input_required" => "needs a name",
            "working" => "working on it",
            _ => "over",
        };
        let mut task = json!({
            "taskId": id,
            "status": job.status,
            "statusMessage": format!("{message} (poll {})", job.polls),
            "createdAt": "2026-12-04T00:00:00Z",
            "lastUpdatedAt": "2026-12-04T00:00:00Z",
        });
        if self.modern {
            task["ttlMs"] = json!(60_000);
            task["pollIntervalMs"] = json!(job.interval());
            task["resultType"] = json!("complete");
            match job.status {
                "completed" => task["result"] = job.result(),
                "failed" => task["error"] = Job::error(),
                "input_required" => {
                    task["inputRequests"] = json!({ "name": {
                        "method": "elicitation/create",
                        "params": { "mode": "form", "message": "Your name?",
                            "requestedSchema": { "type": "object", "properties": { "name": { "type": "string", "default": "Grace" } } } }
                    } });
                }
                _ => {}
            }
        } else {
            task["ttl"] = json!(60_000);
            task["pollInterval"] = json!(job.interval());
        }
        task
    }

    /// Handles `method` if it is the tasks'; `true` when answered (or left
    /// to be answered later).
    pub fn handle(&mut self, out: &Out, id: &Value, method: &str, params: &Value) -> bool {
        let declared = !params["_meta"][CAPABILITIES]["extensions"][EXTENSION].is_null();
        if self.modern && method.starts_with("tasks/") && !declared {
            answer(
                out,
                id,
                Err((-32021, "Missing required client capability".into())),
            );
            return true;
        }
        match method {
            "tools/call" => self.call(out, id, params, declared),
            "tasks/get" | "tasks/result" | "tasks/cancel" | "tasks/update" => {
                let task = params["taskId"].as_str().unwrap_or_default().to_owned();
                if !self.jobs.contains_key(&task) {
                    answer(
                        out,
                        id,
                        Err((-32602, format!("Failed to retrieve task: no task {task}"))),
                    );
                    return true;
                }
                match method {
                    "tasks/get" => self.get(out, id, &task),
                    "tasks/result" => self.result(out, id, &task),
                    "tasks/cancel" => {
                        let job = self.jobs.get_mut(&task).unwrap();
                        job.cancelled = true;
                        job.status = "cancelled";
                        let reply = if self.modern {
                            json!({ "resultType": "complete" })
                        } else {
                            self.task(&task, &self.jobs[&task])
                        };
                        answer(out, id, Ok(reply));
                    }
                    _ => self.update(out, id, &task, params),
                }
                true
            }
            _ => false,
        }
    }

    fn call(&mut self, out: &Out, id: &Value, params: &Value, declared: bool) -> bool {
        let name = params["name"].as_str().unwrap_or_default();
        if !matches!(name, "job" | "maybe-job" | "no-job") {
            return false;
        }
        let args = params["arguments"].clone();
        let as_task = if self.modern {
            if let Some(other) = args["require"].as_str() {
                let data = json!({ "requiredCapabilities": { "extensions": { other: {} } } });
                let error = json!({ "code": -32021, "message": "Missing required client capability", "data": data });
                send(out, &json!({ "jsonrpc": "2.0", "id": id, "error": error }));
                return true;
            }
            if !declared && name == "job" {
                let data = json!({ "requiredCapabilities": { "extensions": { EXTENSION: {} } } });
                let error = json!({ "code": -32021, "message": "Missing required client capability", "data": data });
                send(out, &json!({ "jsonrpc": "2.0", "id": id, "error": error }));
                return true;
            }
            declared && name != "no-job"
        } else {
            let asked = params.get("task").is_some();
            match (name, asked) {
                ("job", false) => {
                    let message = "Tool job requires task augmentation (taskSupport: 'required')";
                    answer(out, id, Err((-32601, message.into())));
                    return true;
                }
                ("no-job", true) => {
                    answer(
                        out,
                        id,
                        Err((-32601, "Tool no-job does not support tasks".into())),
                    );
                    return true;
                }
                (_, asked) => asked,
            }
        };
        if !as_task {
            let text = format!("{name} ran inline");
            answer(
                out,
                id,
                Ok(json!({ "content": [{ "type": "text", "text": text }] })),
            );
            return true;
        }
        let task = format!("task-{}", self.next);
        self.next += 1;
        let job = Job {
            args,
            created: Instant::now(),
            polls: 0,
            status: "working",
            cancelled: false,
            name: None,
            elicited: false,
            lag: 0,
            ended: 0,
            token: params["_meta"]["progressToken"].clone(),
        };
        if job.args["notify"] == true && !self.modern {
            if let Some(ms) = job.args["after_ms"].as_u64() {
                // The end, told unasked: the client need not wait for its next poll.
                let (out, task) = (out.clone(), task.clone());
                std::thread::spawn(move || {
                    std::thread::sleep(std::time::Duration::from_millis(ms));
                    let params = json!({ "taskId": task, "status": "completed", "statusMessage": "over (notified)",
                        "createdAt": "2026-12-04T00:00:00Z", "lastUpdatedAt": "2026-12-04T00:00:00Z" });
                    send(
                        &out,
                        &json!({ "jsonrpc": "2.0", "method": "notifications/tasks/status", "params": params }),
                    );
                });
            }
        }
        let mut created = self.task(&task, &job);
        self.jobs.insert(task.clone(), job);
        if self.modern {
            created["resultType"] = json!("task");
            answer(out, id, Ok(created));
        } else {
            answer(out, id, Ok(json!({ "task": created })));
        }
        true
    }

    fn get(&mut self, out: &Out, id: &Value, task: &str) {
        let job = self.jobs.get_mut(task).unwrap();
        job.polls += 1;
        job.advance();
        if job.args["progress"] == true && !job.token.is_null() {
            let params = json!({ "progressToken": job.token, "progress": job.polls,
                "message": format!("poll {}", job.polls) });
            send(
                out,
                &json!({ "jsonrpc": "2.0", "method": "notifications/progress", "params": params }),
            );
        }
        answer(out, id, Ok(self.task(task, &self.jobs[task])));
        self.settle(out, task);
    }

    /// 2025-11-25: the result when the job has ended; else it waits, asking
    /// for the name first if the job needs one.
    fn result(&mut self, out: &Out, id: &Value, task: &str) {
        self.waiting.push((id.clone(), task.to_owned()));
        let job = self.jobs.get_mut(task).unwrap();
        job.advance();
        if job.status == "input_required" && !job.elicited {
            job.elicited = true;
            let ask = format!("task-ask-{}", self.asked.len() + 1);
            self.asked.insert(ask.clone(), task.to_owned());
            let params = json!({ "mode": "form", "message": "Your name?",
                "requestedSchema": { "type": "object", "properties": { "name": { "type": "string", "default": "Grace" } } },
                "_meta": { "io.modelcontextprotocol/related-task": { "taskId": task } } });
            send(
                out,
                &json!({ "jsonrpc": "2.0", "id": ask, "method": "elicitation/create", "params": params }),
            );
        }
        self.settle(out, task);
    }

    /// An answer to one of our elicitations; `false` if it is not ours.
    pub fn answered(&mut self, out: &Out, ask: &str, message: &Value) -> bool {
        let Some(task) = self.asked.remove(ask) else {
            return false;
        };
        if let Some(job) = self.jobs.get_mut(&task) {
            job.name = Some(message["result"]["content"]["name"].clone());
            job.status = "working";
            // Answered: it ends at once, unless it runs for a time.
            if job.args["after_ms"].is_null() {
                job.polls = job.polls.max(job.args["polls"].as_u64().unwrap_or(2));
            }
            job.advance();
        }
        self.settle(out, &task);
        true
    }

    fn update(&mut self, out: &Out, id: &Value, task: &str, params: &Value) {
        if let Some(responses) = params["inputResponses"].as_object() {
            for (key, response) in responses {
                *self.updates.entry(key.clone()).or_default() += 1;
                let job = self.jobs.get_mut(task).unwrap();
                job.name = Some(response["content"]["name"].clone());
                job.lag = job.args["lag"].as_u64().unwrap_or(0);
                if job.lag == 0 {
                    job.status = "working";
                }
            }
        }
        answer(out, id, Ok(json!({ "resultType": "complete" })));
    }

    /// Answers the `tasks/result` requests waiting for `task`, if it ended.
    fn settle(&mut self, out: &Out, task: &str) {
        let job = &self.jobs[task];
        if !matches!(job.status, "completed" | "failed" | "cancelled") {
            return;
        }
        let outcome = match (job.status, job.outcome()) {
            ("failed", "fail") => Err((-32603, "the job failed".to_owned())),
            ("cancelled", _) => Err((-32800, "the task was cancelled".to_owned())),
            _ => Ok(job.result()),
        };
        let (ready, rest): (Vec<_>, Vec<_>) = self.waiting.drain(..).partition(|(_, t)| t == task);
        self.waiting = rest;
        for (id, _) in ready {
            answer(out, &id, outcome.clone());
        }
    }

    /// `test/task_updates`: how many times each input key was answered.
    pub fn updates(&self) -> Value {
        json!(self.updates)
    }
}
