//! What the server sends the client unasked: its requests (`ping`, `roots/list`,
//! `sampling/createMessage`, `elicitation/create`) and the progress of calls.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use futures::FutureExt;

use serde_json::{json, Value};

use crate::error::RpcError;
use crate::message::{Notification, ServerRequest};
use crate::route::{NotificationHandler, Reply, RequestHandler};

use super::types::Progress;

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

/// The handlers the user gave, and what the server may ask of each.
#[derive(Default)]
pub(crate) struct ServerRequests {
    pub(crate) roots: Option<ServerRequestHandler>,
    pub(crate) sampling: Option<ServerRequestHandler>,
    pub(crate) elicitation: Option<ServerRequestHandler>,
    /// The transport builder's own `on_request`, for every other method.
    pub(crate) other: Option<RequestHandler>,
}

/// The handlers that answer a 2026-07-28 server's input requests (multi
/// round-trip), the same ones that answer a legacy server's requests.
#[derive(Clone, Default)]
pub(crate) struct InputHandlers {
    roots: Option<ServerRequestHandler>,
    sampling: Option<ServerRequestHandler>,
    elicitation: Option<ServerRequestHandler>,
}

impl InputHandlers {
    /// The handler for an input request's method, or an error naming what is missing.
    pub(crate) fn for_method(&self, method: &str) -> Result<&ServerRequestHandler, String> {
        let (handler, setter) = match method {
            "roots/list" => (&self.roots, "on_roots_list"),
            "sampling/createMessage" => (&self.sampling, "on_sampling"),
            "elicitation/create" => (&self.elicitation, "on_elicitation"),
            other => return Err(format!("an input request of unknown method {other}")),
        };
        handler.as_ref().ok_or_else(|| {
            format!("{method}, and this client has no handler for it (ClientBuilder::{setter})")
        })
    }
}

impl ServerRequests {
    pub(crate) fn inputs(&self) -> InputHandlers {
        InputHandlers {
            roots: self.roots.clone(),
            sampling: self.sampling.clone(),
            elicitation: self.elicitation.clone(),
        }
    }

    /// The client capabilities these handlers let us declare.
    pub(crate) fn capabilities(&self) -> Value {
        let mut capabilities = json!({});
        if self.roots.is_some() {
            capabilities["roots"] = json!({ "listChanged": false });
        }
        if self.sampling.is_some() {
            capabilities["sampling"] = json!({});
        }
        if self.elicitation.is_some() {
            capabilities["elicitation"] = json!({});
        }
        capabilities
    }

    pub(crate) fn into_handler(mut self) -> RequestHandler {
        Box::new(move |request: &ServerRequest| {
            let handler = match request.method.as_str() {
                // Liveness: always answered, as the protocol requires.
                "ping" => return Reply::Now(Ok(json!({}))),
                "roots/list" => self.roots.as_ref(),
                "sampling/createMessage" => self.sampling.as_ref(),
                "elicitation/create" => self.elicitation.as_ref(),
                _ => match self.other.as_mut() {
                    Some(other) => return other(request),
                    None => None,
                },
            };
            match handler {
                Some(handler) => Reply::Later(handler(request.clone())),
                None => Reply::Now(Err(RpcError {
                    code: -32601,
                    message: format!("Method not found: {}", request.method),
                    data: None,
                })),
            }
        })
    }
}

type ProgressCallback = Arc<Mutex<dyn FnMut(&Progress) + Send>>;

/// Which call each progress token belongs to.
#[derive(Default)]
pub(crate) struct ProgressRoutes {
    calls: Mutex<HashMap<String, ProgressCallback>>,
}

impl ProgressRoutes {
    pub(crate) fn add(&self, token: String, callback: impl FnMut(&Progress) + Send + 'static) {
        let callback: ProgressCallback = Arc::new(Mutex::new(callback));
        self.lock().insert(token, callback);
    }

    pub(crate) fn remove(&self, token: &str) {
        self.lock().remove(token);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, ProgressCallback>> {
        self.calls.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Hands a `notifications/progress` to the call that owns its token, if any.
    fn deliver(&self, notification: &Notification) {
        let Some(params) = &notification.params else {
            return;
        };
        let Some(token) = params.get("progressToken").map(token_key) else {
            return;
        };
        // Not called under the map's lock: the callback may start other calls.
        let callback = self.lock().get(&token).cloned();
        if let (Some(callback), Ok(progress)) = (callback, serde_json::from_value(params.clone())) {
            let mut callback = callback.lock().unwrap_or_else(|e| e.into_inner());
            (*callback)(&progress);
        }
    }

    pub(crate) fn into_handler(
        self: Arc<Self>,
        mut user: Option<NotificationHandler>,
    ) -> NotificationHandler {
        Box::new(move |notification: &Notification| {
            if notification.method == "notifications/progress" {
                self.deliver(notification);
            }
            if let Some(user) = &mut user {
                user(notification);
            }
        })
    }
}

/// Tokens may be strings or numbers; `7` and `"7"` are different tokens.
pub(crate) fn token_key(token: &Value) -> String {
    token.to_string()
}
