//! The driver's timers (close ladder, grace periods): on the background thread
//! they wait in its own poller, anywhere else they are async-io timers.
//!
//! An async-io timer set on the background thread would be served by whichever
//! thread holds async-io's reactor (its `async-io` thread, since the background
//! thread never does): setting one wakes that thread, and its expiry comes back
//! as one more wake-up. Closing a server took two extra thread hand-offs for it.

use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use async_io::Timer;
use futures::FutureExt;

use crate::poller;

#[derive(Debug)]
pub(crate) struct Deadline {
    when: Instant,
    backend: Backend,
}

#[derive(Debug)]
enum Backend {
    /// Not polled yet.
    Unset,
    /// Waiting in the background thread's poller under this key.
    Poller((Instant, u64)),
    /// Passed (the poller's timer fired or was found due).
    Passed,
    AsyncIo(Timer),
}

impl Deadline {
    pub(crate) fn after(duration: Duration) -> Self {
        Deadline {
            when: Instant::now() + duration,
            backend: Backend::Unset,
        }
    }

    /// Moves the deadline to `duration` from now.
    pub(crate) fn set_after(&mut self, duration: Duration) {
        *self = Deadline::after(duration);
    }

    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        match &mut self.backend {
            Backend::Passed => Poll::Ready(()),
            Backend::AsyncIo(timer) => timer.poll_unpin(cx).map(drop),
            Backend::Poller(key) => {
                if poller::timer_waiting(*key, cx.waker()) {
                    Poll::Pending
                } else {
                    self.backend = Backend::Passed;
                    Poll::Ready(())
                }
            }
            Backend::Unset => {
                if Instant::now() >= self.when {
                    self.backend = Backend::Passed;
                    return Poll::Ready(());
                }
                self.backend = match poller::add_timer(self.when, cx.waker()) {
                    Some(key) => Backend::Poller(key),
                    None => Backend::AsyncIo(Timer::at(self.when)),
                };
                self.poll(cx)
            }
        }
    }
}

impl Drop for Deadline {
    fn drop(&mut self) {
        if let Backend::Poller(key) = self.backend {
            poller::remove_timer(key);
        }
    }
}
