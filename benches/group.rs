//! Groups: what starting a host's servers together costs, and what the
//! catalog cache saves.
//!
//! `cargo bench --bench group` prints, for GROUP_SIZE servers that each take
//! START_DELAY_MS to start (the test peer, told to wait before it reads):
//! - the group's connect and first `tools()` against the slowest of the same
//!   servers connected and listed one at a time (the target is at most
//!   1.2×), as the median of BLOCKS blocks' ratios, each block measuring both;
//! - with a warm catalog cache: connect and `tools()` in milliseconds, and how
//!   many processes started (the peers log each start to a file).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;
use stdio_mcp::client::Client;
use stdio_mcp::config::Config;
use stdio_mcp::group::{Group, ServerState};

const PEER: &str = env!("CARGO_BIN_EXE_stdio-mcp-peer");
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
                "command": PEER,
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

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
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
    std::fs::remove_dir_all(&dir).unwrap();
}
