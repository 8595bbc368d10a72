//! A host's servers as one: every stdio server of a [`Config`] started at
//! once, their tools in one list under names that cannot clash, each call
//! routed to its server.
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
mod naming;
mod server;

use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::Serialize;

use crate::client::{CallOptions, CallToolResult, Client, Tool};
use crate::config::Config;
use crate::error::Error;

pub use builder::GroupBuilder;
use cache::Entries;
pub use naming::Naming;
use naming::{glob, name_all, Conflicts};
pub use server::ServerState;
use server::{Member, Reached, Starter};

/// How long a server may take to start by default: its process, and its
/// era's opening.
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(60);

/// A tool of a [`Group`]: its name in the group, its server, and the tool
/// as the server gave it (its `name` is the one on the wire).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct GroupTool {
    /// The name to call it by in the group (see [`Naming`]).
    pub name: String,
    /// The server that has it.
    pub server: String,
    /// The tool itself, its own name included.
    pub tool: Tool,
}

/// The servers of a host's configuration as one: their tools in one list,
/// calls routed by name. A cheap `Clone` handle; dropping the last one (or
/// [`close`](Self::close)) ends every server.
#[derive(Clone)]
pub struct Group {
    inner: Arc<Shared>,
}

struct Shared {
    members: Vec<Member>,
    naming: Naming,
    /// How servers start, at connect and on a first call.
    starter: Starter,
    /// The last names given: group name → (server index, wire name).
    catalog: Mutex<Catalog>,
    /// Where the catalog cache is kept, if anywhere.
    catalog_cache: Option<PathBuf>,
    /// What the cache file holds (as read, then as last written).
    saved: futures::lock::Mutex<Option<Entries>>,
}

#[derive(Default)]
struct Catalog {
    routes: std::collections::HashMap<String, (usize, String)>,
    conflicts: Conflicts,
}

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
    pub fn builder(config: Config) -> GroupBuilder {
        GroupBuilder::new(config)
    }

    /// Each server's name and state, in config order.
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
        self.inner
            .members
            .iter()
            .map(|m| (m.name().to_owned(), m.state()))
            .collect()
    }

    /// Every usable tool of every ready server, named by the group's
    /// [`Naming`]; a server's `includeTools` / `excludeTools` leave tools out.
    /// Each server's list comes from its client's cache
    /// ([`Client::tools`]), so it is fresh after a `list_changed` or a
    /// restart; a server whose list cannot be read adds none.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let group = stdio_mcp::group::Group::builder(stdio_mcp::config::Config::load(".mcp.json")?).connect().await;
    /// for tool in group.tools().await {
    ///     println!("{}: {}", tool.name, tool.tool.description.unwrap_or_default());
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    pub async fn tools(&self) -> Vec<GroupTool> {
        // Only a group with a catalog cache copies the lists for it.
        let caching = self.inner.catalog_cache.is_some();
        let lists = self.inner.members.iter().map(|m| m.tools(caching));
        let lists = futures::future::join_all(lists).await;
        let mut entries = Entries::new();
        let lists: Vec<Vec<Tool>> = lists
            .into_iter()
            .zip(&self.inner.members)
            .map(|(listed, member)| {
                let (tools, entry) = listed.unwrap_or_default();
                if let Some(entry) = entry {
                    entries.insert(member.name().to_owned(), entry);
                }
                tools
            })
            .collect();
        if caching {
            self.save(entries).await;
        }
        let mut offered: Vec<(usize, Tool)> = Vec::new();
        for (index, (member, tools)) in self.inner.members.iter().zip(lists).enumerate() {
            let config = member.config();
            for tool in tools {
                let included = config
                    .include_tools
                    .as_ref()
                    .is_none_or(|patterns| patterns.iter().any(|p| glob(p, &tool.name)));
                let excluded = config.exclude_tools.iter().any(|p| glob(p, &tool.name));
                if included && !excluded {
                    offered.push((index, tool));
                }
            }
        }
        let pairs: Vec<(&str, &str)> = offered
            .iter()
            .map(|(i, t)| (self.inner.members[*i].name(), t.name.as_str()))
            .collect();
        let (names, conflicts) = name_all(self.inner.naming, &pairs);
        let mut catalog = Catalog {
            conflicts,
            ..Catalog::default()
        };
        let mut tools = Vec::with_capacity(offered.len());
        for ((index, tool), name) in offered.into_iter().zip(names) {
            let Some(name) = name else { continue };
            catalog
                .routes
                .insert(name.clone(), (index, tool.name.clone()));
            tools.push(GroupTool {
                name,
                server: self.inner.members[index].name().to_owned(),
                tool,
            });
        }
        *self.lock_catalog() = catalog;
        tools
    }

    /// Writes the catalog cache, when there is one and `entries` (what each
    /// server has now) are not what it holds.
    async fn save(&self, entries: Entries) {
        let Some(path) = &self.inner.catalog_cache else {
            return;
        };
        let mut saved = self.inner.saved.lock().await;
        if saved.as_ref() == Some(&entries) {
            return;
        }
        match cache::write(path.clone(), entries.clone()).await {
            Ok(()) => *saved = Some(entries),
            Err(_error) => {
                event!(warn, path = %path.display(), error = %_error, "cannot write the catalog cache");
            }
        }
    }

    fn lock_catalog(&self) -> std::sync::MutexGuard<'_, Catalog> {
        self.inner
            .catalog
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The tool names two servers share under [`Naming::Bare`], as of the
    /// last [`tools`](Self::tools): `(name, the server that keeps it, the
    /// servers whose tool of that name is left out)`.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::group::{Group, Naming};
    ///
    /// let group = Group::builder(stdio_mcp::config::Config::load(".mcp.json")?)
    ///     .naming(Naming::Bare)
    ///     .connect()
    ///     .await;
    /// group.tools().await;
    /// for (name, kept_by, left_out) in group.conflicts() {
    ///     eprintln!("{name}: {kept_by}'s, not {left_out:?}'s");
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    #[must_use]
    pub fn conflicts(&self) -> Vec<(String, String, Vec<String>)> {
        self.lock_catalog().conflicts.clone()
    }

    /// Calls the tool the group calls `name` on its server, by its own name.
    ///
    /// # Errors
    ///
    /// A name the group does not offer (an excluded tool included) fails
    /// with [`ErrorKind::InvalidArguments`](crate::ErrorKind::InvalidArguments),
    /// naming the name and the servers searched; a server that is not ready
    /// fails naming it; the call's own errors name its server.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use serde_json::json;
    ///
    /// let group = stdio_mcp::group::Group::builder(stdio_mcp::config::Config::load(".mcp.json")?).connect().await;
    /// let r = group.call_tool("time__get_current_time", json!({"timezone": "UTC"})).await?;
    /// println!("{}", r.text());
    /// # Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<CallToolResult, Error> {
        self.call_tool_with(name, arguments, CallOptions::new())
            .await
    }

    /// [`call_tool`](Self::call_tool) with per-call options.
    ///
    /// # Errors
    ///
    /// As for [`call_tool`](Self::call_tool).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use std::time::Duration;
    /// use serde_json::json;
    /// use stdio_mcp::client::CallOptions;
    ///
    /// let group = stdio_mcp::group::Group::builder(stdio_mcp::config::Config::load(".mcp.json")?).connect().await;
    /// let options = CallOptions::new().timeout(Duration::from_secs(10));
    /// group.call_tool_with("time__get_current_time", json!({"timezone": "UTC"}), options).await?;
    /// # Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: impl Serialize,
        options: CallOptions,
    ) -> Result<CallToolResult, Error> {
        let mut route = self.lock_catalog().routes.get(name).cloned();
        if route.is_none() {
            // Not listed yet, or listed before a change: read the lists again.
            self.tools().await;
            route = self.lock_catalog().routes.get(name).cloned();
        }
        let Some((index, wire_name)) = route else {
            let searched: Vec<&str> = self.inner.members.iter().map(Member::name).collect();
            return Err(Error::InvalidArguments(format!(
                "the group has no tool {name} (servers searched: {})",
                searched.join(", ")
            )));
        };
        let member = &self.inner.members[index];
        let Reached { client, lazily } = member.client(&self.inner.starter).await?;
        if lazily && !client.offers_tool(&wire_name).await? {
            return Err(Error::InvalidArguments(format!(
                "the group has no tool {name} any more: server {:?} no longer offers {wire_name}",
                member.name()
            )));
        }
        client.call_tool_with(&wire_name, arguments, options).await
    }

    /// The client of the server named `name`, started first if it is
    /// [`Idle`](ServerState::Idle).
    ///
    /// # Errors
    ///
    /// When there is no such server, or it is not running (its error says
    /// why it failed).
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
        match self.inner.members.iter().find(|m| m.name() == name) {
            Some(member) => Ok(member.client(&self.inner.starter).await?.client),
            None => Err(Error::InvalidArguments(format!(
                "the group has no server {name}"
            ))),
        }
    }

    /// Closes every server at once; resolves when all have exited.
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
        futures::future::join_all(self.inner.members.iter().map(Member::close)).await;
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
