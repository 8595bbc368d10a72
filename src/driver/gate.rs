//! A wake-up of its own for each part of the driver that rarely has work.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::Context;

use futures::task::{waker_ref, ArcWake, AtomicWaker};

/// A wake-up of its own for one part of the driver.
///
/// The driver is polled for every message. Parts that rarely have anything to do
/// (the child's exit, its stderr) each get a gate: a waker that raises the gate's
/// flag before waking the driver. The part is polled only while its flag is up,
/// so the driver's other wake-ups cost it no system call and no lock.
pub(super) struct Gate {
    signal: Arc<Signal>,
}

struct Signal {
    open: AtomicBool,
    driver: AtomicWaker,
}

impl ArcWake for Signal {
    fn wake_by_ref(signal: &Arc<Self>) {
        signal.open.store(true, Ordering::Release);
        signal.driver.wake();
    }
}

impl Gate {
    /// Open at first, so the first poll registers the part's interest.
    pub(super) fn new() -> Self {
        Gate {
            signal: Arc::new(Signal {
                open: AtomicBool::new(true),
                driver: AtomicWaker::new(),
            }),
        }
    }

    /// Lets the part be polled next time, woken or not.
    pub(super) fn open(&self) {
        self.signal.open.store(true, Ordering::Release);
    }

    /// Runs `part` with the gate's own waker if the gate was opened since the
    /// last pass; `None` if it was not.
    pub(super) fn pass<R>(
        &self,
        cx: &Context<'_>,
        part: impl FnOnce(&mut Context<'_>) -> R,
    ) -> Option<R> {
        self.signal.driver.register(cx.waker());
        if !self.signal.open.swap(false, Ordering::AcqRel) {
            return None;
        }
        let waker = waker_ref(&self.signal);
        Some(part(&mut Context::from_waker(&waker)))
    }
}
