//! What a sandboxed server's start asks of the OS (Unix): it inherits no
//! descriptor but its stdio and those handed to the confining program (a
//! descriptor the host left open without close-on-exec would be a way out),
//! and it starts under resource limits the sandbox cannot set itself.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

/// The resource limits set on the confining program, which its server and
/// everything that server starts inherit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StartLimits {
    /// `RLIMIT_FSIZE`: the largest file it may write, in bytes.
    pub(crate) file_bytes: u64,
    /// `RLIMIT_NPROC`, when set: how many processes its user may have.
    pub(crate) processes: Option<u64>,
}

/// Has `command` start with only stdio and `keep` inherited (`keep` stays
/// open until the command is dropped), under `limits`.
pub(crate) fn start_confined(command: &mut Command, keep: Vec<OwnedFd>, limits: StartLimits) {
    let kept: Vec<RawFd> = keep.iter().map(AsRawFd::as_raw_fd).collect();
    let hook = move || {
        // Owned by the hook, so open in the parent until the spawn is over.
        let _ = &keep;
        close_on_exec_from(3);
        for &fd in &kept {
            // SAFETY: fcntl on a descriptor this process owns (held by `keep`);
            // async-signal-safe, as a hook between fork and exec must be.
            if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } == -1 {
                return Err(io::Error::last_os_error());
            }
        }
        set_limit(libc::RLIMIT_FSIZE, limits.file_bytes)?;
        if let Some(processes) = limits.processes {
            set_limit(libc::RLIMIT_NPROC, processes)?;
        }
        Ok(())
    };
    // SAFETY: the hook runs between fork and exec and makes only
    // async-signal-safe calls (fcntl, setrlimit, close_range); it allocates nothing.
    unsafe { command.pre_exec(hook) };
}

/// Has `command` start with only its stdio inherited, and `fd` as its
/// descriptor `at` (the watchdog and its list: a descriptor the host left
/// inheritable would outlive the host with it).
pub(crate) fn inherit_only_stdio_and(command: &mut Command, fd: RawFd, at: RawFd) {
    let hook = move || {
        close_on_exec_from(3);
        // SAFETY: dup2 and fcntl on descriptors this process holds open
        // until the spawn is over; both async-signal-safe. dup2 onto
        // itself keeps the close-on-exec flag, hence the fcntl.
        let given = unsafe {
            if fd == at {
                libc::fcntl(at, libc::F_SETFD, 0)
            } else {
                libc::dup2(fd, at)
            }
        };
        if given == -1 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    };
    // SAFETY: the hook runs between fork and exec and makes only
    // async-signal-safe calls (close_range, or getrlimit and fcntl; dup2).
    unsafe { command.pre_exec(hook) };
}

/// Marks every descriptor from `first` on close-on-exec.
fn close_on_exec_from(first: RawFd) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: close_range(2) with CLOSE_RANGE_CLOEXEC changes flags only (Linux 5.11+).
        let done = unsafe {
            libc::syscall(
                libc::SYS_close_range,
                first as libc::c_uint,
                libc::c_uint::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            )
        } == 0;
        if done {
            return;
        }
    }
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit fills the struct it is given.
    let open_max = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
        limit.rlim_cur.min(1 << 16) as RawFd
    } else {
        1024
    };
    for fd in first..open_max {
        // SAFETY: on a descriptor that is not open this fails with EBADF, and changes nothing.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
}

fn set_limit(resource: LimitResource, value: u64) -> io::Result<()> {
    let value = value as libc::rlim_t;
    let limit = libc::rlimit {
        rlim_cur: value,
        rlim_max: value,
    };
    // SAFETY: setrlimit reads the struct it is given.
    if unsafe { libc::setrlimit(resource, &limit) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
type LimitResource = libc::__rlimit_resource_t;
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
type LimitResource = libc::c_int;

/// How many processes this user runs now (Linux: the entries of `/proc`
/// that belong to this user); `None` for root, whom the kernel exempts from
/// `RLIMIT_NPROC`, or when `/proc` cannot be read.
#[cfg(target_os = "linux")]
pub(crate) fn user_processes() -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    if uid == 0 {
        return None;
    }
    let entries = std::fs::read_dir("/proc").ok()?;
    let count = entries
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter(|e| e.metadata().is_ok_and(|m| m.uid() == uid))
        .count();
    Some(count as u64)
}
