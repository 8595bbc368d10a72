//! How a client is told to answer what the server asks (`roots/list`,
//! `sampling/createMessage`, `elicitation/create`): the builder's methods
//! that take the async handlers and say which forms they take.

use std::future::Future;

use serde_json::Value;

use crate::error::RpcError;
use crate::message::ServerRequest;

use super::builder::ClientBuilder;
use super::handlers;

impl ClientBuilder {
    /// Answers the server's `roots/list`; declares the `roots` capability.
    ///
    /// Handlers are async and run beside the transport's I/O: one that waits
    /// delays no other request of this server or of any other.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use serde_json::json;
    /// use stdio_mcp::client::Client;
    /// use stdio_mcp::Transport;
    ///
    /// let client = Client::builder(Transport::builder(["my-mcp-server"]))
    ///     .on_roots_list(|_| async { Ok(json!({"roots": [{"uri": "file:///home/me/project"}]})) })
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn on_roots_list<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ServerRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        self.inputs.roots = Some(handlers::handler(handler));
        self
    }

    /// Answers the server's `sampling/createMessage`; declares `sampling`.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::Client;
    /// use stdio_mcp::{RpcError, Transport};
    ///
    /// let client = Client::builder(Transport::builder(["my-mcp-server"]))
    ///     .on_sampling(|_| async {
    ///         Err(RpcError { code: -1, message: "the user declined".into(), data: None })
    ///     })
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn on_sampling<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ServerRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        self.inputs.sampling = Some(handlers::handler(handler));
        self
    }

    /// Answers the server's `elicitation/create`; declares `elicitation`. The
    /// handler may take its time (ask a person): nothing else waits for it.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use serde_json::json;
    /// use stdio_mcp::client::Client;
    /// use stdio_mcp::Transport;
    ///
    /// let client = Client::builder(Transport::builder(["my-mcp-server"]))
    ///     .on_elicitation(|request| async move {
    ///         println!("the server asks: {:?}", request.params);
    ///         Ok(json!({"action": "decline"}))
    ///     })
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn on_elicitation<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ServerRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        self.inputs.elicitation = Some(handlers::handler(handler));
        self
    }

    /// Declares that the [`on_elicitation`](Self::on_elicitation) handler
    /// also takes URL-mode elicitations (`elicitation.url`; form mode is
    /// always declared with a handler). Such a request asks the user to open a
    /// URL: see [`ElicitRequest::Url`](super::ElicitRequest::Url).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::{Client, ElicitRequest, ElicitResult};
    /// use stdio_mcp::Transport;
    ///
    /// let client = Client::builder(Transport::builder(["my-mcp-server"]))
    ///     .on_elicitation(|request| async move {
    ///         Ok(match ElicitRequest::from_request(&request)? {
    ///             ElicitRequest::Url { url, .. } => {
    ///                 println!("open {url}");
    ///                 ElicitResult::accept_url().into()
    ///             }
    ///             _ => ElicitResult::decline().into(),
    ///         })
    ///     })
    ///     .elicitation_url(true)
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn elicitation_url(mut self, takes_urls: bool) -> Self {
        self.inputs.elicitation_url = takes_urls;
        self
    }

    /// Whether an accepted form elicitation gets the schema's defaults for
    /// the fields the handler left out (SEP-1034; on by default). The
    /// server's `requestedSchema` may give a `default` for each property
    /// (string, number, integer, boolean, enum); with this on, a handler that
    /// answers `accept` without such a field has it filled in from there
    /// before the answer leaves, in both eras and for a task's questions.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use serde_json::json;
    /// use stdio_mcp::client::Client;
    /// use stdio_mcp::Transport;
    ///
    /// let client = Client::builder(Transport::builder(["my-mcp-server"]))
    ///     // The answer leaves exactly as the handler wrote it.
    ///     .on_elicitation(|_| async { Ok(json!({"action": "accept", "content": {}})) })
    ///     .elicitation_defaults(false)
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn elicitation_defaults(mut self, fill: bool) -> Self {
        self.inputs.elicitation_defaults = fill;
        self
    }

    /// Declares that the [`on_sampling`](Self::on_sampling) handler passes
    /// `tools` and `toolChoice` on to its model (`sampling.tools`).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::{Client, CreateMessageRequest, CreateMessageResult};
    /// use stdio_mcp::Transport;
    ///
    /// let client = Client::builder(Transport::builder(["my-mcp-server"]))
    ///     .on_sampling(|request| async move {
    ///         let asked = CreateMessageRequest::from_request(&request)?;
    ///         println!("{} tools offered", asked.tools.map_or(0, |t| t.len()));
    ///         Ok(CreateMessageResult::text("my-model", "…").into())
    ///     })
    ///     .sampling_tools(true)
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn sampling_tools(mut self, takes_tools: bool) -> Self {
        self.inputs.sampling_tools = takes_tools;
        self
    }
}
