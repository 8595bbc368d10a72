//! The watchdog: one small process per host that outlives the host by a
//! moment and ends the servers it left running — also when the host was
//! killed with SIGKILL, which no exit hook sees.
//!
//! It is forked from the host at its first spawn with `kill_on_parent_death`
//! and learns of the host's end from a pipe: the host holds the write end and
//! never writes, so the read returns 0 only once every copy is closed, which
//! the kernel does when the host ends, however it ends. What to end it reads
//! from a table in memory shared with the host: each slot holds a kill(2)
//! target, `-pgid` for a server in a group of its own or its pid, filled after
//! the spawn and cleared once that server and its group are gone. So a spawn
//! costs no system call here, and a request nothing at all.
//!
//! After the fork the watchdog runs only async-signal-safe calls (`setpgid`,
//! `signal`, `dup2`, `close`, `read`, `kill`, `nanosleep`, `_exit`; `prctl` on
//! Linux), allocates nothing and never returns into the host's code: what
//! another thread of the host held at the fork is never touched.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// How many servers can be watched at once (a 64 KiB table).
const SLOTS: usize = 16 * 1024;
/// A slot nobody holds.
const FREE: i32 = 0;
/// A slot held for a child about to start (no pid yet).
const RESERVED: i32 = i32::MIN;
/// After the host's end: how long the servers, whose input ended with it, have
/// to exit by themselves, and then to obey SIGTERM, before SIGKILL.
const GRACE: Duration = Duration::from_secs(1);
/// How often the watchdog looks whether what it waits for is gone.
const LOOK: Duration = Duration::from_millis(50);

/// The table shared with every watchdog this process starts, and the one
/// running now.
struct Watch {
    table: &'static [AtomicI32],
    dog: Option<Dog>,
}

/// A running watchdog: its pid, and the write end of its pipe.
struct Dog {
    pid: libc::pid_t,
    _alive: OwnedFd,
}

static WATCH: Mutex<Option<Watch>> = Mutex::new(None);

/// A slot of the watchdog's table, held for one child: filled with its kill(2)
/// target once it started, cleared when dropped (the child and its group are
/// gone by then, or were sent SIGKILL).
#[derive(Debug)]
pub(crate) struct Watched {
    slot: Option<&'static AtomicI32>,
}

impl Watched {
    /// Nothing watched: the child may outlive this process (`kill_on_parent_death(false)`).
    pub(crate) fn not() -> Self {
        Watched { slot: None }
    }

    /// Holds a slot for a child about to start, starting the watchdog first
    /// when none runs (the first time, or after something killed it), so no
    /// server ever runs unwatched.
    pub(crate) fn reserve() -> io::Result<Self> {
        let mut watch = WATCH.lock().unwrap_or_else(PoisonError::into_inner);
        let watch = match &mut *watch {
            Some(watch) => watch,
            empty => empty.insert(Watch {
                table: shared_table()?,
                dog: None,
            }),
        };
        if !watch.dog.as_ref().is_some_and(Dog::runs) {
            watch.dog = None;
            watch.dog = Some(Dog::start(watch.table)?);
        }
        let slot = watch
            .table
            .iter()
            .find(|slot| {
                slot.compare_exchange(FREE, RESERVED, Ordering::SeqCst, Ordering::Relaxed)
                    .is_ok()
            })
            .ok_or_else(|| {
                io::Error::other(format!(
                    "more than {SLOTS} servers at once are more than the watchdog can watch"
                ))
            })?;
        Ok(Watched { slot: Some(slot) })
    }

    /// The child started: `target` is what the watchdog signals should this
    /// process end first (`-pid` for the child's own process group).
    pub(crate) fn fill(&self, target: libc::pid_t) {
        if let Some(slot) = self.slot {
            slot.store(target, Ordering::SeqCst);
        }
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if let Some(slot) = self.slot {
            slot.store(FREE, Ordering::SeqCst);
        }
    }
}

/// Memory shared with the watchdogs to come: an anonymous shared mapping,
/// which a forked child sees as the same pages.
fn shared_table() -> io::Result<&'static [AtomicI32]> {
    let bytes = SLOTS * std::mem::size_of::<AtomicI32>();
    // SAFETY: a new anonymous mapping, no address asked for and no descriptor;
    // the result is checked before use.
    let address = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANON,
            -1,
            0,
        )
    };
    if address == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the mapping is `bytes` long, page-aligned, zeroed (every slot
    // FREE), never unmapped (it lives as long as the process), and
    // `AtomicI32` has the size and alignment of `i32`.
    Ok(unsafe { std::slice::from_raw_parts(address.cast::<AtomicI32>(), SLOTS) })
}

impl Dog {
    /// Forks a watchdog over `table`.
    fn start(table: &'static [AtomicI32]) -> io::Result<Dog> {
        // Both ends close on exec: no server ever holds the write end (it would
        // keep the watchdog waiting after the host's end).
        let (input, alive) = io::pipe()?;
        let highest = highest_descriptor();
        // SAFETY: the child runs `watch_over` alone, which makes only
        // async-signal-safe calls, touches only what was made above (the
        // table, the pipe's number, plain integers), allocates nothing and
        // ends in `_exit`, never returning into the host's code.
        let pid = unsafe { libc::fork() };
        match pid {
            -1 => Err(io::Error::last_os_error()),
            // SAFETY: this is the forked child, and this its first code.
            0 => unsafe { watch_over(input.as_raw_fd(), table, highest) },
            pid => Ok(Dog {
                pid,
                _alive: alive.into(),
            }),
        }
    }

    /// Whether it still runs. If it ended (something killed it) it is reaped
    /// here; if somebody else reaped it, it is gone all the same.
    fn runs(&self) -> bool {
        let mut status = 0;
        // SAFETY: waitpid(2) on our own child, without blocking; `status` is a
        // live integer.
        unsafe { libc::waitpid(self.pid, &raw mut status, libc::WNOHANG) == 0 }
    }
}

/// The highest descriptor number a fallback close loop must reach: the
/// process's limit, capped (a limit of millions would make the loop slow).
fn highest_descriptor() -> RawFd {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit(2) writes the live struct it is given.
    let known = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut limit) } == 0;
    let cur = if known { limit.rlim_cur } else { 1024 };
    RawFd::try_from(cur.min(1 << 20)).unwrap_or(1 << 20)
}

/// The watchdog's life, in the forked child: wait for the host's end, then end
/// what the table names.
///
/// # Safety
///
/// Only in the child of `fork`, as its first and last code.
unsafe fn watch_over(input: RawFd, table: &[AtomicI32], highest: RawFd) -> ! {
    // A group of its own: a terminal's Ctrl-C for the host never reaches it,
    // and signals meant for the host's name (`pkill host`) end the host, whose
    // end it then sees.
    libc::setpgid(0, 0);
    for signal in [
        libc::SIGINT,
        libc::SIGHUP,
        libc::SIGTERM,
        libc::SIGQUIT,
        libc::SIGPIPE,
        libc::SIGTSTP,
        libc::SIGTTIN,
        libc::SIGTTOU,
    ] {
        libc::signal(signal, libc::SIG_IGN);
    }
    #[cfg(target_os = "linux")]
    libc::prctl(libc::PR_SET_NAME, c"stdio-mcp-watch".as_ptr());
    // Only the pipe stays open, as stdin: a copy of anything else the host
    // held (a server's stdin, a socket, the host's own stdout) would keep it
    // open past the host's end.
    if input != 0 {
        libc::dup2(input, 0);
    }
    close_from(1, highest);

    let mut buffer = [0u8; 16];
    loop {
        let read = libc::read(0, buffer.as_mut_ptr().cast(), buffer.len());
        let interrupted =
            read < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR);
        if read <= 0 && !interrupted {
            break;
        }
    }

    // The servers' input ended with the host: most exit by themselves.
    wait_while_any_runs(table);
    signal_all(table, libc::SIGTERM);
    wait_while_any_runs(table);
    signal_all(table, libc::SIGKILL);
    libc::_exit(0)
}

/// Closes every descriptor from `first` on.
unsafe fn close_from(first: RawFd, highest: RawFd) {
    #[cfg(target_os = "linux")]
    if libc::syscall(
        libc::SYS_close_range,
        first as libc::c_uint,
        libc::c_uint::MAX,
        0,
    ) == 0
    {
        return;
    }
    #[cfg(target_os = "freebsd")]
    {
        let _ = highest;
        libc::closefrom(first);
    }
    #[cfg(not(target_os = "freebsd"))]
    for fd in first..=highest {
        libc::close(fd);
    }
}

/// The targets in the table.
fn targets(table: &[AtomicI32]) -> impl Iterator<Item = libc::pid_t> + '_ {
    table
        .iter()
        .map(|slot| slot.load(Ordering::SeqCst))
        .filter(|&target| target != FREE && target != RESERVED)
}

unsafe fn signal_all(table: &[AtomicI32], signal: libc::c_int) {
    for target in targets(table) {
        libc::kill(target, signal);
    }
}

/// Waits up to `GRACE` for every target to be gone.
unsafe fn wait_while_any_runs(table: &[AtomicI32]) {
    let step = libc::timespec {
        tv_sec: 0,
        tv_nsec: LOOK.as_nanos() as libc::c_long,
    };
    for _ in 0..(GRACE.as_millis() / LOOK.as_millis()) {
        if !targets(table).any(|target| libc::kill(target, 0) == 0) {
            return;
        }
        libc::nanosleep(&step, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the table lists now.
    fn listed() -> Vec<libc::pid_t> {
        let watch = WATCH.lock().unwrap_or_else(PoisonError::into_inner);
        watch
            .as_ref()
            .map_or_else(Vec::new, |w| targets(w.table).collect())
    }

    #[test]
    fn a_reaped_child_without_a_group_leaves_the_list_at_once() {
        futures::executor::block_on(async {
            // A grandchild holds its pipes: the driver still reads them for
            // a while after the exit (its drain grace).
            let t = crate::Transport::builder(["sh", "-c", "sleep 2 & exec sleep 0.2"])
                .process_group(false)
                .spawn()
                .unwrap();
            let pid = libc::pid_t::try_from(t.pid()).unwrap();
            assert!(listed().contains(&pid), "listed while it runs");
            let started = std::time::Instant::now();
            while t.exit_status().is_none() {
                assert!(
                    started.elapsed() < Duration::from_secs(30),
                    "sh never ended"
                );
                async_io::Timer::after(Duration::from_millis(5)).await;
            }
            // Reaped, its pid free for the system to give out: off the list
            // though the transport still holds the child's pipes.
            assert!(
                !listed().contains(&pid),
                "{pid} still listed after its exit"
            );
            t.close().await.unwrap();
        });
    }
}
