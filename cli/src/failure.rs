//! How a command fails: its exit code, its one-line message, and the JSON
//! document `--json` prints instead; what clap refused; how a command's
//! end is reported.

use std::fmt;

use serde_json::json;
use stdio_mcp::{Error, ErrorKind};

use crate::output::{self, errln, outln};

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

/// Prints what clap refused (help and version are printed as asked), and
/// returns the exit status.
pub(crate) fn refused(error: &clap::Error, json: bool) -> u8 {
    if !error.use_stderr() {
        // Help and version.
        outln!("{}", error.render().to_string().trim_end());
        return 0;
    }
    let rendered = error.render().to_string();
    if error.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        // `stdio-mcp daemon` alone: what it takes, as clap shows it.
        let failure = Failure::usage(format!(
            "{} needs a subcommand",
            std::env::args().skip(1).collect::<Vec<_>>().join(" ")
        ));
        if json {
            outln!("{}", failure.to_json());
        } else {
            errln!("{}", rendered.trim_end());
        }
        return USAGE as u8;
    }
    let failure = Failure::usage(one_line(&rendered));
    if json {
        outln!("{}", failure.to_json());
    } else {
        errln!("stdio-mcp: {failure} (see stdio-mcp --help)");
    }
    USAGE as u8
}

/// clap's error in one line: what is wrong with what it lists (the missing
/// arguments, the possible values), and its did-you-mean; not its usage.
fn one_line(rendered: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut in_error = false;
    for line in rendered.lines() {
        let trimmed = line.trim();
        if let Some(error) = trimmed.strip_prefix("error: ") {
            parts.push(error.to_owned());
            in_error = true;
        } else if trimmed.starts_with("tip:") {
            parts.push(trimmed.to_owned());
            in_error = false;
        } else if trimmed.is_empty()
            || trimmed.starts_with("Usage:")
            || trimmed.starts_with("For more")
        {
            in_error = false;
        } else if in_error || trimmed.starts_with("[possible values") {
            // The arguments it names, or the values it takes.
            if let Some(last) = parts.last_mut() {
                last.push(' ');
                last.push_str(trimmed);
            }
        }
    }
    parts.join("; ")
}

/// Prints how the command ended and returns its exit status.
pub(crate) fn report(outcome: Result<(), Failure>, json: bool) -> u8 {
    if output::closed() {
        // Its reader left: nothing more to say, and nobody to say it to.
        return output::CLOSED_STDOUT;
    }
    let outcome = match outcome {
        Ok(()) => 0,
        Err(failure) => {
            if json {
                if !failure.printed {
                    outln!("{}", output::with_warnings(&failure.to_json()));
                }
            } else {
                errln!("stdio-mcp: {failure}");
            }
            failure.code as u8
        }
    };
    output::set_warnings(Vec::new());
    outcome
}

impl From<std::io::Error> for Failure {
    fn from(error: std::io::Error) -> Self {
        Failure::usage(format!("cannot write the output: {error}"))
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
