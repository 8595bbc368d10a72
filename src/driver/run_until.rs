//! Running a driver and the caller's work as one task.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use futures::task::AtomicWaker;

use super::Driver;

// // When the driver is a task of its own, every call crosses between two tasks
// twice (the queued request wakes the driver, the routed response wakes the
// caller), each crossing a wake-up the executor must handle. Polled together,
// the two wake each other through flags inside one poll.

const DRIVER: u8 = 1;
const WORK: u8 = 2;
/// Passes over both futures in one poll before yielding to the executor.
const PASSES_PER_POLL: usize = 64;

/// The future [`Driver::run_until`] returns: resolves to the work's output and
/// the driver, which still has the child to look after.
///
/// # Examples
///
/// ```no_run
/// let (t, driver) = stdio_mcp::Transport::builder(["my-mcp-server"]).spawn_with_driver()?;
/// let run: stdio_mcp::RunUntil<_> = driver.run_until(t.send_request("ping", None));
/// let (pong, _driver) = async_io::block_on(run);
/// pong?;
/// # Ok::<(), stdio_mcp::Error>(())
/// ```
#[must_use = "futures do nothing unless polled"]
pub struct RunUntil<F> {
    driver: Option<Driver>,
    work: Pin<Box<F>>,
    flags: Arc<Flags>,
    driver_waker: Waker,
    work_waker: Waker,
}

/// Which of the two futures asked to be polled, and the task to wake when a
/// request comes from outside a poll. `SeqCst` throughout: a waker sets its flag
/// then reads `polling`, the poll clears `polling` then reads the flags, and at
/// least one side must see the other's write, or a wake-up would be lost.
struct Flags {
    woken: AtomicU8,
    polling: AtomicBool,
    task: AtomicWaker,
}

struct FlagWaker {
    flags: Arc<Flags>,
    bit: u8,
}

impl Wake for FlagWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.flags.woken.fetch_or(self.bit, Ordering::SeqCst);
        // Inside our own poll the flag is enough: the loop below looks at it.
        if !self.flags.polling.load(Ordering::SeqCst) {
            self.flags.task.wake();
        }
    }
}

impl<F: Future> RunUntil<F> {
    pub(crate) fn new(driver: Driver, work: F) -> Self {
        let flags = Arc::new(Flags {
            // Both polled on the first poll.
            woken: AtomicU8::new(DRIVER | WORK),
            polling: AtomicBool::new(false),
            task: AtomicWaker::new(),
        });
        let waker = |bit| {
            Waker::from(Arc::new(FlagWaker {
                flags: Arc::clone(&flags),
                bit,
            }))
        };
        RunUntil {
            driver: Some(driver),
            work: Box::pin(work),
            driver_waker: waker(DRIVER),
            work_waker: waker(WORK),
            flags,
        }
    }
}

impl<F: Future> Future for RunUntil<F> {
    type Output = (F::Output, Driver);

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        this.flags.task.register(cx.waker());
        this.flags.polling.store(true, Ordering::SeqCst);
        for _ in 0..PASSES_PER_POLL {
            let woken = this.flags.woken.swap(0, Ordering::SeqCst);
            if woken == 0 {
                this.flags.polling.store(false, Ordering::SeqCst);
                // A wake that landed between the swap and the store above only set
                // a flag; look once more so it is not lost.
                if this.flags.woken.load(Ordering::SeqCst) != 0 {
                    cx.waker().wake_by_ref();
                }
                return Poll::Pending;
            }
            if woken & DRIVER != 0 {
                if let Some(driver) = this.driver.as_mut() {
                    // A finished driver stays finished; polling it again is harmless.
                    let _ = Pin::new(driver).poll(&mut Context::from_waker(&this.driver_waker));
                }
            }
            if woken & WORK != 0 {
                let mut work_cx = Context::from_waker(&this.work_waker);
                if let Poll::Ready(output) = this.work.as_mut().poll(&mut work_cx) {
                    this.flags.polling.store(false, Ordering::SeqCst);
                    let driver = this
                        .driver
                        .take()
                        .expect("RunUntil polled after completion");
                    return Poll::Ready((output, driver));
                }
            }
        }
        // Busy for a while: let the executor run others, then come back.
        this.flags.polling.store(false, Ordering::SeqCst);
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

impl<F> fmt::Debug for RunUntil<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunUntil")
            .field("driver", &self.driver)
            .finish_non_exhaustive()
    }
}

impl Driver {
    /// Runs `work` and this driver together, in the caller's task, until `work`
    /// completes; resolves to its output and the driver.
    ///
    /// The fastest way to run a driver on your own executor: requests and answers
    /// pass between `work` and the driver without a wake-up through the executor.
    /// Afterwards the driver still owns the child: await it (after a
    /// [`close`](crate::Transport::close)) to see the child out, or drop it to kill it.
    /// Dropping the returned future before `work` completes drops the driver too,
    /// with the same effect as dropping a driver.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), stdio_mcp::Error> {
    /// use stdio_mcp::Transport;
    ///
    /// let (transport, driver) = Transport::builder(["my-mcp-server"]).spawn_with_driver()?;
    /// let (tools, driver) = async_io::block_on(driver.run_until(async {
    ///     transport.send_request("tools/list", None).await
    /// }));
    /// println!("{}", tools?);
    /// let closing = transport.close();
    /// async_io::block_on(async { driver.await; closing.await })?;
    /// # Ok(()) }
    /// ```
    pub fn run_until<F: Future>(self, work: F) -> RunUntil<F> {
        RunUntil::new(self, work)
    }
}
