//! What a group offers, across its servers: tools, prompts and resources in
//! one list each, named so that they cannot clash, and each call routed to
//! the server that has it.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::client::{
    CallOptions, CallToolResult, GetPromptResult, ListItem, Prompt, ReadResourceResult, Resource,
    ServerCapabilities, Tool,
};
use crate::error::Error;

use super::cache::{self, Entries};
use super::member::{Member, Reached};
use super::naming::{name_all, Conflicts};
use super::{lock, Group};

/// A tool of a [`Group`]: its name in the group, its server, and the tool
/// as the server gave it (its `name` is the one on the wire).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct GroupTool {
    /// The name to call it by in the group (see [`Naming`](super::Naming)).
    pub name: String,
    /// The server that has it.
    pub server: String,
    /// The tool itself, its own name included.
    pub tool: Tool,
}

/// A prompt of a [`Group`]: named like the tools ([`Naming`](super::Naming)).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct GroupPrompt {
    /// The name to get it by in the group.
    pub name: String,
    /// The server that has it.
    pub server: String,
    /// The prompt itself, its own name included.
    pub prompt: Prompt,
}

/// A resource of a [`Group`]: URIs are not renamed; one that two servers
/// list is listed under both, and read from the first in config order.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct GroupResource {
    /// The server that lists it.
    pub server: String,
    /// The resource as the server gave it.
    pub resource: Resource,
}

/// The last names given: group name → (server, name on the wire).
#[derive(Default)]
pub(crate) struct Catalog {
    tools: HashMap<String, (String, String)>,
    /// Tools held back until accepted, named like the rest.
    held_tools: HashMap<String, (String, String)>,
    prompts: HashMap<String, (String, String)>,
    /// URI → the first server (config order) that lists it.
    resources: HashMap<String, String>,
    conflicts: Conflicts,
}

/// What a group offers of one kind, to route calls to.
#[derive(Clone, Copy)]
enum Kind {
    Tool,
    Prompt,
    Resource,
}

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Prompt => "prompt",
            Kind::Resource => "resource",
        }
    }
}

impl Group {
    /// Every usable tool of every server that runs or serves a catalog,
    /// named by the group's [`Naming`](super::Naming); a server's
    /// `includeTools` / `excludeTools` leave tools out. Each server's list
    /// comes from its client's cache ([`Client::tools`](crate::client::Client::tools)),
    /// so it is fresh after a `list_changed` or a restart; a server that is
    /// starting, failed or closed adds none.
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
        let members = self.members();
        let lists = futures::future::join_all(members.iter().map(|m| m.tools(caching))).await;
        let mut entries = Entries::new();
        // Held tools are named with the rest, so that their names stay put
        // and a call by one is refused as held, not as unknown.
        let mut offered: Vec<(&Arc<Member>, Tool, bool)> = Vec::new();
        for (member, listed) in members.iter().zip(lists) {
            let Some(listed) = listed else { continue };
            if let Some(entry) = listed.entry {
                entries.insert(member.name().to_owned(), entry);
            }
            let tools = listed.tools.into_iter().map(|tool| (tool, false));
            let held = listed.held.into_iter().map(|tool| (tool, true));
            for (tool, held) in tools.chain(held) {
                if member.offers(&tool.name) {
                    offered.push((member, tool, held));
                }
            }
        }
        if caching {
            self.save(entries).await;
        }
        let pairs: Vec<(&str, &str)> = offered
            .iter()
            .map(|(m, t, _)| (m.name(), t.name.as_str()))
            .collect();
        let (names, conflicts) = name_all(self.inner.naming, &pairs);
        let mut routes = HashMap::new();
        let mut held_routes = HashMap::new();
        let mut tools = Vec::with_capacity(offered.len());
        for ((member, tool, held), name) in offered.into_iter().zip(names) {
            let Some(name) = name else { continue };
            let route = (member.name().to_owned(), tool.name.clone());
            if held {
                held_routes.insert(name, route);
                continue;
            }
            routes.insert(name.clone(), route);
            tools.push(GroupTool {
                name,
                server: member.name().to_owned(),
                tool,
            });
        }
        let mut catalog = lock(&self.inner.catalog);
        catalog.tools = routes;
        catalog.held_tools = held_routes;
        catalog.conflicts = conflicts;
        tools
    }

    /// Writes the catalog cache, when there is one and `entries` (what each
    /// server has now) are not what it holds. An entry only a listing
    /// replaces: those of servers that are not this group's stay (groups of
    /// other configurations, a command line's one server, say, may share the
    /// file), and so do those of members that did not list now (not
    /// started, or failed) — a lazy group that only reads never empties it.
    async fn save(&self, mut entries: Entries) {
        let Some(path) = &self.inner.catalog_cache else {
            return;
        };
        let mut saved = self.inner.saved.lock().await;
        if let Some(before) = saved.as_ref() {
            for (name, entry) in before {
                entries.entry(name.clone()).or_insert_with(|| entry.clone());
            }
        }
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

    /// The tool names two servers share under [`Naming::Bare`](super::Naming::Bare),
    /// as of the last [`tools`](Self::tools): `(name, the server that keeps
    /// it, the servers whose tool of that name is left out)`.
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
        lock(&self.inner.catalog).conflicts.clone()
    }

    /// Where the group's `name` of `kind` goes: (server, name on the wire).
    fn lookup(&self, kind: Kind, name: &str) -> Option<(String, String)> {
        let catalog = lock(&self.inner.catalog);
        match kind {
            Kind::Tool => catalog.tools.get(name).cloned(),
            Kind::Prompt => catalog.prompts.get(name).cloned(),
            Kind::Resource => catalog
                .resources
                .get(name)
                .map(|server| (server.clone(), name.to_owned())),
        }
    }

    async fn list(&self, kind: Kind) {
        match kind {
            Kind::Tool => drop(self.tools().await),
            Kind::Prompt => drop(self.prompts().await),
            Kind::Resource => drop(self.resources().await),
        }
    }

    /// Finds `name` of `kind`: in the last listing, else in a new one, else
    /// once the servers still starting have settled.
    async fn route(&self, kind: Kind, name: &str) -> Result<(Arc<Member>, String), Error> {
        let mut route = self.lookup(kind, name);
        let starting = || -> Vec<Arc<Member>> {
            self.members()
                .into_iter()
                .filter(|m| m.is_starting())
                .collect()
        };
        // Those starting when the listing begins: one may be ready by its
        // end without its tools in it, and is listed again below.
        let mut waited_for = Vec::new();
        if route.is_none() {
            // Not listed yet, or listed before a change: list again.
            waited_for = starting();
            self.list(kind).await;
            route = self.lookup(kind, name);
        }
        if route.is_none() {
            let mut starting = starting();
            starting.extend(waited_for);
            if !starting.is_empty() {
                futures::future::join_all(starting.iter().map(|m| m.settled())).await;
                self.list(kind).await;
                route = self.lookup(kind, name);
            }
        }
        let held = || lock(&self.inner.catalog).held_tools.get(name).cloned();
        if let (None, Kind::Tool, Some((server, wire_name))) = (&route, kind, held()) {
            // Refused by its client, which says why (new or changed); one
            // accepted since the listing goes on.
            let client = self.member(&server)?.running();
            if let Some(Err(error)) = client.map(|c| c.refuse_held(&wire_name)) {
                return Err(error.named(&server));
            }
            route = Some((server, wire_name));
        }
        let Some((server, wire_name)) = route else {
            let searched: Vec<String> =
                self.members().iter().map(|m| m.name().to_owned()).collect();
            return Err(Error::InvalidArguments(format!(
                "the group has no {} {name} (servers searched: {})",
                kind.word(),
                searched.join(", ")
            )));
        };
        Ok((self.member(&server)?, wire_name))
    }

    /// Calls the tool the group calls `name` on its server, by its own name.
    /// A server that is starting is waited for; an idle one is started.
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
        let (member, wire_name) = self.route(Kind::Tool, name).await?;
        let _in_use = member.use_now();
        let Reached { client, lazily } = member.client(&self.inner.starter).await?;
        if lazily && !client.offers_tool(&wire_name).await? {
            return Err(Error::InvalidArguments(format!(
                "the group has no tool {name} any more: server {:?} no longer offers {wire_name}",
                member.name()
            )));
        }
        client.call_tool_with(&wire_name, arguments, options).await
    }

    /// Every prompt of every running server, named like the tools (a server
    /// not running adds none, and is not started for it).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let group = stdio_mcp::group::Group::builder(stdio_mcp::config::Config::load(".mcp.json")?).connect().await;
    /// for prompt in group.prompts().await {
    ///     println!("{} (from {})", prompt.name, prompt.server);
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    pub async fn prompts(&self) -> Vec<GroupPrompt> {
        let members = self.members();
        let lists: Vec<Option<Vec<Prompt>>> =
            listed_by_running(&members, |c| c.prompts.is_some()).await;
        let offered: Vec<(&Arc<Member>, Prompt)> = members
            .iter()
            .zip(lists)
            .flat_map(|(m, list)| list.unwrap_or_default().into_iter().map(move |p| (m, p)))
            .collect();
        let pairs: Vec<(&str, &str)> = offered
            .iter()
            .map(|(m, p)| (m.name(), p.name.as_str()))
            .collect();
        let (names, _) = name_all(self.inner.naming, &pairs);
        let mut routes = HashMap::new();
        let mut prompts = Vec::with_capacity(offered.len());
        for ((member, prompt), name) in offered.into_iter().zip(names) {
            let Some(name) = name else { continue };
            routes.insert(
                name.clone(),
                (member.name().to_owned(), prompt.name.clone()),
            );
            prompts.push(GroupPrompt {
                name,
                server: member.name().to_owned(),
                prompt,
            });
        }
        lock(&self.inner.catalog).prompts = routes;
        prompts
    }

    /// Gets the prompt the group calls `name` from its server.
    ///
    /// # Errors
    ///
    /// A name no running server offers fails naming the servers searched;
    /// the server's own errors name it.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use serde_json::json;
    ///
    /// let group = stdio_mcp::group::Group::builder(stdio_mcp::config::Config::load(".mcp.json")?).connect().await;
    /// let prompt = group.get_prompt("everything__simple-prompt", json!({})).await?;
    /// println!("{} messages", prompt.messages.len());
    /// # Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    pub async fn get_prompt(&self, name: &str, arguments: Value) -> Result<GetPromptResult, Error> {
        let (member, wire_name) = self.route(Kind::Prompt, name).await?;
        let _in_use = member.use_now();
        let client = member.client(&self.inner.starter).await?.client;
        client.get_prompt(&wire_name, arguments).await
    }

    /// Every resource of every running server; a URI two servers list is
    /// listed under both.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let group = stdio_mcp::group::Group::builder(stdio_mcp::config::Config::load(".mcp.json")?).connect().await;
    /// for r in group.resources().await {
    ///     println!("{} (from {})", r.resource.uri, r.server);
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    pub async fn resources(&self) -> Vec<GroupResource> {
        let members = self.members();
        let lists: Vec<Option<Vec<Resource>>> =
            listed_by_running(&members, |c| c.resources.is_some()).await;
        let mut routes: HashMap<String, String> = HashMap::new();
        let mut resources = Vec::new();
        for (member, list) in members.iter().zip(lists) {
            for resource in list.unwrap_or_default() {
                // The first server in config order keeps a shared URI.
                routes
                    .entry(resource.uri.clone())
                    .or_insert_with(|| member.name().to_owned());
                resources.push(GroupResource {
                    server: member.name().to_owned(),
                    resource,
                });
            }
        }
        lock(&self.inner.catalog).resources = routes;
        resources
    }

    /// Reads `uri` from the first server (config order) that lists it.
    ///
    /// # Errors
    ///
    /// A URI no running server lists fails naming the servers searched; the
    /// server's own errors name it.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let group = stdio_mcp::group::Group::builder(stdio_mcp::config::Config::load(".mcp.json")?).connect().await;
    /// let read = group.read_resource("memo://hello").await?;
    /// println!("{} parts", read.contents.len());
    /// # Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        let (member, uri) = self.route(Kind::Resource, uri).await?;
        let _in_use = member.use_now();
        let client = member.client(&self.inner.starter).await?.client;
        client.read_resource(&uri).await
    }
}

/// Each member's whole list of `T`, asked of those running whose
/// capabilities `offers` (the others are neither started nor asked).
async fn listed_by_running<T: ListItem>(
    members: &[Arc<Member>],
    offers: fn(&ServerCapabilities) -> bool,
) -> Vec<Option<Vec<T>>> {
    futures::future::join_all(members.iter().map(|m| async move {
        let client = m.running()?;
        if !offers(client.server_capabilities()) {
            return None;
        }
        m.touch();
        client.listing::<T>().await.ok().map(|l| l.items)
    }))
    .await
}
