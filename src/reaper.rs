//! Who reaps the children async-process is handed back when they are dropped.
//!
//! Left to itself, async-process starts a thread that runs its reaper under
//! `async_io::block_on`. An idle `block_on` takes async-io's reactor whenever it
//! is free, and from then on every pipe event of every driver reaches its task
//! through that thread: a futex hand-off per event, and up to ~100 µs of idle
//! time whenever that thread sleeps between turns (seen with `perf sched` as a
//! third of the cost of spawn + initialize + close). Driven here instead, by a
//! plain parking executor that never touches the reactor, the reaper leaves the
//! reactor to the threads that wait on I/O.

use std::sync::mpsc::sync_channel;
use std::sync::Once;
use std::task::Poll;
use std::thread;

use futures::future::poll_fn;
use futures::FutureExt;

/// Makes sure async-process's reaper is driven by our thread. Called before each
/// child is spawned: async-process starts its own thread at the first spawn if no
/// one drives the reaper by then.
pub(crate) fn ensure_driven() {
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        let (polled, first_poll) = sync_channel(1);
        let started = thread::Builder::new()
            .name("stdio-mcp-reap".into())
            .spawn(move || {
                let mut reaper = Box::pin(async_process::driver());
                let mut polled = Some(polled);
                futures::executor::block_on(poll_fn(|cx| {
                    // The first poll registers the driver with async-process.
                    let _ = reaper.poll_unpin(cx);
                    if let Some(polled) = polled.take() {
                        let _ = polled.send(());
                    }
                    Poll::<()>::Pending
                }));
            });
        // If the thread cannot start, async-process starts its own: slower, not wrong.
        if started.is_ok() {
            let _ = first_poll.recv();
        }
    });
}
