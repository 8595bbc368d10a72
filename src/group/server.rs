//! One server of a group: its entry, and its client once started (or why it
//! could not start).

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use futures::future::{select, Either};

use crate::client::{Client, ClientBuilder, ClientState, Era};
use crate::config::ServerConfig;
use crate::error::Error;

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
    /// Not started (a group that starts servers on first use).
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

pub(crate) struct Member {
    config: ServerConfig,
    started: Mutex<Started>,
}

enum Started {
    Ready(Client),
    Failed(Error),
    Closed,
}

impl Member {
    /// Starts `config`'s server with `builder`, within `limit`.
    pub(crate) async fn start(
        config: ServerConfig,
        builder: ClientBuilder,
        limit: Duration,
    ) -> Self {
        let connecting = std::pin::pin!(builder.connect());
        let started = match select(connecting, async_io::Timer::after(limit)).await {
            Either::Left((Ok(client), _)) => Started::Ready(client),
            Either::Left((Err(error), _)) => Started::Failed(error),
            // Dropping the connect ends the server it started.
            Either::Right(_) => Started::Failed(
                Error::Timeout {
                    method: "start (Group::start_timeout)".into(),
                    after: limit,
                }
                .named(&config.name),
            ),
        };
        Member {
            config,
            started: Mutex::new(started),
        }
    }

    pub(crate) fn name(&self) -> &str {
        &self.config.name
    }

    pub(crate) fn config(&self) -> &ServerConfig {
        &self.config
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Started> {
        self.started.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn state(&self) -> ServerState {
        match &*self.lock() {
            Started::Ready(client) => match client.state() {
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

    /// The server's client, or why there is none.
    pub(crate) fn client(&self) -> Result<Client, Error> {
        match &*self.lock() {
            Started::Ready(client) => Ok(client.clone()),
            Started::Failed(error) => Err(error.clone()),
            Started::Closed => Err(Error::Closed.named(&self.config.name)),
        }
    }

    pub(crate) async fn close(&self) {
        let client = {
            let mut started = self.lock();
            match &*started {
                // A failed server keeps saying why.
                Started::Failed(_) | Started::Closed => return,
                Started::Ready(client) => {
                    let client = client.clone();
                    *started = Started::Closed;
                    client
                }
            }
        };
        let _ = client.close().await;
    }
}
