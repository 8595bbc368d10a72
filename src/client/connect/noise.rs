//! What a server writes on stdout that is not JSON-RPC while it connects
//! (banners, logs, garbage): counted, and the first lines kept, so that a
//! connect that times out can say what the server wrote instead, and a
//! server that writes only noise fails the connect at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use event_listener::Event;

use crate::message::{DiscardedLine, Notification, ServerRequest, UNKNOWN_ID};
use crate::route::{DiscardHandler, NotificationHandler, Reply, RequestHandler};

/// The longest excerpt of a line quoted in an error.
const EXCERPT: usize = 200;
/// How many of the first lines are kept to quote.
const QUOTED: usize = 3;
/// Lines of noise, with no JSON-RPC message among them, after which a
/// connect gives up on the server instead of waiting for its time limits.
pub(crate) const NOISE_LIMIT: u64 = 100;

/// Shared between the connect and the handlers on the transport.
#[derive(Debug, Default, Clone)]
pub(crate) struct Noise(Arc<NoiseState>);

#[derive(Debug, Default)]
struct NoiseState {
    seen: Mutex<Seen>,
    /// The server has written a JSON-RPC message: its noise is a banner.
    spoke: AtomicBool,
    /// Notified when the noise reaches [`NOISE_LIMIT`].
    overflow: Event,
}

#[derive(Debug, Default)]
struct Seen {
    lines: u64,
    first: Vec<String>,
}

impl Noise {
    /// A handler that counts such lines, then passes every discarded line on
    /// to the user's handler, if any.
    pub(crate) fn handler(&self, mut user: Option<DiscardHandler>) -> DiscardHandler {
        let inner = Arc::clone(&self.0);
        Box::new(move |line: &DiscardedLine| {
            if line.reason == UNKNOWN_ID {
                // An answer that came too late is JSON-RPC, not noise.
                inner.spoke.store(true, Ordering::Relaxed);
            } else {
                let mut seen = crate::lock::lock(&inner.seen);
                seen.lines += 1;
                if seen.first.len() < QUOTED {
                    seen.first.push(line.line.chars().take(EXCERPT).collect());
                }
                if seen.lines == NOISE_LIMIT {
                    inner.overflow.notify(usize::MAX);
                }
            }
            if let Some(user) = &mut user {
                user(line);
            }
        })
    }

    /// The notification handler `next`, noting that the server speaks JSON-RPC.
    pub(crate) fn watch_notifications(&self, mut next: NotificationHandler) -> NotificationHandler {
        let inner = Arc::clone(&self.0);
        Box::new(move |notification: &Notification| {
            inner.spoke.store(true, Ordering::Relaxed);
            next(notification)
        })
    }

    /// The request handler `next`, noting that the server speaks JSON-RPC.
    pub(crate) fn watch_requests(&self, mut next: RequestHandler) -> RequestHandler {
        let inner = Arc::clone(&self.0);
        Box::new(move |request: &ServerRequest| -> Reply {
            inner.spoke.store(true, Ordering::Relaxed);
            next(request)
        })
    }

    /// Notes that the server answered a request.
    pub(crate) fn spoke(&self) {
        self.0.spoke.store(true, Ordering::Relaxed);
    }

    /// How many lines so far, and the first.
    pub(crate) fn seen(&self) -> (u64, Option<String>) {
        let seen = crate::lock::lock(&self.0.seen);
        (seen.lines, seen.first.first().cloned())
    }

    /// The noise, once it has reached [`NOISE_LIMIT`] lines with no JSON-RPC
    /// message from the server; pending for ever otherwise.
    pub(crate) async fn overflowed(&self) -> (u64, Vec<String>) {
        loop {
            let listener = self.0.overflow.listen();
            let (lines, first) = {
                let seen = crate::lock::lock(&self.0.seen);
                (seen.lines, seen.first.clone())
            };
            if lines >= NOISE_LIMIT {
                if self.0.spoke.load(Ordering::Relaxed) {
                    // It spoke before the limit: the noise was a banner.
                    return futures::future::pending().await;
                }
                return (lines, first);
            }
            listener.await;
        }
    }
}
