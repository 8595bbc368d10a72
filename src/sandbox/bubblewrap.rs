//! Linux: a server confined by bubblewrap (`bwrap`), the tool VS Code's and
//! Claude Code's sandboxes use. The whole file system is mounted read-only
//! in a mount namespace of the server's own; the folders it may write are
//! bound writable over it; what it may not write inside them read-only again;
//! what it may not read hidden (an empty read-only folder, or `/dev/null` for
//! a file); without the network, a network namespace with no way out.
//!
//! Around those rules (docs/sandbox.md, "What the sandbox guarantees"): a
//! session of its own (no terminal); its own PID, IPC and hostname
//! namespaces and `/proc` (it sees and signals only its own processes); a
//! user namespace with no capabilities, root included, and none nested;
//! every folder between a writable root and a denied path inside it bound
//! onto itself (a mount point cannot be renamed away); `/dev/shm` and
//! `TMPDIR` memory folders of a bounded size; the system calls of
//! `sys/seccomp.rs` refused; nothing inherited but stdio.

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::io::Write as _;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::Rules;
use crate::sys::{self, seccomp, StartLimits};

/// The oldest bubblewrap with every option used here (`--size`, `--perms`,
/// `--add-seccomp-fd`).
const OLDEST: (u32, u32, u32) = (0, 6, 0);
/// The first with `--disable-userns`; an older one gets a seccomp rule instead.
const DISABLES_USERNS: (u32, u32, u32) = (0, 8, 0);

/// `bwrap` with the rules, then `argv`, started with the seccomp programs
/// and under the limits.
pub(super) fn command(rules: &Rules, argv: &[OsString]) -> Result<Command, String> {
    if let Some(path) = rules.unix_sockets.first() {
        return Err(format!(
            "allowUnixSockets ({}): a Unix socket cannot be allowed by its path on Linux; \
             \"allowAllUnixSockets\": true allows them all",
            path.display()
        ));
    }
    let bwrap = find("bwrap").ok_or(
        "it is sandboxed, and bubblewrap (bwrap) is not installed: install it \
         (Debian, Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap); \
         a sandboxed server is never started unconfined",
    )?;
    let version = version(&bwrap)?;
    let disables_userns = version >= DISABLES_USERNS;
    let programs = seccomp::programs(seccomp::Options {
        unix_sockets: rules.all_unix_sockets,
        no_user_namespaces: !disables_userns,
    })?;
    let mut fds = Vec::new();
    for program in &programs {
        fds.push(readable(program).map_err(|e| format!("its system-call filter: {e}"))?);
    }
    let mut command = Command::new(bwrap);
    command.args(arguments(rules, disables_userns));
    for fd in &fds {
        command
            .arg("--add-seccomp-fd")
            .arg(fd.as_raw_fd().to_string());
    }
    command.arg("--").args(argv);
    let processes = sys::user_processes().map(|now| now + rules.limits.process_count());
    sys::start_confined(
        &mut command,
        fds,
        StartLimits {
            file_bytes: rules.limits.file(),
            processes,
        },
    );
    Ok(command)
}

/// bubblewrap's arguments for `rules`, up to its seccomp programs.
pub(super) fn arguments(rules: &Rules, disables_userns: bool) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    let mut push = |words: &[&OsStr]| args.extend(words.iter().map(|w| w.to_os_string()));
    let os = OsStr::new;
    push(&[os("--unshare-all")]);
    if rules.network {
        push(&[os("--share-net")]);
    }
    push(&[os("--unshare-user")]);
    if disables_userns {
        push(&[os("--disable-userns")]);
    }
    push(&[
        os("--cap-drop"),
        os("ALL"),
        os("--new-session"),
        // Whatever it starts goes with it.
        os("--die-with-parent"),
        os("--ro-bind"),
        os("/"),
        os("/"),
        os("--dev"),
        os("/dev"),
        os("--proc"),
        os("/proc"),
    ]);
    let shm = rules.limits.shm().to_string();
    push(&[os("--size"), os(&shm), os("--tmpfs"), os("/dev/shm")]);
    for path in writable(rules) {
        push(&[os("--bind"), path.as_os_str(), path.as_os_str()]);
    }
    if let Some(tmp) = &rules.tmp {
        let size = rules.limits.tmp().to_string();
        push(&[
            os("--perms"),
            os("0700"),
            os("--size"),
            os(&size),
            os("--tmpfs"),
            tmp.as_os_str(),
        ]);
    }
    for path in rules.deny_write.iter().filter(|p| p.exists()) {
        push(&[os("--ro-bind"), path.as_os_str(), path.as_os_str()]);
    }
    for path in rules.deny_read.iter().filter(|p| p.exists()) {
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
    args
}

/// What is bound writable, parents first: each folder it may write, and
/// each folder between one of them and a denied path inside it, bound onto
/// itself so that it cannot be renamed away (the rename of a mount point
/// fails), and a new one planted where the denial stood.
fn writable(rules: &Rules) -> Vec<PathBuf> {
    let mut binds: BTreeSet<PathBuf> = rules.write.iter().cloned().collect();
    let denied = rules.deny_write.iter().chain(&rules.deny_read);
    for path in denied.filter(|p| p.exists()) {
        for root in rules.write.iter().filter(|w| path.starts_with(w)) {
            let between = path
                .ancestors()
                .skip(1)
                .take_while(|a| a.starts_with(root) && a != root);
            binds.extend(between.map(Path::to_path_buf));
        }
    }
    let mut binds: Vec<PathBuf> = binds.into_iter().collect();
    binds.sort_by_key(|p| p.components().count());
    binds
}

/// A pipe's read end holding `bytes` to its end (they fit in its buffer).
fn readable(bytes: &[u8]) -> std::io::Result<OwnedFd> {
    let (reader, mut writer) = std::io::pipe()?;
    writer.write_all(bytes)?;
    Ok(reader.into())
}

/// The version bubblewrap at `bwrap` reports, asked once per process;
/// refused when older than [`OLDEST`].
fn version(bwrap: &Path) -> Result<(u32, u32, u32), String> {
    static ASKED: OnceLock<Result<(u32, u32, u32), String>> = OnceLock::new();
    ASKED
        .get_or_init(|| {
            let output = Command::new(bwrap)
                .arg("--version")
                .output()
                .map_err(|e| format!("{} --version did not run: {e}", bwrap.display()))?;
            let text = String::from_utf8_lossy(&output.stdout);
            let found = parse_version(&text).ok_or_else(|| {
                format!(
                    "{} --version said {:?}, not a version",
                    bwrap.display(),
                    text.trim()
                )
            })?;
            if found < OLDEST {
                let (a, b, c) = found;
                return Err(format!(
                    "bubblewrap {a}.{b}.{c} is too old to confine it (0.6.0 or newer is needed)"
                ));
            }
            Ok(found)
        })
        .clone()
}

/// `bubblewrap 0.8.0` → (0, 8, 0).
fn parse_version(text: &str) -> Option<(u32, u32, u32)> {
    let word = text.split_whitespace().nth(1)?;
    let mut parts = word.split('.').map(|p| p.parse::<u32>().ok());
    Some((
        parts.next()??,
        parts.next()??,
        parts.next().flatten().unwrap_or(0),
    ))
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
    use crate::sandbox::Limits;

    fn rules(write: &[&Path], deny_write: &[&Path], deny_read: &[&Path]) -> Rules {
        let paths = |list: &[&Path]| list.iter().map(|p| p.to_path_buf()).collect();
        Rules {
            write: paths(write),
            tmp: Some(PathBuf::from("/tmp/stdio-mcp-1-2-0")),
            deny_write: paths(deny_write),
            deny_read: paths(deny_read),
            network: false,
            all_unix_sockets: false,
            unix_sockets: Vec::new(),
            limits: Limits::default(),
        }
    }

    fn text(args: Vec<OsString>) -> Vec<String> {
        args.iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn the_namespaces_and_limits_come_first_then_writes_then_denials() {
        let root = std::fs::canonicalize(std::env::temp_dir()).unwrap();
        let rules = rules(
            &[&root],
            &[Path::new("/no/such/path")],
            &[Path::new("/etc/hostname"), Path::new("/etc")],
        );
        let tmp = root.display().to_string();
        assert_eq!(
            text(arguments(&rules, true)),
            [
                "--unshare-all",
                "--unshare-user",
                "--disable-userns",
                "--cap-drop",
                "ALL",
                "--new-session",
                "--die-with-parent",
                "--ro-bind",
                "/",
                "/",
                "--dev",
                "/dev",
                "--proc",
                "/proc",
                "--size",
                "67108864",
                "--tmpfs",
                "/dev/shm",
                "--bind",
                &tmp,
                &tmp,
                "--perms",
                "0700",
                "--size",
                "536870912",
                "--tmpfs",
                "/tmp/stdio-mcp-1-2-0",
                "--ro-bind",
                "/dev/null",
                "/etc/hostname",
                "--tmpfs",
                "/etc",
                "--remount-ro",
                "/etc",
            ]
        );
        let mut open = rules;
        open.network = true;
        let args = text(arguments(&open, false));
        assert_eq!(
            args[..3],
            ["--unshare-all", "--share-net", "--unshare-user"]
        );
        assert!(!args.iter().any(|a| a == "--disable-userns"));
    }

    #[test]
    fn every_folder_between_a_writable_root_and_a_denial_is_pinned_parents_first() {
        let dir = std::env::temp_dir().join(format!("stdio-mcp-pins-{}", std::process::id()));
        let hooks = dir.join("repo/.git/hooks");
        let secret = dir.join("repo/a/b/secret");
        std::fs::create_dir_all(&hooks).unwrap();
        std::fs::create_dir_all(&secret).unwrap();
        let dir = std::fs::canonicalize(&dir).unwrap();
        let repo = dir.join("repo");
        let rules = rules(
            &[&repo],
            &[&repo.join(".git/hooks")],
            &[&repo.join("a/b/secret")],
        );
        assert_eq!(
            writable(&rules),
            [
                repo.clone(),
                repo.join(".git"),
                repo.join("a"),
                repo.join("a/b"),
            ]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn versions_are_read_from_bubblewraps_own_words() {
        assert_eq!(parse_version("bubblewrap 0.8.0\n"), Some((0, 8, 0)));
        assert_eq!(parse_version("bubblewrap 0.11"), Some((0, 11, 0)));
        assert_eq!(parse_version("bwrap"), None);
        assert!((0, 6, 1) < DISABLES_USERNS && (0, 10, 0) >= DISABLES_USERNS);
    }
}
