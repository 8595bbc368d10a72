//! Reaping: the thread that waits for children nobody else waits for.
//!
//! Children are spawned with async-process's `reap_on_drop(false)`: a driver
//! that ran to its end has already seen its child's exit, so dropping the child
//! needs no help. A driver dropped early (the "left the loop" case) kills its
//! child and hands it here, where its exit is awaited so it leaves no zombie.
//!
//! The same thread drives async-process's own reaper future. Left to itself,
//! async-process starts a thread that runs it under `async_io::block_on`, and an
//! idle `block_on` takes async-io's reactor whenever it is free: from then on
//! every pipe event of every driver reaches its task through that thread, a
//! futex hand-off per event plus up to ~100 µs of idle time whenever that thread
//! sleeps between turns (seen with `perf sched`). Here a plain parking executor
//! runs both and never touches the reactor; async-io wakes it when an adopted
//! child's exit is seen.

use std::sync::mpsc::sync_channel;
use std::sync::OnceLock;
use std::task::Poll;
use std::thread;

use async_process::Child;
use futures::channel::mpsc::{unbounded, UnboundedSender};
use futures::future::{poll_fn, BoxFuture};
use futures::stream::{FuturesUnordered, StreamExt};
use futures::FutureExt;

static ADOPT: OnceLock<Option<UnboundedSender<Child>>> = OnceLock::new();

/// Starts the reaping thread if it is not running yet. Called before each child
/// is spawned: async-process starts its own thread at the first spawn unless its
/// reaper is driven by then.
pub(crate) fn ensure_driven() {
    let _ = adopter();
}

/// Waits for `child`'s exit on the reaping thread (it has been sent SIGKILL).
pub(crate) fn adopt(child: Child) {
    if let Some(sender) = adopter() {
        // If the thread is gone the child comes back in the error and is dropped
        // unreaped: a zombie until this process exits, the best left to do.
        let _ = sender.unbounded_send(child);
    }
}

fn adopter() -> Option<&'static UnboundedSender<Child>> {
    ADOPT
        .get_or_init(|| {
            let (sender, mut adopted) = unbounded::<Child>();
            let (polled, first_poll) = sync_channel(1);
            let started = thread::Builder::new()
                .name("stdio-mcp-reap".into())
                .spawn(move || {
                    let mut reaper = Box::pin(async_process::driver());
                    let mut waiting: FuturesUnordered<BoxFuture<'static, ()>> =
                        FuturesUnordered::new();
                    let mut polled = Some(polled);
                    futures::executor::block_on(poll_fn(|cx| {
                        // The first poll registers the driver with async-process.
                        let _ = reaper.poll_unpin(cx);
                        if let Some(polled) = polled.take() {
                            let _ = polled.send(());
                        }
                        while let Poll::Ready(Some(mut child)) = adopted.poll_next_unpin(cx) {
                            waiting.push(
                                async move {
                                    let _ = child.status().await;
                                }
                                .boxed(),
                            );
                        }
                        while let Poll::Ready(Some(())) = waiting.poll_next_unpin(cx) {}
                        Poll::<()>::Pending
                    }));
                });
            // If the thread cannot start, async-process starts its own: slower, not
            // wrong; and adopted children are then dropped unreaped.
            started.ok()?;
            let _ = first_poll.recv();
            Some(sender)
        })
        .as_ref()
}
