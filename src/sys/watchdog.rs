//! The watchdog: one small process per host that outlives the host by a
//! moment and ends the servers it left running — also when the host was
//! killed with SIGKILL, which no exit hook sees.
//!
//! It is `/bin/sh` running [`SCRIPT`], a loop of builtins, started at the
//! first spawn: a program of its own, so it holds none of the host's memory.
//! Its stdin is one end of a socket pair; the host holds the other and writes
//! `+ TARGET` when a server started (`-pgid` for a server in a group of its
//! own, else its pid) and `- TARGET` once it is gone. The read returns end of
//! file when the host's end closes, which the kernel does when the host ends,
//! however it ends; then the watchdog ends what is listed.
//!
//! The host keeps the list too, and learns of the watchdog's death from the
//! same socket (a thread blocks reading it; the watchdog never writes): it
//! starts another at once and hands it the whole list. A copy of the host
//! made by `fork` without exec closes its inherited end of the socket at once
//! (a `pthread_atfork` handler), so the original's watchdog still sees the
//! original's end, and the copy's first spawn starts a watchdog and a list of
//! its own.

use std::collections::HashMap;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, Once, PoisonError};

/// The watchdog's program. It lists what the host sends; at the end of its
/// input it gives the listed 1 s (their stdin ended with the host: most exit
/// by themselves), SIGTERM, 1 s more, SIGKILL. It ignores the signals a
/// terminal or `pkill host` would send, and forks nothing until the host is
/// gone (`sleep` only then).
const SCRIPT: &str = r#"trap '' INT HUP TERM QUIT PIPE TSTP TTIN TTOU USR1 USR2
list=' '
while read -r op target; do
  case $op in
    +) list="$list$target " ;;
    -) case $list in *" $target "*) list="${list%%" $target "*} ${list#*" $target "}" ;; esac ;;
  esac
done
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

/// This process's watchdog and what it watches.
struct Watch {
    /// The process the list belongs to: a forked copy sees another pid and
    /// starts over.
    owner: u32,
    /// What to end, by the key of the [`Watched`] that holds it.
    targets: HashMap<u64, libc::pid_t>,
    next_key: u64,
    dog: Option<Dog>,
    /// How many watchdogs this process started (tells a replaced one).
    started: u64,
}

/// A running watchdog.
struct Dog {
    child: Child,
    /// The host's end of its stdin (also read, for its end, by its minder).
    socket: Arc<UnixStream>,
    number: u64,
}

static WATCH: Mutex<Option<Watch>> = Mutex::new(None);
/// The descriptor of the current watchdog's socket, for the fork handler.
static SOCKET: AtomicI32 = AtomicI32::new(-1);

/// A server's place on the watchdog's list: filled with its kill(2) target
/// once it started, given up when dropped (the server and its group are
/// gone by then, or were sent SIGKILL).
#[derive(Debug)]
pub(crate) struct Watched {
    /// The process that listed it, and its key there.
    place: Option<(u32, u64)>,
}

impl Watched {
    /// Nothing watched: the child may outlive this process (`kill_on_parent_death(false)`).
    pub(crate) fn not() -> Self {
        Watched { place: None }
    }

    /// A place for a child about to start, the watchdog started first when
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
        let mut watch = WATCH.lock().unwrap_or_else(PoisonError::into_inner);
        let watch = watch.get_or_insert_with(|| Watch::new(me));
        if watch.owner != me {
            // A copy made by fork: the list and watchdog are the original's.
            // The socket was closed by the fork handler, and the child is not
            // ours to reap: both are forgotten, never dropped (their
            // descriptor's number may be another file's by now).
            let inherited = std::mem::replace(watch, Watch::new(me));
            if let Some(dog) = inherited.dog {
                std::mem::forget(dog);
            }
        }
        // Known to have ended (its minder may not have replaced it yet).
        let running = watch
            .dog
            .as_mut()
            .is_some_and(|dog| !matches!(dog.child.try_wait(), Ok(Some(_))));
        if !running {
            watch.replace_dog()?;
        }
        let key = watch.next_key;
        watch.next_key += 1;
        Ok(Watched {
            place: Some((me, key)),
        })
    }

    /// The child started: `target` is what the watchdog signals should this
    /// process end first (`-pid` for the child's own process group).
    pub(crate) fn fill(&self, target: libc::pid_t) {
        with_own(self.place, |watch, key| {
            watch.targets.insert(key, target);
            watch.tell(&format!("+ {target}\n"));
        });
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        with_own(self.place, |watch, key| {
            if let Some(target) = watch.targets.remove(&key) {
                watch.tell(&format!("- {target}\n"));
            }
        });
    }
}

/// Runs `act` on the list, if `place` is on this process's (not a list a
/// forked copy inherited).
fn with_own(place: Option<(u32, u64)>, act: impl FnOnce(&mut Watch, u64)) {
    let Some((owner, key)) = place else { return };
    if owner != std::process::id() {
        return;
    }
    let mut watch = WATCH.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(watch) = watch.as_mut().filter(|w| w.owner == owner) {
        act(watch, key);
    }
}

impl Watch {
    fn new(owner: u32) -> Self {
        Watch {
            owner,
            targets: HashMap::new(),
            next_key: 0,
            dog: None,
            started: 0,
        }
    }

    /// Starts a watchdog in place of the current one (gone and reaped, or
    /// none yet), and hands it the whole list.
    fn replace_dog(&mut self) -> io::Result<()> {
        self.dog = None;
        SOCKET.store(-1, Ordering::SeqCst);
        let (host_end, dog_end) = UnixStream::pair()?;
        no_sigpipe(&host_end)?;
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
        // Only its stdio: a copy of a descriptor the host left inheritable
        // (a server's stdin, a socket) would outlive the host with it.
        super::sandboxed::inherit_only_stdio(&mut command);
        // The list is in the socket before the watchdog runs (as much as
        // its buffer takes; the rest right after): a host killed at any
        // moment from here on leaves a watchdog that knows its servers.
        let mut list = String::new();
        for target in self.targets.values() {
            list.push_str(&format!("+ {target}\n"));
        }
        host_end.set_nonblocking(true)?;
        let rest = send(&host_end, &list);
        host_end.set_nonblocking(false)?;
        let child = command.spawn()?;
        send(&host_end, rest);
        self.started += 1;
        let socket = Arc::new(host_end);
        SOCKET.store(socket.as_raw_fd(), Ordering::SeqCst);
        let dog = Dog {
            child,
            socket: Arc::clone(&socket),
            number: self.started,
        };
        let number = dog.number;
        self.dog = Some(dog);
        let minder = std::thread::Builder::new()
            .name(NAME.to_owned())
            .stack_size(64 << 10)
            .spawn(move || mind(&socket, number));
        if let Err(error) = minder {
            // Unminded, it would be replaced only at the next spawn.
            self.dog = None;
            return Err(error);
        }
        Ok(())
    }

    /// Sends `line` to the watchdog. If it has died, its minder replaces it
    /// and sends the whole list: nothing to do here.
    fn tell(&self, line: &str) {
        if let Some(dog) = &self.dog {
            send(&dog.socket, line);
        }
    }
}

/// Sends `text` on `socket`: what is left unsent, all but empty unless
/// the socket is non-blocking and full (or the watchdog has died).
fn send<'a>(socket: &UnixStream, mut text: &'a str) -> &'a str {
    while !text.is_empty() {
        // SAFETY: send(2) of a live buffer on a socket the caller holds open.
        let sent = unsafe {
            libc::send(
                socket.as_raw_fd(),
                text.as_ptr().cast(),
                text.len(),
                SEND_FLAGS,
            )
        };
        match sent {
            n if n > 0 => text = &text[n as usize..],
            _ if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => {}
            _ => break,
        }
    }
    text
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
    let mut watch = WATCH.lock().unwrap_or_else(PoisonError::into_inner);
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
    let fd = SOCKET.swap(-1, Ordering::SeqCst);
    if fd >= 0 {
        // SAFETY: close(2) is async-signal-safe; the copy never uses this
        // number as the watchdog's again (its Watch is forgotten, not dropped).
        unsafe { libc::close(fd) };
    }
}

/// A write to a watchdog that died must fail, not kill the host with
/// SIGPIPE (a host in C may not ignore it, as Rust's `main` does).
#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
const SEND_FLAGS: libc::c_int = libc::MSG_NOSIGNAL;
#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
const SEND_FLAGS: libc::c_int = 0;

#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
fn no_sigpipe(_socket: &UnixStream) -> io::Result<()> {
    Ok(())
}

/// Where send(2) takes no MSG_NOSIGNAL (macOS), the socket says it instead.
#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
fn no_sigpipe(socket: &UnixStream) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: setsockopt(2) on a socket we hold, with a live c_int.
    let set = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_NOSIGPIPE,
            (&raw const on).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if set == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// What the host's list holds now.
    fn listed() -> Vec<libc::pid_t> {
        let watch = WATCH.lock().unwrap_or_else(PoisonError::into_inner);
        watch
            .as_ref()
            .map_or_else(Vec::new, |w| w.targets.values().copied().collect())
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
