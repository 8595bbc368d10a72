//! The one shared thread that runs the drivers of `Builder::spawn`.
//!
//! Started on first use and named `stdio-mcp`, it runs `async_io::block_on` while
//! it has drivers, so their pipes and timers are served by async-io's reactor on
//! this very thread. However many transports there are, it is one thread.
//!
//! Once it has had nothing to drive for [`IDLE_LINGER`], it leaves `block_on` and
//! sleeps on a condition variable: an idle `block_on` would hold async-io's
//! reactor, and every I/O event of the program's own `block_on` (a driver run
//! with `Driver::run_until`, say) would then reach it through this thread.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::Duration;

use async_io::Timer;
use futures::future::{poll_fn, CatchUnwind};
use futures::stream::{FuturesUnordered, StreamExt};
use futures::task::AtomicWaker;
use futures::FutureExt;

use crate::driver::Driver;

/// Passes over the drivers in one poll before yielding to `block_on`.
const PASSES_PER_POLL: usize = 64;
/// How long the thread keeps the reactor with no driver left, so a program that
/// starts servers one after another does not leave and re-enter `block_on` each time.
const IDLE_LINGER: Duration = Duration::from_millis(100);

/// Where `run` leaves new drivers for the thread.
struct Inbox {
    state: Mutex<InboxState>,
    /// Signalled when a driver arrives while the thread sleeps outside `block_on`.
    arrival: Condvar,
    /// Raised after a push, so the thread looks at the inbox only when there is
    /// something there rather than on every pass.
    arrived: AtomicBool,
    pass: Arc<PassWaker>,
}

struct InboxState {
    drivers: Vec<Driver>,
    /// The thread waits on `arrival` (not inside `block_on`).
    sleeping: bool,
    /// False once the thread has ended (a bug): drivers are then dropped, which
    /// fails their requests with a clear error instead of leaving them waiting.
    alive: bool,
}

impl Inbox {
    fn lock(&self) -> MutexGuard<'_, InboxState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

static INBOX: OnceLock<Arc<Inbox>> = OnceLock::new();

/// Hands a driver to the background thread, starting the thread the first time.
pub(crate) fn run(driver: Driver) {
    let inbox = INBOX.get_or_init(start);
    let mut state = inbox.lock();
    if !state.alive {
        drop(state);
        drop(driver);
        return;
    }
    state.drivers.push(driver);
    let sleeping = state.sleeping;
    drop(state);
    inbox.arrived.store(true, Ordering::SeqCst);
    if sleeping {
        inbox.arrival.notify_one();
    } else {
        inbox.pass.wake_by_ref();
    }
}

fn start() -> Arc<Inbox> {
    let inbox = Arc::new(Inbox {
        state: Mutex::new(InboxState {
            drivers: Vec::new(),
            sleeping: false,
            alive: true,
        }),
        arrival: Condvar::new(),
        arrived: AtomicBool::new(false),
        pass: Arc::new(PassWaker {
            woken: AtomicBool::new(true),
            polling: AtomicBool::new(false),
            block_on: AtomicWaker::new(),
        }),
    });
    let for_thread = Arc::clone(&inbox);
    thread::Builder::new()
        .name("stdio-mcp".into())
        .spawn(move || {
            let _ended = DropQueued(&for_thread);
            loop {
                async_io::block_on(drive_until_idle(&for_thread));
                let mut state = for_thread.lock();
                state.sleeping = true;
                while state.drivers.is_empty() {
                    state = for_thread
                        .arrival
                        .wait(state)
                        .unwrap_or_else(PoisonError::into_inner);
                }
                state.sleeping = false;
            }
        })
        .expect("cannot start the stdio-mcp background thread");
    inbox
}

/// When the thread ends (it never should), fails what is still queued for it.
struct DropQueued<'a>(&'a Inbox);

impl Drop for DropQueued<'_> {
    fn drop(&mut self) {
        let queued = {
            let mut state = self.0.lock();
            state.alive = false;
            std::mem::take(&mut state.drivers)
        };
        drop(queued);
    }
}

/// The waker the drivers see. Inside our own poll a wake only raises a flag that
/// the loop below looks at; `block_on` is woken only from outside it. A wake
/// through `block_on` from its own thread costs an extra zero-timeout turn of
/// the reactor (five system calls in async-io's epoll backend); sequential calls
/// pinned to one CPU went from 7.2-8.4 to 6.7-7.1 µs with this waker.
struct PassWaker {
    woken: AtomicBool,
    polling: AtomicBool,
    block_on: AtomicWaker,
}

impl Wake for PassWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // SeqCst on both sides: the poll clears `polling` then reads `woken`, the
        // waker sets `woken` then reads `polling`; one of them sees the other.
        self.woken.store(true, Ordering::SeqCst);
        if !self.polling.load(Ordering::SeqCst) {
            self.block_on.wake();
        }
    }
}

/// Drives every driver handed over until none has been left for `IDLE_LINGER`.
async fn drive_until_idle(inbox: &Inbox) {
    let mut drivers: FuturesUnordered<CatchUnwind<AssertUnwindSafe<Driver>>> =
        FuturesUnordered::new();
    let mut idle: Option<Timer> = None;
    let pass = &inbox.pass;
    // Whatever arrived while the thread slept is looked at on the first pass.
    pass.woken.store(true, Ordering::SeqCst);
    inbox.arrived.store(true, Ordering::SeqCst);
    let waker = Waker::from(Arc::clone(pass));
    poll_fn(|cx| {
        pass.block_on.register(cx.waker());
        pass.polling.store(true, Ordering::SeqCst);
        for _ in 0..PASSES_PER_POLL {
            if !pass.woken.swap(false, Ordering::SeqCst) {
                pass.polling.store(false, Ordering::SeqCst);
                // A wake between the swap and the store only raised the flag.
                if pass.woken.load(Ordering::SeqCst) {
                    cx.waker().wake_by_ref();
                }
                return Poll::Pending;
            }
            if inbox.arrived.swap(false, Ordering::SeqCst) {
                for driver in std::mem::take(&mut inbox.lock().drivers) {
                    // A panicking driver (a bug) must not take the others down with it.
                    drivers.push(AssertUnwindSafe(driver).catch_unwind());
                }
            }
            // Polls only the drivers that were woken; finished ones are dropped here.
            let mut own = Context::from_waker(&waker);
            while let Poll::Ready(Some(_)) = drivers.poll_next_unpin(&mut own) {}
            if !drivers.is_empty() {
                idle = None;
            } else if idle
                .get_or_insert_with(|| Timer::after(IDLE_LINGER))
                .poll_unpin(&mut own)
                .is_ready()
            {
                pass.polling.store(false, Ordering::SeqCst);
                return Poll::Ready(());
            }
        }
        // Busy for a while: let block_on turn the reactor, then come back.
        pass.polling.store(false, Ordering::SeqCst);
        cx.waker().wake_by_ref();
        Poll::Pending
    })
    .await;
}
