//! One server of a group: its entry, and its client once started (or why it
//! could not start, or the cached catalog it serves until its first call).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_io::Timer;
use futures::future::{select, Either};

use crate::client::{Client, ClientBuilder, ClientState, Era, Tool};
use crate::config::ServerConfig;
use crate::error::Error;

use super::cache::Entry;

/// Where a server of a group is.
///
/// ```no_run
/// # futures::executor::block_on(async {
/// use stdio_mcp::group::{Group, ServerState};
///
/// let group = Group::builder(stdio_mcp::config::Config::load(".mcp.json")?).connect().await;
/// let ready = group
///     .servers()
///     .into_iter()
///     .filter(|(_, state)| matches!(state, ServerState::Ready(_)))
///     .count();
/// println!("{ready} servers ready");
/// # Ok::<(), Box<dyn std::error::Error>>(()) });
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerState {
    /// Not started: its tools come from the catalog cache, and its first
    /// call starts it.
    Idle,
    /// Starting.
    Starting,
    /// Running, speaking this era.
    Ready(Era),
    /// Exited; its restart policy is starting it again.
    Restarting,
    /// Could not start, or is gone for good: why.
    Failed(String),
    /// Closed.
    Closed,
}

/// What the group's user does to each server's client builder.
pub(crate) type Customize = Box<dyn Fn(&str, ClientBuilder) -> ClientBuilder + Send + Sync>;

/// The group's user's hook, told which server's tools changed.
pub(crate) type ToolsHook = Arc<dyn Fn(&str) + Send + Sync>;

/// Beyond the start limit: time for a failed connect to close its server
/// (the close ladder's two steps of 2 s).
const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// How the group starts a server: the same way at connect and on a first call.
pub(crate) struct Starter {
    pub(crate) customize: Option<Customize>,
    pub(crate) start_timeout: Duration,
    pub(crate) on_tools_changed: Option<ToolsHook>,
}

impl Starter {
    /// The client builder of `config`'s server, as the group's user wants it.
    pub(crate) fn builder(&self, config: &ServerConfig) -> ClientBuilder {
        let mut builder = Client::builder(config.builder())
            .start_limit(self.start_timeout, "Group::start_timeout");
        if let Some(customize) = &self.customize {
            builder = customize(&config.name, builder);
        }
        if let Some(hook) = &self.on_tools_changed {
            let (hook, name) = (Arc::clone(hook), config.name.clone());
            builder = builder.on_tools_changed(Arc::new(move || hook(&name)));
        }
        builder
    }

    fn tools_changed(&self, server: &str) {
        if let Some(hook) = &self.on_tools_changed {
            hook(server);
        }
    }

    /// Connects `builder` and lists its tools, together within the start
    /// timeout (a listing cut short by it leaves the server ready).
    async fn open(&self, builder: ClientBuilder, name: &str) -> Result<Client, Error> {
        // The connect keeps to the start limit itself, so that it can say
        // what it waited for; this bounds the rest (its close on failure too).
        let deadline = std::time::Instant::now() + self.start_timeout;
        let connecting = std::pin::pin!(builder.connect());
        let client = match select(connecting, Timer::at(deadline + CLOSE_GRACE)).await {
            Either::Left((connected, _)) => connected?,
            // Dropping the connect ends the server it started.
            Either::Right(_) => {
                return Err(Error::Timeout {
                    method: "start (Group::start_timeout)".into(),
                    after: self.start_timeout,
                }
                .named(name))
            }
        };
        {
            // A listing cut short by the limit leaves the server ready.
            let listing = std::pin::pin!(client.tools());
            let _ = select(listing, Timer::at(deadline)).await;
        }
        Ok(client)
    }
}

pub(crate) struct Member {
    config: ServerConfig,
    /// Its command line's fingerprint, for the catalog cache.
    fingerprint: String,
    started: Mutex<Started>,
    /// Held by the one first call that starts an idle server.
    starting: futures::lock::Mutex<()>,
}

enum Started {
    /// Not started; serving this cached catalog.
    Idle(Arc<Entry>),
    /// Started by a first call; still serving the cached catalog.
    Starting(Arc<Entry>),
    Ready {
        client: Client,
        /// Started by a call, after serving a cached catalog.
        lazily: bool,
    },
    Failed(Error),
    Closed,
}

/// A server's client, and whether it was started by a call after serving a
/// cached catalog (whose tools may be gone since).
pub(crate) struct Reached {
    pub(crate) client: Client,
    pub(crate) lazily: bool,
}

impl Member {
    /// Starts `config`'s server with `builder` now.
    pub(crate) async fn start(
        config: ServerConfig,
        builder: ClientBuilder,
        fingerprint: String,
        starter: &Starter,
    ) -> Self {
        let started = match starter.open(builder, &config.name).await {
            Ok(client) => Started::Ready {
                client,
                lazily: false,
            },
            Err(error) => Started::Failed(error),
        };
        Member {
            config,
            fingerprint,
            started: Mutex::new(started),
            starting: futures::lock::Mutex::new(()),
        }
    }

    /// A server left idle, serving `cached` until its first call.
    pub(crate) fn idle(config: ServerConfig, cached: Entry) -> Self {
        Member {
            config,
            fingerprint: cached.fingerprint.clone(),
            started: Mutex::new(Started::Idle(Arc::new(cached))),
            starting: futures::lock::Mutex::new(()),
        }
    }

    pub(crate) fn name(&self) -> &str {
        &self.config.name
    }

    pub(crate) fn config(&self) -> &ServerConfig {
        &self.config
    }

    fn lock(&self) -> MutexGuard<'_, Started> {
        self.started.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn state(&self) -> ServerState {
        match &*self.lock() {
            Started::Idle(_) => ServerState::Idle,
            Started::Starting(_) => ServerState::Starting,
            Started::Ready { client, .. } => match client.state() {
                ClientState::Ready => ServerState::Ready(client.era()),
                ClientState::Restarting => ServerState::Restarting,
                ClientState::Closed => ServerState::Closed,
                ClientState::GaveUp => ServerState::Failed(format!(
                    "server {:?} exited and is not restarted",
                    self.config.name
                )),
            },
            Started::Failed(error) => ServerState::Failed(error.to_string()),
            Started::Closed => ServerState::Closed,
        }
    }

    /// The server's tools (listed by a running server, cached for one not
    /// started) and, when `caching`, what the catalog cache is to keep of
    /// it; `None` when there is no list to give.
    pub(crate) async fn tools(&self, caching: bool) -> Option<(Vec<Tool>, Option<Entry>)> {
        let client = match &*self.lock() {
            Started::Idle(cached) | Started::Starting(cached) => {
                let entry = caching.then(|| Entry::clone(cached));
                return Some((cached.tools.clone(), entry));
            }
            Started::Ready { client, .. } => client.clone(),
            Started::Failed(_) | Started::Closed => return None,
        };
        let tools = client.tools().await.ok()?;
        let entry = caching.then(|| Entry::of(&client, &self.fingerprint, tools.clone()));
        Some((tools, entry))
    }

    /// The server's client when it has one (or why it has none); `None`
    /// while it is idle or being started.
    fn settled(&self) -> Option<Result<Reached, Error>> {
        match &*self.lock() {
            Started::Idle(_) | Started::Starting(_) => None,
            Started::Ready { client, lazily } => Some(Ok(Reached {
                client: client.clone(),
                lazily: *lazily,
            })),
            Started::Failed(error) => Some(Err(error.clone())),
            Started::Closed => Some(Err(Error::Closed.named(&self.config.name))),
        }
    }

    /// The server's client, starting the server first if it is idle: once,
    /// however many calls ask at the same time.
    pub(crate) async fn client(&self, starter: &Starter) -> Result<Reached, Error> {
        if let Some(settled) = self.settled() {
            return settled;
        }
        let _starting = self.starting.lock().await;
        if let Some(settled) = self.settled() {
            return settled;
        }
        let cached = {
            let mut started = self.lock();
            let Started::Idle(cached) = &*started else {
                unreachable!("only an idle server is left unsettled outside a start");
            };
            let cached = Arc::clone(cached);
            *started = Started::Starting(Arc::clone(&cached));
            cached
        };
        // A start given up (its caller dropped) leaves the server idle.
        let mut back_to_idle = BackToIdle(Some((self, Arc::clone(&cached))));
        let mut builder = starter.builder(&self.config);
        // A legacy server is not probed again (the probe may be a timeout).
        if builder.era_asked() == Era::Auto && cached.era() == Some(Era::Legacy) {
            builder = builder.era(Era::Legacy);
        }
        let opened = starter.open(builder, &self.config.name).await;
        back_to_idle.0 = None;
        let reached = {
            let mut started = self.lock();
            if matches!(*started, Started::Closed) {
                // Closed while it started: it ends with this client.
                return Err(Error::Closed.named(&self.config.name));
            }
            match opened {
                Ok(client) => {
                    *started = Started::Ready {
                        client: client.clone(),
                        lazily: true,
                    };
                    client
                }
                Err(error) => {
                    *started = Started::Failed(error.clone());
                    return Err(error);
                }
            }
        };
        if reached.tools().await.ok().as_ref() != Some(&cached.tools) {
            starter.tools_changed(&self.config.name);
        }
        Ok(Reached {
            client: reached,
            lazily: true,
        })
    }

    pub(crate) async fn close(&self) {
        let client = {
            let mut started = self.lock();
            match &*started {
                // A failed server keeps saying why.
                Started::Failed(_) | Started::Closed => return,
                Started::Idle(_) | Started::Starting(_) => {
                    *started = Started::Closed;
                    return;
                }
                Started::Ready { client, .. } => {
                    let client = client.clone();
                    *started = Started::Closed;
                    client
                }
            }
        };
        let _ = client.close().await;
    }
}

struct BackToIdle<'a>(Option<(&'a Member, Arc<Entry>)>);

impl Drop for BackToIdle<'_> {
    fn drop(&mut self) {
        if let Some((member, cached)) = self.0.take() {
            let mut started = member.lock();
            if matches!(*started, Started::Starting(_)) {
                *started = Started::Idle(cached);
            }
        }
    }
}
