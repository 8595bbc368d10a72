//! `Client::listen`: a stream of one subscription's notifications, in both eras.
//! Modern: `subscriptions/listen`, acknowledged, told apart by subscriptionId,
//! cancelled on drop, ended by the server. Legacy: the same stream from the
//! server's notifications, after `resources/subscribe`.

mod common;

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
