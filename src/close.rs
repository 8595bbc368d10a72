//! The future `Transport::close` returns.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use event_listener::EventListener;

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
    listener: Option<EventListener>,
}

impl Close {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Close {
            shared,
            listener: None,
        }
    }
}

impl Future for Close {
    type Output = Result<(), Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        loop {
            if let Some(outcome) = &this.shared.lock().finished {
                return Poll::Ready(outcome.clone());
            }
            match &mut this.listener {
                // Listen first, then look again: a notification in between is not lost.
                None => this.listener = Some(this.shared.finished.listen()),
                Some(listener) => {
                    if Pin::new(listener).poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    this.listener = None;
                }
            }
        }
    }
}

impl fmt::Debug for Close {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Close")
            .field("pid", &self.shared.pid)
            .finish_non_exhaustive()
    }
}
