//! Waiting for the child's exit without a `wait4` on every poll of the driver.
//!
//! On the background thread the child's pidfd sits in that thread's own poller,
//! and the child is reaped once it reports the exit. Anywhere else it is
//! async-process's exit future, behind a [`Gate`]: that future asks the kernel
//! each time it is polled, and the driver is polled for every message, so it is
//! polled again only once the reaper has woken it.

use std::future::Future;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use async_process::Child;

use crate::exit::ExitStatus;
use crate::gate::Gate;
use crate::poller::{self, Interest};

type StatusFuture = Pin<Box<dyn Future<Output = io::Result<std::process::ExitStatus>> + Send>>;

pub(crate) struct ExitWatch {
    backend: Backend,
}

enum Backend {
    /// Not polled yet.
    Unset,
    Poller {
        pidfd: OwnedFd,
        interest: Arc<Interest>,
    },
    AsyncIo {
        status: StatusFuture,
        gate: Gate,
    },
}

impl ExitWatch {
    pub(crate) fn new() -> Self {
        ExitWatch {
            backend: Backend::Unset,
        }
    }

    pub(crate) fn poll(&mut self, cx: &mut Context<'_>, child: &mut Child) -> Poll<ExitStatus> {
        if let Backend::Unset = self.backend {
            self.backend = match own_pidfd(child) {
                Some((pidfd, interest)) => Backend::Poller { pidfd, interest },
                None => Backend::AsyncIo {
                    status: Box::pin(child.status()),
                    gate: Gate::new(),
                },
            };
        }
        match &mut self.backend {
            Backend::Poller { interest, .. } => {
                if !interest.is_ready() {
                    interest.wait(cx.waker());
                    return Poll::Pending;
                }
                match child.try_status() {
                    Ok(Some(status)) => Poll::Ready(ExitStatus::from(status)),
                    Ok(None) => {
                        interest.wait(cx.waker());
                        Poll::Pending
                    }
                    // The child is ours and was not reaped elsewhere; if it is
                    // anyway, call the exit unknown rather than wait forever.
                    Err(_) => Poll::Ready(ExitStatus::unknown()),
                }
            }
            Backend::AsyncIo { status, gate } => {
                match gate.pass(cx, |own| status.as_mut().poll(own)) {
                    // The reaper cannot fail for a child we spawned; if it does, call it unknown.
                    Some(Poll::Ready(result)) => {
                        Poll::Ready(result.map_or(ExitStatus::unknown(), ExitStatus::from))
                    }
                    Some(Poll::Pending) | None => Poll::Pending,
                }
            }
            Backend::Unset => unreachable!("set above"),
        }
    }
}

impl Drop for ExitWatch {
    fn drop(&mut self) {
        if let Backend::Poller { pidfd, .. } = &self.backend {
            poller::deregister(pidfd.as_raw_fd());
        }
    }
}

/// A pidfd for `child` registered with this thread's poller, if it has one.
fn own_pidfd(child: &Child) -> Option<(OwnedFd, Arc<Interest>)> {
    if !poller::on_this_thread() {
        return None;
    }
    let pid = child.id() as libc::pid_t;
    // SAFETY: pidfd_open takes a pid and flags, no pointers.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return None;
    }
    // SAFETY: a non-negative result is a new descriptor (close-on-exec) we own.
    let pidfd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    let interest = Arc::new(Interest::default());
    poller::register(pidfd.as_raw_fd(), false, &interest).ok()?;
    Some((pidfd, interest))
}
