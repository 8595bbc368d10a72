//! Confining a server: what it may write, what it may not read, whether it
//! may reach the network — the rules of a [`Sandbox`], set on a
//! [`TransportBuilder`](crate::TransportBuilder::sandbox) or read from a
//! config entry's `sandboxEnabled` and `sandbox` keys (VS Code's).
//!
//! Reads are allowed everywhere but under `deny_read`; writes only under
//! `allow_write`, the server's working folder when it has one, and a private
//! temporary folder given to it as `TMPDIR` (removed after it exits);
//! `deny_write` wins inside `allow_write`. The network is off unless
//! [`Network::All`]. Everything the server starts is confined the same way.
//!
//! Linux: bubblewrap (`bwrap`) where installed; macOS: `sandbox-exec` with a
//! generated profile. Anywhere else — Windows, a Linux without bubblewrap —
//! a sandboxed server does not start: the error says why. It never runs
//! unconfined. The rules, each platform and how to find what a server
//! needs: docs/sandbox.md.
//!
//! ```no_run
//! use stdio_mcp::sandbox::{Network, Sandbox};
//!
//! let transport = stdio_mcp::Transport::builder(["npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv/notes"])
//!     .sandbox(Sandbox::new().allow_write("/srv/notes").allow_write("~/.npm").network(Network::All))
//!     .spawn()?;
//! # Ok::<(), stdio_mcp::Error>(())
//! ```

#[cfg(target_os = "linux")]
mod bubblewrap;
mod limits;
mod scratch;
#[cfg(unix)]
mod seatbelt;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

pub use limits::Limits;
pub(crate) use scratch::Scratch;

/// The rules a server runs under (see the [module](self)).
///
/// # Examples
///
/// ```
/// use stdio_mcp::sandbox::{Network, Sandbox};
///
/// let sandbox = Sandbox::new()
///     .allow_write("/srv/data")
///     .deny_write("/srv/data/keys")
///     .deny_read("/home/me/.ssh");
/// assert_eq!(sandbox.allowed_writes(), [std::path::PathBuf::from("/srv/data")]);
/// assert_eq!(sandbox.network_access(), &Network::None);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Sandbox {
    allow_write: Vec<PathBuf>,
    deny_read: Vec<PathBuf>,
    deny_write: Vec<PathBuf>,
    network: Network,
    all_unix_sockets: bool,
    unix_sockets: Vec<PathBuf>,
    limits: Limits,
}

/// What a sandboxed server may reach of the network.
///
/// # Examples
///
/// ```
/// use stdio_mcp::sandbox::Network;
///
/// assert_eq!(Network::default(), Network::None);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Network {
    /// Nothing: the server has a network of its own with no way out.
    #[default]
    None,
    /// Everything, as without a sandbox.
    All,
    /// Only these hosts. No platform here can enforce a list, so a sandbox
    /// with one does not start (it is never let through unfiltered).
    Domains(Vec<String>),
}

impl Sandbox {
    /// The strictest sandbox: reads everywhere, writes only to the server's
    /// working folder (when it has one) and its private `TMPDIR`, no network.
    ///
    /// # Examples
    ///
    /// ```
    /// let sandbox = stdio_mcp::sandbox::Sandbox::new();
    /// assert!(sandbox.allowed_writes().is_empty());
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Sandbox::default()
    }

    /// Lets the server write under `path` (a leading `~` is the home folder).
    ///
    /// # Examples
    ///
    /// ```
    /// let sandbox = stdio_mcp::sandbox::Sandbox::new().allow_write("/srv/out");
    /// # let _ = sandbox;
    /// ```
    #[must_use]
    pub fn allow_write(mut self, path: impl Into<PathBuf>) -> Self {
        self.allow_write.push(path.into());
        self
    }

    /// Hides what is under `path` from the server.
    ///
    /// # Examples
    ///
    /// ```
    /// let sandbox = stdio_mcp::sandbox::Sandbox::new().deny_read("~/.ssh");
    /// # let _ = sandbox;
    /// ```
    #[must_use]
    pub fn deny_read(mut self, path: impl Into<PathBuf>) -> Self {
        self.deny_read.push(path.into());
        self
    }

    /// Keeps the server from writing under `path`, even inside an allowed folder.
    ///
    /// # Examples
    ///
    /// ```
    /// let sandbox = stdio_mcp::sandbox::Sandbox::new().allow_write("/srv").deny_write("/srv/.git");
    /// # let _ = sandbox;
    /// ```
    #[must_use]
    pub fn deny_write(mut self, path: impl Into<PathBuf>) -> Self {
        self.deny_write.push(path.into());
        self
    }

    /// What the server may reach of the network (default [`Network::None`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use stdio_mcp::sandbox::{Network, Sandbox};
    /// let sandbox = Sandbox::new().network(Network::All);
    /// # let _ = sandbox;
    /// ```
    #[must_use]
    pub fn network(mut self, network: Network) -> Self {
        self.network = network;
        self
    }

    /// Lets the server reach every Unix-domain socket (a session bus, an
    /// agent, `docker.sock`): the sandbox runtime's `allowAllUnixSockets`.
    /// Without it, on Linux it cannot make one (its stream pairs for its
    /// children excepted); on macOS it cannot connect to one.
    ///
    /// # Examples
    ///
    /// ```
    /// let sandbox = stdio_mcp::sandbox::Sandbox::new().allow_all_unix_sockets(true);
    /// # let _ = sandbox;
    /// ```
    #[must_use]
    pub fn allow_all_unix_sockets(mut self, allow: bool) -> Self {
        self.all_unix_sockets = allow;
        self
    }

    /// Lets the server connect to the Unix-domain socket at `path`. macOS
    /// only (Seatbelt checks the path); on Linux no mechanism here can, so
    /// a sandbox with one does not start: allow them all, or none.
    ///
    /// # Examples
    ///
    /// ```
    /// let sandbox = stdio_mcp::sandbox::Sandbox::new().allow_unix_socket("/var/run/docker.sock");
    /// # let _ = sandbox;
    /// ```
    #[must_use]
    pub fn allow_unix_socket(mut self, path: impl Into<PathBuf>) -> Self {
        self.unix_sockets.push(path.into());
        self
    }

    /// How much of the machine it may take: `/dev/shm`, its `TMPDIR`, the
    /// size of a file, processes ([`Limits::default`] unless set).
    ///
    /// # Examples
    ///
    /// ```
    /// use stdio_mcp::sandbox::{Limits, Sandbox};
    /// let sandbox = Sandbox::new().limits(Limits::default().processes(64));
    /// assert_eq!(sandbox.resource_limits().process_count(), 64);
    /// ```
    #[must_use]
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Its limits.
    ///
    /// # Examples
    ///
    /// ```
    /// use stdio_mcp::sandbox::{Limits, Sandbox};
    /// assert_eq!(Sandbox::new().resource_limits(), &Limits::default());
    /// ```
    #[must_use]
    pub fn resource_limits(&self) -> &Limits {
        &self.limits
    }

    /// The folders it may write under, as given.
    ///
    /// # Examples
    ///
    /// ```
    /// let sandbox = stdio_mcp::sandbox::Sandbox::new().allow_write("/a");
    /// assert_eq!(sandbox.allowed_writes().len(), 1);
    /// ```
    #[must_use]
    pub fn allowed_writes(&self) -> &[PathBuf] {
        &self.allow_write
    }

    /// The paths hidden from it, as given.
    ///
    /// # Examples
    ///
    /// ```
    /// let sandbox = stdio_mcp::sandbox::Sandbox::new().deny_read("~/.ssh");
    /// assert_eq!(sandbox.denied_reads(), [std::path::PathBuf::from("~/.ssh")]);
    /// ```
    #[must_use]
    pub fn denied_reads(&self) -> &[PathBuf] {
        &self.deny_read
    }

    /// The paths it may not write even inside an allowed folder, as given.
    ///
    /// # Examples
    ///
    /// ```
    /// let sandbox = stdio_mcp::sandbox::Sandbox::new().deny_write("/srv/.git");
    /// assert_eq!(sandbox.denied_writes().len(), 1);
    /// ```
    #[must_use]
    pub fn denied_writes(&self) -> &[PathBuf] {
        &self.deny_write
    }

    /// Whether it may reach every Unix-domain socket, and the ones it may
    /// reach by path (see [`allow_all_unix_sockets`](Self::allow_all_unix_sockets)).
    ///
    /// # Examples
    ///
    /// ```
    /// let sandbox = stdio_mcp::sandbox::Sandbox::new().allow_all_unix_sockets(true);
    /// assert_eq!(sandbox.unix_sockets(), (true, &[][..]));
    /// ```
    #[must_use]
    pub fn unix_sockets(&self) -> (bool, &[PathBuf]) {
        (self.all_unix_sockets, &self.unix_sockets)
    }

    /// What it may reach of the network.
    ///
    /// # Examples
    ///
    /// ```
    /// use stdio_mcp::sandbox::{Network, Sandbox};
    /// assert_eq!(Sandbox::new().network_access(), &Network::None);
    /// ```
    #[must_use]
    pub fn network_access(&self) -> &Network {
        &self.network
    }

    /// The rules with every path made absolute and real (`~` the home
    /// folder, relative to `cwd` or this process's folder; no symbolic link
    /// left, so no rule is missed through one), checked: a folder to write
    /// that does not exist, a path to deny inside a writable folder that
    /// does not exist (it could be made), or a domain list, is refused.
    fn resolved(&self, cwd: Option<&Path>) -> Result<Rules, String> {
        if let Network::Domains(_) = self.network {
            return Err("the network cannot be limited to a list of domains here \
                        (allowedDomains: use [\"*\"] for all, or none)"
                .to_owned());
        }
        let base = match cwd {
            Some(dir) => dir.to_path_buf(),
            None => std::env::current_dir().map_err(|e| format!("no current folder: {e}"))?,
        };
        let absolute = |path: &PathBuf| -> Result<PathBuf, String> {
            let path = match path.strip_prefix("~") {
                Ok(rest) => home()?.join(rest),
                Err(_) => base.join(path),
            };
            Ok(real(&path))
        };
        let mut write = Vec::new();
        for path in &self.allow_write {
            let path = absolute(path)?;
            if !path.exists() {
                return Err(format!("allowWrite {} does not exist", path.display()));
            }
            write.push(path);
        }
        write.extend(cwd.map(real));
        // One that does not exist yet could be made inside an allowed folder.
        let denied = |field: &str, paths: &[PathBuf]| -> Result<Vec<PathBuf>, String> {
            let mut out = Vec::new();
            for path in paths {
                let path = absolute(path)?;
                if !path.exists() && write.iter().any(|w| path.starts_with(w)) {
                    return Err(format!(
                        "{field} {} does not exist, so it cannot be kept from being made",
                        path.display()
                    ));
                }
                out.push(path);
            }
            Ok(out)
        };
        let deny_write = denied("denyWrite", &self.deny_write)?;
        let deny_read = denied("denyRead", &self.deny_read)?;
        let unix_socket_paths = self
            .unix_sockets
            .iter()
            .map(absolute)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Rules {
            write,
            tmp: None,
            deny_write,
            deny_read,
            network: self.network == Network::All,
            all_unix_sockets: self.all_unix_sockets,
            unix_sockets: unix_socket_paths,
            limits: self.limits,
        })
    }
}

/// The rules as the platform's mechanism applies them: absolute, real paths.
#[derive(Debug)]
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) struct Rules {
    /// Folders and files it may write (its `cwd` included).
    write: Vec<PathBuf>,
    /// Its private `TMPDIR`, set at start.
    tmp: Option<PathBuf>,
    deny_write: Vec<PathBuf>,
    deny_read: Vec<PathBuf>,
    network: bool,
    all_unix_sockets: bool,
    /// The Unix sockets it may connect to, where the platform checks a path.
    unix_sockets: Vec<PathBuf>,
    limits: Limits,
}

/// `path` without symbolic links: the deepest part that exists made real,
/// the rest (not made yet) appended as written.
fn real(path: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut existing = path;
    loop {
        if let Ok(found) = std::fs::canonicalize(existing) {
            return missing.iter().rev().fold(found, |p, part| p.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name.to_os_string());
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

fn home() -> Result<PathBuf, String> {
    std::env::var_os("HOME")
        .or_else(|| std::env::var_os("USERPROFILE"))
        .map(PathBuf::from)
        .ok_or_else(|| "~ needs HOME to be set".to_owned())
}

/// What a sandboxed server's last stderr lines say its sandbox likely
/// kept from it, as the end of a sentence: the network, a write, or both.
pub(crate) fn likely_cause(stderr: &[String]) -> Option<String> {
    let said = |marks: &[&str]| {
        stderr
            .iter()
            .any(|line| marks.iter().any(|m| line.contains(m)))
    };
    const NETWORK: [&str; 7] = [
        "EAI_AGAIN",
        "ENOTFOUND",
        "ENETUNREACH",
        "getaddrinfo",
        "Temporary failure in name resolution",
        "Network is unreachable",
        "network is unreachable",
    ];
    const WRITE: [&str; 3] = ["EROFS", "Read-only file system", "read-only file system"];
    let mut causes = Vec::new();
    if said(&NETWORK) {
        causes.push("its sandbox keeps it off the network unless \"allowedDomains\": [\"*\"]");
    }
    if said(&WRITE) {
        causes.push(
            "it wrote outside its sandbox's writable folders (\"sandbox.filesystem.allowWrite\" adds one)",
        );
    }
    (!causes.is_empty()).then(|| causes.join(", and "))
}

/// The command that runs `argv` (the resolved program first) confined by
/// `sandbox`, and the private folder for its temporary files (the caller
/// gives it as `TMPDIR` after the environment). `Err` says why it cannot be
/// confined here.
pub(crate) fn confine(
    sandbox: &Sandbox,
    argv: &[OsString],
    cwd: Option<&Path>,
) -> Result<(std::process::Command, Scratch), String> {
    let mut rules = sandbox.resolved(cwd)?;
    #[cfg(any(target_os = "linux", target_os = "macos"))]
    {
        let scratch = Scratch::make()?;
        rules.tmp = Some(real(scratch.path()));
        #[cfg(target_os = "linux")]
        let command = bubblewrap::command(&rules, argv)?;
        #[cfg(target_os = "macos")]
        let command = seatbelt::command(&rules, argv);
        Ok((command, scratch))
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        let _ = (&mut rules, argv);
        Err(
            "a sandboxed server cannot be confined on this platform (Linux and macOS \
             only), so it is not started"
                .to_owned(),
        )
    }
}
