//! The child process itself: started, killed, and asked whether it has exited.
//!
//! Where the kernel has pidfds (Linux 5.3 and later) the child is started with
//! std's `Command`, and a pidfd of our own tells when it exits (see
//! [`ExitWatch`](crate::exit_watch::ExitWatch)). async-process would open a
//! second pidfd and register it with async-io's reactor, where the hang-up that
//! follows the reap wakes whichever thread holds that reactor: two context
//! switches for every server closed (seen with `perf sched`), for a descriptor
//! nobody reads. Without pidfds, async-process starts the child and its reaper
//! reports the exit (by SIGCHLD where it has no pidfds either).
//!
//! Setting `STDIO_MCP_NO_PIDFD` in the environment takes the second path on any
//! kernel; the test script runs the lifecycle tests that way too.

use std::future::Future;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::pin::Pin;
use std::sync::OnceLock;

use crate::pipes::ChildEnds;

/// What async-process's reaper resolves to once the child has exited.
pub(crate) type StatusFuture =
    Pin<Box<dyn Future<Output = io::Result<std::process::ExitStatus>> + Send>>;

pub(crate) enum Process {
    /// Watched through the pidfd handed out with it; reaped with `waitpid`.
    Std(std::process::Child),
    /// Watched and reaped by async-process's reaper.
    AsyncProcess(async_process::Child),
}

/// Starts `command` with `ends` as its standard streams. Returns the child and,
/// where pidfds work, a pidfd that turns readable when it exits.
pub(crate) fn spawn(
    mut command: std::process::Command,
    ends: ChildEnds,
) -> io::Result<(Process, Option<OwnedFd>)> {
    if pidfds_work() {
        let mut child = command
            .stdin(ends.stdin)
            .stdout(ends.stdout)
            .stderr(ends.stderr)
            .spawn()?;
        return match pidfd_open(child.id()) {
            Ok(pidfd) => Ok((Process::Std(child), Some(pidfd))),
            Err(e) => {
                // Out of descriptors, most likely: nothing could watch this
                // child, so it does not run at all. SIGKILL ends it at once.
                let _ = child.kill();
                let _ = child.wait();
                Err(e)
            }
        };
    }
    crate::reaper::ensure_driven();
    let child = async_process::Command::from(command)
        // The driver sees every exit; a child it did not see end goes to
        // `reaper::adopt`. Nothing to hand to async-process's reaper on drop.
        .reap_on_drop(false)
        .stdin(ends.stdin)
        .stdout(ends.stdout)
        .stderr(ends.stderr)
        .spawn()?;
    Ok((Process::AsyncProcess(child), None))
}

impl Process {
    pub(crate) fn id(&self) -> u32 {
        match self {
            Process::Std(child) => child.id(),
            Process::AsyncProcess(child) => child.id(),
        }
    }

    /// SIGKILL, unless the child has already been reaped.
    pub(crate) fn kill(&mut self) {
        let _ = match self {
            Process::Std(child) => child.kill(),
            Process::AsyncProcess(child) => child.kill(),
        };
    }

    /// Reaps the child if it has exited (one `waitpid` with `WNOHANG`).
    pub(crate) fn try_status(&mut self) -> io::Result<Option<std::process::ExitStatus>> {
        match self {
            Process::Std(child) => child.try_wait(),
            Process::AsyncProcess(child) => child.try_status(),
        }
    }

    /// async-process's exit future, for a child that has no pidfd.
    pub(crate) fn reaper_status(&mut self) -> Option<StatusFuture> {
        match self {
            Process::Std(_) => None,
            Process::AsyncProcess(child) => Some(Box::pin(child.status())),
        }
    }
}

/// Whether `pidfd_open` works here, asked once (old kernels lack it, and some
/// sandboxes forbid it).
fn pidfds_work() -> bool {
    static WORK: OnceLock<bool> = OnceLock::new();
    *WORK.get_or_init(|| {
        std::env::var_os("STDIO_MCP_NO_PIDFD").is_none() && pidfd_open(std::process::id()).is_ok()
    })
}

fn pidfd_open(pid: u32) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags, no pointers.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a non-negative result is a new descriptor (close-on-exec) that
    // nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}
