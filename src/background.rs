//! The one shared thread that runs the drivers of `Builder::spawn`.
//!
//! Started on first use and named `stdio-mcp`, it runs `async_io::block_on`, so the
//! drivers' pipes and timers are served by async-io's reactor on this very thread.
//! However many transports there are, it is one thread.

use std::panic::AssertUnwindSafe;
use std::sync::OnceLock;
use std::task::Poll;
use std::thread;

use futures::channel::mpsc::{unbounded, UnboundedReceiver, UnboundedSender};
use futures::future::{poll_fn, CatchUnwind};
use futures::stream::{FuturesUnordered, StreamExt};
use futures::FutureExt;

use crate::driver::Driver;

static DRIVERS: OnceLock<UnboundedSender<Driver>> = OnceLock::new();

/// Hands a driver to the background thread, starting the thread the first time.
pub(crate) fn run(driver: Driver) {
    let sender = DRIVERS.get_or_init(|| {
        let (sender, receiver) = unbounded();
        thread::Builder::new()
            .name("stdio-mcp".into())
            .spawn(move || async_io::block_on(drive_all(receiver)))
            .expect("cannot start the stdio-mcp background thread");
        sender
    });
    // If the thread is gone the driver comes back in the error and is dropped,
    // which fails its requests with a clear message instead of hanging them.
    let _ = sender.unbounded_send(driver);
}

async fn drive_all(mut incoming: UnboundedReceiver<Driver>) {
    let mut drivers: FuturesUnordered<CatchUnwind<AssertUnwindSafe<Driver>>> =
        FuturesUnordered::new();
    poll_fn(|cx| {
        while let Poll::Ready(Some(driver)) = incoming.poll_next_unpin(cx) {
            // A panicking driver (a bug) must not take the others down with it.
            drivers.push(AssertUnwindSafe(driver).catch_unwind());
        }
        // Polls only the drivers that were woken; finished ones are dropped here.
        while let Poll::Ready(Some(_)) = drivers.poll_next_unpin(cx) {}
        Poll::<()>::Pending
    })
    .await;
}
