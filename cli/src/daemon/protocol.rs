//! What a command and its daemon say to each other.
//!
//! **Framing.** One JSON object per line (UTF-8, ending in `\n`), over the
//! daemon's Unix socket or named pipe (`endpoint.rs`).
//!
//! **A conversation.** The command connects and sends [`Request::Hello`];
//! the daemon answers [`Reply::Hello`]. A command that only looks whether a
//! daemon answers closes here. Otherwise it sends one request:
//!
//! - [`Request::Status`] → [`Reply::Status`];
//! - [`Request::Stop`] → [`Reply::Stopping`], then the daemon closes its
//!   servers and ends;
//! - [`Request::Run`] → [`Reply::Direct`] (the command runs where it was
//!   typed: something it carries would make the daemon's answer another),
//!   or [`Reply::Done`] at once (refused), or [`Reply::Running`] and then
//!   any number of [`Reply::Ask`] — each answered by [`Request::Answer`] —
//!   and [`Reply::Done`]. Meanwhile the command may send
//!   [`Request::Interrupt`] once (its Ctrl-C, or its stdout's reader gone);
//!   closing the connection interrupts too.
//!
//! **Versions.** A command talks only to a daemon of its own version (the
//! hellos carry both); with any other it runs here, and `daemon start`
//! replaces the daemon. A run carries the version again: a daemon refuses
//! a command of another version, naming both.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// From a command to the daemon.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Request {
    Hello {
        version: String,
    },
    Status,
    Stop,
    Run(Run),
    /// The command was interrupted: cancel what it runs.
    Interrupt,
    /// The answer to the last [`Reply::Ask`]: an elicitation result
    /// (`{"action": "accept", "content": …}`, or cancel).
    Answer(Value),
}

/// A command to run with the daemon's servers.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Run {
    /// Its words after the program's name, with what only the command's
    /// process can read made part of them (`--args -`, relative paths).
    pub(crate) argv: Vec<String>,
    pub(crate) version: String,
    /// Each server's launch key in the command's environment
    /// (`super::launch_keys`).
    pub(crate) launch: BTreeMap<String, String>,
    /// The roots it gives its servers.
    pub(crate) roots: Vec<PathBuf>,
    /// Whether a person at its terminal answers a server's questions.
    pub(crate) asks: bool,
}

/// From the daemon to a command.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Reply {
    Hello {
        version: String,
        pid: u32,
    },
    Status(Status),
    Stopping,
    /// Run it where it was typed, for this reason.
    Direct {
        why: String,
    },
    Running,
    /// A server's question (an elicitation form) for the person at the
    /// command's terminal.
    Ask {
        message: String,
        requested_schema: Value,
    },
    Done(Outcome),
}

/// What a command run by the daemon printed, and its exit status.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Outcome {
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) code: u8,
}

impl Outcome {
    /// A command refused before it ran: `message` on its stderr, status 1.
    pub(crate) fn refused(message: &str) -> Self {
        Outcome {
            stdout: String::new(),
            stderr: format!("stdio-mcp: {message}\n"),
            code: 1,
        }
    }
}

/// The daemon and its servers (`daemon status`; its `--json` document).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Status {
    pub(crate) pid: u32,
    pub(crate) version: String,
    pub(crate) socket: PathBuf,
    pub(crate) uptime_s: u64,
    pub(crate) servers: Vec<ServerStatus>,
}

/// One server of [`Status`].
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct ServerStatus {
    pub(crate) name: String,
    /// As `stdio-mcp servers` names it: `ready`, `idle`, `failed`, …
    pub(crate) state: String,
    /// `modern` or `legacy`, once ready.
    pub(crate) era: Option<String>,
    pub(crate) pid: Option<u32>,
    /// Since when it is ready, in seconds.
    pub(crate) uptime_s: Option<u64>,
}

/// Writes `message` as one line.
pub(crate) fn send(to: &mut impl Write, message: &impl Serialize) -> io::Result<()> {
    let mut line = serde_json::to_vec(message)?;
    line.push(b'\n');
    to.write_all(&line)?;
    to.flush()
}

/// Reads one line as a message.
pub(crate) fn parse<T: DeserializeOwned>(line: &str) -> Result<T, serde_json::Error> {
    serde_json::from_str(line)
}
