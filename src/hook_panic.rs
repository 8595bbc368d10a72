//! A user's async hook (a handler of what the server asks, the approval
//! hook) run so that a panic — in the call that makes its future, or while
//! the future runs — comes back as a value the caller answers with, instead
//! of unwinding through the crate's own code.

use std::any::Any;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};

use futures::FutureExt;

/// What a hook panicked with.
pub(crate) type Panic = Box<dyn Any + Send>;

/// Calls `hook` and awaits its future; `Err` with the panic if either panicked.
pub(crate) async fn run_hook<F, Fut>(hook: F) -> Result<Fut::Output, Panic>
where
    F: FnOnce() -> Fut,
    Fut: Future,
{
    match catch_unwind(AssertUnwindSafe(hook)) {
        Ok(future) => AssertUnwindSafe(future).catch_unwind().await,
        Err(panic) => Err(panic),
    }
}

/// The panic's message, when it is text.
pub(crate) fn panic_text(panic: &(dyn Any + Send)) -> Option<&str> {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
}
