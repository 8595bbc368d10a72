//! The group as a host's runtime: a connect no server holds up, every change
//! of state heard in order, members that die failing with the whole error,
//! restart, stop, reload and idle closes, each server's transport reached,
//! prompts and resources merged, config entries that fail alone.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{dead, peer_exe, run, within};
use serde_json::{json, Value};
use stdio_mcp::config::Config;
use stdio_mcp::group::{Group, GroupBuilder, Reloaded, ServerState};
use stdio_mcp::ErrorKind;

/// A config of peers: `(name, args)`.
fn config(servers: &[(&str, &[&str])]) -> Config {
    let mut entries = serde_json::Map::new();
    for (name, args) in servers {
        entries.insert(
            (*name).to_owned(),
            json!({ "command": peer_exe(), "args": args }),
        );
    }
    Config::parse(&json!({ "mcpServers": entries }).to_string()).unwrap()
}

type Heard = Arc<Mutex<Vec<(String, ServerState)>>>;

/// A group builder whose state changes are all kept.
fn heard(builder: GroupBuilder) -> (GroupBuilder, Heard) {
    let heard: Heard = Arc::default();
    let keep = Arc::clone(&heard);
    let builder = builder.on_state_change(move |server, state| {
        keep.lock()
            .unwrap()
            .push((server.to_owned(), state.clone()));
    });
    (builder, heard)
}

fn states_of(heard: &Heard, server: &str) -> Vec<ServerState> {
    heard
        .lock()
        .unwrap()
        .iter()
        .filter(|(s, _)| s == server)
        .map(|(_, state)| state.clone())
        .collect()
}

fn tool_names(tools: &[stdio_mcp::group::GroupTool]) -> Vec<String> {
    tools.iter().map(|t| t.name.clone()).collect()
}

/// Connect returns by `ready_within` with a slow server still starting; it
/// joins later, and a call to it waits for it.
async fn a_slow_server_joins_later() {
    let changed = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = Arc::clone(&changed);
    let (builder, heard) = heard(
        Group::builder(config(&[
            ("fast", &[]),
            ("slow", &["--start-delay", "5000"]),
            (
                "noise",
                &[
                    "--noise",
                    "150",
                    "--initialize",
                    "never",
                    "--discover",
                    "silent",
                ],
            ),
        ]))
        .ready_within(Duration::from_millis(1000))
        .on_tools_changed(move |server, changes| {
            seen.lock()
                .unwrap()
                .push(common::describe_changes(server, changes))
        }),
    );
    let started = Instant::now();
    let group = builder.connect().await;
    // It waited as long as it was told to, and not for the slow server
    // (still starting below): no upper bound on a clock a loaded machine
    // can stretch.
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(1000), "{took:?}");
    let servers = group.servers();
    assert!(matches!(servers[0].1, ServerState::Ready(_)), "{servers:?}");
    match &servers[1].1 {
        ServerState::Failed(why) => assert!(why.contains("not JSON-RPC"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(servers[2].1, ServerState::Starting);
    assert_eq!(
        tool_names(&group.tools().await),
        ["fast__echo", "fast__add", "fast__countdown"]
    );
    // A call to the slow one waits for its start.
    let r = group
        .call_tool("slow__add", json!({"a": 2, "b": 2}))
        .await
        .unwrap();
    assert_eq!(r.text(), "4");
    assert!(matches!(group.servers()[2].1, ServerState::Ready(_)));
    assert_eq!(group.tools().await.len(), 6);
    assert_eq!(
        *changed.lock().unwrap(),
        ["slow: +echo +add +countdown"],
        "only the server that joined after connect"
    );
    let slow = states_of(&heard, "slow");
    assert_eq!(slow[0], ServerState::Starting);
    assert!(matches!(slow[1], ServerState::Ready(_)), "{slow:?}");
    group.close().await;
    assert_eq!(states_of(&heard, "slow").last(), Some(&ServerState::Closed));
}

#[test]
fn a_slow_server_does_not_hold_up_connect_under_block_on() {
    run(20, a_slow_server_joins_later());
}

#[test]
fn a_slow_server_does_not_hold_up_connect_under_smol() {
    smol::block_on(within(20, a_slow_server_joins_later()));
}

#[async_std::test]
async fn a_slow_server_does_not_hold_up_connect_under_async_std() {
    within(20, a_slow_server_joins_later()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_server_does_not_hold_up_connect_under_tokio() {
    within(20, a_slow_server_joins_later()).await;
}

#[test]
fn a_call_to_an_unknown_name_waits_for_the_servers_still_starting() {
    run(20, async {
        let group = Group::builder(config(&[("late", &["--start-delay", "800"])]))
            .ready_within(Duration::from_millis(100))
            .connect()
            .await;
        assert_eq!(group.servers()[0].1, ServerState::Starting);
        // Not listed yet: found once the server has started.
        let r = group
            .call_tool("late__echo", json!({"message": "hi"}))
            .await
            .unwrap();
        assert_eq!(r.text(), "Echo: hi");
        let e = group
            .call_tool("late__nothing", json!({}))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArguments);
        assert!(e.to_string().contains("servers searched: late"), "{e}");
        group.close().await;
    });
}

#[test]
fn a_member_that_exits_fails_with_the_whole_error_and_its_tools_leave() {
    run(20, async {
        let changed = Arc::new(Mutex::new(Vec::<String>::new()));
        let seen = Arc::clone(&changed);
        let (builder, heard) = heard(
            Group::builder(config(&[("a", &[]), ("b", &[])])).on_tools_changed(
                move |s, changes| {
                    seen.lock()
                        .unwrap()
                        .push(common::describe_changes(s, changes))
                },
            ),
        );
        let group = builder.connect().await;
        changed.lock().unwrap().clear();
        let b = group.client("b").await.unwrap();
        let _ = b
            .transport()
            .send_request("test/exit", Some(json!({"code": 3, "stderr": ["boom"]})))
            .await;
        common::eventually(5, || matches!(group.servers()[1].1, ServerState::Failed(_))).await;
        let ServerState::Failed(why) = &group.servers()[1].1 else {
            unreachable!()
        };
        assert_eq!(
            why,
            "server \"b\": MCP server process exited (code 3): boom"
        );
        assert_eq!(b.state(), stdio_mcp::client::ClientState::Exited);
        assert_eq!(
            tool_names(&group.tools().await),
            ["a__echo", "a__add", "a__countdown"]
        );
        let left = "b: -echo -add -countdown".to_owned();
        common::eventually(5, || changed.lock().unwrap().contains(&left)).await;
        let b_states = states_of(&heard, "b");
        assert!(
            matches!(b_states.last(), Some(ServerState::Failed(_))),
            "{b_states:?}"
        );
        // A call to it says why, whole.
        let e = group
            .call_tool("b__add", json!({"a": 1, "b": 1}))
            .await
            .unwrap_err();
        assert!(
            e.to_string().contains("the group has no tool b__add"),
            "{e}"
        );
        let e = group.client("b").await.unwrap_err();
        assert!(e.to_string().contains("exited (code 3): boom"), "{e}");
        // restart() brings it back.
        group.restart("b").await.unwrap();
        assert!(matches!(group.servers()[1].1, ServerState::Ready(_)));
        assert_eq!(group.tools().await.len(), 6);
        group.close().await;
    });
}

#[test]
fn stop_and_restart_by_name_and_names_that_match_nothing() {
    run(20, async {
        let (builder, heard) = heard(Group::builder(config(&[("a", &[]), ("b", &[])])));
        let group = builder.connect().await;
        let old = group.client("b").await.unwrap().transport().pid();
        group.stop("b").await.unwrap();
        assert_eq!(group.servers()[1].1, ServerState::Closed);
        assert!(dead(old), "stop resolves after the exit");
        assert_eq!(group.tools().await.len(), 3);
        assert_eq!(
            group.client("b").await.unwrap_err().kind(),
            ErrorKind::Closed
        );
        group.restart("b").await.unwrap();
        let new = group.client("b").await.unwrap().transport().pid();
        assert_ne!(old, new);
        let b = states_of(&heard, "b");
        assert_eq!(b[0], ServerState::Starting);
        assert!(matches!(b[1], ServerState::Ready(_)));
        assert_eq!(b[2], ServerState::Closed);
        assert_eq!(b[3], ServerState::Starting);
        assert!(matches!(b[4], ServerState::Ready(_)), "{b:?}");
        for e in [
            group.stop("nope").await.unwrap_err(),
            group.restart("nope").await.unwrap_err(),
        ] {
            assert_eq!(
                e.to_string(),
                "MCP call not sent: the group has no server nope (its servers: a, b)"
            );
        }
        group.close().await;
    });
}

#[test]
fn reload_starts_the_added_closes_the_removed_restarts_the_changed_and_keeps_the_rest() {
    run(30, async {
        let group = Group::builder(config(&[("a", &[]), ("b", &[]), ("d", &[])]))
            .connect()
            .await;
        let pid = |name: &'static str| {
            let group = group.clone();
            async move { group.client(name).await.unwrap().transport().pid() }
        };
        let (a, b, d) = (pid("a").await, pid("b").await, pid("d").await);
        let done = group
            .reload(config(&[("a", &["--paged"]), ("c", &[]), ("d", &[])]))
            .await;
        assert_eq!(
            done,
            [
                ("a".to_owned(), Reloaded::Restarted),
                ("b".to_owned(), Reloaded::Removed),
                ("c".to_owned(), Reloaded::Added),
                ("d".to_owned(), Reloaded::Kept),
            ]
        );
        let names: Vec<String> = group.servers().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["a", "c", "d"]);
        assert!(dead(a) && dead(b));
        assert_ne!(pid("a").await, a);
        assert_eq!(pid("d").await, d);
        assert!(group
            .call_tool("c__echo", json!({"message": "new"}))
            .await
            .is_ok());
        group.close().await;
    });
}

#[test]
fn an_idle_server_is_closed_keeps_its_tools_and_starts_again_on_its_next_call() {
    run(20, async {
        let group = Group::builder(config(&[("a", &[])]))
            .idle_timeout(Duration::from_millis(300))
            .connect()
            .await;
        let first = group.client("a").await.unwrap().transport().pid();
        common::eventually(5, || group.servers()[0].1 == ServerState::Idle).await;
        common::eventually(5, || dead(first)).await;
        assert_eq!(group.tools().await.len(), 3, "its tools stay listed");
        let r = group
            .call_tool("a__add", json!({"a": 1, "b": 2}))
            .await
            .unwrap();
        assert_eq!(r.text(), "3");
        assert_ne!(group.client("a").await.unwrap().transport().pid(), first);
        group.close().await;
    });
}

#[test]
fn each_servers_transport_is_reached_through_the_transport_hook() {
    run(20, async {
        let lines = Arc::new(Mutex::new(Vec::<String>::new()));
        let keep = Arc::clone(&lines);
        let group = Group::builder(config(&[("a", &[]), ("b", &[])]))
            .transport(move |name, transport| {
                let (keep, name) = (Arc::clone(&keep), name.to_owned());
                transport
                    .on_stderr(move |line| keep.lock().unwrap().push(format!("[{name}] {line}")))
            })
            .connect()
            .await;
        let b = group.client("b").await.unwrap();
        b.transport()
            .send_request("test/stderr", Some(json!({"lines": ["hello from b"]})))
            .await
            .unwrap();
        common::eventually(5, || {
            lines
                .lock()
                .unwrap()
                .contains(&"[b] hello from b".to_owned())
        })
        .await;
        group.close().await;
    });
}

#[test]
fn prompts_and_resources_are_merged_and_routed() {
    run(20, async {
        let group = Group::builder(config(&[
            ("one", &["--catalog", "one"]),
            ("two", &["--catalog", "two"]),
        ]))
        .connect()
        .await;
        let prompts: Vec<(String, String)> = group
            .prompts()
            .await
            .into_iter()
            .map(|p| (p.name, p.server))
            .collect();
        assert_eq!(
            prompts,
            [
                ("one__greet".to_owned(), "one".to_owned()),
                ("two__greet".to_owned(), "two".to_owned())
            ]
        );
        let got = group
            .get_prompt("two__greet", json!({"who": "Ada"}))
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&got.messages[0]).unwrap()["content"]["text"],
            "two greets Ada"
        );
        let resources: Vec<(String, String)> = group
            .resources()
            .await
            .into_iter()
            .map(|r| (r.resource.uri, r.server))
            .collect();
        assert_eq!(resources.len(), 4, "{resources:?}");
        // A URI two servers list is read from the first in config order.
        let read = group.read_resource("memo://shared").await.unwrap();
        let text = serde_json::to_value(&read.contents[0]).unwrap()["text"].clone();
        assert_eq!(text, Value::from("memo://shared read from one"));
        let read = group.read_resource("memo://two").await.unwrap();
        let text = serde_json::to_value(&read.contents[0]).unwrap()["text"].clone();
        assert_eq!(text, Value::from("memo://two read from two"));
        let e = group.read_resource("memo://none").await.unwrap_err();
        assert!(e.to_string().contains("no resource memo://none"), "{e}");
        group.close().await;
    });
}

#[test]
fn a_bad_config_entry_fails_alone_in_the_group() {
    run(20, async {
        let text = json!({ "mcpServers": {
            "good": { "command": peer_exe() },
            "typo": { "comand": peer_exe() },
            "flag": { "command": peer_exe(), "disabled": "yes" },
        } })
        .to_string();
        let (builder, heard) = heard(Group::builder(Config::parse(&text).unwrap()));
        let group = builder.connect().await;
        let servers = group.servers();
        let names: Vec<&str> = servers.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["flag", "good", "typo"]);
        assert!(matches!(servers[1].1, ServerState::Ready(_)));
        let ServerState::Failed(why) = &servers[2].1 else {
            panic!("{servers:?}")
        };
        assert!(
            why.contains("unknown key \"comand\" (did you mean \"command\"?)"),
            "{why}"
        );
        let errors = group.errors();
        assert_eq!(errors.len(), 2);
        assert_eq!(errors[0].0, "flag");
        assert!(
            errors[0].1.contains("field disabled: must be a boolean"),
            "{errors:?}"
        );
        assert!(matches!(
            states_of(&heard, "typo")[..],
            [ServerState::Failed(_)]
        ));
        let e = group.restart("typo").await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Config);
        group.close().await;
    });
}

#[test]
fn a_reload_whose_entry_cannot_be_read_fails_that_entry_alone() {
    run(20, async {
        let group = Group::builder(config(&[("a", &[]), ("b", &[])]))
            .connect()
            .await;
        let a = group.client("a").await.unwrap().transport().pid();
        let text = json!({ "mcpServers": {
            "a": { "command": peer_exe(), "args": [] },
            "b": { "command": peer_exe(), "args": "--not-a-list" },
        } })
        .to_string();
        let done = group.reload(Config::parse(&text).unwrap()).await;
        assert_eq!(
            done,
            [
                ("a".to_owned(), Reloaded::Kept),
                ("b".to_owned(), Reloaded::Removed)
            ]
        );
        assert_eq!(group.client("a").await.unwrap().transport().pid(), a);
        let servers = group.servers();
        let ServerState::Failed(why) = &servers[1].1 else {
            panic!("{servers:?}")
        };
        assert!(
            why.contains("field args: must be an array of strings"),
            "{why}"
        );
        assert_eq!(group.errors()[0].0, "b");
        group.close().await;
    });
}

#[test]
fn a_call_longer_than_the_idle_timeout_is_not_cut_short() {
    run(20, async {
        let group = Group::builder(config(&[("t", &["--tasks"])]))
            .idle_timeout(Duration::from_millis(200))
            .connect()
            .await;
        // A task that runs 800 ms, four idle timeouts: in use all along.
        let r = group
            .call_tool("t__job", json!({"polls": 100000, "after_ms": 800}))
            .await
            .unwrap();
        assert!(!r.is_error, "{}", r.text());
        // Once it is over, the idle timeout counts from its end.
        common::eventually(5, || group.servers()[0].1 == ServerState::Idle).await;
        group.close().await;
    });
}
