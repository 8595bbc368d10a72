//! Servers built on SDK releases many configs still run, installed pinned by
//! `scripts/install-test-servers`: `mcp-server-time` 0.6.2 on the Python SDK
//! 1.9.3, whose session dies silently on the `server/discover` probe and whose
//! process exits on the next line it reads. It must connect with the defaults,
//! quickly: found out by a second probe, not by the probe's timeout.
//!
//! Without it installed this says so on stderr and does nothing; with
//! `STDIO_MCP_REQUIRE_SERVERS` set (as `.ci/run` does) a missing server fails.

mod common;

use std::time::{Duration, Instant};

use common::{installed, run};
use serde_json::json;
use stdio_mcp::client::{Client, Era, DEFAULT_PROBE_TIMEOUT};
use stdio_mcp::config::Config;
use stdio_mcp::group::{Group, ServerState};

const OLD_TIME: &str = "old-python-sdk/bin/mcp-server-time";

#[test]
fn python_sdk_before_1_9_4_connects_with_the_defaults() {
    let test = "python_sdk_before_1_9_4_connects_with_the_defaults";
    let Some(builder) = installed(OLD_TIME, test) else {
        return;
    };
    run(60, async {
        // What the handshake alone costs this server, for comparison.
        let started = Instant::now();
        let legacy = Client::builder(installed(OLD_TIME, test).unwrap())
            .era(Era::Legacy)
            .connect()
            .await
            .unwrap();
        let handshake_only = started.elapsed();
        legacy.close().await.unwrap();
        let started = Instant::now();
        let client = Client::connect(builder).await.unwrap();
        let took = started.elapsed();
        // Found dead on a second probe, then a new process for the handshake:
        // one more start, never the probe's whole timeout.
        assert!(
            took <= handshake_only * 2 + Duration::from_secs(1),
            "{took:?} against a handshake-only connect of {handshake_only:?}"
        );
        assert!(took < DEFAULT_PROBE_TIMEOUT / 2, "{took:?}");
        assert_eq!(client.era(), Era::Legacy);
        assert_eq!(client.server_info().version, "1.9.3");
        let r = client
            .call_tool("get_current_time", json!({"timezone": "UTC"}))
            .await
            .unwrap();
        assert!(r.text().contains("UTC"), "{}", r.text());
        client.close().await.unwrap();
        // The same command line again in this process: no probe, no wait.
        let path = common::installed(OLD_TIME, test).unwrap();
        let started = Instant::now();
        let again = Client::connect(path).await.unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        again.close().await.unwrap();
    });
}

#[test]
fn python_sdk_before_1_9_4_starts_lazily_from_a_groups_catalog_cache() {
    let test = "python_sdk_before_1_9_4_starts_lazily_from_a_groups_catalog_cache";
    if installed(OLD_TIME, test).is_none() {
        return;
    }
    let program = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(".servers")
        .join(OLD_TIME);
    // An argument of its own, so that no other test's memory of the era helps.
    let config = json!({ "mcpServers": { "time": {
        "command": program, "args": ["--local-timezone", "UTC"] } } });
    let cache =
        std::env::temp_dir().join(format!("stdio-mcp-old-time-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&cache);
    run(60, async {
        let connect = || {
            Group::builder(Config::parse(&config.to_string()).unwrap())
                // Its first start costs one more start of it (a second probe).
                .ready_within(Duration::from_secs(30))
                .catalog_cache(&cache)
                .connect()
        };
        let group = connect().await;
        assert_eq!(group.servers()[0].1, ServerState::Ready(Era::Legacy));
        assert!(!group.tools().await.is_empty());
        group.close().await;
        // Written on a thread of its own: wait for the file.
        common::eventually(10, || cache.exists()).await;
        let group = connect().await;
        assert_eq!(group.servers()[0].1, ServerState::Idle);
        // Its first call starts it with the cached era: the handshake alone.
        let started = Instant::now();
        let r = group
            .call_tool("time__get_current_time", json!({"timezone": "UTC"}))
            .await
            .unwrap();
        assert!(r.text().contains("UTC"), "{}", r.text());
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        group.close().await;
    });
    let _ = std::fs::remove_file(&cache);
}
