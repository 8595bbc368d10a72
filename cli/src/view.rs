//! The servers one command works with: a group of its own (closed when the
//! command is done), or, in the daemon, the part it needs of the daemon's
//! warm group (left running).

use std::collections::BTreeSet;

use stdio_mcp::client::Client;
use stdio_mcp::group::{Group, GroupPrompt, GroupResource, GroupTool, GroupWarning, ServerState};
use stdio_mcp::Error;

/// A group, or the servers `only` of one.
#[derive(Clone)]
pub(crate) struct View {
    group: Group,
    /// The servers of a shared group this command may see; `None`: all.
    only: Option<BTreeSet<String>>,
    /// The command's own group: closed with the command.
    owned: bool,
}

impl View {
    /// A command's own group.
    pub(crate) fn owned(group: Group) -> Self {
        View {
            group,
            only: None,
            owned: true,
        }
    }

    /// The servers `names` of the daemon's (lazy) group, those it knows no
    /// tools of started first, as a command's own group starts them at
    /// connect: a server the catalog cache knows stays idle until called.
    pub(crate) async fn shared(group: Group, names: impl IntoIterator<Item = String>) -> Self {
        let view = View {
            group,
            only: Some(names.into_iter().collect()),
            owned: false,
        };
        let tools = view.tools().await;
        let mut unknown = Vec::new();
        let mut failed = Vec::new();
        for (name, state) in view.servers() {
            match state {
                ServerState::Idle if !tools.iter().any(|t| t.server == name) => unknown.push(name),
                // Tried again, as a command's own group would.
                ServerState::Failed(_) => failed.push(name),
                _ => {}
            }
        }
        // A start that fails shows in the server's state, as at a connect.
        let starts = unknown
            .iter()
            .map(|name| async { drop(view.group.client(name).await) });
        let again = failed
            .iter()
            .map(|name| async { drop(view.group.restart(name).await) });
        futures::future::join(
            futures::future::join_all(starts),
            futures::future::join_all(again),
        )
        .await;
        view
    }

    /// Starts every idle server it sees (`--refresh`): each lists its tools
    /// afresh, compared with what the catalog cache had.
    pub(crate) async fn start_idle(&self) {
        let idle: Vec<String> = self
            .servers()
            .into_iter()
            .filter(|(_, state)| *state == ServerState::Idle)
            .map(|(name, _)| name)
            .collect();
        let starts = idle
            .iter()
            .map(|name| async { drop(self.group.client(name).await) });
        futures::future::join_all(starts).await;
    }

    fn sees(&self, server: &str) -> bool {
        self.only.as_ref().is_none_or(|only| only.contains(server))
    }

    pub(crate) async fn tools(&self) -> Vec<GroupTool> {
        let mut tools = self.group.tools().await;
        tools.retain(|t| self.sees(&t.server));
        tools
    }

    pub(crate) async fn prompts(&self) -> Vec<GroupPrompt> {
        let mut prompts = self.group.prompts().await;
        prompts.retain(|p| self.sees(&p.server));
        prompts
    }

    pub(crate) async fn resources(&self) -> Vec<GroupResource> {
        let mut resources = self.group.resources().await;
        resources.retain(|r| self.sees(&r.server));
        resources
    }

    pub(crate) fn servers(&self) -> Vec<(String, ServerState)> {
        let mut servers = self.group.servers();
        servers.retain(|(name, _)| self.sees(name));
        servers
    }

    /// The tool filters of its servers that match nothing (once listed).
    pub(crate) fn warnings(&self) -> Vec<GroupWarning> {
        let mut warnings = self.group.warnings();
        warnings.retain(|w| self.sees(&w.server));
        warnings
    }

    pub(crate) fn errors(&self) -> Vec<(String, String)> {
        let mut errors = self.group.errors();
        errors.retain(|(name, _)| self.sees(name));
        errors
    }

    pub(crate) async fn client(&self, name: &str) -> Result<Client, Error> {
        self.group.client(name).await
    }

    /// Closes the command's own group; a shared one stays warm.
    pub(crate) async fn close(&self) {
        if self.owned {
            self.group.close().await;
        }
    }
}
