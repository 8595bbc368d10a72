//! The one shared thread, `stdio-mcp`, that runs the drivers of `Builder::spawn`
//! and drives async-process's reaper.
//!
//! Started on first use; however many transports there are, it is one thread.
//! It runs under `async_io::block_on`, so while its drivers wait it sleeps in
//! async-io's reactor, where their pipes, exits and timers are registered.
//! Because it polls `async_process::driver()`, async-process starts no thread
//! of its own for reaping.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc::sync_channel;
use std::sync::OnceLock;
use std::task::Poll;
use std::thread;

use futures::channel::mpsc::{unbounded, UnboundedReceiver, UnboundedSender};
use futures::future::{poll_fn, CatchUnwind};
use futures::stream::{FuturesUnordered, StreamExt};
use futures::FutureExt;

use crate::driver::Driver;

static INBOX: OnceLock<Option<UnboundedSender<Driver>>> = OnceLock::new();

/// Starts the thread if it is not running, and returns once it drives
/// async-process's reaper (async-process checks that at each spawn).
pub(crate) fn drive_reaper() {
    let _ = inbox();
}

/// Hands a driver to the background thread. If the thread could not be started,
/// the driver is dropped, which fails its requests with a clear error.
pub(crate) fn run(driver: Driver) {
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
        .spawn(move || async_io::block_on(drive_all(arrivals, started)))
        .ok()?;
    // If the thread dies before its first poll, async-process reaps on its own.
    let _ = first_poll.recv();
    Some(sender)
}

async fn drive_all(
    mut arrivals: UnboundedReceiver<Driver>,
    started: std::sync::mpsc::SyncSender<()>,
) {
    let mut reaper = Box::pin(async_process::driver());
    let mut started = Some(started);
    let mut drivers: FuturesUnordered<CatchUnwind<AssertUnwindSafe<Driver>>> =
        FuturesUnordered::new();
    poll_fn(|cx| {
        // The first poll tells async-process that its reaper is driven here.
        let _ = reaper.poll_unpin(cx);
        if let Some(started) = started.take() {
            let _ = started.send(());
        }
        while let Poll::Ready(Some(driver)) = arrivals.poll_next_unpin(cx) {
            // A panicking driver (a bug) must not take the others down with it.
            drivers.push(AssertUnwindSafe(driver).catch_unwind());
        }
        // Polls only the drivers that were woken; finished ones are dropped here.
        while let Poll::Ready(Some(_)) = drivers.poll_next_unpin(cx) {}
        Poll::<()>::Pending
    })
    .await;
}
