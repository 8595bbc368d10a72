//! A group's catalog cache and its lazy starts, and `on_tools_changed`: an
//! idle server costs no process until its first call, which starts it once;
//! a stale or broken cache means ordinary starts; a changed tool list is
//! reported.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{peer_exe, run};
use serde_json::{json, Value};
use stdio_mcp::client::{ClientBuilder, Era, RestartPolicy};
use stdio_mcp::config::Config;
use stdio_mcp::group::{Group, ServerState};
use stdio_mcp::ErrorKind;

/// A folder of the test's own, emptied first.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("stdio-mcp-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A config of peers `(name, extra args)`, each logging its starts to
/// `<dir>/<name>.starts`.
fn config(dir: &Path, servers: &[(&str, &[&str])]) -> Config {
    let mut entries = serde_json::Map::new();
    for (name, extra) in servers {
        let log = dir.join(format!("{name}.starts"));
        let mut args = vec![json!("--log-start"), json!(log.display().to_string())];
        args.extend(extra.iter().map(|a| json!(a)));
        entries.insert(
            (*name).to_owned(),
            json!({ "command": peer_exe(), "args": args }),
        );
    }
    Config::parse(&json!({ "mcpServers": entries }).to_string()).unwrap()
}

fn strs(words: &[String]) -> Vec<&str> {
    words.iter().map(String::as_str).collect()
}

fn starts(dir: &Path, name: &str) -> usize {
    std::fs::read_to_string(dir.join(format!("{name}.starts")))
        .map(|log| log.lines().count())
        .unwrap_or(0)
}

fn names(tools: &[stdio_mcp::group::GroupTool]) -> Vec<String> {
    let mut names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
    names.sort();
    names
}

const TWO: &[(&str, &[&str])] = &[("a", &[]), ("m", &["--discover", "modern"])];

/// Connects a group of `servers` with its cache in `dir`, lists its tools
/// (which writes the cache), and closes it.
async fn warm(dir: &Path, servers: &[(&str, &[&str])]) -> Vec<String> {
    let group = Group::builder(config(dir, servers))
        .catalog_cache(dir.join("catalog.json"))
        .connect()
        .await;
    let tools = names(&group.tools().await);
    group.close().await;
    tools
}

#[test]
fn a_warm_cache_starts_nothing_until_a_call_and_then_starts_that_server_once() {
    let dir = scratch("cache-hit");
    run(30, async {
        let listed = warm(&dir, TWO).await;
        assert!(listed.contains(&"a__add".to_owned()), "{listed:?}");
        assert!(listed.contains(&"m__add".to_owned()), "{listed:?}");
        assert_eq!((starts(&dir, "a"), starts(&dir, "m")), (1, 1));

        let group = Group::builder(config(&dir, TWO))
            .catalog_cache(dir.join("catalog.json"))
            .connect()
            .await;
        assert_eq!(
            group.servers(),
            vec![
                ("a".into(), ServerState::Idle),
                ("m".into(), ServerState::Idle)
            ]
        );
        assert_eq!(names(&group.tools().await), listed);
        assert_eq!(
            (starts(&dir, "a"), starts(&dir, "m")),
            (1, 1),
            "nothing started"
        );

        // Concurrent first calls start the server once.
        let calls = (0..6).map(|i| group.call_tool("m__add", json!({"a": i, "b": 1})));
        let results = futures::future::join_all(calls).await;
        for (i, result) in results.into_iter().enumerate() {
            assert_eq!(result.unwrap().text(), (i + 1).to_string());
        }
        assert_eq!((starts(&dir, "a"), starts(&dir, "m")), (1, 2));
        assert_eq!(group.servers()[0].1, ServerState::Idle);
        assert_eq!(group.servers()[1].1, ServerState::Ready(Era::Modern));
        // The legacy one, started by `client()`, skips the probe it needed once.
        let a = group.client("a").await.unwrap();
        assert_eq!(a.era(), Era::Legacy);
        let lines = common::received(&a.transport()).await;
        assert!(
            lines.iter().all(|l| l["method"] != "server/discover"),
            "{lines:?}"
        );
        group.close().await;
        assert_eq!(group.servers()[0].1, ServerState::Closed);
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_changed_command_line_or_a_broken_file_means_an_ordinary_start() {
    let dir = scratch("cache-stale");
    run(30, async {
        warm(&dir, TWO).await;
        // "m" now runs with another argument: its entry no longer fits.
        let changed: &[(&str, &[&str])] =
            &[("a", &[]), ("m", &["--discover", "modern", "--paged"])];
        let group = Group::builder(config(&dir, changed))
            .catalog_cache(dir.join("catalog.json"))
            .connect()
            .await;
        assert_eq!(group.servers()[0].1, ServerState::Idle);
        assert_eq!(group.servers()[1].1, ServerState::Ready(Era::Modern));
        group.close().await;
        assert_eq!((starts(&dir, "a"), starts(&dir, "m")), (1, 2));

        for broken in ["{\"stdio-mcp catalog\": 1, \"serv", "[]", ""] {
            std::fs::write(dir.join("catalog.json"), broken).unwrap();
            let group = Group::builder(config(&dir, TWO))
                .catalog_cache(dir.join("catalog.json"))
                .connect()
                .await;
            assert!(
                group
                    .servers()
                    .iter()
                    .all(|(_, s)| matches!(s, ServerState::Ready(_))),
                "{:?}",
                group.servers()
            );
            assert_eq!(
                group
                    .call_tool("a__add", json!({"a": 2, "b": 2}))
                    .await
                    .unwrap()
                    .text(),
                "4"
            );
            group.close().await;
            // Rewritten whole: the next group finds every server in it.
            let text = std::fs::read_to_string(dir.join("catalog.json")).unwrap();
            let file: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(file["servers"].as_object().unwrap().len(), 2, "{text}");
        }
        // No temporary file is left beside the cache.
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        assert_eq!(files, ["a.starts", "catalog.json", "m.starts"]);
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_cached_tool_the_server_no_longer_has_fails_clearly_and_is_reported() {
    let dir = scratch("cache-gone");
    run(30, async {
        warm(&dir, &[("a", &[])]).await;
        // The cache says "a" also had a tool it does not have.
        let path = dir.join("catalog.json");
        let mut file: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        file["servers"]["a"]["tools"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "gone", "inputSchema": {"type": "object"}}));
        std::fs::write(&path, file.to_string()).unwrap();

        let changed = Arc::new(Mutex::new(Vec::<String>::new()));
        let seen = Arc::clone(&changed);
        let group = Group::builder(config(&dir, &[("a", &[])]))
            .catalog_cache(&path)
            .on_tools_changed(move |server, changes| {
                seen.lock()
                    .unwrap()
                    .push(common::describe_changes(server, changes))
            })
            .connect()
            .await;
        assert!(names(&group.tools().await).contains(&"a__gone".to_owned()));
        let e = group.call_tool("a__gone", json!({})).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArguments);
        assert_eq!(
            e.to_string(),
            "MCP call not sent: the group has no tool a__gone any more: server \"a\" no longer offers gone"
        );
        assert_eq!(*changed.lock().unwrap(), ["a: -gone"]);
        assert!(!names(&group.tools().await).contains(&"a__gone".to_owned()));
        group.close().await;
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("\"gone\""), "{text}");
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn on_tools_changed_hears_list_changed_in_both_eras_and_restarts() {
    let dir = scratch("tools-changed");
    run(30, async {
        let changed = Arc::new(Mutex::new(Vec::<String>::new()));
        let seen = Arc::clone(&changed);
        let tools = |name: &str| dir.join(format!("{name}.tools.json"));
        for name in ["a", "m", "r"] {
            common::write_tools(&tools(name), &[("t", "the first")]);
        }
        let (a, m, r) = (tools("a"), tools("m"), tools("r"));
        let args = |file: &Path| vec!["--tools-file".to_owned(), file.display().to_string()];
        let (a_args, m_args, mut r_args) = (args(&a), args(&m), args(&r));
        let mut m_args = m_args;
        m_args.extend(["--discover".to_owned(), "modern".to_owned()]);
        r_args.extend(["--crash-after".to_owned(), "3".to_owned()]);
        let (a_args, m_args, r_args) = (strs(&a_args), strs(&m_args), strs(&r_args));
        let servers: &[(&str, &[&str])] = &[("a", &a_args), ("m", &m_args), ("r", &r_args)];
        let group = Group::builder(config(&dir, servers))
            .client(|name, client: ClientBuilder| {
                if name == "r" {
                    client.restart(
                        RestartPolicy::new()
                            .backoff(Duration::from_millis(10), Duration::from_millis(10)),
                    )
                } else {
                    client
                }
            })
            .on_tools_changed(move |server, changes| {
                seen.lock()
                    .unwrap()
                    .push(common::describe_changes(server, changes))
            })
            .connect()
            .await;
        // Ready within connect: the first listings are the baseline.
        assert!(changed.lock().unwrap().is_empty(), "{changed:?}");
        // The modern server is told to send list_changed only once it is listened to.
        group.tools().await;
        // A list_changed with nothing changed reports nothing; the group
        // lists again on its own, so the change is heard without a call.
        common::announce_tools_changed(&group.client("a").await.unwrap()).await;
        common::write_tools(&a, &[("t", "the first"), ("u", "new")]);
        common::write_tools(&m, &[("t", "the second")]);
        for server in ["a", "m"] {
            common::announce_tools_changed(&group.client(server).await.unwrap()).await;
        }
        // "r" exits on its third request, and is started again.
        common::write_tools(&r, &[]);
        let client = group.client("r").await.unwrap();
        while client.restarts() == 0 {
            let _ = client.ping().await;
        }
        common::eventually(10, || changed.lock().unwrap().len() == 3).await;
        let mut heard = changed.lock().unwrap().clone();
        heard.sort();
        assert_eq!(heard, ["a: +u", "m: ~t(description)", "r: -t"]);
        assert_eq!(starts(&dir, "r"), 2);
        group.close().await;
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn closing_a_group_with_idle_servers_starts_nothing_and_calls_then_fail() {
    let dir = scratch("cache-close");
    run(30, async {
        warm(&dir, &[("a", &[])]).await;
        let group = Group::builder(config(&dir, &[("a", &[])]))
            .catalog_cache(dir.join("catalog.json"))
            .connect()
            .await;
        group.close().await;
        let e = group
            .call_tool("a__add", json!({"a": 1, "b": 1}))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Closed);
        assert!(e.to_string().contains("\"a\""), "{e}");
        assert_eq!(starts(&dir, "a"), 1);
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

async fn lazily_started_call(dir: PathBuf) {
    warm(&dir, &[("p", &[])]).await;
    let group = Group::builder(config(&dir, &[("p", &[])]))
        .catalog_cache(dir.join("catalog.json"))
        .connect()
        .await;
    assert_eq!(group.servers()[0].1, ServerState::Idle);
    let r = group
        .call_tool("p__add", json!({"a": 1, "b": 2}))
        .await
        .unwrap();
    assert_eq!(r.text(), "3");
    assert_eq!(starts(&dir, "p"), 2);
    group.close().await;
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn lazy_starts_under_smol() {
    smol::block_on(common::within(
        20,
        lazily_started_call(scratch("lazy-smol")),
    ));
}

#[async_std::test]
async fn lazy_starts_under_async_std() {
    common::within(20, lazily_started_call(scratch("lazy-async-std"))).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lazy_starts_under_tokio() {
    // Spawned, so the group's futures must be `Send`.
    let call = tokio::spawn(lazily_started_call(scratch("lazy-tokio")));
    common::within(20, call).await.unwrap();
}
