//! Connecting quickly: when to send the probe's second line.
//!
//! A server on the Python SDK before 1.9.4 loses its session on the
//! `server/discover` probe without a word; its process lives on until it
//! reads its next line, then exits. A second probe is that line: the client
//! learns of the death within the server's own start time instead of waiting
//! out `probe_timeout`, and starts it again for the handshake. The second
//! probe goes only to a server that has *read* the first and let it go
//! unanswered, so one still starting (`npx`, `uvx` fetching) sees one probe,
//! and one that answers sees no extra line.

use std::time::{Duration, Instant};

use async_io::Timer;

use crate::transport::Transport;

/// The probe is never followed by a second one sooner than this after it was sent.
const NUDGE_AFTER: Duration = Duration::from_secs(1);
/// How long a server that read the probe has to answer it (a live one
/// answers within milliseconds).
const READ_GRACE: Duration = Duration::from_millis(250);
/// How often the child's stdin is looked at.
const LOOK: Duration = Duration::from_millis(50);

/// Resolves once the probe sent at `sent` is due a second line: the server
/// read it `READ_GRACE` ago and `NUDGE_AFTER` has passed since it was sent.
/// Where the system does not tell whether the child read its input, at
/// `NUDGE_AFTER`.
pub(in crate::client) async fn unanswered_after_reading(transport: &Transport, sent: Instant) {
    let mut read_at = None;
    loop {
        Timer::after(LOOK).await;
        let now = Instant::now();
        match transport.unread_input() {
            None => {
                Timer::at(sent + NUDGE_AFTER).await;
                return;
            }
            Some(0) => {
                let read_at = *read_at.get_or_insert(now);
                if now >= sent + NUDGE_AFTER && now >= read_at + READ_GRACE {
                    return;
                }
            }
            Some(_) => {}
        }
    }
}
