//! Describing a group before its servers start: each client's settings, the
//! start limit, the naming, the catalog cache and the change hook.

use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::client::ClientBuilder;
use crate::config::Config;

use super::cache::{self, fingerprint};
use super::server::{Customize, Member, Starter, ToolsHook};
use super::{Catalog, Group, Naming, Shared, DEFAULT_START_TIMEOUT};

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
    start_timeout: Duration,
    naming: Naming,
    catalog_cache: Option<PathBuf>,
    on_tools_changed: Option<ToolsHook>,
}

impl GroupBuilder {
    pub(super) fn new(config: Config) -> Self {
        GroupBuilder {
            config,
            customize: None,
            start_timeout: DEFAULT_START_TIMEOUT,
            naming: Naming::default(),
            catalog_cache: None,
            on_tools_changed: None,
        }
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
    /// configuration (a fingerprint of its command, arguments, environment
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

    /// Calls `hook(server)` when that server's tools may have changed: its
    /// tools `list_changed` (either era), its restart, or its lazy start
    /// finding other tools than the cache had. The next
    /// [`Group::tools`] lists them again. Called on the thread that reads
    /// the server's messages: it should be quick and not block.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use std::sync::atomic::{AtomicBool, Ordering};
    /// use std::sync::Arc;
    /// use stdio_mcp::config::Config;
    /// use stdio_mcp::group::Group;
    ///
    /// let stale = Arc::new(AtomicBool::new(false));
    /// let flag = Arc::clone(&stale);
    /// let group = Group::builder(Config::load(".mcp.json")?)
    ///     .on_tools_changed(move |server| {
    ///         eprintln!("{server} changed its tools");
    ///         flag.store(true, Ordering::Relaxed);
    ///     })
    ///     .connect()
    ///     .await;
    /// // Before a turn: read the tools again only when they changed.
    /// if stale.swap(false, Ordering::Relaxed) {
    ///     let _tools = group.tools().await;
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    pub fn on_tools_changed(mut self, hook: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.on_tools_changed = Some(Arc::new(hook));
        self
    }

    /// Starts every server at once, each within the start timeout, and
    /// resolves when all are ready or failed. A server that fails (a missing
    /// program, a crash, a timeout) fails nothing else: it is
    /// [`ServerState::Failed`](super::ServerState::Failed) with its error's text.
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
            start_timeout,
            naming,
            catalog_cache,
            on_tools_changed,
        } = self;
        let starter = Starter {
            customize,
            start_timeout,
            on_tools_changed,
        };
        let read = match &catalog_cache {
            Some(path) => Some(cache::read(path.clone()).await),
            None => None,
        };
        let mut cached = read.clone().unwrap_or_default();
        let starts = config.servers().iter().map(|server| {
            let builder = starter.builder(server);
            let fingerprint = fingerprint(&builder.command_key());
            let entry = cached
                .remove(&server.name)
                .filter(|entry| entry.fingerprint == fingerprint);
            let starter = &starter;
            async move {
                match entry {
                    Some(entry) => Member::idle(server.clone(), entry),
                    None => Member::start(server.clone(), builder, fingerprint, starter).await,
                }
            }
        });
        let members = futures::future::join_all(starts).await;
        let group = Group {
            inner: Arc::new(Shared {
                members,
                naming,
                starter,
                catalog: Mutex::new(Catalog::default()),
                catalog_cache,
                saved: futures::lock::Mutex::new(read),
            }),
        };
        if group.inner.catalog_cache.is_some() {
            group.tools().await;
        }
        group
    }
}

impl fmt::Debug for GroupBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GroupBuilder")
            .field("servers", &self.config.servers().len())
            .field("start_timeout", &self.start_timeout)
            .field("naming", &self.naming)
            .field("catalog_cache", &self.catalog_cache)
            .finish_non_exhaustive()
    }
}
