//! A host that installs an OpenTelemetry SDK sees each request to a stdio
//! server as a span, and its duration as a metric, by the semantic conventions
//! for MCP; the server receives the trace context in `params._meta`.
//!
//! ```text
//! cargo run --example opentelemetry --features opentelemetry
//! cargo run --example opentelemetry --features opentelemetry -- npx -y @modelcontextprotocol/server-everything
//! ```
//!
//! With no command it starts itself again as the demo server
//! (`examples/support/demo.rs`). It prints each span (`initialize`,
//! `tools/list`, `tools/call echo`, …, all children of the host's
//! `answer a question` span) and then the two histograms, with the SDK's
//! stdout exporters; a real host would install an OTLP exporter instead.

#[path = "support/demo.rs"]
mod demo;

use opentelemetry::propagation::TextMapCompositePropagator;
use opentelemetry::trace::{FutureExt, TraceContextExt, Tracer};
use opentelemetry::{global, Context};
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use opentelemetry_sdk::trace::SdkTracerProvider;
use serde_json::json;
use stdio_mcp::client::Client;
use stdio_mcp::Transport;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if demo::serve_if_asked() {
        return Ok(());
    }
    // The host's SDK, installed before any client connects: a client takes
    // its tracer and meters from the global providers when it connects.
    // The batch processor exports from a thread of its own; the simple one
    // would block on a `futures` executor inside ours.
    let tracers = SdkTracerProvider::builder()
        .with_batch_exporter(opentelemetry_stdout::SpanExporter::default())
        .build();
    global::set_tracer_provider(tracers.clone());
    let meters = SdkMeterProvider::builder()
        .with_reader(
            PeriodicReader::builder(opentelemetry_stdout::MetricExporter::default()).build(),
        )
        .build();
    global::set_meter_provider(meters.clone());
    // W3C trace context and baggage: what a server reads from `_meta`.
    global::set_text_map_propagator(TextMapCompositePropagator::new(vec![
        Box::new(TraceContextPropagator::new()),
        Box::new(BaggagePropagator::new()),
    ]));

    let command: Vec<String> = match std::env::args().skip(1).collect::<Vec<_>>() {
        args if args.is_empty() => vec![
            std::env::current_exe()?.display().to_string(),
            "--serve".into(),
        ],
        args => args,
    };
    // The host's own span: every request below is its child.
    let host = global::tracer("my-host").start("answer a question");
    let context = Context::current_with_span(host);
    futures::executor::block_on(
        async {
            let client = Client::connect(Transport::builder(command)).await?;
            let tools = client.list_tools().await?;
            if tools.iter().any(|t| t.name == "echo") {
                let result = client
                    .call_tool("echo", json!({ "message": "traced" }))
                    .await?;
                eprintln!("echo answered: {}", result.text());
            }
            client.close().await?;
            Ok::<(), stdio_mcp::Error>(())
        }
        .with_context(context.clone()),
    )?;
    context.span().end();
    tracers.shutdown()?;
    meters.shutdown()?;
    Ok(())
}
