//! What only stdio-mcp's tests and benches need: its two servers (the
//! scriptable peer, `stdio-mcp-peer`, and the fast bench server,
//! `stdio-mcp-bench-server`) are this package's binaries, and [`exe`] finds
//! one from a test or bench binary of the same build. They live apart from
//! the library so that its package holds nothing a user would install.
//!
//! Build them before the tests (`scripts/test` does):
//! `cargo build -p stdio-mcp-testkit` (with `--release` for benches).

use std::path::PathBuf;

/// The path of this build's binary `name` (`"stdio-mcp-peer"`), found beside
/// the test or bench binary running now (`target/<profile>/deps/..` →
/// `target/<profile>/`). Panics, saying how to build it, when it is missing.
///
/// # Examples
///
/// ```no_run
/// let peer = stdio_mcp_testkit::exe("stdio-mcp-peer");
/// assert!(peer.ends_with(&format!("stdio-mcp-peer{}", std::env::consts::EXE_SUFFIX)));
/// ```
pub fn exe(name: &str) -> String {
    let running = std::env::current_exe().expect("the running binary's path");
    let file = format!("{name}{}", std::env::consts::EXE_SUFFIX);
    // Tests and benches run from `deps/`; examples from `examples/`.
    let found: Option<PathBuf> = running
        .ancestors()
        .skip(1)
        .take(2)
        .map(|dir| dir.join(&file))
        .find(|path| path.is_file());
    match found {
        Some(path) => path.display().to_string(),
        None => panic!(
            "{file} is not built beside {}: build it with `cargo build -p stdio-mcp-testkit` \
             (`--release` for benches; scripts/test does)",
            running.display()
        ),
    }
}

/// Whether bubblewrap (`bwrap`), which confines a sandboxed server on Linux,
/// is on this process's `PATH`. When it is not, `test` says `NOT RUN` —
/// and fails instead under CI (`STDIO_MCP_REQUIRE_SERVERS`), which installs it.
///
/// # Examples
///
/// ```no_run
/// if !stdio_mcp_testkit::bubblewrap("my_sandbox_test") {
///     return;
/// }
/// ```
pub fn bubblewrap(test: &str) -> bool {
    let here = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join("bwrap").is_file()));
    if !here {
        assert!(
            std::env::var_os("STDIO_MCP_REQUIRE_SERVERS").is_none(),
            "{test}: bubblewrap (bwrap) is required here"
        );
        eprintln!("NOT RUN: {test}: bubblewrap (bwrap) is not installed");
    }
    here
}

/// The median of a bench's figures (the upper one of an even count).
///
/// # Examples
///
/// ```
/// assert_eq!(stdio_mcp_testkit::median(vec![3.0, 1.0, 2.0]), 2.0);
/// ```
pub fn median(mut figures: Vec<f64>) -> f64 {
    figures.sort_by(f64::total_cmp);
    figures[figures.len() / 2]
}

/// Two figures measured in `blocks` alternating blocks, the order swapped
/// from block to block so that neither always runs first: the median of
/// each and the median of the blocks' ratios `b / a`.
///
/// ```
/// let (a, b, ratio) = stdio_mcp_testkit::alternate(3, || 2.0, || 3.0);
/// assert_eq!((a, b, ratio), (2.0, 3.0, 1.5));
/// ```
pub fn alternate(
    blocks: usize,
    mut a: impl FnMut() -> f64,
    mut b: impl FnMut() -> f64,
) -> (f64, f64, f64) {
    let (mut times_a, mut times_b, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for block in 0..blocks {
        let (ta, tb) = if block % 2 == 0 {
            let ta = a();
            (ta, b())
        } else {
            let tb = b();
            (a(), tb)
        };
        times_a.push(ta);
        times_b.push(tb);
        ratios.push(tb / ta);
    }
    (median(times_a), median(times_b), median(ratios))
}

/// What a test of the sandbox sets up in its own process on Linux, which
/// std has no word for: a session keyring holding a key, and a descriptor
/// left open across exec.
#[cfg(target_os = "linux")]
pub mod host {
    use std::io;
    use std::os::fd::{AsRawFd, RawFd};

    /// Gives the calling thread (and so the children it starts) a new
    /// session keyring, as a login session has, holding a `user` key
    /// `description` with `payload`.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// stdio_mcp_testkit::host::session_key("token", "s3cr3t").unwrap();
    /// ```
    pub fn session_key(description: &str, payload: &str) -> io::Result<()> {
        const KEYCTL_JOIN_SESSION_KEYRING: libc::c_long = 1;
        const SESSION: libc::c_long = -3;
        // SAFETY: keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL) makes an anonymous one.
        let joined = unsafe {
            libc::syscall(
                libc::SYS_keyctl,
                KEYCTL_JOIN_SESSION_KEYRING,
                std::ptr::null::<libc::c_char>(),
            )
        };
        if joined < 0 {
            return Err(io::Error::last_os_error());
        }
        let kind = c"user";
        let description = std::ffi::CString::new(description)?;
        // SAFETY: add_key(2) with NUL-terminated strings and the payload's length.
        let added = unsafe {
            libc::syscall(
                libc::SYS_add_key,
                kind.as_ptr(),
                description.as_ptr(),
                payload.as_ptr(),
                payload.len(),
                SESSION,
            )
        };
        if added < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Clears close-on-exec on `file`, as a careless host might leave a
    /// descriptor: every child started while it is open inherits it.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let file = std::fs::File::create("/tmp/leaked").unwrap();
    /// let fd = stdio_mcp_testkit::host::leak(&file).unwrap();
    /// # let _ = fd;
    /// ```
    pub fn leak(file: &impl AsRawFd) -> io::Result<RawFd> {
        let fd = file.as_raw_fd();
        // SAFETY: fcntl on a descriptor the caller holds open.
        if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } == -1 {
            return Err(io::Error::last_os_error());
        }
        Ok(fd)
    }

    /// Forks the calling process without exec, as a pre-forking server or a
    /// daemonizing host does: `Some(pid)` of the copy in the original,
    /// `None` in the copy. Call it while the process has one thread (a
    /// copy gets only the caller's), outside any async runtime.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// match stdio_mcp_testkit::host::fork().unwrap() {
    ///     Some(copy) => println!("the copy is {copy}"),
    ///     None => std::process::exit(0),
    /// }
    /// ```
    pub fn fork() -> io::Result<Option<u32>> {
        // SAFETY: fork(2); the copy goes on in the caller's code, which the
        // caller keeps to one thread as documented.
        match unsafe { libc::fork() } {
            -1 => Err(io::Error::last_os_error()),
            0 => Ok(None),
            pid => Ok(Some(pid as u32)),
        }
    }
}
