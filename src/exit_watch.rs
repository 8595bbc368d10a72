//! Waiting for the child's exit without a `wait4` on every poll of the driver.
//!
//! With a pidfd (see [`process`](crate::process)), `waitpid` is asked only once
//! the pidfd has turned readable: on the background thread the pidfd sits in
//! that thread's own poller, anywhere else in async-io's reactor. Without one it
//! is async-process's exit future, which asks the kernel each time it is polled.
//! The driver is polled for every message, so everything but the background
//! thread's poller (one atomic flag) sits behind a [`Gate`] and is polled again
//! only once its own waker fired: no lock and no system call per message.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use async_io::{Async, Timer};
use futures::Stream;

use crate::exit::ExitStatus;
use crate::gate::Gate;
use crate::poller::{self, Interest};
use crate::process::{Process, StatusFuture};

/// How often to ask, should a pidfd fit in no poller at all.
const FALLBACK_TICK: Duration = Duration::from_millis(10);

pub(crate) struct ExitWatch {
    backend: Backend,
    /// Lets every backend but `Poller` (whose readiness is one atomic flag) be
    /// polled only once its own waker fired.
    gate: Gate,
}

enum Backend {
    /// Not polled yet: the pidfd, if the child has one.
    Unset(Option<OwnedFd>),
    /// The pidfd in the polling thread's own poller.
    Poller {
        pidfd: OwnedFd,
        interest: Arc<Interest>,
    },
    /// The pidfd in async-io's reactor.
    Reactor(Async<OwnedFd>),
    /// async-process's reaper (no pidfd).
    Reaper(StatusFuture),
    /// Registering the pidfd failed (out of memory for epoll): ask on a timer.
    Ticks(Timer),
}

impl ExitWatch {
    pub(crate) fn new(pidfd: Option<OwnedFd>) -> Self {
        ExitWatch {
            backend: Backend::Unset(pidfd),
            gate: Gate::new(),
        }
    }

    pub(crate) fn poll(&mut self, cx: &mut Context<'_>, child: &mut Process) -> Poll<ExitStatus> {
        if let Backend::Unset(pidfd) = &mut self.backend {
            self.backend = choose(pidfd.take(), child);
        }
        if let Backend::Poller { interest, .. } = &self.backend {
            if interest.is_ready() {
                if let Poll::Ready(status) = settle(child.try_status()) {
                    return Poll::Ready(status);
                }
            }
            interest.wait(cx.waker());
            return Poll::Pending;
        }
        let backend = &mut self.backend;
        match self.gate.pass(cx, |own| poll_woken(backend, own, child)) {
            Some(Poll::Ready(status)) => Poll::Ready(status),
            Some(Poll::Pending) | None => Poll::Pending,
        }
    }

    /// Gives up the watch, handing back the pidfd (out of any poller) for
    /// whoever waits for the child next.
    pub(crate) fn into_pidfd(mut self) -> Option<OwnedFd> {
        match std::mem::replace(&mut self.backend, Backend::Unset(None)) {
            Backend::Unset(pidfd) => pidfd,
            Backend::Poller { pidfd, .. } => {
                poller::deregister(pidfd.as_raw_fd());
                Some(pidfd)
            }
            Backend::Reactor(pidfd) => pidfd.into_inner().ok(),
            Backend::Reaper(_) | Backend::Ticks(_) => None,
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

/// Polls a backend other than `Poller`, with the gate's own waker.
fn poll_woken(
    backend: &mut Backend,
    cx: &mut Context<'_>,
    child: &mut Process,
) -> Poll<ExitStatus> {
    let exited = match backend {
        Backend::Reactor(pidfd) => loop {
            match pidfd.poll_readable(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(_)) => return Poll::Ready(ExitStatus::unknown()),
                Poll::Ready(Ok(())) => {}
            }
            match child.try_status() {
                // Readable but not exited cannot happen with a pidfd; poll
                // again, which registers for the next event.
                Ok(None) => continue,
                exited => break exited,
            }
        },
        // The reaper cannot fail for a child we spawned; if it does, call the
        // exit unknown.
        Backend::Reaper(status) => {
            return status
                .as_mut()
                .poll(cx)
                .map(|result| result.map_or(ExitStatus::unknown(), ExitStatus::from));
        }
        Backend::Ticks(timer) => {
            while Pin::new(&mut *timer).poll_next(cx).is_ready() {}
            child.try_status()
        }
        Backend::Unset(_) | Backend::Poller { .. } => unreachable!("polled in ExitWatch::poll"),
    };
    settle(exited)
}

/// What one `waitpid` said, as the watch's answer.
fn settle(exited: io::Result<Option<std::process::ExitStatus>>) -> Poll<ExitStatus> {
    match exited {
        Ok(Some(status)) => Poll::Ready(ExitStatus::from(status)),
        Ok(None) => Poll::Pending,
        // The child is ours and was not reaped elsewhere; if it is anyway, call
        // the exit unknown rather than wait forever.
        Err(_) => Poll::Ready(ExitStatus::unknown()),
    }
}

fn choose(pidfd: Option<OwnedFd>, child: &mut Process) -> Backend {
    let Some(pidfd) = pidfd else {
        return match child.reaper_status() {
            Some(status) => Backend::Reaper(status),
            None => Backend::Ticks(Timer::interval(FALLBACK_TICK)),
        };
    };
    if poller::on_this_thread() {
        let interest = Arc::new(Interest::default());
        if poller::register(pidfd.as_raw_fd(), false, &interest).is_ok() {
            return Backend::Poller { pidfd, interest };
        }
    }
    match Async::new(pidfd) {
        Ok(pidfd) => Backend::Reactor(pidfd),
        Err(_) => Backend::Ticks(Timer::interval(FALLBACK_TICK)),
    }
}

/// Waits for the exit of a child whose driver is gone (it has been sent
/// SIGKILL), so it leaves no zombie. Runs on the reaping thread.
pub(crate) async fn reap(mut child: Process, pidfd: Option<OwnedFd>) {
    let mut watch = ExitWatch::new(pidfd);
    futures::future::poll_fn(|cx| watch.poll(cx, &mut child)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exit_of(watch: &mut ExitWatch, child: &mut Process) -> ExitStatus {
        futures::executor::block_on(async {
            let exit = futures::future::poll_fn(|cx| watch.poll(cx, child));
            let limit = Timer::after(Duration::from_secs(10));
            match futures::future::select(Box::pin(exit), limit).await {
                futures::future::Either::Left((status, _)) => status,
                futures::future::Either::Right(_) => panic!("the exit was never seen"),
            }
        })
    }

    /// Off the background thread a child's pidfd waits in async-io's reactor.
    #[test]
    fn with_a_pidfd_the_exit_comes_through_the_reactor() {
        let mut command = std::process::Command::new("sh");
        command.args(["-c", "sleep 0.05; exit 5"]);
        let (ends, _parent_ends) = crate::pipes::make().unwrap();
        let (mut child, pidfd) = crate::process::spawn(command, ends).unwrap();
        if std::env::var_os("STDIO_MCP_NO_PIDFD").is_some() {
            assert!(pidfd.is_none());
            return;
        }
        assert!(pidfd.is_some(), "this kernel has pidfds");
        let mut watch = ExitWatch::new(pidfd);
        let status = exit_of(&mut watch, &mut child);
        assert!(matches!(watch.backend, Backend::Reactor(_)));
        assert_eq!(status.code(), Some(5));
    }

    /// A child with no pidfd and no async-process reaper (a pidfd that fitted
    /// in no poller) is still seen to exit, by asking on a timer.
    #[test]
    fn without_a_pidfd_a_std_child_is_asked_on_a_timer() {
        let child = std::process::Command::new("sh")
            .args(["-c", "sleep 0.05; exit 7"])
            .spawn()
            .unwrap();
        let mut child = Process::Std(child);
        let mut watch = ExitWatch::new(None);
        let status = exit_of(&mut watch, &mut child);
        assert!(matches!(watch.backend, Backend::Ticks(_)));
        assert_eq!(status.code(), Some(7));
    }
}
