//! Groups: a config's servers started at once, their tools under one naming,
//! calls routed to their server; servers that fail fail nothing else.

use crate::common;

use std::time::{Duration, Instant};

use common::{peer_exe, received, run};
use serde_json::{json, Value};
use stdio_mcp::client::{ClientBuilder, Era};
use stdio_mcp::config::Config;
use stdio_mcp::group::{Group, GroupBuilder, Naming, ServerState};
use stdio_mcp::ErrorKind;

/// A config of peers: `(name, args)`, plus entry fields given as JSON.
fn config(servers: &[(&str, &[&str], Value)]) -> Config {
    let mut entries = serde_json::Map::new();
    for (name, args, extra) in servers {
        let mut entry = json!({ "command": peer_exe(), "args": args });
        if let Value::Object(extra) = extra {
            for (k, v) in extra {
                entry[k] = v.clone();
            }
        }
        entries.insert((*name).to_owned(), entry);
    }
    Config::parse(&json!({ "mcpServers": entries }).to_string()).unwrap()
}

fn mixed() -> GroupBuilder {
    Group::builder(config(&[
        ("alpha", &[], json!({})),
        (
            "beta",
            &["--discover", "modern"],
            json!({"excludeTools": ["add"]}),
        ),
        ("crashing", &["--initialize", "exit"], json!({})),
        ("slow", &["--initialize", "never"], json!({})),
    ]))
    .client(|name, client: ClientBuilder| {
        // The legacy ones skip the probe; beta finds its era itself.
        if name == "beta" {
            client
        } else {
            client.era(Era::Legacy)
        }
    })
    .start_timeout(Duration::from_millis(800))
}

#[test]
fn servers_start_at_once_and_one_failing_fails_nothing_else() {
    run(20, async {
        let started = Instant::now();
        let group = mixed().connect().await;
        // It waited for the slowest's start limit (that the starts are
        // concurrent, not in turn, is the next test's).
        assert!(
            started.elapsed() >= Duration::from_millis(800),
            "{:?}",
            started.elapsed()
        );
        let states = group.servers();
        let names: Vec<&str> = states.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["alpha", "beta", "crashing", "slow"]);
        assert_eq!(states[0].1, ServerState::Ready(Era::Legacy));
        assert_eq!(states[1].1, ServerState::Ready(Era::Modern));
        match &states[2].1 {
            ServerState::Failed(why) => assert!(
                why.starts_with("server \"crashing\": MCP server process exited"),
                "{why}"
            ),
            other => panic!("{other:?}"),
        }
        match &states[3].1 {
            ServerState::Failed(why) => assert!(why.contains("Group::start_timeout"), "{why}"),
            other => panic!("{other:?}"),
        }
        let e = group.client("crashing").await.unwrap_err();
        assert_eq!(e.server(), Some("crashing"));
        group.close().await;
        assert!(group
            .servers()
            .iter()
            .take(2)
            .all(|(_, s)| *s == ServerState::Closed));
    });
}

/// Started in turn, `alpha` (first by name) would wait for ever for the file
/// `beta` writes when it starts; started at once, both connect.
#[test]
fn servers_start_concurrently_not_in_turn() {
    run(20, async {
        let dir = std::env::temp_dir().join(format!("stdio-mcp-at-once-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let marker = dir.join("beta-started");
        let _ = std::fs::remove_file(&marker);
        let marker = marker.to_str().unwrap();
        let group = Group::builder(config(&[
            ("alpha", &["--wait-for", marker], json!({})),
            ("beta", &["--log-start", marker], json!({})),
        ]))
        .client(|_, client: ClientBuilder| client.era(Era::Legacy))
        .start_timeout(Duration::from_secs(15))
        .connect()
        .await;
        let states = group.servers();
        assert_eq!(states[0].1, ServerState::Ready(Era::Legacy), "{states:?}");
        assert_eq!(states[1].1, ServerState::Ready(Era::Legacy), "{states:?}");
        group.close().await;
        let _ = std::fs::remove_dir_all(&dir);
    });
}

#[test]
fn tools_are_named_by_server_and_calls_go_to_theirs() {
    run(20, async {
        let group = mixed().connect().await;
        let tools = group.tools().await;
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        // beta's add is excluded; the failed servers add nothing.
        assert_eq!(
            names,
            [
                "alpha__echo",
                "alpha__add",
                "alpha__countdown",
                "beta__echo",
                "beta__countdown"
            ]
        );
        assert_eq!(tools[3].server, "beta");
        assert_eq!(tools[3].tool.name, "echo", "the wire name is kept");
        let r = group
            .call_tool("beta__echo", json!({"message": "to beta"}))
            .await
            .unwrap();
        assert_eq!(r.text(), "Echo: to beta");
        let calls = |server: &'static str| {
            let group = group.clone();
            async move {
                let lines = received(&group.client(server).await.unwrap().transport()).await;
                lines.iter().filter(|l| l["method"] == "tools/call").count()
            }
        };
        assert_eq!((calls("alpha").await, calls("beta").await), (0, 1));
        // An excluded tool cannot be called; an unknown name says what was searched.
        for name in ["beta__add", "nowhere__tool"] {
            let e = group.call_tool(name, json!({})).await.unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArguments);
            assert_eq!(
                e.to_string(),
                format!(
                    "MCP call not sent: the group has no tool {name} \
                     (servers searched: alpha, beta, crashing, slow)"
                )
            );
        }
        // A call's error names its server.
        let e = group
            .call_tool("alpha__add", json!({"a": "x"}))
            .await
            .unwrap_err();
        assert_eq!(e.server(), Some("alpha"));
        group.close().await;
    });
}

#[test]
fn bare_names_go_to_the_first_server_and_conflicts_say_so() {
    run(20, async {
        let group = Group::builder(config(&[
            ("a", &[], json!({"includeTools": ["e*"]})),
            ("b", &[], json!({})),
        ]))
        .naming(Naming::Bare)
        .connect()
        .await;
        let tools = group.tools().await;
        let listed: Vec<(&str, &str)> = tools
            .iter()
            .map(|t| (t.name.as_str(), t.server.as_str()))
            .collect();
        assert_eq!(listed, [("echo", "a"), ("add", "b"), ("countdown", "b")]);
        assert_eq!(
            group.conflicts(),
            [("echo".to_owned(), "a".to_owned(), vec!["b".to_owned()])]
        );
        group
            .call_tool("echo", json!({"message": "m"}))
            .await
            .unwrap();
        let lines = received(&group.client("a").await.unwrap().transport()).await;
        assert!(lines.iter().any(|l| l["method"] == "tools/call"));
        group.close().await;
    });
}

#[test]
fn a_group_whose_servers_all_fail_is_still_a_group_that_says_why() {
    run(20, async {
        let config = Config::parse(
            r#"{"mcpServers": {"x": {"command": "stdio-mcp-no-such-program"}, "y": {"command": "stdio-mcp-no-such-program-either"}}}"#,
        )
        .unwrap();
        let group = Group::builder(config).connect().await;
        for (name, state) in group.servers() {
            match state {
                ServerState::Failed(why) => {
                    assert!(why.contains("no such program"), "{name}: {why}")
                }
                other => panic!("{name}: {other:?}"),
            }
        }
        assert!(group.tools().await.is_empty());
        group.close().await;
    });
}

#[test]
fn a_server_whose_tools_change_is_listed_again() {
    run(20, async {
        let group = Group::builder(config(&[("m", &["--discover", "modern"], json!({}))]))
            .connect()
            .await;
        group.tools().await;
        group.tools().await;
        let client = group.client("m").await.unwrap();
        let listings = || async {
            let lines = received(&client.transport()).await;
            lines.iter().filter(|l| l["method"] == "tools/list").count()
        };
        assert_eq!(listings().await, 1);
        common::announce_tools_changed(&client).await;
        let mut seen = 1;
        for _ in 0..50 {
            group.tools().await;
            seen = listings().await;
            if seen == 2 {
                break;
            }
            async_io::Timer::after(Duration::from_millis(20)).await;
        }
        assert_eq!(seen, 2);
        group.close().await;
    });
}

#[test]
fn dropping_a_group_leaves_no_process_behind() {
    run(20, async {
        let group = Group::builder(config(&[
            ("a", &["--ignore-eof"], json!({})),
            ("b", &[], json!({})),
        ]))
        .connect()
        .await;
        let mut pids = Vec::new();
        for name in ["a", "b"] {
            pids.push(group.client(name).await.unwrap().transport().pid());
        }
        drop(group);
        // The close ladder: EOF, then SIGTERM for the one that ignores it.
        common::eventually(8, || pids.iter().all(|p| !common::process_exists(*p))).await;
    });
}

async fn connect_and_call() {
    let group = Group::builder(config(&[("p", &[], json!({}))]))
        .connect()
        .await;
    let r = group
        .call_tool("p__add", json!({"a": 1, "b": 2}))
        .await
        .unwrap();
    assert_eq!(r.text(), "3");
    group.close().await;
}

#[test]
fn groups_under_smol() {
    smol::block_on(common::within(10, connect_and_call()));
}

#[async_std::test]
async fn groups_under_async_std() {
    common::within(10, connect_and_call()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn groups_under_tokio() {
    common::within(10, connect_and_call()).await;
}

/// A tool filter that filters nothing is said, once the tools are listed:
/// the entry, the name and the closest tool; one that matches says nothing.
#[test]
fn a_tool_filter_that_matches_nothing_is_a_warning() {
    run(20, async {
        let group = Group::builder(config(&[
            (
                "a",
                &[],
                json!({"includeTools": ["e*", "ad"], "excludeTools": ["countdwn", "delete_*"]}),
            ),
            ("b", &[], json!({"excludeTools": ["add"]})),
        ]))
        .connect()
        .await;
        assert!(
            group.warnings().is_empty(),
            "nothing is known before a listing"
        );
        let offered: Vec<String> = group.tools().await.into_iter().map(|t| t.name).collect();
        assert_eq!(offered, ["a__echo", "b__echo", "b__countdown"]);
        let servers: Vec<String> = group.warnings().into_iter().map(|w| w.server).collect();
        assert_eq!(servers, ["a", "a", "a"], "b's filter matches its add");
        let warnings: Vec<String> = group.warnings().iter().map(ToString::to_string).collect();
        assert_eq!(
            warnings,
            [
                r#"server "a": includeTools entry "ad" matches none of its 3 tools (did you mean "add"?)"#,
                r#"server "a": excludeTools entry "countdwn" matches none of its 3 tools (did you mean "countdown"?)"#,
                r#"server "a": excludeTools entry "delete_*" matches none of its 3 tools"#,
            ]
        );
        group.close().await;
    });
}
