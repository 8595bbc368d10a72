//! macOS: a server confined by `sandbox-exec` with a profile made from the
//! rules (Seatbelt's language, as VS Code's and Claude Code's sandboxes
//! write it): everything allowed, then writes denied but under the allowed
//! folders, then what may not be written or read, then the network.
//! Built on every Unix so that its profile is tested on Linux too.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use super::Rules;

/// `sandbox-exec -p PROFILE` then `argv`.
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
pub(super) fn command(rules: &Rules, argv: &[OsString]) -> Command {
    let mut command = Command::new("/usr/bin/sandbox-exec");
    command.arg("-p").arg(profile(rules)).args(argv);
    command
}

/// The profile for `rules`.
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
pub(super) fn profile(rules: &Rules) -> String {
    let mut profile = String::from("(version 1)\n(allow default)\n(deny file-write*)\n");
    profile.push_str("(allow file-write*\n  (literal \"/dev/null\") (literal \"/dev/tty\") (regex #\"^/dev/fd/\")");
    for path in &rules.write {
        let _ = write!(profile, "\n  (subpath {})", quoted(path));
    }
    profile.push_str(")\n");
    for path in &rules.deny_write {
        let _ = writeln!(profile, "(deny file-write* (subpath {}))", quoted(path));
    }
    for path in &rules.deny_read {
        let _ = writeln!(profile, "(deny file-read* (subpath {}))", quoted(path));
    }
    if !rules.network {
        profile.push_str("(deny network*)\n");
    }
    profile
}

/// A path as a Seatbelt string: in double quotes, `\` and `"` escaped.
fn quoted(path: &Path) -> String {
    let text = path.to_string_lossy();
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn the_profile_allows_writes_only_where_asked_and_denies_the_rest() {
        let rules = Rules {
            write: vec![PathBuf::from("/srv/out"), PathBuf::from("/tmp/a \"b\"")],
            deny_write: vec![PathBuf::from("/srv/out/keys")],
            deny_read: vec![PathBuf::from("/Users/me/.ssh")],
            network: false,
        };
        assert_eq!(
            profile(&rules),
            "(version 1)\n(allow default)\n(deny file-write*)\n\
             (allow file-write*\n  (literal \"/dev/null\") (literal \"/dev/tty\") (regex #\"^/dev/fd/\")\n  \
             (subpath \"/srv/out\")\n  (subpath \"/tmp/a \\\"b\\\"\"))\n\
             (deny file-write* (subpath \"/srv/out/keys\"))\n\
             (deny file-read* (subpath \"/Users/me/.ssh\"))\n\
             (deny network*)\n"
        );
    }
}
