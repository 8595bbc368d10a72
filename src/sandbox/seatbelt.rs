//! macOS: a server confined by `sandbox-exec` with a profile made from the
//! rules (Seatbelt's language, as VS Code's and Claude Code's sandboxes
//! write it): everything allowed, then writes denied but under the allowed
//! folders, then what may not be written or read, then the network; and
//! around them, no outbound Unix socket (but those allowed by path), no
//! signal to a process outside the sandbox, no Apple Event (another
//! application would act for it). Every path is the real one (`/private/var/…`
//! for `TMPDIR`), since Seatbelt matches the path a call resolves to.
//! Built on every Unix so that its profile is tested on Linux too.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use super::Rules;

/// `sandbox-exec -p PROFILE` then `argv`, started with nothing inherited
/// but stdio and its files bounded.
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
pub(super) fn command(rules: &Rules, argv: &[OsString]) -> Command {
    let mut command = Command::new("/usr/bin/sandbox-exec");
    command.arg("-p").arg(profile(rules)).args(argv);
    let limits = crate::sys::StartLimits {
        file_bytes: rules.limits.file(),
        processes: None,
    };
    crate::sys::start_confined(&mut command, Vec::new(), limits);
    command
}

/// The profile for `rules`.
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
pub(super) fn profile(rules: &Rules) -> String {
    let mut profile = String::from("(version 1)\n(allow default)\n(deny file-write*)\n");
    profile.push_str("(allow file-write*\n  (literal \"/dev/null\") (literal \"/dev/tty\") (regex #\"^/dev/fd/\")");
    for path in rules.write.iter().chain(&rules.tmp) {
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
    if rules.all_unix_sockets {
        profile.push_str("(allow network-outbound (remote unix-socket))\n");
    } else {
        profile.push_str("(deny network-outbound (remote unix-socket))\n");
        for path in &rules.unix_sockets {
            let _ = writeln!(
                profile,
                "(allow network-outbound (remote unix-socket (path-literal {})))",
                quoted(path)
            );
        }
    }
    profile
        .push_str("(deny signal)\n(allow signal (target same-sandbox))\n(deny appleevent-send)\n");
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
    use crate::sandbox::{Limits, Sandbox};

    #[test]
    fn the_profile_allows_writes_only_where_asked_and_denies_the_rest() {
        let rules = Rules {
            write: vec![PathBuf::from("/srv/out"), PathBuf::from("/tmp/a \"b\"")],
            tmp: Some(PathBuf::from("/private/var/folders/x/T/stdio-mcp-1")),
            deny_write: vec![PathBuf::from("/srv/out/keys")],
            deny_read: vec![PathBuf::from("/Users/me/.ssh")],
            network: false,
            all_unix_sockets: false,
            unix_sockets: vec![PathBuf::from("/private/var/run/agent.sock")],
            limits: Limits::default(),
        };
        assert_eq!(
            profile(&rules),
            "(version 1)\n(allow default)\n(deny file-write*)\n\
             (allow file-write*\n  (literal \"/dev/null\") (literal \"/dev/tty\") (regex #\"^/dev/fd/\")\n  \
             (subpath \"/srv/out\")\n  (subpath \"/tmp/a \\\"b\\\"\")\n  \
             (subpath \"/private/var/folders/x/T/stdio-mcp-1\"))\n\
             (deny file-write* (subpath \"/srv/out/keys\"))\n\
             (deny file-read* (subpath \"/Users/me/.ssh\"))\n\
             (deny network*)\n\
             (deny network-outbound (remote unix-socket))\n\
             (allow network-outbound (remote unix-socket (path-literal \"/private/var/run/agent.sock\")))\n\
             (deny signal)\n(allow signal (target same-sandbox))\n(deny appleevent-send)\n"
        );
    }

    #[test]
    fn every_path_in_the_profile_is_the_real_one() {
        // A folder reached through a symbolic link, as macOS's /var and /tmp are.
        let dir = std::env::temp_dir().join(format!("stdio-mcp-seatbelt-{}", std::process::id()));
        let real = dir.join("real");
        std::fs::create_dir_all(real.join("keys")).unwrap();
        let link = dir.join("link");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let sandbox = Sandbox::new()
            .allow_write(&link)
            .deny_write(link.join("keys"))
            .allow_unix_socket(link.join("agent.sock"))
            .allow_all_unix_sockets(false);
        let rules = sandbox.resolved(None).unwrap();
        let text = profile(&rules);
        let real = std::fs::canonicalize(&real).unwrap();
        assert!(!text.contains("/link"), "{text}");
        for path in [real.clone(), real.join("keys"), real.join("agent.sock")] {
            assert!(text.contains(&quoted(&path)), "{path:?} in {text}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
