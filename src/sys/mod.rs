//! Everything that differs between operating systems, and every OS call the
//! crate makes: how a command is prepared, how a started child and what it
//! starts in turn are stopped, and where a bare program name is looked up.
//!
//! Each platform module offers the same items: [`configure`] (which hands out
//! the child's [`Watched`] place: Unix's watchdog, `watchdog.rs`), [`resolve_program`],
//! [`explain_spawn_error`] and [`Stopper`] (made by `Stopper::new`, with
//! `terminate`, `kill`, and after its exit `terminate_rest`, `kill_rest` and
//! `group_lingers`). How the background thread waits is
//! [`run_forever`] with its [`Poller`] and [`Pipe`]: Linux's own epoll
//! (`linux.rs`), else async-io's reactor (`portable` below). Building with
//! `RUSTFLAGS="--cfg stdio_mcp_portable"` takes the portable way on Linux too,
//! so CI tests it there.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub(crate) use unix::*;
#[cfg(unix)]
mod sandboxed;
#[cfg(target_os = "linux")]
pub(crate) mod seccomp;
#[cfg(target_os = "linux")]
pub(crate) use sandboxed::user_processes;
#[cfg(unix)]
pub(crate) use sandboxed::{start_confined, StartLimits};
#[cfg(unix)]
mod watchdog;
#[cfg(unix)]
pub(crate) use watchdog::Watched;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub(crate) use windows::*;

#[cfg(not(any(unix, windows)))]
compile_error!("stdio-mcp supports Unix (Linux, macOS, the BSDs) and Windows");

#[cfg(all(target_os = "linux", not(stdio_mcp_portable)))]
mod linux;
#[cfg(all(target_os = "linux", not(stdio_mcp_portable)))]
pub(crate) use linux::{run_forever, Pipe, Poller};
#[cfg(not(all(target_os = "linux", not(stdio_mcp_portable))))]
pub(crate) use portable::{run_forever, Pipe, Poller};

/// The background thread's wait everywhere but Linux: async-io's reactor.
/// (On Linux only its `run_forever` serves, should no epoll be had.)
#[cfg_attr(all(target_os = "linux", not(stdio_mcp_portable)), allow(dead_code))]
pub(crate) mod portable {
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use futures::future::poll_fn;
    use futures::io::{AsyncRead, AsyncWrite};

    /// Runs `work` under `async_io::block_on` forever: while it waits, this
    /// thread sleeps in async-io's reactor.
    pub(crate) fn run_forever(mut work: impl FnMut(&mut Context<'_>, Option<&Poller>)) {
        async_io::block_on(poll_fn(|cx| {
            work(cx, None);
            Poll::<()>::Pending
        }));
    }

    /// No poller of its own here: never made.
    #[derive(Debug)]
    pub(crate) enum Poller {}

    /// One of the child's pipes, always through async-process.
    #[derive(Debug)]
    pub(crate) struct Pipe<T> {
        io: T,
    }

    impl<T> Pipe<T> {
        pub(crate) fn new(io: T) -> Self {
            Pipe { io }
        }

        pub(crate) fn attach(&mut self, poller: &Poller, _writable: bool) {
            match *poller {}
        }
    }

    #[cfg(unix)]
    impl<T: std::os::fd::AsFd> std::os::fd::AsFd for Pipe<T> {
        fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
            self.io.as_fd()
        }
    }

    impl<T: AsyncRead + Unpin> AsyncRead for Pipe<T> {
        fn poll_read(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut [u8],
        ) -> Poll<std::io::Result<usize>> {
            Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
        }
    }

    impl<T: AsyncWrite + Unpin> AsyncWrite for Pipe<T> {
        fn poll_write(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<std::io::Result<usize>> {
            Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
        }

        fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Pin::new(&mut self.get_mut().io).poll_flush(cx)
        }

        fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Pin::new(&mut self.get_mut().io).poll_close(cx)
        }
    }
}

/// What a platform is asked to arrange around the child.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Options {
    /// The child and everything it starts are stopped together.
    pub(crate) process_group: bool,
    /// The child dies with this process.
    pub(crate) kill_on_parent_death: bool,
}
