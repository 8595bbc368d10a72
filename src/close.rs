//! The future `Transport::close` returns.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::error::Error;
use crate::shared::Shared;

/// Resolves once the child has exited after [`Transport::close`](crate::Transport::close).
///
/// `Ok(())` however the child ended (a signal from the close ladder included);
/// [`Error::CloseLeftLoop`] if the driver was dropped first. Every call to `close()`
/// gets a future with the same outcome. The close itself starts when `close()` is
/// called, whether or not this future is ever polled.
#[must_use = "close() starts the shutdown; await this to know the child has exited"]
pub struct Close {
    shared: Arc<Shared>,
}

impl Close {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Close { shared }
    }
}

impl Future for Close {
    type Output = Result<(), Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut state = self.shared.lock();
        if let Some(outcome) = &state.finished {
            return Poll::Ready(outcome.clone());
        }
        // Checked and registered under one lock, so the driver's wake-up cannot
        // fall in between. One waker per task, however often it polls.
        if !state.close_wakers.iter().any(|w| w.will_wake(cx.waker())) {
            state.close_wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

impl fmt::Debug for Close {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Close")
            .field("pid", &self.shared.pid)
            .finish_non_exhaustive()
    }
}
