//! How a group starts each server, the same way at connect, on a first call,
//! after an idle close, a restart or a reload: the builders the user's hooks
//! shape, the start limit, and the hooks that hear of changes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_io::Timer;
use futures::future::{select, Either};

use crate::builder::TransportBuilder;
use crate::client::{ApproveHook, Client, ClientBuilder, ToolChanges};
use crate::config::ServerConfig;
use crate::error::Error;
use crate::transport::Transport;

use super::state::ServerState;

/// What the group's user does to each server's client builder.
pub(crate) type Customize = Box<dyn Fn(&str, ClientBuilder) -> ClientBuilder + Send + Sync>;
/// What the group's user does to each server's transport builder.
pub(crate) type CustomizeTransport =
    Box<dyn Fn(&str, TransportBuilder) -> TransportBuilder + Send + Sync>;
/// The group's user's hook, told what changed in a server's tools.
pub(crate) type ToolsHook = Arc<dyn Fn(&str, &ToolChanges) + Send + Sync>;
/// The group's user's hook, told each server's new state.
pub(crate) type StateHook = Arc<dyn Fn(&str, &ServerState) + Send + Sync>;

/// Beyond the start limit: time for a failed connect to close its server
/// (the close ladder's two steps of 2 s).
const CLOSE_GRACE: Duration = Duration::from_secs(5);

pub(crate) struct Starter {
    pub(crate) customize: Option<Customize>,
    pub(crate) transport: Option<CustomizeTransport>,
    pub(crate) start_timeout: Duration,
    pub(crate) on_tools_changed: Option<ToolsHook>,
    pub(crate) on_state_change: Option<StateHook>,
    /// The group's approval hook, for every server's calls.
    pub(crate) approve: Option<ApproveHook>,
    /// Whether every server's tool changes are held until accepted.
    pub(crate) hold: bool,
    /// `Group::connect` has returned: a server's tools that join the group
    /// from now on are reported as added.
    pub(crate) connected: AtomicBool,
}

impl Starter {
    /// The client builder of `config`'s server, as the group's user wants
    /// it: `spawned` hears of each process it starts (the member closes and
    /// awaits them all); like every server, they end with the host.
    pub(crate) fn builder(
        &self,
        config: &ServerConfig,
        spawned: Arc<dyn Fn(&Transport) + Send + Sync>,
    ) -> ClientBuilder {
        let mut transport = config.builder();
        if let Some(customize) = &self.transport {
            transport = customize(&config.name, transport);
        }
        let mut builder = Client::builder(transport)
            .start_limit(self.start_timeout, "Group::start_timeout")
            .on_spawn(spawned)
            .hold_tool_changes(self.hold);
        if let Some(hook) = &self.approve {
            builder = builder.approve_with(Arc::clone(hook));
        }
        if let Some(customize) = &self.customize {
            builder = customize(&config.name, builder);
        }
        builder
    }

    /// The catalog cache's key for the command line `config`'s server runs (the
    /// user's hooks applied).
    pub(crate) fn cache_key(&self, config: &ServerConfig) -> String {
        super::cache::cache_key(&self.command_key(config))
    }

    /// The command line `config`'s server would run.
    fn command_key(&self, config: &ServerConfig) -> String {
        let mut transport = config.builder();
        if let Some(customize) = &self.transport {
            transport = customize(&config.name, transport);
        }
        let mut builder = Client::builder(transport);
        if let Some(customize) = &self.customize {
            builder = customize(&config.name, builder);
        }
        builder.command_key()
    }

    /// Whether anyone hears of tool changes.
    pub(crate) fn tells_tool_changes(&self) -> bool {
        self.on_tools_changed.is_some()
    }

    pub(crate) fn tools_changed(&self, server: &str, changes: &ToolChanges) {
        if let Some(hook) = &self.on_tools_changed {
            if !changes.is_empty() {
                hook(server, changes);
            }
        }
    }

    pub(crate) fn is_connected(&self) -> bool {
        self.connected.load(Ordering::Acquire)
    }

    pub(crate) fn state_changed(&self, server: &str, state: &ServerState) {
        if let Some(hook) = &self.on_state_change {
            hook(server, state);
        }
    }

    /// Connects `builder` and lists its tools, together within the start
    /// limit (a listing cut short by it leaves the server ready). The connect
    /// keeps to the limit itself, so that it says what it waited for, and
    /// closes what it started before it fails.
    pub(crate) async fn open(&self, builder: ClientBuilder, name: &str) -> Result<Client, Error> {
        let deadline = Instant::now() + self.start_timeout;
        let connecting = std::pin::pin!(builder.connect());
        let client = match select(connecting, Timer::at(deadline + CLOSE_GRACE)).await {
            Either::Left((connected, _)) => connected?,
            // Only a close that outlasts its ladder gets here; the member's
            // end awaits that process.
            Either::Right(_) => {
                return Err(Error::Timeout {
                    method: "start (Group::start_timeout)".into(),
                    after: self.start_timeout,
                }
                .named(name))
            }
        };
        {
            let listing = std::pin::pin!(client.tools());
            let _ = select(listing, Timer::at(deadline)).await;
        }
        Ok(client)
    }
}
