//! The one shared thread, `stdio-mcp`, that runs the drivers of `TransportBuilder::spawn`,
//! drives async-process's reaper and awaits the exits of orphaned children.
//!
//! Started on first use; however many transports there are, it is one thread.
//! While its drivers wait it sleeps in [`sys::run_forever`]: on Linux an epoll
//! of its own where their pipes are registered, elsewhere async-io's reactor.
//! Because it polls `async_process::driver()`, async-process starts no thread
//! of its own for reaping.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc::sync_channel;
use std::sync::OnceLock;
use std::task::Poll;
use std::thread;

use futures::channel::mpsc::{unbounded, UnboundedReceiver, UnboundedSender};
use futures::future::CatchUnwind;
use futures::stream::{FuturesUnordered, StreamExt};
use futures::FutureExt;

use crate::child::{self, StatusFuture};
use crate::driver::Driver;
use crate::sys;

static INBOX: OnceLock<Option<UnboundedSender<Driver>>> = OnceLock::new();

/// Starts the thread if it is not running, and returns once it drives
/// async-process's reaper (async-process checks that at each spawn).
pub(crate) fn drive_reaper() {
    let _ = inbox();
}

/// Hands a driver to the background thread. If the thread could not be started,
/// the driver is dropped, which fails its requests with a clear error.
pub(crate) fn run(mut driver: Driver) {
    driver.let_callers_write();
    if let Some(sender) = inbox() {
        // A send fails only if the thread has ended (a bug): the driver comes
        // back in the error and is dropped, with the same outcome as above.
        let _ = sender.unbounded_send(driver);
    }
}

fn inbox() -> Option<&'static UnboundedSender<Driver>> {
    INBOX.get_or_init(start).as_ref()
}

fn start() -> Option<UnboundedSender<Driver>> {
    let (sender, arrivals) = unbounded();
    let (started, first_poll) = sync_channel(1);
    thread::Builder::new()
        .name("stdio-mcp".into())
        .spawn(move || drive_all(arrivals, started))
        .ok()?;
    // If the thread dies before its first poll, async-process reaps on its own.
    let _ = first_poll.recv();
    Some(sender)
}

fn drive_all(mut arrivals: UnboundedReceiver<Driver>, started: std::sync::mpsc::SyncSender<()>) {
    let mut reaper = Box::pin(async_process::driver());
    let mut orphans = child::orphans();
    let mut exits: FuturesUnordered<StatusFuture> = FuturesUnordered::new();
    let mut started = Some(started);
    let mut drivers: FuturesUnordered<CatchUnwind<AssertUnwindSafe<Driver>>> =
        FuturesUnordered::new();
    sys::run_forever(|cx, poller| {
        // The first poll tells async-process that its reaper is driven here.
        let _ = reaper.poll_unpin(cx);
        if let Some(started) = started.take() {
            let _ = started.send(());
        }
        while let Poll::Ready(Some(mut driver)) = arrivals.poll_next_unpin(cx) {
            if let Some(poller) = poller {
                driver.attach(poller);
            }
            // A panicking driver (a bug) must not take the others down with it.
            drivers.push(AssertUnwindSafe(driver).catch_unwind());
        }
        // Polls only the drivers that were woken; finished ones are dropped here.
        while let Poll::Ready(Some(_)) = drivers.poll_next_unpin(cx) {}
        if let Some(orphans) = orphans.as_mut() {
            while let Poll::Ready(Some(exit)) = orphans.poll_next_unpin(cx) {
                exits.push(exit);
            }
        }
        while let Poll::Ready(Some(_)) = exits.poll_next_unpin(cx) {}
    });
}
