//! The child process: started through async-process with its three pipes, stopped
//! through the platform's [`Stopper`](crate::sys::Stopper), reaped, and how it ended.

use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::{Mutex, OnceLock};

use async_process::{ChildStderr, ChildStdin, ChildStdout};
use futures::channel::mpsc::{unbounded, UnboundedReceiver, UnboundedSender};

use crate::sys;

/// async-process's future for the exit, made once per child.
pub(crate) type StatusFuture =
    Pin<Box<dyn Future<Output = io::Result<std::process::ExitStatus>> + Send>>;

/// A started child and the means to stop it.
pub(crate) struct Child {
    process: async_process::Child,
    stopper: sys::Stopper,
    /// A sandboxed child's private temporary folder: removed with it.
    scratch: Option<crate::sandbox::Scratch>,
}

/// The ends of the child's standard streams that this process keeps.
pub(crate) struct Pipes {
    pub(crate) stdin: sys::Pipe<ChildStdin>,
    pub(crate) stdout: sys::Pipe<ChildStdout>,
    pub(crate) stderr: sys::Pipe<ChildStderr>,
}

/// Starts `command` with piped standard streams. The driver sees the exit of
/// every child it runs to the end; one it gives up early goes to [`orphan`].
pub(crate) fn spawn(
    command: std::process::Command,
    options: sys::Options,
    watched: sys::Watched,
    scratch: Option<crate::sandbox::Scratch>,
) -> io::Result<(Child, Pipes, StatusFuture)> {
    let mut process = async_process::Command::from(command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Not handed to async-process's reaper when dropped: that would wake
        // the thread driving it for every child, though nearly all are reaped.
        .reap_on_drop(false)
        .kill_on_drop(true)
        .spawn()?;
    let stopper = match sys::Stopper::new(&process, options, watched) {
        Ok(stopper) => stopper,
        Err(error) => {
            // It cannot be stopped as asked: it must not run at all.
            let _ = process.kill();
            return Err(error);
        }
    };
    let (Some(stdin), Some(stdout), Some(stderr)) = (
        process.stdin.take(),
        process.stdout.take(),
        process.stderr.take(),
    ) else {
        unreachable!("all three streams were asked to be piped");
    };
    // Made after stdin was taken: status() would otherwise close it.
    let status = Box::pin(process.status());
    let child = Child {
        process,
        stopper,
        scratch,
    };
    Ok((
        child,
        Pipes {
            stdin: sys::Pipe::new(stdin),
            stdout: sys::Pipe::new(stdout),
            stderr: sys::Pipe::new(stderr),
        },
        status,
    ))
}

impl Child {
    pub(crate) fn id(&self) -> u32 {
        self.process.id()
    }

    /// Whether it runs in a sandbox.
    pub(crate) fn sandboxed(&self) -> bool {
        self.scratch.is_some()
    }

    /// The close ladder's middle step: SIGTERM on Unix, the end on Windows.
    pub(crate) fn terminate(&mut self) {
        self.stopper.terminate(&mut self.process);
    }

    /// Kills the child (or its whole group or job) at once.
    pub(crate) fn kill(&mut self) {
        self.stopper.kill(&mut self.process);
    }

    /// The child was reaped (its exit seen).
    pub(crate) fn reaped(&mut self) {
        self.stopper.reaped();
    }

    /// After the child's exit, ends what is left of its group or job.
    pub(crate) fn kill_rest(&self) {
        self.stopper.kill_rest();
    }

    /// After the child's exit, asks what is left of its group to stop
    /// (SIGTERM; on Windows the end of its job).
    pub(crate) fn terminate_rest(&self) {
        self.stopper.terminate_rest();
    }

    /// After the child's exit, whether any process of its group or job still runs.
    pub(crate) fn group_lingers(&self) -> bool {
        self.stopper.group_lingers()
    }
}

/// Children whose driver was dropped before their exit: killed, and awaited by
/// the background thread (`orphans`), so none is left a zombie.
struct Orphans {
    sender: UnboundedSender<StatusFuture>,
    receiver: Mutex<Option<UnboundedReceiver<StatusFuture>>>,
}

fn orphanage() -> &'static Orphans {
    static ORPHANS: OnceLock<Orphans> = OnceLock::new();
    ORPHANS.get_or_init(|| {
        let (sender, receiver) = unbounded();
        Orphans {
            sender,
            receiver: Mutex::new(Some(receiver)),
        }
    })
}

/// Hands over a killed child's exit to be awaited elsewhere. If nobody takes
/// orphans (the background thread could not start), it stays a zombie until
/// this process exits: the best left to do.
pub(crate) fn orphan(exit: StatusFuture) {
    let _ = orphanage().sender.unbounded_send(exit);
}

/// The orphans to await; `None` after the first call (one thread awaits them).
pub(crate) fn orphans() -> Option<UnboundedReceiver<StatusFuture>> {
    crate::lock::lock(&orphanage().receiver).take()
}

/// How the MCP server process ended: an exit code or, on Unix, the signal that killed it.
///
/// ```no_run
/// # futures::executor::block_on(async {
/// use stdio_mcp::Transport;
///
/// let t = Transport::builder(["true"]).spawn()?;
/// t.close().await?;
/// let status = t.exit_status().expect("exited");
/// assert_eq!(status.code(), Some(0));
/// # Ok::<(), stdio_mcp::Error>(()) });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ExitStatus {
    code: Option<i32>,
    signal: Option<i32>,
    /// It ran in a sandbox (said in the exit error: a denial may be why).
    sandboxed: bool,
}

impl ExitStatus {
    /// The exit code, if the process exited normally. On Windows it is always
    /// there (a process ended by `TerminateProcess` has code 1).
    ///
    /// # Examples
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// let t = stdio_mcp::Transport::builder(["sh", "-c", "exit 7"]).spawn()?;
    /// t.close().await?;
    /// assert_eq!(t.exit_status().unwrap().code(), Some(7));
    /// # Ok::<(), stdio_mcp::Error>(()) }).unwrap();
    /// ```
    #[must_use]
    pub fn code(&self) -> Option<i32> {
        self.code
    }

    /// The number of the signal that ended the process, if one did. Always
    /// `None` on Windows, which has no signals.
    ///
    /// # Examples
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// let t = stdio_mcp::Transport::builder(["sh", "-c", "kill -9 $$"]).spawn()?;
    /// t.close().await?;
    /// assert_eq!(t.exit_status().unwrap().signal(), Some(9));
    /// # Ok::<(), stdio_mcp::Error>(()) }).unwrap();
    /// ```
    #[must_use]
    pub fn signal(&self) -> Option<i32> {
        self.signal
    }

    /// Whether the process exited with code 0.
    ///
    /// # Examples
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// let t = stdio_mcp::Transport::builder(["true"]).spawn()?;
    /// t.close().await?;
    /// assert!(t.exit_status().unwrap().success());
    /// # Ok::<(), stdio_mcp::Error>(()) }).unwrap();
    /// ```
    #[must_use]
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// A status for an exit whose details could not be learned.
    pub(crate) fn unknown() -> Self {
        ExitStatus {
            code: None,
            signal: None,
            sandboxed: false,
        }
    }

    /// Whether the process ran in a sandbox.
    ///
    /// # Examples
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// let t = stdio_mcp::Transport::builder(["true"]).spawn()?;
    /// t.close().await?;
    /// assert!(!t.exit_status().expect("exited").sandboxed());
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    #[must_use]
    pub fn sandboxed(&self) -> bool {
        self.sandboxed
    }

    /// The same status, of a process that ran in a sandbox.
    pub(crate) fn in_sandbox(mut self, sandboxed: bool) -> Self {
        self.sandboxed = sandboxed;
        self
    }
}

impl From<std::process::ExitStatus> for ExitStatus {
    fn from(status: std::process::ExitStatus) -> Self {
        #[cfg(unix)]
        let signal = std::os::unix::process::ExitStatusExt::signal(&status);
        #[cfg(not(unix))]
        let signal = None;
        ExitStatus {
            code: status.code(),
            signal,
            sandboxed: false,
        }
    }
}

/// `code N` or `signal N`, as it appears inside the exit error; `, in its
/// sandbox` after it for a sandboxed server (what it was denied may be why).
impl fmt::Display for ExitStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.code, self.signal) {
            (Some(code), _) => write!(f, "code {code}")?,
            (None, Some(signal)) => write!(f, "signal {signal}")?,
            (None, None) => f.write_str("unknown status")?,
        }
        if self.sandboxed {
            f.write_str(", in its sandbox")?;
        }
        Ok(())
    }
}
