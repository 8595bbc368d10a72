//! A command's session: the servers it may use (config files or the command
//! line after `--`), the one it names, and the group that reaches them
//! through the catalog cache; Ctrl-C. The commands themselves are in
//! `commands/`, a file each; which servers may start, in `project.rs`.

use std::sync::Arc;
use std::time::Duration;

use futures::channel::mpsc::UnboundedReceiver;
use futures::future::{select, Either};
use futures::StreamExt;
use serde_json::{json, Value};
use stdio_mcp::client::Validation;
use stdio_mcp::config::Config;
use stdio_mcp::group::{Group, GroupBuilder};
use stdio_mcp::RpcError;
use stdio_mcp::ServerRequest;

use crate::failure::{did_you_mean, Failure, SERVER_FAILED};
use crate::output::{self, errln, outln};
use crate::sources::{self, Servers};
use crate::terminal::{self, Bar, Questions};
use crate::view::View;
use crate::{Cli, Command, Target};

/// How long a server may take to start (`npx` and `uvx` may download it first).
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// What every command shares: the options, the servers it may use, and
/// the groups it opened (closed on Ctrl-C).
pub(crate) struct Session {
    pub(crate) cli: Cli,
    pub(crate) servers: Servers,
    /// The daemon's warm group, when the command runs in the daemon.
    hosted: Option<Group>,
    opened: std::sync::Mutex<Vec<View>>,
    /// The bar of a call's progress and task status, on a terminal.
    pub(crate) bar: Bar,
}

pub fn run(cli: Cli) -> Result<(), Failure> {
    let servers = match ad_hoc_command(&cli.command) {
        Some(command) => sources::ad_hoc(command)?,
        None => sources::load(&cli.config)?,
    };
    // Ctrl-C drops the command's future (its call is cancelled on the
    // wire), then the servers are closed, which writes that cancel out.
    // A closed stdout does the same, quietly (output.rs).
    let (interrupt, interrupted) = futures::channel::mpsc::unbounded();
    let reader_left = interrupt.clone();
    output::watch_reader(move || {
        let _ = reader_left.unbounded_send(());
    });
    let _ = ctrlc::set_handler(move || {
        let _ = interrupt.unbounded_send(());
    });
    execute(cli, servers, None, interrupted)
}

/// Runs the command `cli` on `servers` (through the daemon's warm group when
/// `hosted`) until it is done or `interrupted`.
pub(crate) fn execute(
    cli: Cli,
    servers: Servers,
    hosted: Option<Group>,
    mut interrupted: UnboundedReceiver<()>,
) -> Result<(), Failure> {
    let warnings = warnings_of(&cli, &servers);
    for warning in &warnings {
        errln!("stdio-mcp: warning: {warning}");
    }
    output::set_warnings(warnings);
    let session = Session {
        cli,
        servers,
        hosted,
        opened: std::sync::Mutex::default(),
        bar: Bar::default(),
    };
    futures::executor::block_on(async {
        let running = Box::pin(session.run());
        match select(running, interrupted.next()).await {
            Either::Left((outcome, _)) => outcome,
            Either::Right((_, running)) => {
                // Dropped first: its call's cancel is queued before the close.
                drop(running);
                let opened = std::mem::take(&mut *crate::lock::lock(&session.opened));
                for group in opened {
                    group.close().await;
                }
                Err(Failure::interrupted())
            }
        }
    })
}

/// The config warnings a command shows, once: those of the server it
/// names, else every one of the files it read.
fn warnings_of(cli: &Cli, servers: &Servers) -> Vec<String> {
    let named = (!servers.ad_hoc).then(|| named_server(cli)).flatten();
    servers
        .config
        .warnings()
        .iter()
        .filter(|w| named.is_none_or(|name| w.server == name))
        .map(ToString::to_string)
        .collect()
}

/// The configured server the command names, if it names one (without a
/// command line after `--`, where the first word is not a server).
pub(crate) fn named_server(cli: &Cli) -> Option<&str> {
    if ad_hoc_command(&cli.command).is_some() {
        return None;
    }
    match &cli.command {
        Command::Call { server, .. }
        | Command::Prompt { server, .. }
        | Command::Read { server, .. } => Some(server),
        Command::Tools { server, .. }
        | Command::Prompts { server, .. }
        | Command::Resources { server, .. }
        | Command::Info { server, .. } => server.as_deref(),
        _ => None,
    }
}

/// The command line after `--`, when the command has one.
pub(crate) fn ad_hoc_command(command: &Command) -> Option<&[String]> {
    let target: &Target = match command {
        Command::Tools { target, .. }
        | Command::Call { target, .. }
        | Command::Prompts { target, .. }
        | Command::Prompt { target, .. }
        | Command::Resources { target, .. }
        | Command::Read { target, .. }
        | Command::Info { target, .. } => target,
        Command::Servers
        | Command::Trust { .. }
        | Command::Untrust { .. }
        | Command::Daemon { .. }
        | Command::Completions { .. } => return None,
    };
    (!target.command.is_empty()).then_some(target.command.as_slice())
}

impl Session {
    async fn run(&self) -> Result<(), Failure> {
        let cli = &self.cli;
        let adhoc = self.servers.ad_hoc;
        // With a command after `--`, the server is not named: the words shift.
        let named = |server: &str| (!adhoc).then(|| server.to_owned());
        match &cli.command {
            Command::Servers => self.servers_list().await,
            Command::Tools { server, .. } => self.tools(server.clone()).await,
            Command::Call {
                server,
                tool,
                args,
                whole,
                ..
            } => {
                let (server, tool, args) = shift(named(server), server, tool, args)?;
                self.call(server, &tool, &args, whole.as_deref()).await
            }
            Command::Prompts { server, .. } => self.prompts(server.clone()).await,
            Command::Prompt {
                server, name, args, ..
            } => {
                let (server, name, args) = shift(named(server), server, name, args)?;
                self.prompt(server, &name, &args).await
            }
            Command::Resources { server, .. } => self.resources(server.clone()).await,
            Command::Read { server, uri, .. } => {
                let (server, uri, _) = shift(named(server), server, uri, &[])?;
                self.read(server, &uri).await
            }
            Command::Info { server, .. } => self.info(server.clone()).await,
            Command::Trust { names } => self.trust(names),
            Command::Untrust { names } => self.untrust(names),
            // Handled before a session is made (main.rs).
            Command::Daemon { .. } | Command::Completions { .. } => Ok(()),
        }
    }

    /// The configuration of the servers a command needs: `server`, or all.
    pub(crate) fn config_for(
        &self,
        server: Option<&str>,
    ) -> Result<(Config, Option<String>), Failure> {
        let mut config = self.servers.config.clone();
        let server = match server {
            Some(name) => Some(name.to_owned()),
            // The one ad-hoc server, or every configured one.
            None if self.servers.ad_hoc => self.servers.sources.keys().next().cloned(),
            None => None,
        };
        if let Some(name) = &server {
            if !config.names().any(|n| n == name) {
                let known: Vec<&str> = config.names().collect();
                let hint = did_you_mean(name, known.iter().copied());
                let listed = if known.is_empty() {
                    " (no config file found; name one with --config, or give the server's command after --)".to_owned()
                } else {
                    format!("{hint}; its servers: {}", known.join(", "))
                };
                return Err(Failure::usage(format!("no server {name:?}{listed}")));
            }
            let of_it = |failure: Failure| Failure {
                server: Some(name.clone()),
                ..failure
            };
            if let Some(skipped) = config.skipped().iter().find(|s| &s.name == name) {
                return Err(of_it(Failure::usage(format!(
                    "server {name:?} is not a stdio server here: {}",
                    skipped.reason
                ))));
            }
            if let Some(error) = config.errors().iter().find(|e| e.server() == Some(name)) {
                return Err(of_it(Failure::config(error.to_string())));
            }
            self.may_start(&config, name)?;
            config.retain(|n| n == name);
        } else {
            for held in self.leave_out_held(&mut config)? {
                errln!("{}", held.left_out());
            }
        }
        Ok((config, server))
    }

    /// A group of `config`'s servers (see [`group_builder`]), or in the
    /// daemon the part of its warm group the command needs.
    pub(crate) async fn group(&self, config: Config) -> View {
        if let Some(hosted) = &self.hosted {
            return View::shared(hosted.clone(), config.names().map(str::to_owned)).await;
        }
        let interactive = terminal::interactive(self.cli.no_input);
        let questions = terminal::on_this_terminal(interactive, self.bar.clone());
        let builder = group_builder(&self.cli, config, questions);
        let group = View::owned(builder.connect().await);
        if self.cli.refresh {
            group.start_idle().await;
        }
        crate::lock::lock(&self.opened).push(group.clone());
        group
    }
}

/// A group of `config`'s servers as this command line wants them:
/// arguments checked against the schemas, questions asked on a
/// terminal, stderr shown with `--verbose`, the catalog cache: servers it
/// knows start only when asked for (or with `--refresh`), and without the
/// probe's wait when they are legacy; a tool whose definition changed since
/// the cache saw it is named on stderr.
pub(crate) fn group_builder(cli: &Cli, config: Config, questions: Questions) -> GroupBuilder {
    let roots: Vec<Value> = roots(&cli.roots);
    // `--timeout` bounds a server's start too (a sandboxed `npx` without
    // the network would otherwise be waited for as long as a download may take).
    let start = cli
        .timeout
        .filter(|secs| secs.is_finite() && *secs > 0.0)
        .map_or(START_TIMEOUT, Duration::from_secs_f64);
    let mut builder: GroupBuilder = Group::builder(config)
        .start_timeout(start)
        .ready_within(start + Duration::from_secs(10))
        .client(move |name, client| {
            let roots = roots.clone();
            let questions = Arc::clone(&questions);
            let name = name.to_owned();
            client
                .validate_arguments(Validation::Enforce)
                .on_elicitation(move |request: ServerRequest| questions(&name, request))
                .on_sampling(|_: ServerRequest| async {
                    Err(RpcError {
                        code: -1,
                        message: "sampling is declined by the stdio-mcp command line".into(),
                        data: None,
                    })
                })
                .on_roots_list(move |_: ServerRequest| {
                    let roots = roots.clone();
                    async move { Ok(json!({ "roots": roots })) }
                })
        });
    if cli.verbose {
        builder = builder.transport(|name, transport| {
            let name = name.to_owned();
            transport.on_stderr(move |line| eprintln!("[{name}] {line}"))
        });
    }
    if let Some(cache) = sources::cache_file() {
        if let Some(dir) = cache.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        builder = builder
            .catalog_cache(cache)
            .on_tools_changed(|server, changes| {
                for change in &changes.changed {
                    errln!(
                        "stdio-mcp: {server}: tool {} changed since it was last seen ({})",
                        change.after.name,
                        change.fields.join(", ")
                    );
                }
            });
    }
    builder
}

/// With a command after `--` the server is not named: `server` holds the
/// first word. Returns (server, the first word after it, the rest).
fn shift(
    named: Option<String>,
    first: &str,
    second: &Option<String>,
    rest: &[String],
) -> Result<(Option<String>, String, Vec<String>), Failure> {
    match named {
        Some(server) => {
            let second = second.clone().ok_or_else(|| {
                Failure::usage(format!(
                    "after the server {server:?}, say which one (see --help)"
                ))
            })?;
            Ok((Some(server), second, rest.to_vec()))
        }
        None => {
            let mut words: Vec<String> = second.iter().cloned().collect();
            words.extend(rest.iter().cloned());
            Ok((None, first.to_owned(), words))
        }
    }
}

/// The roots the server may work in: `--root` dirs, else the current one.
fn roots(given: &[std::path::PathBuf]) -> Vec<Value> {
    let dirs: Vec<std::path::PathBuf> = if given.is_empty() {
        std::env::current_dir().into_iter().collect()
    } else {
        given.to_vec()
    };
    dirs.iter()
        .map(|d| {
            let d = d.canonicalize().unwrap_or_else(|_| d.clone());
            let uri = format!("file://{}", d.display().to_string().replace('\\', "/"));
            json!({ "uri": uri, "name": d.file_name().map(|n| n.to_string_lossy().into_owned()) })
        })
        .collect()
}

/// Prints `value` as the one JSON document of `--json`.
pub(crate) fn print_json(value: &Value) {
    outln!(
        "{}",
        serde_json::to_string_pretty(&output::with_warnings(value)).unwrap_or_default()
    );
}

/// The failure of a server that did not start, with its error.
pub(crate) fn failed(server: &str, why: &str) -> Failure {
    Failure {
        code: SERVER_FAILED,
        kind: "start".into(),
        message: crate::failure::in_command_line_words(why),
        server: Some(server.to_owned()),
        printed: false,
    }
}
