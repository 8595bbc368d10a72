//! MCP server configurations in the JSON shapes hosts already use, as
//! ready-to-spawn [`TransportBuilder`]s.
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
use std::sync::Arc;

use crate::builder::TransportBuilder;
use crate::transport::Transport;

pub(crate) mod error;

mod code;
mod fingerprint;
mod jsonc;
mod launcher;
mod parse;
mod sandbox;
mod substitute;
mod trust;
mod warning;

pub use error::ConfigError;
pub(crate) use fingerprint::sha256;
pub use fingerprint::LaunchFingerprint;
pub use launcher::Fetched;
pub use trust::{TrustError, TrustState, TrustStore};
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
    errors: Vec<ConfigError>,
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
    /// `"trust": true`: the host believes what this server claims of its
    /// tools ([`ClientBuilder::trusted`](crate::client::ClientBuilder::trusted));
    /// `false` when absent.
    pub trust: bool,
    /// `"sandboxEnabled": true`: the rules of its `sandbox` key (none: the
    /// strictest), which [`builder`](Self::builder) starts it under.
    pub sandbox: Option<crate::sandbox::Sandbox>,
    /// The digest of `envFile`'s content as read, for the launch fingerprint.
    pub(crate) env_file_digest: Option<String>,
    /// The files of its project folder it runs (`./server.js`), each with
    /// the digest of its content, likewise.
    pub(crate) code_digests: std::collections::BTreeMap<String, String>,
    /// The entry's `sandboxEnabled` and `sandbox` keys as written, likewise.
    pub(crate) sandbox_keys: Option<serde_json::Value>,
}

/// A configured server as a transport builder (see [`ServerConfig::builder`]).
///
/// # Examples
///
/// ```no_run
/// # futures::executor::block_on(async {
/// let config = stdio_mcp::config::Config::load(".mcp.json")?;
/// let client = stdio_mcp::client::Client::connect(&config.servers()[0]).await?;
/// # Ok::<(), Box<dyn std::error::Error>>(()) });
/// ```
impl From<&ServerConfig> for TransportBuilder {
    fn from(server: &ServerConfig) -> Self {
        server.builder()
    }
}

/// A configured server as a transport builder (see [`ServerConfig::builder`]).
///
/// # Examples
///
/// ```
/// let config = stdio_mcp::config::Config::parse(r#"{"mcpServers": {"t": {"command": "t"}}}"#)?;
/// let builder = stdio_mcp::TransportBuilder::from(config.servers()[0].clone());
/// # let _ = builder;
/// # Ok::<(), stdio_mcp::config::ConfigError>(())
/// ```
impl From<ServerConfig> for TransportBuilder {
    fn from(server: ServerConfig) -> Self {
        server.builder()
    }
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
    /// use stdio_mcp::config::Config;
    ///
    /// let config = Config::load("claude_desktop_config.json")?;
    /// let server = config.server("filesystem").ok_or("no filesystem server")?;
    /// let transport = server.builder().on_stderr(|line| eprintln!("[filesystem] {line}"));
    /// let client = stdio_mcp::client::Client::connect(transport).await?;
    /// # Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    pub fn builder(&self) -> TransportBuilder {
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
        if let Some(sandbox) = &self.sandbox {
            builder = builder.sandbox(sandbox.clone());
        }
        builder.attachment = Some(Arc::new(Configured {
            name: self.name.clone(),
            trust: self.trust,
        }));
        builder
    }
}

/// What a builder made from a config entry carries for the client: the
/// entry's name, which it calls the server by in its errors, and its trust.
struct Configured {
    name: String,
    trust: bool,
}

fn configured(builder: &TransportBuilder) -> Option<&Configured> {
    builder.attachment.as_deref()?.downcast_ref::<Configured>()
}

/// The name of the config entry `builder` was made from, if it was.
pub(crate) fn configured_name(builder: &TransportBuilder) -> Option<&str> {
    Some(&configured(builder)?.name)
}

/// Whether the config entry `builder` was made from says `"trust": true`.
pub(crate) fn configured_trust(builder: &TransportBuilder) -> bool {
    configured(builder).is_some_and(|entry| entry.trust)
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
        let place = substitute::Place::new(file, &env);
        let mut config = parse::parse_document(text, &place).map_err(|e| e.in_file(file))?;
        config.errors = config.errors.into_iter().map(|e| e.in_file(file)).collect();
        Ok(config)
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

    /// The entries that could not be read (a missing `command`, a value of
    /// the wrong type, a variable that is not set…), in name order: each
    /// fails alone, [`servers`](Self::servers) leaves it out, and the rest
    /// of the file serves. A key that looks like a typo of a missing field
    /// is named in its error (`comand` → `command`).
    ///
    /// # Examples
    ///
    /// ```
    /// use stdio_mcp::config::Config;
    ///
    /// let config = Config::parse(r#"{"mcpServers": {
    ///     "good": {"command": "mcp-good"},
    ///     "typo": {"comand": "mcp-typo"}
    /// }}"#)?;
    /// assert_eq!(config.servers().len(), 1);
    /// assert_eq!(config.errors()[0].server(), Some("typo"));
    /// assert_eq!(
    ///     config.errors()[0].to_string(),
    ///     "server \"typo\", field command: missing (a stdio server needs its program): \
    ///      unknown key \"comand\" (did you mean \"command\"?)"
    /// );
    /// # Ok::<(), stdio_mcp::config::ConfigError>(())
    /// ```
    #[must_use]
    pub fn errors(&self) -> &[ConfigError] {
        &self.errors
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

    /// Adds the entries of `other` whose names this configuration does not
    /// have yet (servers, skipped entries, entries that could not be read,
    /// and their warnings): the first file that defines a name keeps it, as
    /// hosts that read several files do.
    ///
    /// # Examples
    ///
    /// ```
    /// use stdio_mcp::config::Config;
    ///
    /// let mut project = Config::parse(r#"{"mcpServers": {"time": {"command": "time-v2"}}}"#)?;
    /// let user = Config::parse(r#"{"mcpServers": {"time": {"command": "time-v1"}, "git": {"command": "git-mcp"}}}"#)?;
    /// project.merge(user);
    /// let servers: Vec<(&str, &str)> =
    ///     project.servers().iter().map(|s| (s.name.as_str(), s.command.as_str())).collect();
    /// assert_eq!(servers, [("git", "git-mcp"), ("time", "time-v2")]);
    /// # Ok::<(), stdio_mcp::config::ConfigError>(())
    /// ```
    pub fn merge(&mut self, other: Config) {
        let known: std::collections::HashSet<String> = self.names().map(str::to_owned).collect();
        let new = |name: &str| !known.contains(name);
        self.servers
            .extend(other.servers.into_iter().filter(|s| new(&s.name)));
        self.skipped
            .extend(other.skipped.into_iter().filter(|s| new(&s.name)));
        self.errors.extend(
            other
                .errors
                .into_iter()
                .filter(|e| e.server().is_some_and(new)),
        );
        self.warnings
            .extend(other.warnings.into_iter().filter(|w| new(&w.server)));
        self.servers.sort_by(|a, b| a.name.cmp(&b.name));
        self.skipped.sort_by(|a, b| a.name.cmp(&b.name));
        self.errors.sort_by(|a, b| a.server().cmp(&b.server()));
    }

    /// Every name the configuration defines: servers, skipped entries and
    /// entries that could not be read.
    ///
    /// # Examples
    ///
    /// ```
    /// let config = stdio_mcp::config::Config::parse(r#"{"mcpServers": {"a": {"command": "x"}, "b": {"url": "https://b"}}}"#)?;
    /// assert_eq!(config.names().collect::<Vec<_>>(), ["a", "b"]);
    /// # Ok::<(), stdio_mcp::config::ConfigError>(())
    /// ```
    pub fn names(&self) -> impl Iterator<Item = &str> {
        let servers = self.servers.iter().map(|s| s.name.as_str());
        let skipped = self.skipped.iter().map(|s| s.name.as_str());
        let errors = self.errors.iter().filter_map(ConfigError::server);
        servers.chain(skipped).chain(errors)
    }

    /// Keeps only the entries whose name `keep` accepts (a host that starts
    /// one server of a file, say).
    ///
    /// # Examples
    ///
    /// ```
    /// use stdio_mcp::config::Config;
    ///
    /// let mut config = Config::parse(r#"{"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}}"#)?;
    /// config.retain(|name| name == "b");
    /// assert_eq!(config.servers()[0].name, "b");
    /// assert_eq!(config.servers().len(), 1);
    /// # Ok::<(), stdio_mcp::config::ConfigError>(())
    /// ```
    pub fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        self.servers.retain(|s| keep(&s.name));
        self.skipped.retain(|s| keep(&s.name));
        self.errors.retain(|e| e.server().is_some_and(&mut keep));
        self.warnings.retain(|w| keep(&w.server));
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
