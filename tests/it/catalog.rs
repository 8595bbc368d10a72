//! The tool catalog: `tools()` from a cache (hit, ttl, list_changed in each
//! era, restarts, racing callers), arguments from any `Serialize`, and typed
//! results (`structured`, `into_result`).

use crate::common;

use std::collections::HashMap;
use std::time::Duration;

use common::{peer, received, run};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use stdio_mcp::client::{CallOptions, Client, Era, RestartPolicy};
use stdio_mcp::{ErrorKind, TransportBuilder};

fn modern(flags: &[&str]) -> TransportBuilder {
    let flags: Vec<&str> = ["--discover", "modern"]
        .iter()
        .chain(flags)
        .copied()
        .collect();
    peer(&flags)
}

/// How many `tools/list` requests the server has read.
async fn listings(client: &Client) -> usize {
    received(&client.transport())
        .await
        .iter()
        .filter(|l| l["method"] == "tools/list")
        .count()
}

fn names(tools: &[stdio_mcp::client::Tool]) -> Vec<&str> {
    tools.iter().map(|t| t.name.as_str()).collect()
}

#[test]
fn the_cached_list_is_listed_once_until_the_server_says_it_changed() {
    run(20, async {
        for server in [peer(&[]), modern(&[])] {
            let client = Client::connect(server).await.unwrap();
            let era = client.era();
            let first = client.tools().await.unwrap();
            assert_eq!(names(&first), ["echo", "add", "countdown"], "{era}");
            assert_eq!(client.tools().await.unwrap(), first);
            assert_eq!(listings(&client).await, 1, "{era}: a hit asks nothing");
            // The server says its tools changed (a modern one through the
            // listen the first tools() opened for it).
            client
                .request(
                    "test/changed",
                    Some(json!({"what": "tools"})),
                    CallOptions::new(),
                )
                .await
                .unwrap();
            let mut listed = 1;
            for _ in 0..50 {
                client.tools().await.unwrap();
                listed = listings(&client).await;
                if listed == 2 {
                    break;
                }
                async_io::Timer::after(Duration::from_millis(20)).await;
            }
            assert_eq!(
                listed, 2,
                "{era}: list_changed makes the next tools() list again"
            );
            client.tools().await.unwrap();
            assert_eq!(listings(&client).await, 2, "{era}");
            if era == Era::Modern {
                let lines = received(&client.transport()).await;
                let listens: Vec<&Value> = lines
                    .iter()
                    .filter(|l| l["method"] == "subscriptions/listen")
                    .collect();
                assert_eq!(listens.len(), 1, "one listen for the catalog");
                assert_eq!(
                    listens[0]["params"]["notifications"],
                    json!({"toolsListChanged": true})
                );
            }
            client.close().await.unwrap();
        }
    });
}

#[test]
fn the_cached_list_expires_with_its_ttl() {
    run(20, async {
        // Paged: three pages, the shortest ttl 1 s.
        let client = Client::connect(modern(&["--paged"])).await.unwrap();
        assert_eq!(client.tools().await.unwrap().len(), 3);
        client.tools().await.unwrap();
        assert_eq!(listings(&client).await, 3, "one listing of three pages");
        async_io::Timer::after(Duration::from_millis(1100)).await;
        assert_eq!(client.tools().await.unwrap().len(), 3);
        assert_eq!(
            listings(&client).await,
            6,
            "listed again once the ttl ran out"
        );
        client.close().await.unwrap();
    });
}

#[test]
fn callers_racing_on_an_empty_list_share_one_listing() {
    run(20, async {
        for server in [peer(&["--paged"]), modern(&["--paged"])] {
            let client = Client::connect(server).await.unwrap();
            let racing = (0..8).map(|_| {
                let client = client.clone();
                async move { client.tools().await.unwrap() }
            });
            let all = futures::future::join_all(racing).await;
            assert!(all.iter().all(|tools| tools.len() == 3));
            assert_eq!(
                listings(&client).await,
                3,
                "{}: three pages, once",
                client.era()
            );
            client.close().await.unwrap();
        }
    });
}

#[test]
fn list_tools_refreshes_the_cache_and_a_restart_empties_it() {
    run(20, async {
        let client = Client::builder(peer(&[]))
            .era(Era::Legacy)
            .restart(
                RestartPolicy::new().backoff(Duration::from_millis(10), Duration::from_millis(10)),
            )
            .connect()
            .await
            .unwrap();
        client.list_tools().await.unwrap();
        client.tools().await.unwrap();
        assert_eq!(listings(&client).await, 1, "list_tools filled the cache");
        let _ = client
            .request("test/exit", Some(json!({"code": 1})), CallOptions::new())
            .await;
        common::eventually(5, || client.restarts() == 1).await;
        // The new process has its own list, read on the first tools().
        client.tools().await.unwrap();
        assert_eq!(
            listings(&client).await,
            1,
            "the restarted server was asked once"
        );
        client.close().await.unwrap();
    });
}

#[derive(Serialize)]
struct Sum {
    a: f64,
    b: f64,
}

#[test]
fn arguments_are_anything_serializable_and_results_read_typed() {
    run(15, async {
        let client = Client::connect(peer(&[])).await.unwrap();
        let r = client
            .call_tool("add", Sum { a: 1.5, b: 2.0 })
            .await
            .unwrap();
        // The demo's add has no output schema: its text is the JSON.
        assert_eq!(r.structured::<f64>().unwrap(), 3.5);
        let echoed = client
            .call_tool("echo", HashMap::from([("message", "hi")]))
            .await
            .unwrap();
        let e = echoed.structured::<Value>().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Protocol);
        assert!(
            e.to_string()
                .contains("has no structuredContent, and its text is not a"),
            "{e}"
        );
        assert!(e.to_string().ends_with("\"Echo: hi\""), "{e}");
        assert!(echoed.clone().into_result().is_ok());
        // A map whose keys are not strings cannot be JSON arguments.
        let e = client
            .call_tool("add", HashMap::from([((1, 2), 3)]))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArguments);
        client.close().await.unwrap();
    });
}

#[derive(Deserialize, Debug, PartialEq)]
struct Point {
    x: i64,
    y: i64,
}

#[test]
fn structured_prefers_structured_content() {
    let r: stdio_mcp::client::CallToolResult = serde_json::from_value(json!({
        "content": [{"type": "text", "text": "{\"x\": 0, \"y\": 0}"}],
        "structuredContent": {"x": 1, "y": 2}
    }))
    .unwrap();
    assert_eq!(r.structured::<Point>().unwrap(), Point { x: 1, y: 2 });
    let wrong: stdio_mcp::client::CallToolResult =
        serde_json::from_value(json!({"content": [], "structuredContent": {"x": "one"}})).unwrap();
    let e = wrong.structured::<Point>().unwrap_err();
    assert!(e.to_string().contains("structuredContent is not a"), "{e}");
}
