//! With the `tracing` feature, a server's life shows up as events at the levels
//! a user would pick, inside a span per server and per request
//! (`cargo test --features tracing --test tracing`).
#![cfg(feature = "tracing")]

mod common;

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use common::{peer, run};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// Keeps every event as "LEVEL span: message", the span being the innermost
/// one entered on the event's thread.
#[derive(Default)]
struct Collect {
    events: Mutex<Vec<String>>,
    spans: Mutex<HashMap<u64, &'static str>>,
    next: AtomicU64,
}

thread_local! {
    static ENTERED: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl Subscriber for Collect {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        self.spans
            .lock()
            .unwrap()
            .insert(id, span.metadata().name());
        Id::from_u64(id)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut message = Message(String::new());
        event.record(&mut message);
        let span = ENTERED
            .with(|e| e.borrow().last().copied())
            .and_then(|id| self.spans.lock().unwrap().get(&id).copied())
            .unwrap_or("-");
        let level = *event.metadata().level();
        self.events
            .lock()
            .unwrap()
            .push(format!("{level} {span}: {}", message.0));
    }
    fn enter(&self, id: &Id) {
        ENTERED.with(|e| e.borrow_mut().push(id.into_u64()));
    }
    fn exit(&self, _: &Id) {
        ENTERED.with(|e| e.borrow_mut().pop());
    }
}

#[test]
fn a_servers_life_is_traced_at_the_levels_a_user_picks() {
    let collect = Arc::new(Collect::default());
    tracing::subscriber::set_global_default(Arc::clone(&collect)).unwrap();
    run(20, async {
        // A banner line to discard, and no exit on EOF: the ladder terminates it.
        let t = peer(&["--banner", "--ignore-eof"]).spawn().unwrap();
        t.send_request("ping", None).await.unwrap();
        let limit = stdio_mcp::RequestOptions::new().timeout(std::time::Duration::from_millis(50));
        let late = t.send_request_with("test/never", None, limit).await;
        assert_eq!(late.unwrap_err().category(), Some("timeout"));
        t.close().await.unwrap();
    });
    let events = collect.events.lock().unwrap().clone();
    let has = |level: Level, span: &str, text: &str| {
        events
            .iter()
            .any(|e| e.starts_with(&format!("{level} {span}: ")) && e.contains(text))
    };
    assert!(has(Level::INFO, "-", "MCP server started"), "{events:#?}");
    assert!(has(Level::DEBUG, "-", "request queued"), "{events:#?}");
    assert!(
        has(Level::DEBUG, "mcp_server", "read from the MCP server"),
        "{events:#?}"
    );
    assert!(
        has(Level::WARN, "mcp_server", "discarded a stdout line"),
        "{events:#?}"
    );
    assert!(
        has(Level::INFO, "mcp_server", "closing the MCP server"),
        "{events:#?}"
    );
    assert!(
        has(Level::WARN, "mcp_server", "terminating it"),
        "{events:#?}"
    );
    assert!(
        has(Level::INFO, "mcp_server", "MCP server exited"),
        "{events:#?}"
    );
    assert!(
        has(Level::INFO, "mcp_request", "request timed out"),
        "{events:#?}"
    );
}
