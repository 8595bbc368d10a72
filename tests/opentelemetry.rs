//! With the `opentelemetry` feature, each request a client sends is a CLIENT
//! span and a duration by OpenTelemetry's semantic conventions for MCP, and the
//! server receives the caller's trace context in `params._meta`
//! (`cargo test --features opentelemetry --test opentelemetry`).
//!
//! The SDK's in-memory exporters are installed once for the whole binary; each
//! test runs under a span of its own and reads only the spans of its trace.
#![cfg(feature = "opentelemetry")]

mod common;

use std::future::Future;
use std::sync::OnceLock;
use std::time::Duration;

use common::{peer, within};
use opentelemetry::baggage::BaggageExt;
use opentelemetry::context::FutureExt;
use opentelemetry::propagation::TextMapCompositePropagator;
use opentelemetry::trace::{SpanId, SpanKind, Status, TraceContextExt, TraceId, Tracer};
use opentelemetry::{global, Context, KeyValue, Value as OtelValue};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use stdio_mcp::client::{CallOptions, Client, Era, ListenFilter};
use stdio_mcp::{ErrorKind, ServerRequest};

/// What every test reads: the finished spans and the exported metrics.
struct Installed {
    spans: InMemorySpanExporter,
    tracers: SdkTracerProvider,
    metrics: InMemoryMetricExporter,
    meters: SdkMeterProvider,
}

fn installed() -> &'static Installed {
    static INSTALLED: OnceLock<Installed> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let spans = InMemorySpanExporter::default();
        // The batch processor: the simple one blocks on a `futures` executor
        // of its own, which panics inside `futures::executor::block_on`.
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
        Installed {
            spans,
            tracers,
            metrics,
            meters,
        }
    })
}

/// Runs `body` under a host span of its own (named `test`); returns its
/// output and the spans of its trace once the host span has ended.
async fn traced<T, F: Future<Output = T>>(test: &str, body: F) -> (T, Trace) {
    let installed = installed();
    let tracer = global::tracer("the-host");
    let host = tracer.start(test.to_owned());
    let context = Context::current_with_span(host);
    let trace_id = context.span().span_context().trace_id();
    let host_id = context.span().span_context().span_id();
    let output = within(30, body.with_context(context.clone())).await;
    context.span().end();
    installed.tracers.force_flush().unwrap();
    let spans = installed
        .spans
        .get_finished_spans()
        .unwrap()
        .into_iter()
        .filter(|s| s.span_context.trace_id() == trace_id)
        .collect();
    (
        output,
        Trace {
            spans,
            trace_id,
            host_id,
        },
    )
}

struct Trace {
    spans: Vec<SpanData>,
    trace_id: TraceId,
    host_id: SpanId,
}

impl Trace {
    /// The one span of that name (a failure if there are none or several).
    fn one(&self, name: &str) -> &SpanData {
        let found: Vec<&SpanData> = self.spans.iter().filter(|s| s.name == name).collect();
        assert_eq!(found.len(), 1, "spans named {name:?}: {:#?}", self.names());
        found[0]
    }

    fn all(&self, name: &str) -> Vec<&SpanData> {
        self.spans.iter().filter(|s| s.name == name).collect()
    }

    fn names(&self) -> Vec<String> {
        self.spans.iter().map(|s| s.name.to_string()).collect()
    }

    /// The traceparent a server saw for a request of this span.
    fn traceparent_of(&self, span: &SpanData) -> String {
        format!("00-{}-{}-01", self.trace_id, span.span_context.span_id())
    }
}

fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.to_string())
}

/// Every attribute the conventions ask of a successful request, at once.
fn assert_request(span: &SpanData, method: &str, version: &str, parent: SpanId) {
    assert_eq!(span.span_kind, SpanKind::Client, "{span:?}");
    assert_eq!(span.parent_span_id, parent, "{} parent", span.name);
    assert_eq!(attribute(span, "mcp.method.name").as_deref(), Some(method));
    assert_eq!(
        attribute(span, "network.transport").as_deref(),
        Some("pipe")
    );
    assert_eq!(
        attribute(span, "mcp.protocol.version").as_deref(),
        Some(version),
        "{span:?}"
    );
    let id = attribute(span, "jsonrpc.request.id").expect("jsonrpc.request.id");
    assert!(id.parse::<u64>().is_ok(), "{id}");
    assert!(
        attribute(span, "mcp.session.id").is_none(),
        "stdio has no session id"
    );
}

fn assert_failed(span: &SpanData, error_type: &str, code: Option<&str>) {
    assert_eq!(
        attribute(span, "error.type").as_deref(),
        Some(error_type),
        "{span:?}"
    );
    assert_eq!(
        attribute(span, "rpc.response.status_code").as_deref(),
        code,
        "{span:?}"
    );
    assert!(matches!(span.status, Status::Error { .. }), "{span:?}");
}

/// The scenario each executor runs: connect, a tool call, a raw request the
/// server answers back with its `_meta`, a prompt and a resource, all under
/// the host's span.
async fn calls_under_the_hosts_span(executor: &str) {
    let test = format!("calls under {executor}");
    let ((received, baggage), trace) = traced(&test, async {
        let client = Client::builder(peer(&["--catalog", "otel"]))
            .era(Era::Legacy)
            .connect()
            .await
            .unwrap();
        let echoed = client
            .call_tool("echo", json!({ "message": "hi" }))
            .await
            .unwrap();
        assert!(!echoed.is_error);
        let answered = client
            .request("test/echo", Some(json!({ "k": "v" })), CallOptions::new())
            .await
            .unwrap();
        // Baggage set by the host travels too.
        let with_baggage = Context::current().with_baggage(vec![KeyValue::new("tenant", "blue")]);
        let baggage = client
            .request("test/echo", Some(json!({ "b": 1 })), CallOptions::new())
            .with_context(with_baggage)
            .await
            .unwrap();
        client.close().await.unwrap();
        (answered, baggage)
    })
    .await;
    let version = "2025-11-25";
    let initialize = trace.one("initialize");
    assert_request(initialize, "initialize", version, trace.host_id);
    let call = trace.one("tools/call echo");
    assert_request(call, "tools/call", version, trace.host_id);
    assert_eq!(attribute(call, "gen_ai.tool.name").as_deref(), Some("echo"));
    assert_eq!(
        attribute(call, "gen_ai.operation.name").as_deref(),
        Some("execute_tool")
    );
    assert!(attribute(call, "error.type").is_none(), "{call:?}");
    assert_eq!(call.status, Status::Unset);
    let echoes = trace.all("test/echo");
    assert_eq!(echoes.len(), 2, "{:?}", trace.names());
    for echo in &echoes {
        assert_request(echo, "test/echo", version, trace.host_id);
        assert!(attribute(echo, "gen_ai.operation.name").is_none());
    }
    // The server received the context of the request's own span.
    assert!(
        echoes
            .iter()
            .any(|s| trace.traceparent_of(s) == received["_meta"]["traceparent"]),
        "no span of this trace sent {received}"
    );
    assert_eq!(received["k"], "v", "the params are kept: {received}");
    assert_eq!(baggage["_meta"]["baggage"], "tenant=blue", "{baggage}");
}

#[test]
fn a_request_is_a_client_span_under_the_hosts_span_with_futures_block_on() {
    futures::executor::block_on(calls_under_the_hosts_span("futures::executor"));
}

#[test]
fn a_request_is_a_client_span_under_the_hosts_span_with_smol() {
    smol::block_on(calls_under_the_hosts_span("smol"));
}

#[test]
fn a_request_is_a_client_span_under_the_hosts_span_with_async_std() {
    async_std::task::block_on(calls_under_the_hosts_span("async-std"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_is_a_client_span_under_the_hosts_span_with_tokio() {
    calls_under_the_hosts_span("tokio").await;
}

/// A prompt and a resource: the prompt's name is the target, the resource's
/// URI an attribute only (never in the name: its cardinality is unbounded).
#[test]
fn a_prompt_names_its_span_and_a_resource_is_an_attribute() {
    futures::executor::block_on(async {
        let (_, trace) = traced("prompt and resource", async {
            let client = Client::builder(peer(&["--catalog", "otel"]))
                .era(Era::Legacy)
                .connect()
                .await
                .unwrap();
            let prompts = client.list_prompts().await.unwrap();
            let resources = client.list_resources().await.unwrap();
            client
                .get_prompt(&prompts[0].name, json!({ "who": "otel" }))
                .await
                .unwrap();
            client.read_resource(&resources[0].uri).await.unwrap();
            client.close().await.unwrap();
            (prompts[0].name.clone(), resources[0].uri.clone())
        })
        .await;
        let prompt = trace
            .spans
            .iter()
            .find(|s| s.name.starts_with("prompts/get "))
            .unwrap_or_else(|| panic!("{:?}", trace.names()));
        assert_eq!(
            Some(prompt.name.trim_start_matches("prompts/get ").to_owned()),
            attribute(prompt, "gen_ai.prompt.name")
        );
        let read = trace.one("resources/read");
        assert!(attribute(read, "mcp.resource.uri").is_some(), "{read:?}");
    });
}

/// Each class of failure: a JSON-RPC error, a tool's own error result (a
/// task's, read at its end), a timeout, a server that exited; and a caller's own `traceparent` is kept.
#[test]
fn each_failure_has_its_error_type_and_an_error_status() {
    futures::executor::block_on(async {
        let (received, trace) = traced("failures", async {
            let client = Client::builder(peer(&["--tasks"]))
                .era(Era::Legacy)
                .connect()
                .await
                .unwrap();
            let rpc = client
                .call_tool("add", json!({ "a": "x" }))
                .await
                .unwrap_err();
            assert_eq!(rpc.kind(), ErrorKind::Rpc);
            let reported = client
                .call_tool("job", json!({ "outcome": "error_result" }))
                .await
                .unwrap();
            assert!(reported.is_error, "{reported:?}");
            let late = client
                .request(
                    "test/never",
                    None,
                    CallOptions::new().timeout(Duration::from_millis(50)),
                )
                .await
                .unwrap_err();
            assert_eq!(late.kind(), ErrorKind::Timeout);
            let own = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
            let received = client
                .request(
                    "test/echo",
                    None,
                    CallOptions::new().meta(json!({ "traceparent": own })),
                )
                .await
                .unwrap();
            assert_eq!(received["_meta"]["traceparent"], own, "{received}");
            let gone = client
                .request("test/exit", Some(json!({ "code": 3 })), CallOptions::new())
                .await
                .unwrap_err();
            assert_eq!(gone.kind(), ErrorKind::Exited, "{gone}");
            received
        })
        .await;
        let rpc = trace.one("tools/call add");
        assert_failed(rpc, "-32602", Some("-32602"));
        assert_eq!(
            rpc.status,
            Status::error("add needs numbers a and b"),
            "the JSON-RPC error's message"
        );
        assert_failed(trace.one("tools/call job"), "tool_error", None);
        assert_failed(trace.one("test/never"), "timeout", None);
        assert_failed(trace.one("test/exit"), "exited", None);
        assert!(attribute(trace.one("test/echo"), "error.type").is_none());
        assert!(received["_meta"]["traceparent"].is_string());
    });
}

/// A tool call that becomes a task is one span, its polls its children, in
/// both wires; a 2026-07-28 request retried with the answers to the input
/// it asked for has each retry as a child of the call's span.
#[test]
fn a_tasks_polls_and_a_requests_retries_are_children_of_the_call() {
    futures::executor::block_on(async {
        for (era, flags) in [
            (Era::Legacy, &["--tasks"][..]),
            (Era::Modern, &["--tasks", "--discover", "modern"][..]),
        ] {
            let (_, trace) = traced(&format!("task {era:?}"), async {
                let client = Client::builder(peer(flags))
                    .era(era)
                    .connect()
                    .await
                    .unwrap();
                let done = client
                    .call_tool("job", json!({ "polls": 2 }))
                    .await
                    .unwrap();
                assert!(!done.is_error, "{done:?}");
                client.close().await.unwrap();
            })
            .await;
            let call = trace.one("tools/call job");
            assert_eq!(call.parent_span_id, trace.host_id);
            let polls: Vec<&SpanData> = trace
                .spans
                .iter()
                .filter(|s| s.name.starts_with("tasks/"))
                .collect();
            assert!(!polls.is_empty(), "{era:?}: {:?}", trace.names());
            for poll in polls {
                assert_eq!(
                    poll.parent_span_id,
                    call.span_context.span_id(),
                    "{era:?}: {} is not under the call",
                    poll.name
                );
            }
        }
        let (done, trace) = traced("retries", async {
            let client = Client::builder(peer(&["--discover", "modern"]))
                .on_elicitation(|_: ServerRequest| async {
                    Ok(json!({ "action": "accept", "content": {} }))
                })
                .connect()
                .await
                .unwrap();
            let done = client
                .request(
                    "test/mrtr",
                    Some(json!({ "kinds": ["elicitation/create"], "rounds": 2 })),
                    CallOptions::new(),
                )
                .await
                .unwrap();
            client.close().await.unwrap();
            done
        })
        .await;
        assert_eq!(done["rounds"], 2);
        let tries = trace.all("test/mrtr");
        assert_eq!(tries.len(), 3, "{:?}", trace.names());
        let call = tries
            .iter()
            .find(|s| s.parent_span_id == trace.host_id)
            .expect("the call's span under the host's");
        let retries: Vec<_> = tries
            .iter()
            .filter(|s| s.parent_span_id == call.span_context.span_id())
            .collect();
        assert_eq!(retries.len(), 2, "both retries under the call");
        let ids: std::collections::HashSet<_> = tries
            .iter()
            .map(|s| attribute(s, "jsonrpc.request.id"))
            .collect();
        assert_eq!(ids.len(), 3, "each try its own id");
        assert_request(call, "test/mrtr", "2026-07-28", trace.host_id);
    });
}

/// Both histograms, with the conventions' unit, buckets and attributes.
#[test]
fn operations_and_sessions_are_measured_with_the_conventions_buckets() {
    futures::executor::block_on(async {
        let installed = installed();
        within(30, async {
            let client = Client::builder(peer(&[]))
                .era(Era::Legacy)
                .connect()
                .await
                .unwrap();
            client
                .call_tool("countdown", json!({ "from": 1 }))
                .await
                .unwrap();
            client.close().await.unwrap();
        })
        .await;
        installed.meters.force_flush().unwrap();
        let exported = installed.metrics.get_finished_metrics().unwrap();
        let buckets = [
            0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
        ];
        let mut operation = None;
        let mut session = None;
        for metric in exported
            .iter()
            .flat_map(|r| r.scope_metrics())
            .filter(|s| s.scope().name() == "stdio-mcp")
            .flat_map(|s| s.metrics())
        {
            let AggregatedMetrics::F64(MetricData::Histogram(histogram)) = metric.data() else {
                panic!("{} is not an f64 histogram", metric.name());
            };
            assert_eq!(metric.unit(), "s", "{}", metric.name());
            for point in histogram.data_points() {
                assert_eq!(point.bounds().collect::<Vec<_>>(), buckets);
                let attributes: Vec<(String, String)> = point
                    .attributes()
                    .map(|kv| (kv.key.to_string(), kv.value.to_string()))
                    .collect();
                let has = |k: &str, v: &str| attributes.contains(&(k.to_owned(), v.to_owned()));
                match metric.name() {
                    "mcp.client.operation.duration" if has("gen_ai.tool.name", "countdown") => {
                        assert!(has("mcp.method.name", "tools/call"), "{attributes:?}");
                        assert!(has("network.transport", "pipe"), "{attributes:?}");
                        assert!(has("gen_ai.operation.name", "execute_tool"));
                        assert!(has("mcp.protocol.version", "2025-11-25"));
                        assert!(
                            !attributes.iter().any(|(k, _)| k == "jsonrpc.request.id"),
                            "no ids on a metric: {attributes:?}"
                        );
                        operation = Some(point.count());
                    }
                    "mcp.client.session.duration" if !has("error.type", "exited") => {
                        assert!(has("network.transport", "pipe"), "{attributes:?}");
                        session = Some(point.count());
                    }
                    _ => {}
                }
            }
        }
        assert!(operation.is_some_and(|n| n >= 1), "{exported:#?}");
        assert!(session.is_some_and(|n| n >= 1), "{exported:#?}");
    });
}

/// A 2026-07-28 connect is a `server/discover` span; a `listen` stream's
/// `subscriptions/listen` span lasts until the server acknowledges it, and
/// the server receives the trace context in that request too.
#[test]
fn a_modern_connect_and_a_listen_are_spans_named_by_their_method() {
    futures::executor::block_on(async {
        let (seen, trace) = traced("modern", async {
            let client = Client::builder(peer(&["--discover", "modern"]))
                .connect()
                .await
                .unwrap();
            let updates = client
                .listen(ListenFilter::new().tools_list_changed())
                .await
                .unwrap();
            drop(updates);
            let lines = common::received(&client.transport()).await;
            client.close().await.unwrap();
            lines
                .into_iter()
                .find(|l| l["method"] == "subscriptions/listen")
                .expect("the listen request")
        })
        .await;
        let discover = trace.one("server/discover");
        assert_request(discover, "server/discover", "2026-07-28", trace.host_id);
        let listen = trace.one("subscriptions/listen");
        assert_request(listen, "subscriptions/listen", "2026-07-28", trace.host_id);
        assert!(attribute(listen, "error.type").is_none(), "{listen:?}");
        assert_eq!(
            seen["params"]["_meta"]["traceparent"],
            trace.traceparent_of(listen),
            "{seen}"
        );
    });
}

/// The request id is a string, as the conventions type it.
#[test]
fn the_request_id_is_a_string_attribute() {
    futures::executor::block_on(async {
        let (_, trace) = traced("id type", async {
            let client = Client::builder(peer(&[]))
                .era(Era::Legacy)
                .connect()
                .await
                .unwrap();
            client.ping().await.unwrap();
            client.close().await.unwrap();
        })
        .await;
        let ping = trace.one("ping");
        let id = ping
            .attributes
            .iter()
            .find(|kv| kv.key.as_str() == "jsonrpc.request.id")
            .unwrap();
        assert!(matches!(id.value, OtelValue::String(_)), "{id:?}");
    });
}
