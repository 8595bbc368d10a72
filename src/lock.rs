//! Taking a lock whose last holder panicked: the crate's locks guard state
//! that each holder changes in single steps, so a panic elsewhere (a user's
//! hook) leaves it whole, and the guard is taken all the same rather than
//! spreading the panic to every later caller.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`, poisoned or not.
pub(crate) fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
