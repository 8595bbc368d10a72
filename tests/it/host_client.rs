//! What a host needs of one client: no call that can hang, errors
//! that name their server and say what kind they are, a restart policy that
//! says when it gave up, connect failures that say why, and the small API a
//! newcomer reaches for (Clone, close's exit status, on_notification).

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{cancels, peer, received, run, within};
use serde_json::{json, Value};
use stdio_mcp::client::{CallOptions, Client, ClientBuilder, ClientState, Era, RestartPolicy};
use stdio_mcp::config::Config;
use stdio_mcp::{Error, ErrorKind, TransportBuilder};

fn modern() -> TransportBuilder {
    peer(&["--discover", "modern"])
}

/// The methods of the lines the peer read, in order.
fn methods(lines: &[Value]) -> Vec<&str> {
    lines.iter().filter_map(|l| l["method"].as_str()).collect()
}

#[test]
fn params_and_arguments_that_are_not_objects_fail_locally_in_both_eras() {
    run(15, async {
        for server in [peer(&[]), modern()] {
            let client = Client::connect(server).await.unwrap();
            let era = client.era();
            // server-everything drops such a request: before, this waited forever.
            let e = client
                .request("tools/list", Some(json!("str")), CallOptions::new())
                .await
                .unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArguments, "{era}");
            assert_eq!(
                e.to_string(),
                "server \"stdio-mcp-peer\": MCP call not sent: the params of tools/list \
                 must be a JSON object, not \"str\""
            );
            let e = client.call_tool("echo", json!([1, 2])).await.unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArguments, "{era}");
            assert!(
                e.to_string()
                    .ends_with("the arguments of tool echo must be a JSON object, not [1,2]"),
                "{e}"
            );
            // Nothing of either reached the server.
            let lines = received(&client.transport()).await;
            let sent = methods(&lines);
            assert!(!sent.contains(&"tools/list"), "{era}: {sent:?}");
            assert!(!sent.contains(&"tools/call"), "{era}: {sent:?}");
            // Null arguments are no arguments: the key is left out.
            client.call_tool("countdown", Value::Null).await.unwrap();
            let lines = received(&client.transport()).await;
            let call = lines.iter().find(|l| l["method"] == "tools/call").unwrap();
            assert!(call["params"].get("arguments").is_none(), "{call}");
            client.close().await.unwrap();
        }
    });
}

/// A request the server never answers fails at the client's limit, with the
/// same cancel on the wire as any timeout; then the client goes on.
async fn dropped_request_is_bounded(builder: ClientBuilder) {
    within(20, async {
        let client = builder
            .request_timeout(Some(Duration::from_millis(300)))
            .connect()
            .await
            .unwrap();
        let started = Instant::now();
        let e = client
            .request("test/never", None, CallOptions::new())
            .await
            .unwrap_err();
        assert!(started.elapsed() >= Duration::from_millis(300));
        assert_eq!(e.kind(), ErrorKind::Timeout);
        assert_eq!(
            e.to_string(),
            "server \"stdio-mcp-peer\": MCP stdio request test/never timed out after 0.3s"
        );
        // A call's own limit wins over the client's.
        let e = client
            .request(
                "test/never",
                None,
                CallOptions::new().timeout(Duration::from_millis(50)),
            )
            .await
            .unwrap_err();
        assert!(e.to_string().ends_with("timed out after 0.05s"), "{e}");
        let lines = received(&client.transport()).await;
        let cancelled = cancels(&lines);
        assert_eq!(cancelled.len(), 2);
        assert_eq!(cancelled[0]["params"]["reason"], "timed out after 0.3s");
        assert_eq!(client.state(), ClientState::Ready);
        assert_eq!(
            client
                .call_tool("add", json!({"a": 1, "b": 2}))
                .await
                .unwrap()
                .text(),
            "3"
        );
        client.close().await.unwrap();
    })
    .await;
}

#[test]
fn a_dropped_request_is_bounded_with_block_on_and_the_background_thread() {
    futures::executor::block_on(async {
        dropped_request_is_bounded(Client::builder(peer(&[]))).await;
        dropped_request_is_bounded(Client::builder(modern())).await;
    });
}

/// The client's limit, kept by a driver that runs on the caller's executor.
async fn times_out_on_its_driver(connect: impl FnOnce(ClientBuilder) -> Connecting) {
    let client =
        connect(Client::builder(peer(&[])).request_timeout(Some(Duration::from_millis(200))))
            .await
            .unwrap();
    let e = within(5, client.request("test/never", None, CallOptions::new()))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    client.close().await.unwrap();
}

type Connecting = std::pin::Pin<Box<dyn std::future::Future<Output = Result<Client, Error>>>>;

#[test]
fn a_dropped_request_is_bounded_with_smol_running_the_driver() {
    smol::block_on(times_out_on_its_driver(|b| {
        Box::pin(b.connect_with(|driver| smol::spawn(driver).detach()))
    }));
}

#[async_std::test]
async fn a_dropped_request_is_bounded_with_async_std_running_the_driver() {
    times_out_on_its_driver(|b| {
        Box::pin(b.connect_with(|driver| {
            async_std::task::spawn(driver);
        }))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_request_is_bounded_with_tokio_running_the_driver() {
    times_out_on_its_driver(|b| {
        Box::pin(b.connect_with(|driver| {
            tokio::spawn(driver);
        }))
    })
    .await;
}

#[test]
fn progress_restarts_the_clients_limit_and_none_means_no_limit() {
    run(15, async {
        let client = Client::builder(peer(&[]))
            .request_timeout(Some(Duration::from_millis(300)))
            .connect()
            .await
            .unwrap();
        // Ten steps 100 ms apart: 1 s in all, never 300 ms without progress.
        let steps = Arc::new(Mutex::new(0));
        let seen = Arc::clone(&steps);
        let params = json!({"steps": 10, "every_ms": 100});
        client
            .request(
                "test/progress",
                Some(params.clone()),
                CallOptions::new().on_progress(move |_| *seen.lock().unwrap() += 1),
            )
            .await
            .unwrap();
        assert_eq!(*steps.lock().unwrap(), 10);
        // Without hearing of its progress the call has the plain limit.
        let e = client
            .request("test/progress", Some(params), CallOptions::new())
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Timeout);
        client.close().await.unwrap();

        let unlimited = Client::builder(peer(&[]))
            .request_timeout(None)
            .connect()
            .await
            .unwrap();
        let waiting = unlimited.request("test/never", None, CallOptions::new());
        let outcome = futures::future::select(
            Box::pin(waiting),
            async_io::Timer::after(Duration::from_millis(600)),
        )
        .await;
        assert!(
            matches!(outcome, futures::future::Either::Right(_)),
            "no limit"
        );
        unlimited.close().await.unwrap();
    });
}

#[test]
fn errors_name_the_server_by_its_config_name_else_its_program() {
    run(15, async {
        let config = Config::parse(&format!(
            r#"{{"mcpServers": {{
                "crashing": {{"command": {peer:?}, "args": ["--initialize", "exit"]}},
                "nowhere": {{"command": {peer:?}, "cwd": "/no/such/dir/for/stdio-mcp"}},
                "missing": {{"command": "stdio-mcp-no-such-program"}}
            }}}}"#,
            peer = common::peer_exe()
        ))
        .unwrap();
        let connect = |name: &str| {
            let server = config.server(name).unwrap().builder();
            Client::builder(server).era(Era::Legacy).connect()
        };
        let e = connect("crashing").await.unwrap_err();
        assert_eq!(e.server(), Some("crashing"));
        assert_eq!(e.kind(), ErrorKind::Exited);
        assert!(
            e.to_string()
                .starts_with("server \"crashing\": MCP server process exited"),
            "{e}"
        );
        let e = connect("nowhere").await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Start);
        assert!(e
            .to_string()
            .starts_with("server \"nowhere\": MCP server failed to start"));
        assert!(
            e.to_string().ends_with("(the config entry's \"cwd\")"),
            "names the field: {e}"
        );
        let e = connect("missing").await.unwrap_err();
        assert_eq!(
            e.to_string(),
            "server \"missing\": MCP server failed to start: cannot run \
             stdio-mcp-no-such-program: no such program (the config entry's \"command\")"
        );
        // Without a config: the program's file name, or the name given.
        let e = Client::builder(peer(&["--initialize", "exit"]))
            .era(Era::Legacy)
            .connect()
            .await
            .unwrap_err();
        assert_eq!(e.server(), Some("stdio-mcp-peer"));
        let e = Client::builder(peer(&["--initialize", "exit"]))
            .era(Era::Legacy)
            .name("tools")
            .connect()
            .await
            .unwrap_err();
        assert_eq!(e.server(), Some("tools"));
        // A config error is an Error too.
        let bad: Result<Config, Error> = Config::parse("{").map_err(Error::from);
        assert_eq!(bad.unwrap_err().kind(), ErrorKind::Config);
    });
}

#[test]
fn state_tells_a_restart_from_a_policy_that_gave_up() {
    run(20, async {
        let marker = std::env::temp_dir().join(format!("stdio-mcp-gaveup-{}", std::process::id()));
        let _ = std::fs::remove_file(&marker);
        let marker_arg = marker.to_string_lossy().into_owned();
        let client = Client::builder(peer(&["--crash-on-restart", &marker_arg]))
            .era(Era::Legacy)
            .restart(
                RestartPolicy::new()
                    .max_restarts(1)
                    .backoff(Duration::from_millis(400), Duration::from_millis(400)),
            )
            .connect()
            .await
            .unwrap();
        assert_eq!(client.state(), ClientState::Ready);
        let crashed = client
            .request("test/exit", Some(json!({"code": 4})), CallOptions::new())
            .await
            .unwrap_err();
        // This exit will be restarted: the error is the exit's, the state says so.
        assert_eq!(crashed.kind(), ErrorKind::Exited);
        common::eventually(2, || client.state() == ClientState::Restarting).await;
        // The restarted server refuses to start; the policy allows one restart.
        common::eventually(5, || client.state() == ClientState::GaveUp).await;
        let gave_up = client.ping().await.unwrap_err();
        assert_eq!(gave_up.kind(), ErrorKind::GaveUp);
        assert_ne!(gave_up.to_string(), crashed.to_string());
        assert!(
            gave_up
                .to_string()
                .contains("after 1 restarts within 60s, the restart policy's limit"),
            "{gave_up}"
        );
        assert!(
            gave_up.to_string().ends_with("refusing to start again"),
            "{gave_up}"
        );
        client.close().await.unwrap();
        assert_eq!(client.state(), ClientState::Closed);
        let _ = std::fs::remove_file(&marker);
    });
}

#[test]
fn a_server_that_writes_only_noise_gets_a_diagnosis() {
    run(15, async {
        // A banner and then silence, to the probe and to initialize alike.
        let e = Client::builder(peer(&[
            "--banner",
            "--discover",
            "silent",
            "--initialize",
            "never",
        ]))
        .probe_timeout(Duration::from_millis(200))
        .handshake_timeout(Duration::from_millis(300))
        .connect()
        .await
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Timeout);
        let text = e.to_string();
        assert!(
            text.starts_with(
                "server \"stdio-mcp-peer\": MCP server did not answer initialize within 0.3s, \
                 after a server/discover probe that got no answer within 0.2s ("
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "; it wrote 1 stdout line that is not JSON-RPC, the first: \
                 \"stdio-mcp-peer starting (this line is not JSON)\"; "
            ),
            "{text}"
        );
        assert!(text.ends_with("with Era::Legacy"), "{text}");
        // Era::Modern against it: the probe is what timed out.
        let e = Client::builder(peer(&["--discover", "silent"]))
            .era(Era::Modern)
            .probe_timeout(Duration::from_millis(200))
            .connect()
            .await
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("did not answer server/discover within 0.2s"),
            "{e}"
        );
    });
}

#[test]
fn a_legacy_server_that_ignores_the_probe_is_probed_once_per_process() {
    run(15, async {
        // A command line of its own: the memory is per command line.
        let server = || peer(&["--discover", "silent", "--watchdog", "59"]);
        let connect = || {
            Client::builder(server())
                .probe_timeout(Duration::from_millis(400))
                .connect()
        };
        let started = Instant::now();
        let first = connect().await.unwrap();
        assert!(started.elapsed() >= Duration::from_millis(400));
        assert_eq!(
            methods(&received(&first.transport()).await)[0],
            "server/discover"
        );
        let started = Instant::now();
        let second = connect().await.unwrap();
        assert!(started.elapsed() < Duration::from_millis(400));
        assert_eq!(second.era(), Era::Legacy);
        assert_eq!(
            methods(&received(&second.transport()).await)[0],
            "initialize"
        );
        first.close().await.unwrap();
        second.close().await.unwrap();
    });
}

#[test]
fn clones_share_the_server_and_close_resolves_to_its_exit() {
    run(15, async {
        let client = Client::connect(modern()).await.unwrap();
        let clone = client.clone();
        let pid = client.transport().pid();
        assert_eq!(clone.transport().pid(), pid);
        assert_eq!(
            clone
                .call_tool("add", json!({"a": 2, "b": 3}))
                .await
                .unwrap()
                .text(),
            "5"
        );
        let status = clone.close().await.unwrap();
        assert!(status.success(), "{status}");
        assert_eq!(client.state(), ClientState::Closed);
        let e = client.ping().await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Closed);
        assert_eq!(
            e.to_string(),
            "server \"stdio-mcp-peer\": MCP client was closed: no more calls go to its server"
        );
        // Closing again gives the same exit.
        assert_eq!(client.close().await.unwrap(), status);
    });
}

#[test]
fn the_client_builder_takes_a_notification_handler() {
    run(15, async {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let client = Client::builder(peer(&[]))
            .on_notification(move |n| log.lock().unwrap().push(n.method.clone()))
            .connect()
            .await
            .unwrap();
        client
            .request("test/notify", Some(json!({"count": 3})), CallOptions::new())
            .await
            .unwrap();
        // Delivered before the answer, as on the transport.
        assert_eq!(*seen.lock().unwrap(), ["notifications/progress"; 3]);
        assert_eq!(Era::Legacy.to_string(), "legacy");
        client.close().await.unwrap();
    });
}
