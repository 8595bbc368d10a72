//! Which servers may start: a project's (those of `./.mcp.json`,
//! `./.vscode/mcp.json`, `./.cursor/mcp.json`, found without `--config`)
//! only once their user trusted them as they are — the question on a
//! terminal, the refusal elsewhere, what lists leave out. The `trust` and
//! `untrust` commands are `commands/trust.rs`.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use stdio_mcp::config::{Config, ServerConfig, TrustState, TrustStore};

use crate::failure::{Failure, USAGE};
use crate::session::Session;
use crate::sources::Servers;
use crate::terminal;

/// A project server that may not start now, and why.
pub(crate) struct Held {
    pub(crate) name: String,
    pub(crate) file: PathBuf,
    pub(crate) state: TrustState,
    /// The user's own file that defines the same name, if one does.
    pub(crate) shadows: Option<PathBuf>,
}

impl Held {
    /// `untrusted` or `changed`, as `servers` and `trust` show it.
    pub(crate) fn state_name(&self) -> &'static str {
        state_name(&self.state)
    }

    /// The one line a list of every server prints on stderr for it.
    pub(crate) fn left_out(&self) -> String {
        format!(
            "stdio-mcp: server {:?} of {} left out: {} (stdio-mcp trust {})",
            self.name,
            self.file.display(),
            self.state,
            self.name
        )
    }
}

pub(crate) fn state_name(state: &TrustState) -> &'static str {
    match state {
        TrustState::Trusted => "trusted",
        TrustState::Changed(_) => "changed",
        _ => "untrusted",
    }
}

/// The trust store, read anew (`STDIO_MCP_TRUST` or the user's data directory).
pub(crate) fn store() -> Result<TrustStore, Failure> {
    TrustStore::open_default().map_err(|e| Failure::config(e.to_string()))
}

/// The project file that gives `name` its entry, if a project's does.
fn project_file<'a>(servers: &'a Servers, name: &str) -> Option<&'a Path> {
    let first = servers.origins.get(name)?.first()?;
    first.project.then_some(first.file.as_path())
}

/// The project servers of `config` (a part of `servers`') that may not start now.
pub(crate) fn held(servers: &Servers, config: &Config) -> Result<Vec<Held>, Failure> {
    let project: Vec<&ServerConfig> = config
        .servers()
        .iter()
        .filter(|s| project_file(servers, &s.name).is_some())
        .collect();
    if project.is_empty() {
        return Ok(Vec::new());
    }
    let store = store()?;
    Ok(project
        .into_iter()
        .filter_map(|server| {
            let file = project_file(servers, &server.name)?.to_path_buf();
            let state = store.state(&file, server);
            (state != TrustState::Trusted).then(|| Held {
                name: server.name.clone(),
                shadows: servers.origins[&server.name]
                    .iter()
                    .find(|o| !o.project)
                    .map(|o| o.file.clone()),
                file,
                state,
            })
        })
        .collect())
}

impl Session {
    pub(crate) fn project_file(&self, name: &str) -> Option<&Path> {
        project_file(&self.servers, name)
    }
    /// Whether `name` is a project's server (it needs trust to start).
    pub(crate) fn is_project_server(&self, name: &str) -> bool {
        self.project_file(name).is_some()
    }
    /// The project servers of `config` that may not start now.
    pub(crate) fn held(&self, config: &Config) -> Result<Vec<Held>, Failure> {
        held(&self.servers, config)
    }
    /// Takes out of `config` the project servers that may not start, saying
    /// so on stderr, one line each (a list of every server goes on without them).
    pub(crate) fn leave_out_held(&self, config: &mut Config) -> Result<Vec<Held>, Failure> {
        let held = self.held(config)?;
        config.retain(|name| !held.iter().any(|h| h.name == name));
        Ok(held)
    }
    /// Whether the one server `name` of `config` may start: a project server
    /// not trusted as it is now is asked about on a terminal (and trusted on
    /// a yes), refused elsewhere.
    pub(crate) fn may_start(&self, config: &Config, name: &str) -> Result<(), Failure> {
        let Some(held) = self.held(config)?.into_iter().find(|h| h.name == name) else {
            return Ok(());
        };
        let server = config.server(name).expect("held servers are configured");
        if terminal::interactive(self.cli.no_input) && !self.cli.json && held.shadows.is_none() {
            if ask(&held, server) {
                let mut store = store()?;
                store.trust(&held.file, server);
                store.save().map_err(|e| Failure::config(e.to_string()))?;
                return Ok(());
            }
            return Err(refusal(&held, server, "nothing was started"));
        }
        Err(refusal(&held, server, ""))
    }
}

/// Asks on the terminal whether to trust `held`; true on a yes.
fn ask(held: &Held, server: &ServerConfig) -> bool {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "The project file {} wants to start the server {:?}:",
        held.file.display(),
        held.name
    );
    let _ = writeln!(err, "  command: {}", command_line(server));
    if let Some(line) = crate::reach::fetch_line(server) {
        let _ = writeln!(err, "  fetches: {line}");
    }
    let cwd = server.cwd.as_ref().map_or_else(
        || "the current directory".to_owned(),
        |d| d.display().to_string(),
    );
    let _ = writeln!(err, "  cwd:     {cwd}");
    let names: Vec<&str> = server.env.iter().map(|(k, _)| k.as_str()).collect();
    if !names.is_empty() {
        let _ = writeln!(err, "  env:     {}", names.join(", "));
    }
    for line in crate::reach::rule_lines(server) {
        let _ = writeln!(err, "  sandbox: {line}");
    }
    if let TrustState::Changed(parts) = &held.state {
        let _ = writeln!(err, "  changed since you trusted it: {}", parts.join(", "));
    }
    let _ = writeln!(err, "{}", crate::reach::risk(server));
    let _ = write!(err, "Trust it and start it? [y/N] ");
    let _ = err.flush();
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    matches!(answer.trim().to_lowercase().as_str(), "y" | "yes")
}

/// The failure of a command that needed `held`, which may not start.
fn refusal(held: &Held, server: &ServerConfig, lead: &str) -> Failure {
    let name = &held.name;
    let why = match (&held.state, &held.shadows) {
        (_, Some(user)) => format!(
            "server {name:?} is defined by the project file {} ({}) and by your own {}; the project's is used, and it is {}",
            held.file.display(),
            held.state,
            user.display(),
            held.state
        ),
        (TrustState::Changed(parts), None) => format!(
            "server {name:?} of the project file {} changed since you trusted it ({})",
            held.file.display(),
            parts.join(", ")
        ),
        _ => format!(
            "server {name:?} of the project file {} is untrusted: a project's servers start only once you trust them",
            held.file.display()
        ),
    };
    let lead = if lead.is_empty() {
        String::new()
    } else {
        format!("{lead}: ")
    };
    Failure {
        code: USAGE,
        kind: "untrusted".into(),
        message: format!(
            "{lead}{why}\n  command: {}\n  to trust it as it is now: stdio-mcp trust {name}",
            command_line(server)
        ),
        server: Some(name.clone()),
        printed: false,
    }
}

/// The server's command line, each word quoted for a POSIX shell where it
/// needs it, untruncated.
pub(crate) fn command_line(server: &ServerConfig) -> String {
    std::iter::once(&server.command)
        .chain(&server.args)
        .map(|word| shell_quote(word))
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::shell_quote;

    #[test]
    fn words_are_quoted_only_where_a_shell_needs_it() {
        assert_eq!(shell_quote("mcp-server-git"), "mcp-server-git");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("$(rm -rf ~)"), "'$(rm -rf ~)'");
    }
}
