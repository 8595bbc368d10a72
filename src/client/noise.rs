//! What a server writes on stdout that is not JSON-RPC while it connects
//! (banners, logs, garbage): counted, and the first line kept, so that a
//! connect that times out can say what the server wrote instead.

use std::sync::{Arc, Mutex, PoisonError};

use crate::message::{DiscardedLine, UNKNOWN_ID};
use crate::route::DiscardHandler;

/// The longest excerpt of a line quoted in an error.
const EXCERPT: usize = 200;

/// Shared between the connect and the handler on the transport.
#[derive(Debug, Default, Clone)]
pub(crate) struct Noise(Arc<Mutex<Seen>>);

#[derive(Debug, Default)]
struct Seen {
    lines: u64,
    first: Option<String>,
}

impl Noise {
    /// A handler that counts such lines, then passes every discarded line on
    /// to the user's handler, if any.
    pub(crate) fn handler(&self, mut user: Option<DiscardHandler>) -> DiscardHandler {
        let seen = Arc::clone(&self.0);
        Box::new(move |line: &DiscardedLine| {
            // An answer that came too late is JSON-RPC, not noise.
            if line.reason != UNKNOWN_ID {
                let mut seen = seen.lock().unwrap_or_else(PoisonError::into_inner);
                seen.lines += 1;
                if seen.first.is_none() {
                    seen.first = Some(line.line.chars().take(EXCERPT).collect());
                }
            }
            if let Some(user) = &mut user {
                user(line);
            }
        })
    }

    /// How many lines so far, and the first.
    pub(crate) fn seen(&self) -> (u64, Option<String>) {
        let seen = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        (seen.lines, seen.first.clone())
    }
}
