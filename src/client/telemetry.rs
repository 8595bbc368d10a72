//! OpenTelemetry for a client's requests (feature `opentelemetry`), as the
//! semantic conventions for MCP name them: a CLIENT span per request, the
//! histograms `mcp.client.operation.duration` and `mcp.client.session.duration`,
//! and the caller's trace context in each request's `params._meta`.
//!
//! Without the feature every type here is empty and every method does nothing,
//! so the request path compiles to what it was.

pub(crate) use imp::{Instruments, Operation};

/// Awaits `$future` inside the span of `$operation` (as its current
/// context) when that span records, else as it is: a future never moved
/// into a wrapper it does not need.
macro_rules! in_span {
    ($operation:expr, $future:expr) => {
        match $operation.attached() {
            Some(attached) => attached.run($future).await,
            None => $future.await,
        }
    };
}
pub(crate) use in_span;

#[cfg(feature = "opentelemetry")]
mod imp {
    use std::borrow::Cow;
    use std::future::Future;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Instant;

    use opentelemetry::context::FutureExt as _;
    use opentelemetry::metrics::Histogram;
    use opentelemetry::propagation::Injector;
    use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt, Tracer};
    use opentelemetry::{global, Context, InstrumentationScope, KeyValue, StringValue};
    use serde_json::{Map, Value};

    use crate::client::era::{LEGACY_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS};
    use crate::error::Error;

    /// The conventions' bucket boundaries for both histograms, in seconds.
    const BOUNDARIES: [f64; 14] = [
        0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
    ];

    /// A client's tracer and histograms, taken from the global providers when
    /// it connects (install them before), and when its session began; shared
    /// by its requests and its restarts.
    #[derive(Clone)]
    pub(crate) struct Instruments(Arc<Held>);

    struct Held {
        tracer: global::BoxedTracer,
        /// Whether the latest span of this client recorded.
        recording: AtomicBool,
        /// The kinds of request met, each with its attributes.
        kinds: Mutex<Vec<Arc<Kind>>>,
        /// The tracer is the API's no-op: spans are not built at all.
        tracer_is_noop: AtomicBool,
        /// The global propagator writes something (the API's no-op writes
        /// no field): else nothing is propagated.
        propagates: bool,
        operations: Histogram<f64>,
        sessions: Histogram<f64>,
        began: Instant,
        ended: AtomicBool,
    }

    impl Instruments {
        pub(crate) fn new() -> Self {
            let scope = InstrumentationScope::builder("stdio-mcp")
                .with_version(env!("CARGO_PKG_VERSION"))
                .build();
            let meter = global::meter_with_scope(scope.clone());
            Instruments(Arc::new(Held {
                tracer: global::tracer_with_scope(scope),
                recording: AtomicBool::new(false),
                kinds: Mutex::new(Vec::new()),
                tracer_is_noop: AtomicBool::new(false),
                propagates: global::get_text_map_propagator(|p| p.fields().next().is_some()),
                operations: meter
                    .f64_histogram("mcp.client.operation.duration")
                    .with_unit("s")
                    .with_description(
                        "The duration of an MCP request, from when it was sent \
                         until its answer came",
                    )
                    .with_boundaries(BOUNDARIES.to_vec())
                    .build(),
                sessions: meter
                    .f64_histogram("mcp.client.session.duration")
                    .with_unit("s")
                    .with_description("The duration of an MCP session, from connect to close")
                    .with_boundaries(BOUNDARIES.to_vec())
                    .build(),
                began: Instant::now(),
                ended: AtomicBool::new(false),
            }))
        }

        /// A request about to be sent: its span, a child of the caller's
        /// current context, started now.
        pub(crate) fn operation(
            &self,
            method: &str,
            params: Option<&Value>,
            version: &str,
        ) -> Operation<'_> {
            // Only a tool's or a prompt's name is a target of low cardinality.
            let target = match method {
                "tools/call" | "prompts/get" => {
                    params.and_then(|p| p.get("name")).and_then(Value::as_str)
                }
                _ => None,
            };
            begin(self, self.parent(), method, target, params, version)
        }

        /// A tool call's span, `tool` named (its params are not looked into).
        pub(crate) fn tool_call(&self, tool: &str, version: &str) -> Operation<'_> {
            begin(self, self.parent(), "tools/call", Some(tool), None, version)
        }

        /// The caller's context; with the no-op tracer, read only where it
        /// is propagated.
        fn parent(&self) -> Option<Context> {
            (!self.0.tracer_is_noop.load(Ordering::Relaxed)).then(Context::current)
        }

        /// The kind of request (method, target, version) with its
        /// attributes, built once per client and kind.
        fn kind(&self, method: &str, target: Option<&str>, version: &str) -> Arc<Kind> {
            let mut kinds = crate::lock::lock(&self.0.kinds);
            let same = |kind: &&Arc<Kind>| {
                kind.method == method
                    && kind.target.as_deref() == target
                    && kind.version.as_deref().unwrap_or_default() == version
            };
            if let Some(kind) = kinds.iter().find(same) {
                return Arc::clone(kind);
            }
            let kind = Arc::new(Kind::new(method, target, version));
            if kinds.len() < KINDS_KEPT {
                kinds.push(Arc::clone(&kind));
            }
            kind
        }

        /// The session is over: recorded once, at the first close or at the
        /// client's end; `error` names how it ended if not by a close.
        pub(crate) fn session_ended(&self, version: &str, error: Option<&'static str>) {
            let held = &self.0;
            if held.ended.swap(true, Ordering::AcqRel) {
                return;
            }
            let mut attributes = vec![KeyValue::new("network.transport", "pipe")];
            if !version.is_empty() {
                attributes.push(KeyValue::new("mcp.protocol.version", version.to_owned()));
            }
            if let Some(error) = error {
                attributes.push(KeyValue::new("error.type", error));
            }
            held.sessions
                .record(held.began.elapsed().as_secs_f64(), &attributes);
        }
    }

    /// `text` as a static string when it is one of `known`: an attribute
    /// that costs no allocation.
    fn interned<'k>(
        text: &str,
        known: impl IntoIterator<Item = &'k &'static str>,
    ) -> Cow<'static, str> {
        match known.into_iter().find(|k| **k == text) {
            Some(known) => Cow::Borrowed(known),
            None => Cow::Owned(text.to_owned()),
        }
    }

    /// The methods a client sends most.
    const METHODS: [&str; 12] = [
        "tools/call",
        "tools/list",
        "resources/read",
        "resources/list",
        "prompts/get",
        "prompts/list",
        "tasks/get",
        "tasks/result",
        "ping",
        "initialize",
        "server/discover",
        "subscriptions/listen",
    ];

    /// The kinds of request a client keeps built (beyond, each request
    /// builds its own).
    const KINDS_KEPT: usize = 32;

    /// What every request of one kind (method, tool or prompt, version)
    /// shares: its attributes without ids and URIs.
    struct Kind {
        method: Cow<'static, str>,
        /// The tool's or the prompt's name.
        target: Option<Arc<str>>,
        version: Option<Cow<'static, str>>,
        attributes: Vec<KeyValue>,
    }

    impl Kind {
        fn new(method: &str, target: Option<&str>, version: &str) -> Self {
            let method = interned(method, &METHODS);
            let target: Option<Arc<str>> = target.map(Arc::from);
            let versions = MODERN_PROTOCOL_VERSIONS
                .iter()
                .chain(&LEGACY_PROTOCOL_VERSIONS);
            let version = (!version.is_empty()).then(|| interned(version, versions));
            let mut attributes = Vec::with_capacity(5);
            attributes.push(KeyValue::new("mcp.method.name", method.clone()));
            attributes.push(KeyValue::new("network.transport", "pipe"));
            if let Some(version) = &version {
                attributes.push(KeyValue::new("mcp.protocol.version", version.clone()));
            }
            if let Some(target) = &target {
                let name = StringValue::from(Arc::clone(target));
                if method == "tools/call" {
                    attributes.push(KeyValue::new("gen_ai.tool.name", name));
                    attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
                } else {
                    attributes.push(KeyValue::new("gen_ai.prompt.name", name));
                }
            }
            Kind {
                method,
                target,
                version,
                attributes,
            }
        }

        fn name(&self) -> Cow<'static, str> {
            match &self.target {
                Some(target) => Cow::Owned(format!("{} {target}", self.method)),
                None => self.method.clone(),
            }
        }
    }

    /// Starts a request's span under `parent`. A span that records nothing
    /// (no SDK installed, or sampled out) is dropped at once: the request
    /// then carries the caller's context, and only its duration is kept.
    fn begin<'a>(
        instruments: &'a Instruments,
        parent: Option<Context>,
        method: &str,
        target: Option<&str>,
        params: Option<&Value>,
        version: &str,
    ) -> Operation<'a> {
        let mut begun = Operation {
            span: None,
            parent,
            kind: instruments.kind(method, target, version),
            began: Instant::now(),
            instruments,
        };
        let held = &instruments.0;
        let Some(parent) = &begun.parent else {
            return begun;
        };
        let tracer = &held.tracer;
        // Named and described in full at its start (what a sampler sees) once
        // this client's spans are seen to record; else by the method alone,
        // and the rest only if it turns out to record.
        let full = held.recording.load(Ordering::Relaxed);
        let mut builder = tracer
            .span_builder(if full {
                begun.kind.name()
            } else {
                begun.kind.method.clone()
            })
            .with_kind(SpanKind::Client);
        if full {
            builder = builder.with_attributes(begun.span_attributes(params));
        }
        let span = builder.start_with_context(tracer, parent);
        // An SDK gives every span an id, even one it samples out: a span
        // with none under no parent comes from the API's no-op tracer, which
        // the client keeps for its life; its spans are not built again.
        if !span.span_context().is_valid() && !parent.has_active_span() {
            held.tracer_is_noop.store(true, Ordering::Relaxed);
        }
        let recording = span.is_recording();
        held.recording.store(recording, Ordering::Relaxed);
        if recording {
            let context = parent.with_span(span);
            if !full {
                let span = context.span();
                span.update_name(begun.kind.name());
                span.set_attributes(begun.span_attributes(params));
            }
            begun.span = Some(context);
        }
        begun
    }

    /// One request's span and what its duration is recorded with.
    pub(crate) struct Operation<'a> {
        /// The context of this request's span, when it records.
        span: Option<Context>,
        /// The caller's context, kept unless the tracer is the no-op one
        /// (then the current one is read where it is needed).
        parent: Option<Context>,
        kind: Arc<Kind>,
        began: Instant,
        instruments: &'a Instruments,
    }

    impl Operation<'_> {
        fn span_attributes(&self, params: Option<&Value>) -> Vec<KeyValue> {
            let mut attributes = self.kind.attributes.clone();
            if matches!(
                &*self.kind.method,
                "resources/read" | "resources/subscribe" | "resources/unsubscribe"
            ) {
                if let Some(uri) = params.and_then(|p| p.get("uri")).and_then(Value::as_str) {
                    attributes.push(KeyValue::new("mcp.resource.uri", uri.to_owned()));
                }
            }
            attributes
        }
    }

    impl<'a> Operation<'a> {
        /// The span's context to run the request's future in, so that what
        /// it sends (a task's polls) is a child of it; `None` when the span
        /// records nothing (the future then runs as it is, unwrapped).
        pub(crate) fn attached(&self) -> Option<Attached> {
            self.span.clone().map(Attached)
        }

        /// Writes the context into `meta` through the global propagator,
        /// leaving every key the caller set (in `meta` or in the params'
        /// own `_meta`); `meta` stays `None` when nothing is written.
        pub(crate) fn propagate(
            &self,
            meta: &mut Option<Map<String, Value>>,
            params: Option<&Value>,
        ) {
            if !self.instruments.0.propagates {
                return;
            }
            let mut written = Written(Vec::new());
            global::get_text_map_propagator(|p| {
                match self.span.as_ref().or(self.parent.as_ref()) {
                    Some(context) => p.inject_context(context, &mut written),
                    None => Context::map_current(|context| p.inject_context(context, &mut written)),
                }
            });
            let own = params.and_then(|p| p.get("_meta"));
            for (key, value) in written.0 {
                let set = meta.as_ref().is_some_and(|m| m.contains_key(&key))
                    || own.is_some_and(|m| m.get(&key).is_some());
                if !set {
                    meta.get_or_insert_with(Map::new)
                        .insert(key, Value::String(value));
                }
            }
        }

        /// [`propagate`](Self::propagate) straight into `params` (an object).
        pub(crate) fn propagate_into(&self, params: &mut Value) {
            let mut meta = None;
            self.propagate(&mut meta, Some(params));
            if let (Some(meta), Value::Object(fields)) = (meta, params) {
                let own = fields
                    .entry("_meta")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(own) = own {
                    own.extend(meta);
                }
            }
        }

        /// The id the request went out with (the last, if sent again after a
        /// restart).
        pub(crate) fn sent(&self, id: u64) {
            if let Some(context) = &self.span {
                context
                    .span()
                    .set_attribute(KeyValue::new("jsonrpc.request.id", id.to_string()));
            }
        }

        /// A retry with the answers to the server's input requests: a span
        /// of its own, a child of this one.
        pub(crate) fn retry(&self, method: &str, params: Option<&Value>, version: &str) -> Self {
            let target = self.kind.target.as_deref();
            let parent = self.span.clone().or_else(|| self.parent.clone());
            begin(self.instruments, parent, method, target, params, version)
        }

        /// Ends the span and records the duration, with the outcome's class
        /// of error, if any.
        pub(crate) fn end(self, outcome: Result<&Value, &Error>) {
            let reported = outcome.is_ok_and(|r| r.get("isError") == Some(&Value::Bool(true)));
            self.end_call(reported, outcome.err());
        }

        /// Ends the span of a tool call whose result is typed: `reported`,
        /// the tool said it failed.
        pub(crate) fn end_call(self, reported: bool, error: Option<&Error>) {
            let duration = self.began.elapsed().as_secs_f64();
            let operations = &self.instruments.0.operations;
            let span = self.span.as_ref().map(TraceContextExt::span);
            let failed = match error {
                Some(error) => Some(match error.rpc_error() {
                    Some(rpc) => (
                        rpc.code.to_string(),
                        Some(rpc.code.to_string()),
                        Cow::Owned(rpc.message.clone()),
                    ),
                    None => (
                        error.kind().as_str().to_owned(),
                        None,
                        Cow::Owned(error.to_string()),
                    ),
                }),
                None if reported && self.kind.method == "tools/call" => Some((
                    "tool_error".to_owned(),
                    None,
                    Cow::Borrowed("the tool reported an error"),
                )),
                None => None,
            };
            let Some((kind, code, description)) = failed else {
                if let Some(span) = span {
                    span.end();
                }
                operations.record(duration, &self.kind.attributes);
                return;
            };
            let mut attributes = self.kind.attributes.clone();
            attributes.push(KeyValue::new("error.type", kind));
            if let Some(code) = code {
                attributes.push(KeyValue::new("rpc.response.status_code", code));
            }
            if let Some(span) = span {
                let first = self.kind.attributes.len();
                span.set_attributes(attributes[first..].iter().cloned());
                span.set_status(Status::error(description));
                span.end();
            }
            operations.record(duration, &attributes);
        }
    }

    /// A span's context, to run a future in.
    pub(crate) struct Attached(Context);

    impl Attached {
        pub(crate) fn run<F: Future>(self, future: F) -> impl Future<Output = F::Output> {
            future.with_context(self.0)
        }
    }

    /// What the propagator writes (`traceparent`, `tracestate`, `baggage` for
    /// W3C's), each key unprefixed in `_meta` as the conventions ask.
    struct Written(Vec<(String, String)>);

    impl Injector for Written {
        fn set(&mut self, key: &str, value: String) {
            self.0.push((key.to_owned(), value));
        }
    }
}

#[cfg(not(feature = "opentelemetry"))]
mod imp {
    use std::future::Future;
    use std::marker::PhantomData;

    use serde_json::{Map, Value};

    use crate::error::Error;

    /// Nothing: the feature `opentelemetry` is off.
    #[derive(Clone)]
    pub(crate) struct Instruments;

    impl Instruments {
        #[inline]
        pub(crate) fn new() -> Self {
            Instruments
        }

        #[inline]
        pub(crate) fn operation(&self, _: &str, _: Option<&Value>, _: &str) -> Operation<'_> {
            Operation(PhantomData)
        }

        #[inline]
        pub(crate) fn tool_call(&self, _: &str, _: &str) -> Operation<'_> {
            Operation(PhantomData)
        }

        #[inline]
        pub(crate) fn session_ended(&self, _: &str, _: Option<&'static str>) {}
    }

    /// Nothing: the feature `opentelemetry` is off.
    pub(crate) struct Operation<'a>(PhantomData<&'a ()>);

    impl Operation<'_> {
        /// What a request without a span goes with.
        pub(crate) const NONE: Operation<'static> = Operation(PhantomData);
    }

    /// Never made: the feature `opentelemetry` is off.
    pub(crate) enum Attached {}

    impl Attached {
        pub(crate) fn run<F: Future>(self, _: F) -> F {
            match self {}
        }
    }

    impl Operation<'_> {
        #[inline]
        pub(crate) fn attached(&self) -> Option<Attached> {
            None
        }

        #[inline]
        pub(crate) fn propagate(&self, _: &mut Option<Map<String, Value>>, _: Option<&Value>) {}

        #[inline]
        pub(crate) fn propagate_into(&self, _: &mut Value) {}

        #[inline]
        pub(crate) fn sent(&self, _: u64) {}

        #[inline]
        pub(crate) fn retry(&self, _: &str, _: Option<&Value>, _: &str) -> Self {
            Operation(PhantomData)
        }

        #[inline]
        pub(crate) fn end(self, _: Result<&Value, &Error>) {}

        #[inline]
        pub(crate) fn end_call(self, _: bool, _: Option<&Error>) {}
    }
}
