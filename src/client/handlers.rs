//! The client's answers to what the server asks (`roots/list`,
//! `sampling/createMessage`, `elicitation/create`): the async handlers the
//! builder takes, the capabilities they declare, and the transport handler
//! that runs them (legacy) or finds them for an input request (modern).

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use serde_json::{json, Value};

use super::asks::fill_defaults;
use crate::error::RpcError;
use crate::message::ServerRequest;
use crate::route::{Reply, RequestHandler};

/// Answers a server request, asynchronously: the future's outcome is the answer.
/// It runs beside the transport's I/O, so one that waits (for a person, say)
/// delays no other request of this server or of any other.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use futures::FutureExt;
/// use serde_json::json;
/// use stdio_mcp::client::ServerRequestHandler;
///
/// let roots: ServerRequestHandler = Arc::new(|_request| async { Ok(json!({"roots": []})) }.boxed());
/// # let _ = roots;
/// ```
pub type ServerRequestHandler =
    Arc<dyn Fn(ServerRequest) -> BoxFuture<'static, Result<Value, RpcError>> + Send + Sync>;

/// Makes a [`ServerRequestHandler`] of an async closure.
pub(crate) fn handler<F, Fut>(handler: F) -> ServerRequestHandler
where
    F: Fn(ServerRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
{
    Arc::new(move |request| handler(request).boxed())
}

/// The handlers the user gave for what the server asks: a legacy server's
/// requests, and a 2026-07-28 server's input requests (multi round-trip).
#[derive(Clone)]
pub(crate) struct InputHandlers {
    pub(crate) roots: Option<ServerRequestHandler>,
    pub(crate) sampling: Option<ServerRequestHandler>,
    pub(crate) elicitation: Option<ServerRequestHandler>,
    /// The elicitation handler takes URL mode too.
    pub(crate) elicitation_url: bool,
    /// The sampling handler takes `tools` and `toolChoice`.
    pub(crate) sampling_tools: bool,
    /// An accepted form gets the schema's defaults for the fields left out.
    pub(crate) elicitation_defaults: bool,
}

impl Default for InputHandlers {
    fn default() -> Self {
        InputHandlers {
            roots: None,
            sampling: None,
            elicitation: None,
            elicitation_url: false,
            sampling_tools: false,
            elicitation_defaults: true,
        }
    }
}

impl InputHandlers {
    /// These handlers as the client runs them: the elicitation handler's
    /// accepted forms completed with the schema's defaults, where asked for.
    /// Every path to a handler (a legacy request, a modern input request, a
    /// task's question) goes through what this returns.
    pub(crate) fn prepared(mut self) -> Self {
        if !self.elicitation_defaults {
            return self;
        }
        if let Some(user) = self.elicitation.take() {
            self.elicitation = Some(Arc::new(move |request: ServerRequest| {
                let schema = request
                    .params
                    .as_ref()
                    .and_then(|p| p.get("requestedSchema"))
                    .cloned();
                let answer = user(request);
                async move {
                    let mut answer = answer.await?;
                    if let Some(schema) = schema {
                        fill_defaults(&schema, &mut answer);
                    }
                    Ok(answer)
                }
                .boxed()
            }));
        }
        self
    }

    /// The handler slot of a method a server may ask a client, with the
    /// builder method that fills it; `None` for any other method.
    fn slot(&self, method: &str) -> Option<(&Option<ServerRequestHandler>, &'static str)> {
        match method {
            "roots/list" => Some((&self.roots, "on_roots_list")),
            "sampling/createMessage" => Some((&self.sampling, "on_sampling")),
            "elicitation/create" => Some((&self.elicitation, "on_elicitation")),
            _ => None,
        }
    }

    /// The handler for an input request's method, or an error naming what is missing.
    pub(crate) fn for_method(&self, method: &str) -> Result<&ServerRequestHandler, String> {
        let (handler, setter) = self
            .slot(method)
            .ok_or_else(|| format!("an input request of unknown method {method}"))?;
        handler.as_ref().ok_or_else(|| {
            format!("{method}, and this client has no handler for it (ClientBuilder::{setter})")
        })
    }

    /// The capabilities these handlers declare.
    pub(crate) fn capabilities(&self) -> Value {
        let mut capabilities = json!({});
        if self.roots.is_some() {
            // Client::notify_roots_changed sends it.
            capabilities["roots"] = json!({ "listChanged": true });
        }
        if self.sampling.is_some() {
            capabilities["sampling"] = match self.sampling_tools {
                true => json!({ "tools": {} }),
                false => json!({}),
            };
        }
        if self.elicitation.is_some() {
            let mut modes = json!({ "form": {} });
            if self.elicitation_url {
                modes["url"] = json!({});
            }
            capabilities["elicitation"] = modes;
        }
        capabilities
    }

    /// The transport's request handler: these handlers for their methods,
    /// `ping` answered, anything else to `other` (the transport builder's own
    /// `on_request`) or refused as unknown.
    pub(crate) fn into_handler(self, mut other: Option<RequestHandler>) -> RequestHandler {
        Box::new(move |request: &ServerRequest| {
            // Liveness: always answered, as the protocol requires.
            if request.method == "ping" {
                return Reply::Now(Ok(json!({})));
            }
            match (self.slot(&request.method), other.as_mut()) {
                (Some((Some(handler), _)), _) => Reply::Later(handler(request.clone())),
                (None, Some(other)) => other(request),
                _ => Reply::Now(Err(RpcError {
                    code: -32601,
                    message: format!("Method not found: {}", request.method),
                    data: None,
                })),
            }
        })
    }
}
