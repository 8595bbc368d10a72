//! Change notifications: `listen` streams (the modern `subscriptions/listen`,
//! or a legacy server's own notifications) and legacy resource subscriptions.

pub(super) mod inbound;
pub(super) mod subscription;

use std::sync::Arc;

use serde_json::json;

use crate::error::Error;

use super::client::Client;
use super::era::{Era, DEFAULT_HANDSHAKE_TIMEOUT};
use super::life::Hold;
use super::request::CallOptions;
use super::subscription::{ListenFilter, Subscription};
use super::wire::send_listen;

impl Client {
    /// Asks for `notifications/resources/updated` when the resource changes;
    /// they arrive at the transport builder's `on_notification`.
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
    /// client.subscribe("file:///notes.md").await?; // updates arrive as notifications/resources/updated
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn subscribe(&self, uri: &str) -> Result<(), Error> {
        self.resource_updates("resources/subscribe", uri).await?;
        self.inner.life.subscribed(uri, true);
        Ok(())
    }

    /// Stops the updates [`subscribe`](Self::subscribe) asked for, those of
    /// the resource's [`listen`](Self::listen) streams too.
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
    /// client.subscribe("file:///notes.md").await?;
    /// client.unsubscribe("file:///notes.md").await?;
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), Error> {
        self.resource_updates("resources/unsubscribe", uri).await?;
        self.inner.life.subscribed(uri, false);
        Ok(())
    }

    /// Opens a subscription to the notifications `filter` asks for, and
    /// resolves once the server acknowledged it.
    ///
    /// With a 2026-07-28 server this is `subscriptions/listen`: its
    /// notifications are told apart from other subscriptions' by their
    /// `subscriptionId`, and dropping the stream cancels the listen request.
    /// With a legacy server the stream takes the matching notifications from
    /// the server's one stream, after `resources/subscribe` for each resource
    /// of the filter; dropping it stops the stream and sends
    /// `resources/unsubscribe` for each of those resources that neither
    /// [`subscribe`](Self::subscribe) nor another open stream still wants
    /// (without waiting for the answer). Notifications still reach the
    /// builder's `on_notification`.
    ///
    /// # Errors
    ///
    /// The transport's error; [`Error::Protocol`] when the server ends the
    /// subscription before acknowledging it; [`Error::Timeout`] when no
    /// acknowledgment comes within the transport's timeout (60 s without one).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use futures::StreamExt;
    /// use stdio_mcp::client::{Client, ListenFilter};
    ///
    /// let client = Client::connect(["my-mcp-server"]).await?;
    /// let mut updates = client
    ///     .listen(ListenFilter::new().resource("file:///notes.md").tools_list_changed())
    ///     .await?;
    /// if let Some(update) = updates.next().await {
    ///     println!("{} {:?}", update.method, update.params);
    /// }
    /// drop(updates); // cancels the subscription
    /// # Ok::<(), stdio_mcp::Error>(()) });
    /// ```
    pub async fn listen(&self, filter: ListenFilter) -> Result<Subscription, Error> {
        let opened = self.open_listen(filter).await;
        self.named(opened)
    }

    async fn open_listen(&self, filter: ListenFilter) -> Result<Subscription, Error> {
        let (sender, receiver) = futures::channel::mpsc::unbounded();
        if self.inner.session.era != Era::Modern {
            let uris = filter.uris().to_vec();
            let key = self.inner.inbound.listeners.add(filter, sender);
            let hold = Box::new(Hold::new(&self.inner.life, key));
            // Should a subscribe fail, dropping the stream undoes the ones before.
            let subscription = Subscription::new(
                receiver,
                Arc::clone(&self.inner.inbound.listeners),
                key,
                None,
                Some(hold),
            );
            for uri in &uris {
                self.resource_updates("resources/subscribe", uri).await?;
                subscription.holds(uri);
            }
            return Ok(subscription);
        }
        // Its span lasts until the server acknowledges the stream.
        let operation = self.inner.telemetry.operation(
            "subscriptions/listen",
            None,
            &self.inner.session.protocol_version,
        );
        let opened = async {
            let transport = self.inner.life.transport().await?;
            let protocol = self.protocol();
            let (ack, acknowledged) = futures::channel::oneshot::channel();
            let send = |filter: &ListenFilter| {
                let request = send_listen(&transport, filter, &protocol, Some(&operation));
                operation.sent(request.id());
                request
            };
            let key = self.inner.inbound.listeners.open(filter, send, sender, ack);
            let limit = transport.timeout().unwrap_or(DEFAULT_HANDSHAKE_TIMEOUT);
            let listeners = &self.inner.inbound.listeners;
            let ended = futures::future::poll_fn(|cx| listeners.poll_end(key, cx));
            let ended = std::pin::pin!(ended);
            let waited = futures::future::select(
                acknowledged,
                futures::future::select(ended, async_io::Timer::after(limit)),
            )
            .await;
            let agreed = match waited {
                futures::future::Either::Left((Ok(agreed), _)) => agreed,
                // The listener went away before the acknowledgment: no stream to give.
                futures::future::Either::Left((Err(_), _)) => {
                    listeners.remove(key);
                    return Err(Error::Protocol(
                        "subscriptions/listen ended before it was acknowledged".into(),
                    ));
                }
                futures::future::Either::Right((ended, _)) => {
                    listeners.remove(key);
                    return Err(match ended {
                        futures::future::Either::Left((Some(Err(error)), _)) => error,
                        futures::future::Either::Left((Some(Ok(_)) | None, _)) => Error::Protocol(
                            "the server ended subscriptions/listen before acknowledging it".into(),
                        ),
                        futures::future::Either::Right(_) => Error::Timeout {
                            method: "subscriptions/listen".into(),
                            after: limit,
                        },
                    });
                }
            };
            Ok(Subscription::new(
                receiver,
                Arc::clone(&self.inner.inbound.listeners),
                key,
                Some(agreed),
                None,
            ))
        }
        .await;
        operation.end_call(false, opened.as_ref().err());
        opened
    }

    /// `resources/subscribe` or `resources/unsubscribe` (legacy only).
    async fn resource_updates(&self, method: &str, uri: &str) -> Result<(), Error> {
        self.legacy_only(method)?;
        let params = json!({ "uri": uri });
        self.request(method, Some(params), CallOptions::new())
            .await?;
        Ok(())
    }

    /// Refuses a method 2026-07-28 removed, saying what replaced it.
    fn legacy_only(&self, method: &str) -> Result<(), Error> {
        self.named(self.in_legacy_era(method))
    }

    fn in_legacy_era(&self, method: &str) -> Result<(), Error> {
        match self.inner.session.era {
            Era::Modern => Err(Error::Protocol(format!(
                "MCP {} has no {method}: resource updates come through subscriptions/listen \
                 (Client::listen)",
                self.inner.session.protocol_version
            ))),
            _ => Ok(()),
        }
    }
}
