//! Taking a lock whose last holder panicked: the command line's locks guard
//! values set in one step (a progress bar, the groups opened, the daemon's
//! table of commands), so the guard is taken all the same.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`, poisoned or not.
pub(crate) fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
