//! The state a transport's handles, its pending requests and its driver share.
//!
//! Handles only queue bytes and register slots; the driver alone touches the child.
//! Every method takes the lock briefly and never calls user code or wakes a task
//! while holding it.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::task::Waker;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::child::ExitStatus;
use crate::error::Error;
use crate::message::push_cancel;
use crate::sys::DirectWriter;

/// How many stderr lines are kept for [`Transport::stderr_tail`](crate::Transport::stderr_tail).
pub(crate) const STDERR_TAIL_LINES: usize = 20;

/// A request waiting for its answer.
#[derive(Debug)]
pub(crate) enum Slot {
    /// Nothing read yet; a deadline when the driver sweeps its limit.
    Waiting(Option<Waker>, Option<Deadline>),
    /// Its deadline passed: the driver queued its cancel, the request fails
    /// with a timeout when next polled.
    Expired,
    Answered(Result<Value, Error>),
    /// Sent with nobody waiting (the client's clean-up requests): its answer,
    /// whatever it is, is dropped without a word.
    Detached,
}

/// A limit the driver keeps for a request (the client's default limit): one
/// timer in the driver for all of them instead of one per request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadline {
    pub(crate) at: Instant,
    pub(crate) after: Duration,
}

#[derive(Debug)]
pub(crate) struct State {
    /// Complete lines waiting to be written, in call order.
    pub(crate) outgoing: Vec<u8>,
    pub(crate) pending: HashMap<u64, Slot, BuildHasherDefault<IdHasher>>,
    pub(crate) driver_waker: Option<Waker>,
    pub(crate) phase: Phase,
    /// The tasks awaiting a `Close`, woken once the phase is `Finished` and the
    /// driver has let go of the child.
    pub(crate) close_wakers: Vec<Waker>,
    pub(crate) stderr_tail: VecDeque<String>,
    pub(crate) default_timeout: Option<Duration>,
    /// `close()` was called: the child's end was asked for, not a failure.
    pub(crate) close_asked: bool,
    /// The earliest deadline the driver's sweep timer is set for.
    pub(crate) sweep_armed: Option<Instant>,
    /// An earlier deadline than that, for the driver to set its timer to.
    pub(crate) sweep_wanted: Option<Instant>,
    /// A second handle on the child's stdin, taken away by the driver when
    /// it lets go of stdin: for a caller's own write ([`Shared::send`]) when
    /// `callers_write`, and to tell whether the child read what was written.
    pub(crate) direct: Option<DirectWriter>,
    /// Callers may write their own lines: the driver runs on the background thread.
    pub(crate) callers_write: bool,
    /// The driver holds lines taken from `outgoing` and not all written yet:
    /// nobody else may write before them.
    pub(crate) driver_writing: bool,
}

#[derive(Debug)]
pub(crate) struct Shared {
    state: Mutex<State>,
    /// Live `Transport` handles and `PendingRequest`s; at zero the driver closes the child.
    handles: AtomicUsize,
    next_id: AtomicU64,
    pub(crate) discarded: AtomicU64,
    pub(crate) pid: u32,
    /// The child runs in a sandbox (said when it fails).
    pub(crate) sandboxed: bool,
}

impl Shared {
    pub(crate) fn new(pid: u32, default_timeout: Option<Duration>) -> Self {
        Shared {
            state: Mutex::new(State {
                outgoing: Vec::new(),
                pending: HashMap::default(),
                driver_waker: None,
                phase: Phase::Open,
                close_wakers: Vec::new(),
                stderr_tail: VecDeque::new(),
                default_timeout,
                close_asked: false,
                sweep_armed: None,
                sweep_wanted: None,
                direct: None,
                callers_write: false,
                driver_writing: false,
            }),
            handles: AtomicUsize::new(0),
            next_id: AtomicU64::new(1),
            discarded: AtomicU64::new(0),
            pid,
            sandboxed: false,
        }
    }

    /// Wakes every task awaiting a `Close`; called once the phase is `Finished`.
    ///
    /// The wakers are taken under the lock and woken after it, so a woken task
    /// that runs at once on this CPU finds nothing held.
    pub(crate) fn wake_closers(&self) {
        let wakers = std::mem::take(&mut self.lock().close_wakers);
        wakers.into_iter().for_each(Waker::wake);
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while holding the lock leaves plain data behind; keep going.
        crate::lock::lock(&self.state)
    }

    pub(crate) fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    pub(crate) fn add_handle(&self) {
        self.handles.fetch_add(1, Ordering::Relaxed);
    }

    /// Gives up one handle; the last one wakes the driver so it closes the child.
    pub(crate) fn release_handle(&self) {
        if self.handles.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.wake_driver();
        }
    }

    pub(crate) fn handles(&self) -> usize {
        self.handles.load(Ordering::Acquire)
    }

    /// Wakes the driver, after the caller released the lock.
    pub(crate) fn wake_driver(&self) {
        self.for_driver(|_| true);
    }

    /// Runs `change` under the lock; if it returns true (it queued a line or asked
    /// for the close), wakes the driver once the lock is released, so no task is
    /// ever woken while the lock is held.
    pub(crate) fn for_driver(&self, change: impl FnOnce(&mut State) -> bool) {
        let waker = {
            let mut state = self.lock();
            if change(&mut state) {
                state.driver_waker.take()
            } else {
                None
            }
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Runs `queue`, which queues a line for the child (false: it refused).
    /// When at most one request is in flight and the driver holds nothing to
    /// write, the caller writes the queue itself, under the lock, so a
    /// sequential call wakes the driver once (for its answer), not twice.
    /// What the pipe does not take now stays queued for the driver, which is
    /// woken for it. A burst of requests is left to the driver, which writes
    /// it in one go.
    pub(crate) fn send(&self, queue: impl FnOnce(&mut State) -> bool) {
        self.for_driver(|state| {
            if !queue(state) {
                return false;
            }
            let written = state.write_directly();
            !written || state.sweep_wanted.is_some()
        });
    }
}

/// Where a transport is in its life. It only moves forward: `Open`, then
/// `Stopping` (skipped when the child simply exits), `Exited`, `Finished`.
#[derive(Debug)]
pub(crate) enum Phase {
    /// Sends are taken.
    Open,
    /// Sends fail with `refusal`; the driver is closing the child (asked to by
    /// `close()`, or because the child can no longer carry requests).
    Stopping { refusal: Error },
    /// The child has exited; the driver reads what it left in the pipes.
    Exited { refusal: Error, status: ExitStatus },
    /// The driver is done; every `Close` resolves to `outcome`.
    Finished {
        refusal: Error,
        status: Option<ExitStatus>,
        outcome: Result<(), Error>,
    },
}

impl Phase {
    /// The error new sends fail with, once they are refused.
    pub(crate) fn refusal(&self) -> Option<&Error> {
        match self {
            Phase::Open => None,
            Phase::Stopping { refusal }
            | Phase::Exited { refusal, .. }
            | Phase::Finished { refusal, .. } => Some(refusal),
        }
    }

    pub(crate) fn is_open(&self) -> bool {
        matches!(self, Phase::Open)
    }

    pub(crate) fn status(&self) -> Option<ExitStatus> {
        match self {
            Phase::Exited { status, .. } => Some(*status),
            Phase::Finished { status, .. } => *status,
            _ => None,
        }
    }

    /// How `close()` ends, once the driver is done.
    pub(crate) fn outcome(&self) -> Option<&Result<(), Error>> {
        match self {
            Phase::Finished { outcome, .. } => Some(outcome),
            _ => None,
        }
    }

    /// Refuses sends with `refusal` from now on; false if they already were.
    pub(crate) fn stop(&mut self, refusal: Error) -> bool {
        let open = self.is_open();
        if open {
            *self = Phase::Stopping { refusal };
        }
        open
    }

    /// The child exited with `status`; sends keep the refusal they had.
    pub(crate) fn exited(&mut self, status: ExitStatus) {
        let refusal = self.take_refusal();
        *self = Phase::Exited { refusal, status };
    }

    /// The driver is done, with `outcome` for `close()`; a phase already
    /// finished keeps its outcome.
    pub(crate) fn finish(&mut self, outcome: Result<(), Error>) {
        if matches!(self, Phase::Finished { .. }) {
            return;
        }
        let status = self.status();
        let refusal = self.take_refusal();
        *self = Phase::Finished {
            refusal,
            status,
            outcome,
        };
    }

    fn take_refusal(&mut self) -> Error {
        match std::mem::replace(self, Phase::Open) {
            Phase::Open => Error::NotAlive,
            Phase::Stopping { refusal }
            | Phase::Exited { refusal, .. }
            | Phase::Finished { refusal, .. } => refusal,
        }
    }
}

impl State {
    /// Writes the whole queue to the child now, if the caller may: true if
    /// it all went (see [`Shared::send`]).
    fn write_directly(&mut self) -> bool {
        let Some(direct) = self.direct.as_ref().filter(|_| self.callers_write) else {
            return false;
        };
        if self.driver_writing || self.pending.len() > 1 || !self.phase.is_open() {
            return false;
        }
        let written = direct.write_now(&self.outgoing);
        self.outgoing.drain(..written);
        self.outgoing.is_empty()
    }

    /// Removes request `id`'s slot. A map that grew for a burst of requests is
    /// shrunk once it is mostly empty, so memory returns after the burst.
    pub(crate) fn remove_pending(&mut self, id: u64) -> Option<Slot> {
        let slot = self.pending.remove(&id);
        let (len, capacity) = (self.pending.len(), self.pending.capacity());
        if capacity > 1024 && len * 8 < capacity {
            self.pending.shrink_to(len * 2);
        }
        slot
    }

    pub(crate) fn push_stderr_line(&mut self, line: &str) {
        if line.is_empty() {
            return;
        }
        if self.stderr_tail.len() == STDERR_TAIL_LINES {
            self.stderr_tail.pop_front();
        }
        self.stderr_tail.push_back(line.to_owned());
    }

    /// Registers a deadline: the driver's sweep must come by then.
    pub(crate) fn watch_deadline(&mut self, at: Instant) {
        let earlier = |known: Option<Instant>| known.is_none_or(|known| at < known);
        if earlier(self.sweep_armed) && earlier(self.sweep_wanted) {
            self.sweep_wanted = Some(at);
        }
    }

    /// The sweep: every waiting request whose deadline has passed is expired
    /// and its cancel queued; gives their wakers and the next deadline.
    pub(crate) fn expire(&mut self, now: Instant) -> (Vec<Waker>, Option<Instant>) {
        let mut wakers = Vec::new();
        let mut next: Option<Instant> = None;
        let open = self.phase.is_open();
        for (id, slot) in &mut self.pending {
            let Slot::Waiting(waker, Some(deadline)) = slot else {
                continue;
            };
            if deadline.at > now {
                next = Some(next.map_or(deadline.at, |n| n.min(deadline.at)));
                continue;
            }
            if open {
                let reason = format!("timed out after {}s", deadline.after.as_secs_f64());
                push_cancel(&mut self.outgoing, *id, Some(&reason));
            }
            wakers.extend(waker.take());
            *slot = Slot::Expired;
        }
        self.sweep_armed = next;
        (wakers, next)
    }

    /// Settles every waiting request with `error` and hands back their wakers.
    pub(crate) fn fail_all(&mut self, error: &Error) -> Vec<Waker> {
        self.pending
            .retain(|_, slot| !matches!(slot, Slot::Detached));
        let mut wakers = Vec::new();
        for slot in self.pending.values_mut() {
            if let Slot::Waiting(waker, _) = slot {
                wakers.extend(waker.take());
                *slot = Slot::Answered(Err(error.clone()));
            }
        }
        wakers
    }
}

/// Request ids are small sequential integers: a multiply spreads them well enough
/// and costs far less than the default SipHash.
#[derive(Debug, Default)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::io::Read;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::{Wake, Waker};

    use super::{Shared, Slot};
    use crate::sys::DirectWriter;

    /// Counts the driver's wake-ups.
    #[derive(Default)]
    struct Wakes(AtomicUsize);

    impl Wake for Wakes {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Queues a request line with id `id` through `send`.
    fn send(shared: &Shared, wakes: &Arc<Wakes>, id: u64) {
        shared.lock().driver_waker = Some(Waker::from(Arc::clone(wakes)));
        shared.send(|state| {
            state
                .outgoing
                .extend_from_slice(format!("{id}\n").as_bytes());
            state.pending.insert(id, Slot::Waiting(None, None));
            true
        });
    }

    #[test]
    fn a_lone_request_is_written_by_its_caller_and_the_driver_is_not_woken() {
        let (mut reader, writer) = std::io::pipe().unwrap();
        let shared = Shared::new(1, None);
        shared.lock().direct = DirectWriter::of(&writer);
        shared.lock().callers_write = true;
        let wakes = Arc::new(Wakes::default());

        send(&shared, &wakes, 1);
        assert!(shared.lock().outgoing.is_empty());
        assert_eq!(wakes.0.load(Ordering::SeqCst), 0);
        let mut line = [0; 2];
        reader.read_exact(&mut line).unwrap();
        assert_eq!(&line, b"1\n");

        // A second one in flight: a burst is the driver's to write.
        send(&shared, &wakes, 2);
        assert_eq!(shared.lock().outgoing, b"2\n");
        assert_eq!(wakes.0.load(Ordering::SeqCst), 1);

        // Lines the driver holds go first: nobody writes in front of them.
        let mut state = shared.lock();
        state.outgoing.clear();
        state.pending.clear();
        state.driver_writing = true;
        drop(state);
        send(&shared, &wakes, 3);
        assert_eq!(shared.lock().outgoing, b"3\n");
        assert_eq!(wakes.0.load(Ordering::SeqCst), 2);
    }
}
