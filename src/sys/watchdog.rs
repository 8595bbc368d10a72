//! The watchdog: one small process per host that outlives the host by a
//! moment and ends the servers it left running — also when the host was
//! killed with SIGKILL, which no exit hook sees.
//!
//! It is `/bin/sh` running [`SCRIPT`], started at the first spawn: a program
//! of its own, so it holds none of the host's memory. Its stdin is one end of
//! a socket pair whose other end only the host holds; nobody ever writes, so
//! its `read` returns only at end of file, when the host's end closes, which
//! the kernel does when the host ends, however it ends. Then it reads the
//! list of what to end from its descriptor 3: a file (Linux: a `memfd`, else
//! an unlinked temporary file) of fixed-width records the host writes in
//! place with `pwrite` — a server's kill(2) target (`-pgid` for a server in a
//! group of its own, else its pid) when it started, blanks once it is gone.
//! So the watchdog never wakes while the host lives, and a spawn costs one
//! `pwrite` here.
//!
//! The host learns of the watchdog's death from the same socket (a thread
//! blocks reading it) and starts another at once, over the same list. A copy
//! of the host made by `fork` without exec closes its inherited end of the
//! socket at once (a `pthread_atfork` handler), so the original's watchdog
//! still sees the original's end, never writes the original's list, and its
//! first spawn starts a watchdog and a list of its own.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::FileExt;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, Once};

/// The watchdog's program: it waits for the end of its input (the host's
/// end), then gives what the list names 1 s (their stdin ended with the
/// host: most exit by themselves), SIGTERM, 1 s more, SIGKILL. It ignores
/// the signals a terminal or `pkill host` would send, and runs nothing but
/// builtins until the host is gone.
const SCRIPT: &str = r#"trap '' INT HUP TERM QUIT PIPE TSTP TTIN TTOU USR1 USR2
while read -r _; do :; done
list=$(cat <&3)
exec 3<&-
alive() { for t in $list; do kill -0 -- "$t" 2>/dev/null && return 0; done; return 1; }
grace() { n=0; while [ $n -lt 20 ] && alive; do sleep 0.05; n=$((n+1)); done; }
grace
for t in $list; do kill -s TERM -- "$t" 2>/dev/null; done
grace
for t in $list; do kill -s KILL -- "$t" 2>/dev/null; done
"#;

/// The shell that runs it: present on every Unix.
const SHELL: &str = "/bin/sh";
/// Its name in the process table (`ps`, `/proc/PID/cmdline`).
const NAME: &str = "stdio-mcp-watch";
/// A record of the list: a target right-aligned in 11 characters (any
/// `i32`), then a newline; all blanks for a free one.
const RECORD: usize = 12;
const FREE: &[u8; RECORD] = b"           \n";

/// This process's watchdog and what it watches.
struct Watch {
    /// The process the list belongs to: a forked copy sees another pid and
    /// starts over.
    owner: u32,
    /// The list's file, which every watchdog of this process reads.
    list: File,
    /// What each record holds: `None` for a free one, `Some(0)` for one
    /// held for a child about to start.
    records: Vec<Option<libc::pid_t>>,
    dog: Option<Dog>,
    /// How many watchdogs this process started (tells a replaced one).
    started: u64,
}

/// A running watchdog.
struct Dog {
    child: Child,
    /// The host's end of its stdin, read by its minder for its end; its
    /// number is in [`SOCKET`] for the fork handler.
    _socket: Arc<UnixStream>,
    number: u64,
}

static WATCH: Mutex<Option<Watch>> = Mutex::new(None);
/// The descriptor of the current watchdog's socket, for the fork handler.
static SOCKET: AtomicI32 = AtomicI32::new(-1);

/// A server's record on the watchdog's list: filled with its kill(2) target
/// once it started, blanked when dropped (the server and its group are gone
/// by then, or were sent SIGKILL).
#[derive(Debug)]
pub(crate) struct Watched {
    /// The process that listed it, and its record there.
    place: Option<(u32, usize)>,
}

impl Watched {
    /// Nothing watched: the child may outlive this process (`kill_on_parent_death(false)`).
    pub(crate) fn not() -> Self {
        Watched { place: None }
    }

    /// A record for a child about to start, the watchdog started first when
    /// none runs (the first time, in a forked copy, or after something
    /// killed it), so no server ever runs unwatched.
    pub(crate) fn reserve() -> io::Result<Self> {
        static HANDLER: Once = Once::new();
        // SAFETY: pthread_atfork with a handler that makes only
        // async-signal-safe calls; registered once per process.
        HANDLER.call_once(|| unsafe {
            libc::pthread_atfork(None, None, Some(in_forked_copy));
        });
        let me = std::process::id();
        let mut watch = crate::lock::lock(&WATCH);
        if watch.as_ref().is_some_and(|w| w.owner != me) {
            // A copy made by fork: the list and watchdog are the original's.
            // The socket was closed by the fork handler and the child is not
            // ours to reap: the watchdog is forgotten, never dropped (its
            // descriptor's number may be another file's by now).
            if let Some(inherited) = watch.take() {
                std::mem::forget(inherited.dog);
            }
        }
        let watch = match &mut *watch {
            Some(watch) => watch,
            none => none.insert(Watch::new(me)?),
        };
        // Known to have ended (its minder may not have replaced it yet).
        let running = watch
            .dog
            .as_mut()
            .is_some_and(|dog| !matches!(dog.child.try_wait(), Ok(Some(_))));
        if !running {
            watch.replace_dog()?;
        }
        let record = match watch.records.iter().position(Option::is_none) {
            Some(free) => free,
            None => {
                watch.records.push(None);
                watch.records.len() - 1
            }
        };
        watch.records[record] = Some(0);
        Ok(Watched {
            place: Some((me, record)),
        })
    }

    /// The child started: `target` is what the watchdog signals should this
    /// process end first (`-pid` for the child's own process group).
    pub(crate) fn fill(&self, target: libc::pid_t) {
        with_own(self.place, |watch, record| {
            watch.records[record] = Some(target);
            let text = format!("{target:>11}\n");
            watch.write(record, text.as_bytes());
        });
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        with_own(self.place, |watch, record| {
            if watch.records[record].take().is_some_and(|t| t != 0) {
                watch.write(record, FREE);
            }
        });
    }
}

/// Runs `act` on the list, if `place` is on this process's (not on a list
/// a forked copy inherited).
fn with_own(place: Option<(u32, usize)>, act: impl FnOnce(&mut Watch, usize)) {
    let Some((owner, record)) = place else { return };
    if owner != std::process::id() {
        return;
    }
    let mut watch = crate::lock::lock(&WATCH);
    if let Some(watch) = watch.as_mut().filter(|w| w.owner == owner) {
        act(watch, record);
    }
}

impl Watch {
    fn new(owner: u32) -> io::Result<Self> {
        Ok(Watch {
            owner,
            list: list_file()?,
            records: Vec::new(),
            dog: None,
            started: 0,
        })
    }

    /// Writes `record`'s text in place. A failure (a full disk under the
    /// temporary file) leaves that record as it was.
    fn write(&self, record: usize, text: &[u8]) {
        let _ = self.list.write_all_at(text, (record * RECORD) as u64);
    }

    /// Starts a watchdog in place of the current one (gone and reaped, or
    /// none yet), over the same list.
    fn replace_dog(&mut self) -> io::Result<()> {
        self.dog = None;
        SOCKET.store(-1, Ordering::SeqCst);
        let (host_end, dog_end) = UnixStream::pair()?;
        let mut command = Command::new(SHELL);
        command
            .arg0(NAME)
            .args(["-c", SCRIPT])
            .stdin(Stdio::from(OwnedFd::from(dog_end)))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // A group of its own: a terminal's Ctrl-C for the host never
            // reaches it; `pkill host` ends the host, whose end it sees.
            .process_group(0);
        // Only its stdio and the list: a copy of a descriptor the host left
        // inheritable (a server's stdin, a socket) would outlive the host.
        super::sandboxed::inherit_only_stdio_and(&mut command, self.list.as_raw_fd(), 3);
        let child = command.spawn()?;
        self.started += 1;
        let socket = Arc::new(host_end);
        SOCKET.store(socket.as_raw_fd(), Ordering::SeqCst);
        let number = self.started;
        let minded = Arc::clone(&socket);
        // Should no thread be had, it is replaced at the next spawn instead.
        let _ = std::thread::Builder::new()
            .name(NAME.to_owned())
            .stack_size(64 << 10)
            .spawn(move || mind(&minded, number));
        self.dog = Some(Dog {
            child,
            _socket: socket,
            number,
        });
        Ok(())
    }
}

/// The file the list is written to: anonymous, so nothing is left behind.
#[cfg(target_os = "linux")]
fn list_file() -> io::Result<File> {
    // SAFETY: memfd_create(2) with a NUL-terminated name; a descriptor it
    // returns is ours alone.
    let fd = unsafe { libc::memfd_create(c"stdio-mcp-watch".as_ptr(), libc::MFD_CLOEXEC) };
    if fd == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a new descriptor nothing else owns.
    Ok(File::from(unsafe {
        <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd)
    }))
}

/// Elsewhere a temporary file, removed at once: open, it stays.
#[cfg(not(target_os = "linux"))]
fn list_file() -> io::Result<File> {
    let path = std::env::temp_dir().join(format!(
        "stdio-mcp-watch-{}-{:x}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)?;
    std::fs::remove_file(&path)?;
    Ok(file)
}

/// The minder of watchdog `number`: waits on its socket for its end (it
/// never writes), then replaces it if it is still the current one.
fn mind(socket: &UnixStream, number: u64) {
    let mut buffer = [0u8; 64];
    loop {
        match (&*socket).read(&mut buffer) {
            Ok(0) => break,
            Ok(_) => {}
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    let mut watch = crate::lock::lock(&WATCH);
    if let Some(watch) = watch.as_mut() {
        let current = watch.dog.as_ref().is_some_and(|dog| dog.number == number);
        if current && watch.owner == std::process::id() {
            if let Some(mut dead) = watch.dog.take() {
                // Its stdin closed: it has ended, or is ending.
                let _ = dead.child.wait();
            }
            // If this fails, the next spawn tries again.
            let _ = watch.replace_dog();
        }
    }
}

/// In the copy made by `fork`, at once: its copy of the watchdog's socket
/// is closed, so the original's watchdog sees the original's end alone.
extern "C" fn in_forked_copy() {
    let fd: RawFd = SOCKET.swap(-1, Ordering::SeqCst);
    if fd >= 0 {
        // SAFETY: close(2) is async-signal-safe; the copy never uses this
        // number as the watchdog's again (its Watch is forgotten, not dropped).
        unsafe { libc::close(fd) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// What the host's list holds now.
    fn listed() -> Vec<libc::pid_t> {
        let watch = crate::lock::lock(&WATCH);
        watch
            .as_ref()
            .map_or_else(Vec::new, |w| w.records.iter().flatten().copied().collect())
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
