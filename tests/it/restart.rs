//! A client that outlives its server (`ClientBuilder::restart`): a server that
//! crashes is started again and the next call goes to it; what was in flight
//! fails with the exit error; a legacy server is handshaken again; listen
//! streams are taken back and told of the gap; the policy gives up on a server
//! that fails at every start; `close()` never restarts; under every executor.

use crate::common;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{peer, received, run, within};
use futures::StreamExt;
use serde_json::{json, Value};
use stdio_mcp::client::{
    CallOptions, Client, ClientBuilder, Era, ListenFilter, LoggingLevel, Progress, RestartInfo,
    RestartPolicy, RESTARTED,
};
use stdio_mcp::{Error, TransportBuilder};

/// Restarts at once (1 ms backoff), many allowed.
fn quick() -> RestartPolicy {
    RestartPolicy::new()
        .max_restarts(50)
        .within(Duration::from_secs(60))
        .backoff(Duration::from_millis(1), Duration::from_millis(5))
}

/// A client of the peer (with `flags`) that restarts it at once.
async fn restarting(flags: &[&str], era: Era) -> Client {
    Client::builder(peer(flags))
        .era(era)
        .restart(quick())
        .connect()
        .await
        .unwrap()
}

/// A builder that records every `RestartInfo` it is told.
fn recorded(
    builder: TransportBuilder,
    policy: RestartPolicy,
) -> (ClientBuilder, Arc<Mutex<Vec<RestartInfo>>>) {
    let infos = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&infos);
    let builder = Client::builder(builder)
        .restart(policy)
        .on_restart(move |info| seen.lock().unwrap().push(info.clone()));
    (builder, infos)
}

/// Echoes `{"n": n}` (a modern server's echo carries the `_meta` too: left out).
async fn echo(client: &Client, n: u64) -> Result<Value, Error> {
    let mut echoed = client
        .request("test/echo", Some(json!({ "n": n })), CallOptions::new())
        .await?;
    if let Some(map) = echoed.as_object_mut() {
        map.remove("_meta");
    }
    Ok(echoed)
}

/// Has the server exit with `code` on a call; the call's error.
async fn crash(client: &Client, code: i32) -> Error {
    client
        .request(
            "test/exit",
            Some(json!({ "code": code })),
            CallOptions::new(),
        )
        .await
        .unwrap_err()
}

/// A file name of this test's own, absent at first.
fn marker(name: &str) -> PathBuf {
    let path =
        std::env::temp_dir().join(format!("stdio-mcp-restart-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

fn methods(lines: &[Value]) -> Vec<&str> {
    lines.iter().filter_map(|l| l["method"].as_str()).collect()
}

#[test]
fn a_legacy_server_that_crashes_is_started_again_handshaken_and_gets_the_next_call() {
    run(30, async {
        let (builder, infos) = recorded(peer(&["--crash-after", "3"]), quick());
        let client = builder.era(Era::Legacy).connect().await.unwrap();
        let first = client.transport().pid();
        assert_eq!(echo(&client, 1).await.unwrap(), json!({"n": 1}));
        assert_eq!(echo(&client, 2).await.unwrap(), json!({"n": 2}));
        let crashed = echo(&client, 3).await.unwrap_err();
        assert_eq!(
            crashed.to_string(),
            "server \"stdio-mcp-peer\": MCP server process exited (code 7): peer: crashing on request 3"
        );
        assert_eq!(echo(&client, 4).await.unwrap(), json!({"n": 4}));
        assert_ne!(client.transport().pid(), first, "a new process");
        assert_eq!(client.restarts(), 1);
        {
            let infos = infos.lock().unwrap();
            assert_eq!(infos.len(), 1);
            assert_eq!(infos[0].attempt, 1);
            assert_eq!(infos[0].exit_status.and_then(|s| s.code()), Some(7));
            assert_eq!(infos[0].stderr_tail, ["peer: crashing on request 3"]);
        }
        // Handshaken again, offering the revision agreed at connect, which is kept.
        let lines = received(&client.transport()).await;
        assert_eq!(
            methods(&lines)[..3],
            ["initialize", "notifications/initialized", "test/echo"]
        );
        assert_eq!(lines[0]["params"]["protocolVersion"], "2025-11-25");
        assert_eq!(client.protocol_version(), "2025-11-25");
        assert_eq!(client.era(), Era::Legacy);
        client.close().await.unwrap();
    });
}

#[test]
fn a_restarted_legacy_server_is_asked_again_for_the_log_level_and_subscriptions() {
    run(30, async {
        let client = restarting(&[], Era::Legacy).await;
        client
            .set_logging_level(LoggingLevel::Warning)
            .await
            .unwrap();
        client.subscribe("file:///kept.md").await.unwrap();
        client.subscribe("file:///dropped.md").await.unwrap();
        client.unsubscribe("file:///dropped.md").await.unwrap();
        // A listen stream's resource is asked for again while the stream is open.
        let open = ListenFilter::new().resource("file:///stream.md");
        let _open = client.listen(open).await.unwrap();
        let closed = ListenFilter::new().resource("file:///closed.md");
        drop(client.listen(closed).await.unwrap());
        crash(&client, 1).await;
        assert_eq!(echo(&client, 1).await.unwrap(), json!({"n": 1}));
        let lines = received(&client.transport()).await;
        assert_eq!(
            methods(&lines),
            [
                "initialize",
                "notifications/initialized",
                "logging/setLevel",
                "resources/subscribe",
                "resources/subscribe",
                "test/echo"
            ]
        );
        assert_eq!(lines[2]["params"], json!({"level": "warning"}));
        assert_eq!(lines[3]["params"], json!({"uri": "file:///kept.md"}));
        assert_eq!(lines[4]["params"], json!({"uri": "file:///stream.md"}));
        client.close().await.unwrap();
    });
}

#[test]
fn in_flight_requests_fail_with_the_exit_error_and_are_not_retried() {
    run(30, async {
        let client = restarting(&["--discover", "modern"], Era::Auto).await;
        assert_eq!(client.era(), Era::Modern);
        let slow = client.request("test/sleep", Some(json!({"ms": 20000})), CallOptions::new());
        let crash = async {
            // The slow request is on its way first.
            async_io::Timer::after(Duration::from_millis(50)).await;
            client
                .request(
                    "test/exit",
                    Some(json!({"code": 3, "stderr": ["out of memory"]})),
                    CallOptions::new(),
                )
                .await
        };
        let (slow, crash) = futures::join!(slow, crash);
        for outcome in [slow, crash] {
            assert_eq!(
                outcome.unwrap_err().to_string(),
                "server \"stdio-mcp-peer\": MCP server process exited (code 3): out of memory"
            );
        }
        assert_eq!(echo(&client, 1).await.unwrap(), json!({"n": 1}));
        assert_eq!(client.restarts(), 1);
        // The new process saw only the new call: nothing retried, no handshake,
        // and the era's protocol fields on the request.
        let lines = received(&client.transport()).await;
        assert_eq!(methods(&lines), ["test/echo"]);
        assert_eq!(
            lines[0]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(client.era(), Era::Modern);
        client.close().await.unwrap();
    });
}

#[test]
fn a_crash_while_a_call_streams_progress_fails_that_call_and_the_next_one_works() {
    run(30, async {
        let client = restarting(&[], Era::Legacy).await;
        let steps = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&steps);
        let options = CallOptions::new().on_progress(move |p: &Progress| {
            seen.lock().unwrap().push(p.progress);
        });
        let crashed = client
            .request(
                "test/progress",
                Some(json!({"steps": 5, "every_ms": 20, "crash_at": 3})),
                options,
            )
            .await
            .unwrap_err();
        assert_eq!(
            crashed.to_string(),
            "server \"stdio-mcp-peer\": MCP server process exited (code 5): peer: crashing in the middle of a call"
        );
        assert_eq!(*steps.lock().unwrap(), [1.0, 2.0]);
        let steps_again = Arc::new(Mutex::new(0));
        let counted = Arc::clone(&steps_again);
        let done = client
            .request(
                "test/progress",
                Some(json!({"steps": 2})),
                CallOptions::new().on_progress(move |_| *counted.lock().unwrap() += 1),
            )
            .await
            .unwrap();
        assert_eq!(done["steps"], 2);
        assert_eq!(*steps_again.lock().unwrap(), 2);
        assert_eq!(client.restarts(), 1);
        client.close().await.unwrap();
    });
}

#[test]
fn a_server_that_fails_at_every_start_after_the_first_is_given_up_with_the_last_exit_error() {
    run(30, async {
        let once = marker("every-start");
        let once_arg = once.to_string_lossy().into_owned();
        let policy = RestartPolicy::new()
            .max_restarts(3)
            .within(Duration::from_secs(60))
            .backoff(Duration::from_millis(5), Duration::from_millis(20));
        let (builder, infos) = recorded(peer(&["--crash-on-restart", &once_arg]), policy);
        let client = builder.era(Era::Legacy).connect().await.unwrap();
        let crashed = client
            .request("test/exit", Some(json!({"code": 4})), CallOptions::new())
            .await
            .unwrap_err();
        assert_eq!(
            crashed.to_string(),
            "server \"stdio-mcp-peer\": MCP server process exited (code 4)"
        );
        // Three restarts, each dying at start; then no more, and calls fail
        // with the last exit (its code and stderr), not with a restart loop.
        let given_up = echo(&client, 1).await.unwrap_err();
        assert_eq!(
            given_up.to_string(),
            "server \"stdio-mcp-peer\": MCP server exited again after 3 restarts within 60s, \
             the restart policy's limit: it is not restarted any more; its last exit: \
             MCP server process exited (code 9): peer: started before, refusing to start again"
        );
        assert_eq!(given_up.kind(), stdio_mcp::ErrorKind::GaveUp);
        assert_eq!(client.state(), stdio_mcp::client::ClientState::GaveUp);
        assert_eq!(client.restarts(), 3);
        let attempts: Vec<(u32, Option<i32>)> = infos
            .lock()
            .unwrap()
            .iter()
            .map(|i| (i.attempt, i.exit_status.and_then(|s| s.code())))
            .collect();
        assert_eq!(attempts, [(1, Some(4)), (2, Some(9)), (3, Some(9))]);
        // Still given up later, at once.
        async_io::Timer::after(Duration::from_millis(100)).await;
        let again = within(2, echo(&client, 2)).await.unwrap_err();
        assert_eq!(again.to_string(), given_up.to_string());
        assert_eq!(client.restarts(), 3);
        client.close().await.unwrap();
        let _ = std::fs::remove_file(once);
    });
}

#[test]
fn a_window_that_passed_starts_the_count_again() {
    run(30, async {
        let policy = RestartPolicy::new()
            .max_restarts(1)
            .within(Duration::from_millis(300))
            .backoff(Duration::from_millis(1), Duration::from_millis(1));
        let (builder, infos) = recorded(peer(&["--discover", "modern"]), policy);
        let client = builder.connect().await.unwrap();
        for round in 0..3u64 {
            crash(&client, 1).await;
            assert_eq!(echo(&client, round).await.unwrap(), json!({"n": round}));
            // Longer than the window: the next crash is a first restart again.
            async_io::Timer::after(Duration::from_millis(400)).await;
        }
        let attempts: Vec<u32> = infos.lock().unwrap().iter().map(|i| i.attempt).collect();
        assert_eq!(attempts, [1, 1, 1]);
        assert_eq!(client.restarts(), 3);
        client.close().await.unwrap();
    });
}

#[test]
fn close_never_restarts_nor_does_closing_the_transport() {
    run(30, async {
        let (builder, infos) = recorded(peer(&[]), quick());
        let client = builder.era(Era::Legacy).connect().await.unwrap();
        let pid = client.transport().pid();
        client.close().await.unwrap();
        async_io::Timer::after(Duration::from_millis(100)).await;
        assert_eq!(client.restarts(), 0);
        assert_eq!(client.transport().pid(), pid);
        let closed = echo(&client, 1).await.unwrap_err();
        assert!(matches!(closed.inner(), Error::Closed), "{closed:?}");
        assert_eq!(client.state(), stdio_mcp::client::ClientState::Closed);

        let client = restarting(&[], Era::Legacy).await;
        client.transport().close().await.unwrap();
        async_io::Timer::after(Duration::from_millis(100)).await;
        assert_eq!(client.restarts(), 0);
        let closed = echo(&client, 1).await.unwrap_err();
        assert!(matches!(closed.inner(), Error::Closed), "{closed:?}");
        assert!(infos.lock().unwrap().is_empty());
    });
}

#[test]
fn close_during_the_backoff_ends_it_without_a_restart() {
    run(30, async {
        let policy =
            RestartPolicy::new().backoff(Duration::from_millis(600), Duration::from_secs(1));
        let (builder, infos) = recorded(peer(&[]), policy);
        let client = builder.era(Era::Legacy).connect().await.unwrap();
        crash(&client, 2).await;
        // In the backoff now: close resolves at once and no process follows.
        within(1, client.close()).await.unwrap();
        async_io::Timer::after(Duration::from_millis(800)).await;
        assert_eq!(client.restarts(), 0);
        assert!(infos.lock().unwrap().is_empty());
        let closed = echo(&client, 1).await.unwrap_err();
        assert_eq!(closed.kind(), stdio_mcp::ErrorKind::Closed);
    });
}

#[test]
fn dropping_the_client_during_the_backoff_starts_nothing() {
    run(30, async {
        let policy =
            RestartPolicy::new().backoff(Duration::from_millis(300), Duration::from_secs(1));
        let (builder, infos) = recorded(peer(&[]), policy);
        let client = builder.era(Era::Legacy).connect().await.unwrap();
        crash(&client, 2).await;
        drop(client);
        async_io::Timer::after(Duration::from_millis(600)).await;
        assert!(
            infos.lock().unwrap().is_empty(),
            "no restart for a dropped client"
        );
    });
}

#[test]
fn a_modern_listen_stream_is_taken_back_and_told_of_the_gap() {
    run(30, async {
        let client = restarting(&["--discover", "modern"], Era::Auto).await;
        let mut changes = client
            .listen(ListenFilter::new().tools_list_changed())
            .await
            .unwrap();
        crash(&client, 1).await;
        let gap = within(10, changes.next()).await.expect("the gap");
        assert_eq!(gap.method, RESTARTED);
        assert_eq!(gap.params, Some(json!({"restarts": 1})));
        // The new process has the subscription: its changes reach the same stream.
        let sent = client
            .request(
                "test/changed",
                Some(json!({"what": "tools"})),
                CallOptions::new(),
            )
            .await
            .unwrap();
        assert_eq!(sent, json!({"sent": 1}));
        let change = within(10, changes.next()).await.expect("a change");
        assert_eq!(change.method, "notifications/tools/list_changed");
        drop(changes);
        client.close().await.unwrap();
    });
}

#[test]
fn a_legacy_listen_stream_resubscribes_its_resources_after_a_restart() {
    run(30, async {
        let client = restarting(&[], Era::Legacy).await;
        let mut updates = client
            .listen(ListenFilter::new().resource("file:///notes.md"))
            .await
            .unwrap();
        crash(&client, 1).await;
        let gap = within(10, updates.next()).await.expect("the gap");
        assert_eq!(gap.method, RESTARTED);
        let lines = received(&client.transport()).await;
        let subscribe = lines
            .iter()
            .find(|l| l["method"] == "resources/subscribe")
            .expect("subscribed again");
        assert_eq!(subscribe["params"]["uri"], "file:///notes.md");
        client
            .request(
                "test/changed",
                Some(json!({"what": "uri", "uri": "file:///notes.md"})),
                CallOptions::new(),
            )
            .await
            .unwrap();
        let update = within(10, updates.next()).await.expect("an update");
        assert_eq!(update.method, "notifications/resources/updated");
        // Closing the client ends the stream.
        client.close().await.unwrap();
        assert!(within(5, updates.next()).await.is_none());
    });
}

/// Crash, restart, call again, close: the scenario of the executor matrix.
async fn restart_scenario(
    connect: impl Fn(ClientBuilder) -> futures::future::BoxFuture<'static, Result<Client, Error>>,
) {
    within(30, async {
        for flags in [
            &["--crash-after", "2"][..],
            &["--crash-after", "2", "--discover", "modern"],
        ] {
            let client = connect(Client::builder(peer(flags)).restart(quick()))
                .await
                .unwrap();
            assert_eq!(echo(&client, 1).await.unwrap(), json!({"n": 1}));
            let crashed = echo(&client, 2).await.unwrap_err();
            assert!(
                matches!(crashed.inner(), Error::Exited { .. }),
                "{crashed:?}"
            );
            assert_eq!(echo(&client, 3).await.unwrap(), json!({"n": 3}));
            assert_eq!(client.restarts(), 1);
            client.close().await.unwrap();
        }
    })
    .await;
}

#[test]
fn restarts_with_block_on_and_the_background_thread() {
    futures::executor::block_on(restart_scenario(|b| Box::pin(b.connect())));
}

#[test]
fn restarts_with_smol_running_the_driver() {
    smol::block_on(restart_scenario(|b| {
        Box::pin(b.connect_with(|driver| smol::spawn(driver).detach()))
    }));
}

#[async_std::test]
async fn restarts_with_async_std_running_the_driver() {
    restart_scenario(|b| {
        Box::pin(b.connect_with(|driver| {
            async_std::task::spawn(driver);
        }))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restarts_with_tokio_running_the_driver() {
    restart_scenario(|b| {
        Box::pin(b.connect_with(|driver| {
            tokio::spawn(driver);
        }))
    })
    .await;
}

#[tokio::test(flavor = "current_thread")]
async fn restarts_with_tokio_and_the_background_thread() {
    restart_scenario(|b| Box::pin(b.connect())).await;
}

#[test]
fn a_dropped_driver_fails_calls_instead_of_leaving_them_waiting_for_a_restart() {
    smol::block_on(within(30, async {
        let mut task = None;
        let client = Client::builder(peer(&[]))
            .era(Era::Legacy)
            .restart(quick())
            .connect_with(|driver| task = Some(smol::spawn(driver)))
            .await
            .unwrap();
        assert_eq!(echo(&client, 1).await.unwrap(), json!({"n": 1}));
        // The executor lets go of the driver: the server is killed, and no
        // supervisor is left to start it again.
        drop(task.take());
        let e = echo(&client, 2).await.unwrap_err();
        assert!(
            matches!(e.inner(), Error::LeftLoop | Error::NotAlive),
            "{e:?}"
        );
        assert!(e.to_string().contains("keep the driver"), "{e}");
        assert_eq!(client.restarts(), 0);
        // Later calls fail at once too.
        assert!(within(2, echo(&client, 3)).await.is_err());
    }));
}

#[test]
fn concurrent_callers_through_repeated_crashes_never_hang_and_only_see_exit_errors() {
    run(60, async {
        for (flags, era) in [
            (&["--crash-after", "7"][..], Era::Legacy),
            (
                &["--crash-after", "7", "--discover", "modern"][..],
                Era::Modern,
            ),
        ] {
            callers_through_crashes(restarting(flags, era).await).await;
        }
    });
}

/// Eight callers, forty calls each, against a server that crashes on every
/// seventh request.
async fn callers_through_crashes(client: Client) {
    {
        let callers = (0..8u64).map(|caller| {
            let client = &client;
            async move {
                let (mut ok, mut lost) = (0u32, 0u32);
                for i in 0..40 {
                    match echo(client, caller * 1000 + i).await {
                        Ok(v) => {
                            assert_eq!(v, json!({ "n": caller * 1000 + i }));
                            ok += 1;
                        }
                        Err(error) => match error.inner() {
                            Error::Exited { status, .. } => {
                                assert_eq!(status.code(), Some(7));
                                lost += 1;
                            }
                            other => panic!("caller {caller}: {other:?}"),
                        },
                    }
                }
                (ok, lost)
            }
        });
        let outcomes = futures::future::join_all(callers).await;
        let ok: u32 = outcomes.iter().map(|o| o.0).sum();
        let lost: u32 = outcomes.iter().map(|o| o.1).sum();
        assert_eq!(ok + lost, 320);
        // Each process answers at most six requests (the seventh crashes it,
        // with whatever else was in flight), and each crash was restarted.
        let restarts = client.restarts();
        assert!(
            u64::from(ok) <= 6 * (restarts + 1),
            "{ok} answers, {restarts} restarts"
        );
        assert!(
            u64::from(lost) >= restarts,
            "{lost} lost, {restarts} restarts"
        );
        // Still serving (this call may be the one that crashes a process: the
        // next one then goes to its successor).
        if echo(&client, 9).await.is_err() {
            assert_eq!(echo(&client, 10).await.unwrap(), json!({"n": 10}));
        }
        client.close().await.unwrap();
    }
}
