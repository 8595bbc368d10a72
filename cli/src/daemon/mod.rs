//! The keep-alive daemon: `stdio-mcp daemon start | status | stop | restart`,
//! and every other command going through it while it runs.
//!
//! A daemon serves one folder and its config files: it listens at an
//! address named after both (`endpoint.rs`: a Unix socket in a folder only
//! its user can enter, or a named pipe only its user may open). A command
//! for the same folder and files sends it its arguments and prints what
//! comes back, with the same exit status; one the daemon does not answer
//! within 1 s, or of another version, runs here. What they say to each other
//! is `protocol.rs`; `serve.rs` is the daemon, `client.rs` the command's side.

mod client;
#[allow(unsafe_code)]
mod endpoint;
mod protocol;
pub(crate) mod serve;

use std::path::{Path, PathBuf};

use crate::failure::Failure;
use crate::output::errln;
use crate::{Cli, Command, DaemonAction};

/// This build's version: a daemon and a command talk only when it is the same.
pub(crate) const VERSION: &str = env!("CARGO_PKG_VERSION");
/// How long a server may stay unused in the daemon before it is closed.
const DEFAULT_IDLE_SECS: u64 = 600;
/// The longest path a Unix socket takes on every platform (macOS: 104 with
/// the terminating NUL).
const SOCKET_PATH_MAX: usize = 103;

/// Carries out `stdio-mcp daemon ACTION`; the exit status.
pub(crate) fn manage(action: DaemonAction, cli: &Cli) -> u8 {
    let idle = |idle: Option<u64>| idle.unwrap_or(DEFAULT_IDLE_SECS);
    let outcome = match action {
        DaemonAction::Start { idle: secs } => client::start(cli, idle(secs)),
        DaemonAction::Status => client::status(cli),
        DaemonAction::Stop => client::stop(cli),
        DaemonAction::Restart { idle: secs } => {
            client::stop(cli).and_then(|()| client::start(cli, idle(secs)))
        }
        DaemonAction::Serve { idle } => serve::serve(cli, idle),
    };
    crate::failure::report(outcome, cli.json)
}

/// Runs `cli`'s command through the daemon of its folder and config files
/// when one runs and answers: its exit status. `None`: run it here.
pub(crate) fn forward(cli: &Cli) -> Option<u8> {
    if !goes_through_daemon(cli) || asks_first(cli) {
        return None;
    }
    client::forward(cli)
}

/// What the command's servers would be started as, in this process's
/// environment, each by name: its launch fingerprint (every `${…}` and
/// `envFile` resolved here) and the variables it inherits from here. The
/// daemon compares the command's with its own and hosts only the same.
pub(crate) fn launch_keys(
    servers: &crate::sources::Servers,
) -> std::collections::BTreeMap<String, String> {
    use std::hash::{Hash, Hasher};
    // Those a server gets from its host; not the terminal's (TERM).
    let mut inherited = std::collections::hash_map::DefaultHasher::new();
    for name in stdio_mcp::config::INHERITED_VARIABLES
        .iter()
        .filter(|v| **v != "TERM")
    {
        (name, std::env::var_os(name)).hash(&mut inherited);
    }
    let inherited = inherited.finish();
    servers
        .config
        .servers()
        .iter()
        .map(|server| {
            let key = format!("{} {inherited:016x}", server.fingerprint().digest());
            (server.name.clone(), key)
        })
        .collect()
}

/// The roots a command gives its servers: `--root`s, else its current folder.
pub(crate) fn roots_of(cli: &Cli) -> Vec<PathBuf> {
    let dirs: Vec<PathBuf> = if cli.roots.is_empty() {
        std::env::current_dir().into_iter().collect()
    } else {
        cli.roots.clone()
    };
    dirs.iter()
        .map(|d| std::fs::canonicalize(d).unwrap_or_else(|_| d.clone()))
        .collect()
}

/// Whether the command would first ask on this terminal whether to trust
/// the project server it names (untrusted, or changed since): a question
/// the daemon has no terminal for, so the command runs here, as it would
/// without a daemon (after a yes, the next command goes through it).
fn asks_first(cli: &Cli) -> bool {
    if cli.json || !crate::terminal::interactive(cli.no_input) {
        return false;
    }
    let Some(name) = crate::session::named_server(cli) else {
        return false;
    };
    let Ok(servers) = crate::sources::load(&cli.config) else {
        return false;
    };
    crate::project::held(&servers, &servers.config)
        .is_ok_and(|held| held.iter().any(|h| h.name == name && h.shadows.is_none()))
}

/// Whether a command may go through a daemon: not the daemon's own
/// commands, nor what needs this process (a server's command line after
/// `--`, its stderr with `--verbose`, a fresh start with `--refresh`, the
/// trust store, completions).
fn goes_through_daemon(cli: &Cli) -> bool {
    if cli.no_daemon || cli.verbose || cli.refresh {
        return false;
    }
    match &cli.command {
        Command::Daemon { .. }
        | Command::Completions { .. }
        | Command::Trust { .. }
        | Command::Untrust { .. } => false,
        command => crate::session::ad_hoc_command(command).is_none(),
    }
}

/// The address of the daemon for this folder and `config` files
/// (`--config`, else the usual files); its folder made if missing.
///
/// # Errors
///
/// The folder cannot be made, is not its user's alone, or the path is too
/// long for a socket: each names the path.
pub(crate) fn address(config: &[PathBuf]) -> Result<PathBuf, Failure> {
    let dir = daemon_dir()?;
    private_dir(&dir)?;
    Ok(endpoint::address_in(&dir, key(config)))
}

/// The address of a daemon for this folder and `config` files, if it may be
/// there (nothing is made here).
fn existing_address(config: &[PathBuf]) -> Option<PathBuf> {
    let dir = daemon_dir().ok()?;
    let address = endpoint::address_in(&dir, key(config));
    (cfg!(windows) || address.exists()).then_some(address)
}

/// The current folder and the config files it reads, as one number.
fn key(config: &[PathBuf]) -> u64 {
    let here = std::env::current_dir().unwrap_or_default();
    let mut key = here.to_string_lossy().into_owned();
    for file in crate::sources::files_read(config) {
        key.push('\n');
        key.push_str(&file.to_string_lossy());
    }
    fnv1a(&key)
}

/// The daemon folder (its socket on Unix, its log everywhere):
/// `STDIO_MCP_DAEMON_DIR`, else `stdio-mcp` in the user's runtime folder
/// (`$XDG_RUNTIME_DIR`), else `daemon` in the cache folder.
fn daemon_dir() -> Result<PathBuf, Failure> {
    let dir = std::env::var_os("STDIO_MCP_DAEMON_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("XDG_RUNTIME_DIR")
                .map(PathBuf::from)
                .filter(|d| d.is_absolute())
                .map(|d| d.join("stdio-mcp"))
        })
        .or_else(|| {
            directories::ProjectDirs::from("", "", "stdio-mcp")
                .map(|d| d.cache_dir().join("daemon"))
        })
        .ok_or_else(|| {
            Failure::config("no folder for the daemon's socket: set STDIO_MCP_DAEMON_DIR")
        })?;
    // A socket's path has a short limit: checked here for any daemon's name.
    let longest = endpoint::address_in(&dir, 0);
    if cfg!(unix) && longest.as_os_str().len() > SOCKET_PATH_MAX {
        return Err(Failure::config(format!(
            "the daemon's socket path {} is longer than a socket takes ({SOCKET_PATH_MAX} bytes): set STDIO_MCP_DAEMON_DIR to a shorter folder",
            longest.display()
        )));
    }
    Ok(dir)
}

/// Makes `dir` (0700) if missing; an existing one must be its user's alone.
#[cfg(unix)]
fn private_dir(dir: &Path) -> Result<(), Failure> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    let fail = |why: String| Failure::config(format!("the daemon folder {}: {why}", dir.display()));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| fail(format!("cannot be made: {e}")))?;
    let meta = std::fs::metadata(dir).map_err(|e| fail(format!("cannot be read: {e}")))?;
    if meta.uid() != rustix::process::getuid().as_raw() {
        return Err(fail(format!("belongs to user {}, not to you", meta.uid())));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(fail(format!(
            "has mode {:o}: others may reach it (chmod 700 it)",
            meta.permissions().mode() & 0o777
        )));
    }
    Ok(())
}

/// Makes `dir` if missing: it holds only the daemon's log; the pipe's own
/// access rule keeps other users out.
#[cfg(windows)]
fn private_dir(dir: &Path) -> Result<(), Failure> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Failure::config(format!(
            "the daemon folder {}: cannot be made: {e}",
            dir.display()
        ))
    })
}

/// FNV-1a, 64 bits: a name for a folder and its files, the same in every build.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Says on stderr why a command did not go through the daemon, when that is
/// worth knowing (it runs here all the same).
fn note(why: impl std::fmt::Display) {
    errln!("stdio-mcp: {why}: running the command here");
}
