//! The one future that does all of a child's I/O.
//!
//! Each poll, in order: take what handles queued and write it; read stdout and
//! route every complete line; drain stderr; watch for the exit; advance the close
//! ladder. Nothing here blocks; every wait is a registered wake-up.

use std::fmt;
use std::future::Future;
use std::ops::ControlFlow;
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use crate::deadline::Deadline;
use crate::error::Error;
use crate::exit::ExitStatus;
use crate::exit_watch::ExitWatch;
use crate::framing::{Line, LineBuffer};
use crate::gate::Gate;
use crate::pipes::{ParentEnds, ReadPipe, WritePipe};
use crate::process::Process;
pub(crate) use crate::route::Handlers;
use crate::route::Router;
use crate::shared::Shared;

/// Between closing stdin and SIGTERM, and between SIGTERM and SIGKILL.
const LADDER_STEP: Duration = Duration::from_secs(2);
/// After the exit, how long to wait for the pipes to reach their end (a grandchild
/// may hold them open) before failing what still waits.
const DRAIN_GRACE: Duration = Duration::from_millis(500);
/// After stdout ends, how long to wait for the exit before calling the child's
/// stdout closed while it runs.
const EOF_GRACE: Duration = Duration::from_millis(500);
/// The longest stderr line kept; the rest of a longer one is dropped.
const STDERR_LINE_LIMIT: usize = 64 * 1024;
/// A write buffer larger than this is freed once written, not kept for reuse.
const KEEP_WRITE_BUFFER: usize = 64 * 1024;
/// Reads per pipe per poll before yielding, so one chatty child cannot starve
/// the other transports on the shared thread.
const READS_PER_POLL: usize = 32;

/// The future that runs one child's I/O: writes queued lines, reads and routes
/// stdout, drains stderr, reaps the exit and carries out `close`.
///
/// [`Builder::spawn`](crate::Builder::spawn) runs it on the shared background
/// thread; [`Builder::spawn_with_driver`](crate::Builder::spawn_with_driver) hands
/// it to you to run on your executor. It completes once the child has exited and
/// everything it wrote has been read.
///
/// Dropping it before then kills the child (SIGKILL) and fails what waits:
/// requests with [`Error::LeftLoop`], a pending close with [`Error::CloseLeftLoop`].
///
/// ```no_run
/// # smol::block_on(async {
/// use stdio_mcp::Transport;
///
/// let (transport, driver) = Transport::builder(["my-mcp-server"]).spawn_with_driver()?;
/// smol::spawn(driver).detach();
/// transport.send_request("ping", None).await?;
/// # Ok::<(), stdio_mcp::Error>(()) });
/// ```
#[must_use = "nothing is written to or read from the child until the driver is polled"]
pub struct Driver {
    inner: Option<Box<Inner>>,
}

struct Inner {
    shared: Arc<Shared>,
    router: Router,
    child: Process,
    process_group: bool,
    stdin: Option<WritePipe>,
    stdout: Option<ReadPipe>,
    stderr: Option<ReadPipe>,
    exit: ExitWatch,
    exited: Option<ExitStatus>,
    /// Bytes taken from the queue and not yet all written.
    writing: Vec<u8>,
    written: usize,
    stdout_lines: LineBuffer,
    stderr_lines: LineBuffer,
    /// Opened by stderr's own wake-ups, so other wake-ups do not poll it.
    stderr_gate: Gate,
    ladder: Option<Ladder>,
    /// Runs while waiting for the pipes after the exit, or for the exit after stdout ended.
    grace: Option<Deadline>,
}

struct Ladder {
    next: Rung,
    timer: Deadline,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Rung {
    Term,
    Kill,
    Done,
}

impl Driver {
    pub(crate) fn new(
        child: Process,
        pidfd: Option<OwnedFd>,
        pipes: ParentEnds,
        shared: Arc<Shared>,
        handlers: Handlers,
        max_message_size: usize,
        process_group: bool,
    ) -> Self {
        let stdin = Some(pipes.stdin);
        let stdout = Some(pipes.stdout);
        let stderr = Some(pipes.stderr);
        let exit = ExitWatch::new(pidfd);
        Driver {
            inner: Some(Box::new(Inner {
                router: Router::new(Arc::clone(&shared), handlers),
                shared,
                child,
                process_group,
                stdin,
                stdout,
                stderr,
                exit,
                exited: None,
                writing: Vec::new(),
                written: 0,
                stdout_lines: LineBuffer::new(max_message_size),
                stderr_lines: LineBuffer::new(STDERR_LINE_LIMIT),
                stderr_gate: Gate::new(),
                ladder: None,
                grace: None,
            })),
        }
    }
}

impl Future for Driver {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let Some(inner) = this.inner.as_mut() else {
            return Poll::Ready(());
        };
        if inner.poll_once(cx).is_ready() {
            // Let go of the child's handles before telling `close()` it is over.
            let shared = Arc::clone(&inner.shared);
            this.inner = None;
            shared.wake_closers();
            return Poll::Ready(());
        }
        Poll::Pending
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.take() {
            inner.left_the_loop();
        }
    }
}

impl fmt::Debug for Driver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Driver");
        match &self.inner {
            Some(inner) => d
                .field("pid", &inner.shared.pid)
                .field("exited", &inner.exited)
                .field("closing", &inner.ladder.as_ref().map(|l| l.next))
                .finish(),
            None => d.field("finished", &true).finish(),
        }
    }
}

/// How reading a pipe ended this time.
enum Drained {
    /// Nothing more to read now (or the read budget is spent and a wake-up queued).
    Waiting,
    /// The pipe reached its end.
    Ended,
    /// The line handler asked to stop.
    Stopped,
}

/// Reads what `pipe` has, handing each complete line to `each`, for at most
/// `READS_PER_POLL` reads, so one chatty child cannot starve the other drivers.
fn read_lines(
    pipe: &mut ReadPipe,
    lines: &mut LineBuffer,
    cx: &mut Context<'_>,
    mut each: impl FnMut(Line<'_>) -> ControlFlow<()>,
) -> Drained {
    for _ in 0..READS_PER_POLL {
        match pipe.poll_read(cx, lines.spare()) {
            Poll::Pending => return Drained::Waiting,
            Poll::Ready(Ok(n)) if n > 0 => {
                lines.filled(n);
                while let Some(line) = lines.next_line() {
                    if each(line).is_break() {
                        return Drained::Stopped;
                    }
                }
            }
            // End of stream, or an error that ends it.
            Poll::Ready(_) => return Drained::Ended,
        }
    }
    cx.waker().wake_by_ref();
    Drained::Waiting
}

impl Inner {
    fn poll_once(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.flush(cx);
        self.read_stdout(cx);
        self.read_stderr(cx);
        self.watch_exit(cx);
        self.climb_ladder(cx);
        self.poll_grace(cx)
    }

    /// Takes the queue (registering for the next push) and writes as much as the pipe takes.
    fn flush(&mut self, cx: &mut Context<'_>) {
        loop {
            let idle = self.written == self.writing.len();
            if idle {
                if self.writing.capacity() > KEEP_WRITE_BUFFER {
                    // A burst is over: give its memory back rather than keep it idle.
                    self.writing = Vec::new();
                }
                self.writing.clear();
                self.written = 0;
            }
            let mut state = self.shared.lock();
            match &state.driver_waker {
                Some(w) if w.will_wake(cx.waker()) => {}
                _ => state.driver_waker = Some(cx.waker().clone()),
            }
            if idle {
                // One swap takes every queued line: one write for all of them.
                std::mem::swap(&mut self.writing, &mut state.outgoing);
            }
            let close = state.close_requested || self.shared.handles() == 0;
            drop(state);
            if close {
                self.start_close();
            }
            let Some(stdin) = self.stdin.as_mut() else {
                // Nowhere to write: the child no longer takes input.
                self.writing.clear();
                self.written = 0;
                return;
            };
            if self.writing.is_empty() {
                if self.ladder.is_some() {
                    // Everything queued before the close is out: end the input.
                    self.stdin = None;
                }
                return;
            }
            match stdin.poll_write(cx, &self.writing[self.written..]) {
                Poll::Ready(Ok(n)) if n > 0 => {
                    self.written += n;
                    if let Some(stdout) = self.stdout.as_mut() {
                        stdout.answer_may_be_waiting();
                    }
                }
                Poll::Pending => return,
                Poll::Ready(_) => {
                    // The child closed its stdin (or worse): it cannot take requests any
                    // more. Refuse new ones and close it; waiting ones end with its exit.
                    self.stdin = None;
                    self.shared.lock().refusal.get_or_insert(Error::NotAlive);
                    self.start_close();
                }
            }
        }
    }

    fn read_stdout(&mut self, cx: &mut Context<'_>) {
        let Some(stdout) = self.stdout.as_mut() else {
            return;
        };
        let router = &mut self.router;
        let drained = read_lines(stdout, &mut self.stdout_lines, cx, |line| match line {
            Line::Complete(line) => {
                router.route_line(line);
                ControlFlow::Continue(())
            }
            Line::TooLong(_) => ControlFlow::Break(()),
        });
        match drained {
            Drained::Ended => self.stdout_ended(),
            Drained::Stopped => self.message_too_large(),
            Drained::Waiting => {}
        }
    }

    fn stdout_ended(&mut self) {
        self.stdout = None;
        if let Some(rest) = self.stdout_lines.take_unterminated() {
            // A last line without its newline is still a line.
            self.router.route_line(&rest);
        }
        if self.exited.is_none() && self.grace.is_none() {
            self.grace = Some(Deadline::after(EOF_GRACE));
        }
    }

    fn message_too_large(&mut self) {
        self.stdout = None;
        let error = Error::MessageTooLarge {
            limit: self.stdout_lines.limit(),
        };
        self.fail_pending(error);
        self.start_close();
    }

    fn read_stderr(&mut self, cx: &mut Context<'_>) {
        let Some(stderr) = self.stderr.as_mut() else {
            return;
        };
        let router = &mut self.router;
        let lines = &mut self.stderr_lines;
        // Most servers write nothing there: look only when the pipe woke us.
        let drained = self.stderr_gate.pass(cx, |own| {
            read_lines(stderr, lines, own, |line| {
                // An over-long stderr line is kept cut; the rest of it is skipped.
                let (Line::Complete(line) | Line::TooLong(line)) = line;
                router.stderr_line(line);
                ControlFlow::Continue(())
            })
        });
        if let Some(Drained::Ended) = drained {
            self.stderr = None;
            if let Some(rest) = self.stderr_lines.take_unterminated() {
                self.router.stderr_line(&rest);
            }
        }
    }

    fn watch_exit(&mut self, cx: &mut Context<'_>) {
        if self.exited.is_some() {
            return;
        }
        let Poll::Ready(status) = self.exit.poll(cx, &mut self.child) else {
            return;
        };
        self.exited = Some(status);
        self.stdin = None;
        {
            let mut state = self.shared.lock();
            state.exit_status = Some(status);
            state.refusal.get_or_insert(Error::NotAlive);
        }
        // What the child wrote before it exited is still in the pipes: read it first.
        self.grace = if self.stdout.is_some() || self.stderr.is_some() {
            Some(Deadline::after(DRAIN_GRACE))
        } else {
            None
        };
        self.read_stdout(cx);
        self.stderr_gate.open();
        self.read_stderr(cx);
    }

    fn start_close(&mut self) {
        if self.ladder.is_none() && self.exited.is_none() {
            self.ladder = Some(Ladder {
                next: Rung::Term,
                timer: Deadline::after(LADDER_STEP),
            });
        }
    }

    fn climb_ladder(&mut self, cx: &mut Context<'_>) {
        if self.exited.is_some() {
            return;
        }
        let Some(ladder) = self.ladder.as_mut() else {
            return;
        };
        if ladder.next == Rung::Done || ladder.timer.poll(cx).is_pending() {
            return;
        }
        let rung = ladder.next;
        match rung {
            Rung::Term => {
                ladder.next = Rung::Kill;
                ladder.timer.set_after(LADDER_STEP);
                // Register the timer's new deadline.
                let _ = ladder.timer.poll(cx);
                // Whatever was not written by now will not be.
                self.stdin = None;
                self.signal(libc::SIGTERM);
            }
            Rung::Kill => {
                ladder.next = Rung::Done;
                self.kill();
            }
            Rung::Done => {}
        }
    }

    fn signal(&self, signal: libc::c_int) {
        let pid = self.shared.pid as libc::pid_t;
        let target = if self.process_group { -pid } else { pid };
        // SAFETY: kill(2) takes plain integers; the child is not yet reaped
        // (`exited` is None), so its pid (and group id) still names it.
        unsafe {
            libc::kill(target, signal);
        }
    }

    fn kill(&mut self) {
        if self.process_group {
            self.signal(libc::SIGKILL);
        } else {
            self.child.kill();
        }
    }

    /// Settles the run once the exit is known and the pipes are drained (or the
    /// grace after the exit ran out); handles stdout ending while the child runs.
    fn poll_grace(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let grace_over = match self.grace.as_mut() {
            Some(timer) => timer.poll(cx).is_ready(),
            None => false,
        };
        if let Some(status) = self.exited {
            let drained = self.stdout.is_none() && self.stderr.is_none();
            if !drained && !grace_over {
                return Poll::Pending;
            }
            if !drained && self.process_group {
                // The leader is gone but something still holds its pipes: what is
                // left of its group (a server behind a wrapper) goes with it.
                // SAFETY: kill(2) takes plain integers; a group id is not reused
                // while any process of the group lives.
                unsafe {
                    libc::kill(-(self.shared.pid as libc::pid_t), libc::SIGKILL);
                }
            }
            self.finish(status);
            return Poll::Ready(());
        }
        if grace_over {
            // Stdout ended and the child still runs: nothing can answer any more.
            self.grace = None;
            self.fail_pending(Error::StdoutClosed);
            self.start_close();
            self.climb_ladder(cx);
        }
        Poll::Pending
    }

    /// Refuses new sends with `error` and fails every waiting request with it.
    fn fail_pending(&mut self, error: Error) {
        let wakers = {
            let mut state = self.shared.lock();
            let wakers = state.fail_all(&error);
            state.refusal.get_or_insert(error);
            wakers
        };
        wakers.into_iter().for_each(Waker::wake);
    }

    fn finish(&mut self, status: ExitStatus) {
        let wakers = {
            let mut state = self.shared.lock();
            let error = Error::Exited {
                status,
                stderr_tail: state.stderr_tail.iter().cloned().collect(),
            };
            let wakers = state.fail_all(&error);
            state.finished = Some(Ok(()));
            wakers
        };
        wakers.into_iter().for_each(Waker::wake);
    }

    /// The driver was dropped before the child exited: kill it, fail what waits.
    fn left_the_loop(mut self: Box<Self>) {
        let unreaped = self.exited.is_none();
        if unreaped {
            self.kill();
        }
        let wakers = {
            let mut state = self.shared.lock();
            let wakers = state.fail_all(&Error::LeftLoop);
            state.refusal.get_or_insert(Error::NotAlive);
            state.finished.get_or_insert(Err(Error::CloseLeftLoop));
            wakers
        };
        wakers.into_iter().for_each(Waker::wake);
        self.shared.wake_closers();
        if unreaped {
            // Its exit is awaited elsewhere, so it leaves no zombie.
            let this = *self;
            crate::reaper::adopt(this.child, this.exit.into_pidfd());
        }
    }
}
