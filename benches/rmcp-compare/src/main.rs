//! rmcp (its child-process client, on Tokio) and stdio-mcp, same bench server,
//! same workloads, one run. Usage, from the repository root:
//!
//! ```sh
//! cargo build --release --bin stdio-mcp-bench-server
//! cd benches/rmcp-compare && taskset -c 0 cargo run --release
//! ```
//!
//! The two take turns in `BLOCKS` blocks (who goes first alternates: heap state
//! and a drift of the machine then hit both) and each figure is the median block.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use futures::stream::{FuturesUnordered, StreamExt};
use rmcp::model::{CallToolRequestParams, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Value};
use stdio_mcp::Transport;

fn server_path() -> String {
    std::env::var("BENCH_SERVER").unwrap_or_else(|_| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../target/release/stdio-mcp-bench-server"
        )
        .to_owned()
    })
}

#[derive(Clone, Default)]
struct Counter(Arc<AtomicU64>);

impl ClientHandler for Counter {
    async fn on_progress(
        &self,
        _params: ProgressNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

async fn rmcp_client(counter: Counter) -> RunningService<RoleClient, Counter> {
    let transport = TokioChildProcess::new(tokio::process::Command::new(server_path())).unwrap();
    counter.serve(transport).await.unwrap()
}

fn args(v: Value) -> Option<serde_json::Map<String, Value>> {
    v.as_object().cloned()
}

fn call(name: &'static str, arguments: Value) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(name);
    params.arguments = args(arguments);
    params
}

/// Calls per second with 256 calls in flight, `PIPE` calls in all.
async fn pipelined<T, E: std::fmt::Debug, Fut>(mut call: impl FnMut() -> Fut) -> f64
where
    Fut: std::future::Future<Output = Result<T, E>>,
{
    let start = Instant::now();
    let mut in_flight = FuturesUnordered::new();
    let mut sent = 0;
    while sent < PIPE || !in_flight.is_empty() {
        while in_flight.len() < 256 && sent < PIPE {
            in_flight.push(call());
            sent += 1;
        }
        in_flight.next().await.unwrap().unwrap();
    }
    PIPE as f64 / start.elapsed().as_secs_f64()
}

const SEQ: u64 = 20_000;
const PIPE: u64 = 200_000;
const BLOB: u64 = 8 << 20;
const BLOB_ROUNDS: u64 = 20;
const NOTIFY: u64 = 200_000;
const SPAWNS: u64 = 100;
const BLOCKS: usize = 5;

/// rmcp's figures, and how many progress notifications it had not delivered
/// when the call's result arrived.
async fn rmcp_figures() -> (Vec<f64>, u64) {
    let counter = Counter::default();
    let client = rmcp_client(counter.clone()).await;
    let start = Instant::now();
    for _ in 0..SEQ {
        client.list_tools(None).await.unwrap();
    }
    let seq = start.elapsed().as_secs_f64() * 1e6 / SEQ as f64;

    let pipe =
        pipelined(|| async { client.call_tool(call("echo", json!({}))).await.map(drop) }).await;

    let start = Instant::now();
    for _ in 0..BLOB_ROUNDS {
        client
            .call_tool(call("blob", json!({ "bytes": BLOB })))
            .await
            .unwrap();
    }
    let blob = (BLOB * BLOB_ROUNDS) as f64 / start.elapsed().as_secs_f64() / 1e6;

    let start = Instant::now();
    let mut params = call("notify", json!({ "count": NOTIFY }));
    params.meta = Some(serde_json::from_value(json!({ "progressToken": 1 })).unwrap());
    client.call_tool(params).await.unwrap();
    let notify = counter.0.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64();
    let lost = NOTIFY - counter.0.load(Ordering::Relaxed);
    client.cancel().await.ok();

    let start = Instant::now();
    for _ in 0..SPAWNS {
        let c = rmcp_client(Counter::default()).await;
        c.cancel().await.ok();
    }
    let spawn = start.elapsed().as_secs_f64() * 1e3 / SPAWNS as f64;
    (vec![seq, pipe, blob, notify, spawn], lost)
}

async fn ours_figures() -> Vec<f64> {
    let seen = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&seen);
    let t = Transport::builder([server_path()])
        .on_notification(move |_| {
            counter.fetch_add(1, Ordering::Relaxed);
        })
        .spawn()
        .unwrap();
    let init = json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "b", "version": "1" } });
    t.send_request("initialize", Some(init.clone()))
        .await
        .unwrap();
    let start = Instant::now();
    for _ in 0..SEQ {
        t.send_request("tools/list", None).await.unwrap();
    }
    let seq = start.elapsed().as_secs_f64() * 1e6 / SEQ as f64;

    let echo = json!({ "name": "echo", "arguments": {} });
    let pipe = pipelined(|| t.send_request("tools/call", Some(echo.clone()))).await;

    let start = Instant::now();
    for _ in 0..BLOB_ROUNDS {
        t.send_request(
            "tools/call",
            Some(json!({ "name": "blob", "arguments": { "bytes": BLOB } })),
        )
        .await
        .unwrap();
    }
    let blob = (BLOB * BLOB_ROUNDS) as f64 / start.elapsed().as_secs_f64() / 1e6;

    let start = Instant::now();
    let params = json!({ "name": "notify", "arguments": { "count": NOTIFY }, "_meta": { "progressToken": 1 } });
    t.send_request("tools/call", Some(params)).await.unwrap();
    let notify = seen.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64();
    t.close().await.unwrap();

    let start = Instant::now();
    for _ in 0..SPAWNS {
        let t = Transport::builder([server_path()]).spawn().unwrap();
        t.send_request("initialize", Some(init.clone()))
            .await
            .unwrap();
        t.send_notification("notifications/initialized", None)
            .unwrap();
        t.close().await.unwrap();
    }
    let spawn = start.elapsed().as_secs_f64() * 1e3 / SPAWNS as f64;
    vec![seq, pipe, blob, notify, spawn]
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut rmcp_blocks = Vec::new();
    let mut ours_blocks = Vec::new();
    let mut lost = Vec::new();
    for block in 0..BLOCKS {
        let rmcp_first = block % 2 == 0;
        if !rmcp_first {
            ours_blocks.push(ours_figures().await);
        }
        let (figures, not_delivered) = rmcp_figures().await;
        rmcp_blocks.push(figures);
        lost.push(not_delivered);
        if rmcp_first {
            ours_blocks.push(ours_figures().await);
        }
    }
    let (rmcp, ours) = (medians(&rmcp_blocks), medians(&ours_blocks));
    println!(
        "rmcp: progress notifications not delivered before the result, per block: {lost:?} of {NOTIFY}"
    );
    let names = [
        ("seq (tools/list)", "us/call"),
        ("pipe (256 in flight)", "calls/s"),
        ("blob 8 MiB", "MB/s"),
        ("notify", "notes/s"),
        ("spawn+init+close", "ms"),
    ];
    println!("| workload | unit | rmcp 3.11 | stdio-mcp | stdio-mcp advantage |");
    println!("|---|---|---|---|---|");
    for (i, (name, unit)) in names.iter().enumerate() {
        let lower_is_better = *unit == "us/call" || *unit == "ms";
        let advantage = if lower_is_better {
            rmcp[i] / ours[i]
        } else {
            ours[i] / rmcp[i]
        };
        println!(
            "| {name} | {unit} | {:.2} | {:.2} | {advantage:.2}x |",
            rmcp[i], ours[i]
        );
    }
}

/// The median of each column over the blocks.
fn medians(blocks: &[Vec<f64>]) -> Vec<f64> {
    (0..blocks[0].len())
        .map(|i| {
            let mut column: Vec<f64> = blocks.iter().map(|b| b[i]).collect();
            column.sort_by(f64::total_cmp);
            column[column.len() / 2]
        })
        .collect()
}
