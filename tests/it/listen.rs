//! `Client::listen`: a stream of one subscription's notifications, in both eras.
//! Modern: `subscriptions/listen`, acknowledged, told apart by subscriptionId,
//! cancelled on drop, ended by the server. Legacy: the same stream from the
//! server's notifications, after `resources/subscribe`.

use crate::common;

use common::{peer, received, run, within};
use futures::StreamExt;
use serde_json::{json, Value};
use stdio_mcp::client::{CallOptions, Client, Era, ListenFilter};

async fn change(client: &Client, what: &str, uri: Option<&str>) -> Value {
    client
        .request(
            "test/changed",
            Some(json!({ "what": what, "uri": uri })),
            CallOptions::new(),
        )
        .await
        .unwrap()
}

#[test]
fn modern_subscriptions_each_get_their_own_notifications() {
    run(15, async {
        let client = Client::connect(peer(&["--discover", "modern"]))
            .await
            .unwrap();
        assert_eq!(client.era(), Era::Modern);
        let mut tools = client
            .listen(ListenFilter::new().tools_list_changed())
            .await
            .unwrap();
        assert_eq!(
            tools.acknowledged(),
            Some(&json!({ "toolsListChanged": true }))
        );
        let mut file = client
            .listen(ListenFilter::new().resource("file:///a.md"))
            .await
            .unwrap();
        // Each change reaches the subscription that asked for it, and only that one.
        assert_eq!(change(&client, "tools", None).await["sent"], 1);
        assert_eq!(
            change(&client, "uri", Some("file:///a.md")).await["sent"],
            1
        );
        let got = within(5, tools.next()).await.unwrap();
        assert_eq!(got.method, "notifications/tools/list_changed");
        let got = within(5, file.next()).await.unwrap();
        assert_eq!(got.method, "notifications/resources/updated");
        assert_eq!(got.params.unwrap()["uri"], "file:///a.md");
        // The acknowledgment was not among the notifications: the next is the next change.
        change(&client, "tools", None).await;
        assert_eq!(
            within(5, tools.next()).await.unwrap().method,
            "notifications/tools/list_changed"
        );
        // Dropping a stream cancels its listen request on the wire.
        drop(file);
        let lines = received(&client.transport()).await;
        let listens: Vec<&Value> = lines
            .iter()
            .filter(|l| l["method"] == "subscriptions/listen")
            .collect();
        assert_eq!(listens.len(), 2);
        assert_eq!(
            listens[0]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        let cancelled: Vec<&Value> = lines
            .iter()
            .filter(|l| l["method"] == "notifications/cancelled")
            .collect();
        assert_eq!(cancelled.len(), 1, "{lines:?}");
        assert_eq!(cancelled[0]["params"]["requestId"], listens[1]["id"]);
        assert_eq!(
            change(&client, "uri", Some("file:///a.md")).await["sent"],
            0
        );
        // The server ends the subscription: the stream ends.
        client
            .request("test/end_listens", None, CallOptions::new())
            .await
            .unwrap();
        assert!(within(5, tools.next()).await.is_none());
        client.close().await.unwrap();
    });
}

#[test]
fn legacy_subscriptions_come_from_the_servers_notifications() {
    run(15, async {
        let client = Client::connect(peer(&[])).await.unwrap();
        assert_eq!(client.era(), Era::Legacy);
        let mut stream = client
            .listen(
                ListenFilter::new()
                    .prompts_list_changed()
                    .resource("file:///b.md"),
            )
            .await
            .unwrap();
        assert_eq!(stream.acknowledged(), None);
        change(&client, "tools", None).await; // not asked for
        change(&client, "uri", Some("file:///other.md")).await; // not asked for
        change(&client, "prompts", None).await;
        change(&client, "uri", Some("file:///b.md")).await;
        let first = within(5, stream.next()).await.unwrap();
        assert_eq!(first.method, "notifications/prompts/list_changed");
        let second = within(5, stream.next()).await.unwrap();
        assert_eq!(second.params.unwrap()["uri"], "file:///b.md");
        let lines = received(&client.transport()).await;
        let subscribe = lines
            .iter()
            .find(|l| l["method"] == "resources/subscribe")
            .unwrap();
        assert_eq!(subscribe["params"]["uri"], "file:///b.md");
        drop(stream);
        client.close().await.unwrap();
    });
}

#[test]
fn a_stream_ends_when_the_server_exits() {
    run(15, async {
        for (flags, era) in [
            (&["--discover", "modern"][..], Era::Modern),
            (&[][..], Era::Legacy),
        ] {
            let client = Client::builder(peer(flags))
                .era(era)
                .connect()
                .await
                .unwrap();
            let mut stream = client
                .listen(ListenFilter::new().tools_list_changed())
                .await
                .unwrap();
            let _ = client
                .request("test/exit", Some(json!({ "code": 0 })), CallOptions::new())
                .await;
            let end = within(5, stream.next()).await;
            assert!(end.is_none(), "{era:?}: {end:?}");
        }
    });
}

/// The `resources/unsubscribe` lines the peer has read so far, by URI.
async fn unsubscribed(client: &Client) -> Vec<String> {
    // Read after a request of our own: a clean-up queued before it is in.
    let lines = received(&client.transport()).await;
    lines
        .iter()
        .filter(|l| l["method"] == "resources/unsubscribe")
        .map(|l| l["params"]["uri"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_dropped_legacy_stream_unsubscribes_what_nobody_else_wants() {
    run(15, async {
        let client = Client::connect(peer(&[])).await.unwrap();
        assert_eq!(client.era(), Era::Legacy);
        client.subscribe("file:///kept.md").await.unwrap();
        let listen = |uris: &[&str]| {
            let filter = uris
                .iter()
                .fold(ListenFilter::new(), |f, uri| f.resource(*uri));
            client.listen(filter)
        };
        let first = listen(&["file:///a.md", "file:///kept.md"]).await.unwrap();
        let second = listen(&["file:///a.md", "file:///b.md"]).await.unwrap();
        // a.md is still the second stream's; kept.md was asked for by subscribe.
        drop(first);
        assert_eq!(unsubscribed(&client).await, Vec::<String>::new());
        // Now nobody wants a.md or b.md; the answers are swallowed, not discarded.
        drop(second);
        assert_eq!(
            unsubscribed(&client).await,
            ["file:///a.md", "file:///b.md"]
        );
        assert_eq!(client.transport().discarded_lines(), 0);
        // An explicit unsubscribe ends a stream's updates too; its drop sends no second one.
        let third = listen(&["file:///kept.md"]).await.unwrap();
        client.unsubscribe("file:///kept.md").await.unwrap();
        drop(third);
        assert_eq!(
            unsubscribed(&client).await,
            ["file:///a.md", "file:///b.md", "file:///kept.md"]
        );
        // A refused subscribe fails the listen and undoes the ones before it.
        let refused = listen(&["file:///c.md", "refuse:d"]).await.unwrap_err();
        assert!(
            refused.to_string().contains("no such resource"),
            "{refused}"
        );
        assert_eq!(
            unsubscribed(&client).await,
            [
                "file:///a.md",
                "file:///b.md",
                "file:///kept.md",
                "file:///c.md"
            ]
        );
        client.close().await.unwrap();
    });
}

/// The promised type of the stream (`Subscription`'s docs; a compile-time check: this
/// file does not build if it breaks).
#[test]
fn the_stream_is_a_send_unpin_stream_of_notifications() {
    fn promised<T>()
    where
        T: futures::Stream<Item = stdio_mcp::Notification> + Send + Unpin + std::fmt::Debug,
    {
    }
    promised::<stdio_mcp::client::Subscription>();
}
