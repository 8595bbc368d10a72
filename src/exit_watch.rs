//! Waiting for the child's exit without a `wait4` on every poll of the driver.
//!
//! async-process's exit future asks the kernel each time it is polled. The driver
//! is polled for every message, so the exit future gets a waker of its own that
//! raises a flag, and is polled again only once that flag is up.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::task::{waker_ref, ArcWake, AtomicWaker};

use crate::exit::ExitStatus;

type StatusFuture = Pin<Box<dyn Future<Output = io::Result<std::process::ExitStatus>> + Send>>;

pub(crate) struct ExitWatch {
    status: StatusFuture,
    signal: Arc<Signal>,
}

struct Signal {
    fired: AtomicBool,
    driver: AtomicWaker,
}

impl ArcWake for Signal {
    fn wake_by_ref(signal: &Arc<Self>) {
        signal.fired.store(true, Ordering::Release);
        signal.driver.wake();
    }
}

impl ExitWatch {
    pub(crate) fn new(status: StatusFuture) -> Self {
        ExitWatch {
            status,
            // Up at first, so the first poll registers with the reaper.
            signal: Arc::new(Signal {
                fired: AtomicBool::new(true),
                driver: AtomicWaker::new(),
            }),
        }
    }

    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<ExitStatus> {
        self.signal.driver.register(cx.waker());
        if !self.signal.fired.swap(false, Ordering::AcqRel) {
            return Poll::Pending;
        }
        let waker = waker_ref(&self.signal);
        let mut own = Context::from_waker(&waker);
        match self.status.as_mut().poll(&mut own) {
            // The reaper cannot fail for a child we spawned; if it does, call it unknown.
            Poll::Ready(result) => {
                Poll::Ready(result.map_or(ExitStatus::unknown(), ExitStatus::from))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}
