//! What the command prints on stdout, through [`outln!`]: a stdout that a
//! reader closed (`| head`) is remembered and the rest dropped, never a panic;
//! the command then ends as it would have (its servers closed as usual) and
//! exits with the status a shell expects of a Unix tool whose reader left.

use std::fmt::{self, Write as _};
use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// The status of a process ended by SIGPIPE, as a shell reports it (128 + 13).
pub const CLOSED_STDOUT: u8 = 141;

static CLOSED: AtomicBool = AtomicBool::new(false);

/// Prints a line on stdout, unless its reader has left.
macro_rules! outln {
    ($($arg:tt)*) => { $crate::output::line(format_args!($($arg)*)) };
}
pub(crate) use outln;

/// Prints a line on stderr.
macro_rules! errln {
    ($($arg:tt)*) => { $crate::output::err_line(format_args!($($arg)*)) };
}
pub(crate) use errln;

thread_local! {
    /// The config warnings of the command running on this thread, for its
    /// `--json` document (`warnings` beside the result).
    static WARNINGS: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
    /// A command run by the daemon for a client: what it prints, kept for
    /// the client (stdout, stderr) instead of the daemon's own streams.
    static CAPTURED: std::cell::RefCell<Option<(String, String)>> = const { std::cell::RefCell::new(None) };
}

/// Runs `work` with what this thread prints kept, and returns it with
/// `work`'s outcome: (stdout, stderr).
pub fn capture<T>(work: impl FnOnce() -> T) -> (T, String, String) {
    CAPTURED.with(|c| *c.borrow_mut() = Some((String::new(), String::new())));
    let outcome = work();
    let (out, err) = CAPTURED.with(|c| c.borrow_mut().take()).unwrap_or_default();
    (outcome, out, err)
}

/// Keeps `warnings` as the running command's, for [`with_warnings`].
pub fn set_warnings(warnings: Vec<String>) {
    WARNINGS.with(|w| *w.borrow_mut() = warnings);
}

/// Says `warnings` found while the command ran (a tool filter that
/// matches nothing) on stderr, and keeps them with the config's for `--json`.
pub fn warn(warnings: &[impl fmt::Display]) {
    for warning in warnings {
        err_line(format_args!("stdio-mcp: warning: {warning}"));
    }
    WARNINGS.with(|w| {
        w.borrow_mut()
            .extend(warnings.iter().map(ToString::to_string))
    });
}

/// `document` with the running command's config warnings beside what it
/// holds (`"warnings": [..]`), when it has any and is an object.
pub fn with_warnings(document: &serde_json::Value) -> serde_json::Value {
    let mut document = document.clone();
    WARNINGS.with(|w| {
        let warnings = w.borrow();
        if let (false, Some(object)) = (warnings.is_empty(), document.as_object_mut()) {
            object.insert("warnings".to_owned(), serde_json::json!(*warnings));
        }
    });
    document
}

/// Appends to this thread's capture, if it has one: whether it did.
fn captured(text: fmt::Arguments<'_>, stderr: bool) -> bool {
    CAPTURED.with(|c| match c.borrow_mut().as_mut() {
        Some((out, err)) => {
            let into = if stderr { err } else { out };
            let _ = writeln!(into, "{text}");
            true
        }
        None => false,
    })
}

/// Writes `text` and a newline to stderr (or this thread's capture).
pub fn err_line(text: fmt::Arguments<'_>) {
    if !captured(text, true) {
        eprintln!("{text}");
    }
}

/// Writes `text` and a newline to stdout (or this thread's capture), unless
/// its reader has left.
pub fn line(text: fmt::Arguments<'_>) {
    if captured(text, false) || CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    let written = writeln!(out, "{text}").and_then(|()| out.flush());
    if let Err(error) = written {
        if error.kind() == ErrorKind::BrokenPipe {
            CLOSED.store(true, Ordering::Relaxed);
        }
    }
}

/// Calls `on_close` once stdout's reader leaves, seen by poll(2) (a pipe's
/// write end reports an error then), so a call still running is cancelled
/// rather than finished for nobody. Elsewhere (Windows) a closed stdout is
/// seen when written to.
pub fn watch_reader(on_close: impl FnOnce() + Send + 'static) {
    #[cfg(unix)]
    {
        use rustix::event::{poll, PollFd, PollFlags};
        let watch = move || {
            let stdout = std::io::stdout();
            // No event asked for: only an error or a hang-up wakes it.
            let mut fds = [PollFd::new(&stdout, PollFlags::empty())];
            loop {
                match poll(&mut fds, None) {
                    Ok(_) if fds[0].revents().intersects(PollFlags::ERR | PollFlags::HUP) => {
                        CLOSED.store(true, Ordering::Relaxed);
                        on_close();
                        return;
                    }
                    Ok(_) | Err(rustix::io::Errno::INTR) => {}
                    Err(_) => return,
                }
            }
        };
        let _ = std::thread::Builder::new()
            .name("stdout-reader".into())
            .spawn(watch);
    }
    #[cfg(not(unix))]
    drop(on_close);
}

/// Writes `text` as it is to stdout, unless its reader has left.
pub fn raw(text: &str) {
    if text.is_empty() || CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(error) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if error.kind() == ErrorKind::BrokenPipe {
            CLOSED.store(true, Ordering::Relaxed);
        }
    }
}

/// Whether stdout's reader left before everything was written.
pub fn closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}
