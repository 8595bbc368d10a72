//! A server entry's launch definition, reduced to a fingerprint: what a user
//! trusted when they let a repository's server start, so that any change to
//! what would run makes it untrusted again, and says what changed.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::ServerConfig;

/// The fingerprint of what a server entry launches: a SHA-256 over its
/// canonical form, and one per part, so a change can be named without
/// keeping any value (an environment variable's value is a secret).
///
/// The canonical form is a JSON object written with sorted keys and no
/// spaces, UTF-8: `{"args":[..],"command":"..","cwd":".."|null,
/// "env":[["NAME","value"|null],..],"envFile":"sha256:.."|null,
/// "sandbox":{..}|null}`, `"trust":true` when the entry says so, and
/// `"files":{"./server.js":"sha256:.."}` when it runs files of its project
/// folder — the arguments and environment changes in their
/// order, `cwd` after substitution and resolution, `envFile` the digest of
/// the file's content as read, `sandbox` the entry's `sandboxEnabled` and
/// `sandbox` keys as written. The parts are `command`, `args`, `cwd`,
/// `envFile`, `sandbox`, `trust`, `env NAME` for each variable and `file
/// ./PATH` for each file. A repository that adds `"trust"` to an entry
/// changes what its user let run: its tools' claims would be believed.
///
/// **Files.** An entry read from a file (its project folder is
/// `${workspaceFolder}`) runs the files of that folder its definition
/// names: the command when it is a path (`./bin/server`), and each argument
/// that names an existing file there after substitution and is code — a
/// script's or program's extension (`.js`, `.py`, `.sh`, `.jar`, …) or an
/// executable file — relative ones taken from the entry's `cwd` (`node
/// ./server.js`, `python tools/mcp.py`, `uv run --directory . server.py`).
/// A file the server reads or writes as data (`--db ./app.db`, a log) is
/// not covered: it changes as the server works. Each file's content is hashed, so a
/// `git pull` that rewrites `server.js` changes the fingerprint, and
/// [`changes_since`](Self::changes_since) names `file ./server.js`. The
/// files those import are not followed.
///
/// # Examples
///
/// ```
/// use stdio_mcp::config::Config;
///
/// let before = Config::parse(r#"{"mcpServers": {"git": {"command": "uvx", "args": ["mcp-server-git"]}}}"#)?;
/// let after = Config::parse(r#"{"mcpServers": {"git": {"command": "uvx", "args": ["evil"], "env": {"TOKEN": "x"}}}}"#)?;
/// let (before, after) = (before.servers()[0].fingerprint(), after.servers()[0].fingerprint());
/// assert!(before.digest().starts_with("sha256:"));
/// assert_ne!(before, after);
/// assert_eq!(after.changes_since(&before), ["args", "env TOKEN"]);
/// # Ok::<(), stdio_mcp::config::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchFingerprint {
    digest: String,
    parts: BTreeMap<String, String>,
}

impl LaunchFingerprint {
    /// `"sha256:"` and 64 lowercase hex digits, over the canonical form.
    ///
    /// # Examples
    ///
    /// ```
    /// let config = stdio_mcp::config::Config::parse(r#"{"mcpServers": {"t": {"command": "t"}}}"#)?;
    /// assert_eq!(config.servers()[0].fingerprint().digest().len(), 7 + 64);
    /// # Ok::<(), stdio_mcp::config::ConfigError>(())
    /// ```
    #[must_use]
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// What differs from `before`, sorted: `command`, `args`, `cwd`,
    /// `envFile`, `env NAME` (a variable added, removed or changed; never
    /// its value), `file ./PATH` (a file it runs changed, or is newly
    /// covered), `sandbox`, `trust`. Empty when the two are the same.
    ///
    /// # Examples
    ///
    /// ```
    /// use stdio_mcp::config::Config;
    ///
    /// let a = Config::parse(r#"{"mcpServers": {"t": {"command": "t", "cwd": "/a"}}}"#)?;
    /// let b = Config::parse(r#"{"mcpServers": {"t": {"command": "t", "cwd": "/b"}}}"#)?;
    /// let (a, b) = (a.servers()[0].fingerprint(), b.servers()[0].fingerprint());
    /// assert_eq!(b.changes_since(&a), ["cwd"]);
    /// assert!(a.changes_since(&a).is_empty());
    /// # Ok::<(), stdio_mcp::config::ConfigError>(())
    /// ```
    #[must_use]
    pub fn changes_since(&self, before: &LaunchFingerprint) -> Vec<String> {
        let mut changed: Vec<String> = self
            .parts
            .iter()
            .filter(|(part, digest)| before.parts.get(*part) != Some(digest))
            .map(|(part, _)| part.clone())
            .chain(
                before
                    .parts
                    .keys()
                    .filter(|part| !self.parts.contains_key(*part))
                    .cloned(),
            )
            .collect();
        changed.sort();
        changed.dedup();
        // The whole differs while no part does only if the order of the
        // environment's changes moved.
        if changed.is_empty() && self.digest != before.digest {
            changed.push("env".to_owned());
        }
        changed
    }

    /// The fingerprint as the trust store keeps it.
    pub(crate) fn to_json(&self) -> Value {
        json!({ "digest": self.digest, "parts": self.parts })
    }

    /// A fingerprint the trust store kept; `None` if it is not of that shape.
    pub(crate) fn from_json(value: &Value) -> Option<Self> {
        let digest = value.get("digest")?.as_str()?.to_owned();
        let parts = value
            .get("parts")?
            .as_object()?
            .iter()
            .map(|(part, digest)| Some((part.clone(), digest.as_str()?.to_owned())))
            .collect::<Option<BTreeMap<_, _>>>()?;
        Some(LaunchFingerprint { digest, parts })
    }
}

/// `"sha256:"` and the lowercase hex digest of `bytes`.
pub(crate) fn sha256(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(7 + 64);
    text.push_str("sha256:");
    for byte in Sha256::digest(bytes) {
        let _ = write!(text, "{byte:02x}");
    }
    text
}

/// JSON text in RFC 8785's canonical form (`serde_jcs`, as a tool's
/// digest): keys sorted, no spaces, whatever order the map keeps. For the
/// strings, arrays and booleans of a launch definition it is the form
/// fingerprints were always taken of, so a kept trust store still matches.
fn canonical(value: &Value) -> String {
    serde_jcs::to_string(value).unwrap_or_else(|_| value.to_string())
}

impl ServerConfig {
    /// The fingerprint of what this entry launches (see [`LaunchFingerprint`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use stdio_mcp::config::Config;
    ///
    /// let spaced = Config::parse(r#"{"mcpServers": {"t": { "command" : "t" , "args": ["a"] }}}"#)?;
    /// let tight = Config::parse(r#"{"mcpServers":{"t":{"args":["a"],"command":"t"}}}"#)?;
    /// assert_eq!(spaced.servers()[0].fingerprint(), tight.servers()[0].fingerprint());
    /// # Ok::<(), stdio_mcp::config::ConfigError>(())
    /// ```
    #[must_use]
    pub fn fingerprint(&self) -> LaunchFingerprint {
        let cwd = self.cwd.as_ref().map(|dir| dir.to_string_lossy());
        let mut whole = json!({
            "command": self.command,
            "args": self.args,
            "cwd": cwd,
            "env": self.env,
            "envFile": self.env_file_digest,
            "sandbox": self.sandbox_keys,
        });
        // Present only when set, so that the fingerprints of entries without
        // them stay what they were.
        if self.trust {
            whole["trust"] = Value::Bool(true);
        }
        if !self.code_digests.is_empty() {
            whole["files"] = json!(self.code_digests);
        }
        let mut parts = BTreeMap::new();
        for part in ["command", "args", "cwd", "envFile", "sandbox", "trust"] {
            if !whole[part].is_null() {
                parts.insert(part.to_owned(), sha256(canonical(&whole[part]).as_bytes()));
            }
        }
        for (file, digest) in &self.code_digests {
            parts.insert(format!("file {file}"), digest.clone());
        }
        for (name, value) in &self.env {
            parts.insert(
                format!("env {name}"),
                sha256(canonical(&json!(value)).as_bytes()),
            );
        }
        LaunchFingerprint {
            digest: sha256(canonical(&whole).as_bytes()),
            parts,
        }
    }
}
