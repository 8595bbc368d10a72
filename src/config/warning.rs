//! What a config file says that this crate does not read: keys of a server
//! entry it does not know, each with the known key it is most likely a typo of.

use std::fmt;

use serde_json::{Map, Value};

/// The keys of a server entry this crate reads.
const READ: [&str; 12] = [
    "type",
    "command",
    "args",
    "env",
    "envFile",
    "cwd",
    "disabled",
    "includeTools",
    "excludeTools",
    "trust",
    "sandboxEnabled",
    "sandbox",
];

/// Keys other hosts give a server entry: not read here, and no mistake.
const OTHER_HOSTS: [&str; 7] = [
    "url",
    "headers",
    "timeout",
    "autoApprove",
    "alwaysAllow",
    "description",
    "dev",
];

/// A key of a server entry that this crate does not know, so it ignores it:
/// most often a typo that would leave the server without what it was given.
/// [`Config::warnings`](super::Config::warnings) lists them.
///
/// ```
/// use stdio_mcp::config::Config;
///
/// let config = Config::parse(r#"{"mcpServers": {"fs": {"command": "mcp-fs", "arg": ["/srv"]}}}"#)?;
/// let warning = &config.warnings()[0];
/// assert_eq!(warning.server, "fs");
/// assert_eq!(warning.suggestion.as_deref(), Some("args"));
/// assert_eq!(
///     warning.to_string(),
///     r#"server "fs": unknown key "arg" is ignored (did you mean "args"?)"#
/// );
/// # Ok::<(), stdio_mcp::config::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConfigWarning {
    /// The server entry's name.
    pub server: String,
    /// The key as written.
    pub key: String,
    /// The known key it is closest to, when it is close enough to be a typo.
    pub suggestion: Option<String>,
    /// Why a key this crate knows is ignored, and what follows, as the end
    /// of the sentence (`sandbox` without `sandboxEnabled`: `without
    /// "sandboxEnabled": true — it runs unconfined`); `None` for an unknown key.
    pub reason: Option<String>,
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(reason) = &self.reason {
            return write!(
                f,
                "server {:?}: {:?} is ignored {reason}",
                self.server, self.key
            );
        }
        write!(
            f,
            "server {:?}: unknown key {:?} is ignored",
            self.server, self.key
        )?;
        if let Some(suggestion) = &self.suggestion {
            write!(f, " (did you mean {suggestion:?}?)")?;
        }
        Ok(())
    }
}

/// A warning for each key of `entry` that is neither read nor another host's.
pub(super) fn unknown_keys(server: &str, entry: &Map<String, Value>) -> Vec<ConfigWarning> {
    entry
        .keys()
        .filter(|key| !READ.contains(&key.as_str()) && !OTHER_HOSTS.contains(&key.as_str()))
        .map(|key| ConfigWarning {
            server: server.to_owned(),
            key: key.clone(),
            suggestion: closest(key).map(str::to_owned),
            reason: None,
        })
        .collect()
}

/// The key read here that `key` is a likely typo of: the same but for case,
/// or at most two edits away (one for short keys).
pub(super) fn closest(key: &str) -> Option<&'static str> {
    crate::closest_name(key, READ.iter().copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_misses_get_the_known_key() {
        assert_eq!(closest("arg"), Some("args"));
        assert_eq!(closest("evn"), Some("env"));
        assert_eq!(closest("Command"), Some("command"));
        assert_eq!(closest("comand"), Some("command"));
        assert_eq!(closest("cdw"), Some("cwd"));
        assert_eq!(closest("xyz"), None);
        assert_eq!(closest("workingDirectory"), None);
        assert_eq!(closest("envfile"), Some("envFile"));
    }
}
