//! The peer's command-line flags (see `server.rs`'s head for what each does).

use std::{env, process};

pub struct Flags {
    pub ignore_eof: bool,
    pub ask_on_eof: bool,
    pub ignore_term: bool,
    pub banner: bool,
    pub no_read: bool,
    pub grandchild: bool,
    pub detached_grandchild: bool,
    pub watchdog: u64,
    pub paged: bool,
    pub schemas: bool,
    pub initialize: Option<String>,
    pub discover: Option<String>,
    /// Exit (code 7) on this request instead of answering it.
    pub crash_after: Option<u64>,
    /// Exit (code 9) at start if this file exists; create it otherwise.
    pub crash_on_restart: Option<String>,
    /// Append a line to this file at start (tests count the starts).
    pub log_start: Option<String>,
    /// Reads nothing until this file exists.
    pub wait_for: Option<String>,
    /// Wait this many milliseconds before reading (a slow start).
    pub start_delay: u64,
    /// Lines of noise written at start.
    pub noise: u64,
    /// Append each line read to this file (for a test that cannot ask).
    pub log_lines: Option<String>,
    pub scenario: Option<String>,
    pub canary: Option<String>,
    pub catalog: Option<String>,
    pub tools_file: Option<String>,
    pub tasks: bool,
    /// Offer the tool `escape` (Linux): `test/escape` as a tool, for the command line's tests.
    pub escape: bool,
    /// Say on stderr, first of all, whether this process is in a Job Object
    /// (Windows): a host must have put it there before it ran.
    pub job_at_start: bool,
}

pub fn flags() -> Flags {
    let mut f = Flags {
        ignore_eof: false,
        ask_on_eof: false,
        ignore_term: false,
        banner: false,
        no_read: false,
        grandchild: false,
        detached_grandchild: false,
        watchdog: 60,
        paged: false,
        schemas: false,
        initialize: None,
        discover: None,
        crash_after: None,
        crash_on_restart: None,
        log_start: None,
        wait_for: None,
        start_delay: 0,
        noise: 0,
        log_lines: None,
        scenario: None,
        canary: None,
        catalog: None,
        tools_file: None,
        escape: false,
        job_at_start: false,
        tasks: false,
    };
    let mut args = env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--ignore-eof" => f.ignore_eof = true,
            "--ask-on-eof" => f.ask_on_eof = true,
            "--ignore-term" => f.ignore_term = true,
            "--banner" => f.banner = true,
            "--no-read" => f.no_read = true,
            "--grandchild" => f.grandchild = true,
            "--detached-grandchild" => f.detached_grandchild = true,
            "--paged" => f.paged = true,
            "--schemas" => f.schemas = true,
            "--initialize" => f.initialize = args.next(),
            "--discover" => f.discover = args.next(),
            "--crash-after" => f.crash_after = args.next().and_then(|s| s.parse().ok()),
            "--crash-on-restart" => f.crash_on_restart = args.next(),
            "--log-start" => f.log_start = args.next(),
            "--wait-for" => f.wait_for = args.next(),
            "--tasks" => f.tasks = true,
            "--escape" => f.escape = true,
            "--job-at-start" => f.job_at_start = true,
            "--start-delay" => {
                f.start_delay = args.next().and_then(|s| s.parse().ok()).unwrap_or(0)
            }
            "--scenario" => f.scenario = args.next(),
            "--log-lines" => f.log_lines = args.next(),
            "--catalog" => f.catalog = args.next(),
            "--tools-file" => f.tools_file = args.next(),
            "--canary" => f.canary = args.next(),
            "--noise" => f.noise = args.next().and_then(|s| s.parse().ok()).unwrap_or(0),
            "--watchdog" => f.watchdog = args.next().and_then(|s| s.parse().ok()).unwrap_or(60),
            other => {
                eprintln!("stdio-mcp-peer: unknown flag {other}");
                process::exit(2);
            }
        }
    }
    f
}
