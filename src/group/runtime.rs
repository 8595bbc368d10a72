//! The one thread, `stdio-mcp-group`, on which groups start their servers
//! and watch them: starts go on after `Group::connect` has returned, whatever
//! the caller's executor does meanwhile.
//!
//! MemberState on first use; it runs its tasks under `async_io::block_on`, so
//! while they wait it sleeps in async-io's reactor.

use std::future::Future;
use std::sync::OnceLock;
use std::thread;

use futures::channel::mpsc::{unbounded, UnboundedSender};
use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use futures::FutureExt;

type Task = BoxFuture<'static, ()>;

static INBOX: OnceLock<Option<UnboundedSender<Task>>> = OnceLock::new();

/// Runs `task` on the group thread. Should that thread be impossible to
/// start, on a thread of its own.
pub(crate) fn spawn(task: impl Future<Output = ()> + Send + 'static) {
    let task = task.boxed();
    let task = match INBOX.get_or_init(start) {
        Some(inbox) => match inbox.unbounded_send(task) {
            Ok(()) => return,
            Err(refused) => refused.into_inner(),
        },
        None => task,
    };
    let _ = thread::Builder::new()
        .name("stdio-mcp-group-task".into())
        .spawn(move || async_io::block_on(task));
}

fn start() -> Option<UnboundedSender<Task>> {
    let (inbox, mut arrivals) = unbounded::<Task>();
    thread::Builder::new()
        .name("stdio-mcp-group".into())
        .spawn(move || {
            async_io::block_on(async move {
                let mut running = FuturesUnordered::new();
                loop {
                    futures::select! {
                        task = arrivals.next() => match task {
                            // A panicking task (a bug) must not end the others.
                            Some(task) => running.push(std::panic::AssertUnwindSafe(task).catch_unwind()),
                            None => break,
                        },
                        _ = running.select_next_some() => {}
                    }
                }
            });
        })
        .ok()?;
    Some(inbox)
}
