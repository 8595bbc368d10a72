//! Configuring and starting an MCP server child process.

mod from_command;
mod sandboxed;

use std::any::Any;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::driver::{Driver, Handlers};
use crate::error::{Error, RpcError};
use crate::message::{DiscardedLine, Notification, ServerRequest};
use crate::shared::Shared;
use crate::sys;
use crate::transport::Transport;

/// The default for [`TransportBuilder::max_message_size`]: 64 MiB.
///
/// # Examples
///
/// ```
/// assert_eq!(stdio_mcp::DEFAULT_MAX_MESSAGE_SIZE, 64 << 20);
/// ```
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 64 << 20;

#[derive(Debug, Clone)]
pub(crate) enum EnvChange {
    Set(OsString, OsString),
    Remove(OsString),
    Clear,
}

/// Describes the server process to start and how to treat what it sends.
///
/// Made by [`Transport::builder`]; every method takes and returns the builder.
///
/// ```no_run
/// use stdio_mcp::Transport;
///
/// let transport = Transport::builder(["npx", "-y", "@modelcontextprotocol/server-everything"])
///     .env("GITHUB_TOKEN", "secret")
///     .env_remove("NODE_OPTIONS")
///     .on_stderr(|line| eprintln!("mcp: {line}"))
///     .spawn()?;
/// # Ok::<(), stdio_mcp::Error>(())
/// ```
#[must_use = "a builder does nothing until spawn() is called"]
pub struct TransportBuilder {
    command: Vec<OsString>,
    env: Vec<EnvChange>,
    cwd: Option<PathBuf>,
    timeout: Option<Duration>,
    max_message_size: usize,
    process_group: bool,
    kill_on_parent_death: bool,
    /// The rules the server runs confined by, if any (`sandboxed.rs`).
    pub(crate) sandbox: Option<crate::sandbox::Sandbox>,
    pub(crate) handlers: Handlers,
    /// What a layer above hung on this builder to read back later (the
    /// config entry it was made from); carried along, never read here.
    pub(crate) attachment: Option<Arc<dyn Any + Send + Sync>>,
}

impl Transport {
    /// Starts describing a server to run: `command` is the program and its
    /// arguments (argv, never a shell line).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use stdio_mcp::Transport;
    ///
    /// let transport = Transport::builder(["uvx", "mcp-server-time"]).spawn()?;
    /// # Ok::<(), stdio_mcp::Error>(())
    /// ```
    pub fn builder<I, S>(command: I) -> TransportBuilder
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        TransportBuilder::new(command)
    }
}

impl TransportBuilder {
    fn new<I, S>(command: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        TransportBuilder {
            command: command
                .into_iter()
                .map(|s| s.as_ref().to_os_string())
                .collect(),
            env: Vec::new(),
            cwd: None,
            timeout: None,
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            process_group: true,
            kill_on_parent_death: true,
            sandbox: None,
            handlers: Handlers::default(),
            attachment: None,
        }
    }

    /// Sets an environment variable for the child (on top of the inherited environment).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let t = stdio_mcp::Transport::builder(["my-mcp-server"])
    ///     .env("GITHUB_TOKEN", "secret")
    ///     .spawn()?;
    /// # Ok::<(), stdio_mcp::Error>(())
    /// ```
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env.push(EnvChange::Set(
            key.as_ref().to_os_string(),
            value.as_ref().to_os_string(),
        ));
        self
    }

    /// Removes an inherited environment variable from the child's environment.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let t = stdio_mcp::Transport::builder(["node", "server.js"])
    ///     .env_remove("NODE_OPTIONS")
    ///     .spawn()?;
    /// # Ok::<(), stdio_mcp::Error>(())
    /// ```
    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Self {
        self.env
            .push(EnvChange::Remove(key.as_ref().to_os_string()));
        self
    }

    /// Starts the child with an empty environment: nothing inherited and nothing set
    /// before this call; variables set with [`env`](Self::env) afterwards are passed.
    ///
    /// Use it to keep secrets of this process away from a third-party server.
    /// Note that many programs need at least `PATH` (and Node.js `HOME`).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let t = stdio_mcp::Transport::builder(["/usr/local/bin/my-mcp-server"])
    ///     .env_clear()
    ///     .env("PATH", "/usr/bin:/bin")
    ///     .spawn()?;
    /// # Ok::<(), stdio_mcp::Error>(())
    /// ```
    pub fn env_clear(mut self) -> Self {
        self.env.push(EnvChange::Clear);
        self
    }

    /// The directory the child starts in; a missing one fails [`spawn`](Self::spawn).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let t = stdio_mcp::Transport::builder(["my-mcp-server"])
    ///     .cwd("/srv/mcp")
    ///     .spawn()?;
    /// # Ok::<(), stdio_mcp::Error>(())
    /// ```
    pub fn cwd(mut self, dir: impl AsRef<Path>) -> Self {
        self.cwd = Some(dir.as_ref().to_path_buf());
        self
    }

    /// The transport's own time limit for each request (the seed's), none
    /// unless set; `Duration::ZERO` is a zero limit. Change it later with
    /// [`Transport::set_timeout`].
    ///
    /// It is a hard limit: nothing restarts it. Given to a
    /// [`Client`](crate::client::Client), it replaces the client's own default
    /// (5 minutes, started again by each progress report), so a tool call that
    /// runs longer fails however busily it reports progress. For a client's
    /// calls use [`ClientBuilder::request_timeout`](crate::client::ClientBuilder::request_timeout)
    /// (restarted by progress) or a call's own
    /// [`CallOptions::timeout`](crate::client::CallOptions::timeout) instead.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::time::Duration;
    ///
    /// // Raw JSON-RPC, no client: every request gets at most 2 minutes.
    /// let t = stdio_mcp::Transport::builder(["my-json-rpc-server"])
    ///     .timeout(Duration::from_secs(120))
    ///     .spawn()?;
    /// assert_eq!(t.timeout(), Some(Duration::from_secs(120)));
    /// # Ok::<(), stdio_mcp::Error>(())
    /// ```
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// The longest stdout line accepted, in bytes (default 64 MiB). A longer line is
    /// never buffered whole: every pending request fails with
    /// [`Error::MessageTooLarge`] and the child is closed.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let t = stdio_mcp::Transport::builder(["my-mcp-server"])
    ///     .max_message_size(1 << 20) // 1 MiB
    ///     .spawn()?;
    /// # Ok::<(), stdio_mcp::Error>(())
    /// ```
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes.max(1);
        self
    }

    /// Whether the child leads a process group of its own, which the close
    /// ladder signals whole, so a server started through a wrapper that does
    /// not exec (`npx`, `uv run`, `sh -c 'server; …'`) goes down together with
    /// the wrapper. On Windows the child's whole tree is put in a Job Object
    /// instead, and the ladder's last step ends the job. **On by default.**
    ///
    /// In a group of its own the child does not receive a terminal's Ctrl-C:
    /// the host does, and decides (the child's input ends when the host does).
    /// Turn it off only for a server that must share the host's group, one
    /// that is to receive the terminal's signals itself.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use stdio_mcp::Transport;
    ///
    /// // The opt-out: only the direct child is signalled by the close ladder.
    /// let t = Transport::builder(["my-mcp-server"])
    ///     .process_group(false)
    ///     .spawn()?;
    /// # Ok::<(), stdio_mcp::Error>(())
    /// ```
    pub fn process_group(mut self, own_group: bool) -> Self {
        self.process_group = own_group;
        self
    }

    /// Whether the child (with [`process_group`](Self::process_group), its
    /// whole group) ends when this process ends, however it ends: `main`
    /// returns or `std::process::exit` with the server never closed, a panic,
    /// SIGTERM, SIGKILL. **On by default.**
    ///
    /// On Unix the first such spawn forks one small watchdog process for the
    /// whole host (never one per server), which waits for the host's end on a
    /// pipe and then gives what the host left running 1 s to exit, SIGTERM, 1 s
    /// more, and SIGKILL; a server and its group are off its list once closed.
    /// It costs nothing per request, and it does not depend on the thread that
    /// spawned the child. On Windows the child is put in a Job Object that ends
    /// with this process. If the watchdog cannot start,
    /// [`spawn`](Self::spawn) fails with an [`Error::Start`] naming the option
    /// rather than start a server that could be orphaned.
    ///
    /// Turn it off only for a server meant to outlive its host.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use stdio_mcp::Transport;
    ///
    /// // The opt-out: a server left running when the host exits.
    /// let t = Transport::builder(["my-mcp-server"])
    ///     .kill_on_parent_death(false)
    ///     .spawn()?;
    /// # Ok::<(), stdio_mcp::Error>(())
    /// ```
    pub fn kill_on_parent_death(mut self, enable: bool) -> Self {
        self.kill_on_parent_death = enable;
        self
    }

    /// Called with every line the child writes to stderr, decoded as UTF-8
    /// (invalid bytes replaced) and without its line ending, on the driver's thread.
    /// Lines longer than 64 KiB are cut there, the rest dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use std::sync::{Arc, Mutex};
    ///
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let log = Arc::clone(&seen);
    /// let t = stdio_mcp::Transport::builder(["sh", "-c", "echo starting >&2"])
    ///     .on_stderr(move |line| log.lock().unwrap().push(line.to_owned()))
    ///     .spawn()?;
    /// t.close().await?;
    /// assert_eq!(*seen.lock().unwrap(), ["starting"]);
    /// # Ok::<(), stdio_mcp::Error>(()) }).unwrap();
    /// ```
    pub fn on_stderr(mut self, handler: impl FnMut(&str) + Send + 'static) -> Self {
        self.handlers.stderr = Some(Box::new(handler));
        self
    }

    /// Called with every notification the server sends, the moment it is read, in
    /// wire order, and before the future of any response read after it completes.
    ///
    /// ```no_run
    /// use stdio_mcp::Transport;
    ///
    /// let t = Transport::builder(["my-mcp-server"])
    ///     .on_notification(|n| {
    ///         if n.method == "notifications/progress" {
    ///             println!("progress: {:?}", n.params);
    ///         }
    ///     })
    ///     .spawn()?;
    /// # Ok::<(), stdio_mcp::Error>(())
    /// ```
    pub fn on_notification(mut self, handler: impl FnMut(&Notification) + Send + 'static) -> Self {
        self.handlers.notification = Some(Box::new(handler));
        self
    }

    /// Called with every request the server sends. Returning `Some(outcome)` writes
    /// it back as the response; `None` leaves the request for
    /// [`Transport::respond`] (or unanswered). Without a handler such requests are dropped.
    ///
    /// ```no_run
    /// use serde_json::json;
    /// use stdio_mcp::{RpcError, Transport};
    ///
    /// let t = Transport::builder(["my-mcp-server"])
    ///     .on_request(|r| match r.method.as_str() {
    ///         "ping" => Some(Ok(json!({}))),
    ///         "roots/list" => Some(Ok(json!({ "roots": [] }))),
    ///         _ => Some(Err(RpcError { code: -32601, message: "not supported".into(), data: None })),
    ///     })
    ///     .spawn()?;
    /// # Ok::<(), stdio_mcp::Error>(())
    /// ```
    pub fn on_request(
        mut self,
        handler: impl FnMut(&ServerRequest) -> Option<Result<Value, RpcError>> + Send + 'static,
    ) -> Self {
        let mut handler = handler;
        self.handlers.request = Some(Box::new(move |request: &ServerRequest| {
            match handler(request) {
                Some(outcome) => crate::route::Reply::Now(outcome),
                None => crate::route::Reply::None,
            }
        }));
        self
    }

    /// Called with every stdout line that is not a usable JSON-RPC message: empty,
    /// not JSON, not UTF-8, a response to an unknown or cancelled id. Such lines
    /// never disturb anything; this makes them visible. They are also counted in
    /// [`Transport::discarded_lines`].
    ///
    /// ```no_run
    /// use stdio_mcp::Transport;
    ///
    /// let t = Transport::builder(["my-mcp-server"])
    ///     .on_discarded(|d| eprintln!("ignored stdout line ({}): {}", d.reason, d.line))
    ///     .spawn()?;
    /// # Ok::<(), stdio_mcp::Error>(())
    /// ```
    pub fn on_discarded(mut self, handler: impl FnMut(&DiscardedLine) + Send + 'static) -> Self {
        self.handlers.discarded = Some(Box::new(handler));
        self
    }

    /// Starts the child and runs its driver on the shared background thread.
    ///
    /// # Errors
    ///
    /// [`Error::Start`] when the program cannot be run or the working directory
    /// does not exist, [`Error::EmptyCommand`] for an empty command.
    ///
    /// # Examples
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// let t = stdio_mcp::Transport::builder(["cat"]).spawn()?;
    /// assert!(t.is_alive());
    /// t.close().await?; // cat ends when its input does
    /// # Ok::<(), stdio_mcp::Error>(()) }).unwrap();
    /// ```
    ///
    /// A program that cannot run is an error at once:
    ///
    /// ```
    /// let error = stdio_mcp::Transport::builder(["no-such-mcp-server"]).spawn().unwrap_err();
    /// assert_eq!(
    ///     error.to_string(),
    ///     "MCP server failed to start: cannot run no-such-mcp-server: no such program"
    /// );
    /// ```
    pub fn spawn(self) -> Result<Transport, Error> {
        let (transport, driver) = self.spawn_with_driver()?;
        crate::background::run(driver);
        Ok(transport)
    }

    /// Starts the child and hands its [`Driver`] to the caller, who must run it
    /// (e.g. `smol::spawn(driver).detach()` or `tokio::spawn(driver)`): nothing is
    /// written or read until it is polled.
    ///
    /// ```no_run
    /// # #[tokio::main] async fn main() -> Result<(), stdio_mcp::Error> {
    /// use stdio_mcp::Transport;
    ///
    /// let (transport, driver) = Transport::builder(["my-mcp-server"]).spawn_with_driver()?;
    /// tokio::spawn(driver);
    /// transport.send_request("ping", None).await?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As for [`spawn`](Self::spawn).
    pub fn spawn_with_driver(self) -> Result<(Transport, Driver), Error> {
        let Some(program) = self.command.first() else {
            return Err(Error::EmptyCommand);
        };
        let program_name = program.to_string_lossy().into_owned();
        if let Some(dir) = &self.cwd {
            if !dir.is_dir() {
                return Err(missing_dir(&program_name, dir));
            }
        }
        let resolved = sys::resolve_program(program, self.child_path().as_deref());
        let (mut command, scratch) = self.command_for(&resolved, &program_name)?;
        for change in &self.env {
            match change {
                EnvChange::Set(key, value) => command.env(key, value),
                EnvChange::Remove(key) => command.env_remove(key),
                EnvChange::Clear => command.env_clear(),
            };
        }
        if let Some(dir) = &self.cwd {
            command.current_dir(dir);
        }
        if let Some(scratch) = &scratch {
            command.env("TMPDIR", scratch.path());
        }
        let options = sys::Options {
            process_group: self.process_group,
            kill_on_parent_death: self.kill_on_parent_death,
        };
        let watched = sys::configure(&mut command, options).map_err(|reason| Error::Start {
            program: program_name.clone(),
            reason,
        })?;
        let failed = |e: io::Error| {
            start_error(&program_name, Path::new(&resolved), self.cwd.as_deref(), &e)
        };
        // async-process checks at each spawn whether its reaper is driven.
        crate::background::drive_reaper();
        let (child, pipes, exit) =
            crate::child::spawn(command, options, watched, scratch).map_err(failed)?;

        let pid = child.id();
        event!(info, command = %program_name, pid, "MCP server started");
        let mut shared = Shared::new(pid, self.timeout);
        shared.sandboxed = self.sandbox.is_some();
        let shared = Arc::new(shared);
        let driver = Driver::new(
            child,
            pipes,
            exit,
            Arc::clone(&shared),
            self.handlers,
            self.max_message_size,
        );
        #[cfg(feature = "tracing")]
        let driver =
            driver.in_span(tracing::info_span!("mcp_server", command = %program_name, pid));
        Ok((Transport::new(shared), driver))
    }

    /// The program and its arguments.
    pub(crate) fn argv(&self) -> &[OsString] {
        &self.command
    }

    /// The changes to the child's environment, in order.
    pub(crate) fn env_changes(&self) -> &[EnvChange] {
        &self.env
    }

    /// The folder the child starts in, if not this process's.
    pub(crate) fn dir(&self) -> Option<&Path> {
        self.cwd.as_deref()
    }

    /// The same configuration with `handlers`: a server started again.
    pub(crate) fn again(&self, handlers: Handlers) -> TransportBuilder {
        TransportBuilder {
            command: self.command.clone(),
            env: self.env.clone(),
            cwd: self.cwd.clone(),
            timeout: self.timeout,
            max_message_size: self.max_message_size,
            process_group: self.process_group,
            kill_on_parent_death: self.kill_on_parent_death,
            sandbox: self.sandbox.clone(),
            handlers,
            attachment: self.attachment.clone(),
        }
    }

    /// The `PATH` the child will see, where the builder changes it (Windows looks
    /// a bare program name up there).
    fn child_path(&self) -> Option<OsString> {
        let mut path = None;
        for change in &self.env {
            match change {
                EnvChange::Set(key, value) if is_path(key) => path = Some(Some(value.clone())),
                EnvChange::Remove(key) if is_path(key) => path = Some(None),
                EnvChange::Clear => path = Some(None),
                _ => {}
            }
        }
        path.unwrap_or_else(|| std::env::var_os("PATH"))
    }
}

/// Whether an environment variable's name is `PATH` (any case: Windows ignores it).
fn is_path(key: &OsStr) -> bool {
    key.to_str().is_some_and(|k| k.eq_ignore_ascii_case("PATH"))
}

fn missing_dir(program: &str, dir: &Path) -> Error {
    Error::Start {
        program: program.to_owned(),
        reason: format!("no such directory: {}", dir.display()),
    }
}

fn start_error(program: &str, resolved: &Path, cwd: Option<&Path>, e: &io::Error) -> Error {
    if let Some(dir) = cwd {
        if e.kind() == io::ErrorKind::NotFound && !dir.is_dir() {
            return missing_dir(program, dir);
        }
    }
    let reason = sys::explain_spawn_error(e, resolved).unwrap_or_else(|| match e.kind() {
        io::ErrorKind::NotFound => "no such program".to_owned(),
        io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => e.to_string(),
    });
    Error::Start {
        program: program.to_owned(),
        reason,
    }
}

impl fmt::Debug for TransportBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TransportBuilder")
            .field("command", &self.command)
            .field("env", &self.env)
            .field("cwd", &self.cwd)
            .field("timeout", &self.timeout)
            .field("max_message_size", &self.max_message_size)
            .field("process_group", &self.process_group)
            .field("kill_on_parent_death", &self.kill_on_parent_death)
            .field("sandbox", &self.sandbox)
            .field("handlers", &self.handlers)
            .finish()
    }
}
