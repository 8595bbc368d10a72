//! The one future that does all of a child's I/O.
//!
//! Each poll, in order: take what handles queued and write it; read stdout and
//! route every complete line; drain stderr; watch for the exit; advance the close
//! ladder. Nothing here blocks; every wait is a registered wake-up.

use std::fmt;
use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use async_io::Timer;
use async_process::{ChildStderr, ChildStdin, ChildStdout};
use futures::io::{AsyncRead, AsyncWrite};
use futures::FutureExt;

use crate::child::{Child, ExitStatus, Pipes, StatusFuture};
use crate::error::Error;
use crate::framing::{Line, LineBuffer};
pub(crate) use crate::route::Handlers;
use crate::route::Router;
use crate::shared::Shared;
use crate::sys::{self, Pipe};

mod gate;
mod ladder;
mod run_until;

use gate::Gate;
pub use run_until::RunUntil;

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
/// As much as a grown Linux pipe takes: a burst of that size is a steady load,
/// and freeing its buffer each time made the queue regrow from nothing.
const KEEP_WRITE_BUFFER: usize = 256 * 1024;
/// Reads per pipe per poll before yielding, so one chatty child cannot starve
/// the other transports on the shared thread.
const READS_PER_POLL: usize = 32;
/// After the leader of a process group exited, how often to look whether the
/// rest of its group is gone (there is no event for that).
const GROUP_CHECK: Duration = Duration::from_millis(50);

/// The future that runs one child's I/O: writes queued lines, reads and routes
/// stdout, drains stderr, reaps the exit and carries out `close`.
///
/// [`TransportBuilder::spawn`](crate::TransportBuilder::spawn) runs it on the shared background
/// thread; [`TransportBuilder::spawn_with_driver`](crate::TransportBuilder::spawn_with_driver) hands
/// it to you to run on your executor. It completes once the child has exited and
/// everything it wrote has been read. The driver a restarting client hands out
/// ([`ClientBuilder::restart`](crate::client::ClientBuilder::restart)) drives
/// each process of its server in turn, and completes when the client is done.
///
/// Dropping it before then kills the child (SIGKILL; `TerminateProcess` on
/// Windows) and fails what waits: requests with [`Error::LeftLoop`], a pending
/// close with [`Error::CloseLeftLoop`].
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
    inner: Option<Box<ChildIo>>,
    /// What runs once the child is done: a restarting client's supervisor,
    /// which drives each later process of its server.
    then: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
}

struct ChildIo {
    shared: Arc<Shared>,
    router: Router,
    child: Child,
    stage: Stage,
    /// When the ladder (or the end of the child's group) sent SIGTERM.
    terminated_at: Option<Instant>,
    /// Fires at the earliest deadline of the requests whose limit the driver
    /// keeps (`Deadline`): one timer for all of them.
    sweep: Option<Timer>,
    /// async-process's exit future; polled only through `exit_gate` until the exit.
    exit: StatusFuture,
    exit_gate: Gate,
    stdin: Option<Pipe<ChildStdin>>,
    stdout: Option<Pipe<ChildStdout>>,
    stderr: Option<Pipe<ChildStderr>>,
    /// Bytes taken from the queue and not yet all written.
    writing: Vec<u8>,
    written: usize,
    stdout_lines: LineBuffer,
    stderr_lines: LineBuffer,
    /// Opened by stderr's own wake-ups, so other wake-ups do not read it.
    stderr_gate: Gate,
    /// Entered at each poll: the events of this server's I/O fall inside it.
    #[cfg(feature = "tracing")]
    span: tracing::Span,
}

/// Where the child is, as far as the driver's own work goes.
#[derive(Debug)]
enum Stage {
    /// The child runs. `eof`: its stdout ended, and it has this long to exit
    /// before pending requests fail with [`Error::StdoutClosed`].
    Running { eof: Option<Timer> },
    /// The close ladder: `next` is taken when `timer` fires.
    Closing { next: Rung, timer: Timer },
    /// The child has exited; what it left in the pipes is read, until `grace` fires.
    Exited { grace: Option<Timer> },
    /// The child (its group's leader) has exited and its pipes are drained, but
    /// members of its group still run: they have until `kill`, looked at each `check`.
    Ending { kill: Timer, check: Timer },
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Rung {
    Term,
    Kill,
    Done,
}

impl Driver {
    pub(crate) fn new(
        child: Child,
        pipes: Pipes,
        exit: StatusFuture,
        shared: Arc<Shared>,
        handlers: Handlers,
        max_message_size: usize,
    ) -> Self {
        shared.lock().direct = sys::DirectWriter::of(&pipes.stdin);
        Driver {
            inner: Some(Box::new(ChildIo {
                router: Router::new(Arc::clone(&shared), handlers),
                shared,
                child,
                stage: Stage::Running { eof: None },
                terminated_at: None,
                sweep: None,
                exit,
                exit_gate: Gate::new(),
                stdin: Some(pipes.stdin),
                stdout: Some(pipes.stdout),
                stderr: Some(pipes.stderr),
                writing: Vec::new(),
                written: 0,
                stdout_lines: LineBuffer::new(max_message_size),
                stderr_lines: LineBuffer::new(STDERR_LINE_LIMIT),
                stderr_gate: Gate::new(),
                #[cfg(feature = "tracing")]
                span: tracing::Span::none(),
            })),
            then: None,
        }
    }

    /// This driver, then `supervisor` once its child is done (a client that
    /// restarts its server: the supervisor drives the later processes).
    pub(crate) fn then(mut self, supervisor: impl Future<Output = ()> + Send + 'static) -> Self {
        self.then = Some(Box::pin(supervisor));
        self
    }

    /// Runs this driver's polls inside `span` (the server's: command and pid).
    #[cfg(feature = "tracing")]
    pub(crate) fn in_span(mut self, span: tracing::Span) -> Self {
        if let Some(inner) = self.inner.as_mut() {
            inner.span = span;
        }
        self
    }

    /// Lets callers write their own lines to the child's stdin when the
    /// driver has nothing to write ([`Shared::send`]): for a driver on the
    /// background thread, which a caller would otherwise have to wake (a
    /// wake-up across threads) for each line. A driver on the caller's own
    /// executor is woken for nothing and writes in the same pass it reads.
    pub(crate) fn let_callers_write(&mut self) {
        if let Some(inner) = self.inner.as_mut() {
            inner.shared.lock().callers_write = true;
        }
    }

    /// Has the background thread's own poller report this child's pipes.
    pub(crate) fn attach(&mut self, poller: &sys::Poller) {
        let Some(inner) = self.inner.as_mut() else {
            return;
        };
        if let Some(stdin) = &mut inner.stdin {
            stdin.attach(poller, true);
        }
        if let Some(stdout) = &mut inner.stdout {
            stdout.attach(poller, false);
        }
        if let Some(stderr) = &mut inner.stderr {
            stderr.attach(poller, false);
        }
    }
}

impl Future for Driver {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        if let Some(inner) = this.inner.as_mut() {
            #[cfg(feature = "tracing")]
            let span = inner.span.clone();
            #[cfg(feature = "tracing")]
            let _entered = span.enter();
            if inner.poll_once(cx).is_pending() {
                return Poll::Pending;
            }
            // Let go of the child's handles before telling `close()` it is over.
            let shared = Arc::clone(&inner.shared);
            this.inner = None;
            shared.wake_closers();
        }
        if let Some(then) = this.then.as_mut() {
            if then.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            this.then = None;
        }
        Poll::Ready(())
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
                .field("stage", &inner.stage)
                .finish(),
            None if self.then.is_some() => d.field("supervising", &true).finish(),
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
    pipe: &mut (impl AsyncRead + Unpin),
    lines: &mut LineBuffer,
    cx: &mut Context<'_>,
    mut each: impl FnMut(Line<'_>) -> ControlFlow<()>,
) -> Drained {
    for _ in 0..READS_PER_POLL {
        match Pin::new(&mut *pipe).poll_read(cx, lines.spare()) {
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

impl ChildIo {
    fn poll_once(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.flush(cx);
        if self.sweep_deadlines(cx) {
            // Their cancels are queued: out with them now.
            self.flush(cx);
        }
        self.read_stdout(cx);
        // Handlers answering the server's requests; what they answer now is
        // written at once.
        if self.router.poll_replies(cx) {
            self.flush(cx);
        }
        self.read_stderr(cx);
        self.watch_exit(cx);
        self.climb_ladder(cx);
        self.poll_grace(cx)
    }

    /// Ends the child's input: the driver's handle and the callers' one.
    fn close_stdin(&mut self) {
        self.stdin = None;
        self.shared.lock().direct = None;
        // What the server asks from now on can never be answered.
        self.router.take_asked();
    }

    fn exited(&self) -> bool {
        matches!(self.stage, Stage::Exited { .. } | Stage::Ending { .. })
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
                state.driver_writing = !self.writing.is_empty();
            }
            let close = !state.phase.is_open() || self.shared.handles() == 0;
            let sweep = state.sweep_wanted.take();
            if sweep.is_some() {
                state.sweep_armed = sweep;
            }
            drop(state);
            if let Some(at) = sweep {
                match &mut self.sweep {
                    Some(timer) => timer.set_at(at),
                    None => self.sweep = Some(Timer::at(at)),
                }
                // Polled (so registered) by `sweep_deadlines` on the next pass.
                cx.waker().wake_by_ref();
            }
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
                if matches!(self.stage, Stage::Closing { .. }) {
                    // Everything queued before the close is out: end the input
                    // (once a platform's buffered pipe has passed it on).
                    if Pin::new(stdin).poll_flush(cx).is_ready() {
                        self.close_stdin();
                    }
                }
                return;
            }
            match Pin::new(stdin).poll_write(cx, &self.writing[self.written..]) {
                Poll::Ready(Ok(n)) if n > 0 => self.written += n,
                Poll::Pending => return,
                Poll::Ready(_result) => {
                    event!(warn, result = ?_result, "MCP server no longer reads its stdin: closing it");
                    // The child closed its stdin (or worse): it cannot take requests any
                    // more. Refuse new ones and close it; waiting ones end with its exit.
                    self.close_stdin();
                    self.shared.lock().phase.stop(Error::NotAlive);
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
        if let Stage::Running { eof: eof @ None } = &mut self.stage {
            *eof = Some(Timer::after(EOF_GRACE));
        }
    }

    fn message_too_large(&mut self) {
        event!(
            warn,
            limit = self.stdout_lines.limit(),
            "MCP server sent a line over the size limit: closing it"
        );
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
        if self.exited() {
            return;
        }
        let exit = &mut self.exit;
        // The exit future asks the kernel each time: poll it only when it woke us.
        let Some(Poll::Ready(result)) = self.exit_gate.pass(cx, |own| exit.poll_unpin(own)) else {
            return;
        };
        // The child is ours and reaped nowhere else; should asking fail anyway,
        // call the exit unknown rather than wait forever.
        let status = result.map_or(ExitStatus::unknown(), ExitStatus::from);
        let status = status.in_sandbox(self.child.sandboxed());
        self.child.reaped();
        event!(info, status = %status, "MCP server exited");
        self.close_stdin();
        self.shared.lock().phase.exited(status);
        // What the child wrote before it exited is still in the pipes: read it first.
        let open = self.stdout.is_some() || self.stderr.is_some();
        self.stage = Stage::Exited {
            grace: open.then(|| Timer::after(DRAIN_GRACE)),
        };
        self.read_stdout(cx);
        self.stderr_gate.open();
        self.read_stderr(cx);
    }

    /// Expires the requests whose deadline passed once the sweep timer fires,
    /// and sets it for the next; true if any expired.
    fn sweep_deadlines(&mut self, cx: &mut Context<'_>) -> bool {
        let Some(timer) = &mut self.sweep else {
            return false;
        };
        if timer.poll_unpin(cx).is_pending() {
            return false;
        }
        let (wakers, next) = self.shared.lock().expire(Instant::now());
        match next {
            Some(at) => {
                timer.set_at(at);
                let _ = timer.poll_unpin(cx);
            }
            None => self.sweep = None,
        }
        let expired = !wakers.is_empty();
        wakers.into_iter().for_each(Waker::wake);
        expired
    }

    /// Refuses new sends with `error` and fails every waiting request with it.
    fn fail_pending(&mut self, error: Error) {
        let wakers = {
            let mut state = self.shared.lock();
            let wakers = state.fail_all(&error);
            state.phase.stop(error);
            wakers
        };
        wakers.into_iter().for_each(Waker::wake);
    }

    /// Fails every waiting request with the exit error; sends are refused already.
    fn fail_waiting(&mut self) {
        let wakers = {
            let mut state = self.shared.lock();
            let status = state.phase.status().unwrap_or_else(ExitStatus::unknown);
            let error = Error::Exited {
                status,
                stderr_tail: state.stderr_tail.iter().cloned().collect(),
            };
            event!(info, error = %error, pending = state.pending.len(), "MCP server finished");
            state.fail_all(&error)
        };
        wakers.into_iter().for_each(Waker::wake);
    }

    fn finish(&mut self) {
        self.fail_waiting();
        self.shared.lock().phase.finish(Ok(()));
    }

    /// The driver was dropped before the child exited: kill it, fail what waits,
    /// and have its exit awaited elsewhere, so it leaves no zombie.
    fn left_the_loop(mut self: Box<Self>) {
        if !self.exited() {
            event!(
                warn,
                pid = self.shared.pid,
                "driver dropped before the MCP server exited: killing it"
            );
            self.child.kill();
        } else if self.child.group_lingers() {
            // The leader is gone; the members of its group must not outlive it.
            self.child.kill_rest();
        }
        self.close_stdin();
        let wakers = {
            let mut state = self.shared.lock();
            let wakers = state.fail_all(&Error::LeftLoop);
            state.phase.finish(Err(Error::CloseLeftLoop));
            wakers
        };
        wakers.into_iter().for_each(Waker::wake);
        self.shared.wake_closers();
        if !self.exited() {
            let this = *self;
            crate::child::orphan(this.exit);
        }
    }
}
