//! Where a client's server comes from, as the client speaks of it: its name
//! in errors (a config entry's, else its program's), the key its era is
//! remembered under (which a group's catalog cache fingerprints too), and a
//! start failure worded for the config entry at fault.

use std::ffi::OsStr;

use serde_json::Value;

use crate::builder::{EnvChange, TransportBuilder};
use crate::config::configured_name;
use crate::driver::Driver;
use crate::error::Error;
use crate::program_name::program_name;
use crate::transport::Transport;

/// What a client calls the server `transport` starts in its errors: the
/// config entry's name, else the program as given.
pub(crate) fn server_name(transport: &TransportBuilder) -> String {
    match (configured_name(transport), transport.argv().first()) {
        (Some(name), _) => name.to_owned(),
        (None, Some(program)) => program_name(&program.to_string_lossy()).to_owned(),
        (None, None) => String::new(),
    }
}

/// Starts `transport`'s server. A server from a config file that cannot
/// start says which field of its entry is at fault.
pub(crate) fn spawn(transport: TransportBuilder) -> Result<(Transport, Driver), Error> {
    let configured = configured_name(&transport).is_some();
    transport.spawn_with_driver().map_err(|error| match error {
        Error::Start { program, reason } if configured => {
            let field = if reason.starts_with("no such directory") {
                "cwd"
            } else if let Some(rule) = reason.strip_prefix("sandbox: ") {
                sandbox_field(rule)
            } else {
                "command"
            };
            Error::Start {
                program,
                reason: format!("{reason} (the config entry's \"{field}\")"),
            }
        }
        other => other,
    })
}

/// The config field a sandbox's refusal to start is about.
fn sandbox_field(rule: &str) -> &'static str {
    let fields = [
        ("allowWrite", "sandbox.filesystem.allowWrite"),
        ("denyRead", "sandbox.filesystem.denyRead"),
        ("denyWrite", "sandbox.filesystem.denyWrite"),
        ("allowUnixSockets", "sandbox.network.allowUnixSockets"),
        ("allowedDomains", "sandbox.network.allowedDomains"),
    ];
    fields
        .iter()
        .find(|(word, _)| rule.starts_with(word) || rule.contains(&format!("({word}")))
        .map_or("sandboxEnabled", |(_, field)| field)
}

/// What the era found for a server is remembered under, and what a group's
/// catalog cache fingerprints: the command line, the environment changes
/// and the working directory, as JSON (a text no Rust release changes,
/// unlike `Debug`'s).
pub(crate) fn command_key(transport: &TransportBuilder) -> String {
    let env: Vec<Value> = transport
        .env_changes()
        .iter()
        .filter(|change| !matches!(change, EnvChange::Set(key, _) if describes_terminal(key)))
        .map(|change| match change {
            EnvChange::Set(key, value) => serde_json::json!(["set", os_text(key), os_text(value)]),
            EnvChange::Remove(key) => serde_json::json!(["remove", os_text(key)]),
            EnvChange::Clear => serde_json::json!(["clear"]),
        })
        .collect();
    let command: Vec<Value> = transport.argv().iter().map(|part| os_text(part)).collect();
    let cwd = transport.dir().map(|cwd| os_text(cwd.as_os_str()));
    serde_json::json!([command, env, cwd]).to_string()
}

/// Variables that describe the terminal a command runs in, not the server:
/// left out of the key, so that a server is the same one under tmux and
/// outside it (docs/cli.md, "The catalog cache").
const TERMINAL_VARIABLES: [&str; 4] = ["TERM", "COLORTERM", "COLUMNS", "LINES"];

fn describes_terminal(key: &OsStr) -> bool {
    TERMINAL_VARIABLES.iter().any(|v| OsStr::new(v) == key)
}

/// `text` as a JSON string, or, when it is not Unicode, as `{"bytes": hex}` of
/// its platform encoding (so two such texts are never taken for one).
fn os_text(text: &OsStr) -> Value {
    match text.to_str() {
        Some(text) => Value::from(text),
        None => {
            let hex: String = text
                .as_encoded_bytes()
                .iter()
                .map(|byte| format!("{byte:02x}"))
                .collect();
            serde_json::json!({ "bytes": hex })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::command_key;
    use std::ffi::OsStr;

    #[test]
    fn a_command_key_is_json_of_everything_the_child_is_started_with() {
        let builder = crate::Transport::builder(["npx", "-y", "server \"x\""])
            .env_clear()
            .env("TOKEN", "a b")
            .env_remove("HOME")
            .cwd("/srv");
        assert_eq!(
            command_key(&builder),
            r#"[["npx","-y","server \"x\""],[["clear"],["set","TOKEN","a b"],["remove","HOME"]],"/srv"]"#
        );
        let bare = crate::Transport::builder(["npx"]);
        assert_eq!(command_key(&bare), r#"[["npx"],[],null]"#);
        assert_ne!(
            command_key(&bare),
            command_key(&crate::Transport::builder(["npx", ""]))
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_command_key_keeps_text_that_is_not_unicode_apart() {
        use std::os::unix::ffi::OsStrExt;
        let key =
            |bytes: &[u8]| command_key(&crate::Transport::builder([OsStr::from_bytes(bytes)]));
        assert_eq!(key(b"a\xff"), r#"[[{"bytes":"61ff"}],[],null]"#);
        assert_ne!(key(b"a\xff"), key(b"a\xfe"));
    }
}
