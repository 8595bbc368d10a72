//! `stdio-mcp`: list, call and script the MCP servers of your host config
//! files (or any server's command line after `--`) from a terminal. See
//! docs/cli.md for every command, the exit codes and the JSON shapes.

// `unsafe` only where the daemon's endpoint calls the OS (daemon/endpoint.rs).
#![deny(unsafe_code)]

mod arguments;
mod commands;
mod complete;
mod daemon;
mod failure;
mod lock;
mod output;
mod project;
mod reach;
mod session;
mod sources;
mod terminal;
mod view;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use clap_complete::engine::{ArgValueCandidates, ArgValueCompleter};

use arguments::{json_asked, read_stdin_arguments};
use failure::{refused, report, Failure};
use output::outln;

/// Talk to stdio MCP servers: those of your host config files, or any
/// server's command line after `--`.
#[derive(Parser, Debug, Clone)]
#[command(name = "stdio-mcp", version, about, max_term_width = 100)]
pub struct Cli {
    /// A config file to read (repeatable); without it, the usual ones that
    /// exist: the project's .mcp.json, .vscode/mcp.json, .cursor/mcp.json
    /// (here, or in the nearest folder above that has one), then
    /// Claude Desktop's, Claude Code's, Cursor's and Windsurf's.
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Vec<PathBuf>,
    /// Print exactly one JSON document on stdout: the result as the server
    /// sent it, or {"error": {kind, message, server}}.
    #[arg(long, global = true)]
    pub json: bool,
    /// Show the servers' stderr, each line prefixed with the server's name.
    #[arg(long, short, global = true)]
    pub verbose: bool,
    /// Start the servers instead of reading their tools from the catalog cache.
    #[arg(long, global = true)]
    pub refresh: bool,
    /// Run the command here even when a daemon (`stdio-mcp daemon start`) runs.
    #[arg(long, global = true)]
    pub no_daemon: bool,
    /// Never ask anything: questions from the server are declined.
    #[arg(long, global = true)]
    pub no_input: bool,
    /// The longest a call may take, in seconds (default: the library's 5
    /// minutes, restarted by each progress report); it bounds each server's
    /// start too (default 120).
    #[arg(long, global = true, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// A root the server may work in (repeatable; default: the current directory).
    #[arg(long = "root", global = true, value_name = "DIR")]
    pub roots: Vec<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

/// The server given by name, or by its command line after `--`.
#[derive(clap::Args, Debug, Clone)]
pub struct Target {
    /// The server's command line, instead of a configured SERVER.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[derive(Subcommand, Debug, Clone)]
pub enum Command {
    /// The configured servers: name, state, era, tools, source file.
    Servers,
    /// The tools of one server, or of all (under the group's names).
    Tools {
        #[arg(add = ArgValueCandidates::new(complete::servers))]
        server: Option<String>,
        #[command(flatten)]
        target: Target,
    },
    /// Call a tool: ARGs are key=value (typed by the tool's schema) or key:=JSON.
    #[command(
        override_usage = "stdio-mcp call [OPTIONS] <SERVER> <TOOL> [ARG]...\n       \
                                stdio-mcp call [OPTIONS] <TOOL> [ARG]... -- <COMMAND>..."
    )]
    Call {
        /// A configured server (with a command after --: the tool).
        #[arg(add = ArgValueCandidates::new(complete::servers))]
        server: String,
        /// The tool to call (with a command after --: its first ARG).
        #[arg(add = ArgValueCompleter::new(complete::tools))]
        tool: Option<String>,
        /// key=value (typed by the tool's schema) or key:=JSON.
        #[arg(value_name = "ARG")]
        args: Vec<String>,
        /// The whole arguments object: JSON, @FILE, or - for stdin.
        #[arg(long = "args", value_name = "JSON|@FILE|-")]
        whole: Option<String>,
        #[command(flatten)]
        target: Target,
    },
    /// The prompts of one server, or of all.
    Prompts {
        #[arg(add = ArgValueCandidates::new(complete::servers))]
        server: Option<String>,
        #[command(flatten)]
        target: Target,
    },
    /// Get a prompt: ARGs are key=value.
    #[command(
        override_usage = "stdio-mcp prompt [OPTIONS] <SERVER> <NAME> [ARG]...\n       \
                                stdio-mcp prompt [OPTIONS] <NAME> [ARG]... -- <COMMAND>..."
    )]
    Prompt {
        /// A configured server (with a command after --: the prompt's name).
        #[arg(add = ArgValueCandidates::new(complete::servers))]
        server: String,
        /// The prompt's name.
        name: Option<String>,
        /// key=value.
        #[arg(value_name = "ARG")]
        args: Vec<String>,
        #[command(flatten)]
        target: Target,
    },
    /// The resources of one server, or of all.
    Resources {
        #[arg(add = ArgValueCandidates::new(complete::servers))]
        server: Option<String>,
        #[command(flatten)]
        target: Target,
    },
    /// Read a resource.
    #[command(override_usage = "stdio-mcp read [OPTIONS] <SERVER> <URI>\n       \
                                stdio-mcp read [OPTIONS] <URI> -- <COMMAND>...")]
    Read {
        /// A configured server (with a command after --: the URI).
        #[arg(add = ArgValueCandidates::new(complete::servers))]
        server: String,
        /// The resource's URI.
        uri: Option<String>,
        #[command(flatten)]
        target: Target,
    },
    /// The server's info, era, protocol version, capabilities and instructions.
    Info {
        #[arg(add = ArgValueCandidates::new(complete::servers))]
        server: Option<String>,
        #[command(flatten)]
        target: Target,
    },
    /// Trust a project's servers (./.mcp.json, ./.vscode/mcp.json,
    /// ./.cursor/mcp.json) as they are now, so they may start; with no NAME,
    /// list the project's servers and their trust.
    Trust {
        #[arg(value_name = "NAME", add = ArgValueCandidates::new(complete::servers))]
        names: Vec<String>,
    },
    /// Take back the trust in a project's servers.
    Untrust {
        #[arg(value_name = "NAME", required = true, add = ArgValueCandidates::new(complete::servers))]
        names: Vec<String>,
    },
    /// A background process that keeps the configured servers warm: while it
    /// runs, the other commands for the same config files go through it.
    Daemon {
        #[command(subcommand)]
        action: DaemonAction,
    },
    /// Print the completion script for a shell.
    Completions { shell: Shell },
}

#[derive(Subcommand, Debug, Clone, Copy)]
pub enum DaemonAction {
    /// Start it (it says so if one runs already).
    Start {
        /// Close a server unused this long, in seconds (default 600).
        #[arg(long, value_name = "SECS")]
        idle: Option<u64>,
    },
    /// Its servers: state, era, pid and uptime.
    Status,
    /// Stop it, and every server it started.
    Stop,
    /// Stop it, then start it again.
    Restart {
        /// Close a server unused this long, in seconds (default 600).
        #[arg(long, value_name = "SECS")]
        idle: Option<u64>,
    },
    /// The daemon itself (what `start` runs).
    #[command(hide = true)]
    Serve {
        #[arg(long, value_name = "SECS")]
        idle: u64,
    },
}

#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Powershell,
}

fn main() -> ExitCode {
    // A shell asking for completions is answered here, and nothing else runs.
    clap_complete::CompleteEnv::with_factory(Cli::command)
        .var(complete::VAR)
        .complete();
    if std::env::args_os().len() == 1 {
        // Alone, as `cargo` does: what it can do.
        outln!("{}", Cli::command().render_help().to_string().trim_end());
        return ExitCode::SUCCESS;
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return ExitCode::from(refused(&error, json_asked())),
    };
    let cli = match read_stdin_arguments(cli) {
        Ok(cli) => cli,
        Err(failure) => return ExitCode::from(report(Err(failure), json_asked())),
    };
    if let Command::Completions { shell } = cli.command {
        let shell = match shell {
            Shell::Bash => "bash",
            Shell::Zsh => "zsh",
            Shell::Fish => "fish",
            Shell::Powershell => "powershell",
        };
        return ExitCode::from(report(
            complete::registration(shell).map_err(Failure::from),
            cli.json,
        ));
    }
    if let Command::Daemon { action } = cli.command {
        return ExitCode::from(daemon::manage(action, &cli));
    }
    if let Some(code) = daemon::forward(&cli) {
        return ExitCode::from(code);
    }
    let json = cli.json;
    ExitCode::from(report(session::run(cli), json))
}
