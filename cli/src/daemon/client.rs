//! The command's side of the daemon: `start`, `status`, `stop`, and a
//! command sent to a running daemon.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{json, Value};

use super::endpoint::{self, Connection};
use super::protocol::{self, Outcome, Reply, Request, Run};
use super::{address, existing_address, note, VERSION};
use crate::failure::Failure;
use crate::output::{self, outln};
use crate::session::print_json;
use crate::Cli;

/// How long a daemon has to answer before a command runs here.
const ANSWER_WITHIN: Duration = Duration::from_secs(1);
/// How long `start` waits for a new daemon to answer, and `stop` for one to
/// have closed its servers and ended.
const START_WITHIN: Duration = Duration::from_secs(10);
const STOP_WITHIN: Duration = Duration::from_secs(15);
/// After Ctrl-C (or a closed stdout), how long the daemon has to cancel the
/// call and say how it ended.
const CANCEL_WITHIN: Duration = Duration::from_secs(10);

/// What a command waits for: the daemon's next line, or an interruption.
enum Event {
    /// A line, or `None` when the connection ended.
    Line(Option<String>),
    Interrupted,
}

/// A daemon that answered: the line-by-line conversation with it.
struct Daemon {
    writer: Connection,
    /// The daemon's lines (read on a thread of their own) and interruptions.
    events: mpsc::Receiver<Event>,
    sender: mpsc::Sender<Event>,
    pid: u32,
    version: String,
}

/// What is at a daemon's address.
enum Found {
    Running(Daemon),
    /// No daemon: nobody listens (a socket left behind is removed).
    None,
    /// Something accepts but does not answer in time: the process that
    /// listens, where the OS tells (Linux).
    Silent(Option<i32>),
}

impl Daemon {
    fn find(address: &Path) -> Found {
        let connection = match endpoint::connect(address) {
            Ok(connection) => connection,
            Err(error) => {
                if endpoint::left_behind(address)
                    && error.kind() == std::io::ErrorKind::ConnectionRefused
                {
                    // A daemon that ended without removing its socket.
                    let _ = std::fs::remove_file(address);
                }
                return Found::None;
            }
        };
        let (sender, events) = mpsc::channel();
        let Ok(reading) = connection.try_clone() else {
            return Found::None;
        };
        let lines = sender.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(reading).lines() {
                if lines.send(Event::Line(line.ok())).is_err() {
                    return;
                }
            }
            let _ = lines.send(Event::Line(None));
        });
        let mut daemon = Daemon {
            writer: connection,
            events,
            sender,
            pid: 0,
            version: String::new(),
        };
        let hello = Request::Hello {
            version: VERSION.to_owned(),
        };
        match daemon.ask(&hello, Some(ANSWER_WITHIN)) {
            Ok(Reply::Hello { version, pid }) => {
                daemon.version = version;
                daemon.pid = pid;
                Found::Running(daemon)
            }
            _ => Found::Silent(listener_pid(&daemon.writer)),
        }
    }

    /// The daemon's next message, within `within` (`None`: as long as it takes).
    fn next(&self, within: Option<Duration>) -> Result<Reply, Failure> {
        let event = match within {
            Some(within) => self.events.recv_timeout(within).ok(),
            None => self.events.recv().ok(),
        };
        let line = match event {
            Some(Event::Line(Some(line))) => line,
            Some(Event::Line(None)) => return Err(self.lost("ended the connection")),
            Some(Event::Interrupted) => return Err(self.lost("was interrupted")),
            None => return Err(self.lost("did not answer in time")),
        };
        self.read(&line)
    }

    fn read(&self, line: &str) -> Result<Reply, Failure> {
        protocol::parse(line).map_err(|e| self.lost(&format!("answered what it should not ({e})")))
    }

    /// Sends `request`, and returns the answer within `within`.
    fn ask(&mut self, request: &Request, within: Option<Duration>) -> Result<Reply, Failure> {
        self.send(request)?;
        self.next(within)
    }

    fn send(&mut self, request: &Request) -> Result<(), Failure> {
        protocol::send(&mut self.writer, request).map_err(|e| self.lost(&e.to_string()))
    }

    fn lost(&self, what: &str) -> Failure {
        Failure::config(format!("the daemon (pid {}) {what}", self.pid))
    }
}

/// `daemon start`: a daemon for this folder and its config files, unless one runs.
pub(super) fn start(cli: &Cli, idle: u64) -> Result<(), Failure> {
    let path = address(&cli.config)?;
    match Daemon::find(&path) {
        Found::Running(daemon) if daemon.version == VERSION => {
            say(
                cli,
                &json!({ "daemon": "running", "pid": daemon.pid, "socket": path }),
                || {
                    format!(
                        "a daemon runs here already (pid {}): {}",
                        daemon.pid,
                        path.display()
                    )
                },
            );
            return Ok(());
        }
        Found::Running(old) => {
            // Of another version: replaced.
            stop_daemon(old, &path)?;
        }
        Found::Silent(listener) => {
            // Hung: ended with its servers, its socket taken over.
            end_silent(listener, &path);
        }
        Found::None => {}
    }
    let log = super::daemon_dir()?.join(format!(
        "{}.log",
        path.file_name().unwrap_or_default().to_string_lossy()
    ));
    let stderr = std::fs::File::create(&log).map_err(|e| {
        Failure::config(format!(
            "cannot write the daemon's log {}: {e}",
            log.display()
        ))
    })?;
    let exe = std::env::current_exe().map_err(|e| {
        Failure::config(format!("cannot find this program to start the daemon: {e}"))
    })?;
    let mut command = Command::new(exe);
    command.args(["daemon", "serve", "--idle", &idle.to_string()]);
    for file in &cli.config {
        command.arg("--config").arg(file);
    }
    for root in &cli.roots {
        command.arg("--root").arg(root);
    }
    if cli.no_input {
        command.arg("--no-input");
    }
    // A process group of its own: the terminal's Ctrl-C is not for it.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    #[cfg(windows)]
    {
        /// No console window, and a process group of its own.
        const CREATE_NO_WINDOW: u32 = 0x0800_0000;
        const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
        std::os::windows::process::CommandExt::creation_flags(
            &mut command,
            CREATE_NO_WINDOW | CREATE_NEW_PROCESS_GROUP,
        );
    }
    endpoint::keep_std_handles_from_children();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .map_err(|e| Failure::config(format!("cannot start the daemon: {e}")))?;
    let started = Instant::now();
    loop {
        if let Found::Running(daemon) = Daemon::find(&path) {
            say(
                cli,
                &json!({ "daemon": "started", "pid": daemon.pid, "socket": path }),
                || format!("daemon started (pid {}): {}", daemon.pid, path.display()),
            );
            return Ok(());
        }
        if let Ok(Some(status)) = child.try_wait() {
            let tail = std::fs::read_to_string(&log).unwrap_or_default();
            return Err(Failure::config(format!(
                "the daemon ended at its start ({status}): {}",
                tail.trim()
            )));
        }
        if started.elapsed() > START_WITHIN {
            let _ = child.kill();
            return Err(Failure::config(format!(
                "the daemon did not answer within {}s of its start (its log: {})",
                START_WITHIN.as_secs(),
                log.display()
            )));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `daemon status`: the daemon and its servers.
pub(super) fn status(cli: &Cli) -> Result<(), Failure> {
    let path = address(&cli.config)?;
    let mut daemon = match Daemon::find(&path) {
        Found::Running(daemon) => daemon,
        Found::None => {
            say(cli, &json!({ "daemon": null }), || {
                "no daemon runs here".to_owned()
            });
            return Ok(());
        }
        Found::Silent(_) => return Err(silent(&path)),
    };
    let status = match daemon.ask(&Request::Status, Some(START_WITHIN))? {
        Reply::Status(status) => status,
        other => return Err(daemon.lost(&format!("answered {other:?} when asked its status"))),
    };
    if cli.json {
        print_json(&to_json(&status));
        return Ok(());
    }
    outln!(
        "daemon pid {}, up {}, version {}: {}",
        status.pid,
        duration(Some(status.uptime_s)),
        status.version,
        path.display()
    );
    outln!(
        "{:<20} {:<10} {:<7} {:>8}  UP",
        "NAME",
        "STATE",
        "ERA",
        "PID"
    );
    for server in &status.servers {
        outln!(
            "{:<20} {:<10} {:<7} {:>8}  {}",
            server.name,
            server.state,
            server.era.as_deref().unwrap_or("-"),
            server.pid.map_or_else(|| "-".to_owned(), |p| p.to_string()),
            duration(server.uptime_s)
        );
    }
    Ok(())
}

/// `daemon stop`: the daemon ends, and every server it started.
pub(super) fn stop(cli: &Cli) -> Result<(), Failure> {
    let path = address(&cli.config)?;
    match Daemon::find(&path) {
        Found::Running(daemon) => {
            let pid = daemon.pid;
            stop_daemon(daemon, &path)?;
            say(cli, &json!({ "daemon": "stopped", "pid": pid }), || {
                format!("daemon stopped (pid {pid})")
            });
            Ok(())
        }
        Found::None => {
            say(cli, &json!({ "daemon": null }), || {
                "no daemon runs here".to_owned()
            });
            Ok(())
        }
        Found::Silent(_) => Err(silent(&path)),
    }
}

/// Asks `daemon` to stop, and waits until it has ended.
fn stop_daemon(mut daemon: Daemon, path: &Path) -> Result<(), Failure> {
    let pid = daemon.pid;
    daemon.ask(&Request::Stop, Some(START_WITHIN))?;
    let started = Instant::now();
    while alive(pid, path) {
        if started.elapsed() > STOP_WITHIN {
            return Err(Failure::config(format!(
                "the daemon (pid {pid}) has not ended {}s after it was asked to stop",
                STOP_WITHIN.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}

/// Whether the daemon `pid` at `address` still runs (or its socket is still there).
fn alive(pid: u32, address: &Path) -> bool {
    #[cfg(unix)]
    return endpoint::left_behind(address)
        || (i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
            .is_some_and(|pid| rustix::process::test_kill_process(pid).is_ok())
            && !zombie(pid));
    // A pipe is gone with the last process that holds it.
    #[cfg(windows)]
    return {
        let _ = pid;
        endpoint::connect(address).is_ok()
    };
}

#[cfg(unix)]
/// Whether `pid` has ended and only waits to be reaped (Linux, from
/// `/proc`): a daemon whose parent left is reaped by init, which in a
/// container may be late or never.
fn zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat[stat.rfind(')')? + 1..].trim_start().chars().next()?;
            Some(state == 'Z' || state == 'X')
        })
        .unwrap_or(false)
}

/// The pid of the process listening at the other end of `connection`
/// (Linux: `SO_PEERCRED`); `None` where the OS does not say.
fn listener_pid(connection: &super::endpoint::Connection) -> Option<i32> {
    #[cfg(target_os = "linux")]
    return rustix::net::sockopt::socket_peercred(connection)
        .ok()
        .map(|peer| peer.pid.as_raw_nonzero().get());
    #[cfg(not(target_os = "linux"))]
    {
        let _ = connection;
        None
    }
}

/// Ends a daemon that does not answer, when its pid is known: SIGKILL
/// (stopped or hung, it ends), and its servers with it (the library's
/// watchdog ends what a killed host started); its socket is removed.
/// Whether it was ended.
fn end_silent(listener: Option<i32>, path: &Path) -> bool {
    let mine = |pid: &i32| *pid > 1 && u32::try_from(*pid).ok() != Some(std::process::id());
    #[cfg(unix)]
    let ended = listener
        .filter(mine)
        .and_then(rustix::process::Pid::from_raw)
        .is_some_and(|pid| {
            rustix::process::kill_process(pid, rustix::process::Signal::KILL).is_ok()
        });
    // Windows: the pipe tells no pid (listener_pid gives none).
    #[cfg(windows)]
    let ended = listener.filter(mine).is_some();
    if endpoint::left_behind(path) {
        let _ = std::fs::remove_file(path);
    }
    ended
}

fn silent(path: &Path) -> Failure {
    Failure::config(format!(
        "the daemon at {} does not answer within {}s",
        path.display(),
        ANSWER_WITHIN.as_secs()
    ))
}

/// Runs the command through the daemon of its folder and files, if one runs
/// (of this version, answering): its exit status.
pub(super) fn forward(cli: &Cli) -> Option<u8> {
    let path = existing_address(&cli.config)?;
    let mut daemon = match Daemon::find(&path) {
        Found::Running(daemon) if daemon.version == VERSION => daemon,
        Found::Running(daemon) => {
            note(format_args!(
                "the daemon (pid {}) runs stdio-mcp {}, this is {VERSION} (`stdio-mcp daemon restart` replaces it)",
                daemon.pid, daemon.version
            ));
            return None;
        }
        Found::Silent(listener) => {
            let ended = if end_silent(listener, &path) {
                ", so it was ended with its servers"
            } else {
                ""
            };
            note(format_args!(
                "the daemon at {} does not answer{ended}",
                path.display()
            ));
            return None;
        }
        Found::None => return None,
    };
    // What it would start, in this environment: the daemon runs it only if
    // it would start the same (else it says so, and the command runs here).
    let launch = crate::sources::load(&cli.config)
        .map(|servers| super::launch_keys(&servers))
        .unwrap_or_default();
    let asks = crate::terminal::interactive(cli.no_input);
    let run = Run {
        argv: travelling(cli),
        version: VERSION.to_owned(),
        launch,
        roots: super::roots_of(cli),
        asks,
    };
    daemon.send(&Request::Run(run)).ok()?;
    match daemon.next(Some(START_WITHIN)) {
        Ok(Reply::Direct { .. }) => return None,
        Ok(Reply::Running) => {}
        // A refusal: the command's whole outcome.
        Ok(Reply::Done(outcome)) => return Some(finish_with(cli, Ok(outcome))),
        Ok(other) => {
            let lost = daemon.lost(&format!("answered {other:?} to the command"));
            return Some(crate::failure::report(Err(lost), cli.json));
        }
        Err(_) => {
            return Some(crate::failure::report(
                Err(daemon.lost("did not answer the command")),
                cli.json,
            ))
        }
    }
    // Ctrl-C or a closed stdout: the daemon is told, cancels the call, and
    // says how the command ended.
    let interrupts = daemon.sender.clone();
    let _ = ctrlc::set_handler(move || {
        let _ = interrupts.send(Event::Interrupted);
    });
    let reader_left = daemon.sender.clone();
    output::watch_reader(move || {
        let _ = reader_left.send(Event::Interrupted);
    });
    let mut deadline: Option<Instant> = None;
    let outcome = loop {
        let event = match deadline {
            Some(at) => daemon
                .events
                .recv_timeout(at.saturating_duration_since(Instant::now()))
                .ok(),
            None => daemon.events.recv().ok(),
        };
        match event {
            Some(Event::Interrupted) => {
                if deadline.is_none() {
                    let _ = daemon.send(&Request::Interrupt);
                    deadline = Some(Instant::now() + CANCEL_WITHIN);
                }
            }
            Some(Event::Line(Some(line))) => match daemon.read(&line) {
                Ok(Reply::Done(outcome)) => break Ok(outcome),
                Ok(Reply::Ask {
                    message,
                    requested_schema,
                }) => {
                    // A server's question, asked here as a direct run would.
                    let answer = crate::terminal::answer(&message, &requested_schema);
                    let _ = daemon.send(&Request::Answer(answer));
                }
                Ok(other) => break Err(daemon.lost(&format!("answered {other:?} to the command"))),
                Err(failure) => break Err(failure),
            },
            Some(Event::Line(None)) => break Err(daemon.lost("ended without an answer")),
            None => break Err(daemon.lost("did not say how the interrupted command ended")),
        }
    };
    Some(finish_with(cli, outcome))
}

/// Prints what the daemon's run of the command printed, and returns its status.
fn finish_with(cli: &Cli, outcome: Result<Outcome, Failure>) -> u8 {
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(failure) => return crate::failure::report(Err(failure), cli.json),
    };
    output::raw(&outcome.stdout);
    eprint!("{}", outcome.stderr);
    if output::closed() {
        return output::CLOSED_STDOUT;
    }
    outcome.code
}

/// The command's words as the daemon runs them: what only this process
/// can read made part of them — standard input for `--args -` (read here,
/// once), a relative `--args @FILE` made absolute.
fn travelling(cli: &Cli) -> Vec<String> {
    let whole = match &cli.command {
        crate::Command::Call { whole, .. } => whole.clone(),
        _ => None,
    };
    let mut argv: Vec<String> = std::env::args().skip(1).collect();
    let Some(whole) = whole else { return argv };
    // `-` was read into `whole` already (main.rs); `@FILE` is read there.
    let made = |given: &str| match given {
        "-" => whole.clone(),
        file if file.starts_with('@') => std::path::absolute(&file[1..])
            .map_or_else(|_| file.to_owned(), |f| format!("@{}", f.display())),
        other => other.to_owned(),
    };
    let mut i = 0;
    while i < argv.len() && argv[i] != "--" {
        if argv[i] == "--args" && i + 1 < argv.len() {
            argv[i + 1] = made(&argv[i + 1]);
            i += 1;
        } else if let Some(given) = argv[i].strip_prefix("--args=") {
            argv[i] = format!("--args={}", made(given));
        }
        i += 1;
    }
    argv
}

/// A message's JSON document.
fn to_json(message: &impl Serialize) -> Value {
    serde_json::to_value(message).unwrap_or(Value::Null)
}

/// Prints `value` with `--json`, else the line `text` gives.
fn say(cli: &Cli, value: &Value, text: impl FnOnce() -> String) {
    if cli.json {
        print_json(value);
    } else {
        outln!("{}", text());
    }
}

/// `1h2m`, `3m4s`, `5s` for a number of seconds.
fn duration(seconds: Option<u64>) -> String {
    let Some(s) = seconds else {
        return "-".to_owned();
    };
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m{s}s"),
        (h, m, _) => format!("{h}h{m}m"),
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[test]
    fn an_ended_process_not_yet_reaped_is_not_alive() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let started = std::time::Instant::now();
        // Not reaped yet: it stays a zombie until the wait below.
        while !super::zombie(pid) {
            assert!(started.elapsed().as_secs() < 30, "true never ended");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(!super::zombie(std::process::id()));
        child.wait().unwrap();
    }
}
