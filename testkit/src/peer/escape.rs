//! `test/escape`: the peer tries one way out of a sandbox, named by `way`,
//! and answers `{"ok": true}` when it got out (with what it got), or
//! `{"ok": false, "error": TEXT}` with the OS's refusal. The sandbox's
//! tests ask for each way, inside the sandbox and (as a check that the way
//! is real) outside it.

use serde_json::{json, Value};

fn outcome<T>(result: std::io::Result<T>) -> Value {
    match result {
        Ok(_) => json!({ "ok": true }),
        Err(e) => json!({ "ok": false, "error": e.to_string() }),
    }
}

pub fn handle(method: &str, params: &Value) -> Option<Value> {
    if method != "test/escape" {
        return None;
    }
    let text = |key: &str| params[key].as_str().unwrap_or_default().to_owned();
    let number = |key: &str| params[key].as_i64().unwrap_or_default();
    let way = text("way");
    Some(match way.as_str() {
        // A stream pair, as Node and Python make for their children: allowed.
        "stream_pair" => outcome(std::os::unix::net::UnixStream::pair()),
        "unix_connect" => outcome(std::os::unix::net::UnixStream::connect(text("path"))),
        "dgram_pair_send" => outcome(
            std::os::unix::net::UnixDatagram::pair()
                .and_then(|(a, _)| a.send_to(b"x", text("path"))),
        ),
        "io_uring" => outcome(os::io_uring()),
        "proc_root_read" => outcome(std::fs::read(format!(
            "/proc/{}/root{}",
            number("pid"),
            text("path")
        ))),
        "proc_root_write" => outcome(std::fs::write(
            format!("/proc/{}/root{}", number("pid"), text("path")),
            "escaped\n",
        )),
        "signal" => outcome(os::kill(number("pid") as i32)),
        "tiocsti" => outcome(os::push_keystroke()),
        "umount" => outcome(os::umount(&text("path"))),
        "remount_write" => {
            let remounted = os::remount_root_writable();
            match std::fs::write(text("path"), "escaped\n") {
                Ok(()) => json!({ "ok": true }),
                Err(e) => json!({ "ok": false, "error": format!("{e} (remount: {remounted:?})") }),
            }
        }
        // Rename away the folder a denial guards, and plant a file where it stood.
        "rename_plant" => outcome(std::fs::rename(text("from"), text("to")).and_then(|()| {
            let plant = std::path::PathBuf::from(text("plant"));
            std::fs::create_dir_all(plant.parent().unwrap())?;
            std::fs::write(&plant, "#!/bin/sh\necho planted\n")
        })),
        "keyring" => match os::read_key(&text("description")) {
            Ok(key) => json!({ "ok": true, "key": key }),
            Err(e) => json!({ "ok": false, "error": e.to_string() }),
        },
        "fd_write" => outcome(os::write_fd(number("fd") as i32, b"escaped\n")),
        "setuid_chmod" => outcome(std::fs::write(text("path"), "x").and_then(|()| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(text("path"), std::fs::Permissions::from_mode(0o4755))?;
            special(&text("path"))
        })),
        "setuid_create" => outcome(
            {
                use std::os::unix::fs::OpenOptionsExt;
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o6755)
                    .open(text("path"))
            }
            .and_then(|_| special(&text("path"))),
        ),
        "fill" => {
            os::ignore_file_size_signal();
            outcome(fill(&text("path"), number("bytes") as u64))
        }
        "fork" => {
            let (started, error) = fork(number("count") as usize);
            match error {
                None => json!({ "ok": true, "started": started }),
                Some(e) => json!({ "ok": false, "started": started, "error": e.to_string() }),
            }
        }
        other => json!({ "ok": false, "error": format!("no way {other:?}") }),
    })
}

/// The tool `escape` (flag `--escape`): `test/escape` for a caller that
/// speaks only tools, such as the command line.
pub fn tool() -> Value {
    json!({
        "name": "escape",
        "description": "Tries one way out of a sandbox; answers {ok, error} as text.",
        "inputSchema": {"type": "object", "properties": {"way": {"type": "string"}}, "required": ["way"]}
    })
}

/// A `tools/call` of `escape`, answered with the outcome as its text.
pub fn call(method: &str, params: &Value) -> Option<Value> {
    if method != "tools/call" || params["name"] != "escape" {
        return None;
    }
    let outcome = handle("test/escape", &params["arguments"])?;
    Some(json!({ "content": [{ "type": "text", "text": outcome.to_string() }] }))
}

/// `Ok` only when the file at `path` kept a setuid or setgid bit.
fn special(path: &str) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path)?.permissions().mode();
    if mode & 0o6000 == 0 {
        return Err(std::io::Error::other(format!("made, but mode {mode:o}")));
    }
    Ok(())
}

/// Writes `bytes` to `path`, a MiB at a time.
fn fill(path: &str, bytes: u64) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = std::fs::File::create(path)?;
    let chunk = vec![0u8; 1 << 20];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        file.write_all(&chunk[..n])?;
        left -= n as u64;
    }
    let result = file.sync_all();
    drop(file);
    let _ = std::fs::remove_file(path);
    result
}

/// Starts `count` sleeping children, then ends them: how many started, and
/// the error that stopped it early.
fn fork(count: usize) -> (usize, Option<std::io::Error>) {
    let mut children = Vec::new();
    let mut error = None;
    for _ in 0..count {
        match std::process::Command::new("sleep").arg("30").spawn() {
            Ok(child) => children.push(child),
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    let started = children.len();
    for mut child in children {
        let _ = child.kill();
        let _ = child.wait();
    }
    (started, error)
}

/// The system calls std has no word for.
mod os {
    use std::io;

    fn check(result: libc::c_long) -> io::Result<libc::c_long> {
        if result < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(result)
    }

    pub fn io_uring() -> io::Result<()> {
        let mut params = [0u8; 120];
        // SAFETY: io_uring_setup reads and fills a struct io_uring_params (120 bytes).
        let fd = check(unsafe { libc::syscall(libc::SYS_io_uring_setup, 4, params.as_mut_ptr()) })?;
        // SAFETY: closes the descriptor just made.
        unsafe { libc::close(fd as i32) };
        Ok(())
    }

    pub fn kill(pid: i32) -> io::Result<()> {
        // SAFETY: kill(2) takes plain integers.
        check(unsafe { libc::kill(pid, libc::SIGKILL) }.into()).map(drop)
    }

    pub fn push_keystroke() -> io::Result<()> {
        let tty = std::fs::OpenOptions::new().write(true).open("/dev/tty")?;
        let byte = b'#';
        // SAFETY: TIOCSTI reads one byte at the pointer given.
        let done =
            unsafe { libc::ioctl(std::os::fd::AsRawFd::as_raw_fd(&tty), libc::TIOCSTI, &byte) };
        check(done.into()).map(drop)
    }

    pub fn umount(path: &str) -> io::Result<()> {
        let path = std::ffi::CString::new(path)?;
        // SAFETY: a NUL-terminated path.
        check(unsafe { libc::umount2(path.as_ptr(), libc::MNT_DETACH) }.into()).map(drop)
    }

    pub fn remount_root_writable() -> io::Result<()> {
        let root = c"/";
        // SAFETY: NUL-terminated strings or null where mount(2) allows it.
        let done = unsafe {
            libc::mount(
                std::ptr::null(),
                root.as_ptr(),
                std::ptr::null(),
                libc::MS_REMOUNT | libc::MS_BIND,
                std::ptr::null(),
            )
        };
        check(done.into()).map(drop)
    }

    /// The payload of the `user` key `description` in the session keyring.
    pub fn read_key(description: &str) -> io::Result<String> {
        const KEYCTL_READ: libc::c_long = 11;
        const KEYCTL_SEARCH: libc::c_long = 10;
        const SESSION: libc::c_long = -3;
        let kind = c"user";
        let description = std::ffi::CString::new(description)?;
        // SAFETY: keyctl(KEYCTL_SEARCH, keyring, type, description, 0) with NUL-terminated strings.
        let key = check(unsafe {
            libc::syscall(
                libc::SYS_keyctl,
                KEYCTL_SEARCH,
                SESSION,
                kind.as_ptr(),
                description.as_ptr(),
                0,
            )
        })?;
        let mut buffer = [0u8; 256];
        // SAFETY: keyctl(KEYCTL_READ) writes at most the length given.
        let n = check(unsafe {
            libc::syscall(
                libc::SYS_keyctl,
                KEYCTL_READ,
                key,
                buffer.as_mut_ptr(),
                buffer.len(),
            )
        })?;
        Ok(String::from_utf8_lossy(&buffer[..(n as usize).min(buffer.len())]).into_owned())
    }

    pub fn write_fd(fd: i32, bytes: &[u8]) -> io::Result<()> {
        // SAFETY: write(2) reads `bytes`; a descriptor not open fails with EBADF.
        check(unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) } as libc::c_long)
            .map(drop)
    }

    pub fn ignore_file_size_signal() {
        // SAFETY: ignoring SIGXFSZ so that a write past RLIMIT_FSIZE fails with EFBIG.
        unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    }
}
