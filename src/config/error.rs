//! Why a host configuration file cannot be read: which file, server and field.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// A configuration that cannot be used: which file, server and field, and why.
///
/// # Examples
///
/// ```
/// use stdio_mcp::config::Config;
///
/// // A whole file that cannot be read…
/// let e = Config::parse("[]").unwrap_err();
/// assert_eq!(e.to_string(), "the top level must be an object with \"mcpServers\" or \"servers\"");
/// // …and an entry that cannot, which fails alone.
/// let config = Config::parse(r#"{"mcpServers": {"git": {"args": ["x"]}}}"#)?;
/// let e = &config.errors()[0];
/// assert_eq!(e.to_string(), "server \"git\", field command: missing (a stdio server needs its program)");
/// assert_eq!((e.server(), e.field()), (Some("git"), Some("command")));
/// # Ok::<(), stdio_mcp::config::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    file: Option<PathBuf>,
    server: Option<String>,
    field: Option<String>,
    message: String,
}

impl ConfigError {
    pub(super) fn new(
        server: Option<&str>,
        field: Option<&str>,
        message: impl Into<String>,
    ) -> Self {
        ConfigError {
            file: None,
            server: server.map(str::to_owned),
            field: field.map(str::to_owned),
            message: message.into(),
        }
    }

    pub(super) fn in_file(mut self, file: Option<&Path>) -> Self {
        self.file = file.map(Path::to_path_buf);
        self
    }

    /// The file, when the configuration came from one.
    ///
    /// # Examples
    ///
    /// ```
    /// let e = stdio_mcp::config::Config::load("/no/such/mcp.json").unwrap_err();
    /// assert_eq!(e.file(), Some(std::path::Path::new("/no/such/mcp.json")));
    /// ```
    #[must_use]
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// The server entry at fault, if it is one entry's.
    ///
    /// # Examples
    ///
    /// ```
    /// let config = stdio_mcp::config::Config::parse(r#"{"mcpServers": {"a": 1}}"#)?;
    /// assert_eq!(config.errors()[0].server(), Some("a"));
    /// # Ok::<(), stdio_mcp::config::ConfigError>(())
    /// ```
    #[must_use]
    pub fn server(&self) -> Option<&str> {
        self.server.as_deref()
    }

    /// The field at fault, e.g. `args[1]` or `env.TOKEN`.
    ///
    /// # Examples
    ///
    /// ```
    /// let config = stdio_mcp::config::Config::parse(r#"{"mcpServers": {"a": {"command": "x", "args": [1]}}}"#)?;
    /// assert_eq!(config.errors()[0].field(), Some("args[0]"));
    /// # Ok::<(), stdio_mcp::config::ConfigError>(())
    /// ```
    #[must_use]
    pub fn field(&self) -> Option<&str> {
        self.field.as_deref()
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}: ", file.display())?;
        }
        if let Some(server) = &self.server {
            write!(f, "server {server:?}, ")?;
        }
        if let Some(field) = &self.field {
            write!(f, "field {field}: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}

/// What a JSON value is, as an error names it (`a string`, `an array`).
pub(super) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
