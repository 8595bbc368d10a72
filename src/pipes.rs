//! The child's three pipes, made here rather than by async-process so the driver
//! can ask for readiness before it reads: a poll that finds nothing costs no
//! `read` system call (except right after a request went out, when the answer
//! is likely there already: see [`ReadPipe::answer_may_be_waiting`]).
//!
//! Each of our ends is registered on its first poll with the poller of the
//! thread that polls it: the background thread's own edge-triggered epoll
//! (`crate::poller`) for drivers of `Builder::spawn`, async-io's reactor for
//! drivers run anywhere else.

use std::io::{self, PipeReader, PipeWriter, Read, Write};
use std::os::fd::{AsFd, AsRawFd};
use std::process::Stdio;
use std::sync::Arc;
use std::task::{Context, Poll};

use async_io::Async;
use futures::io::AsyncWrite;

use crate::poller::{self, Interest};

/// The ends the child gets, as its stdin, stdout and stderr.
pub(crate) struct ChildEnds {
    pub(crate) stdin: Stdio,
    pub(crate) stdout: Stdio,
    pub(crate) stderr: Stdio,
}

/// The ends this process keeps.
pub(crate) struct ParentEnds {
    pub(crate) stdin: WritePipe,
    pub(crate) stdout: ReadPipe,
    pub(crate) stderr: ReadPipe,
}

/// Three fresh pipes (close-on-exec, so no other child inherits them).
pub(crate) fn make() -> io::Result<(ChildEnds, ParentEnds)> {
    let (stdin_read, stdin_write) = io::pipe()?;
    let (stdout_read, stdout_write) = io::pipe()?;
    let (stderr_read, stderr_write) = io::pipe()?;
    Ok((
        ChildEnds {
            stdin: stdin_read.into(),
            stdout: stdout_write.into(),
            stderr: stderr_write.into(),
        },
        ParentEnds {
            stdin: WritePipe(Backend::Unregistered(Some(stdin_write))),
            stdout: ReadPipe::new(stdout_read),
            stderr: ReadPipe::new(stderr_read),
        },
    ))
}

/// Who tells us a pipe end is ready.
#[derive(Debug)]
enum Backend<T: AsFd> {
    /// Not polled yet.
    Unregistered(Option<T>),
    /// async-io's reactor.
    Reactor(Async<T>),
    /// The background thread's poller.
    Background { io: T, interest: Arc<Interest> },
}

impl<T: AsFd + AsRawFd> Backend<T> {
    /// Registers an unregistered end with the current thread's poller, or else
    /// with async-io.
    fn register(&mut self, writable: bool) -> io::Result<()> {
        let Backend::Unregistered(io) = self else {
            return Ok(());
        };
        let io = io.take().expect("a failed registration is not retried");
        if !poller::on_this_thread() {
            // async-io makes the descriptor non-blocking itself.
            *self = Backend::Reactor(Async::new(io)?);
            return Ok(());
        }
        let fd = io.as_raw_fd();
        set_nonblocking(fd)?;
        let interest = Arc::new(Interest::default());
        poller::register(fd, writable, &interest)?;
        *self = Backend::Background { io, interest };
        Ok(())
    }
}

impl<T: AsFd> Drop for Backend<T> {
    fn drop(&mut self) {
        if let Backend::Background { io, .. } = self {
            poller::deregister(io.as_fd().as_raw_fd());
        }
    }
}

fn set_nonblocking(fd: i32) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: FIONBIO reads one int through the pointer, which points at `on`.
    if unsafe { libc::ioctl(fd, libc::FIONBIO, &on) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The read end of a pipe, read only when its poller reported it readable.
#[derive(Debug)]
pub(crate) struct ReadPipe {
    backend: Backend<PipeReader>,
    /// async-io only: worth a `read`, since the reactor said so and no read has
    /// found the pipe empty since.
    ready: bool,
}

impl ReadPipe {
    fn new(pipe: PipeReader) -> Self {
        ReadPipe {
            backend: Backend::Unregistered(Some(pipe)),
            // A fresh pipe's child has not even started: ask the reactor first
            // instead of spending a read to learn that it is empty.
            ready: false,
        }
    }

    /// Something was just written to the child, so its answer may already be
    /// here: on one CPU the write wakes the child, which often runs, answers
    /// and blocks again before the driver's next poll. The next poll then reads
    /// at once, one system call, instead of first asking async-io's reactor
    /// (a turn of five; see `crate::poller`). If nothing is there yet the read
    /// costs one `EAGAIN`. The background thread's poller needs no hint: it
    /// goes through `epoll_wait` before it sleeps anyway, and that reports the
    /// answer.
    pub(crate) fn answer_may_be_waiting(&mut self) {
        if let Backend::Reactor(_) = self.backend {
            self.ready = true;
        }
    }

    /// `Ready(Ok(0))` at the end of the stream.
    pub(crate) fn poll_read(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        if let Err(error) = self.backend.register(false) {
            return Poll::Ready(Err(error));
        }
        loop {
            let (io, waiting_on): (&PipeReader, Option<&Interest>) = match &mut self.backend {
                Backend::Background { io, interest } => {
                    if !interest.is_ready() {
                        interest.wait(cx.waker());
                        return Poll::Pending;
                    }
                    (io, Some(interest))
                }
                Backend::Reactor(io) => {
                    if !self.ready {
                        match io.poll_readable(cx) {
                            Poll::Ready(Ok(())) => self.ready = true,
                            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                            Poll::Pending => return Poll::Pending,
                        }
                    }
                    (io.get_ref(), None)
                }
                Backend::Unregistered(_) => unreachable!("registered above"),
            };
            let mut reader = io;
            match reader.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => match waiting_on {
                    Some(interest) => {
                        interest.wait(cx.waker());
                        return Poll::Pending;
                    }
                    None => self.ready = false,
                },
                Ok(n) => {
                    // A short read emptied the pipe: wait for the poller next time
                    // rather than spend a system call learning that it is empty
                    // (unless the writer is gone: then read on to the end).
                    if n < buf.len() {
                        match waiting_on {
                            Some(interest) if !interest.hung_up() => interest.wait(cx.waker()),
                            Some(_) => {}
                            None => self.ready = false,
                        }
                    }
                    return Poll::Ready(Ok(n));
                }
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

/// The write end of the child's stdin.
#[derive(Debug)]
pub(crate) struct WritePipe(Backend<PipeWriter>);

impl WritePipe {
    /// Writes what the pipe takes now; `Pending` (and a wake-up later) when it is full.
    pub(crate) fn poll_write(
        &mut self,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if let Err(error) = self.0.register(true) {
            return Poll::Ready(Err(error));
        }
        match &mut self.0 {
            Backend::Background { io, interest } => loop {
                match io.write(buf) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        // Any room the child makes from now on is a new edge.
                        interest.wait(cx.waker());
                        return Poll::Pending;
                    }
                    result => return Poll::Ready(result),
                }
            },
            Backend::Reactor(io) => std::pin::Pin::new(io).poll_write(cx, buf),
            Backend::Unregistered(_) => unreachable!("registered above"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::task::noop_waker;

    /// Polls once a fresh pipe that already holds a line, outside the
    /// background thread (so with async-io's reactor), after the hint or not.
    fn first_poll(hint: bool) -> Poll<io::Result<usize>> {
        let (reader, mut writer) = io::pipe().unwrap();
        writer.write_all(b"{}\n").unwrap();
        let mut pipe = ReadPipe::new(reader);
        // As the driver does: the end is registered before anything is written.
        pipe.backend.register(false).unwrap();
        if hint {
            pipe.answer_may_be_waiting();
        }
        let waker = noop_waker();
        let mut buf = [0u8; 16];
        pipe.poll_read(&mut Context::from_waker(&waker), &mut buf)
    }

    /// Without the hint a pipe asks the reactor before it reads; after a write
    /// to the child, an answer already there is read at once.
    #[test]
    fn after_a_write_the_answer_is_read_without_a_reactor_turn() {
        assert!(first_poll(false).is_pending());
        assert!(matches!(first_poll(true), Poll::Ready(Ok(3))));
    }
}
