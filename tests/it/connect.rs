//! Connecting to every kind of server with the defaults: old SDKs that die on
//! the `server/discover` probe (at once, or silently and on their next line),
//! probes answered with something else than a `DiscoverResult`, a refusal
//! that lists the very version just sent, and stdout that is only noise.

use crate::common;

use std::time::{Duration, Instant};

use common::{peer, received, run, within};
use serde_json::{json, Value};
use stdio_mcp::client::{Client, Era};
use stdio_mcp::config::Config;
use stdio_mcp::group::{Group, ServerState};
use stdio_mcp::{ErrorKind, TransportBuilder};

const PROBE: Duration = Duration::from_millis(1000);

fn methods(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .filter_map(|l| l["method"].as_str().map(str::to_owned))
        .collect()
}

/// A server that loses its session on the probe without a word on stdout and
/// exits 1 on the next line it reads, as servers on the Python SDK before
/// 1.9.4 do. `tag` makes its command line its own: the era is remembered per
/// command line for the life of the test process.
fn dies_quietly(tag: &str) -> TransportBuilder {
    peer(&["--discover", "die-quietly", "--log-start", tag])
}

/// Connects with the defaults but a shorter probe; returns the client and
/// how long the connect took.
async fn connect(builder: TransportBuilder) -> (Result<Client, stdio_mcp::Error>, Duration) {
    let started = Instant::now();
    let client = Client::builder(builder)
        .probe_timeout(PROBE)
        .connect()
        .await;
    (client, started.elapsed())
}

/// The Python-SDK-before-1.9.4 case, end to end, with the defaults (a probe
/// timeout of 10 s): the server read the probe and let it go unanswered, so a
/// second probe follows, on which it exits; it is started again once for the
/// handshake alone, all under 2.5 s; the second connect skips the probe.
async fn a_server_dying_quietly_on_the_probe(tag: &str) {
    let log = std::env::temp_dir().join(format!(
        "stdio-mcp-dies-quietly-{tag}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&log);
    let builder = || dies_quietly(log.to_str().unwrap());
    let started = Instant::now();
    let client = Client::connect(builder()).await.unwrap();
    let took = started.elapsed();
    assert_eq!(client.era(), Era::Legacy);
    assert!(took < Duration::from_millis(2500), "{took:?}");
    // The process that answers was started for the handshake alone.
    let lines = received(&client.transport()).await;
    assert_eq!(
        methods(&lines)[..2],
        ["initialize", "notifications/initialized"],
        "{lines:?}"
    );
    let r = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(r.text(), "5");
    client.close().await.unwrap();
    let starts = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        starts.lines().count(),
        2,
        "two processes: the probed one and the next"
    );
    // The era is remembered for this command line: no probe, no wait.
    let started = Instant::now();
    let again = Client::connect(builder()).await.unwrap();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(1), "{took:?}");
    let lines = received(&again.transport()).await;
    assert!(
        !methods(&lines).contains(&"server/discover".to_owned()),
        "{lines:?}"
    );
    again.close().await.unwrap();
    let _ = std::fs::remove_file(&log);
}

#[test]
fn a_server_that_dies_quietly_on_the_probe_connects_under_block_on() {
    run(20, a_server_dying_quietly_on_the_probe("block-on"));
}

#[test]
fn a_server_that_dies_quietly_on_the_probe_connects_under_smol() {
    smol::block_on(within(20, a_server_dying_quietly_on_the_probe("smol")));
}

#[async_std::test]
async fn a_server_that_dies_quietly_on_the_probe_connects_under_async_std() {
    within(20, a_server_dying_quietly_on_the_probe("async-std")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_quietly_on_the_probe_connects_under_tokio() {
    within(20, a_server_dying_quietly_on_the_probe("tokio")).await;
}

#[test]
fn a_server_that_exits_on_the_probe_connects_without_a_wait() {
    run(10, async {
        let (client, took) = connect(peer(&["--discover", "exit", "--watchdog", "59"])).await;
        let client = client.unwrap();
        assert_eq!(client.era(), Era::Legacy);
        assert!(took < PROBE, "{took:?}");
        client.close().await.unwrap();
    });
}

#[test]
fn a_probe_answered_with_another_shape_means_the_handshake() {
    run(10, async {
        // `{}`, and a result with no supportedVersions: a legacy server's own
        // answer to an unknown method. Handshaken on the same process.
        for mode in ["empty", "malformed"] {
            let (client, took) = connect(peer(&["--discover", mode])).await;
            let client = client.unwrap_or_else(|e| panic!("{mode}: {e}"));
            assert_eq!(client.era(), Era::Legacy, "{mode}");
            assert!(took < PROBE, "{mode}: {took:?}");
            let lines = received(&client.transport()).await;
            assert_eq!(
                methods(&lines)[..3],
                ["server/discover", "initialize", "notifications/initialized"],
                "{mode}"
            );
            client.close().await.unwrap();
        }
    });
}

#[test]
fn a_refusal_listing_the_version_just_sent_is_asked_once_more() {
    run(10, async {
        let (client, _) = connect(peer(&["--discover", "reject-first"])).await;
        let client = client.unwrap();
        assert_eq!(client.era(), Era::Modern);
        let lines = received(&client.transport()).await;
        let probes: Vec<&Value> = lines
            .iter()
            .filter(|l| l["method"] == "server/discover")
            .collect();
        assert_eq!(probes.len(), 2, "{lines:?}");
        for probe in probes {
            assert_eq!(
                probe["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
                "2026-07-28"
            );
        }
        client.close().await.unwrap();
        // A second refusal of the same version fails, naming it and the list.
        let (refused, _) = connect(peer(&["--discover", "reject-always"])).await;
        let error = refused.unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Protocol, "{error}");
        assert!(
            error
                .to_string()
                .contains("refused MCP 2026-07-28 twice, yet lists it as supported (2026-07-28)"),
            "{error}"
        );
    });
}

/// A server whose stdout is only noise fails at once, whatever the limits.
async fn only_noise() {
    let started = Instant::now();
    let error = Client::builder(peer(&[
        "--noise",
        "150",
        "--discover",
        "silent",
        "--initialize",
        "never",
    ]))
    .connect()
    .await
    .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(error.kind(), ErrorKind::Protocol, "{error}");
    let text = error.to_string();
    assert!(
        text.contains("stdout lines that are not JSON-RPC, and no JSON-RPC message"),
        "{text}"
    );
    assert!(
        text.contains("\"[log] starting step 0: not JSON-RPC\""),
        "{text}"
    );
    assert!(
        text.contains("\"[log] starting step 2: not JSON-RPC\""),
        "{text}"
    );
    assert!(
        !text.contains("Era::Legacy"),
        "noise is no legacy server: {text}"
    );
}

#[test]
fn a_server_that_writes_only_noise_fails_at_once_under_block_on() {
    run(10, only_noise());
}

#[test]
fn a_server_that_writes_only_noise_fails_at_once_under_smol() {
    smol::block_on(within(10, only_noise()));
}

#[async_std::test]
async fn a_server_that_writes_only_noise_fails_at_once_under_async_std() {
    within(10, only_noise()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_writes_only_noise_fails_at_once_under_tokio() {
    within(10, only_noise()).await;
}

#[test]
fn a_server_with_a_banner_then_answers_still_connects() {
    run(10, async {
        for flags in [
            &["--noise", "5"][..],
            &["--noise", "5", "--discover", "modern"],
        ] {
            let (client, took) = connect(peer(flags)).await;
            let client = client.unwrap_or_else(|e| panic!("{flags:?}: {e}"));
            assert!(took < PROBE, "{took:?}");
            client.ping().await.unwrap();
            client.close().await.unwrap();
        }
    });
}

#[test]
fn a_groups_start_limit_says_what_the_server_wrote() {
    run(20, async {
        let config = json!({ "mcpServers": { "mute": {
            "command": common::peer_exe(),
            "args": ["--noise", "3", "--discover", "silent", "--initialize", "never"],
        } } });
        let group = Group::builder(Config::parse(&config.to_string()).unwrap())
            .start_timeout(Duration::from_millis(1500))
            .connect()
            .await;
        let states = group.servers();
        let ServerState::Failed(why) = &states[0].1 else {
            panic!("{states:?}");
        };
        assert!(
            why.contains("did not answer server/discover before the start limit of 1.5s (Group::start_timeout)"),
            "{why}"
        );
        assert!(
            why.contains("3 stdout lines that are not JSON-RPC"),
            "{why}"
        );
        assert!(why.contains("[log] starting step 0"), "{why}");
        group.close().await;
    });
}
