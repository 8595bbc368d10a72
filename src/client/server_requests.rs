//! How a client is told to answer what the server asks (`roots/list`,
//! `sampling/createMessage`, `elicitation/create`): the builder's methods
//! that take the async handlers and say which forms they take.

use super::builder::ClientBuilder;
use super::handlers::IntoHandler;
use super::model::asks::{CreateMessageRequest, ElicitRequest};
use super::model::roots::ListRootsRequest;

impl ClientBuilder {
    /// Answers the server's `roots/list`; declares the `roots` capability.
    ///
    /// The handler takes the typed request and returns the roots
    /// (`|_: ListRootsRequest| async { Ok(vec![Root::folder(..)]) }`), or the
    /// wire form (`|request: ServerRequest|` returning the result's JSON); see
    /// [`IntoHandler`]. Handlers are async and run beside the transport's I/O:
    /// one that waits delays no other request of this server or of any other.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::{Client, ListRootsRequest, Root};
    /// use stdio_mcp::RpcError;
    ///
    /// let client = Client::builder(["my-mcp-server"])
    ///     .on_roots_list(|_: ListRootsRequest| async {
    ///         Ok::<_, RpcError>(vec![Root::folder("/home/me/project")])
    ///     })
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn on_roots_list<Form>(
        mut self,
        handler: impl IntoHandler<ListRootsRequest, Form>,
    ) -> Self {
        self.inputs.roots = Some(handler.into_handler());
        self
    }

    /// Answers the server's `sampling/createMessage`; declares `sampling`.
    /// The handler takes a [`CreateMessageRequest`] and returns a
    /// [`CreateMessageResult`](super::CreateMessageResult) (text, or the
    /// other content its builders make), or the wire form ([`IntoHandler`]).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::{Client, CreateMessageRequest, CreateMessageResult};
    /// use stdio_mcp::RpcError;
    ///
    /// let client = Client::builder(["my-mcp-server"])
    ///     .on_sampling(|request: CreateMessageRequest| async move {
    ///         if request.messages.is_empty() {
    ///             return Err(RpcError { code: -1, message: "nothing to answer".into(), data: None });
    ///         }
    ///         Ok(CreateMessageResult::text("my-model", "Hello!"))
    ///     })
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn on_sampling<Form>(
        mut self,
        handler: impl IntoHandler<CreateMessageRequest, Form>,
    ) -> Self {
        self.inputs.sampling = Some(handler.into_handler());
        self
    }

    /// Answers the server's `elicitation/create`; declares `elicitation`. The
    /// handler takes an [`ElicitRequest`] and returns an
    /// [`ElicitResult`](super::ElicitResult) (an accepted form gets the
    /// schema's defaults: [`elicitation_defaults`](Self::elicitation_defaults)),
    /// or the wire form ([`IntoHandler`]). It may take its time (ask a
    /// person): nothing else waits for it.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use serde_json::json;
    /// use stdio_mcp::client::{Client, ElicitRequest, ElicitResult};
    /// use stdio_mcp::RpcError;
    ///
    /// let client = Client::builder(["my-mcp-server"])
    ///     .on_elicitation(|request: ElicitRequest| async move {
    ///         Ok::<_, RpcError>(match request {
    ///             ElicitRequest::Form { message, .. } => {
    ///                 println!("the server asks: {message}");
    ///                 ElicitResult::accept(json!({"name": "octocat"}))
    ///             }
    ///             _ => ElicitResult::decline(),
    ///         })
    ///     })
    ///     .connect()
    ///     .await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn on_elicitation<Form>(mut self, handler: impl IntoHandler<ElicitRequest, Form>) -> Self {
        self.inputs.elicitation = Some(handler.into_handler());
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
    /// use stdio_mcp::RpcError;
    ///
    /// let client = Client::builder(["my-mcp-server"])
    ///     .on_elicitation(|request: ElicitRequest| async move {
    ///         Ok::<_, RpcError>(match request {
    ///             ElicitRequest::Url { url, .. } => {
    ///                 println!("open {url}");
    ///                 ElicitResult::accept_url()
    ///             }
    ///             _ => ElicitResult::decline(),
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
    /// use stdio_mcp::client::{Client, ElicitRequest, ElicitResult};
    /// use stdio_mcp::RpcError;
    ///
    /// let client = Client::builder(["my-mcp-server"])
    ///     // The answer leaves exactly as the handler wrote it.
    ///     .on_elicitation(|_: ElicitRequest| async { Ok::<_, RpcError>(ElicitResult::accept(json!({}))) })
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
    /// use stdio_mcp::RpcError;
    ///
    /// let client = Client::builder(["my-mcp-server"])
    ///     .on_sampling(|asked: CreateMessageRequest| async move {
    ///         println!("{} tools offered", asked.tools.map_or(0, |t| t.len()));
    ///         Ok::<_, RpcError>(CreateMessageResult::text("my-model", "…"))
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
