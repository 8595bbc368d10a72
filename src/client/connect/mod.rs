//! Connecting: the server started (its driver handed to whoever runs it,
//! with the restart supervisor when there is a policy), its era found (the
//! probe, or the handshake; remembered for a server whose probe was silent),
//! a failure diagnosed, and the client made.

pub(super) mod era;
pub(super) mod noise;
pub(super) mod nudge;
pub(super) mod origin;
pub(super) mod session;

use std::sync::Arc;
use std::time::Instant;

use futures::channel::oneshot;

use crate::builder::TransportBuilder;
use crate::driver::Driver;
use crate::error::{ConnectDiagnosis, Error, ErrorKind};
use crate::transport::Transport;

use super::builder::ClientBuilder;
use super::client::Client;
use super::era::{Era, MODERN_PROTOCOL_VERSIONS};
use super::inbound::Inbound;
use super::life::Life;
use super::noise::Noise;
use super::restart::{self, Again, Handoff, Restarter};
use super::session::{handshake, known_era, probe, remember_era, Hello, Probe};
use super::telemetry::Instruments;

/// A started process: its transport and, when restarts are on, the channel
/// that hands its supervisor the connected client.
type StartedProcess = (Transport, Option<oneshot::Sender<Handoff>>);

/// Starts the server and finds its era; the caller names the errors.
pub(super) async fn open(
    builder: ClientBuilder,
    mut run_driver: impl FnMut(Driver),
    name: &str,
) -> Result<Client, Error> {
    let ClientBuilder {
        mut transport,
        client_info,
        inputs,
        handshake_timeout,
        era,
        probe_timeout,
        restart,
        on_restart,
        request_timeout,
        name: _,
        tools_stale,
        guard,
        start_limit,
        on_spawn,
        #[cfg(feature = "validate")]
        checks,
    } = builder;
    let inputs = inputs.prepared();
    let capabilities = inputs.capabilities();
    // What the server writes that is not JSON-RPC is counted, and any
    // message it sends noted: noise alone ends the connect early.
    let noise = Noise::default();
    let other = transport.handlers.request.take();
    transport.handlers.request = Some(noise.watch_requests(inputs.clone().into_handler(other)));
    let inbound = Arc::new(Inbound::new(tools_stale));
    let user_notifications = transport.handlers.notification.take();
    transport.handlers.notification =
        Some(noise.watch_notifications(Arc::clone(&inbound).into_handler(user_notifications)));
    transport.handlers.discarded = Some(noise.handler(transport.handlers.discarded.take()));
    // Shared, so that a server started again calls the same handlers.
    let handlers = std::mem::take(&mut transport.handlers).share();
    // Owned copies of the configuration, made before any await: the
    // builder is not `Sync`, and this future must stay `Send`.
    let mut retry = Some(transport.again(handlers.handlers()));
    let restarting = restart.is_some();
    let restart = restart.map(|policy| (policy, transport.again(handlers.handlers())));
    let mut start = |builder: TransportBuilder| -> Result<StartedProcess, Error> {
        let (started, driver) = origin::spawn(builder)?;
        if let Some(hook) = &on_spawn {
            hook(&started);
        }
        if !restarting {
            // The process is the client's last: its end ends every stream.
            let inbound = Arc::downgrade(&inbound);
            run_driver(driver.then(async move {
                if let Some(inbound) = inbound.upgrade() {
                    inbound.listeners.end_all();
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
    let command = origin::command_key(&transport);
    // A legacy server this process met before that ignored or died on
    // the probe is not probed again: it would only cost that again.
    let era = match (era, known_era(&command)) {
        (Era::Auto, Some(Era::Legacy)) => Era::Legacy,
        (era, _) => era,
    };
    let since = Instant::now();
    // The session's instruments, from the connect's first request on.
    let telemetry = Instruments::new();
    let hello = Hello {
        telemetry: &telemetry,
        client_info: &client_info,
        capabilities: &capabilities,
        handshake_timeout,
        probe_timeout,
        noise: &noise,
        deadline: start_limit.map(|(limit, _)| since + limit),
    };
    let first = start(transport.again(handlers.handlers()))?;
    drop(transport);
    let handshake_limit = first.0.timeout().unwrap_or(handshake_timeout);
    // A connect that times out says what it waited for and what the server wrote.
    let (sandboxed, stderr_tail) = first.0.failure_context();
    let diagnose = |error: Error, waited_for: String, hint: Option<&str>| {
        if error.kind() != ErrorKind::Timeout {
            return error;
        }
        let (noise, first_noise) = noise.seen();
        // Cut by the start limit: what was asked then, and that limit.
        let (waited_for, hint) = match (start_limit, &error) {
            (Some((limit, what)), Error::Timeout { method, .. }) if hello.past_deadline() => (
                format!(
                    "{method} before the start limit of {}s ({what})",
                    limit.as_secs_f64()
                ),
                None,
            ),
            _ => (waited_for, hint),
        };
        let tail = stderr_tail();
        Error::ConnectTimeout(Box::new(ConnectDiagnosis {
            waited_for,
            waited: since.elapsed(),
            noise,
            first_noise,
            hint: hint.map(str::to_owned),
            sandboxed,
            stderr_tail: tail[tail.len().saturating_sub(5)..].to_vec(),
        }))
    };
    let initialize = format!("initialize within {}s", handshake_limit.as_secs_f64());
    let (started, outcome) = match era {
        Era::Legacy => {
            let outcome = handshake(&first.0, &hello, None).await;
            let outcome = outcome.map_err(|e| diagnose(e, initialize, None));
            (first, outcome)
        }
        Era::Modern => match probe(&first.0, &hello).await {
            Probe::Modern(session) => (first, Ok(*session)),
            Probe::Legacy { silent: true, .. } => {
                let waited_for = format!("server/discover within {}s", probe_timeout.as_secs_f64());
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
            Probe::Failed(error) => (first, Err(diagnose(error, initialize, None))),
        },
        Era::Auto => {
            // `legacy`: the probe ended in the handshake's favour (or the process's end).
            let (version, silent, legacy, outcome) = match probe(&first.0, &hello).await {
                Probe::Modern(session) => (None, false, false, Ok(*session)),
                Probe::Failed(error) => (None, false, false, Err(error)),
                Probe::Exited(answer) => (None, false, true, Err(Error::Protocol(answer))),
                Probe::Legacy {
                    version, silent, ..
                } => {
                    let outcome = handshake(&first.0, &hello, version.as_deref()).await;
                    (version, silent, true, outcome)
                }
            };
            // A server that died between the probe and the end of the
            // handshake is an old SDK that chokes on an unknown request
            // before `initialize`: started again, once, for the handshake alone.
            let (started, outcome, again) = if !legacy || first.0.is_alive() || outcome.is_ok() {
                (first, outcome, false)
            } else {
                let _ = first.0.close().await;
                drop(first);
                event!(
                    info,
                    "MCP server exited after the probe: starting it again for the handshake"
                );
                let again = start(retry.take().expect("started again once"))?;
                let outcome = handshake(&again.0, &hello, version.as_deref()).await;
                (again, outcome, true)
            };
            if (silent || again) && outcome.is_ok() {
                // Its probe could only cost the same again: the next connect skips it.
                remember_era(command, Era::Legacy);
            }
            let outcome = outcome.map_err(|e| {
                if !silent || again {
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
            (started, outcome)
        }
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

    let life = Life::new(transport_now, restarting, Arc::clone(&inbound));
    if let (Some(handoff), Some((policy, builder))) = (handoff, restart) {
        let restarter = Restarter {
            builder,
            handlers: handlers.clone(),
            policy,
            on_restart,
            on_spawn,
            session: Again {
                client_info: client_info.clone(),
                capabilities: capabilities.clone(),
                handshake_timeout,
                era: session.era,
                protocol_version: session.protocol_version.clone(),
                meta: session.meta.clone(),
                telemetry: telemetry.clone(),
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
        inbound,
        request_timeout,
        name.to_owned(),
        guard,
    )
    .with_telemetry(telemetry);
    #[cfg(feature = "validate")]
    let client = client.with_checks(checks);
    Ok(client)
}
