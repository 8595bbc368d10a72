//! Where each message read from the server goes: responses to their waiting
//! requests, notifications and server requests to the user's handlers.

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use serde_json::Value;

use crate::error::RpcError;
use crate::message::{
    parse_line, push_response, DiscardedLine, Incoming, Notification, ServerRequest,
};
use crate::shared::{Shared, Slot};

pub(crate) type StderrHandler = Box<dyn FnMut(&str) + Send>;
pub(crate) type NotificationHandler = Box<dyn FnMut(&Notification) + Send>;
pub(crate) type RequestHandler =
    Box<dyn FnMut(&ServerRequest) -> Option<Result<Value, RpcError>> + Send>;
pub(crate) type DiscardHandler = Box<dyn FnMut(&DiscardedLine) + Send>;

/// The user's callbacks. They run on the driver, one at a time, never under a lock.
/// A panicking callback is contained: the message it was handling is dropped and
/// the transport goes on.
#[derive(Default)]
pub(crate) struct Handlers {
    pub(crate) stderr: Option<StderrHandler>,
    pub(crate) notification: Option<NotificationHandler>,
    pub(crate) request: Option<RequestHandler>,
    pub(crate) discarded: Option<DiscardHandler>,
}

impl fmt::Debug for Handlers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handlers")
            .field("stderr", &self.stderr.is_some())
            .field("notification", &self.notification.is_some())
            .field("request", &self.request.is_some())
            .field("discarded", &self.discarded.is_some())
            .finish()
    }
}

pub(crate) struct Router {
    shared: Arc<Shared>,
    handlers: Handlers,
}

impl Router {
    pub(crate) fn new(shared: Arc<Shared>, handlers: Handlers) -> Self {
        Router { shared, handlers }
    }

    /// Handles one stdout line, already stripped of its line ending.
    pub(crate) fn route_line(&mut self, line: &[u8]) {
        if let Err(reason) = parse_line(line, |message| self.route(message, line)) {
            self.discard(reason, line);
        }
    }

    fn route(&mut self, message: Incoming, line: &[u8]) {
        match message {
            Incoming::Response { id, outcome } => {
                let mut state = self.shared.lock();
                let slot = id.and_then(|id| state.pending.get_mut(&id));
                let Some(slot @ Slot::Waiting(_)) = slot else {
                    drop(state);
                    return self.discard("response to an unknown or cancelled id", line);
                };
                let Slot::Waiting(waker) = std::mem::replace(slot, Slot::Answered(outcome)) else {
                    unreachable!()
                };
                drop(state);
                if let Some(waker) = waker {
                    waker.wake();
                }
            }
            Incoming::Notification(notification) => {
                if let Some(handler) = &mut self.handlers.notification {
                    let _ = catch_unwind(AssertUnwindSafe(|| handler(&notification)));
                }
            }
            Incoming::Request(request) => {
                let Some(handler) = &mut self.handlers.request else {
                    return;
                };
                let answer = catch_unwind(AssertUnwindSafe(|| handler(&request)));
                if let Ok(Some(outcome)) = answer {
                    // Queued like any other line: the driver is woken to write it.
                    self.shared.for_driver(|state| {
                        let open = state.phase.is_open();
                        if open {
                            push_response(&mut state.outgoing, &request.id, &outcome);
                        }
                        open
                    });
                }
            }
            Incoming::Invalid(reason) => self.discard(reason, line),
        }
    }

    fn discard(&mut self, reason: &'static str, line: &[u8]) {
        self.shared.discarded.fetch_add(1, Ordering::Relaxed);
        if let Some(handler) = &mut self.handlers.discarded {
            let discarded = DiscardedLine::new(reason, line);
            let _ = catch_unwind(AssertUnwindSafe(|| handler(&discarded)));
        }
    }

    /// Handles one stderr line: to the user's handler, and into the tail.
    pub(crate) fn stderr_line(&mut self, line: &[u8]) {
        let text = String::from_utf8_lossy(line);
        if let Some(handler) = &mut self.handlers.stderr {
            let _ = catch_unwind(AssertUnwindSafe(|| handler(&text)));
        }
        self.shared.lock().push_stderr_line(&text);
    }
}
