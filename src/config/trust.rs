//! The trust store: the project servers (a repository's config entries)
//! their user let start, each with the launch fingerprint it had then.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::fingerprint::LaunchFingerprint;
use super::ServerConfig;
use crate::sys;

/// The store's file name in its folder of the user's data directory.
const STORE_DIR: &str = "stdio-mcp";
const STORE_FILE: &str = "trust.json";
/// The shape of the store's file, written in it as `"version"`.
const VERSION: u64 = 1;

/// Whether a server entry may start, as the trust store sees it.
///
/// # Examples
///
/// ```
/// use stdio_mcp::config::TrustState;
///
/// let state = TrustState::Changed(vec!["args".into()]);
/// assert_eq!(state.to_string(), "changed since trusted (args)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TrustState {
    /// Trusted with exactly this launch definition.
    Trusted,
    /// Never trusted (or trust taken back).
    Untrusted,
    /// Trusted once, but what it launches changed since: these parts
    /// (`command`, `args`, `cwd`, `envFile`, `sandbox`, `env NAME`).
    Changed(Vec<String>),
}

impl fmt::Display for TrustState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrustState::Trusted => f.write_str("trusted"),
            TrustState::Untrusted => f.write_str("untrusted"),
            TrustState::Changed(parts) => {
                write!(f, "changed since trusted ({})", parts.join(", "))
            }
        }
    }
}

/// The trust store could not be read, parsed or written: nothing it would
/// have said is taken as trusted.
///
/// # Examples
///
/// ```
/// use stdio_mcp::config::TrustStore;
///
/// let error = TrustStore::from_text("/tmp/trust.json", "not json").unwrap_err();
/// assert!(error.to_string().starts_with("trust store /tmp/trust.json: is not JSON"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustError {
    /// The store's file.
    pub path: PathBuf,
    /// What went wrong.
    pub reason: String,
}

impl fmt::Display for TrustError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "trust store {}: {}", self.path.display(), self.reason)
    }
}

impl std::error::Error for TrustError {}

/// Which project servers their user trusted: one JSON file, keyed by the
/// config file's canonical path and the server's name, each with the
/// [`LaunchFingerprint`] it was trusted with. It holds digests, never a value.
///
/// A host asks [`state`](Self::state) before it starts a server that came
/// from a repository's config file (`./.mcp.json`, `./.vscode/mcp.json`,
/// `./.cursor/mcp.json`); the user's own files need no trust.
///
/// # Examples
///
/// ```no_run
/// use std::path::Path;
/// use stdio_mcp::config::{Config, TrustState, TrustStore};
///
/// let file = Path::new(".mcp.json");
/// let config = Config::load(file)?;
/// let mut store = TrustStore::open_default()?;
/// for server in config.servers() {
///     match store.state(file, server) {
///         TrustState::Trusted => println!("{}: may start", server.name),
///         other => println!("{}: {other}; ask the user first", server.name),
///     }
/// }
/// // After the user said yes to one:
/// store.trust(file, &config.servers()[0]);
/// store.save()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustStore {
    path: PathBuf,
    /// Config file (canonical) → server name → fingerprint trusted.
    files: BTreeMap<String, BTreeMap<String, LaunchFingerprint>>,
}

impl TrustStore {
    /// Where the store lives: `STDIO_MCP_TRUST` if set, else `trust.json` in
    /// `stdio-mcp/` of the user's data directory (`$XDG_DATA_HOME` or
    /// `~/.local/share`; macOS `~/Library/Application Support`; Windows
    /// `%APPDATA%`). `None` when there is no such directory.
    ///
    /// # Examples
    ///
    /// ```
    /// if let Some(path) = stdio_mcp::config::TrustStore::default_path() {
    ///     assert!(path.ends_with("trust.json") || std::env::var_os("STDIO_MCP_TRUST").is_some());
    /// }
    /// ```
    #[must_use]
    pub fn default_path() -> Option<PathBuf> {
        if let Some(path) = std::env::var_os("STDIO_MCP_TRUST") {
            return Some(PathBuf::from(path));
        }
        sys::user_data_dir().map(|dir| dir.join(STORE_DIR).join(STORE_FILE))
    }

    /// The store at [`default_path`](Self::default_path).
    ///
    /// # Errors
    ///
    /// As [`open`](Self::open); also when there is no data directory.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let store = stdio_mcp::config::TrustStore::open_default()?;
    /// println!("{}", store.path().display());
    /// # Ok::<(), stdio_mcp::config::TrustError>(())
    /// ```
    pub fn open_default() -> Result<TrustStore, TrustError> {
        let path = Self::default_path().ok_or_else(|| TrustError {
            path: PathBuf::from(STORE_FILE),
            reason: "no data directory to keep it in (set STDIO_MCP_TRUST)".into(),
        })?;
        Self::open(path)
    }

    /// The store in `path`: empty if the file does not exist yet.
    ///
    /// # Errors
    ///
    /// A file that cannot be read, is not JSON, or is JSON of another shape.
    ///
    /// # Examples
    ///
    /// ```
    /// let path = std::env::temp_dir().join("stdio-mcp-doc-trust-open.json");
    /// let _ = std::fs::remove_file(&path);
    /// let store = stdio_mcp::config::TrustStore::open(&path)?;
    /// assert_eq!(store.path(), path);
    /// # Ok::<(), stdio_mcp::config::TrustError>(())
    /// ```
    pub fn open(path: impl Into<PathBuf>) -> Result<TrustStore, TrustError> {
        let path = path.into();
        match std::fs::read_to_string(&path) {
            Ok(text) => Self::from_text(path, &text),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(TrustStore {
                path,
                files: BTreeMap::new(),
            }),
            Err(error) => Err(TrustError {
                path,
                reason: format!("cannot be read: {error}"),
            }),
        }
    }

    /// The store `text` holds, to be saved in `path`.
    ///
    /// # Errors
    ///
    /// `text` is not JSON, or JSON of another shape.
    ///
    /// # Examples
    ///
    /// ```
    /// use stdio_mcp::config::TrustStore;
    ///
    /// let store = TrustStore::from_text("t.json", r#"{"version": 1, "servers": {}}"#)?;
    /// let wrong = TrustStore::from_text("t.json", r#"{"version": 1, "servers": []}"#).unwrap_err();
    /// assert_eq!(wrong.reason, "is not a trust store: \"servers\" is not an object");
    /// # Ok::<(), stdio_mcp::config::TrustError>(())
    /// ```
    pub fn from_text(path: impl Into<PathBuf>, text: &str) -> Result<TrustStore, TrustError> {
        let path = path.into();
        let fail = |reason: String| TrustError {
            path: path.clone(),
            reason,
        };
        let value: Value =
            serde_json::from_str(text).map_err(|e| fail(format!("is not JSON: {e}")))?;
        let files =
            parse_store(&value).map_err(|what| fail(format!("is not a trust store: {what}")))?;
        Ok(TrustStore { path, files })
    }

    /// The file this store is read from and saved to.
    ///
    /// # Examples
    ///
    /// ```
    /// let store = stdio_mcp::config::TrustStore::from_text("/tmp/t.json", "{}")?;
    /// assert_eq!(store.path(), std::path::Path::new("/tmp/t.json"));
    /// # Ok::<(), stdio_mcp::config::TrustError>(())
    /// ```
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether `server`, an entry of config file `file`, is trusted with
    /// what it launches now.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::path::Path;
    /// use stdio_mcp::config::{Config, TrustState, TrustStore};
    ///
    /// let config = Config::parse(r#"{"mcpServers": {"t": {"command": "t"}}}"#)?;
    /// let mut store = TrustStore::from_text("/tmp/t.json", "{}")?;
    /// let file = Path::new("/nowhere/.mcp.json");
    /// assert_eq!(store.state(file, &config.servers()[0]), TrustState::Untrusted);
    /// store.trust(file, &config.servers()[0]);
    /// assert_eq!(store.state(file, &config.servers()[0]), TrustState::Trusted);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn state(&self, file: &Path, server: &ServerConfig) -> TrustState {
        let Some(trusted) = self
            .files
            .get(&file_key(file))
            .and_then(|servers| servers.get(&server.name))
        else {
            return TrustState::Untrusted;
        };
        let now = server.fingerprint();
        if now.digest() == trusted.digest() {
            TrustState::Trusted
        } else {
            TrustState::Changed(now.changes_since(trusted))
        }
    }

    /// Trusts `server` of `file` with what it launches now (in memory:
    /// [`save`](Self::save) keeps it).
    ///
    /// # Examples
    ///
    /// As for [`state`](Self::state).
    pub fn trust(&mut self, file: &Path, server: &ServerConfig) {
        self.files
            .entry(file_key(file))
            .or_default()
            .insert(server.name.clone(), server.fingerprint());
    }

    /// Takes back the trust in server `name` of `file`; whether there was any.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::path::Path;
    /// use stdio_mcp::config::{Config, TrustStore};
    ///
    /// let config = Config::parse(r#"{"mcpServers": {"t": {"command": "t"}}}"#)?;
    /// let mut store = TrustStore::from_text("/tmp/t.json", "{}")?;
    /// store.trust(Path::new("/p/.mcp.json"), &config.servers()[0]);
    /// assert!(store.untrust(Path::new("/p/.mcp.json"), "t"));
    /// assert!(!store.untrust(Path::new("/p/.mcp.json"), "t"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn untrust(&mut self, file: &Path, name: &str) -> bool {
        let key = file_key(file);
        let Some(servers) = self.files.get_mut(&key) else {
            return false;
        };
        let had = servers.remove(name).is_some();
        if servers.is_empty() {
            self.files.remove(&key);
        }
        had
    }

    /// Writes the store to its file, atomically (a new file beside it, then
    /// a rename), readable by its user alone (0600 on Unix, in a folder made
    /// 0700 if it was missing).
    ///
    /// # Errors
    ///
    /// The folder cannot be made, or the file written or renamed.
    ///
    /// # Examples
    ///
    /// ```
    /// let path = std::env::temp_dir().join("stdio-mcp-doc-trust-save").join("trust.json");
    /// let store = stdio_mcp::config::TrustStore::open(&path)?;
    /// store.save()?;
    /// assert!(path.exists());
    /// # std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), stdio_mcp::config::TrustError>(())
    /// ```
    pub fn save(&self) -> Result<(), TrustError> {
        let fail = |what: &str, path: &Path, error: std::io::Error| TrustError {
            path: self.path.clone(),
            reason: format!("cannot {what} {}: {error}", path.display()),
        };
        let dir = match self.path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        };
        sys::create_private_dir(&dir).map_err(|e| fail("make the folder", &dir, e))?;
        crate::replace_file::replace(&self.path, self.to_text().as_bytes(), true)
            .map_err(|e| fail(e.step, &e.temporary, e.error))
    }

    /// The text [`save`](Self::save) writes: JSON, `{"version": 1, "servers":
    /// {FILE: {NAME: {"digest": .., "parts": {..}}}}}`, which
    /// [`from_text`](Self::from_text) reads back as the same store.
    ///
    /// # Examples
    ///
    /// ```
    /// use stdio_mcp::config::TrustStore;
    ///
    /// let store = TrustStore::from_text("t.json", "{}")?;
    /// assert_eq!(TrustStore::from_text("t.json", &store.to_text())?, store);
    /// # Ok::<(), stdio_mcp::config::TrustError>(())
    /// ```
    #[must_use]
    pub fn to_text(&self) -> String {
        serde_json::to_string_pretty(&self.to_json()).unwrap_or_default() + "\n"
    }

    fn to_json(&self) -> Value {
        let files: Map<String, Value> = self
            .files
            .iter()
            .map(|(file, servers)| {
                let servers: Map<String, Value> = servers
                    .iter()
                    .map(|(name, print)| (name.clone(), print.to_json()))
                    .collect();
                (file.clone(), Value::Object(servers))
            })
            .collect();
        json!({ "version": VERSION, "servers": files })
    }
}

/// The files and their servers a store's JSON holds, or what is wrong with it.
fn parse_store(
    value: &Value,
) -> Result<BTreeMap<String, BTreeMap<String, LaunchFingerprint>>, String> {
    let Value::Object(top) = value else {
        return Err("the top level is not an object".into());
    };
    match top.get("version") {
        None => {}
        Some(version) if version.as_u64() == Some(VERSION) => {}
        Some(other) => return Err(format!("version {other} is not {VERSION}")),
    }
    let mut files = BTreeMap::new();
    let Some(listed) = top.get("servers") else {
        return Ok(files);
    };
    let Value::Object(listed) = listed else {
        return Err("\"servers\" is not an object".into());
    };
    for (file, servers) in listed {
        let Value::Object(servers) = servers else {
            return Err(format!("the entry of {file:?} is not an object"));
        };
        let mut trusted = BTreeMap::new();
        for (name, print) in servers {
            let print = LaunchFingerprint::from_json(print)
                .ok_or_else(|| format!("server {name:?} of {file:?} has no digest and parts"))?;
            trusted.insert(name.clone(), print);
        }
        files.insert(file.clone(), trusted);
    }
    Ok(files)
}

/// A config file's key: its canonical path, or as given when it cannot be
/// resolved (a file that is gone is trusted under no other name).
fn file_key(file: &Path) -> String {
    std::fs::canonicalize(file)
        .unwrap_or_else(|_| std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf()))
        .to_string_lossy()
        .into_owned()
}
