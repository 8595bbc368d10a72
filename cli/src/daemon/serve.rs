//! The daemon itself (`stdio-mcp daemon serve`, started by `daemon start`):
//! the folder's configured servers as one warm group, a socket, and a thread
//! per command that runs it as the command line would, what it prints kept
//! for the command.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::{json, Value};
use stdio_mcp::config::Config;
use stdio_mcp::group::{Group, ServerState};

use super::endpoint::{self, Connection, Listener};
use super::{address, VERSION};
use crate::commands::{execute, group_builder};
use crate::failure::Failure;
use crate::output::{self, errln};
use crate::sources::{self, Servers};
use crate::terminal::Bar;
use crate::{trust, Cli};

/// What the daemon holds.
struct Host {
    /// The daemon's own command line (its `--config`, `--root`, `--no-input`).
    cli: Cli,
    group: Group,
    /// The entries the group hosts now: the trusted ones of the config files.
    hosted: Mutex<Config>,
    started: Instant,
    /// Since when each ready server is ready.
    ready: Arc<Mutex<HashMap<String, Instant>>>,
    socket: PathBuf,
}

/// Serves until asked to stop.
pub(crate) fn serve(cli: &Cli, idle: u64) -> Result<(), Failure> {
    let socket = address(&cli.config)?;
    // `start` found nothing answering there: whatever is left is stale.
    let listener = Listener::bind(&socket)
        .map_err(|e| Failure::config(format!("cannot listen on {}: {e}", socket.display())))?;
    let cli = cli.clone();
    let servers = sources::load(&cli.config)?;
    let hosted = trusted(&servers)?;
    let ready: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();
    let seen = Arc::clone(&ready);
    let group = futures::executor::block_on(
        group_builder(&cli, hosted.clone(), Bar::default())
            .lazy(true)
            .idle_timeout(Duration::from_secs(idle))
            .on_state_change(move |name, state| {
                let mut ready = seen.lock().unwrap_or_else(PoisonError::into_inner);
                match state {
                    ServerState::Ready(_) => {
                        ready.entry(name.to_owned()).or_insert_with(Instant::now);
                    }
                    _ => {
                        ready.remove(name);
                    }
                }
            })
            .connect(),
    );
    let host = Arc::new(Host {
        cli,
        group,
        hosted: Mutex::new(hosted),
        started: Instant::now(),
        ready,
        socket,
    });
    errln!(
        "stdio-mcp daemon {VERSION}: pid {}, listening",
        std::process::id()
    );
    // An accept that fails (no descriptor left: EMFILE) fails again at once:
    // waited out, longer each time, instead of spinning the CPU.
    let mut pause = Duration::from_millis(10);
    loop {
        let stream = match listener.accept() {
            Ok(stream) => {
                pause = Duration::from_millis(10);
                stream
            }
            Err(error) => {
                errln!(
                    "stdio-mcp daemon: accept: {error}; again in {}ms",
                    pause.as_millis()
                );
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_secs(1));
                continue;
            }
        };
        let host = Arc::clone(&host);
        std::thread::spawn(move || {
            if let Err(error) = host.answer(stream) {
                errln!("stdio-mcp daemon: a command's connection: {error}");
            }
        });
    }
}

/// The entries of `servers` the daemon may host: a project's untrusted ones left out.
fn trusted(servers: &Servers) -> Result<Config, Failure> {
    let mut config = servers.config.clone();
    let held = trust::held(servers, &config)?;
    config.retain(|name| !held.iter().any(|h| h.name == name));
    Ok(config)
}

impl Host {
    /// One connection: the greeting, then one request.
    fn answer(&self, stream: Connection) -> std::io::Result<()> {
        let mut reader = BufReader::new(stream.try_clone()?);
        let mut writer = stream.try_clone()?;
        let mut line = String::new();
        reader.read_line(&mut line)?;
        writeln!(
            writer,
            "{}",
            json!({ "hello": VERSION, "pid": std::process::id() })
        )?;
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            // Only looked whether a daemon answers.
            return Ok(());
        }
        let request: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        if request["stop"] == true {
            writeln!(writer, "{}", json!({ "stopping": true }))?;
            self.stop();
        }
        let answer = if request["status"] == true {
            json!({ "status": self.status() })
        } else if let Some(argv) = request["run"].as_array() {
            let argv: Vec<String> = argv
                .iter()
                .filter_map(|a| a.as_str().map(str::to_owned))
                .collect();
            // The config files are read anew for each command, as a direct run
            // would: a changed or newly trusted entry is what the group hosts.
            let loaded = sources::load(&self.cli.config);
            match request["version"].as_str() {
                Some(VERSION) => match self.differs(&request, loaded.as_ref().ok()) {
                    // The command runs where it is: never answered by a
                    // server of another definition, nor with other roots.
                    Some(why) => json!({ "direct": why }),
                    None => {
                        writeln!(writer, "{}", json!({ "running": true }))?;
                        self.run(argv, loaded, reader)
                    }
                },
                other => json!({ "stdout": "", "code": 1, "stderr": format!(
                    "stdio-mcp: refused: this daemon is stdio-mcp {VERSION}, the command {}\n",
                    other.unwrap_or("of no version")) }),
            }
        } else {
            json!({ "stdout": "", "code": 1, "stderr": "stdio-mcp: the daemon did not understand the request\n" })
        };
        writeln!(writer, "{answer}")
    }

    /// Why the command must run where it was typed rather than here: a
    /// server it may use is defined otherwise in its environment than in
    /// the daemon's, or its roots are not the daemon's.
    fn differs(&self, request: &Value, servers: Option<&Servers>) -> Option<String> {
        let roots: Vec<PathBuf> = request["roots"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r.as_str().map(PathBuf::from))
            .collect();
        if roots != super::roots_of(&self.cli) {
            return Some("its roots are not the daemon's".to_owned());
        }
        let here = super::launch_keys(servers?);
        let theirs = request["launch"].as_object()?;
        theirs
            .iter()
            .find(|(name, key)| here.get(*name).map(String::as_str) != key.as_str())
            .map(|(name, _)| format!("server {name:?} is defined otherwise in its environment"))
    }

    /// Runs a command as the command line would here, with the warm group:
    /// what it printed, and its exit status. The connection's end (the
    /// command's Ctrl-C or closed stdout) interrupts it.
    fn run(
        &self,
        argv: Vec<String>,
        loaded: Result<Servers, Failure>,
        mut connection: BufReader<Connection>,
    ) -> Value {
        let ((), stdout, stderr, code) = {
            let mut code = 0;
            let (outcome, stdout, stderr) = output::capture(|| {
                code = self.run_captured(argv, loaded, &mut connection);
            });
            (outcome, stdout, stderr, code)
        };
        json!({ "stdout": stdout, "stderr": stderr, "code": code })
    }

    fn run_captured(
        &self,
        argv: Vec<String>,
        loaded: Result<Servers, Failure>,
        connection: &mut BufReader<Connection>,
    ) -> u8 {
        let cli = match Cli::try_parse_from(std::iter::once("stdio-mcp".to_owned()).chain(argv)) {
            Ok(cli) => cli,
            Err(error) => return crate::refused(&error, false),
        };
        let json = cli.json;
        let servers = match loaded.and_then(|s| Ok((trusted(&s)?, s))) {
            Ok((hosted, servers)) => {
                let mut now = self.hosted.lock().unwrap_or_else(PoisonError::into_inner);
                if *now != hosted {
                    futures::executor::block_on(self.group.reload(hosted.clone()));
                    *now = hosted;
                }
                servers
            }
            Err(failure) => return crate::report(Err(failure), json),
        };
        let (interrupt, interrupted) = futures::channel::mpsc::unbounded();
        if !connection.buffer().is_empty() {
            // Interrupted already.
            let _ = interrupt.unbounded_send(());
        }
        let Ok(mut watched) = connection.get_ref().try_clone() else {
            return crate::report(
                Err(Failure::config("cannot watch the command's connection")),
                json,
            );
        };
        std::thread::spawn(move || {
            // The command sends nothing more but `{"interrupt": true}` on its
            // Ctrl-C; that, or its end, interrupts the command here.
            let mut rest = [0u8; 1];
            let _ = watched.read(&mut rest);
            let _ = interrupt.unbounded_send(());
        });
        crate::report(
            execute(cli, servers, Some(self.group.clone()), interrupted),
            json,
        )
    }

    fn status(&self) -> Value {
        let ready = self
            .ready
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let servers: Vec<Value> = self
            .group
            .servers()
            .into_iter()
            .map(|(name, state)| {
                let pid = matches!(state, ServerState::Ready(_))
                    .then(|| futures::executor::block_on(self.group.client(&name)).ok())
                    .flatten()
                    .map(|client| client.transport().pid());
                let era = match &state {
                    ServerState::Ready(stdio_mcp::client::Era::Modern) => Some("modern"),
                    ServerState::Ready(_) => Some("legacy"),
                    _ => None,
                };
                json!({ "name": name, "state": crate::lists::state_name(&state), "era": era,
                        "pid": pid, "uptime_s": ready.get(&name).map(|t| t.elapsed().as_secs()) })
            })
            .collect();
        json!({ "pid": std::process::id(), "version": VERSION, "socket": self.socket,
                "uptime_s": self.started.elapsed().as_secs(), "servers": servers })
    }

    /// Closes every server (the process tree rules hold), and ends.
    fn stop(&self) -> ! {
        if endpoint::left_behind(&self.socket) {
            let _ = std::fs::remove_file(&self.socket);
        }
        futures::executor::block_on(self.group.close());
        errln!("stdio-mcp daemon: stopped");
        std::process::exit(0)
    }
}
