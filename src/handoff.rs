//! Stepping aside for the caller we just answered.
//!
//! On a CPU shared by the background thread and a caller waiting for its answer,
//! waking the caller only makes it runnable; the next thing it usually does is
//! queue another request. Going to sleep in the reactor meanwhile costs an
//! `epoll_wait` round trip, and the caller's request then has to wake this thread
//! through an eventfd. Yielding once instead lets the caller run at once: its
//! request lands as a flag while this thread is still inside its poll, and is
//! written in the same pass. Where the caller runs on another CPU, the yield
//! returns at once and nothing changes.

use std::cell::Cell;

thread_local! {
    static CALLER_WOKEN: Cell<bool> = const { Cell::new(false) };
}

/// Records that an answer was handed to a waiting caller on this thread.
pub(crate) fn note_caller_woken() {
    CALLER_WOKEN.with(|woken| woken.set(true));
}

/// Whether a caller was woken on this thread since the last call.
pub(crate) fn take_caller_woken() -> bool {
    CALLER_WOKEN.with(|woken| woken.replace(false))
}
