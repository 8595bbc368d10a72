//! A request's time limits: its own, the transport's or the client's, one
//! restarted by each progress, a cap on the whole; and what a limit that
//! runs out does (a cancel on the wire, a timeout error).

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use async_io::Timer;
use futures::task::AtomicWaker;
use futures::FutureExt;
use serde_json::{Map, Value};

use crate::error::Error;
use crate::pending::{PendingRequest, RequestOptions};

use crate::client::life::Life;
use crate::client::telemetry::Operation;

/// When the latest progress of a call came, and who waits to hear of it.
#[derive(Default)]
pub(in crate::client) struct LastProgress {
    pub(in crate::client) at: Mutex<Option<Instant>>,
    pub(in crate::client) waker: AtomicWaker,
}

/// What a request's params are on the way out.
#[derive(Clone, Copy)]
pub(in crate::client) enum Body<'a> {
    /// Written as they are.
    Whole(Option<&'a Value>),
    /// Written with `_meta` made of these serialized members.
    Spliced(Option<&'a Map<String, Value>>, &'a str),
}

pub(in crate::client) struct Limits<'a> {
    pub(in crate::client) method: &'a str,
    pub(in crate::client) started: Instant,
    /// The call's own limit; without one, the transport's.
    pub(in crate::client) timeout: Option<Duration>,
    /// The client's limit, for a call with neither.
    pub(in crate::client) default: Option<Duration>,
    pub(in crate::client) reset: bool,
    pub(in crate::client) total: Option<Duration>,
    pub(in crate::client) quiet: bool,
    pub(in crate::client) unbounded: bool,
}

impl Limits<'_> {
    /// Sends one request to the server's current process and waits for its
    /// outcome within the limits. A send refused because that process just
    /// ended never reached it: with a restart coming, it goes to the next one.
    pub(in crate::client) async fn send(
        &self,
        life: &Life,
        body: Body<'_>,
        last: Option<&LastProgress>,
        operation: &Operation<'_>,
    ) -> Result<Value, Error> {
        loop {
            let transport = life.transport().await?;
            let (idle, from_default) = match self.timeout.or_else(|| transport.timeout()) {
                _ if self.unbounded => (None, false),
                Some(limit) => (Some(limit), false),
                None => (self.default, true),
            };
            // The client's default limit restarts with each progress of a call
            // that hears of its progress.
            let reset = self.reset || (from_default && last.is_some());
            let managed = reset || self.total.is_some();
            // A managed call's limits are kept here: the transport's would not restart.
            let options = match (managed, from_default, idle) {
                (true, _, _) | (false, _, None) => RequestOptions::new().timeout(None),
                // Kept by the driver: no timer per call for a limit that rarely fires.
                (false, true, Some(limit)) => {
                    RequestOptions::new().timeout(None).swept_timeout(limit)
                }
                (false, false, Some(limit)) => RequestOptions::new().timeout(limit),
            };
            let request = match body {
                Body::Whole(params) => transport.send_borrowed(self.method, params, options),
                Body::Spliced(params, members) => {
                    transport.send_with_meta(self.method, params, members, options)
                }
            };
            let request = if self.quiet { request.quiet() } else { request };
            operation.sent(request.id());
            let outcome = if managed {
                self.wait(request, Instant::now(), idle, reset, last).await
            } else {
                request.await
            };
            match outcome {
                Err(Error::NotAlive) if life.restarts_after(&transport) => {}
                outcome => return outcome,
            }
        }
    }

    /// The earliest deadline now, and the limit it stands for.
    fn deadline(
        &self,
        round: Instant,
        idle: Option<Duration>,
        reset: bool,
        last: Option<&LastProgress>,
    ) -> Option<(Instant, Duration)> {
        let progress = last.and_then(|l| *crate::lock::lock(&l.at));
        let since = match progress {
            Some(at) if reset && at > round => at,
            _ => round,
        };
        let idle = idle.map(|d| (since + d, d));
        let total = self.total.map(|d| (self.started + d, d));
        match (idle, total) {
            (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
            (a, b) => a.or(b),
        }
    }

    async fn wait(
        &self,
        mut request: PendingRequest,
        round: Instant,
        idle: Option<Duration>,
        reset: bool,
        last: Option<&LastProgress>,
    ) -> Result<Value, Error> {
        let mut timer: Option<(Timer, Instant, Duration)> = None;
        let fired = futures::future::poll_fn(|cx: &mut Context<'_>| {
            if let Some(last) = last {
                last.waker.register(cx.waker());
            }
            if let Poll::Ready(outcome) = request.poll_unpin(cx) {
                return Poll::Ready(Err(outcome));
            }
            // Recomputed at each wake-up: a progress may have moved the deadline.
            let Some((at, limit)) = self.deadline(round, idle, reset, last) else {
                return Poll::Pending;
            };
            let (timer, when, current) = timer.get_or_insert_with(|| (Timer::at(at), at, limit));
            if *when != at {
                timer.set_at(at);
                (*when, *current) = (at, limit);
            }
            match Pin::new(timer).poll(cx) {
                Poll::Ready(_) => Poll::Ready(Ok(*current)),
                Poll::Pending => Poll::Pending,
            }
        })
        .await;
        let limit = match fired {
            Err(outcome) => return outcome,
            Ok(limit) => limit,
        };
        let reason = format!("timed out after {}s", limit.as_secs_f64());
        match request.cancel(&reason) {
            // The answer came in the meantime: it wins.
            Some(answer) => answer,
            None => Err(Error::Timeout {
                method: self.method.to_owned(),
                after: limit,
            }),
        }
    }
}
