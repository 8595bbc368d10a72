//! A host's servers as one: every stdio server of a [`Config`] started at
//! once, their tools, prompts and resources in one list under names that
//! cannot clash, each call routed to its server; and the host's runtime for
//! them: never held up by one server, each managed while it runs (restart,
//! stop, reload, idle close), nothing left behind when it closes.
//!
//! ```no_run
//! # futures::executor::block_on(async {
//! use serde_json::json;
//! use stdio_mcp::config::Config;
//! use stdio_mcp::group::Group;
//!
//! let group = Group::builder(Config::load(".mcp.json")?).connect().await;
//! for (server, state) in group.servers() {
//!     println!("{server}: {state:?}");
//! }
//! for tool in group.tools().await {
//!     println!("{} (from {})", tool.name, tool.server);
//! }
//! let now = group.call_tool("time__get_current_time", json!({"timezone": "UTC"})).await?;
//! println!("{}", now.text());
//! group.close().await;
//! # Ok::<(), Box<dyn std::error::Error>>(()) });
//! ```
//!
//! [`Config`]: crate::config::Config

mod builder;
mod cache;
mod catalog;
mod member;
mod naming;
mod reload;
mod runtime;
mod start;
mod state;
mod warning;

use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::client::{Client, ToolChanges};
use crate::config::ConfigError;
use crate::error::Error;

pub use builder::GroupBuilder;
use cache::Entries;
use catalog::Catalog;
pub use catalog::{GroupPrompt, GroupResource, GroupTool};
use member::Member;
pub use naming::Naming;
pub use reload::Reloaded;
use start::Starter;
pub use state::ServerState;
pub use warning::GroupWarning;

/// How long a server may take to start by default: its process, and its
/// era's opening.
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(60);

/// How long [`GroupBuilder::connect`] waits for its servers by default
/// before it returns with the slow ones still starting.
pub const DEFAULT_READY_WITHIN: Duration = Duration::from_secs(10);

/// The servers of a host's configuration as one: their tools in one list,
/// calls routed by name. A cheap `Clone` handle; dropping the last one (or
/// [`close`](Self::close)) ends every server.
#[derive(Clone)]
pub struct Group {
    inner: Arc<Core>,
}

struct Core {
    /// The servers, in config order; `reload` changes the list.
    members: Mutex<Vec<Arc<Member>>>,
    /// The entries of the config that could not be read.
    errors: Mutex<Vec<ConfigError>>,
    naming: crate::group::Naming,
    /// How servers start, and the hooks that hear of their changes.
    starter: Arc<Starter>,
    /// The last names given to tools and prompts, and who shares which.
    catalog: Mutex<Catalog>,
    /// Where the catalog cache is kept, if anywhere.
    catalog_cache: Option<PathBuf>,
    /// What the cache file holds (as read, then as last written).
    saved: futures::lock::Mutex<Option<Entries>>,
    /// How long `connect` and `reload` wait for new servers.
    ready_within: Duration,
}

use crate::lock::lock;

impl Group {
    /// Starts describing a group of the stdio servers of `config`.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let config = stdio_mcp::config::Config::load("claude_desktop_config.json")?;
    /// let group = stdio_mcp::group::Group::builder(config).connect().await;
    /// # let _ = group; Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    pub fn builder(config: crate::config::Config) -> GroupBuilder {
        GroupBuilder::new(config)
    }

    fn members(&self) -> Vec<Arc<Member>> {
        lock(&self.inner.members).clone()
    }

    /// Each server's name and state, in config order; an entry that could
    /// not be read is `Failed` with its error.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::group::{Group, ServerState};
    ///
    /// let group = Group::builder(stdio_mcp::config::Config::load(".mcp.json")?).connect().await;
    /// for (name, state) in group.servers() {
    ///     if let ServerState::Failed(why) = state {
    ///         eprintln!("{name} did not start: {why}");
    ///     }
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    #[must_use]
    pub fn servers(&self) -> Vec<(String, ServerState)> {
        let mut servers: Vec<(String, ServerState)> = self
            .members()
            .iter()
            .map(|m| (m.name().to_owned(), m.state()))
            .collect();
        for error in lock(&self.inner.errors).iter() {
            let name = error.server().unwrap_or_default().to_owned();
            servers.push((name, ServerState::Failed(error.to_string())));
        }
        servers.sort_by(|a, b| a.0.cmp(&b.0));
        servers
    }

    /// The config entries that could not be read, each with its error's
    /// text (the servers of the rest of the file run).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let group = stdio_mcp::group::Group::builder(stdio_mcp::config::Config::load(".mcp.json")?).connect().await;
    /// for (server, why) in group.errors() {
    ///     eprintln!("{server}: {why}");
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    #[must_use]
    pub fn errors(&self) -> Vec<(String, String)> {
        lock(&self.inner.errors)
            .iter()
            .map(|e| (e.server().unwrap_or_default().to_owned(), e.to_string()))
            .collect()
    }

    /// What in the configuration looks like it works and does not: each
    /// `includeTools` or `excludeTools` entry that matches none of its
    /// server's tools, once they are listed (or known from the catalog
    /// cache), naming the server, the entry and the closest tool. An
    /// `excludeTools` that matches nothing leaves every tool reachable.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let group = stdio_mcp::group::Group::builder(stdio_mcp::config::Config::load(".mcp.json")?).connect().await;
    /// for warning in group.warnings() {
    ///     eprintln!("warning: {warning}");
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    #[must_use]
    pub fn warnings(&self) -> Vec<GroupWarning> {
        let mut members = self.members();
        members.sort_by(|a, b| a.name().cmp(b.name()));
        members.iter().flat_map(|m| m.filter_warnings()).collect()
    }

    /// The member named `name`, or an error naming the servers there are
    /// (or the entry's config error).
    fn member(&self, name: &str) -> Result<Arc<Member>, Error> {
        let members = self.members();
        if let Some(member) = members.iter().find(|m| m.name() == name) {
            return Ok(Arc::clone(member));
        }
        if let Some(error) = lock(&self.inner.errors)
            .iter()
            .find(|e| e.server() == Some(name))
        {
            return Err(Error::Config(Box::new(error.clone())));
        }
        let names: Vec<&str> = members.iter().map(|m| m.name()).collect();
        Err(Error::InvalidArguments(format!(
            "the group has no server {name} (its servers: {})",
            names.join(", ")
        )))
    }

    /// The client of the server named `name`, started first if it is
    /// [`Idle`](ServerState::Idle), awaited if it is starting.
    ///
    /// # Errors
    ///
    /// When there is no such server (the error names those there are), or it
    /// is not running (its error says why).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let group = stdio_mcp::group::Group::builder(stdio_mcp::config::Config::load(".mcp.json")?).connect().await;
    /// let time = group.client("time").await?;
    /// println!("{}", time.protocol_version());
    /// # Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    pub async fn client(&self, name: &str) -> Result<Client, Error> {
        let member = self.member(name)?;
        Ok(member.client(&self.inner.starter).await?.client)
    }

    /// The tool changes of server `name` that await
    /// [`accept_tool_changes`](Self::accept_tool_changes) (with
    /// [`GroupBuilder::hold_tool_changes`]); empty for a server that holds
    /// none, is not running, or that the group does not know.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let group = stdio_mcp::group::Group::builder(stdio_mcp::config::Config::load(".mcp.json")?)
    ///     .hold_tool_changes(true)
    ///     .connect()
    ///     .await;
    /// for change in &group.held_tool_changes("git").changed {
    ///     println!("git's {} changed: {}", change.after.name, change.fields.join(", "));
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    #[must_use]
    pub fn held_tool_changes(&self, name: &str) -> ToolChanges {
        let Some((member, client)) = self.running_member(name) else {
            return ToolChanges::default();
        };
        client
            .held_tool_changes()
            .retain(|tool| member.offers(tool))
    }

    /// Accepts the held tool changes of server `name`: its tools as last
    /// listed join [`tools`](Self::tools) and become callable. The catalog
    /// cache takes them at the next [`tools`](Self::tools).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let group = stdio_mcp::group::Group::builder(stdio_mcp::config::Config::load(".mcp.json")?)
    ///     .hold_tool_changes(true)
    ///     .connect()
    ///     .await;
    /// if !group.held_tool_changes("git").is_empty() {
    ///     // A person looked and said yes.
    ///     group.accept_tool_changes("git");
    ///     let _tools = group.tools().await;
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    pub fn accept_tool_changes(&self, name: &str) {
        if let Some((member, client)) = self.running_member(name) {
            client.accept_tool_changes();
            member.accepted(&client);
        }
    }

    /// The member `name` and its client, if it runs.
    fn running_member(&self, name: &str) -> Option<(Arc<Member>, Client)> {
        let member = self.members().into_iter().find(|m| m.name() == name)?;
        let client = member.running()?;
        Some((member, client))
    }

    /// Waits until no server is starting any more, or `within` has passed.
    async fn settle(&self, within: Duration) {
        let all = futures::future::join_all(self.members().iter().map(|m| {
            let m = Arc::clone(m);
            async move { m.settled().await }
        }));
        let limit = async_io::Timer::after(within);
        futures::future::select(std::pin::pin!(all), limit).await;
    }

    /// Closes every server at once; resolves when every process the group
    /// started (servers that failed their start, and those still starting,
    /// included) has exited. A host may exit right after it.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let group = stdio_mcp::group::Group::builder(stdio_mcp::config::Config::load(".mcp.json")?).connect().await;
    /// group.close().await;
    /// # Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    pub async fn close(&self) {
        let starter = &self.inner.starter;
        let members = self.members();
        futures::future::join_all(
            members
                .iter()
                .map(|m| m.end(starter, member::MemberState::Closed)),
        )
        .await;
    }
}

impl Drop for Core {
    /// The last handle is gone: every server is closed, in the background.
    fn drop(&mut self) {
        for member in lock(&self.members).iter() {
            member.abandon();
        }
    }
}

impl fmt::Debug for Group {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Group")
            .field("servers", &self.servers())
            .field("naming", &self.inner.naming)
            .finish()
    }
}
