//! The background thread's own readiness poller: one epoll instance,
//! edge-triggered, for the pipes, exits and timers of the drivers it runs.
//!
//! async-io's reactor spends five system calls on each turn (it re-arms a timerfd
//! and an eventfd around `epoll_wait`, and every source is one-shot, re-armed
//! before each wait). The background thread turns its reactor twice per
//! sequential call, so those calls were most of what it cost beyond raw pipes.
//! Here a turn is one `epoll_wait`; pipes are registered once, edge-triggered, and
//! never re-armed; a wake-up from another thread is one eventfd write.
//!
//! The drivers' timers wait here too (a small heap whose earliest deadline
//! bounds `epoll_wait`), and so does each child's pidfd.
//!
//! Everything registered here is polled on the background thread only, between
//! two waits of that same thread: an event can never arrive in the middle of a
//! read, so a readiness flag needs no ordering with the reads.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::Waker;
use std::time::Instant;

use futures::task::AtomicWaker;

/// Readiness of one registered pipe end, and who waits for it.
#[derive(Debug, Default)]
pub(crate) struct Interest {
    ready: AtomicBool,
    /// The other end was closed. Edge-triggered, that is said once, possibly in
    /// the same event as the last data: whoever reads that data must read on to
    /// the end instead of waiting for an edge that will not come.
    hung_up: AtomicBool,
    waker: AtomicWaker,
}

impl Interest {
    /// Whether an event came since [`wait`](Self::wait) last cleared the flag.
    pub(crate) fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Relaxed)
    }

    /// Whether the other end has been closed.
    pub(crate) fn hung_up(&self) -> bool {
        self.hung_up.load(Ordering::Relaxed)
    }

    /// The pipe was found empty (or full): wait for its next edge.
    pub(crate) fn wait(&self, waker: &Waker) {
        self.ready.store(false, Ordering::Relaxed);
        self.waker.register(waker);
    }

    fn fire(&self, events: u32) {
        let hang_up = (libc::EPOLLHUP | libc::EPOLLRDHUP | libc::EPOLLERR) as u32;
        if events & hang_up != 0 {
            self.hung_up.store(true, Ordering::Relaxed);
        }
        self.ready.store(true, Ordering::Relaxed);
        self.waker.wake();
    }
}

/// The eventfd other threads write to wake the background thread's `wait`.
#[derive(Debug)]
pub(crate) struct Notifier {
    eventfd: OwnedFd,
}

impl Notifier {
    pub(crate) fn new() -> io::Result<Self> {
        // SAFETY: eventfd takes no pointers; a valid result is a new descriptor we own.
        let eventfd = unsafe { owned(libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK))? };
        Ok(Notifier { eventfd })
    }

    /// Ends the background thread's current `wait` (or makes its next one return at once).
    pub(crate) fn notify(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to our eventfd. It cannot fail
        // short of 2^64 - 2 unread wake-ups.
        unsafe {
            libc::write(self.eventfd.as_raw_fd(), (&raw const one).cast(), 8);
        }
    }
}

/// The epoll instance, owned by the background thread.
struct Poller {
    epoll: OwnedFd,
    /// The registered descriptors. A descriptor number reused after a close at
    /// worst fires a stale interest once: a spurious wake-up, harmless.
    interests: RefCell<HashMap<RawFd, Arc<Interest>>>,
    events: RefCell<Vec<libc::epoll_event>>,
    /// Pending deadlines, earliest first, with the task each one wakes.
    timers: RefCell<BTreeMap<(Instant, u64), Waker>>,
    next_timer: Cell<u64>,
}

/// The key of the eventfd's events (descriptors are never negative).
const WAKE_KEY: u64 = u64::MAX;

thread_local! {
    /// The poller of the current thread, if it is the background thread.
    static CURRENT: RefCell<Option<Poller>> = const { RefCell::new(None) };
}

impl Poller {
    /// Wakes the tasks of every deadline that has passed.
    fn fire_timers(&self) {
        let mut timers = self.timers.borrow_mut();
        if timers.is_empty() {
            return;
        }
        let now = Instant::now();
        while let Some(entry) = timers.first_entry() {
            if entry.key().0 > now {
                break;
            }
            entry.remove().wake();
        }
    }

    fn ctl(&self, fd: RawFd, events: libc::c_int, key: u64) -> io::Result<()> {
        let mut event = libc::epoll_event {
            events: (events | libc::EPOLLET) as u32,
            u64: key,
        };
        // SAFETY: `event` is a live epoll_event; the kernel copies it.
        let result =
            unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut event) };
        if result < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// Gives the current thread (the background thread) a poller that `notifier` wakes.
pub(crate) fn install(notifier: &Notifier) -> io::Result<()> {
    // SAFETY: epoll_create1 takes no pointers; a valid result is a new descriptor we own.
    let epoll = unsafe { owned(libc::epoll_create1(libc::EPOLL_CLOEXEC))? };
    let poller = Poller {
        epoll,
        interests: RefCell::new(HashMap::new()),
        events: RefCell::new(Vec::with_capacity(256)),
        timers: RefCell::new(BTreeMap::new()),
        next_timer: Cell::new(0),
    };
    poller.ctl(notifier.eventfd.as_raw_fd(), libc::EPOLLIN, WAKE_KEY)?;
    CURRENT.with(|current| *current.borrow_mut() = Some(poller));
    Ok(())
}

/// Waits on this thread's poller for events (`timeout_ms` -1: no limit), calls
/// `awake`, then fires the events' interests. A wake-up through the notifier
/// only ends the wait.
pub(crate) fn wait(timeout_ms: i32, awake: impl FnOnce()) -> io::Result<()> {
    CURRENT.with(|current| {
        let current = current.borrow();
        let poller = current
            .as_ref()
            .expect("wait() on a thread without a poller");
        let mut events = poller.events.borrow_mut();
        events.clear();
        let timeout_ms = match poller.timers.borrow().keys().next() {
            Some(&(when, _)) if timeout_ms != 0 => {
                // Rounded up: waking a little late is fine, early is a wasted turn.
                let left = when.saturating_duration_since(Instant::now());
                let ms = left.as_nanos().div_ceil(1_000_000);
                i32::try_from(ms).unwrap_or(i32::MAX)
            }
            _ => timeout_ms,
        };
        // SAFETY: the buffer has room for `capacity` events and epoll_wait writes
        // at most that many, returning how many it wrote.
        let n = unsafe {
            libc::epoll_wait(
                poller.epoll.as_raw_fd(),
                events.as_mut_ptr(),
                events.capacity() as i32,
                timeout_ms,
            )
        };
        awake();
        poller.fire_timers();
        if n < 0 {
            let error = io::Error::last_os_error();
            return if error.kind() == io::ErrorKind::Interrupted {
                Ok(())
            } else {
                Err(error)
            };
        }
        // SAFETY: epoll_wait initialised the first `n` entries.
        unsafe { events.set_len(n as usize) };
        let interests = poller.interests.borrow();
        for event in events.iter() {
            let key = event.u64;
            // Edge-triggered: every eventfd write is an event of its own, so its
            // counter is never read (it would take 2^64 wake-ups to fill).
            if key != WAKE_KEY {
                if let Some(interest) = interests.get(&(key as RawFd)) {
                    interest.fire(event.events);
                }
            }
        }
        Ok(())
    })
}

/// Whether this thread has a poller (it is the background thread).
pub(crate) fn on_this_thread() -> bool {
    CURRENT.with(|current| current.borrow().is_some())
}

/// Registers `fd` (non-blocking) with this thread's poller, for reading or for
/// writing. Only for the background thread (see [`on_this_thread`]).
pub(crate) fn register(fd: RawFd, writable: bool, interest: &Arc<Interest>) -> io::Result<()> {
    CURRENT.with(|current| {
        let current = current.borrow();
        let poller = current
            .as_ref()
            .ok_or_else(|| io::Error::other("no poller on this thread"))?;
        let events = if writable {
            libc::EPOLLOUT
        } else {
            libc::EPOLLIN | libc::EPOLLRDHUP
        };
        poller
            .interests
            .borrow_mut()
            .insert(fd, Arc::clone(interest));
        if let Err(error) = poller.ctl(fd, events, fd as u64) {
            poller.interests.borrow_mut().remove(&fd);
            return Err(error);
        }
        Ok(())
    })
}

/// Forgets `fd` before it is closed (closing it removes it from epoll).
pub(crate) fn deregister(fd: RawFd) {
    CURRENT.with(|current| {
        if let Some(poller) = current.borrow().as_ref() {
            poller.interests.borrow_mut().remove(&fd);
        }
    });
}

/// Asks this thread's poller to wake `waker` at `when`; the key to move or
/// drop it, or `None` when this thread has no poller.
pub(crate) fn add_timer(when: Instant, waker: &Waker) -> Option<(Instant, u64)> {
    CURRENT.with(|current| {
        let current = current.borrow();
        let poller = current.as_ref()?;
        let id = poller.next_timer.get();
        poller.next_timer.set(id + 1);
        poller.timers.borrow_mut().insert((when, id), waker.clone());
        Some((when, id))
    })
}

/// Whether the timer `key` is still waiting (it is gone once it fired).
/// Replaces its waker when the task's waker changed.
pub(crate) fn timer_waiting(key: (Instant, u64), waker: &Waker) -> bool {
    CURRENT.with(|current| {
        let current = current.borrow();
        let Some(poller) = current.as_ref() else {
            return false;
        };
        let mut timers = poller.timers.borrow_mut();
        match timers.get_mut(&key) {
            Some(stored) => {
                if !stored.will_wake(waker) {
                    *stored = waker.clone();
                }
                true
            }
            None => false,
        }
    })
}

/// Drops the timer `key` if it has not fired.
pub(crate) fn remove_timer(key: (Instant, u64)) {
    CURRENT.with(|current| {
        if let Some(poller) = current.borrow().as_ref() {
            poller.timers.borrow_mut().remove(&key);
        }
    });
}

/// Takes ownership of a descriptor a system call returned, or its error.
///
/// # Safety
///
/// `fd` must be a descriptor nobody else owns, or negative.
unsafe fn owned(fd: RawFd) -> io::Result<OwnedFd> {
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the caller guarantees we are its only owner.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}
