//! A tool's hints with the specification's defaults, and its digest, over
//! the definitions a real server process lists: the same definition gives
//! the same digest in every process, and different tools different ones.

use crate::common;

use common::{peer, run};
use stdio_mcp::client::{Client, ToolHints};

#[test]
fn listed_tools_have_stable_digests_and_default_hints() {
    run(20, async {
        let mut digests = Vec::new();
        for _ in 0..2 {
            let client = Client::connect(peer(&[])).await.unwrap();
            let tools = client.list_tools().await.unwrap();
            digests.push(
                tools
                    .iter()
                    .map(|t| (t.name.clone(), t.digest()))
                    .collect::<Vec<_>>(),
            );
            for tool in &tools {
                if tool.annotations.is_none() {
                    assert_eq!(
                        tool.hints(),
                        ToolHints {
                            read_only: false,
                            destructive: true,
                            idempotent: false,
                            open_world: true
                        },
                        "{}",
                        tool.name
                    );
                }
            }
            client.close().await.unwrap();
        }
        assert_eq!(
            digests[0], digests[1],
            "the same definitions, the same digests"
        );
        let mut seen: Vec<&String> = digests[0].iter().map(|(_, d)| d).collect();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), digests[0].len(), "each tool its own digest");
        assert!(digests[0]
            .iter()
            .all(|(_, d)| d.len() == 71 && d.starts_with("sha256:")));
    });
}
