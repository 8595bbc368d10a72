//! Where each message read from the server goes: responses to their waiting
//! requests, notifications and server requests to the user's handlers.

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use futures::FutureExt;

use serde_json::Value;

use crate::error::RpcError;
use crate::message::{
    parse_line, push_response, DiscardedLine, Incoming, Notification, ServerRequest, UNKNOWN_ID,
};
use crate::shared::{Shared, Slot};

pub(crate) type StderrHandler = Box<dyn FnMut(&str) + Send>;
pub(crate) type NotificationHandler = Box<dyn FnMut(&Notification) + Send>;
pub(crate) type RequestHandler = Box<dyn FnMut(&ServerRequest) -> Reply + Send>;

/// How a request handler answers the server.
pub(crate) enum Reply {
    /// Written back at once.
    Now(Result<Value, RpcError>),
    /// Written back when the future completes; the driver polls it beside its
    /// I/O, so a handler that waits (for a person) holds up nothing else.
    Later(BoxFuture<'static, Result<Value, RpcError>>),
    /// Not answered here (`Transport::respond` may answer it).
    None,
}

/// A reply under way: the request's id, and the future of its outcome.
type Pending = BoxFuture<'static, (Value, Option<Result<Value, RpcError>>)>;
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

impl Handlers {
    /// Puts each handler behind a lock, so that every process started from
    /// one configuration (a server started again) calls the same handlers.
    pub(crate) fn share(self) -> SharedHandlers {
        fn lock<T: ?Sized>(handler: Option<Box<T>>) -> Option<Arc<Mutex<Box<T>>>> {
            handler.map(|h| Arc::new(Mutex::new(h)))
        }
        SharedHandlers {
            stderr: lock(self.stderr),
            notification: lock(self.notification),
            request: lock(self.request),
            discarded: lock(self.discarded),
        }
    }
}

/// Handlers shared by the processes started from one configuration.
#[derive(Clone)]
pub(crate) struct SharedHandlers {
    stderr: Option<Arc<Mutex<StderrHandler>>>,
    notification: Option<Arc<Mutex<NotificationHandler>>>,
    request: Option<Arc<Mutex<RequestHandler>>>,
    discarded: Option<Arc<Mutex<DiscardHandler>>>,
}

impl SharedHandlers {
    /// Handlers for one more process, each calling the shared one.
    pub(crate) fn handlers(&self) -> Handlers {
        fn call<T: ?Sized>(shared: &Arc<Mutex<Box<T>>>) -> std::sync::MutexGuard<'_, Box<T>> {
            crate::lock::lock(shared)
        }
        let stderr = self.stderr.clone();
        let notification = self.notification.clone();
        let request = self.request.clone();
        let discarded = self.discarded.clone();
        Handlers {
            stderr: stderr.map(|h| Box::new(move |line: &str| call(&h)(line)) as StderrHandler),
            notification: notification
                .map(|h| Box::new(move |n: &Notification| call(&h)(n)) as NotificationHandler),
            request: request
                .map(|h| Box::new(move |r: &ServerRequest| call(&h)(r)) as RequestHandler),
            discarded: discarded
                .map(|h| Box::new(move |d: &DiscardedLine| call(&h)(d)) as DiscardHandler),
        }
    }
}

impl fmt::Debug for SharedHandlers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedHandlers").finish_non_exhaustive()
    }
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
    /// Replies whose handlers are still at work.
    replies: FuturesUnordered<Pending>,
    /// The server sent a request since [`take_asked`](Self::take_asked) last looked.
    asked: bool,
}

impl Router {
    pub(crate) fn new(shared: Arc<Shared>, handlers: Handlers) -> Self {
        Router {
            shared,
            handlers,
            replies: FuturesUnordered::new(),
            asked: false,
        }
    }

    /// Whether the server sent a request since this was last asked.
    pub(crate) fn take_asked(&mut self) -> bool {
        std::mem::take(&mut self.asked)
    }

    /// Handles one stdout line, already stripped of its line ending.
    pub(crate) fn route_line(&mut self, line: &[u8]) {
        event!(debug, line = %String::from_utf8_lossy(line), "read from the MCP server");
        if let Err(reason) = parse_line(line, |message| self.route(message, line)) {
            self.discard(reason, line);
        }
    }

    fn route(&mut self, message: Incoming, line: &[u8]) {
        match message {
            Incoming::Response { id, outcome } => {
                let mut state = self.shared.lock();
                match id.and_then(|id| Some((id, state.pending.get_mut(&id)?))) {
                    Some((_, slot @ Slot::Waiting(..))) => {
                        let Slot::Waiting(waker, _) =
                            std::mem::replace(slot, Slot::Answered(outcome))
                        else {
                            unreachable!()
                        };
                        drop(state);
                        if let Some(waker) = waker {
                            waker.wake();
                        }
                    }
                    // Nobody waits for it: dropped without a word.
                    Some((id, Slot::Detached)) => {
                        state.remove_pending(id);
                    }
                    _ => {
                        drop(state);
                        self.discard(UNKNOWN_ID, line);
                    }
                }
            }
            Incoming::Notification(notification) => {
                if let Some(handler) = &mut self.handlers.notification {
                    let _ = catch_unwind(AssertUnwindSafe(|| handler(&notification)));
                }
            }
            Incoming::Request(request) => {
                self.asked = true;
                let Some(handler) = &mut self.handlers.request else {
                    return;
                };
                match catch_unwind(AssertUnwindSafe(|| handler(&request))) {
                    Ok(Reply::Now(outcome)) => self.respond(&request.id, &outcome),
                    Ok(Reply::Later(future)) => {
                        let id = request.id;
                        // A panic in the handler is contained: no answer, as for `Now`.
                        self.replies.push(Box::pin(async move {
                            let outcome = AssertUnwindSafe(future).catch_unwind().await.ok();
                            (id, outcome)
                        }));
                    }
                    Ok(Reply::None) | Err(_) => {}
                }
            }
            Incoming::Invalid(reason) => self.discard(reason, line),
        }
    }

    /// Queues the answer to a server request, like any other line: the driver
    /// is woken to write it.
    fn respond(&self, id: &Value, outcome: &Result<Value, RpcError>) {
        self.shared.for_driver(|state| {
            let open = state.phase.is_open();
            if open {
                push_response(&mut state.outgoing, id, outcome);
            }
            open
        });
    }

    /// Polls the handlers still at work and queues the answers that are ready;
    /// true if it queued any.
    pub(crate) fn poll_replies(&mut self, cx: &mut Context<'_>) -> bool {
        if self.replies.is_empty() {
            return false;
        }
        let mut queued = false;
        while let Poll::Ready(Some((id, outcome))) = self.replies.poll_next_unpin(cx) {
            if let Some(outcome) = outcome {
                self.respond(&id, &outcome);
                queued = true;
            }
        }
        queued
    }

    fn discard(&mut self, reason: &'static str, line: &[u8]) {
        event!(warn, reason, line = %String::from_utf8_lossy(line), "discarded a stdout line");
        self.shared.discarded.fetch_add(1, Ordering::Relaxed);
        if let Some(handler) = &mut self.handlers.discarded {
            let discarded = DiscardedLine::new(reason, line);
            let _ = catch_unwind(AssertUnwindSafe(|| handler(&discarded)));
        }
    }

    /// Handles one stderr line: to the user's handler, and into the tail.
    pub(crate) fn stderr_line(&mut self, line: &[u8]) {
        let text = String::from_utf8_lossy(line);
        event!(debug, line = %text, "stderr of the MCP server");
        if let Some(handler) = &mut self.handlers.stderr {
            let _ = catch_unwind(AssertUnwindSafe(|| handler(&text)));
        }
        self.shared.lock().push_stderr_line(&text);
    }
}

#[cfg(any(test, feature = "fuzzing"))]
pub(crate) mod replay {
    //! Replays raw stdout bytes through the inbound path (framing, decoding,
    //! routing) without a child process, for the fuzzer and for the test that the
    //! same bytes split anywhere give the same messages.

    use std::sync::{Arc, Mutex};

    use crate::framing::{Line, LineBuffer};
    use crate::route::{Handlers, Reply, Router};
    use crate::shared::{Shared, Slot};

    /// Feeds `data` to a transport with requests 1 to 8 waiting, in reads of the
    /// sizes `chunks` yields (cycled; 0 taken as 1), with `limit` as the largest
    /// line. Returns what was observed, one entry per event, in order, then the
    /// outcome of each of the 8 requests.
    pub fn replay(data: &[u8], chunks: &[usize], limit: usize) -> Vec<String> {
        let events = Arc::new(Mutex::new(Vec::new()));
        let shared = Arc::new(Shared::new(0, None));
        {
            let mut state = shared.lock();
            for id in 1..=8 {
                state.pending.insert(id, Slot::Waiting(None, None));
            }
        }
        let log = |prefix: &'static str| {
            let events = Arc::clone(&events);
            move |text: String| events.lock().unwrap().push(format!("{prefix} {text}"))
        };
        let (notification, request, discarded) =
            (log("notification"), log("request"), log("discarded"));
        let handlers = Handlers {
            stderr: None,
            notification: Some(Box::new(move |n| {
                notification(format!("{} {:?}", n.method, n.params))
            })),
            request: Some(Box::new(move |r| {
                request(format!("{} {} {:?}", r.id, r.method, r.params));
                Reply::None
            })),
            discarded: Some(Box::new(move |d| {
                discarded(format!("{} {:?}", d.reason, d.line))
            })),
        };
        let mut router = Router::new(Arc::clone(&shared), handlers);
        let mut lines = LineBuffer::new(limit);
        let mut rest = data;
        let mut sizes = chunks.iter().copied().cycle();
        'feed: while !rest.is_empty() {
            let size = sizes.next().unwrap_or(usize::MAX).max(1);
            let spare = lines.spare();
            let n = size.min(spare.len()).min(rest.len());
            spare[..n].copy_from_slice(&rest[..n]);
            lines.filled(n);
            rest = &rest[n..];
            while let Some(line) = lines.next_line() {
                match line {
                    Line::Complete(line) => router.route_line(line),
                    Line::TooLong(_) => {
                        events.lock().unwrap().push("too long".to_owned());
                        break 'feed;
                    }
                }
            }
        }
        if let Some(last) = lines.take_unterminated() {
            router.route_line(&last);
        }
        let mut observed = std::mem::take(&mut *events.lock().unwrap());
        let state = shared.lock();
        for id in 1..=8 {
            observed.push(match &state.pending[&id] {
                Slot::Waiting(..) => format!("request {id} waiting"),
                Slot::Expired => format!("request {id} expired"),
                Slot::Answered(outcome) => format!("request {id} {outcome:?}"),
                Slot::Detached => format!("request {id} detached"),
            });
        }
        observed
    }

    #[cfg(test)]
    mod tests {
        use super::replay;

        /// A stream with every kind of line, answers to some of the 8 requests among them.
        fn sample_stream(rng: &mut u64) -> Vec<u8> {
            let mut next = || {
                *rng ^= *rng << 13;
                *rng ^= *rng >> 7;
                *rng ^= *rng << 17;
                *rng
            };
            let pieces: [&[u8]; 12] = [
                b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n",
                b"{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"method\":\"roots/list\"}\n",
                b"not json\n",
                b"\n",
                b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"text\":\"caf\xc3\xa9 \\n escaped\"}}\r\n",
                b"{\"jsonrpc\":\"2.0\",\"id\":\"2\",\"error\":{\"code\":-1,\"message\":\"m\"}}\n",
                b"[{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":null},{\"method\":\"n\"}]\n",
                b"\xff\xfe\n",
                b"{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":\"text\"}\n",
                b"{\"jsonrpc\":\"2.0\",\"id\":999,\"result\":1}\n",
                b"{\"jsonrpc\":\"2.0\",\"id\":5}\n",
                b"{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}\n",
            ];
            let mut stream = Vec::new();
            for _ in 0..200 {
                stream.extend_from_slice(pieces[(next() % pieces.len() as u64) as usize]);
            }
            stream.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":\"unterminated\"}");
            stream
        }

        #[test]
        fn the_same_bytes_in_any_chunks_give_the_same_messages() {
            let mut rng = 0x0123_4567_89ab_cdef_u64;
            for round in 0..200 {
                let stream = sample_stream(&mut rng);
                let whole = replay(&stream, &[usize::MAX], 1 << 20);
                assert!(whole.iter().any(|e| e.starts_with("notification")));
                assert!(whole.iter().any(|e| e.starts_with("discarded")));
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                let chunks: Vec<usize> = (0..16)
                    .map(|i| 1 + ((rng >> (i * 4)) % 97) as usize)
                    .collect();
                assert_eq!(
                    replay(&stream, &chunks, 1 << 20),
                    whole,
                    "round {round}, chunks {chunks:?}"
                );
                assert_eq!(
                    replay(&stream, &[1], 1 << 20),
                    whole,
                    "round {round}, byte by byte"
                );
            }
        }

        #[test]
        fn an_over_long_line_stops_the_replay_in_any_chunks() {
            let mut stream = b"{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n".to_vec();
            stream.extend(std::iter::repeat_n(b'x', 5000));
            stream.push(b'\n');
            let whole = replay(&stream, &[usize::MAX], 100);
            assert_eq!(whole[0], "notification a None");
            assert_eq!(whole[1], "too long");
            assert_eq!(replay(&stream, &[3, 7, 1], 100), whole);
        }
    }
}
