//! What a sandbox costs a server's start: spawn, `initialize` and close of
//! the test peer, plain and in the strictest sandbox (bubblewrap on Linux),
//! in alternating blocks in one run; the ratio is the median of the blocks'.
//! `taskset -c 0 cargo bench --bench sandbox` (docs/performance.md).

use std::time::Instant;

use stdio_mcp::client::{Client, Era};
use stdio_mcp::sandbox::Sandbox;
use stdio_mcp::{Transport, TransportBuilder};
use stdio_mcp_testkit::median;

fn peer() -> TransportBuilder {
    Transport::builder([stdio_mcp_testkit::exe("stdio-mcp-peer")])
}

/// ms per spawn + initialize + close, over `rounds`.
fn rounds(sandboxed: bool, rounds: u32) -> f64 {
    futures::executor::block_on(async {
        let start = Instant::now();
        for _ in 0..rounds {
            let mut builder = peer();
            if sandboxed {
                builder = builder.sandbox(Sandbox::new());
            }
            let client = Client::builder(builder)
                .era(Era::Legacy)
                .connect()
                .await
                .unwrap();
            client.close().await.unwrap();
        }
        start.elapsed().as_secs_f64() * 1000.0 / f64::from(rounds)
    })
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    if peer().sandbox(Sandbox::new()).spawn().is_err() {
        println!("no sandbox on this machine (Linux needs bubblewrap): nothing to measure");
        return;
    }
    let blocks: usize = std::env::var("BENCH_BLOCKS")
        .ok()
        .and_then(|b| b.parse().ok())
        .unwrap_or(9);
    let (mut plain, mut boxed, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for block in 0..blocks {
        let (p, b) = if block % 2 == 0 {
            let p = rounds(false, 20);
            (p, rounds(true, 20))
        } else {
            let b = rounds(true, 20);
            (rounds(false, 20), b)
        };
        plain.push(p);
        boxed.push(b);
        ratios.push(b / p);
    }
    println!("| row | plain | sandboxed | sandboxed / plain |");
    println!("|---|---|---|---|");
    println!(
        "| spawn + initialize + close | {:.2} ms | {:.2} ms | {:.2} |",
        median(plain),
        median(boxed),
        median(ratios)
    );
}
