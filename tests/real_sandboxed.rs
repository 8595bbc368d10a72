//! Real servers nobody here wrote, each in the strictest sandbox (reads
//! everywhere, writes only to its private TMPDIR, no network): the node
//! server-everything and the Python mcp-server-time still serve, and the
//! process tree still ends with the transport. Linux, under bubblewrap (CI
//! installs it), with the servers of `scripts/install-test-servers`.
#![cfg(target_os = "linux")]

mod common;

use serde_json::json;
use stdio_mcp::client::Client;
use stdio_mcp::sandbox::Sandbox;

use common::{descendants, eventually, installed, run};

/// The installed server `relative` in the strictest sandbox, when both it
/// and bubblewrap are here (each missing one says so, or fails under CI).
fn boxed(relative: &str, test: &str) -> Option<stdio_mcp::TransportBuilder> {
    let builder = installed(relative, test)?;
    stdio_mcp_testkit::bubblewrap(test).then(|| builder.sandbox(Sandbox::new()))
}

#[test]
fn everything_serves_in_the_strictest_sandbox_and_its_tree_ends_with_close() {
    let Some(builder) = boxed(
        "node_modules/.bin/mcp-server-everything",
        "everything_serves_in_the_strictest_sandbox_and_its_tree_ends_with_close",
    ) else {
        return;
    };
    run(60, async {
        let client = Client::connect(builder).await.unwrap();
        let bwrap = client.transport().pid();
        let r = client
            .call_tool("echo", json!({"message": "boxed"}))
            .await
            .unwrap();
        assert_eq!(r.text(), "Echo: boxed");
        let below = descendants(bwrap);
        let node = below.iter().any(|p| {
            std::fs::read_to_string(format!("/proc/{p}/comm")).is_ok_and(|c| c.trim() == "node")
        });
        assert!(node, "node below bubblewrap: {below:?}");
        client.close().await.unwrap();
        // Each process that was below it is gone (a reparented one would still be there).
        let alive = || {
            below
                .iter()
                .any(|p| std::path::Path::new(&format!("/proc/{p}")).exists())
        };
        eventually(5, || !alive()).await;
    });
}

#[test]
fn the_python_time_server_serves_in_the_strictest_sandbox() {
    let Some(builder) = boxed(
        "venv/bin/mcp-server-time",
        "the_python_time_server_serves_in_the_strictest_sandbox",
    ) else {
        return;
    };
    run(60, async {
        let client = Client::connect(builder).await.unwrap();
        let r = client
            .call_tool("get_current_time", json!({"timezone": "UTC"}))
            .await
            .unwrap();
        assert!(!r.is_error && r.text().contains("UTC"), "{r:?}");
        client.close().await.unwrap();
    });
}
