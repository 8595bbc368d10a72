//! Linux: the background thread waits in an edge-triggered epoll of its own
//! (through rustix) for its drivers' pipes, instead of async-io's reactor.
//!
//! Why: a turn of async-io's reactor is five system calls (it re-arms a timerfd
//! and its notifier around `epoll_wait`, and each source is one-shot); here
//! pipes are registered once, edge-triggered, and a wait is one `epoll_wait`
//! (measured in docs/performance.md). Exits and timers stay in async-io (its
//! own thread serves them): they come once per child. Everything here is polled on the background thread
//! only, between two of its waits, so an event never lands in the middle of a
//! read and a readiness flag needs no ordering with the reads.
//!
//! Whoever runs the driver, a child's stdin pipe also grows the first time a
//! write finds it full (`F_SETPIPE_SZ`), so pipelined requests are not written
//! 64 KiB at a time.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, Wake, Waker};

use futures::io::{AsyncRead, AsyncWrite};
use futures::task::AtomicWaker;
use rustix::event::{epoll, eventfd, EventfdFlags};
use rustix::io::Errno;

/// Passes over the work before the thread asks the kernel for events anyway.
const PASSES_PER_WAIT: usize = 64;
/// The size a child's stdin pipe grows to when it is first found full (four
/// times Linux's default).
const GROWN_PIPE: usize = 256 * 1024;
/// The key of the eventfd's events; sources count up from 0.
const WAKE_KEY: u64 = u64::MAX;

/// Runs `work` on this thread forever: polls it whenever it was woken, sleeps in
/// the epoll otherwise. `work` is handed the poller to register pipes with.
pub(crate) fn run_forever(mut work: impl FnMut(&mut Context<'_>, Option<&Poller>)) {
    let poller = match Poller::new() {
        Ok(poller) => Arc::new(poller),
        // No epoll to be had (descriptors exhausted): async-io's way still works.
        Err(_) => return super::portable::run_forever(|cx, _| work(cx, None)),
    };
    let waker = Waker::from(Arc::clone(&poller));
    let mut cx = Context::from_waker(&waker);
    let mut events = Vec::with_capacity(256);
    loop {
        let mut passes = 0;
        while passes < PASSES_PER_WAIT && poller.woken.swap(false, Ordering::SeqCst) {
            passes += 1;
            work(&mut cx, Some(&poller));
        }
        if poller.wait(&mut events, passes == PASSES_PER_WAIT).is_err() {
            // epoll_wait fails only on a bug (a bad descriptor or buffer): do not spin.
            return super::portable::run_forever(|cx, _| work(cx, None));
        }
    }
}

/// The background thread's epoll, and the waker of its work.
///
/// A wake raised while the thread polls only sets `woken`; one raised while it
/// sleeps in `epoll_wait` also writes the eventfd. (`SeqCst` on both sides: the
/// thread sets `sleeping` then reads `woken`, a waker sets `woken` then reads
/// `sleeping`, and one of them sees the other.)
#[derive(Debug)]
pub(crate) struct Poller {
    epoll: OwnedFd,
    eventfd: OwnedFd,
    woken: AtomicBool,
    sleeping: AtomicBool,
    /// Registered pipes by key. Keys are never reused, so a late event for a
    /// closed pipe finds nothing (or a dead `Weak`) and is dropped.
    sources: Mutex<HashMap<u64, Weak<Readiness>>>,
    next_key: AtomicU64,
}

impl Poller {
    fn new() -> io::Result<Self> {
        let epoll = epoll::create(epoll::CreateFlags::CLOEXEC)?;
        let eventfd = eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?;
        epoll::add(
            &epoll,
            &eventfd,
            epoll::EventData::new_u64(WAKE_KEY),
            epoll::EventFlags::IN | epoll::EventFlags::ET,
        )?;
        Ok(Poller {
            epoll,
            eventfd,
            // The first pass polls everything once.
            woken: AtomicBool::new(true),
            sleeping: AtomicBool::new(false),
            sources: Mutex::new(HashMap::new()),
            next_key: AtomicU64::new(0),
        })
    }

    /// Registers a pipe end (already non-blocking), edge-triggered, for reading
    /// or for writing.
    fn register(&self, fd: BorrowedFd<'_>, writable: bool) -> io::Result<Arc<Readiness>> {
        let readiness = Arc::new(Readiness::default());
        let key = self.next_key.fetch_add(1, Ordering::Relaxed);
        let flags = if writable {
            epoll::EventFlags::OUT
        } else {
            epoll::EventFlags::IN | epoll::EventFlags::RDHUP
        };
        self.lock().insert(key, Arc::downgrade(&readiness));
        let added = epoll::add(
            &self.epoll,
            fd,
            epoll::EventData::new_u64(key),
            flags | epoll::EventFlags::ET,
        );
        if let Err(error) = added {
            self.lock().remove(&key);
            return Err(error.into());
        }
        Ok(readiness)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Weak<Readiness>>> {
        crate::lock::lock(&self.sources)
    }

    /// Waits for events unless a wake came after the last pass (or `busy`),
    /// then marks the registered pipes they name as ready.
    fn wait(&self, events: &mut Vec<epoll::Event>, busy: bool) -> io::Result<()> {
        self.sleeping.store(true, Ordering::SeqCst);
        let now = rustix::time::Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        let timeout = (busy || self.woken.load(Ordering::SeqCst)).then_some(&now);
        events.clear();
        let waited = epoll::wait(&self.epoll, rustix::buffer::spare_capacity(events), timeout);
        // Awake before the events fire: their wake-ups need no eventfd write.
        self.sleeping.store(false, Ordering::SeqCst);
        match waited {
            Ok(_) => {}
            Err(Errno::INTR) => return Ok(()),
            Err(error) => return Err(error.into()),
        }
        let mut sources = self.lock();
        for event in events.iter() {
            let key = event.data.u64();
            // Edge-triggered: each eventfd write is an event of its own, so its
            // counter is never read (it would take 2^64 wake-ups to fill).
            if key == WAKE_KEY {
                continue;
            }
            match sources.get(&key).map(Weak::upgrade) {
                Some(Some(readiness)) => readiness.fire(event.flags),
                Some(None) => {
                    sources.remove(&key);
                }
                None => {}
            }
        }
        Ok(())
    }
}

impl Wake for Poller {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::SeqCst);
        if self.sleeping.load(Ordering::SeqCst) {
            // Cannot fail short of 2^64 - 2 unread wake-ups.
            let _ = rustix::io::write(&self.eventfd, &1u64.to_ne_bytes());
        }
    }
}

/// Whether one registered pipe end is worth a system call, and who waits for it.
#[derive(Debug)]
struct Readiness {
    ready: AtomicBool,
    /// The other end was closed. Edge-triggered, that is said once, possibly
    /// with the last data: whoever reads that data reads on to the end.
    hung_up: AtomicBool,
    waker: AtomicWaker,
}

impl Default for Readiness {
    fn default() -> Self {
        Readiness {
            // Data may have come before registration, which raises no edge.
            ready: AtomicBool::new(true),
            hung_up: AtomicBool::new(false),
            waker: AtomicWaker::new(),
        }
    }
}

impl Readiness {
    fn fire(&self, flags: epoll::EventFlags) {
        let hang_up = epoll::EventFlags::HUP | epoll::EventFlags::RDHUP | epoll::EventFlags::ERR;
        if flags.intersects(hang_up) {
            self.hung_up.store(true, Ordering::Relaxed);
        }
        self.ready.store(true, Ordering::Relaxed);
        self.waker.wake();
    }

    /// Found empty (or full): wait for the next edge.
    fn wait(&self, cx: &Context<'_>) {
        self.ready.store(false, Ordering::Relaxed);
        self.waker.register(cx.waker());
    }

    /// Reads `fd` once the epoll said it has data. A short read emptied the
    /// pipe: the next one waits for a new edge instead of asking the kernel.
    fn poll_read(
        &self,
        fd: BorrowedFd<'_>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            if !self.ready.load(Ordering::Relaxed) {
                self.waker.register(cx.waker());
                return Poll::Pending;
            }
            match rustix::io::read(fd, &mut *buf) {
                Ok(n) => {
                    if n < buf.len() && !self.hung_up.load(Ordering::Relaxed) {
                        self.wait(cx);
                    }
                    return Poll::Ready(Ok(n));
                }
                Err(Errno::INTR) => {}
                Err(Errno::AGAIN) => self.wait(cx),
                Err(error) => return Poll::Ready(Err(error.into())),
            }
        }
    }

    /// Writes what the pipe takes now; `Pending` until the child makes room.
    fn poll_write(
        &self,
        fd: BorrowedFd<'_>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            if !self.ready.load(Ordering::Relaxed) {
                self.waker.register(cx.waker());
                return Poll::Pending;
            }
            match rustix::io::write(fd, buf) {
                Ok(n) => return Poll::Ready(Ok(n)),
                Err(Errno::INTR) => {}
                // Any room the child makes from now on is a new edge.
                Err(Errno::AGAIN) => self.wait(cx),
                Err(error) => return Poll::Ready(Err(error.into())),
            }
        }
    }
}

/// One of the child's pipes (async-process's type). Attached to the background
/// thread's poller, it is read and written directly, when that poller said so;
/// otherwise through async-process (async-io's reactor).
#[derive(Debug)]
pub(crate) struct Pipe<T> {
    io: T,
    edge: Option<Arc<Readiness>>,
    /// Whether the pipe was found full once (and offered more room then).
    filled: bool,
}

impl<T: AsFd> Pipe<T> {
    pub(crate) fn new(io: T) -> Self {
        Pipe {
            io,
            edge: None,
            filled: false,
        }
    }

    /// Registers the pipe with `poller`; if that fails it stays with async-io.
    pub(crate) fn attach(&mut self, poller: &Poller, writable: bool) {
        self.edge = poller.register(self.io.as_fd(), writable).ok();
    }
}

impl<T: AsFd> AsFd for Pipe<T> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.io.as_fd()
    }
}

impl<T: AsFd + AsyncRead + Unpin> AsyncRead for Pipe<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match &this.edge {
            Some(edge) => edge.poll_read(this.io.as_fd(), cx, buf),
            None => Pin::new(&mut this.io).poll_read(cx, buf),
        }
    }
}

impl<T: AsFd + AsyncWrite + Unpin> AsyncWrite for Pipe<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        loop {
            let written = match &this.edge {
                Some(edge) => edge.poll_write(this.io.as_fd(), cx, buf),
                None => Pin::new(&mut this.io).poll_write(cx, buf),
            };
            let full = match &written {
                Poll::Ready(Ok(n)) => *n < buf.len(),
                Poll::Ready(Err(_)) => false,
                Poll::Pending => true,
            };
            if !full || this.filled {
                return written;
            }
            // The child reads slower than we write: a deeper pipe takes a whole
            // window of pipelined requests in one write, without a wait per
            // 64 KiB. Once per pipe; refused past the user's pipe budget
            // (fs.pipe-user-pages-soft), and then the pipe stays as it was.
            this.filled = true;
            if rustix::pipe::fcntl_setpipe_size(this.io.as_fd(), GROWN_PIPE).is_err() {
                return written;
            }
            if let Some(edge) = &this.edge {
                // The room just made is an edge the kernel may not report.
                edge.ready.store(true, Ordering::Relaxed);
            }
            if written.is_ready() {
                return written;
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_close(cx)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use futures::task::noop_waker;

    use super::*;

    /// A registered pipe with a line in it, and the poller it is registered with.
    fn pipe_with(data: &[u8]) -> (Poller, Pipe<std::io::PipeReader>, std::io::PipeWriter) {
        let poller = Poller::new().unwrap();
        let (reader, mut writer) = std::io::pipe().unwrap();
        rustix::io::ioctl_fionbio(&reader, true).unwrap();
        writer.write_all(data).unwrap();
        let mut pipe = Pipe::new(reader);
        pipe.attach(&poller, false);
        assert!(pipe.edge.is_some());
        (poller, pipe, writer)
    }

    fn poll_read(pipe: &mut Pipe<std::io::PipeReader>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        let waker = noop_waker();
        let edge = pipe.edge.as_ref().unwrap();
        edge.poll_read(pipe.io.as_fd(), &mut Context::from_waker(&waker), buf)
    }

    /// What was there before registration is read at once; a short read
    /// makes the next poll wait for an edge, and the next write raises one.
    #[test]
    fn a_short_read_waits_for_the_next_edge() {
        let (poller, mut pipe, mut writer) = pipe_with(b"one\n");
        let mut buf = [0u8; 64];
        assert!(matches!(poll_read(&mut pipe, &mut buf), Poll::Ready(Ok(4))));
        assert!(poll_read(&mut pipe, &mut buf).is_pending(), "no edge yet");
        writer.write_all(b"two\n").unwrap();
        assert!(
            poll_read(&mut pipe, &mut buf).is_pending(),
            "read only once the poller has seen the edge"
        );
        let mut events = Vec::with_capacity(8);
        poller.wait(&mut events, true).unwrap();
        assert!(matches!(poll_read(&mut pipe, &mut buf), Poll::Ready(Ok(4))));
        assert_eq!(&buf[..4], b"two\n");
    }

    /// The hang-up may come with the last data: the reader then reads on to
    /// the end instead of waiting for an edge that never comes.
    #[test]
    fn a_hang_up_is_read_to_the_end() {
        let (poller, mut pipe, writer) = pipe_with(b"last\n");
        drop(writer);
        let mut events = Vec::with_capacity(8);
        poller.wait(&mut events, true).unwrap();
        let mut buf = [0u8; 64];
        assert!(matches!(poll_read(&mut pipe, &mut buf), Poll::Ready(Ok(5))));
        assert!(
            matches!(poll_read(&mut pipe, &mut buf), Poll::Ready(Ok(0))),
            "the end, not a wait"
        );
    }

    /// A wake from another thread ends the poller's sleep.
    #[test]
    fn a_wake_ends_the_wait() {
        let poller = Arc::new(Poller::new().unwrap());
        poller.woken.store(false, Ordering::SeqCst);
        let waker = Waker::from(Arc::clone(&poller));
        let waking = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            waker.wake();
        });
        let mut events = Vec::with_capacity(8);
        poller.wait(&mut events, false).unwrap();
        assert!(poller.woken.load(Ordering::SeqCst));
        waking.join().unwrap();
    }
}
