//! The first connect to a fresh server of each kind, with the defaults
//! (`Era::Auto`): one that speaks 2026-07-28, a legacy one that answers the
//! probe with an error, and one that loses its session on the probe without a
//! word (the Python SDK before 1.9.4). Milliseconds from `Client::connect` to
//! its return, the median of `BENCH_CONNECT_ROUNDS` (default 5) connects, each
//! to a command line of its own, so no era is remembered from the one before.
//!
//! `cargo bench --bench connect`; against another revision, run the same file
//! there and compare the rows (docs/performance.md, "The first connect").

use std::time::Instant;

use stdio_mcp::client::Client;
use stdio_mcp::Transport;

/// The test peer of this build (`cargo build --release -p stdio-mcp-testkit`).
fn peer() -> &'static str {
    static EXE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    EXE.get_or_init(|| stdio_mcp_testkit::exe("stdio-mcp-peer"))
}

fn main() {
    let rounds: u64 = std::env::var("BENCH_CONNECT_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    println!("| kind | ms per first connect (median of {rounds}) |");
    println!("|---|---|");
    let kinds: [(&str, &[&str]); 3] = [
        ("modern", &["--discover", "modern"]),
        ("legacy", &[]),
        ("dies-on-probe", &["--discover", "die-quietly"]),
    ];
    for (kind, flags) in kinds {
        let mut times: Vec<f64> = (0..rounds)
            .map(|round| {
                // A watchdog of its own makes each command line new.
                let watchdog = (600 + round).to_string();
                let command = std::iter::once(peer())
                    .chain(flags.iter().copied())
                    .chain(["--watchdog", watchdog.as_str()]);
                futures::executor::block_on(async {
                    let started = Instant::now();
                    let client = Client::connect(Transport::builder(command)).await.unwrap();
                    let took = started.elapsed().as_secs_f64() * 1000.0;
                    client.close().await.unwrap();
                    took
                })
            })
            .collect();
        times.sort_by(f64::total_cmp);
        println!("| {kind} | {:.1} |", times[times.len() / 2]);
    }
}
