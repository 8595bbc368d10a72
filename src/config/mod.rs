//! MCP server configurations in the JSON shapes hosts already use, as
//! ready-to-spawn [`Builder`]s.
//!
//! Two shapes are read, in the same file or not:
//!
//! - `{"mcpServers": {"NAME": {"command": "...", "args": [...], "env": {...}, "cwd": "..."}}}`:
//!   Claude Desktop's `claude_desktop_config.json`, `.mcp.json` (Claude Code,
//!   Copilot), Cursor's `mcp.json` and most other hosts;
//! - `{"servers": {"NAME": {"type": "stdio", "command": "...", ...}}, "inputs": [...]}`:
//!   VS Code's `mcp.json` (comments and trailing commas allowed, as VS Code does;
//!   `envFile` read too).
//!
//! Entries of another transport (`"type": "http"`, `"sse"`, …, or a `"url"`
//! without a `"command"`) and entries with `"disabled": true` are listed in
//! [`Config::skipped`], not errors. Any other field a host adds is ignored.
//!
//! In `command`, `args`, `env` values, `envFile` and `cwd`, these are
//! substituted: `${VAR}` and `${VAR:-default}` (Claude Code's forms),
//! `${env:VAR}` (VS Code's and Cursor's), `${userHome}`, and `${workspaceFolder}`
//! (the folder holding the file, or its parent when the file sits in
//! `.vscode/` or `.cursor/`). A variable that is not set and has no default is
//! an error, as is `${input:…}` (a VS Code prompt) or a variable inside a
//! default: a server never receives a literal `${…}`. A bare `$VAR` is left as
//! it is (no host expands it). A relative `cwd` or `envFile` is taken from the
//! file's folder.
//!
//! # Examples
//!
//! ```no_run
//! # futures::executor::block_on(async {
//! use stdio_mcp::client::Client;
//! use stdio_mcp::config::Config;
//!
//! let config = Config::load(".mcp.json")?;
//! for skipped in config.skipped() {
//!     println!("{}: skipped ({})", skipped.name, skipped.reason);
//! }
//! for server in config.servers() {
//!     let client = Client::connect(server.builder()).await?;
//!     println!("{}: {} tools", server.name, client.list_tools().await?.len());
//!     client.close().await?;
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(()) });
//! ```

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::builder::Builder;
use crate::transport::Transport;

pub(crate) mod error;

mod warning;

pub use error::ConfigError;
pub use warning::ConfigWarning;

/// The stdio servers of a configuration file, and the entries left aside.
///
/// # Examples
///
/// ```
/// use stdio_mcp::config::Config;
///
/// let config = Config::parse(r#"{"mcpServers": {
///     "time": {"command": "uvx", "args": ["mcp-server-time"]},
///     "remote": {"type": "http", "url": "https://example.com/mcp"}
/// }}"#)?;
/// assert_eq!(config.servers()[0].name, "time");
/// assert_eq!(config.skipped()[0].name, "remote");
/// # Ok::<(), stdio_mcp::config::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Config {
    servers: Vec<ServerConfig>,
    skipped: Vec<Skipped>,
    warnings: Vec<ConfigWarning>,
}

/// One stdio server of a configuration, after substitution.
///
/// # Examples
///
/// ```
/// use stdio_mcp::config::Config;
///
/// let config = Config::parse(r#"{"mcpServers": {"git": {"command": "uvx", "args": ["mcp-server-git"]}}}"#)?;
/// let git = config.server("git").unwrap();
/// assert_eq!((git.command.as_str(), git.args.as_slice()), ("uvx", &["mcp-server-git".to_owned()][..]));
/// let transport = git.builder(); // spawn it, or hand it to Client::connect
/// # let _ = transport;
/// # Ok::<(), stdio_mcp::config::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerConfig {
    /// The name the file gives it.
    pub name: String,
    /// The program to run.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Environment changes, in order: `Some` sets the variable, `None`
    /// (a `null` in the file) removes it. `envFile`'s come first.
    pub env: Vec<(String, Option<String>)>,
    /// The working directory, if the file sets one.
    pub cwd: Option<PathBuf>,
    /// `includeTools`: glob patterns (`*`, `?`) of the tools a
    /// [`Group`](crate::group::Group) offers of this server; `None` for all.
    pub include_tools: Option<Vec<String>>,
    /// `excludeTools`: glob patterns of tools a group neither lists nor calls.
    pub exclude_tools: Vec<String>,
    /// Whether the server gets this process's whole environment (`false`
    /// unless [`Config::inherit_environment`] said so): see
    /// [`builder`](Self::builder).
    pub inherit_environment: bool,
}

/// The variables a configured server gets from this process's environment,
/// as the MCP SDKs give them: enough to find programs and a home, nothing
/// else (no API key or token the host holds for itself).
#[cfg(not(windows))]
pub const INHERITED_VARIABLES: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// The variables a configured server gets from this process's environment,
/// as the MCP SDKs give them (with `PATHEXT`, so that `npx` finds `npx.cmd`).
#[cfg(windows)]
pub const INHERITED_VARIABLES: &[&str] = &[
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PATHEXT",
    "PROCESSOR_ARCHITECTURE",
    "PROGRAMFILES",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "USERNAME",
    "USERPROFILE",
];

impl ServerConfig {
    /// A transport builder that starts this server; set timeouts or handlers
    /// on it before spawning.
    ///
    /// The server's environment is what hosts give theirs: the variables of
    /// [`INHERITED_VARIABLES`] this process has, then the entry's `envFile`
    /// and `env`; never the rest of this process's environment (which would
    /// hand every server the host's own keys and tokens), unless
    /// [`Config::inherit_environment`] asked for it.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use std::time::Duration;
    /// use stdio_mcp::config::Config;
    ///
    /// let config = Config::load("claude_desktop_config.json")?;
    /// let server = config.server("filesystem").ok_or("no filesystem server")?;
    /// let client = stdio_mcp::client::Client::connect(server.builder().timeout(Duration::from_secs(30))).await?;
    /// # Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    pub fn builder(&self) -> Builder {
        let mut builder = Transport::builder(std::iter::once(&self.command).chain(&self.args));
        if !self.inherit_environment {
            builder = builder.env_clear();
            for name in INHERITED_VARIABLES {
                // A bash function exported as a variable is no value to pass on.
                match std::env::var_os(name) {
                    Some(value) if !value.to_string_lossy().starts_with("()") => {
                        builder = builder.env(name, value);
                    }
                    _ => {}
                }
            }
        }
        for (key, value) in &self.env {
            builder = match value {
                Some(value) => builder.env(key, value),
                None => builder.env_remove(key),
            };
        }
        if let Some(dir) = &self.cwd {
            builder = builder.cwd(dir);
        }
        builder.name = Some(self.name.clone());
        builder
    }
}

/// An entry that is not a stdio server, and why it was left aside.
///
/// # Examples
///
/// ```
/// let config = stdio_mcp::config::Config::parse(
///     r#"{"servers": {"docs": {"type": "sse", "url": "https://example.com/sse"}}}"#,
/// )?;
/// assert_eq!(config.skipped()[0].reason, "type \"sse\" is not stdio");
/// # Ok::<(), stdio_mcp::config::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Skipped {
    /// The entry's name.
    pub name: String,
    /// Why: its transport type, its URL, or `disabled`.
    pub reason: String,
}

impl Config {
    /// Reads and parses the file at `path`, substituting from this process's
    /// environment.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the file (and the server and field) when it
    /// cannot be read, is not JSON, or an entry is malformed.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let config = stdio_mcp::config::Config::load(".vscode/mcp.json")?;
    /// # Ok::<(), stdio_mcp::config::ConfigError>(())
    /// ```
    pub fn load(path: impl AsRef<Path>) -> Result<Config, ConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| {
            ConfigError::new(None, None, format!("cannot read it: {e}")).in_file(Some(path))
        })?;
        Config::parse_with(&text, Some(path), |name| std::env::var(name).ok())
    }

    /// Parses configuration text, substituting from this process's
    /// environment (relative paths stay relative to the current directory).
    ///
    /// # Errors
    ///
    /// As for [`load`](Self::load), without a file name.
    ///
    /// # Examples
    ///
    /// ```
    /// let config = stdio_mcp::config::Config::parse(r#"{"mcpServers": {}}"#)?;
    /// assert!(config.servers().is_empty());
    /// # Ok::<(), stdio_mcp::config::ConfigError>(())
    /// ```
    pub fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse_with(text, None, |name| std::env::var(name).ok())
    }

    /// Parses configuration text that came from `file` (for relative paths,
    /// `${workspaceFolder}` and error messages), looking variables up with `env`.
    ///
    /// # Errors
    ///
    /// As for [`load`](Self::load).
    ///
    /// # Examples
    ///
    /// ```
    /// use stdio_mcp::config::Config;
    ///
    /// let text = r#"{"mcpServers": {"gh": {"command": "gh-mcp", "env": {"TOKEN": "${GH_TOKEN}"}}}}"#;
    /// let config = Config::parse_with(text, None, |name| (name == "GH_TOKEN").then(|| "t0k".to_owned()))?;
    /// assert_eq!(config.servers()[0].env, [("TOKEN".to_owned(), Some("t0k".to_owned()))]);
    /// # Ok::<(), stdio_mcp::config::ConfigError>(())
    /// ```
    pub fn parse_with(
        text: &str,
        file: Option<&Path>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        let place = Place::new(file, &env);
        parse_document(text, &place).map_err(|e| e.in_file(file))
    }

    /// The stdio servers, in name order.
    ///
    /// # Examples
    ///
    /// ```
    /// let config = stdio_mcp::config::Config::parse(r#"{"mcpServers": {"b": {"command": "b"}, "a": {"command": "a"}}}"#)?;
    /// let names: Vec<&str> = config.servers().iter().map(|s| s.name.as_str()).collect();
    /// assert_eq!(names, ["a", "b"]);
    /// # Ok::<(), stdio_mcp::config::ConfigError>(())
    /// ```
    #[must_use]
    pub fn servers(&self) -> &[ServerConfig] {
        &self.servers
    }

    /// The stdio server named `name`, if there is one.
    ///
    /// # Examples
    ///
    /// ```
    /// let config = stdio_mcp::config::Config::parse(r#"{"mcpServers": {"a": {"command": "a"}}}"#)?;
    /// assert!(config.server("a").is_some() && config.server("b").is_none());
    /// # Ok::<(), stdio_mcp::config::ConfigError>(())
    /// ```
    #[must_use]
    pub fn server(&self, name: &str) -> Option<&ServerConfig> {
        self.servers.iter().find(|s| s.name == name)
    }

    /// The entries that are not stdio servers (or are disabled), in name order.
    ///
    /// # Examples
    ///
    /// ```
    /// let config = stdio_mcp::config::Config::parse(r#"{"mcpServers": {"off": {"command": "x", "disabled": true}}}"#)?;
    /// assert_eq!(config.skipped()[0].reason, "disabled");
    /// # Ok::<(), stdio_mcp::config::ConfigError>(())
    /// ```
    #[must_use]
    pub fn skipped(&self) -> &[Skipped] {
        &self.skipped
    }

    /// What the file says that is ignored: keys of a stdio server's entry this
    /// crate does not know (keys other hosts use, such as `url` or
    /// `autoApprove`, are not listed), each with the key it is likely a typo
    /// of. A host shows them; loading never fails for them.
    ///
    /// # Examples
    ///
    /// ```
    /// use stdio_mcp::config::Config;
    ///
    /// let config = Config::parse(r#"{"mcpServers": {"fs": {"command": "mcp-fs", "evn": {"A": "1"}}}}"#)?;
    /// for warning in config.warnings() {
    ///     eprintln!("warning: {warning}");
    /// }
    /// assert_eq!(config.warnings()[0].suggestion.as_deref(), Some("env"));
    /// # Ok::<(), stdio_mcp::config::ConfigError>(())
    /// ```
    #[must_use]
    pub fn warnings(&self) -> &[ConfigWarning] {
        &self.warnings
    }

    /// Gives every server of this file this process's whole environment
    /// (plus its entry's `env`), as a shell would, instead of the few
    /// variables of [`INHERITED_VARIABLES`]. For a host that knows its
    /// environment holds nothing a server must not see.
    ///
    /// # Examples
    ///
    /// ```
    /// use stdio_mcp::config::Config;
    ///
    /// let config = Config::parse(r#"{"mcpServers": {"fs": {"command": "mcp-fs"}}}"#)?
    ///     .inherit_environment(true);
    /// assert!(config.servers()[0].inherit_environment);
    /// # Ok::<(), stdio_mcp::config::ConfigError>(())
    /// ```
    #[must_use]
    pub fn inherit_environment(mut self, inherit: bool) -> Self {
        for server in &mut self.servers {
            server.inherit_environment = inherit;
        }
        self
    }
}

/// Where the text came from, and how variables are found.
struct Place<'a> {
    /// The folder relative paths are taken from.
    dir: Option<PathBuf>,
    workspace: Option<PathBuf>,
    env: &'a dyn Fn(&str) -> Option<String>,
}

impl<'a> Place<'a> {
    fn new(file: Option<&Path>, env: &'a dyn Fn(&str) -> Option<String>) -> Self {
        let dir = file.map(|f| match f.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        });
        let workspace = dir.as_ref().map(|d| {
            let hidden = d
                .file_name()
                .is_some_and(|n| n == ".vscode" || n == ".cursor");
            match d.parent() {
                Some(parent) if hidden && !parent.as_os_str().is_empty() => parent.to_path_buf(),
                Some(_) if hidden => PathBuf::from("."),
                _ => d.clone(),
            }
        });
        Place {
            dir,
            workspace,
            env,
        }
    }

    fn resolve(&self, path: &str) -> PathBuf {
        let path = PathBuf::from(path);
        match &self.dir {
            Some(dir) if path.is_relative() => dir.join(path),
            _ => path,
        }
    }
}

fn parse_document(text: &str, place: &Place<'_>) -> Result<Config, ConfigError> {
    let document: Value = serde_json::from_str(&strip_jsonc(text))
        .map_err(|e| ConfigError::new(None, None, format!("not valid JSON: {e}")))?;
    let Value::Object(top) = document else {
        return Err(ConfigError::new(
            None,
            None,
            "the top level must be an object with \"mcpServers\" or \"servers\"",
        ));
    };
    let mut config = Config::default();
    let mut found = false;
    for key in ["mcpServers", "servers"] {
        let Some(entries) = top.get(key) else {
            continue;
        };
        found = true;
        let Value::Object(entries) = entries else {
            return Err(ConfigError::new(
                None,
                Some(key),
                "must be an object of named servers",
            ));
        };
        for (name, entry) in entries {
            if config.server(name).is_some() || config.skipped.iter().any(|s| &s.name == name) {
                return Err(ConfigError::new(
                    Some(name),
                    None,
                    "defined under both \"mcpServers\" and \"servers\"",
                ));
            }
            match parse_entry(name, entry, place, &mut config.warnings)? {
                Entry::Stdio(server) => config.servers.push(server),
                Entry::Skipped(reason) => config.skipped.push(Skipped {
                    name: name.clone(),
                    reason,
                }),
            }
        }
    }
    if !found {
        return Err(ConfigError::new(
            None,
            None,
            "no \"mcpServers\" or \"servers\" object at the top level",
        ));
    }
    config.servers.sort_by(|a, b| a.name.cmp(&b.name));
    config.skipped.sort_by(|a, b| a.name.cmp(&b.name));
    config
        .warnings
        .sort_by(|a, b| (&a.server, &a.key).cmp(&(&b.server, &b.key)));
    Ok(config)
}

enum Entry {
    Stdio(ServerConfig),
    Skipped(String),
}

fn parse_entry(
    name: &str,
    entry: &Value,
    place: &Place<'_>,
    warnings: &mut Vec<ConfigWarning>,
) -> Result<Entry, ConfigError> {
    let fail = |field: &str, message: String| ConfigError::new(Some(name), Some(field), message);
    let expand = |field: &str, text: &str| substitute(text, place).map_err(|m| fail(field, m));
    let Value::Object(entry) = entry else {
        return Err(ConfigError::new(
            Some(name),
            None,
            format!("must be an object, not {}", kind(entry)),
        ));
    };
    // A field that is absent or null is `None`; one of another type an error.
    let field = |key: &str, wanted: &str, fits: fn(&Value) -> bool| match entry.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) if fits(value) => Ok(Some(value)),
        Some(other) => Err(fail(key, format!("must be {wanted}, not {}", kind(other)))),
    };
    let string = |key: &str| Ok(field(key, "a string", Value::is_string)?.and_then(Value::as_str));
    if entry.get("disabled") == Some(&Value::Bool(true)) {
        return Ok(Entry::Skipped("disabled".into()));
    }
    match string("type")? {
        None | Some("stdio") => {}
        Some(other) => return Ok(Entry::Skipped(format!("type {other:?} is not stdio"))),
    }
    let command = match string("command")? {
        Some(c) if c.trim().is_empty() => return Err(fail("command", "is empty".into())),
        Some(c) => expand("command", c)?,
        None if entry.contains_key("url") => {
            return Ok(Entry::Skipped("a url: not a stdio server".into()))
        }
        None => {
            return Err(fail(
                "command",
                "missing (a stdio server needs its program)".into(),
            ))
        }
    };
    // A stdio server (others are skipped above): what it says that is not read.
    warnings.extend(warning::unknown_keys(name, entry));
    let mut args = Vec::new();
    let items = field("args", "an array of strings", Value::is_array)?;
    for (i, item) in items
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let key = format!("args[{i}]");
        let Value::String(arg) = item else {
            return Err(fail(&key, format!("must be a string, not {}", kind(item))));
        };
        args.push(expand(&key, arg)?);
    }
    let mut env = Vec::new();
    if let Some(file) = string("envFile")? {
        let file = place.resolve(&expand("envFile", file)?);
        env.extend(read_env_file(&file).map_err(|m| fail("envFile", m))?);
    }
    if let Some(vars) = field("env", "an object", Value::is_object)?.and_then(Value::as_object) {
        env.extend(parse_env(vars, place, &fail)?);
    }
    let patterns = |key: &str| -> Result<Option<Vec<String>>, ConfigError> {
        let Some(items) = field(key, "an array of strings", Value::is_array)? else {
            return Ok(None);
        };
        let mut patterns = Vec::new();
        for (i, item) in items.as_array().into_iter().flatten().enumerate() {
            let Value::String(pattern) = item else {
                return Err(fail(
                    &format!("{key}[{i}]"),
                    format!("must be a string, not {}", kind(item)),
                ));
            };
            patterns.push(pattern.clone());
        }
        Ok(Some(patterns))
    };
    let include_tools = patterns("includeTools")?;
    let exclude_tools = patterns("excludeTools")?;
    let cwd = match string("cwd")? {
        Some(dir) => Some(place.resolve(&expand("cwd", dir)?)),
        None => None,
    };
    Ok(Entry::Stdio(ServerConfig {
        name: name.to_owned(),
        command,
        args,
        env,
        cwd,
        include_tools,
        exclude_tools: exclude_tools.unwrap_or_default(),
        inherit_environment: false,
    }))
}

fn parse_env(
    vars: &Map<String, Value>,
    place: &Place<'_>,
    fail: &dyn Fn(&str, String) -> ConfigError,
) -> Result<Vec<(String, Option<String>)>, ConfigError> {
    let mut env = Vec::new();
    for (key, value) in vars {
        let field = format!("env.{key}");
        let value = match value {
            Value::Null => None,
            Value::String(v) => Some(substitute(v, place).map_err(|m| fail(&field, m))?),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            other => {
                return Err(fail(
                    &field,
                    format!("must be a string, not {}", kind(other)),
                ))
            }
        };
        env.push((key.clone(), value));
    }
    Ok(env)
}

/// `KEY=VALUE` lines; `#` comments, blank lines, `export ` and quotes allowed.
fn read_env_file(path: &Path) -> Result<Vec<(String, Option<String>)>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut env = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((key, value)) = line.split_once('=') else {
            return Err(format!(
                "{} line {}: expected KEY=VALUE",
                path.display(),
                n + 1
            ));
        };
        let value = value.trim();
        let unquoted = ['"', '\'']
            .iter()
            .find_map(|q| value.strip_prefix(*q)?.strip_suffix(*q))
            .unwrap_or(value);
        env.push((key.trim().to_owned(), Some(unquoted.to_owned())));
    }
    Ok(env)
}

/// `text` with every `${…}` replaced, or why one cannot be.
fn substitute(text: &str, place: &Place<'_>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("unterminated ${{ in {text:?}"));
        };
        out.push_str(&variable(&after[..end], place)?);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn variable(inside: &str, place: &Place<'_>) -> Result<String, String> {
    let lookup = |name: &str| (place.env)(name);
    if let Some(name) = inside.strip_prefix("env:") {
        return lookup(name).ok_or_else(|| format!("environment variable {name} is not set"));
    }
    if let Some(id) = inside.strip_prefix("input:") {
        return Err(format!(
            "${{input:{id}}} is a prompt of VS Code's; give the value in the file or as ${{env:NAME}}"
        ));
    }
    match inside {
        "userHome" => {
            return lookup("HOME")
                .or_else(|| lookup("USERPROFILE"))
                .ok_or_else(|| "${userHome}: neither HOME nor USERPROFILE is set".to_owned())
        }
        "workspaceFolder" => {
            return place
                .workspace
                .as_ref()
                .map(|w| w.display().to_string())
                .ok_or_else(|| {
                    "${workspaceFolder} needs the file's location (Config::load or parse_with)"
                        .to_owned()
                })
        }
        _ => {}
    }
    let (name, default) = match inside.split_once(":-") {
        Some((name, default)) if default.contains("${") => {
            return Err(format!(
                "a variable inside the default of ${{{name}:-…}} is not supported"
            ))
        }
        Some((name, default)) => (name, Some(default)),
        None => (inside, None),
    };
    let valid = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !valid {
        return Err(format!("unknown variable ${{{inside}}}"));
    }
    match (lookup(name), default) {
        (Some(value), _) => Ok(value),
        (None, Some(default)) => Ok(default.to_owned()),
        (None, None) => Err(format!(
            "environment variable {name} is not set (write ${{{name}:-default}} for a fallback)"
        )),
    }
}

/// JSON with comments and trailing commas (VS Code's `mcp.json`) made plain
/// JSON; each removed character becomes a space, so error positions still hold.
fn strip_jsonc(text: &str) -> String {
    let mut out = text.as_bytes().to_vec();
    // Comments first, so that a comma before one is seen as trailing.
    let mut i = 0;
    while let Some((at, next)) = outside_strings(&out, i) {
        i = at + 1;
        let end = match (out[at], next) {
            (b'/', Some(b'/')) => out[at..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(out.len(), |p| at + p),
            (b'/', Some(b'*')) => text[at + 2..]
                .find("*/")
                .map_or(out.len(), |e| at + 2 + e + 2),
            _ => continue,
        };
        for byte in &mut out[at..end] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
        i = end;
    }
    let mut i = 0;
    while let Some((at, _)) = outside_strings(&out, i) {
        i = at + 1;
        if out[at] == b',' {
            let next = out[at + 1..].iter().find(|b| !b.is_ascii_whitespace());
            if matches!(next, Some(b'}' | b']')) {
                out[at] = b' ';
            }
        }
    }
    // Only ASCII bytes outside strings were replaced, by ASCII spaces.
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

/// The next byte at or after `from` that is outside a JSON string (and the
/// byte after it), skipping over strings.
fn outside_strings(bytes: &[u8], from: usize) -> Option<(usize, Option<u8>)> {
    let mut i = from;
    while i < bytes.len() {
        if bytes[i] == b'"' {
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            continue;
        }
        if !bytes[i].is_ascii_whitespace() {
            return Some((i, bytes.get(i + 1).copied()));
        }
        i += 1;
    }
    None
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
