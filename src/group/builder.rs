//! Describing a group before its servers start: each client's settings, the
//! start limit, the naming, the catalog cache, the change hook, and what
//! stands before each tool call.

use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::builder::TransportBuilder;
use crate::client::{approve_hook, Approval, ApproveHook, ClientBuilder, ToolCall, ToolChanges};
use crate::config::Config;

use super::cache::{self, CachedServer};
use super::catalog::Catalog;
use super::member::{Member, MemberState};
use super::reload::close_idle_servers;
use super::start::{Customize, CustomizeTransport, Starter, StateHook, ToolsHook};
use super::state::ServerState;
use super::{Core, Group, Naming, DEFAULT_READY_WITHIN, DEFAULT_START_TIMEOUT};

/// Configures a [`Group`] before its servers start.
///
/// ```no_run
/// # futures::executor::block_on(async {
/// use std::time::Duration;
/// use stdio_mcp::client::RestartPolicy;
/// use stdio_mcp::config::Config;
/// use stdio_mcp::group::{Group, Naming};
///
/// let group = Group::builder(Config::load(".mcp.json")?)
///     .client(|_name, client| client.restart(RestartPolicy::default()))
///     .start_timeout(Duration::from_secs(30))
///     .naming(Naming::Prefixed)
///     .connect()
///     .await;
/// # let _ = group; Ok::<(), Box<dyn std::error::Error>>(()) });
/// ```
#[must_use = "a group builder does nothing until connect() is called"]
pub struct GroupBuilder {
    config: Config,
    customize: Option<Customize>,
    transport: Option<CustomizeTransport>,
    start_timeout: Duration,
    ready_within: Duration,
    idle_timeout: Option<Duration>,
    lazy: bool,
    naming: Naming,
    catalog_cache: Option<PathBuf>,
    on_tools_changed: Option<ToolsHook>,
    on_state_change: Option<StateHook>,
    approve: Option<ApproveHook>,
    hold: bool,
}

impl GroupBuilder {
    pub(super) fn new(config: Config) -> Self {
        GroupBuilder {
            config,
            customize: None,
            transport: None,
            start_timeout: DEFAULT_START_TIMEOUT,
            ready_within: DEFAULT_READY_WITHIN,
            idle_timeout: None,
            lazy: false,
            naming: Naming::default(),
            catalog_cache: None,
            on_tools_changed: None,
            on_state_change: None,
            approve: None,
            hold: false,
        }
    }

    /// Customizes each server's transport (its stderr, environment,
    /// process group…): `customize(name, builder)` gets the transport
    /// builder made from the server's entry and returns the one to start.
    /// Each server starts with the builder's defaults: a process group of its
    /// own and [`kill_on_parent_death`](crate::TransportBuilder::kill_on_parent_death);
    /// the hook may turn either off.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::config::Config;
    /// use stdio_mcp::group::Group;
    ///
    /// let group = Group::builder(Config::load(".mcp.json")?)
    ///     .transport(|name, transport| {
    ///         let name = name.to_owned();
    ///         transport.on_stderr(move |line| eprintln!("[{name}] {line}"))
    ///     })
    ///     .connect()
    ///     .await;
    /// # let _ = group; Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    pub fn transport(
        mut self,
        customize: impl Fn(&str, TransportBuilder) -> TransportBuilder + Send + Sync + 'static,
    ) -> Self {
        self.transport = Some(Box::new(customize));
        self
    }

    /// How long [`connect`](Self::connect) waits for the servers (default
    /// [`DEFAULT_READY_WITHIN`](super::DEFAULT_READY_WITHIN), 10 s): it
    /// returns once every server is ready, idle or failed, or by then; the
    /// rest go on starting in the background and join when ready (their
    /// tools enter [`Group::tools`], and the hooks hear of it). A call to a
    /// server still starting waits for it.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use stdio_mcp::config::Config;
    /// use stdio_mcp::group::Group;
    ///
    /// let builder = Group::builder(Config::default()).ready_within(Duration::from_secs(2));
    /// # let _ = builder;
    /// ```
    pub fn ready_within(mut self, limit: Duration) -> Self {
        self.ready_within = limit;
        self
    }

    /// Closes a server that has had no request from the group (a call, a
    /// prompt or resource listing or read) for `limit`, to
    /// [`Idle`](ServerState::Idle): its tools stay listed, from its last
    /// listing, and its next call starts it again. Off unless set.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use stdio_mcp::config::Config;
    /// use stdio_mcp::group::Group;
    ///
    /// let builder = Group::builder(Config::default()).idle_timeout(Duration::from_secs(600));
    /// # let _ = builder;
    /// ```
    pub fn idle_timeout(mut self, limit: Duration) -> Self {
        self.idle_timeout = Some(limit);
        self
    }

    /// Starts no server at connect: each starts on its first call (or
    /// [`Group::client`]). Its tools meanwhile come from the catalog cache,
    /// if it has an entry there, else it lists none until it has started.
    /// For a host (or a shell completion) that must never wait for a start.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::config::Config;
    /// use stdio_mcp::group::Group;
    ///
    /// let group = Group::builder(Config::load(".mcp.json")?)
    ///     .catalog_cache("/var/cache/my-host/catalog.json")
    ///     .lazy(true)
    ///     .connect()
    ///     .await;                      // nothing started
    /// println!("{} tools known", group.tools().await.len());
    /// # Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    pub fn lazy(mut self, lazy: bool) -> Self {
        self.lazy = lazy;
        self
    }

    /// Calls `hook(server, state)` at every change of a server's
    /// [`ServerState`], in the order they happen, whatever the cause (its
    /// start, failure, restart, give-up, stop, idle close, reload, close).
    /// Called on the group's own thread or the caller's: it should be quick
    /// and not block.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::config::Config;
    /// use stdio_mcp::group::Group;
    ///
    /// let group = Group::builder(Config::load(".mcp.json")?)
    ///     .on_state_change(|server, state| eprintln!("{server}: {state:?}"))
    ///     .connect()
    ///     .await;
    /// # let _ = group; Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    pub fn on_state_change(
        mut self,
        hook: impl Fn(&str, &ServerState) + Send + Sync + 'static,
    ) -> Self {
        self.on_state_change = Some(Arc::new(hook));
        self
    }

    /// Customizes each server's client (handlers, restart policy, era…):
    /// `customize(name, builder)` gets the builder made from the server's
    /// entry and returns the one to connect.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::Era;
    /// use stdio_mcp::config::Config;
    /// use stdio_mcp::group::Group;
    ///
    /// let group = Group::builder(Config::load(".mcp.json")?)
    ///     .client(|name, client| if name == "legacy-one" { client.era(Era::Legacy) } else { client })
    ///     .connect()
    ///     .await;
    /// # let _ = group; Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    pub fn client(
        mut self,
        customize: impl Fn(&str, ClientBuilder) -> ClientBuilder + Send + Sync + 'static,
    ) -> Self {
        self.customize = Some(Box::new(customize));
        self
    }

    /// How long each server may take to start (default
    /// [`DEFAULT_START_TIMEOUT`]); one that takes longer is `Failed`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use stdio_mcp::config::Config;
    /// use stdio_mcp::group::Group;
    ///
    /// let builder = Group::builder(Config::default()).start_timeout(Duration::from_secs(5));
    /// # let _ = builder;
    /// ```
    pub fn start_timeout(mut self, limit: Duration) -> Self {
        self.start_timeout = limit;
        self
    }

    /// How tools are named in [`Group::tools`] (default [`Naming::Prefixed`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use stdio_mcp::config::Config;
    /// use stdio_mcp::group::{Group, Naming};
    ///
    /// let builder = Group::builder(Config::default()).naming(Naming::Bare);
    /// # let _ = builder;
    /// ```
    pub fn naming(mut self, naming: Naming) -> Self {
        self.naming = naming;
        self
    }

    /// Keeps the group's catalog in the JSON file at `path`, and starts
    /// servers lazily from it: a server whose entry in the file matches its
    /// configuration (a hash of its command, arguments, environment
    /// and folder) is not started at connect but left
    /// [`Idle`](super::ServerState::Idle), its tools served from the file;
    /// its first call (or [`Group::client`]) starts it, once however many
    /// calls race. The file is written after each listing that changed it,
    /// through a temporary file renamed over it. A missing, stale or
    /// unreadable file means ordinary starts, never an error.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::config::Config;
    /// use stdio_mcp::group::Group;
    ///
    /// // The second run of the host starts no server until a tool is called.
    /// let group = Group::builder(Config::load(".mcp.json")?)
    ///     .catalog_cache("/var/cache/my-host/catalog.json")
    ///     .connect()
    ///     .await;
    /// println!("{} tools", group.tools().await.len());
    /// # Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    pub fn catalog_cache(mut self, path: impl Into<PathBuf>) -> Self {
        self.catalog_cache = Some(path.into());
        self
    }

    /// Calls `hook(server, changes)` when what a server adds to
    /// [`Group::tools`] changes ([`ToolChanges`]): its tools `list_changed`
    /// (either era) or its restart (the group lists its tools again to find
    /// out, on its own thread), a lazy start finding other tools than the
    /// catalog cache had, a server whose tools join the group after
    /// `connect` (`added`) or leave it when it fails, stops or is removed by
    /// a reload (`removed`). Tools that `includeTools` / `excludeTools` leave
    /// out are never reported. It should be quick and not block.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::ToolChanges;
    /// use stdio_mcp::config::Config;
    /// use stdio_mcp::group::Group;
    ///
    /// let group = Group::builder(Config::load(".mcp.json")?)
    ///     .on_tools_changed(|server: &str, changes: &ToolChanges| {
    ///         for change in &changes.changed {
    ///             eprintln!("{server}: {} changed its {}", change.after.name, change.fields.join(", "));
    ///         }
    ///     })
    ///     .connect()
    ///     .await;
    /// # let _ = group; Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    pub fn on_tools_changed(
        mut self,
        hook: impl Fn(&str, &ToolChanges) + Send + Sync + 'static,
    ) -> Self {
        self.on_tools_changed = Some(Arc::new(hook));
        self
    }

    /// The approval hook of every server's tool calls
    /// ([`ClientBuilder::approve_calls`]): called before each call the group
    /// routes, with [`ToolCall::server`] the server's name in the config. A
    /// server's own hook, set through [`client`](Self::client), replaces it.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::{Approval, ToolCall};
    /// use stdio_mcp::config::Config;
    /// use stdio_mcp::group::Group;
    ///
    /// let group = Group::builder(Config::load(".mcp.json")?)
    ///     .approve_calls(|call: ToolCall| async move {
    ///         match call.hints.destructive {
    ///             false => Approval::Allow,
    ///             true => Approval::Deny(format!("{} of {} may destroy data", call.tool.name, call.server)),
    ///         }
    ///     })
    ///     .connect()
    ///     .await;
    /// # let _ = group; Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    pub fn approve_calls<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Approval> + Send + 'static,
    {
        self.approve = Some(approve_hook(hook));
        self
    }

    /// Holds every server's tool changes until accepted
    /// ([`ClientBuilder::hold_tool_changes`]): a tool new or changed since the
    /// server's first listing — or since the definitions the catalog cache
    /// accepted in an earlier run — is not in [`Group::tools`], and a call to
    /// it fails [`ErrorKind::Denied`](crate::ErrorKind::Denied), until
    /// [`Group::accept_tool_changes`]. Default `false`.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let group = stdio_mcp::group::Group::builder(stdio_mcp::config::Config::load(".mcp.json")?)
    ///     .catalog_cache("catalog.json")
    ///     .hold_tool_changes(true)
    ///     .connect()
    ///     .await;
    /// # let _ = group; Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    pub fn hold_tool_changes(mut self, hold: bool) -> Self {
        self.hold = hold;
        self
    }

    /// Starts every server at once, each within the start timeout, and
    /// resolves once all are ready, idle or failed, or when `ready_within`
    /// has passed (the rest go on starting). A server that fails (a missing
    /// program, a crash, a timeout, an entry that cannot be read) fails
    /// nothing else: it is [`ServerState::Failed`] with its error's text.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let group = stdio_mcp::group::Group::builder(stdio_mcp::config::Config::load(".mcp.json")?)
    ///     .connect()
    ///     .await;
    /// # let _ = group; Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    pub async fn connect(self) -> Group {
        let GroupBuilder {
            config,
            customize,
            transport,
            start_timeout,
            ready_within,
            idle_timeout,
            lazy,
            naming,
            catalog_cache,
            on_tools_changed,
            on_state_change,
            approve,
            hold,
        } = self;
        let starter = Arc::new(Starter {
            customize,
            transport,
            start_timeout,
            on_tools_changed,
            on_state_change,
            approve,
            hold,
            connected: AtomicBool::new(false),
        });
        let read = match &catalog_cache {
            Some(path) => Some(cache::read(path.clone()).await),
            None => None,
        };
        let mut cached = read.clone().unwrap_or_default();
        let members: Vec<Arc<Member>> = config
            .servers()
            .iter()
            .map(|server| {
                let cache_key = starter.cache_key(server);
                let entry = cached
                    .remove(&server.name)
                    .filter(|entry| entry.cache_key == cache_key);
                let started = match entry {
                    Some(entry) => MemberState::Idle(Arc::new(entry)),
                    None if lazy => MemberState::Idle(Arc::new(CachedServer::unknown(&cache_key))),
                    None => MemberState::Starting(None),
                };
                Member::new(server.clone(), cache_key, started)
            })
            .collect();
        for error in config.errors() {
            let failed = ServerState::Failed(error.to_string());
            starter.state_changed(error.server().unwrap_or_default(), &failed);
        }
        for member in &members {
            member.report(&starter);
            if member.is_starting() {
                member.begin_start(&starter, true);
            }
        }
        let group = Group {
            inner: Arc::new(Core {
                members: Mutex::new(members),
                errors: Mutex::new(config.errors().to_vec()),
                naming,
                starter,
                catalog: Mutex::new(Catalog::default()),
                catalog_cache,
                saved: futures::lock::Mutex::new(read),
                ready_within,
            }),
        };
        group.settle(ready_within).await;
        if group.inner.catalog_cache.is_some() {
            group.tools().await;
        }
        group.inner.starter.connected.store(true, Ordering::Release);
        if let Some(limit) = idle_timeout {
            close_idle_servers(Arc::downgrade(&group.inner), limit);
        }
        group
    }
}

impl fmt::Debug for GroupBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GroupBuilder")
            .field("servers", &self.config.servers().len())
            .field("start_timeout", &self.start_timeout)
            .field("ready_within", &self.ready_within)
            .field("idle_timeout", &self.idle_timeout)
            .field("lazy", &self.lazy)
            .field("naming", &self.naming)
            .field("catalog_cache", &self.catalog_cache)
            .finish_non_exhaustive()
    }
}
