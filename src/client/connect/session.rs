//! The era a client and its server agree on, once per process: the stdio
//! binding's `server/discover` probe and its outcomes, and the `initialize`
//! handshake of the legacy revisions.

use std::collections::HashMap;
use std::pin::pin;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use futures::future::{select, Either};

use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::error::Error;
use crate::pending::RequestOptions;
use crate::transport::Transport;

use crate::client::era::{Era, LEGACY_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS};
use crate::client::model::types::{Extra, Implementation, ServerCapabilities};
use crate::client::noise::Noise;
use crate::client::nudge;
use crate::client::telemetry::Instruments;
use crate::client::wire::{complete, decode, TASKS_EXTENSION};

/// The server's answer to `initialize`.
#[derive(Debug, Clone, Deserialize)]
struct InitializeResult {
    #[serde(rename = "protocolVersion")]
    protocol_version: String,
    #[serde(default)]
    capabilities: ServerCapabilities,
    #[serde(rename = "serverInfo")]
    server_info: Implementation,
    #[serde(default)]
    instructions: Option<String>,
}

/// What the client tells a server about itself.
pub(in crate::client) struct Hello<'a> {
    pub(in crate::client) client_info: &'a Implementation,
    pub(in crate::client) capabilities: &'a Value,
    pub(in crate::client) handshake_timeout: Duration,
    pub(in crate::client) probe_timeout: Duration,
    /// Counts what the server writes that is not JSON-RPC.
    pub(in crate::client) noise: &'a Noise,
    /// When the whole connect must be over (a group's start limit), if ever.
    pub(in crate::client) deadline: Option<Instant>,
    /// The spans of the connect's requests.
    pub(in crate::client) telemetry: &'a Instruments,
}

impl Hello<'_> {
    /// One request of the connect: its answer, unless the server's stdout
    /// turns out to be only noise, or the connect's deadline passes first
    /// (a timeout: the connect says what it waited for).
    async fn ask(
        &self,
        transport: &Transport,
        method: &str,
        params: Value,
        limit: Duration,
    ) -> Result<Value, Error> {
        self.ask_as(transport, method, params, limit, false).await
    }

    /// As [`ask`](Self::ask); with `quiet`, a drop before the answer forgets
    /// the request instead of cancelling it.
    async fn ask_as(
        &self,
        transport: &Transport,
        method: &str,
        params: Value,
        limit: Duration,
        quiet: bool,
    ) -> Result<Value, Error> {
        if self.past_deadline() {
            // Nothing more is sent once the connect is out of time.
            return Err(Error::Timeout {
                method: method.to_owned(),
                after: limit,
            });
        }
        // The connect's deadline, if sooner, is this request's own limit: its
        // timeout then says what was asked when time ran out.
        let now = Instant::now();
        let limit = self
            .deadline
            .map_or(limit, |at| limit.min(at.saturating_duration_since(now)));
        // The version it offers: the probe's in `_meta`, the handshake's as a field.
        let offered = params["_meta"][META_VERSION]
            .as_str()
            .or_else(|| params["protocolVersion"].as_str())
            .unwrap_or_default();
        let operation = self.telemetry.operation(method, Some(&params), offered);
        let mut params = params;
        operation.propagate_into(&mut params);
        let options = RequestOptions::new().timeout(limit);
        let mut request = transport.send_request_with(method, Some(params), options);
        operation.sent(request.id());
        if quiet {
            request = request.quiet();
        }
        let answer = match select(request, pin!(self.noise.overflowed())).await {
            Either::Left((answer, _)) => {
                // An answer of any kind is JSON-RPC: noise after it is no overflow.
                if answer
                    .as_ref()
                    .map_or_else(|e| e.rpc_error().is_some(), |_| true)
                {
                    self.noise.spoke();
                }
                answer
            }
            Either::Right(((lines, first), _)) => Err(Error::Noise { lines, first }),
        };
        operation.end(answer.as_ref());
        answer
    }

    /// The connect's deadline has passed.
    pub(in crate::client) fn past_deadline(&self) -> bool {
        self.deadline.is_some_and(|at| Instant::now() >= at)
    }

    /// The protocol fields every 2026-07-28 request carries in `_meta`.
    fn modern_meta(&self, version: &str) -> Map<String, Value> {
        let mut meta = Map::new();
        meta.insert(META_VERSION.into(), json!(version));
        meta.insert(META_CLIENT_INFO.into(), json!(self.client_info));
        // Every request may become a task where the server wants one.
        let mut capabilities = self.capabilities.clone();
        capabilities["extensions"][TASKS_EXTENSION] = json!({});
        meta.insert(META_CAPABILITIES.into(), capabilities);
        meta
    }

    /// What `initialize` declares: the client's capabilities, and tasks (it
    /// makes tool calls tasks, and follows them).
    fn legacy_capabilities(&self) -> Value {
        let mut capabilities = self.capabilities.clone();
        capabilities["tasks"] = json!({});
        capabilities
    }
}

const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// UnsupportedProtocolVersion: a modern server that does not speak the version asked for.
const UNSUPPORTED_VERSION: i64 = -32022;
/// The error codes reserved for the MCP specification: only a modern server sends them.
const MODERN_ERRORS: std::ops::RangeInclusive<i64> = -32099..=-32020;

/// What a client and its server agreed on.
#[derive(Debug)]
pub(in crate::client) struct Session {
    pub(in crate::client) era: Era,
    pub(in crate::client) protocol_version: String,
    pub(in crate::client) capabilities: ServerCapabilities,
    pub(in crate::client) server_info: Implementation,
    pub(in crate::client) instructions: Option<String>,
    /// The protocol fields of every request, in the modern era.
    pub(in crate::client) meta: Option<Map<String, Value>>,
    /// The same, serialized as the members of a `_meta` object.
    pub(in crate::client) meta_members: Option<String>,
}

/// How the probe ended.
pub(in crate::client) enum Probe {
    Modern(Box<Session>),
    /// A legacy server; `version`: the legacy revision its answer named, if any.
    Legacy {
        version: Option<String>,
        answer: String,
        /// The probe got no answer at all within its limit.
        silent: bool,
    },
    /// The server exited instead of answering.
    Exited(String),
    Failed(Error),
}

/// The stdio binding's probe: `server/discover` with the newest modern version.
pub(in crate::client) async fn probe(transport: &Transport, hello: &Hello<'_>) -> Probe {
    let mut version = MODERN_PROTOCOL_VERSIONS[0].to_owned();
    let mut tried = Vec::new();
    loop {
        let params = json!({ "_meta": hello.modern_meta(&version) });
        let answer = if tried.is_empty() {
            first_probe(transport, hello, params).await
        } else {
            let ask = hello.ask(transport, "server/discover", params, hello.probe_timeout);
            ask.await
        };
        tried.push(version.clone());
        let error = match answer {
            Ok(result) => return discovered(result, hello),
            Err(error) => error,
        };
        event!(debug, error = %error, "server/discover failed");
        let rpc = error.rpc_error().cloned();
        match rpc {
            Some(rpc) if rpc.code == UNSUPPORTED_VERSION => {
                let supported: Vec<String> = rpc
                    .data
                    .as_ref()
                    .and_then(|d| d.get("supported"))
                    .and_then(|s| serde_json::from_value(s.clone()).ok())
                    .unwrap_or_default();
                match pick(&supported) {
                    // A refusal of the very version it lists is asked once
                    // more (a server may refuse a first request on principle).
                    Some(Pick::Modern(next))
                        if tried.iter().filter(|v| **v == next).count() > 1 =>
                    {
                        return Probe::Failed(Error::Protocol(format!(
                            "the server refused MCP {next} twice, yet lists it as supported ({})",
                            supported.join(", ")
                        )))
                    }
                    Some(Pick::Modern(next)) => version = next,
                    Some(Pick::Legacy(legacy)) => {
                        return Probe::Legacy {
                            version: Some(legacy),
                            answer: error.to_string(),
                            silent: false,
                        }
                    }
                    _ => return Probe::Failed(no_common_version(&supported)),
                }
            }
            Some(rpc) if MODERN_ERRORS.contains(&rpc.code) => return Probe::Failed(error),
            _ if matches!(error, Error::Noise { .. }) => return Probe::Failed(error),
            _ => {
                let answer = error.to_string();
                return match error {
                    Error::Exited { .. }
                    | Error::NotAlive
                    | Error::StdoutClosed
                    | Error::LeftLoop => Probe::Exited(answer),
                    // Out of time for the whole connect: no handshake after it.
                    Error::Timeout { .. } if hello.past_deadline() => Probe::Failed(error),
                    _ => {
                        let silent = matches!(error, Error::Timeout { .. });
                        if silent {
                            event!(warn, "MCP server did not answer the server/discover probe: taking it for a legacy server (Era::Legacy skips the probe)");
                        }
                        Probe::Legacy {
                            version: None,
                            silent,
                            answer,
                        }
                    }
                };
            }
        }
    }
}

/// The first probe, and a second one (forgotten if unanswered, never
/// cancelled) once the server read the first and let it go unanswered
/// ([`nudge`]): a server whose session died on the first exits on it, and
/// the first answer of either is the probe's.
async fn first_probe(
    transport: &Transport,
    hello: &Hello<'_>,
    params: Value,
) -> Result<Value, Error> {
    let sent = Instant::now();
    let probe = hello.ask(
        transport,
        "server/discover",
        params.clone(),
        hello.probe_timeout,
    );
    let second = async move {
        nudge::unanswered_after_reading(transport, sent).await;
        event!(
            debug,
            "the server read the probe and did not answer: probing once more"
        );
        let limit = hello.probe_timeout;
        hello
            .ask_as(transport, "server/discover", params, limit, true)
            .await
    };
    match select(pin!(probe), pin!(second)).await {
        Either::Left((answer, _)) | Either::Right((answer, _)) => answer,
    }
}

/// The newest version this client and a server's list have in common.
enum Pick {
    Modern(String),
    Legacy(String),
}

fn pick(supported: &[String]) -> Option<Pick> {
    let has = |v: &&&str| supported.iter().any(|s| s == **v);
    if let Some(v) = MODERN_PROTOCOL_VERSIONS.iter().find(has) {
        return Some(Pick::Modern((*v).to_owned()));
    }
    LEGACY_PROTOCOL_VERSIONS
        .iter()
        .find(has)
        .map(|v| Pick::Legacy((*v).to_owned()))
}

fn no_common_version(supported: &[String]) -> Error {
    Error::Protocol(format!(
        "the server speaks MCP {}, and this client {}: no version in common",
        if supported.is_empty() {
            "(no version listed)".to_owned()
        } else {
            supported.join(", ")
        },
        MODERN_PROTOCOL_VERSIONS
            .iter()
            .chain(LEGACY_PROTOCOL_VERSIONS.iter())
            .copied()
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// A `DiscoverResult`: the server is modern (or lists only legacy versions).
fn discovered(result: Value, hello: &Hello<'_>) -> Probe {
    #[derive(Deserialize)]
    struct DiscoverResult {
        #[serde(rename = "supportedVersions")]
        supported_versions: Vec<String>,
        #[serde(default)]
        capabilities: ServerCapabilities,
        #[serde(default)]
        instructions: Option<String>,
        #[serde(rename = "_meta", default)]
        meta: Map<String, Value>,
    }
    // Anything but a DiscoverResult is a legacy server's own answer to an
    // unknown method (`{}`, say): the handshake decides.
    let not_discover = |error: Error| Probe::Legacy {
        version: None,
        answer: format!("a result that is not a DiscoverResult ({error})"),
        silent: false,
    };
    if let Err(error) = complete("server/discover", &result) {
        return not_discover(error);
    }
    let found: DiscoverResult = match decode("server/discover", result) {
        Ok(found) => found,
        Err(error) => return not_discover(error),
    };
    let version = match pick(&found.supported_versions) {
        Some(Pick::Modern(version)) => version,
        Some(Pick::Legacy(version)) => {
            return Probe::Legacy {
                answer: format!(
                    "a DiscoverResult listing {}",
                    found.supported_versions.join(", ")
                ),
                version: Some(version),
                silent: false,
            }
        }
        None => return Probe::Failed(no_common_version(&found.supported_versions)),
    };
    let server_info = found
        .meta
        .get(META_SERVER_INFO)
        .and_then(|info| serde_json::from_value(info.clone()).ok())
        .unwrap_or_else(|| Implementation {
            name: String::new(),
            version: String::new(),
            title: None,
            extra: Extra::new(),
        });
    let meta = hello.modern_meta(&version);
    let members = Value::Object(meta.clone()).to_string();
    Probe::Modern(Box::new(Session {
        era: Era::Modern,
        meta_members: Some(members[1..members.len() - 1].to_owned()),
        meta: Some(meta),
        protocol_version: version,
        capabilities: found.capabilities,
        server_info,
        instructions: found.instructions,
    }))
}

pub(in crate::client) async fn handshake(
    transport: &Transport,
    hello: &Hello<'_>,
    version: Option<&str>,
) -> Result<Session, Error> {
    let offered = version.unwrap_or(LEGACY_PROTOCOL_VERSIONS[0]);
    let params = json!({
        "protocolVersion": offered,
        "capabilities": hello.legacy_capabilities(),
        "clientInfo": hello.client_info,
    });
    let limit = transport.timeout().unwrap_or(hello.handshake_timeout);
    let answer = hello.ask(transport, "initialize", params, limit).await?;
    let init: InitializeResult = decode("initialize", answer)?;
    if !LEGACY_PROTOCOL_VERSIONS.contains(&init.protocol_version.as_str()) {
        return Err(Error::Protocol(format!(
            "the server answered protocol version {}, which this client does not support \
             (it offered {offered}; it supports {})",
            init.protocol_version,
            LEGACY_PROTOCOL_VERSIONS.join(", ")
        )));
    }
    transport.send_notification("notifications/initialized", None)?;
    Ok(Session {
        era: Era::Legacy,
        protocol_version: init.protocol_version,
        capabilities: init.capabilities,
        server_info: init.server_info,
        instructions: init.instructions,
        meta: None,
        meta_members: None,
    })
}

/// The legacy servers that ignored the probe, by command line, for the life
/// of this process: a second connect to one skips the probe.
fn eras() -> MutexGuard<'static, HashMap<String, Era>> {
    static ERAS: OnceLock<Mutex<HashMap<String, Era>>> = OnceLock::new();
    crate::lock::lock(ERAS.get_or_init(Mutex::default))
}

/// `Era::Legacy` for a command line whose server ignored the probe before.
pub(in crate::client) fn known_era(command: &str) -> Option<Era> {
    eras().get(command).copied()
}

/// Remembers the era of a server with this command line that ignored the probe.
pub(in crate::client) fn remember_era(command: String, era: Era) {
    eras().insert(command, era);
}
