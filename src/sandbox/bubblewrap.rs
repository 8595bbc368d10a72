//! Linux: a server confined by bubblewrap (`bwrap`), the tool VS Code's and
//! Claude Code's sandboxes use. The whole file system is mounted read-only
//! in a mount namespace of the server's own; the folders it may write are
//! bound writable over it; what it may not write inside them read-only again;
//! what it may not read hidden (an empty read-only folder, or `/dev/null` for
//! a file); without the network, a network namespace with no way out.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use super::Rules;

/// `bwrap` with the rules, then `argv`.
pub(super) fn command(rules: &Rules, argv: &[OsString]) -> Result<Command, String> {
    let bwrap = find("bwrap").ok_or(
        "it is sandboxed, and bubblewrap (bwrap) is not installed: install it \
         (Debian, Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap); \
         a sandboxed server is never started unconfined",
    )?;
    let mut command = Command::new(bwrap);
    command.args(arguments(rules));
    command.args(argv);
    Ok(command)
}

/// bubblewrap's arguments for `rules`, up to the `--` before the program.
pub(super) fn arguments(rules: &Rules) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    let mut push = |words: &[&OsStr]| args.extend(words.iter().map(|w| w.to_os_string()));
    let os = |s: &'static str| OsStr::new(s);
    push(&[os("--ro-bind"), os("/"), os("/"), os("--dev"), os("/dev")]);
    // Bound at their real paths: a symbolic link would be a bind's mount point.
    for path in rules.write.iter().map(|p| real(p)) {
        push(&[os("--bind"), path.as_os_str(), path.as_os_str()]);
    }
    for path in rules
        .deny_write
        .iter()
        .filter(|p| p.exists())
        .map(|p| real(p))
    {
        push(&[os("--ro-bind"), path.as_os_str(), path.as_os_str()]);
    }
    for path in rules
        .deny_read
        .iter()
        .filter(|p| p.exists())
        .map(|p| real(p))
    {
        if path.is_dir() {
            push(&[
                os("--tmpfs"),
                path.as_os_str(),
                os("--remount-ro"),
                path.as_os_str(),
            ]);
        } else {
            push(&[os("--ro-bind"), os("/dev/null"), path.as_os_str()]);
        }
    }
    if !rules.network {
        push(&[os("--unshare-net")]);
    }
    // Whatever it starts goes with it; `--` ends bubblewrap's options.
    push(&[os("--die-with-parent"), os("--")]);
    args
}

fn real(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// `program` in this process's `PATH`.
fn find(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_bound_over_a_read_only_root_and_denials_come_last() {
        let tmp = std::env::temp_dir();
        let rules = Rules {
            write: vec![tmp.clone()],
            deny_write: vec![PathBuf::from("/no/such/path")],
            deny_read: vec![PathBuf::from("/etc/hostname"), PathBuf::from("/etc")],
            network: false,
        };
        let args: Vec<String> = arguments(&rules)
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let real_tmp = real(&tmp).display().to_string();
        assert_eq!(
            args,
            [
                "--ro-bind",
                "/",
                "/",
                "--dev",
                "/dev",
                "--bind",
                &real_tmp,
                &real_tmp,
                "--ro-bind",
                "/dev/null",
                "/etc/hostname",
                "--tmpfs",
                "/etc",
                "--remount-ro",
                "/etc",
                "--unshare-net",
                "--die-with-parent",
                "--",
            ]
        );
    }
}
