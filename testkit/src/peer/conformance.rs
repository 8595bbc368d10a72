//! `--scenario NAME`: the server side of the official MCP conformance suite's
//! client scenarios (`@modelcontextprotocol/conformance`), over stdio. Each
//! answers as that scenario's HTTP server does; the tests read the wire
//! (`test/received`) and check what the scenario checks.
//!
//! Scenarios: `initialize`, `tools_call`, `elicitation-sep1034-client-defaults`,
//! `json-schema-2020-12-preservation`, `json-schema-ref-no-deref` (takes the
//! canary URL as `--canary URL`), `request-metadata`,
//! `sep-2322-client-request-state`.

use std::collections::HashMap;

use serde_json::{json, Value};

use super::{answer, send, Out};

const MODERN: &str = "2026-07-28";
/// The versions the `initialize` scenario accepts from a client.
const INITIALIZE_ACCEPTS: [&str; 3] = ["2025-06-18", "2025-11-25", "2026-07-28"];

/// The focal tool's input schema of `json-schema-2020-12-preservation`.
pub fn rich_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": { "address": { "$anchor": "addressDef", "type": "object",
            "properties": { "street": { "type": "string" }, "city": { "type": "string" } } } },
        "properties": {
            "name": { "type": "string" },
            "address": { "$ref": "#/$defs/address" },
            "contactMethod": { "type": "string", "enum": ["phone", "email"] },
            "phone": { "type": "string" },
            "email": { "type": "string" }
        },
        "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
        "if": { "properties": { "contactMethod": { "const": "phone" } }, "required": ["contactMethod"] },
        "then": { "required": ["phone"] },
        "else": { "required": ["email"] },
        "additionalProperties": false
    })
}

/// The schema `elicitation-sep1034-client-defaults` asks with: a default
/// for each kind of field.
pub fn defaults_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": { "type": "string", "description": "User name", "default": "John Doe" },
            "age": { "type": "integer", "description": "User age", "default": 30 },
            "score": { "type": "number", "description": "User score", "default": 95.5 },
            "status": { "type": "string", "description": "User status",
                        "enum": ["active", "inactive", "pending"], "default": "active" },
            "verified": { "type": "boolean", "description": "Verification status", "default": true }
        },
        "required": []
    })
}

pub struct Scenario {
    name: String,
    canary: String,
    /// `request-metadata`: the first request has been refused.
    refused: bool,
    /// Elicitations sent to the client: their id, and the call waiting on each.
    asked: HashMap<String, Value>,
    next_ask: u64,
}

impl Scenario {
    pub fn new(name: String, canary: Option<String>) -> Self {
        Scenario {
            name,
            canary: canary
                .unwrap_or_else(|| "http://127.0.0.1:9/canary/profile-schema.json".into()),
            refused: false,
            asked: HashMap::new(),
            next_ask: 1,
        }
    }

    /// Answers a request as the scenario's server would; `false` leaves it to
    /// the rest of the peer (`test/received`).
    pub fn request(&mut self, out: &Out, id: &Value, method: &str, params: &Value) -> bool {
        if method.starts_with("test/") {
            return false;
        }
        let outcome = match self.name.as_str() {
            "initialize" => self.initialize(method, params),
            "tools_call" => tools_call(method, params),
            "elicitation-sep1034-client-defaults" => {
                if method == "tools/call" {
                    return self.elicit(out, id);
                }
                legacy(
                    method,
                    json!([{ "name": "test_client_elicitation_defaults",
                    "description": "Tests that client applies defaults for omitted elicitation fields",
                    "inputSchema": { "type": "object", "properties": {}, "required": [] } }]),
                )
            }
            // Not the suite's: a tool that asks the client with the schema it is given.
            "ask" => {
                if method == "tools/call" {
                    let schema = params["arguments"]["schema"].clone();
                    return self.elicit_with(out, id, "Please answer the form", schema);
                }
                legacy(
                    method,
                    json!([{ "name": "ask", "description": "Asks the client with the schema given",
                             "inputSchema": { "type": "object",
                                              "properties": { "schema": { "type": "object" } } } }]),
                )
            }
            // Not the suite's either: a tool that answers with the client's roots.
            "roots" => {
                if method == "tools/call" {
                    let ask = format!("roots-{}", self.next_ask);
                    self.next_ask += 1;
                    self.asked.insert(ask.clone(), id.clone());
                    send(
                        out,
                        &json!({ "jsonrpc": "2.0", "id": ask, "method": "roots/list" }),
                    );
                    return true;
                }
                legacy(
                    method,
                    json!([{ "name": "roots", "description": "Lists the client's roots",
                             "inputSchema": { "type": "object" } }]),
                )
            }
            "json-schema-2020-12-preservation" => json_schema_preservation(method),
            "json-schema-ref-no-deref" => self.ref_no_deref(method),
            "request-metadata" => {
                if !self.refused {
                    self.refused = true;
                    let asked = params["_meta"]["io.modelcontextprotocol/protocolVersion"].clone();
                    let error = json!({ "code": -32022, "message": "Unsupported protocol version",
                                        "data": { "supported": [MODERN], "requested": asked } });
                    send(out, &json!({ "jsonrpc": "2.0", "id": id, "error": error }));
                    return true;
                }
                modern(method, |method| match method {
                    "tools/list" => Some(json!({ "tools": [] })),
                    "tools/call" => Some(json!({ "content": [] })),
                    _ => Some(json!({})),
                })
            }
            "sep-2322-client-request-state" => request_state(method, id, params),
            other => Err((-32601, format!("no such scenario: {other}"))),
        };
        answer(out, id, outcome);
        true
    }

    fn initialize(&self, method: &str, params: &Value) -> Result<Value, (i64, String)> {
        Ok(match method {
            "initialize" => {
                let asked = params["protocolVersion"].as_str().unwrap_or_default();
                let version = if INITIALIZE_ACCEPTS.contains(&asked) {
                    asked
                } else {
                    "2025-11-25"
                };
                json!({ "protocolVersion": version, "capabilities": {},
                        "serverInfo": { "name": "test-server", "version": "1.0.0" } })
            }
            "tools/list" => json!({ "tools": [] }),
            // What its HTTP server answers to anything else, the probe included.
            _ => json!({}),
        })
    }

    /// `tools/call` of the SEP-1034 scenario: asks the client with a schema
    /// of defaults; the call is answered when the client answers.
    fn elicit(&mut self, out: &Out, id: &Value) -> bool {
        self.elicit_with(
            out,
            id,
            "Test client default value handling - please accept with defaults",
            defaults_schema(),
        )
    }

    /// Asks the client `message` with `schema`; the call `id` is answered
    /// with what the client answers.
    fn elicit_with(&mut self, out: &Out, id: &Value, message: &str, schema: Value) -> bool {
        let ask = format!("elicit-{}", self.next_ask);
        self.next_ask += 1;
        self.asked.insert(ask.clone(), id.clone());
        let params = json!({ "message": message, "requestedSchema": schema });
        send(
            out,
            &json!({ "jsonrpc": "2.0", "id": ask, "method": "elicitation/create", "params": params }),
        );
        true
    }

    /// The client's answer to one of the scenario's elicitations; `false` if
    /// it is not one of them.
    pub fn answered(&mut self, out: &Out, id: &Value, message: &Value) -> bool {
        let Some(call) = id.as_str().and_then(|id| self.asked.remove(id)) else {
            return false;
        };
        let text = if id.as_str().is_some_and(|id| id.starts_with("roots-")) {
            format!("Roots: {}", message["result"]["roots"])
        } else {
            format!("Elicitation completed: {}", message["result"]["content"])
        };
        answer(
            out,
            &call,
            Ok(json!({ "content": [{ "type": "text", "text": text }] })),
        );
        true
    }

    fn ref_no_deref(&self, method: &str) -> Result<Value, (i64, String)> {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": { "userId": { "type": "string", "pattern": "^[a-z0-9-]+$" } },
            "properties": { "id": { "$ref": "#/$defs/userId" }, "profile": { "$ref": self.canary } },
            "required": ["id"]
        });
        modern(method, |method| match method {
            "tools/list" => Some(json!({ "ttlMs": 0, "cacheScope": "private", "tools": [
                { "name": "lookup_user", "description": "Look up a user profile by id",
                  "inputSchema": schema.clone() }] })),
            "tools/call" => Some(json!({ "content": [{ "type": "text", "text": "found" }] })),
            _ => None,
        })
    }
}

/// A legacy server of the official SDK with these tools.
fn legacy(method: &str, tools: Value) -> Result<Value, (i64, String)> {
    match method {
        "initialize" => Ok(json!({ "protocolVersion": "2025-11-25",
            "capabilities": { "tools": {} },
            "serverInfo": { "name": "conformance-scenario", "version": "1.0.0" } })),
        "tools/list" => Ok(json!({ "tools": tools })),
        "ping" => Ok(json!({})),
        other => Err((-32601, format!("Method not found: {other}"))),
    }
}

/// A 2026-07-28 server: `server/discover`, then `results` for the rest,
/// each result tagged complete.
fn modern(method: &str, results: impl Fn(&str) -> Option<Value>) -> Result<Value, (i64, String)> {
    if method == "server/discover" {
        return Ok(
            json!({ "resultType": "complete", "ttlMs": 0, "cacheScope": "private",
            "supportedVersions": [MODERN], "capabilities": { "tools": {} },
            "_meta": { "io.modelcontextprotocol/serverInfo": { "name": "conformance-scenario", "version": "1.0.0" } } }),
        );
    }
    let mut result =
        results(method).ok_or_else(|| (-32601, format!("Method not found: {method}")))?;
    match result.get("resultType") {
        None => result["resultType"] = json!("complete"),
        // Asked to leave the key out altogether.
        Some(Value::Null) => {
            result.as_object_mut().map(|r| r.remove("resultType"));
        }
        Some(_) => {}
    }
    Ok(result)
}

fn tools_call(method: &str, params: &Value) -> Result<Value, (i64, String)> {
    if method != "tools/call" {
        return legacy(
            method,
            json!([{ "name": "add_numbers", "description": "Add two numbers together",
            "inputSchema": { "type": "object", "properties": {
                "a": { "type": "number", "description": "First number" },
                "b": { "type": "number", "description": "Second number" } },
                "required": ["a", "b"] } }]),
        );
    }
    let (a, b) = (&params["arguments"]["a"], &params["arguments"]["b"]);
    let sum = a.as_f64().unwrap_or(f64::NAN) + b.as_f64().unwrap_or(f64::NAN);
    Ok(
        json!({ "content": [{ "type": "text", "text": format!("The sum of {a} and {b} is {sum}") }] }),
    )
}

fn json_schema_preservation(method: &str) -> Result<Value, (i64, String)> {
    if method == "tools/call" {
        return Ok(json!({ "content": [{ "type": "text", "text": "echoed" }] }));
    }
    legacy(
        method,
        json!([
            { "name": "json_schema_2020_12_tool", "description": "Tool with JSON Schema 2020-12 features",
              "inputSchema": rich_schema() },
            { "name": "json_schema_echo",
              "description": "Echoes back an arbitrary JSON Schema object so the harness can observe what the client preserved.",
              "inputSchema": { "type": "object", "properties": { "schema": { "type": "object" } }, "required": ["schema"] } }
        ]),
    )
}

/// The multi round-trip scenario's tools.
fn request_state(method: &str, id: &Value, params: &Value) -> Result<Value, (i64, String)> {
    let confirm = |message: &str| {
        json!({ "confirm": { "method": "elicitation/create", "params": { "message": message,
            "requestedSchema": { "type": "object", "properties": { "confirmed": { "type": "boolean" } } } } } })
    };
    modern(method, |method| match method {
        "tools/list" => {
            let names = [
                "test_mrtr_echo_state",
                "test_mrtr_no_state",
                "test_mrtr_unrelated",
                "test_mrtr_no_result_type",
            ];
            let tools: Vec<Value> = names
                .iter()
                .map(|name| json!({ "name": name, "inputSchema": { "type": "object", "properties": {} } }))
                .collect();
            Some(json!({ "ttlMs": 0, "cacheScope": "private", "tools": tools }))
        }
        "tools/call" => {
            let retried = params.get("inputResponses").is_some();
            let text = |t: &str| json!({ "content": [{ "type": "text", "text": t }] });
            Some(
                match (params["name"].as_str().unwrap_or_default(), retried) {
                    ("test_mrtr_echo_state", false) => {
                        // Opaque to the client: JSON text it must echo to the byte.
                        let state = json!({ "nonce": "a1b2-c3", "originalId": id }).to_string();
                        json!({ "resultType": "input_required",
                            "inputRequests": confirm("Please confirm to continue"), "requestState": state })
                    }
                    ("test_mrtr_echo_state", true) => text("echo-state-ok"),
                    ("test_mrtr_no_state", false) => json!({ "resultType": "input_required",
                    "inputRequests": confirm("Please confirm to continue (no state test)") }),
                    ("test_mrtr_no_state", true) => text("no-state-ok"),
                    ("test_mrtr_unrelated", _) => text("unrelated-ok"),
                    // No resultType at all: the client must take it as complete.
                    ("test_mrtr_no_result_type", false) => {
                        return Some(
                            json!({ "content": [{ "type": "text", "text": "no-result-type-test-ok" }],
                                        "resultType": null }),
                        );
                    }
                    (_, _) => text("unexpected-retry"),
                },
            )
        }
        _ => None,
    })
}
