//! Waiting for the child's exit without a `wait4` on every poll of the driver.
//!
//! async-process's exit future asks the kernel each time it is polled. The driver
//! is polled for every message, so the exit future sits behind a [`Gate`] and is
//! polled again only once the reaper has woken it.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::exit::ExitStatus;
use crate::gate::Gate;

type StatusFuture = Pin<Box<dyn Future<Output = io::Result<std::process::ExitStatus>> + Send>>;

pub(crate) struct ExitWatch {
    status: StatusFuture,
    gate: Gate,
}

impl ExitWatch {
    pub(crate) fn new(status: StatusFuture) -> Self {
        ExitWatch {
            status,
            gate: Gate::new(),
        }
    }

    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<ExitStatus> {
        let status = &mut self.status;
        match self.gate.pass(cx, |own| status.as_mut().poll(own)) {
            // The reaper cannot fail for a child we spawned; if it does, call it unknown.
            Some(Poll::Ready(result)) => {
                Poll::Ready(result.map_or(ExitStatus::unknown(), ExitStatus::from))
            }
            Some(Poll::Pending) | None => Poll::Pending,
        }
    }
}
