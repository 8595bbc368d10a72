//! Reaping: the thread that waits for children nobody else waits for.
//!
//! A driver that ran to its end has already seen its child's exit, so dropping
//! the child needs no help (children async-process starts are spawned with
//! `reap_on_drop(false)` for that reason). A driver dropped early (the "left the
//! loop" case) kills its child and hands it here, where its exit is awaited so it
//! leaves no zombie.
//!
//! The same thread drives async-process's own reaper future, which the children
//! started without a pidfd need. Left to itself, async-process starts a thread
//! that runs it under `async_io::block_on`, and an idle `block_on` takes
//! async-io's reactor whenever it is free: from then on every pipe event of
//! every driver reaches its task through that thread, a futex hand-off per event
//! plus up to ~100 µs of idle time whenever that thread sleeps between turns
//! (seen with `perf sched`). Here a plain parking executor runs both and never
//! touches the reactor; async-io wakes it when an adopted child's exit is seen.

use std::os::fd::OwnedFd;
use std::sync::mpsc::sync_channel;
use std::sync::OnceLock;
use std::task::Poll;
use std::thread;

use futures::channel::mpsc::{unbounded, UnboundedSender};
use futures::future::{poll_fn, BoxFuture};
use futures::stream::{FuturesUnordered, StreamExt};
use futures::FutureExt;

use crate::process::Process;

type Reaping = BoxFuture<'static, ()>;

static ADOPT: OnceLock<Option<UnboundedSender<Reaping>>> = OnceLock::new();

/// Starts the reaping thread if it is not running yet. Called before each child
/// async-process spawns: it starts its own thread at the first spawn unless its
/// reaper is driven by then.
pub(crate) fn ensure_driven() {
    let _ = adopter();
}

/// Waits for `child`'s exit on the reaping thread (it has been sent SIGKILL),
/// through its pidfd if it has one.
pub(crate) fn adopt(child: Process, pidfd: Option<OwnedFd>) {
    if let Some(sender) = adopter() {
        // If the thread is gone the child comes back in the error and is dropped
        // unreaped: a zombie until this process exits, the best left to do.
        let _ = sender.unbounded_send(crate::exit_watch::reap(child, pidfd).boxed());
    }
}

fn adopter() -> Option<&'static UnboundedSender<Reaping>> {
    ADOPT
        .get_or_init(|| {
            let (sender, mut adopted) = unbounded::<Reaping>();
            let (polled, first_poll) = sync_channel(1);
            let started = thread::Builder::new()
                .name("stdio-mcp-reap".into())
                .spawn(move || {
                    let mut reaper = Box::pin(async_process::driver());
                    let mut waiting: FuturesUnordered<Reaping> = FuturesUnordered::new();
                    let mut polled = Some(polled);
                    futures::executor::block_on(poll_fn(|cx| {
                        // The first poll registers the driver with async-process.
                        let _ = reaper.poll_unpin(cx);
                        if let Some(polled) = polled.take() {
                            let _ = polled.send(());
                        }
                        while let Poll::Ready(Some(reaping)) = adopted.poll_next_unpin(cx) {
                            waiting.push(reaping);
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
