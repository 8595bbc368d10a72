//! What the `opentelemetry` feature costs a call once a host installs an SDK:
//! a tool call by a client connected with no provider installed (the API's
//! no-op tracer, meter and propagator) against one connected with the SDK's
//! tracer (batch processor, in-memory exporter), meter (in-memory exporter)
//! and the W3C propagators, in alternating blocks, in one process. (A client
//! takes the providers when it connects; the tracer provider is set back to
//! the no-op one after, which the traced client does not see.)
//!
//! `taskset -c 0 cargo bench --bench opentelemetry --features opentelemetry`.
//! The feature off against on with no provider is `scripts/bench-against
//! opentelemetry` (two builds, one run). Both in docs/performance.md.

use std::time::Instant;

use opentelemetry::global;
use opentelemetry::propagation::TextMapCompositePropagator;
use opentelemetry::trace::noop::NoopTracerProvider;
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use serde_json::json;
use stdio_mcp::client::Client;
use stdio_mcp::Transport;
use stdio_mcp_testkit::alternate;

fn server_exe() -> &'static str {
    static EXE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    EXE.get_or_init(|| stdio_mcp_testkit::exe("stdio-mcp-bench-server"))
}

fn connect() -> Client {
    futures::executor::block_on(Client::connect(Transport::builder([server_exe()]))).unwrap()
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let blocks = std::env::var("BENCH_BLOCKS")
        .ok()
        .and_then(|b| b.parse().ok())
        .unwrap_or(9);
    // A client takes its tracer and meter when it connects.
    let bare = connect();
    let spans = InMemorySpanExporter::default();
    let tracers = SdkTracerProvider::builder()
        .with_batch_exporter(spans.clone())
        .build();
    global::set_tracer_provider(tracers.clone());
    let metrics = InMemoryMetricExporter::default();
    let meters = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(metrics.clone()).build())
        .build();
    global::set_meter_provider(meters.clone());
    global::set_text_map_propagator(TextMapCompositePropagator::new(vec![
        Box::new(TraceContextPropagator::new()),
        Box::new(BaggagePropagator::new()),
    ]));
    let traced = connect();
    global::set_tracer_provider(NoopTracerProvider::new());

    let calls = 2_000u64;
    let time = |client: &Client| {
        futures::executor::block_on(async {
            let start = Instant::now();
            for _ in 0..calls {
                client.call_tool("echo", json!({ "n": 1 })).await.unwrap();
            }
            start.elapsed().as_secs_f64() * 1e6 / calls as f64
        })
    };
    let (a, b, ratio) = alternate(blocks, || time(&bare), || time(&traced));
    tracers.force_flush().unwrap();
    let exported = spans.get_finished_spans().unwrap().len();
    println!("| row | no provider | SDK, in-memory exporters | SDK / none (median of blocks) |");
    println!("|---|---|---|---|");
    println!("| call_tool | {a:.2} µs | {b:.2} µs | {ratio:.3} |");
    eprintln!("({exported} spans exported; the batch queue drops what it cannot hold)");
    let _ = tracers.shutdown();
    let _ = meters.shutdown();
}
