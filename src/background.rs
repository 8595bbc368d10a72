//! The one shared thread that runs the drivers of `Builder::spawn`.
//!
//! Started on first use and named `stdio-mcp`; however many transports there
//! are, it is one thread. It polls its drivers and, when none has anything to
//! do, sleeps in its own edge-triggered epoll (`crate::poller`), where their
//! pipes, exits and timers are registered. It never runs `async_io::block_on`, so
//! it never holds async-io's reactor away from the program's own `block_on`.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::{Context, Poll, Wake, Waker};
use std::thread;

use futures::future::CatchUnwind;
use futures::stream::{FuturesUnordered, StreamExt};
use futures::FutureExt;

use crate::driver::Driver;
use crate::poller::{self, Notifier};

/// Passes over the drivers before the thread looks for new events anyway.
const PASSES_PER_WAIT: usize = 64;

/// Where `run` leaves new drivers for the thread.
struct Inbox {
    state: Mutex<InboxState>,
    /// Raised after a push, so the thread looks at the inbox only when there is
    /// something there rather than on every pass.
    arrived: AtomicBool,
    pass: Arc<PassWaker>,
}

struct InboxState {
    drivers: Vec<Driver>,
    /// False once the thread has ended (a bug, or no epoll to be had): drivers
    /// are then dropped, which fails their requests with a clear error instead of
    /// leaving them waiting.
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
    drop(state);
    inbox.arrived.store(true, Ordering::SeqCst);
    inbox.pass.wake_by_ref();
}

fn start() -> Arc<Inbox> {
    let notifier = Notifier::new();
    let alive = notifier.is_ok();
    let inbox = Arc::new(Inbox {
        state: Mutex::new(InboxState {
            drivers: Vec::new(),
            alive,
        }),
        arrived: AtomicBool::new(false),
        pass: Arc::new(PassWaker {
            woken: AtomicBool::new(true),
            sleeping: AtomicBool::new(false),
            notifier: notifier.ok(),
        }),
    });
    if alive {
        let for_thread = Arc::clone(&inbox);
        thread::Builder::new()
            .name("stdio-mcp".into())
            .spawn(move || {
                let _ended = DropQueued(&for_thread);
                if let Some(notifier) = &for_thread.pass.notifier {
                    if poller::install(notifier).is_ok() {
                        drive_all(&for_thread);
                    }
                }
            })
            .expect("cannot start the stdio-mcp background thread");
    }
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

/// The waker the drivers see. A wake raised while the thread polls only sets a
/// flag the loop looks at; one raised while it sleeps in `epoll_wait` also
/// writes the eventfd that ends the wait. (`SeqCst` on both sides: the loop
/// sets `sleeping` then reads `woken`, the waker sets `woken` then reads
/// `sleeping`, and one of them sees the other.)
struct PassWaker {
    woken: AtomicBool,
    sleeping: AtomicBool,
    notifier: Option<Notifier>,
}

impl Wake for PassWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::SeqCst);
        if self.sleeping.load(Ordering::SeqCst) {
            if let Some(notifier) = &self.notifier {
                notifier.notify();
            }
        }
    }
}

/// Polls the drivers that were woken, sleeps in the poller when none was.
fn drive_all(inbox: &Inbox) {
    let mut drivers: FuturesUnordered<CatchUnwind<AssertUnwindSafe<Driver>>> =
        FuturesUnordered::new();
    let pass = &inbox.pass;
    let waker = Waker::from(Arc::clone(pass));
    let mut cx = Context::from_waker(&waker);
    loop {
        let mut passes = 0;
        while passes < PASSES_PER_WAIT && pass.woken.swap(false, Ordering::SeqCst) {
            passes += 1;
            if inbox.arrived.swap(false, Ordering::SeqCst) {
                for driver in std::mem::take(&mut inbox.lock().drivers) {
                    // A panicking driver (a bug) must not take the others down with it.
                    drivers.push(AssertUnwindSafe(driver).catch_unwind());
                }
            }
            // Polls only the drivers that were woken; finished ones are dropped here.
            while let Poll::Ready(Some(_)) = drivers.poll_next_unpin(&mut cx) {}
        }
        let busy = passes == PASSES_PER_WAIT;
        pass.sleeping.store(true, Ordering::SeqCst);
        // A wake that came after the last pass looked: do not sleep through it.
        let timeout = if busy || pass.woken.load(Ordering::SeqCst) {
            0
        } else {
            -1
        };
        // Awake again before the events fire: their wake-ups need no eventfd write.
        let waited = poller::wait(timeout, || pass.sleeping.store(false, Ordering::SeqCst));
        if waited.is_err() {
            // epoll_wait fails only on a bug (bad descriptor or buffer): do not spin.
            return;
        }
    }
}
