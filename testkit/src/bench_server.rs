//! `stdio-mcp-bench-server`: a fast, std-only MCP server for the benchmarks.
//!
//! It answers `initialize`, `ping`, `tools/list` (`echo`, its schema ten typed
//! properties, for the validation row) and `tools/call` with the tools `echo`
//! (returns its arguments), `blob` (a text of `bytes` bytes of `x`) and `notify`
//! (`count` progress notifications, then its result). Answers are buffered and
//! flushed whenever no more input is waiting, so pipelined requests cost few writes.
//! With `--modern` it also answers the 2026-07-28 probe `server/discover`, so a
//! client speaks that revision to it; without, the probe is an unknown method.

use std::io::{self, BufRead, BufReader, BufWriter, Write};

use serde::Deserialize;
use serde_json::{json, Value};

#[derive(Deserialize)]
struct Request {
    id: Option<Value>,
    method: String,
    #[serde(default)]
    params: Params,
}

/// Only what the server uses: everything else in the params, the protocol
/// fields of a 2026-07-28 request's `_meta` included, is skipped, not built.
#[derive(Deserialize, Default)]
struct Params {
    #[serde(rename = "protocolVersion")]
    protocol_version: Option<String>,
    name: Option<String>,
    #[serde(default)]
    arguments: Value,
    #[serde(rename = "_meta")]
    meta: Option<Meta>,
}

#[derive(Deserialize, Default)]
struct Meta {
    #[serde(rename = "progressToken", default)]
    progress_token: Value,
}

fn main() -> io::Result<()> {
    let mut input = BufReader::with_capacity(64 * 1024, io::stdin().lock());
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let mut line = Vec::new();
    // The blob text, kept between calls: allocating (and page-faulting) 8 MiB per
    // call made the server's cost depend on where its allocator happened to trim
    // its heap, which differed with the byte layout of each client's request.
    let mut blob = Vec::new();
    let modern = std::env::args().any(|a| a == "--modern");
    // `--tools N`: N tools listed (echo, then look-alikes), as a big server's.
    let listed: usize = std::env::args()
        .skip_while(|a| a != "--tools")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    loop {
        // Flush before we could block on input: never sit on an answer.
        if input.buffer().is_empty() {
            out.flush()?;
        }
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        let Ok(request) = serde_json::from_slice::<Request>(&line) else {
            continue;
        };
        let Some(id) = request.id else {
            continue; // a notification
        };
        let result = match request.method.as_str() {
            "initialize" => json!({
                "protocolVersion": request.params.protocol_version.as_deref().unwrap_or("2025-11-25"),
                "capabilities": { "tools": {} },
                "serverInfo": { "name": "stdio-mcp-bench-server", "version": "1" }
            }),
            "ping" => json!({}),
            "server/discover" if modern => json!({
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": { "tools": {} },
                "_meta": { "io.modelcontextprotocol/serverInfo": { "name": "stdio-mcp-bench-server", "version": "1" } }
            }),
            "tools/list" => {
                let kinds = ["string", "integer", "number", "boolean", "string"];
                let properties: serde_json::Map<String, Value> = (0..10)
                    .map(|i| (format!("p{i}"), json!({ "type": kinds[i % 5] })))
                    .collect();
                let tools: Vec<Value> = (0..listed)
                    .map(|i| {
                        let mut tool = json!({
                            "name": "echo",
                            "inputSchema": { "type": "object", "properties": properties, "required": ["p0", "p1"] }
                        });
                        if i > 0 {
                            tool["name"] = json!(format!("tool-{i}"));
                            tool["description"] = json!(format!("Tool number {i}: does what its schema says."));
                            tool["annotations"] = json!({ "readOnlyHint": i % 2 == 0, "openWorldHint": false });
                        }
                        tool
                    })
                    .collect();
                json!({ "tools": tools })
            }
            "tools/call" => {
                let args = &request.params.arguments;
                match request.params.name.as_deref() {
                    Some("blob") => {
                        blob.resize(args["bytes"].as_u64().unwrap_or(0) as usize, b'x');
                        write_blob(&mut out, &id, &blob)?;
                        continue;
                    }
                    Some("notify") => {
                        let token = request
                            .params
                            .meta
                            .as_ref()
                            .map_or(&Value::Null, |m| &m.progress_token);
                        for i in 0..args["count"].as_u64().unwrap_or(0) {
                            let params = json!({ "progressToken": token, "progress": i });
                            let note = json!({ "jsonrpc": "2.0", "method": "notifications/progress", "params": params });
                            write_line(&mut out, &note)?;
                        }
                        json!({ "content": [{ "type": "text", "text": "done" }] })
                    }
                    _ => json!({ "content": [{ "type": "text", "text": args.to_string() }] }),
                }
            }
            // Held: never answered (the scale bench keeps many requests pending).
            "bench/hold" => continue,
            _ => {
                let error = json!({ "code": -32601, "message": "Method not found" });
                write_line(
                    &mut out,
                    &json!({ "jsonrpc": "2.0", "id": id, "error": error }),
                )?;
                continue;
            }
        };
        write_line(
            &mut out,
            &json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        )?;
    }
}

fn write_line(out: &mut impl Write, message: &Value) -> io::Result<()> {
    serde_json::to_writer(&mut *out, message)?;
    out.write_all(b"\n")
}

/// `{"content":[{"type":"text","text":TEXT}]}` as the result for `id`, where TEXT
/// is `x` repeated (nothing to escape), written without building a `Value`.
fn write_blob(out: &mut impl Write, id: &Value, text: &[u8]) -> io::Result<()> {
    out.write_all(br#"{"jsonrpc":"2.0","id":"#)?;
    serde_json::to_writer(&mut *out, id)?;
    out.write_all(br#","result":{"content":[{"type":"text","text":""#)?;
    out.write_all(text)?;
    out.write_all(b"\"}]}}\n")
}
