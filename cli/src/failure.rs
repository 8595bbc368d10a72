//! How a command fails: its exit code, its one-line message, and the JSON
//! document `--json` prints instead.

use std::fmt;

use serde_json::json;
use stdio_mcp::{Error, ErrorKind};

/// Exit codes (docs/cli.md).
pub const USAGE: i32 = 1;
pub const SERVER_SAID_NO: i32 = 2;
pub const SERVER_FAILED: i32 = 3;
pub const INTERRUPTED: i32 = 130;

/// A failed command.
#[derive(Debug)]
pub struct Failure {
    pub code: i32,
    /// `usage`, `config`, or the library's error kind in lower case.
    pub kind: String,
    pub message: String,
    pub server: Option<String>,
    /// Its output is already printed (a tool's error result): `--json`
    /// prints nothing more, so stdout stays one document.
    pub printed: bool,
}

impl Failure {
    /// A mistake of the command line or the config (exit 1).
    pub fn usage(message: impl Into<String>) -> Self {
        Failure {
            code: USAGE,
            kind: "usage".into(),
            message: message.into(),
            server: None,
            printed: false,
        }
    }

    pub fn config(message: impl Into<String>) -> Self {
        Failure {
            kind: "config".into(),
            ..Failure::usage(message)
        }
    }

    pub fn interrupted() -> Self {
        Failure {
            code: INTERRUPTED,
            kind: "interrupted".into(),
            message: "interrupted: the call was cancelled".into(),
            server: None,
            printed: false,
        }
    }

    /// The document `--json` prints for it.
    pub fn to_json(&self) -> serde_json::Value {
        json!({ "error": { "kind": self.kind, "message": self.message, "server": self.server } })
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        let code = match error.kind() {
            ErrorKind::InvalidArguments | ErrorKind::Config => USAGE,
            ErrorKind::Rpc | ErrorKind::Tool | ErrorKind::Cancelled => SERVER_SAID_NO,
            _ => SERVER_FAILED,
        };
        Failure {
            code,
            kind: error.kind().as_str().to_owned(),
            message: in_command_line_words(&error.to_string()),
            server: error.server().map(str::to_owned),
            printed: false,
        }
    }
}

/// A library message with the library's settings named as this command
/// line sets them: the start limit is `--timeout`.
pub fn in_command_line_words(message: &str) -> String {
    message.replace("(Group::start_timeout)", "(--timeout)")
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// ` (did you mean "NAME"?)` for the name of `known` closest to `wrong`
/// by the library's rule ([`stdio_mcp::closest_name`]), or nothing.
pub fn did_you_mean<'a>(wrong: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    match stdio_mcp::closest_name(wrong, known) {
        Some(name) => format!(" (did you mean {name:?}?)"),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_are_suggested_and_far_ones_not() {
        assert_eq!(
            did_you_mean("tiem", ["time", "git"]),
            " (did you mean \"time\"?)"
        );
        assert_eq!(did_you_mean("zzzz", ["time", "git"]), "");
    }
}
