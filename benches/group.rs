//! Groups: what starting a host's servers together costs, and what the
//! catalog cache saves.
//!
//! `cargo bench --bench group` prints, for GROUP_SIZE servers that each take
//! START_DELAY_MS to start (the test peer, told to wait before it reads):
//! - the group's connect and first `tools()` against the slowest of the same
//!   servers connected and listed one at a time (the target is at most
//!   1.2×), as the median of BLOCKS blocks' ratios, each block measuring both;
//! - with a warm catalog cache: connect and `tools()` in milliseconds, and how
//!   many processes started (the peers log each start to a file);
//! - the group as a runtime: GROUP_SIZE servers of which one writes only
//!   noise and one never answers (and ignores EOF): `connect()` against
//!   `ready_within` (target: at most 50 ms over, the others ready), `close()`
//!   against the close ladder's step of 2 s (target: at most 100 ms over), and
//!   a `reload` that changes one entry (target: that one started again, the
//!   rest untouched).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;
use stdio_mcp::client::Client;
use stdio_mcp::config::Config;
use stdio_mcp::group::{Group, ServerState};
use stdio_mcp_testkit::median;

/// The test peer of this build (`cargo build --release -p stdio-mcp-testkit`).
fn peer() -> &'static str {
    static EXE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    EXE.get_or_init(|| stdio_mcp_testkit::exe("stdio-mcp-peer"))
}
const GROUP_SIZE: usize = 8;
const START_DELAY_MS: u64 = 100;
const BLOCKS: usize = 5;

/// GROUP_SIZE slow peers, each logging its starts to `<dir>/starts`.
fn config(dir: &Path) -> Config {
    let log = dir.join("starts").display().to_string();
    let delay = START_DELAY_MS.to_string();
    let servers: serde_json::Map<_, _> = (0..GROUP_SIZE)
        .map(|i| {
            let entry = json!({
                "command": peer(),
                "args": ["--start-delay", delay, "--log-start", log],
            });
            (format!("s{i}"), entry)
        })
        .collect();
    Config::parse(&json!({ "mcpServers": servers }).to_string()).unwrap()
}

fn starts(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("starts"))
        .map(|log| log.lines().count())
        .unwrap_or(0)
}

/// The slowest of the servers connected and listed one after another, in ms.
async fn slowest_single(config: &Config) -> f64 {
    let mut slowest = Duration::ZERO;
    for server in config.servers() {
        let started = Instant::now();
        let client = Client::connect(server.builder()).await.unwrap();
        client.tools().await.unwrap();
        slowest = slowest.max(started.elapsed());
        client.close().await.unwrap();
    }
    slowest.as_secs_f64() * 1e3
}

/// The group's connect and first `tools()`, in ms.
async fn group(config: &Config, cache: Option<&PathBuf>) -> (f64, Group) {
    let started = Instant::now();
    let mut builder = Group::builder(config.clone());
    if let Some(cache) = cache {
        builder = builder.catalog_cache(cache);
    }
    let group = builder.connect().await;
    let tools = group.tools().await;
    let elapsed = started.elapsed().as_secs_f64() * 1e3;
    assert_eq!(tools.len(), GROUP_SIZE * 3, "every server's tools");
    (elapsed, group)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("stdio-mcp-bench-group-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = config(&dir);
    futures::executor::block_on(async {
        let (mut singles, mut groups, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..BLOCKS {
            let single = slowest_single(&config).await;
            let (together, group) = group(&config, None).await;
            group.close().await;
            singles.push(single);
            groups.push(together);
            ratios.push(together / single);
        }
        println!(
            "group of {GROUP_SIZE} servers ({START_DELAY_MS} ms start each): connect+tools {:.1} ms vs the slowest alone {:.1} ms = {:.3}x (median of {BLOCKS} blocks; target <= 1.2x)",
            median(groups),
            median(singles),
            median(ratios)
        );

        let cache = dir.join("catalog.json");
        let (_, warming) = group(&config, Some(&cache)).await;
        warming.close().await;
        let mut warm = Vec::new();
        let mut started = 0;
        for _ in 0..BLOCKS {
            let before = starts(&dir);
            let (elapsed, group) = group(&config, Some(&cache)).await;
            assert!(group.servers().iter().all(|(_, s)| *s == ServerState::Idle));
            started += starts(&dir) - before;
            warm.push(elapsed);
            group.close().await;
        }
        println!(
            "group of {GROUP_SIZE} servers, warm catalog cache: connect+tools {:.2} ms (median of {BLOCKS}), {started} processes started (target <= 50 ms, 0)",
            median(warm)
        );
    });
    runtime(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The runtime's figures: a connect no server holds up, a close that waits
/// for nothing but the ladder, a reload that touches only what changed.
fn runtime(dir: &Path) {
    const READY_WITHIN: Duration = Duration::from_millis(1000);
    const LADDER_STEP: Duration = Duration::from_secs(2);
    let log = dir.join("runtime-starts").display().to_string();
    let entries = |changed: bool| {
        let mut servers = serde_json::Map::new();
        for i in 0..GROUP_SIZE - 2 {
            let mut args = vec!["--start-delay".to_owned(), START_DELAY_MS.to_string()];
            args.extend(["--log-start".to_owned(), log.clone()]);
            if changed && i == 0 {
                args.push("--paged".into());
            }
            servers.insert(format!("s{i}"), json!({ "command": peer(), "args": args }));
        }
        servers.insert(
            "noise".into(),
            json!({ "command": peer(),
            "args": ["--noise", "150", "--discover", "silent", "--initialize", "never"] }),
        );
        servers.insert(
            "never".into(),
            json!({ "command": peer(),
            "args": ["--discover", "silent", "--initialize", "never", "--ignore-eof"] }),
        );
        Config::parse(&json!({ "mcpServers": servers }).to_string()).unwrap()
    };
    let (mut over_ready, mut over_close, mut reloads, mut restarted) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    futures::executor::block_on(async {
        for _ in 0..BLOCKS {
            let started = Instant::now();
            let group = Group::builder(entries(false))
                .ready_within(READY_WITHIN)
                .connect()
                .await;
            over_ready.push((started.elapsed().as_secs_f64() - READY_WITHIN.as_secs_f64()) * 1e3);
            let ready = group
                .servers()
                .iter()
                .filter(|(_, s)| matches!(s, ServerState::Ready(_)))
                .count();
            assert_eq!(ready, GROUP_SIZE - 2, "{:?}", group.servers());
            let before = std::fs::read_to_string(&log).map_or(0, |l| l.lines().count());
            let started = Instant::now();
            let done = group.reload(entries(true)).await;
            reloads.push(started.elapsed().as_secs_f64() * 1e3);
            let after = std::fs::read_to_string(&log).map_or(0, |l| l.lines().count());
            let changed = done
                .iter()
                .filter(|(_, d)| *d != stdio_mcp::group::Reloaded::Kept)
                .count();
            restarted.push((after - before, changed));
            let started = Instant::now();
            group.close().await;
            over_close.push((started.elapsed().as_secs_f64() - LADDER_STEP.as_secs_f64()) * 1e3);
        }
    });
    println!(
        "group of {GROUP_SIZE} servers, one only noise and one never answering: connect returned {:.1} ms after ready_within ({} ms; target <= 50 ms), the other {} ready",
        median(over_ready),
        READY_WITHIN.as_millis(),
        GROUP_SIZE - 2
    );
    println!(
        "  close() of the {GROUP_SIZE}: {:.1} ms beyond the ladder's 2 s step (median of {BLOCKS}; target <= 100 ms)",
        median(over_close)
    );
    println!(
        "  reload changing 1 of {GROUP_SIZE} entries: {:.1} ms, processes started / entries not kept per block: {restarted:?} (target: 1 / 1)",
        median(reloads)
    );
}
