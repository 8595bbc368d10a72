//! Connecting: the server started (its driver handed to whoever runs it,
//! with the restart supervisor when there is a policy), its era found (the
//! probe, or the handshake; remembered for a server whose probe was silent),
//! a failure diagnosed, and the client made.

use std::sync::Arc;
use std::time::Instant;

use futures::channel::oneshot;

use crate::builder::Builder;
use crate::driver::Driver;
use crate::error::{ConnectDiagnosis, Error, ErrorKind};
use crate::transport::Transport;

use super::builder::ClientBuilder;
use super::connected::Client;
use super::era::{Era, MODERN_PROTOCOL_VERSIONS};
use super::inbound::Routes;
use super::life::Life;
use super::noise::Noise;
use super::restart::{self, Again, Handoff, Restarter};
use super::session::{handshake, known_era, probe, remember_era, Hello, Probe};

/// A started process: its transport and, when restarts are on, the channel
/// that hands its supervisor the connected client.
type Started = (Transport, Option<oneshot::Sender<Handoff>>);

impl ClientBuilder {
    /// Starts the server and finds its era; the caller names the errors.
    pub(super) async fn open(
        self,
        mut run_driver: impl FnMut(Driver),
        name: &str,
    ) -> Result<Client, Error> {
        let ClientBuilder {
            mut transport,
            client_info,
            requests,
            handshake_timeout,
            era,
            probe_timeout,
            restart,
            on_restart,
            request_timeout,
            name: _,
            tools_changed,
            #[cfg(feature = "validate")]
            checks,
        } = self;
        let capabilities = requests.capabilities();
        let other = transport.handlers.request.take();
        transport.handlers.request = Some(requests.clone().into_handler(other));
        let inputs = requests;
        let progress = Arc::new(Routes::new(tools_changed));
        let user_notifications = transport.handlers.notification.take();
        transport.handlers.notification =
            Some(Arc::clone(&progress).into_handler(user_notifications));
        let noise = Noise::default();
        transport.handlers.discarded = Some(noise.handler(transport.handlers.discarded.take()));
        // Shared, so that a server started again calls the same handlers.
        let handlers = std::mem::take(&mut transport.handlers).share();
        // Owned copies of the configuration, made before any await: the
        // builder is not `Sync`, and this future must stay `Send`.
        let mut retry = Some(transport.again(handlers.handlers()));
        let restarting = restart.is_some();
        let restart = restart.map(|policy| (policy, transport.again(handlers.handlers())));
        let mut start = |builder: Builder| -> Result<Started, Error> {
            let (started, driver) = builder.spawn_with_driver()?;
            if !restarting {
                // The process is the client's last: its end ends every stream.
                let routes = Arc::downgrade(&progress);
                run_driver(driver.then(async move {
                    if let Some(routes) = routes.upgrade() {
                        routes.listeners.end_all();
                    }
                }));
                return Ok((started, None));
            }
            // The driver handed out is the supervisor, which drives this
            // process and, once the client is connected, its restarts.
            let (handoff, supervised) = futures::channel::oneshot::channel();
            run_driver(driver.then(restart::supervise(supervised)));
            Ok((started, Some(handoff)))
        };
        let hello = Hello {
            client_info: &client_info,
            capabilities: &capabilities,
            handshake_timeout,
            probe_timeout,
        };
        let command = transport.command_key();
        // A legacy server this process met before that ignored the probe is
        // not probed again: its probe could only time out once more.
        // (Only such servers are remembered.)
        let era = match (era, known_era(&command)) {
            (Era::Auto, Some(Era::Legacy)) => Era::Legacy,
            (era, _) => era,
        };
        let since = Instant::now();
        let first = start(transport.again(handlers.handlers()))?;
        drop(transport);
        let handshake_limit = first.0.timeout().unwrap_or(handshake_timeout);
        // A connect that times out says what it waited for and what the server wrote.
        let diagnose = |error: Error, waited_for: String, hint: Option<&str>| {
            if error.kind() != ErrorKind::Timeout {
                return error;
            }
            let (noise, first_noise) = noise.seen();
            Error::ConnectTimeout(Box::new(ConnectDiagnosis {
                waited_for,
                waited: since.elapsed(),
                noise,
                first_noise,
                hint: hint.map(str::to_owned),
            }))
        };
        let initialize = format!("initialize within {}s", handshake_limit.as_secs_f64());
        let (started, outcome) = match era {
            Era::Legacy => {
                let outcome = handshake(&first.0, &hello, None).await;
                let outcome = outcome.map_err(|e| diagnose(e, initialize, None));
                (first, outcome)
            }
            Era::Auto | Era::Modern => match probe(&first.0, &hello).await {
                Probe::Modern(session) => (first, Ok(*session)),
                Probe::Legacy {
                    version, silent, ..
                } if era == Era::Auto => {
                    let outcome = handshake(&first.0, &hello, version.as_deref()).await;
                    if silent && outcome.is_ok() {
                        // Its probe can only time out again: the next connect skips it.
                        remember_era(command, Era::Legacy);
                    }
                    let outcome = outcome.map_err(|e| {
                        if !silent {
                            return diagnose(e, initialize, None);
                        }
                        let waited_for = format!(
                            "{initialize}, after a server/discover probe that got no answer within {}s",
                            probe_timeout.as_secs_f64()
                        );
                        let hint = "a legacy server that ignores unknown requests connects \
                                    without the probe's wait with Era::Legacy";
                        diagnose(e, waited_for, Some(hint))
                    });
                    (first, outcome)
                }
                Probe::Exited(_) if era == Era::Auto => {
                    // It exited on the probe: a legacy server that dies on
                    // unknown requests. Started again, once, for the handshake.
                    let _ = first.0.close().await;
                    drop(first);
                    event!(info, "MCP server exited on the probe: starting it again");
                    let again = start(retry.take().expect("started again once"))?;
                    let outcome = handshake(&again.0, &hello, None).await;
                    let outcome = outcome.map_err(|e| diagnose(e, initialize, None));
                    (again, outcome)
                }
                Probe::Legacy { silent: true, .. } => {
                    let waited_for =
                        format!("server/discover within {}s", probe_timeout.as_secs_f64());
                    let error = Error::Timeout {
                        method: "server/discover".into(),
                        after: probe_timeout,
                    };
                    let hint = "Era::Modern expects a 2026-07-28 server; a legacy one connects with Era::Auto or Era::Legacy";
                    let error = diagnose(error, waited_for, Some(hint));
                    (first, Err(error))
                }
                Probe::Legacy { answer, .. } | Probe::Exited(answer) => {
                    let error = Error::Protocol(format!(
                        "the server does not speak MCP {} (Era::Modern): server/discover got {answer}",
                        MODERN_PROTOCOL_VERSIONS.join(", ")
                    ));
                    (first, Err(error))
                }
                Probe::Failed(error) => (first, Err(error)),
            },
        };
        let (transport_now, handoff) = started;
        let session = match outcome {
            Ok(session) => session,
            Err(error) => {
                let _ = transport_now.close().await;
                return Err(error);
            }
        };
        event!(info, era = ?session.era, protocol_version = %session.protocol_version, "MCP session ready");

        let life = Life::new(transport_now, restarting, Arc::clone(&progress));
        if let (Some(handoff), Some((policy, builder))) = (handoff, restart) {
            let restarter = Restarter {
                builder,
                handlers: handlers.clone(),
                policy,
                on_restart,
                session: Again {
                    client_info: client_info.clone(),
                    capabilities: capabilities.clone(),
                    handshake_timeout,
                    era: session.era,
                    protocol_version: session.protocol_version.clone(),
                    meta: session.meta.clone(),
                },
            };
            // Refused when the driver is already gone: the handoff's guard
            // then gives the client up at once.
            let _ = handoff.send(Handoff::new(&life, restarter));
        }
        let client = Client::new(
            life,
            session,
            inputs,
            progress,
            request_timeout,
            name.to_owned(),
        );
        #[cfg(feature = "validate")]
        let client = client.with_checks(checks);
        Ok(client)
    }
}
