//! The child's three pipes, made here rather than by async-process so the driver
//! can ask the reactor whether a pipe is readable before it reads: a poll that
//! finds nothing costs no `read` syscall.

use std::io::{self, PipeReader, PipeWriter, Read};
use std::process::Stdio;
use std::task::{Context, Poll};

use async_io::Async;

/// The ends the child gets, as its stdin, stdout and stderr.
pub(crate) struct ChildEnds {
    pub(crate) stdin: Stdio,
    pub(crate) stdout: Stdio,
    pub(crate) stderr: Stdio,
}

/// The ends this process keeps, registered with the reactor.
pub(crate) struct ParentEnds {
    pub(crate) stdin: WritePipe,
    pub(crate) stdout: ReadPipe,
    pub(crate) stderr: ReadPipe,
}

/// Three fresh pipes (close-on-exec, so no other child inherits them), our ends
/// already registered, so nothing can fail once the child runs.
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
            stdin: Async::new(stdin_write)?,
            stdout: ReadPipe::new(stdout_read)?,
            stderr: ReadPipe::new(stderr_read)?,
        },
    ))
}

/// The read end of a pipe, read only when the reactor reported it readable.
#[derive(Debug)]
pub(crate) struct ReadPipe {
    io: Async<PipeReader>,
    /// Worth a `read`: the reactor said so, and no read has found it empty since.
    ready: bool,
}

impl ReadPipe {
    pub(crate) fn new(pipe: PipeReader) -> io::Result<Self> {
        Ok(ReadPipe {
            io: Async::new(pipe)?,
            // A fresh pipe's child has not even started: ask the reactor first
            // instead of spending a read to learn that it is empty.
            ready: false,
        })
    }

    /// `Ready(Ok(0))` at the end of the stream.
    pub(crate) fn poll_read(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            if !self.ready {
                match self.io.poll_readable(cx) {
                    Poll::Ready(Ok(())) => self.ready = true,
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Pending => return Poll::Pending,
                }
            }
            match self.io.get_ref().read(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.ready = false,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Ok(n) => {
                    // A short read emptied the pipe: ask the reactor next time rather
                    // than spend a system call learning that it is empty.
                    if n < buf.len() {
                        self.ready = false;
                    }
                    return Poll::Ready(Ok(n));
                }
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

/// The write end of the child's stdin.
pub(crate) type WritePipe = Async<PipeWriter>;
