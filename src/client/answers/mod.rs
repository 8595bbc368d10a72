//! The client's answers to what the server asks (`roots/list`,
//! `sampling/createMessage`, `elicitation/create`): the async handlers the
//! builder takes, the capabilities they declare, and the transport handler
//! that runs them (legacy) or finds them for an input request (modern).

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use serde_json::{json, Value};

use super::model::asks::{
    fill_defaults, CreateMessageRequest, CreateMessageResult, ElicitRequest, ElicitResult,
};
use super::model::roots::{roots_answer, ListRootsRequest, Root};
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

/// A handler of what the server asks, in either form: the wire form
/// (`ServerRequest` in, `Result<Value, RpcError>` out, marked [`WireForm`]) or
/// the typed one (the method's typed request in, its typed answer out,
/// marked [`TypedForm`]). The closure's parameter type says which:
/// `|request: ServerRequest|` or `|request: ElicitRequest|`
/// ([`ClientBuilder::on_elicitation`](super::ClientBuilder::on_elicitation)).
///
/// A request the typed form cannot read never reaches the handler: it is
/// answered `-32602` naming what was wrong (a modern server's input request:
/// the call fails saying so). A handler that panics is answered `-32603`,
/// and the client goes on serving.
///
/// # Examples
///
/// ```no_run
/// # futures::executor::block_on(async {
/// use stdio_mcp::client::{Client, ElicitRequest, ElicitResult};
/// use stdio_mcp::RpcError;
///
/// let client = Client::builder(["my-mcp-server"])
///     .on_elicitation(|_: ElicitRequest| async move { Ok::<_, RpcError>(ElicitResult::decline()) })
///     .connect()
///     .await?;
/// # Ok::<(), stdio_mcp::Error>(()) });
/// ```
pub trait IntoHandler<Asked, Form>: Send + Sync + 'static {
    /// The handler as the client keeps it.
    fn into_handler(self) -> ServerRequestHandler;
}

/// Marks a handler of the wire form (see [`IntoHandler`]).
///
/// # Examples
///
/// ```
/// let _marker: Option<stdio_mcp::client::WireForm> = None;
/// ```
#[derive(Debug)]
pub enum WireForm {}

/// Marks a handler of the typed form (see [`IntoHandler`]).
///
/// # Examples
///
/// ```
/// let _marker: Option<stdio_mcp::client::TypedForm> = None;
/// ```
#[derive(Debug)]
pub enum TypedForm {}

impl<Asked, F, Fut> IntoHandler<Asked, WireForm> for F
where
    F: Fn(ServerRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
{
    fn into_handler(self) -> ServerRequestHandler {
        handler(self)
    }
}

impl<F, Fut> IntoHandler<ElicitRequest, TypedForm> for F
where
    F: Fn(ElicitRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ElicitResult, RpcError>> + Send + 'static,
{
    fn into_handler(self) -> ServerRequestHandler {
        typed(ElicitRequest::from_request, self, Value::from)
    }
}

impl<F, Fut> IntoHandler<CreateMessageRequest, TypedForm> for F
where
    F: Fn(CreateMessageRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<CreateMessageResult, RpcError>> + Send + 'static,
{
    fn into_handler(self) -> ServerRequestHandler {
        typed(CreateMessageRequest::from_request, self, Value::from)
    }
}

impl<F, Fut> IntoHandler<ListRootsRequest, TypedForm> for F
where
    F: Fn(ListRootsRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<Root>, RpcError>> + Send + 'static,
{
    fn into_handler(self) -> ServerRequestHandler {
        typed(ListRootsRequest::from_request, self, |roots| {
            roots_answer(&roots)
        })
    }
}

/// A handler of the typed form: the request read as `Req` (or answered with
/// the error saying why it cannot be), the answer written from `Res`.
fn typed<Req, Res, F, Fut>(
    read: fn(&ServerRequest) -> Result<Req, RpcError>,
    handler: F,
    write: fn(Res) -> Value,
) -> ServerRequestHandler
where
    F: Fn(Req) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Res, RpcError>> + Send + 'static,
    Req: 'static,
    Res: 'static,
{
    self::handler(move |request: ServerRequest| {
        // Read now: only the handler's own future is kept.
        let answer = read(&request).map(&handler);
        async move { Ok(write(answer?.await?)) }
    })
}

/// Makes a [`ServerRequestHandler`] of an async closure; a panic in it (or in
/// its future) answers `-32603` instead of nothing.
pub(crate) fn handler<F, Fut>(handler: F) -> ServerRequestHandler
where
    F: Fn(ServerRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
{
    let panicked = |method: &str| RpcError {
        code: -32603,
        message: format!("internal error: the client's {method} handler panicked"),
        data: None,
    };
    let handler = Arc::new(handler);
    Arc::new(move |request| {
        let method = request.method.clone();
        let handler = Arc::clone(&handler);
        crate::hook_panic::run_hook(move || handler(request))
            .map(move |outcome| outcome.unwrap_or_else(|_| Err(panicked(&method))))
            .boxed()
    })
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
