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

#[test]
fn numbers_beyond_what_rfc_8785_writes_exactly_still_get_a_stable_digest() {
    let dir = std::env::temp_dir().join(format!("stdio-mcp-big-numbers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tools.json");
    // Integers past 2^53 are written as the nearest double, as ECMAScript
    // would: the digest is stable, and two such integers may share it.
    common::write_whole(
        &file,
        r#"[{"name": "big", "inputSchema": {"type": "integer", "maximum": 18446744073709551615,
             "minimum": -9223372036854775808, "multipleOf": 0.1}}]"#,
    );
    run(20, async {
        let mut digests = Vec::new();
        for _ in 0..2 {
            let client = Client::connect(peer(&["--tools-file", &file.display().to_string()]))
                .await
                .unwrap();
            let tools = client.list_tools().await.unwrap();
            assert_eq!(
                tools[0].input_schema["maximum"],
                serde_json::json!(u64::MAX)
            );
            digests.push(tools[0].digest());
            client.close().await.unwrap();
        }
        assert_eq!(digests[0], digests[1]);
        assert!(digests[0].starts_with("sha256:") && digests[0].len() == 71);
    });
    std::fs::remove_dir_all(&dir).unwrap();
}
