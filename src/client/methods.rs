//! The MCP methods as typed calls of a [`Client`], besides tools
//! (`tools.rs`): listings (every page), ping, prompts, resources,
//! completion, logging, roots; each in whichever era the server speaks.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{json, Value};

use crate::error::Error;

use super::client::Client;
use super::era::Era;
use super::model::listing::{ListItem, Listing};
use super::model::offers::{
    CompleteResult, GetPromptResult, Prompt, ReadResourceResult, Resource, ResourceTemplate,
};
use super::model::types::LoggingLevel;
use super::request::CallOptions;
use super::wire::decode;

impl Client {
    /// Every item of a paginated list, following `nextCursor` to the last
    /// page, with the pages' caching hints (see [`Listing`]).
    ///
    /// # Errors
    ///
    /// The transport's error; [`Error::Protocol`] when a page does not fit
    /// the protocol or the server hands out the same cursor twice.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::{Client, ResourceTemplate};
    ///
    /// let client = Client::connect(["my-mcp-server"]).await?;
    /// let templates = client.listing::<ResourceTemplate>().await?;
    /// println!("{} templates, cache scope {:?}", templates.items.len(), templates.cache_scope);
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn listing<T: ListItem>(&self) -> Result<Listing<T>, Error> {
        let listing = self.every_page::<T>().await;
        self.named(listing)
    }

    pub(super) async fn every_page<T: ListItem>(&self) -> Result<Listing<T>, Error> {
        let (method, key) = (T::METHOD, T::FIELD);
        let mut listing = Listing {
            items: Vec::new(),
            fresh_until: None,
            cache_scope: None,
        };
        let mut every_page_has_ttl = true;
        let mut cursor: Option<Value> = None;
        let mut seen = HashSet::new();
        loop {
            let params = cursor.take().map(|c| json!({ "cursor": c }));
            let mut page = self.request(method, params, CallOptions::new()).await?;
            let arrived = std::time::Instant::now();
            let list = page.get_mut(key).map(Value::take).unwrap_or(Value::Null);
            if !list.is_null() {
                listing.items.extend(decode::<Vec<T>>(method, list)?);
            }
            match page.get("ttlMs").and_then(Value::as_i64) {
                Some(ttl) => {
                    let until = arrived + Duration::from_millis(ttl.max(0).unsigned_abs());
                    listing.fresh_until = Some(listing.fresh_until.map_or(until, |u| u.min(until)));
                }
                None => every_page_has_ttl = false,
            }
            if let Some(scope) = page.get("cacheScope").and_then(Value::as_str) {
                if listing.cache_scope.as_deref() != Some("private") {
                    listing.cache_scope = Some(scope.to_owned());
                }
            }
            match page.get("nextCursor") {
                Some(next) if !next.is_null() => {
                    if !seen.insert(next.to_string()) {
                        return Err(Error::Protocol(format!(
                            "{method} returned the cursor {next} twice; stopping rather than looping"
                        )));
                    }
                    cursor = Some(next.clone());
                }
                _ => break,
            }
        }
        if !every_page_has_ttl {
            listing.fresh_until = None;
        }
        Ok(listing)
    }

    /// Checks the server answers.
    ///
    /// # Errors
    ///
    /// The transport's error if it does not.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::connect(["my-mcp-server"]).await?;
    /// client.ping().await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn ping(&self) -> Result<(), Error> {
        // 2026-07-28 has no ping: its lightest request is server/discover.
        let method = match self.inner.session.era {
            Era::Modern => "server/discover",
            _ => "ping",
        };
        self.request(method, None, CallOptions::new())
            .await
            .map(drop)
    }

    /// Every prompt, across all pages.
    ///
    /// # Errors
    ///
    /// As for [`list_tools`](Self::list_tools).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::connect(["my-mcp-server"]).await?;
    /// for prompt in client.list_prompts().await? {
    ///     println!("{} ({} arguments)", prompt.name, prompt.arguments.len());
    /// }
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, Error> {
        Ok(self.listing::<Prompt>().await?.items)
    }

    /// A prompt filled in with `arguments` (an object of strings, or `Value::Null`).
    ///
    /// # Errors
    ///
    /// The transport's error.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::connect(["my-mcp-server"]).await?;
    /// let prompt = client.get_prompt("review", serde_json::json!({"code": "fn main() {}"})).await?;
    /// for message in prompt.messages {
    ///     println!("{}: {:?}", message.role, message.content);
    /// }
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn get_prompt(&self, name: &str, arguments: Value) -> Result<GetPromptResult, Error> {
        let mut params = json!({ "name": name });
        if !arguments.is_null() {
            params["arguments"] = arguments;
        }
        self.typed("prompts/get", Some(params)).await
    }

    /// Every resource, across all pages.
    ///
    /// # Errors
    ///
    /// As for [`list_tools`](Self::list_tools).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::connect(["my-mcp-server"]).await?;
    /// for resource in client.list_resources().await? {
    ///     println!("{} {}", resource.uri, resource.name);
    /// }
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn list_resources(&self) -> Result<Vec<Resource>, Error> {
        Ok(self.listing::<Resource>().await?.items)
    }

    /// Every resource template, across all pages.
    ///
    /// # Errors
    ///
    /// As for [`list_tools`](Self::list_tools).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::connect(["my-mcp-server"]).await?;
    /// for template in client.list_resource_templates().await? {
    ///     println!("{}", template.uri_template);
    /// }
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, Error> {
        Ok(self.listing::<ResourceTemplate>().await?.items)
    }

    /// Reads a resource.
    ///
    /// # Errors
    ///
    /// The transport's error.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::connect(["my-mcp-server"]).await?;
    /// let read = client.read_resource("file:///notes.md").await?;
    /// println!("{}", read.contents[0].text.as_deref().unwrap_or("(binary)"));
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        self.typed("resources/read", Some(json!({ "uri": uri })))
            .await
    }

    /// The least severe `notifications/message` the server should send.
    ///
    /// # Errors
    ///
    /// The transport's error.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::connect(["my-mcp-server"]).await?;
    /// client.set_logging_level(stdio_mcp::client::LoggingLevel::Warning).await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn set_logging_level(&self, level: LoggingLevel) -> Result<(), Error> {
        if self.inner.session.era == Era::Modern {
            // 2026-07-28 has no logging/setLevel: the level rides on each request.
            self.inner.life.set_log_level(level);
            return Ok(());
        }
        self.request(
            "logging/setLevel",
            Some(json!({ "level": level })),
            CallOptions::new(),
        )
        .await?;
        // Kept, to be asked again of a restarted server.
        self.inner.life.set_log_level(level);
        Ok(())
    }

    /// Completion suggestions for argument `name` (typed so far: `value`) of the
    /// prompt or resource template `reference`, e.g.
    /// `json!({"type": "ref/prompt", "name": "greeting"})`.
    ///
    /// # Errors
    ///
    /// The transport's error.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let client = stdio_mcp::client::Client::connect(["my-mcp-server"]).await?;
    /// let ref_ = serde_json::json!({"type": "ref/prompt", "name": "review"});
    /// let done = client.complete(ref_, "language", "py").await?;
    /// println!("{:?}", done.completion.values);
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn complete(
        &self,
        reference: Value,
        name: &str,
        value: &str,
    ) -> Result<CompleteResult, Error> {
        let params = json!({ "ref": reference, "argument": { "name": name, "value": value } });
        self.typed("completion/complete", Some(params)).await
    }

    /// Tells the server that the roots the client offers have changed
    /// (`notifications/roots/list_changed`): it asks again through the
    /// [`on_roots_list`](super::ClientBuilder::on_roots_list) handler.
    ///
    /// # Errors
    ///
    /// [`Error::Protocol`] with a modern server, which has no such
    /// notification (it asks for the roots with each request that needs them);
    /// the transport's error when the server is gone.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::client::{Client, ListRootsRequest, Root};
    /// use stdio_mcp::RpcError;
    ///
    /// let client = Client::builder(["my-mcp-server"])
    ///     .on_roots_list(|_: ListRootsRequest| async { Ok::<_, RpcError>(vec![Root::folder("/srv")]) })
    ///     .connect()
    ///     .await?;
    /// // The user opened another folder:
    /// client.notify_roots_changed()?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub fn notify_roots_changed(&self) -> Result<(), Error> {
        if self.inner.session.era == Era::Modern {
            return self.named(Err(Error::Protocol(format!(
                "MCP {} has no notifications/roots/list_changed: a modern server asks for \
                 the roots with each request that needs them",
                self.inner.session.protocol_version
            ))));
        }
        let sent = self
            .inner
            .life
            .current()
            .send_notification("notifications/roots/list_changed", None);
        self.named(sent)
    }
}
