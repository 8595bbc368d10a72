//! The command's side of the daemon: `start`, `status`, `stop`, and a
//! command sent to a running daemon.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{existing_socket, note, socket_path, VERSION};
use crate::commands::print_json;
use crate::failure::Failure;
use crate::output::{self, outln};
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

/// A daemon that answered: the line-by-line conversation with it.
struct Daemon {
    stream: UnixStream,
    reader: BufReader<UnixStream>,
    pid: u64,
    version: String,
}

/// What is at a socket path.
enum Found {
    Running(Daemon),
    /// No daemon: no socket, or a stale one (now removed).
    None,
    /// Something accepts but does not answer in time.
    Silent,
}

impl Daemon {
    fn find(path: &Path) -> Found {
        let stream = match UnixStream::connect(path) {
            Ok(stream) => stream,
            Err(error) => {
                if path.exists() && error.kind() == std::io::ErrorKind::ConnectionRefused {
                    // A daemon that ended without removing its socket.
                    let _ = std::fs::remove_file(path);
                }
                return Found::None;
            }
        };
        let hello = (|| {
            stream.set_read_timeout(Some(ANSWER_WITHIN)).ok()?;
            let mut reader = BufReader::new(stream.try_clone().ok()?);
            let mut writer = stream.try_clone().ok()?;
            writeln!(writer, "{}", json!({ "hello": VERSION })).ok()?;
            let mut line = String::new();
            reader.read_line(&mut line).ok()?;
            let answer: Value = serde_json::from_str(&line).ok()?;
            Some(Daemon {
                version: answer["hello"].as_str()?.to_owned(),
                pid: answer["pid"].as_u64()?,
                stream,
                reader,
            })
        })();
        hello.map_or(Found::Silent, Found::Running)
    }

    /// Sends `request`, and returns the answer; waits `within` at most (`None`: as long as it takes).
    fn ask(&mut self, request: &Value, within: Option<Duration>) -> Result<Value, Failure> {
        let lost = |e: std::io::Error| {
            Failure::config(format!(
                "the daemon (pid {}) stopped answering: {e}",
                self.pid
            ))
        };
        self.stream.set_read_timeout(within).map_err(lost)?;
        writeln!(self.stream, "{request}").map_err(lost)?;
        let mut line = String::new();
        self.reader.read_line(&mut line).map_err(lost)?;
        serde_json::from_str(&line).map_err(|e| {
            Failure::config(format!(
                "the daemon (pid {}) answered what is not JSON: {e}",
                self.pid
            ))
        })
    }
}

/// `daemon start`: a daemon for this folder and its config files, unless one runs.
pub(super) fn start(cli: &Cli, idle: u64) -> Result<(), Failure> {
    let path = socket_path(&cli.config)?;
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
        Found::Silent => {
            // Hung: its socket is taken over; the process is left to its end.
            let _ = std::fs::remove_file(&path);
        }
        Found::None => {}
    }
    let log = path.with_extension("log");
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
    {
        use std::os::unix::process::CommandExt;
        // A process group of its own: the terminal's Ctrl-C is not for it.
        command.process_group(0);
    }
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
    let path = socket_path(&cli.config)?;
    let mut daemon = match Daemon::find(&path) {
        Found::Running(daemon) => daemon,
        Found::None => {
            say(cli, &json!({ "daemon": null }), || {
                "no daemon runs here".to_owned()
            });
            return Ok(());
        }
        Found::Silent => return Err(silent(&path)),
    };
    let answer = daemon.ask(&json!({ "status": true }), Some(START_WITHIN))?;
    let status = &answer["status"];
    if cli.json {
        print_json(status);
        return Ok(());
    }
    outln!(
        "daemon pid {}, up {}, version {}: {}",
        status["pid"],
        duration(&status["uptime_s"]),
        status["version"].as_str().unwrap_or_default(),
        path.display()
    );
    outln!(
        "{:<20} {:<10} {:<7} {:>8}  UP",
        "NAME",
        "STATE",
        "ERA",
        "PID"
    );
    for server in status["servers"].as_array().into_iter().flatten() {
        outln!(
            "{:<20} {:<10} {:<7} {:>8}  {}",
            server["name"].as_str().unwrap_or_default(),
            server["state"].as_str().unwrap_or_default(),
            server["era"].as_str().unwrap_or("-"),
            server["pid"]
                .as_u64()
                .map_or_else(|| "-".to_owned(), |p| p.to_string()),
            duration(&server["uptime_s"])
        );
    }
    Ok(())
}

/// `daemon stop`: the daemon ends, and every server it started.
pub(super) fn stop(cli: &Cli) -> Result<(), Failure> {
    let path = socket_path(&cli.config)?;
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
        Found::Silent => Err(silent(&path)),
    }
}

/// Asks `daemon` to stop, and waits until it has ended.
fn stop_daemon(mut daemon: Daemon, path: &Path) -> Result<(), Failure> {
    let pid = daemon.pid;
    daemon.ask(&json!({ "stop": true }), Some(START_WITHIN))?;
    let started = Instant::now();
    while alive(pid) || path.exists() {
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

fn alive(pid: u64) -> bool {
    i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .is_some_and(|pid| rustix::process::test_kill_process(pid).is_ok())
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
    let path = existing_socket(&cli.config)?;
    let mut daemon = match Daemon::find(&path) {
        Found::Running(daemon) if daemon.version == VERSION => daemon,
        Found::Running(daemon) => {
            note(format_args!(
                "the daemon (pid {}) runs stdio-mcp {}, this is {VERSION} (`stdio-mcp daemon restart` replaces it)",
                daemon.pid, daemon.version
            ));
            return None;
        }
        Found::Silent => {
            note(format_args!(
                "the daemon at {} does not answer",
                path.display()
            ));
            return None;
        }
        Found::None => return None,
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let request = json!({ "run": argv, "version": VERSION });
    writeln!(daemon.stream, "{request}").ok()?;
    daemon.stream.set_read_timeout(None).ok()?;
    // The answer comes on a thread of its own, so Ctrl-C or a closed stdout
    // can end the wait: the daemon then cancels the call and says so.
    let (events, event) = mpsc::channel::<Event>();
    let mut reader = daemon.reader;
    let answers = events.clone();
    std::thread::spawn(move || {
        let mut line = String::new();
        let answer = reader
            .read_line(&mut line)
            .ok()
            .and_then(|_| serde_json::from_str(&line).ok());
        let _ = answers.send(Event::Answer(answer));
    });
    let interrupts = events.clone();
    let _ = ctrlc::set_handler(move || {
        let _ = interrupts.send(Event::Interrupted);
    });
    output::watch_reader(move || {
        let _ = events.send(Event::Interrupted);
    });
    let mut deadline: Option<Instant> = None;
    let answer = loop {
        let next = match deadline {
            None => event.recv().ok(),
            Some(at) => event
                .recv_timeout(at.saturating_duration_since(Instant::now()))
                .ok(),
        };
        match next {
            Some(Event::Answer(answer)) => break answer,
            Some(Event::Interrupted) => {
                // The daemon sees its input end and cancels the call.
                let _ = daemon.stream.shutdown(std::net::Shutdown::Write);
                deadline.get_or_insert(Instant::now() + CANCEL_WITHIN);
            }
            None => break None,
        }
    };
    let Some(answer) = answer else {
        let failure = Failure::config(format!(
            "the daemon (pid {}) ended without an answer",
            daemon.pid
        ));
        return Some(crate::report(Err(failure), cli.json));
    };
    output::raw(answer["stdout"].as_str().unwrap_or_default());
    eprint!("{}", answer["stderr"].as_str().unwrap_or_default());
    if output::closed() {
        return Some(output::CLOSED_STDOUT);
    }
    Some(answer["code"].as_u64().map_or(1, |c| c.min(255) as u8))
}

enum Event {
    Answer(Option<Value>),
    Interrupted,
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
fn duration(seconds: &Value) -> String {
    let Some(s) = seconds.as_u64() else {
        return "-".to_owned();
    };
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m{s}s"),
        (h, m, _) => format!("{h}h{m}m"),
    }
}
