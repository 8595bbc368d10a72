//! Unix: signals to the child or its process group; the watchdog that ends
//! them should this process end first.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use super::watchdog::Watched;
use super::Options;

/// Prepares `command` for `options`, and with `kill_on_parent_death` holds a
/// place for the child with the watchdog (started now if none runs); `Err`
/// says why an option cannot be honoured.
pub(crate) fn configure(command: &mut Command, options: Options) -> Result<Watched, String> {
    if options.process_group {
        command.process_group(0);
    }
    if !options.kill_on_parent_death {
        return Ok(Watched::not());
    }
    Watched::reserve().map_err(|error| {
        format!("kill_on_parent_death(true): the watchdog process could not start: {error}")
    })
}

/// The program to start: Unix looks a bare name up in `PATH` itself.
pub(crate) fn resolve_program(program: &OsStr, _path: Option<&OsStr>) -> OsString {
    program.to_os_string()
}

/// A start error worth a more specific reason than its kind gives.
pub(crate) fn explain_spawn_error(_error: &io::Error, _program: &Path) -> Option<String> {
    None
}

/// Whether a process group that exists for kill(2) has a member that is not a
/// zombie. A zombie keeps its group alive until it is reaped, and orphaned
/// members are reaped by init, which in a container may be late or never:
/// the close ladder must not wait for the dead. Linux tells from `/proc`.
#[cfg(target_os = "linux")]
fn has_live_member(group: libc::pid_t) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return true;
    };
    entries.flatten().any(|entry| {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            return false;
        };
        // `pid (comm) state ppid pgrp …`; comm may hold spaces and parentheses.
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        let Some((_, after)) = stat.rsplit_once(')') else {
            return false;
        };
        let mut fields = after.split_whitespace();
        let state = fields.next().unwrap_or("Z");
        let pgrp = fields.nth(1).and_then(|g| g.parse::<libc::pid_t>().ok());
        pgrp == Some(group) && !matches!(state, "Z" | "X")
    })
}

/// Elsewhere the group's existence is all there is to know.
#[cfg(not(target_os = "linux"))]
fn has_live_member(_group: libc::pid_t) -> bool {
    true
}

/// Stops a started child: by signals to it or, with `process_group`, to its group.
/// Dropped once the child and its group are gone (or were sent SIGKILL), it
/// takes the child off the watchdog's list.
#[derive(Debug)]
pub(crate) struct Stopper {
    pid: libc::pid_t,
    group: bool,
    /// Its place on the watchdog's list; given up as soon as a child without
    /// a group of its own is reaped (its pid may be given out again).
    watched: Option<Watched>,
}

impl Stopper {
    pub(crate) fn new(
        child: &async_process::Child,
        options: Options,
        watched: Watched,
    ) -> io::Result<Self> {
        let pid = libc::pid_t::try_from(child.id()).map_err(io::Error::other)?;
        watched.fill(if options.process_group { -pid } else { pid });
        Ok(Stopper {
            pid,
            group: options.process_group,
            watched: Some(watched),
        })
    }

    /// The child was reaped: a bare pid leaves the watchdog's list now, as
    /// the system may give it to another process at once; a group stays
    /// listed while any of it may be left.
    pub(crate) fn reaped(&mut self) {
        if !self.group {
            self.watched = None;
        }
    }

    /// The polite request to stop: SIGTERM.
    pub(crate) fn terminate(&self, _child: &mut async_process::Child) {
        self.signal(libc::SIGTERM);
    }

    /// SIGKILL to the child, or to its whole group.
    pub(crate) fn kill(&self, child: &mut async_process::Child) {
        if self.group {
            self.signal(libc::SIGKILL);
        } else {
            let _ = child.kill();
        }
    }

    /// After the child's own exit: SIGTERM to what is left of its group, if any.
    pub(crate) fn terminate_rest(&self) {
        if self.group_lingers() {
            self.signal(libc::SIGTERM);
        }
    }

    /// After the child's own exit: ends what is left of its group, if any.
    pub(crate) fn kill_rest(&self) {
        if self.group_lingers() {
            self.signal(libc::SIGKILL);
        }
    }

    /// After the child's own exit: whether any process of its group is left.
    /// Asked before each signal to the group, so none goes to a group id that
    /// nothing holds any more (and that the system may give out again).
    pub(crate) fn group_lingers(&self) -> bool {
        // SAFETY: kill(2) with signal 0 only checks that the group exists.
        self.group && unsafe { libc::kill(-self.pid, 0) } == 0 && has_live_member(self.pid)
    }

    fn signal(&self, signal: libc::c_int) {
        let target = if self.group { -self.pid } else { self.pid };
        // SAFETY: kill(2) takes plain integers. The child is not reaped before the
        // driver sees its exit, so its pid still names it; a group id is not reused
        // while any member of the group lives.
        unsafe {
            libc::kill(target, signal);
        }
    }
}

/// A second handle on the child's stdin (a duplicate, non-blocking like the
/// driver's own): for a caller that writes its own line while the driver has
/// nothing to write, and to see whether the child has read what was written.
/// It is dropped with the driver's, so the child still sees its input end
/// when the driver closes it.
#[derive(Debug)]
pub(crate) struct DirectWriter(std::fs::File);

impl DirectWriter {
    /// A handle on `stdin`; none if the system has no descriptor to spare.
    pub(crate) fn of(stdin: &impl std::os::fd::AsFd) -> Option<Self> {
        let fd = stdin.as_fd().try_clone_to_owned().ok()?;
        Some(DirectWriter(std::fs::File::from(fd)))
    }

    /// Writes what the pipe takes now: 0 when it is full, or broken (the
    /// driver finds that out on its own write).
    pub(crate) fn write_now(&self, bytes: &[u8]) -> usize {
        use std::io::Write;
        loop {
            match (&self.0).write(bytes) {
                Ok(n) => return n,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return 0,
            }
        }
    }

    /// How many bytes written to the pipe the child has not read yet, where
    /// the system tells (Linux: `FIONREAD` counts a pipe's bytes from either end).
    #[cfg(target_os = "linux")]
    pub(crate) fn unread(&self) -> Option<usize> {
        use std::os::fd::AsRawFd;
        let mut unread: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int, through a pointer to a live one, for
        // a descriptor this handle owns.
        let asked = unsafe { libc::ioctl(self.0.as_raw_fd(), libc::FIONREAD, &raw mut unread) };
        (asked == 0).then(|| usize::try_from(unread).unwrap_or(0))
    }

    /// Elsewhere a pipe's write end does not tell (macOS counts only what
    /// was written *to* that end).
    #[cfg(not(target_os = "linux"))]
    pub(crate) fn unread(&self) -> Option<usize> {
        None
    }
}

/// Makes `dir` and its missing parents, those it makes its user's alone (0700).
pub(crate) fn create_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Creates `dir`, which must not exist (so that nobody can have made it
/// first), open to its user alone (0700).
pub(crate) fn create_new_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().mode(0o700).create(dir)
}

/// Creates `file`, which must not exist, readable and writable by its user alone (0600).
pub(crate) fn create_private_file(file: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(file)
}

/// Where the user's data lives: `$XDG_DATA_HOME`, else `~/.local/share`;
/// on macOS `~/Library/Application Support`.
pub(crate) fn user_data_dir() -> Option<std::path::PathBuf> {
    let home = || {
        std::env::var_os("HOME")
            .map(std::path::PathBuf::from)
            .filter(|h| h.is_absolute())
    };
    if cfg!(target_os = "macos") {
        return home().map(|h| h.join("Library").join("Application Support"));
    }
    std::env::var_os("XDG_DATA_HOME")
        .map(std::path::PathBuf::from)
        .filter(|d| d.is_absolute())
        .or_else(|| home().map(|h| h.join(".local").join("share")))
}
