//! Each command: which servers it needs, how it reaches them (from the
//! catalog cache where it can), and what it prints for people or, with
//! `--json`, for scripts.

use std::time::Duration;

use futures::future::{select, Either};
use futures::StreamExt;
use serde_json::{json, Value};
use stdio_mcp::client::{CallOptions, Era, Validation};
use stdio_mcp::config::Config;
use stdio_mcp::group::{Group, GroupBuilder, ServerState};
use stdio_mcp::RpcError;

use crate::failure::{did_you_mean, Failure, SERVER_FAILED, SERVER_SAID_NO};
use crate::sources::{self, Servers};
use crate::terminal::{self, Bar};
use crate::{arguments, complete, Cli, Command, Shell, Target};

/// How long a server may take to start (`npx` and `uvx` may download it first).
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// What every command shares: the options, the servers it may use, and
/// the groups it opened (closed on Ctrl-C).
struct Session {
    cli: Cli,
    servers: Servers,
    opened: std::sync::Mutex<Vec<Group>>,
    /// The bar of a call's progress and task status, on a terminal.
    bar: Bar,
}

pub fn run(cli: Cli) -> Result<(), Failure> {
    if let Command::Completions { shell } = cli.command {
        let shell = match shell {
            Shell::Bash => "bash",
            Shell::Zsh => "zsh",
            Shell::Fish => "fish",
            Shell::Powershell => "powershell",
        };
        return Ok(complete::registration(shell)?);
    }
    let servers = match ad_hoc_command(&cli.command) {
        Some(command) => sources::ad_hoc(command)?,
        None => sources::load(&cli.config)?,
    };
    let session = Session {
        cli,
        servers,
        opened: std::sync::Mutex::default(),
        bar: Bar::default(),
    };
    // Ctrl-C drops the command's future (its call is cancelled on the
    // wire), then the servers are closed, which writes that cancel out.
    let (interrupt, mut interrupted) = futures::channel::mpsc::unbounded();
    let _ = ctrlc::set_handler(move || {
        let _ = interrupt.unbounded_send(());
    });
    futures::executor::block_on(async {
        let running = Box::pin(session.run());
        match select(running, interrupted.next()).await {
            Either::Left((outcome, _)) => outcome,
            Either::Right((_, running)) => {
                // Dropped first: its call's cancel is queued before the close.
                drop(running);
                let opened =
                    std::mem::take(&mut *session.opened.lock().unwrap_or_else(|e| e.into_inner()));
                for group in opened {
                    group.close().await;
                }
                Err(Failure::interrupted())
            }
        }
    })
}

/// The command line after `--`, when the command has one.
fn ad_hoc_command(command: &Command) -> Option<&[String]> {
    let target: &Target = match command {
        Command::Tools { target, .. }
        | Command::Call { target, .. }
        | Command::Prompts { target, .. }
        | Command::Prompt { target, .. }
        | Command::Resources { target, .. }
        | Command::Read { target, .. }
        | Command::Info { target, .. } => target,
        Command::Servers | Command::Completions { .. } => return None,
    };
    (!target.command.is_empty()).then_some(target.command.as_slice())
}

impl Session {
    async fn run(&self) -> Result<(), Failure> {
        let cli = &self.cli;
        let adhoc = self.is_ad_hoc();
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
            Command::Completions { .. } => Ok(()),
        }
    }

    /// The configuration of the servers a command needs: `server`, or all.
    fn config_for(&self, server: Option<&str>) -> Result<(Config, Option<String>), Failure> {
        let mut config = self.servers.config.clone();
        let server = match server {
            Some(name) => Some(name.to_owned()),
            // The one ad-hoc server, or every configured one.
            None if self.servers.sources.len() == 1 && self.is_ad_hoc() => {
                self.servers.sources.keys().next().cloned()
            }
            None => None,
        };
        if let Some(name) = &server {
            if !config.names().any(|n| n == name) {
                let known: Vec<&str> = config.names().collect();
                let hint = did_you_mean(name, known.iter().copied());
                let listed = if known.is_empty() {
                    " (no config file found; name one with --config, or give the server's command after --)".to_owned()
                } else {
                    format!(" (servers: {}{hint})", known.join(", "))
                };
                return Err(Failure::usage(format!("no server {name:?}{listed}")));
            }
            if let Some(skipped) = config.skipped().iter().find(|s| &s.name == name) {
                return Err(Failure::usage(format!(
                    "server {name:?} is not a stdio server here: {}",
                    skipped.reason
                )));
            }
            if let Some(error) = config.errors().iter().find(|e| e.server() == Some(name)) {
                return Err(Failure::config(error.to_string()));
            }
            config.retain(|n| n == name);
        }
        Ok((config, server))
    }

    fn is_ad_hoc(&self) -> bool {
        self.servers
            .sources
            .values()
            .any(|s| s == "the command line")
    }

    /// A group of `config`'s servers as this command line wants them:
    /// arguments checked against the schemas, questions asked on a
    /// terminal, stderr shown with `--verbose`, the catalog cache
    /// (`--refresh` starts it anew): servers it knows start only
    /// when asked for, and without the probe's wait when they are legacy.
    async fn group(&self, config: Config) -> Group {
        let cli = &self.cli;
        let interactive = terminal::interactive(cli.no_input);
        let bar = self.bar.clone();
        let roots: Vec<Value> = roots(&cli.roots);
        let mut builder: GroupBuilder = Group::builder(config)
            .start_timeout(START_TIMEOUT)
            .ready_within(START_TIMEOUT + Duration::from_secs(10))
            .client(move |_, client| {
                let bar = bar.clone();
                let roots = roots.clone();
                client
                    .validate_arguments(Validation::Enforce)
                    .on_elicitation(move |request| {
                        terminal::elicit(request, interactive, bar.clone())
                    })
                    .on_sampling(|_| async {
                        Err(RpcError {
                            code: -1,
                            message: "sampling is declined by the stdio-mcp command line".into(),
                            data: None,
                        })
                    })
                    .on_roots_list(move |_| {
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
            if cli.refresh {
                let _ = std::fs::remove_file(&cache);
            }
            builder = builder.catalog_cache(cache);
        }
        let group = builder.connect().await;
        self.opened
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(group.clone());
        group
    }
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
fn print_json(value: &Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_default()
    );
}

fn era_name(state: &ServerState) -> String {
    match state {
        ServerState::Ready(Era::Modern) => "modern".into(),
        ServerState::Ready(_) => "legacy".into(),
        _ => "-".into(),
    }
}

fn state_name(state: &ServerState) -> &'static str {
    match state {
        ServerState::Idle => "idle",
        ServerState::Starting => "starting",
        ServerState::Ready(_) => "ready",
        ServerState::Restarting => "restarting",
        ServerState::Failed(_) => "failed",
        ServerState::Closed => "closed",
        _ => "unknown",
    }
}

/// The failure of a server that did not start, with its error.
fn failed(server: &str, why: &str) -> Failure {
    Failure {
        code: SERVER_FAILED,
        kind: "start".into(),
        message: why.to_owned(),
        server: Some(server.to_owned()),
        printed: false,
    }
}

impl Session {
    /// `servers`: each configured server's state, era, tool count and file.
    async fn servers_list(&self) -> Result<(), Failure> {
        let (config, _) = self.config_for(None)?;
        let skipped = config.skipped().to_vec();
        let group = self.group(config).await;
        let tools = group.tools().await;
        let mut rows = Vec::new();
        for (name, state) in group.servers() {
            let count = tools.iter().filter(|t| t.server == name).count();
            let source = self.servers.sources.get(&name).cloned().unwrap_or_default();
            let error = match &state {
                ServerState::Failed(why) => Some(why.clone()),
                _ => None,
            };
            rows.push(
                json!({ "name": name, "state": state_name(&state), "era": era_name(&state),
                              "tools": count, "source": source, "error": error }),
            );
        }
        for s in &skipped {
            let source = self
                .servers
                .sources
                .get(&s.name)
                .cloned()
                .unwrap_or_default();
            rows.push(
                json!({ "name": s.name, "state": "skipped", "era": "-", "tools": 0,
                              "source": source, "error": s.reason }),
            );
        }
        if self.cli.json {
            print_json(&json!({ "servers": rows }));
        } else if rows.is_empty() {
            println!(
                "no servers: name a config file with --config, or give a server's command after --"
            );
        } else {
            println!(
                "{:<20} {:<9} {:<7} {:>5}  SOURCE",
                "NAME", "STATE", "ERA", "TOOLS"
            );
            for row in &rows {
                println!(
                    "{:<20} {:<9} {:<7} {:>5}  {}",
                    row["name"].as_str().unwrap_or_default(),
                    row["state"].as_str().unwrap_or_default(),
                    row["era"].as_str().unwrap_or_default(),
                    row["tools"],
                    row["source"].as_str().unwrap_or_default()
                );
                if let Some(error) = row["error"].as_str() {
                    println!("    {error}");
                }
            }
        }
        group.close().await;
        Ok(())
    }

    /// `tools [SERVER]`: one server's tools by their own names, or every
    /// server's under the group's names.
    async fn tools(&self, server: Option<String>) -> Result<(), Failure> {
        let (config, server) = self.config_for(server.as_deref())?;
        let group = self.group(config).await;
        let tools = group.tools().await;
        let failures: Vec<(String, String)> = group
            .servers()
            .into_iter()
            .filter_map(|(name, state)| match state {
                ServerState::Failed(why) => Some((name, why)),
                _ => None,
            })
            .collect();
        group.close().await;
        if let (Some(server), Some((_, why))) = (&server, failures.first()) {
            return Err(failed(server, why));
        }
        for (name, why) in &failures {
            eprintln!("stdio-mcp: {name}: {why}");
        }
        let single = server.is_some();
        if self.cli.json {
            let listed: Vec<Value> = tools
                .iter()
                .map(|t| {
                    let mut tool = serde_json::to_value(&t.tool).unwrap_or_default();
                    if !single {
                        tool["name"] = json!(t.name);
                        tool["server"] = json!(t.server);
                    }
                    tool
                })
                .collect();
            print_json(&json!({ "tools": listed }));
            return Ok(());
        }
        for t in &tools {
            let name = if single { &t.tool.name } else { &t.name };
            let description = t.tool.description.as_deref().unwrap_or_default();
            let first = description.lines().next().unwrap_or_default();
            println!("{name:<32} {first}");
        }
        Ok(())
    }

    /// `call SERVER TOOL [ARG...]`.
    async fn call(
        &self,
        server: Option<String>,
        tool: &str,
        words: &[String],
        whole: Option<&str>,
    ) -> Result<(), Failure> {
        let (config, server) = self.config_for(server.as_deref())?;
        let server = server.unwrap_or_default();
        let group = self.group(config).await;
        let tools = group.tools().await;
        if let Some((_, ServerState::Failed(why))) = group.servers().first() {
            return Err(failed(&server, why));
        }
        let Some(found) = tools.iter().find(|t| t.tool.name == tool) else {
            let known = tools.iter().map(|t| t.tool.name.as_str());
            let hint = did_you_mean(tool, known);
            return Err(Failure::usage(format!(
                "server {server:?} has no tool {tool:?}{hint}"
            )));
        };
        let arguments = arguments::parse(words, whole, &found.tool.input_schema)?;
        let client = group.client(&server).await?;
        let (bar, tasks) = (self.bar.clone(), self.bar.clone());
        let mut options = CallOptions::new()
            .on_progress(move |p| bar.progress(p))
            .on_task(move |t| tasks.task(t));
        if let Some(secs) = self.cli.timeout {
            options = options.timeout(Duration::from_secs_f64(secs.max(0.0)));
        }
        let result = client.call_tool_with(tool, arguments, options).await;
        self.bar.finish();
        let result = result?;
        if self.cli.json {
            print_json(&serde_json::to_value(&result).unwrap_or_default());
        } else {
            print_content(&serde_json::to_value(&result.content).unwrap_or_default());
            if let Some(structured) = &result.structured_content {
                if result.text().is_empty() {
                    println!(
                        "{}",
                        serde_json::to_string_pretty(structured).unwrap_or_default()
                    );
                }
            }
        }
        group.close().await;
        if result.is_error {
            return Err(Failure {
                code: SERVER_SAID_NO,
                kind: "tool".into(),
                message: format!("the tool reported an error: {}", result.text()),
                server: Some(server),
                printed: true,
            });
        }
        Ok(())
    }

    /// `prompts [SERVER]`.
    async fn prompts(&self, server: Option<String>) -> Result<(), Failure> {
        let (config, server) = self.config_for(server.as_deref())?;
        let group = self.group(config).await;
        start_all(&group).await;
        let prompts = group.prompts().await;
        let single = server.is_some();
        if self.cli.json {
            let listed: Vec<Value> = prompts
                .iter()
                .map(|p| {
                    let mut prompt = serde_json::to_value(&p.prompt).unwrap_or_default();
                    if !single {
                        prompt["name"] = json!(p.name);
                        prompt["server"] = json!(p.server);
                    }
                    prompt
                })
                .collect();
            print_json(&json!({ "prompts": listed }));
        } else {
            for p in &prompts {
                let name = if single { &p.prompt.name } else { &p.name };
                println!(
                    "{name:<32} {}",
                    p.prompt.description.as_deref().unwrap_or_default()
                );
            }
        }
        group.close().await;
        Ok(())
    }

    /// `prompt SERVER NAME [ARG...]`: prompt arguments are strings.
    async fn prompt(
        &self,
        server: Option<String>,
        name: &str,
        words: &[String],
    ) -> Result<(), Failure> {
        let (config, server) = self.config_for(server.as_deref())?;
        let group = self.group(config).await;
        let client = group.client(&server.unwrap_or_default()).await?;
        let strings = json!({ "type": "object", "additionalProperties": { "type": "string" } });
        let arguments = arguments::parse(words, None, &strings)?;
        let got = client.get_prompt(name, arguments).await?;
        if self.cli.json {
            print_json(&serde_json::to_value(&got).unwrap_or_default());
        } else {
            for message in serde_json::to_value(&got.messages)
                .unwrap_or_default()
                .as_array()
                .into_iter()
                .flatten()
            {
                println!("[{}]", message["role"].as_str().unwrap_or_default());
                print_content(&json!([message["content"]]));
            }
        }
        group.close().await;
        Ok(())
    }

    /// `resources [SERVER]`.
    async fn resources(&self, server: Option<String>) -> Result<(), Failure> {
        let (config, _) = self.config_for(server.as_deref())?;
        let group = self.group(config).await;
        start_all(&group).await;
        let resources = group.resources().await;
        if self.cli.json {
            let listed: Vec<Value> = resources
                .iter()
                .map(|r| {
                    let mut resource = serde_json::to_value(&r.resource).unwrap_or_default();
                    resource["server"] = json!(r.server);
                    resource
                })
                .collect();
            print_json(&json!({ "resources": listed }));
        } else {
            for r in &resources {
                println!("{:<40} {} ({})", r.resource.uri, r.resource.name, r.server);
            }
        }
        group.close().await;
        Ok(())
    }

    /// `read SERVER URI`.
    async fn read(&self, server: Option<String>, uri: &str) -> Result<(), Failure> {
        let (config, server) = self.config_for(server.as_deref())?;
        let group = self.group(config).await;
        let client = group.client(&server.unwrap_or_default()).await?;
        let read = client.read_resource(uri).await?;
        if self.cli.json {
            print_json(&serde_json::to_value(&read).unwrap_or_default());
        } else {
            for part in serde_json::to_value(&read.contents)
                .unwrap_or_default()
                .as_array()
                .into_iter()
                .flatten()
            {
                match part["text"].as_str() {
                    Some(text) => println!("{text}"),
                    None => println!(
                        "({} bytes of {})",
                        part["blob"].as_str().map_or(0, |b| b.len() * 3 / 4),
                        part["mimeType"].as_str().unwrap_or("binary data")
                    ),
                }
            }
        }
        group.close().await;
        Ok(())
    }

    /// `info SERVER`.
    async fn info(&self, server: Option<String>) -> Result<(), Failure> {
        let (config, server) = self.config_for(server.as_deref())?;
        let Some(server) = server else {
            return Err(Failure::usage(
                "info needs a SERVER, or a server's command after --",
            ));
        };
        let group = self.group(config).await;
        let client = group.client(&server).await?;
        let info = json!({
            "serverInfo": client.server_info(),
            "era": client.era().to_string(),
            "protocolVersion": client.protocol_version(),
            "capabilities": client.server_capabilities(),
            "instructions": client.instructions(),
        });
        group.close().await;
        if self.cli.json {
            print_json(&info);
            return Ok(());
        }
        let s = client.server_info();
        println!("server:    {} {}", s.name, s.version);
        println!(
            "era:       {} (MCP {})",
            client.era(),
            client.protocol_version()
        );
        let capabilities = serde_json::to_value(client.server_capabilities()).unwrap_or_default();
        let offered: Vec<&String> = capabilities
            .as_object()
            .map(|c| c.keys().collect())
            .unwrap_or_default();
        println!(
            "offers:    {}",
            offered
                .iter()
                .map(|k| k.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        if let Some(instructions) = client.instructions() {
            println!("instructions:\n{instructions}");
        }
        Ok(())
    }
}

/// Starts every server of `group` that the catalog cache left idle (prompts
/// and resources are asked of running servers; the cache still spares a
/// legacy server the probe). One that fails says so on stderr.
async fn start_all(group: &Group) {
    let unreadable: Vec<String> = group.errors().into_iter().map(|(name, _)| name).collect();
    let names: Vec<String> = group
        .servers()
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| !unreadable.contains(name))
        .collect();
    let starts = names.iter().map(|name| group.client(name));
    for (name, started) in names.iter().zip(futures::future::join_all(starts).await) {
        if let Err(error) = started {
            eprintln!("stdio-mcp: {name}: {error}");
        }
    }
}

/// Prints content items for people: text as it is, the rest summarized.
fn print_content(content: &Value) {
    for item in content.as_array().into_iter().flatten() {
        match item["type"].as_str() {
            Some("text") => println!("{}", item["text"].as_str().unwrap_or_default()),
            Some("resource") => match item["resource"]["text"].as_str() {
                Some(text) => println!("{text}"),
                None => println!(
                    "[resource {}]",
                    item["resource"]["uri"].as_str().unwrap_or_default()
                ),
            },
            Some("resource_link") => {
                println!("[link {}]", item["uri"].as_str().unwrap_or_default())
            }
            Some(kind) => println!("[{kind}: {}]", item["mimeType"].as_str().unwrap_or("data")),
            None => println!("{item}"),
        }
    }
}
