//! The real server-everything behind a shell that does not exec it, as `npx`
//! does not: after its task tool it keeps a timer and ignores EOF, and the
//! close ladder must reach it through the shell's process group — with the
//! defaults. (It needs `scripts/install-test-servers`, as tests/real_servers.rs.)
#![cfg(unix)]

mod common;

use serde_json::json;
use stdio_mcp::client::Client;
use stdio_mcp::Transport;

use common::{eventually, installed, live_members, run};

#[test]
fn everything_behind_a_shell_ends_with_close_after_its_task_tool() {
    let test = "everything_behind_a_shell_ends_with_close_after_its_task_tool";
    let relative = "node_modules/.bin/mcp-server-everything";
    if installed(relative, test).is_none() {
        return;
    }
    let server = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(".servers")
        .join(relative);
    run(60, async {
        // The shell waits for the server, then writes: it cannot exec it.
        let script = format!("'{}'; echo ended >&2", server.display());
        let shell = Transport::builder(["sh", "-c", &script]);
        let client = Client::connect(shell).await.unwrap();
        let group = client.transport().pid();
        let report = client
            .call_tool("simulate-research-query", json!({"topic": "rust"}))
            .await
            .unwrap();
        assert!(report.text().contains("# Research Report: rust"));
        let members = live_members(group);
        assert!(members.len() >= 2, "the shell and node: {members:?}");
        client.close().await.unwrap();
        eventually(5, || live_members(group).is_empty()).await;
    });
}
