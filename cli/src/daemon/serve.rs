//! The daemon itself (`stdio-mcp daemon serve`, started by `daemon start`):
//! the folder's configured servers as one warm group, a socket, and a thread
//! per command that runs it as the command line would, what it prints kept
//! for the command.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use futures::channel::{mpsc, oneshot};
use serde_json::Value;
use stdio_mcp::client::ElicitResult;
use stdio_mcp::config::Config;
use stdio_mcp::group::{Group, ServerState};

use super::endpoint::{self, Connection, Listener};
use super::protocol::{self, Outcome, Reply, Request, Run, ServerStatus, Status};
use super::{address, VERSION};
use crate::failure::Failure;
use crate::lock::lock;
use crate::output::{self, errln};
use crate::session::{execute, group_builder, named_server};
use crate::sources::{self, Servers};
use crate::terminal::{self, Questions};
use crate::{project, Cli};

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
    running: Arc<Mutex<Running>>,
}

/// The commands running now, by number.
#[derive(Default)]
struct Running {
    next: u64,
    commands: HashMap<u64, RunningCommand>,
}

/// A running command: the server it uses (`None`: any), and where its
/// servers' questions are asked, when a person at its terminal answers them.
struct RunningCommand {
    server: Option<String>,
    asker: Option<Arc<Asker>>,
}

/// A command taken in: its number among those running, its words as
/// parsed, the config files as read for it, and its terminal, if it asks.
struct Admitted {
    number: u64,
    cli: Result<Cli, clap::Error>,
    loaded: Result<Servers, Failure>,
    asker: Option<Arc<Asker>>,
}

/// A command's terminal, as the daemon reaches it: a question goes down its
/// connection, and its answer comes back on the same.
struct Asker {
    writer: Mutex<Connection>,
    /// One question at a time, as a terminal asks them.
    turn: futures::lock::Mutex<()>,
    answer: Mutex<Option<oneshot::Sender<Value>>>,
}

impl Asker {
    /// Asks the person at the command's terminal: an elicitation result
    /// (cancel, if the command is gone before it answered).
    async fn ask(&self, message: String, requested_schema: Value) -> Value {
        let _turn = self.turn.lock().await;
        let (answer, answered) = oneshot::channel();
        *lock(&self.answer) = Some(answer);
        let question = Reply::Ask {
            message,
            requested_schema,
        };
        if protocol::send(&mut *lock(&self.writer), &question).is_err() {
            return ElicitResult::cancel().into();
        }
        answered
            .await
            .unwrap_or_else(|_| ElicitResult::cancel().into())
    }

    fn answered(&self, result: Value) {
        if let Some(answer) = lock(&self.answer).take() {
            let _ = answer.send(result);
        }
    }

    /// The command is gone: a question it was asked is cancelled.
    fn gone(&self) {
        lock(&self.answer).take();
    }
}

/// A server's questions, put to the person at the terminal of the command
/// that uses that server, when one answers them; declined otherwise, as a
/// command run directly without a terminal (or with `--no-input`) does.
fn relay(running: Arc<Mutex<Running>>) -> Questions {
    Arc::new(move |server, request| {
        let running = Arc::clone(&running);
        let server = server.to_owned();
        Box::pin(async move {
            let Some((message, schema)) = terminal::form_of(&request)? else {
                return Ok(ElicitResult::decline().into());
            };
            let asker = lock(&running).commands.values().find_map(|command| {
                let uses = command.server.as_ref().is_none_or(|s| *s == server);
                uses.then(|| command.asker.clone()).flatten()
            });
            Ok(match asker {
                Some(asker) => asker.ask(message, schema).await,
                None => ElicitResult::decline().into(),
            })
        })
    })
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
    let running: Arc<Mutex<Running>> = Arc::default();
    let group = futures::executor::block_on(
        group_builder(&cli, hosted.clone(), relay(Arc::clone(&running)))
            .lazy(true)
            .idle_timeout(Duration::from_secs(idle))
            .on_state_change(move |name, state| {
                let mut ready = lock(&seen);
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
        running,
    });
    errln!(
        "stdio-mcp daemon {VERSION}: pid {}, listening",
        std::process::id()
    );
    // Out of descriptors (EMFILE), an accept fails again at once, or succeeds
    // only for the connection's second descriptor to fail: either is waited
    // out, longer each time, instead of spinning the CPU.
    let mut pause = Duration::from_millis(10);
    loop {
        let taken = listener
            .accept()
            .map_err(|error| ("accept", error))
            .and_then(|stream| {
                let reader = stream
                    .try_clone()
                    .map_err(|error| ("a command's connection", error))?;
                Ok((stream, reader))
            });
        let (stream, reader) = match taken {
            Ok(taken) => {
                pause = Duration::from_millis(10);
                taken
            }
            Err((what, error)) => {
                errln!(
                    "stdio-mcp daemon: {what}: {error}; again in {}ms",
                    pause.as_millis()
                );
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_secs(1));
                continue;
            }
        };
        let host = Arc::clone(&host);
        std::thread::spawn(move || {
            if let Err(error) = host.answer(stream, reader) {
                errln!("stdio-mcp daemon: a command's connection: {error}");
            }
        });
    }
}

/// Reads what the command sends while it runs, on a thread of its own:
/// answers to its questions go to `asker`; its interrupt, or its end,
/// interrupts the command here.
fn listen(
    mut reader: BufReader<Connection>,
    asker: Option<Arc<Asker>>,
) -> mpsc::UnboundedReceiver<()> {
    let (interrupt, interrupted) = mpsc::unbounded();
    std::thread::spawn(move || {
        let mut line = String::new();
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => match protocol::parse::<Request>(&line) {
                    Ok(Request::Answer(result)) => {
                        if let Some(asker) = &asker {
                            asker.answered(result);
                        }
                    }
                    _ => {
                        let _ = interrupt.unbounded_send(());
                    }
                },
            }
        }
        let _ = interrupt.unbounded_send(());
        if let Some(asker) = &asker {
            asker.gone();
        }
    });
    interrupted
}

/// The entries of `servers` the daemon may host: a project's untrusted ones left out.
fn trusted(servers: &Servers) -> Result<Config, Failure> {
    let mut config = servers.config.clone();
    let held = project::held(servers, &config)?;
    config.retain(|name| !held.iter().any(|h| h.name == name));
    Ok(config)
}

impl Host {
    /// One connection: the greeting, then one request (protocol.rs).
    fn answer(&self, mut writer: Connection, reader: Connection) -> std::io::Result<()> {
        let mut reader = BufReader::new(reader);
        let mut line = String::new();
        reader.read_line(&mut line)?;
        // Whatever version the command has: it compares, and goes if not its own.
        let hello = Reply::Hello {
            version: VERSION.to_owned(),
            pid: std::process::id(),
        };
        protocol::send(&mut writer, &hello)?;
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            // Only looked whether a daemon answers.
            return Ok(());
        }
        let reply = match protocol::parse::<Request>(&line) {
            Ok(Request::Stop) => {
                protocol::send(&mut writer, &Reply::Stopping)?;
                self.stop()
            }
            Ok(Request::Status) => Reply::Status(self.status()),
            Ok(Request::Run(run)) if run.version != VERSION => {
                Reply::Done(Outcome::refused(&format!(
                    "refused: this daemon is stdio-mcp {VERSION}, the command {}",
                    run.version
                )))
            }
            Ok(Request::Run(run)) => match self.admit(&run, &writer) {
                Err(why) => Reply::Direct { why },
                Ok(admitted) => {
                    protocol::send(&mut writer, &Reply::Running)?;
                    let interrupted = listen(reader, admitted.asker);
                    let outcome = self.run(admitted.cli, admitted.loaded, interrupted);
                    lock(&self.running).commands.remove(&admitted.number);
                    Reply::Done(outcome)
                }
            },
            _ => Reply::Done(Outcome::refused(
                "the daemon did not understand the request",
            )),
        };
        protocol::send(&mut writer, &reply)
    }

    /// Takes a command in, numbered, with its parsed words and the config
    /// files as read now — or says why it must run where it was typed: a
    /// server it may use is defined otherwise in its environment, its roots
    /// are not the daemon's, its `--timeout` would bound a start here, or
    /// its server's questions could not be told from another command's.
    fn admit(&self, run: &Run, connection: &Connection) -> Result<Admitted, String> {
        let cli = Cli::try_parse_from(
            std::iter::once("stdio-mcp".to_owned()).chain(run.argv.iter().cloned()),
        );
        if run.roots != super::roots_of(&self.cli) {
            return Err("its roots are not the daemon's".to_owned());
        }
        // The config files are read anew for each command, as a direct run
        // would: a changed or newly trusted entry is what the group hosts.
        let loaded = sources::load(&self.cli.config);
        if let Ok(servers) = &loaded {
            let here = super::launch_keys(servers);
            if let Some((name, _)) = run
                .launch
                .iter()
                .find(|(name, key)| here.get(*name) != Some(*key))
            {
                return Err(format!(
                    "server {name:?} is defined otherwise in its environment"
                ));
            }
        }
        // A server it names, else any of them.
        let states = self.group.servers();
        let server = cli.as_ref().ok().and_then(|cli| {
            named_server(cli)
                .filter(|name| states.iter().any(|(n, _)| n == name))
                .map(str::to_owned)
        });
        if cli.as_ref().is_ok_and(|cli| cli.timeout.is_some()) {
            let cold = states.into_iter().find(|(name, state)| {
                server.as_ref().is_none_or(|s| s == name) && !matches!(state, ServerState::Ready(_))
            });
            if let Some((name, _)) = cold {
                return Err(format!(
                    "its --timeout bounds the start of {name:?}, which is not running here"
                ));
            }
        }
        let mut running = lock(&self.running);
        let overlaps =
            |other: &Option<String>| server.is_none() || other.is_none() || *other == server;
        if let Some(other) = running
            .commands
            .values()
            .find(|c| overlaps(&c.server) && (run.asks || c.asker.is_some()))
        {
            let which = other.server.as_ref().or(server.as_ref());
            return Err(match which {
                Some(name) => {
                    format!("another command uses {name:?}, whose questions go to one terminal")
                }
                None => "another command uses its servers, whose questions go to one terminal"
                    .to_owned(),
            });
        }
        let asker = match run.asks {
            true => Some(Arc::new(Asker {
                writer: Mutex::new(connection.try_clone().map_err(|e| e.to_string())?),
                turn: futures::lock::Mutex::new(()),
                answer: Mutex::new(None),
            })),
            false => None,
        };
        running.next += 1;
        let number = running.next;
        let command = RunningCommand {
            server,
            asker: asker.clone(),
        };
        running.commands.insert(number, command);
        Ok(Admitted {
            number,
            cli,
            loaded,
            asker,
        })
    }

    /// Runs a command as the command line would here, with the warm group:
    /// what it printed, and its exit status.
    fn run(
        &self,
        cli: Result<Cli, clap::Error>,
        loaded: Result<Servers, Failure>,
        interrupted: mpsc::UnboundedReceiver<()>,
    ) -> Outcome {
        let mut code = 0;
        let ((), stdout, stderr) = output::capture(|| {
            code = self.run_captured(cli, loaded, interrupted);
        });
        Outcome {
            stdout,
            stderr,
            code,
        }
    }

    fn run_captured(
        &self,
        cli: Result<Cli, clap::Error>,
        loaded: Result<Servers, Failure>,
        interrupted: mpsc::UnboundedReceiver<()>,
    ) -> u8 {
        let cli = match cli {
            Ok(cli) => cli,
            Err(error) => return crate::failure::refused(&error, false),
        };
        let json = cli.json;
        let servers = match loaded.and_then(|s| Ok((trusted(&s)?, s))) {
            Ok((hosted, servers)) => {
                let mut now = lock(&self.hosted);
                if *now != hosted {
                    futures::executor::block_on(self.group.reload(hosted.clone()));
                    *now = hosted;
                }
                servers
            }
            Err(failure) => return crate::failure::report(Err(failure), json),
        };
        crate::failure::report(
            execute(cli, servers, Some(self.group.clone()), interrupted),
            json,
        )
    }

    fn status(&self) -> Status {
        let ready = lock(&self.ready).clone();
        let servers = self
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
                ServerStatus {
                    state: crate::commands::state_name(&state).to_owned(),
                    era: era.map(str::to_owned),
                    pid,
                    uptime_s: ready.get(&name).map(|t| t.elapsed().as_secs()),
                    name,
                }
            })
            .collect();
        Status {
            pid: std::process::id(),
            version: VERSION.to_owned(),
            socket: self.socket.clone(),
            uptime_s: self.started.elapsed().as_secs(),
            servers,
        }
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
