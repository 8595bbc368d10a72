//! The command line's speed, in wall time of whole processes:
//! - `stdio-mcp tools demo` from a warm catalog cache (target: at most
//!   20 ms, and no server started);
//! - `stdio-mcp call demo echo` against the time of the same call through
//!   `examples/quickstart --call` (target: at most 1.3×), in alternating
//!   blocks, the median of the blocks' ratios.
//!
//! - `stdio-mcp call demo echo` through a running daemon (`daemon start`),
//!   against the same call run directly and through the quickstart (target:
//!   at most 50 ms wall for a warm call).
//!
//! `cargo bench -p stdio-mcp-cli` (it builds the library's example and test
//! peer in release first). Pin it with `taskset -c 0` to judge.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;
use stdio_mcp_testkit::median;

const CLI: &str = env!("CARGO_BIN_EXE_stdio-mcp");
const RUNS: usize = 20;
const BLOCKS: usize = 5;

fn beside_cli(name: &str) -> PathBuf {
    Path::new(CLI).with_file_name(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

/// Wall time of `command` in ms; it must succeed.
fn timed(command: &mut Command) -> f64 {
    let started = Instant::now();
    let status = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "{command:?}");
    started.elapsed().as_secs_f64() * 1e3
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let built = Command::new(cargo)
        .args([
            "build",
            "--release",
            "-p",
            "stdio-mcp",
            "--example",
            "quickstart",
            "-p",
            "stdio-mcp-testkit",
            "--bin",
            "stdio-mcp-peer",
        ])
        .status()
        .unwrap();
    assert!(built.success());
    let quickstart = beside_cli("examples/quickstart");
    let peer = beside_cli("stdio-mcp-peer").display().to_string();
    let dir = std::env::temp_dir().join(format!("stdio-mcp-bench-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let starts = dir.join("starts");
    let config = dir.join("mcp.json");
    let entry = serde_json::json!({ "mcpServers": { "demo": {
        "command": peer, "args": ["--log-start", starts.display().to_string()] } } });
    std::fs::write(&config, entry.to_string()).unwrap();
    let cli = |args: &[&str]| {
        let mut command = Command::new(CLI);
        command
            .arg("--config")
            .arg(&config)
            .args(args)
            .env("STDIO_MCP_CACHE", dir.join("catalog.json"))
            .env("STDIO_MCP_DAEMON_DIR", dir.join("daemon"));
        command
    };

    // One block: the median of a quarter of the runs of `args`.
    let block = |args: &[&str]| median((0..RUNS / 4).map(|_| timed(&mut cli(args))).collect());

    timed(&mut cli(&["tools", "demo"])); // warms the cache
    let before = std::fs::read_to_string(&starts).unwrap().lines().count();
    let warm: Vec<f64> = (0..RUNS)
        .map(|_| timed(&mut cli(&["tools", "demo"])))
        .collect();
    let after = std::fs::read_to_string(&starts).unwrap().lines().count();
    println!(
        "stdio-mcp tools demo, warm cache: {:.1} ms wall (median of {RUNS}); {} servers started (target <= 20 ms, 0)",
        median(warm),
        after - before
    );

    let mut ratios = Vec::new();
    let (mut cli_times, mut quick_times) = (Vec::new(), Vec::new());
    for _ in 0..BLOCKS {
        let c = block(&["--no-daemon", "call", "demo", "echo", "message=hi"]);
        let q: Vec<f64> = (0..RUNS / 4)
            .map(|_| {
                timed(Command::new(&quickstart).args([
                    "--call",
                    "echo",
                    "{\"message\": \"hi\"}",
                    &peer,
                ]))
            })
            .collect();
        let q = median(q);
        cli_times.push(c);
        quick_times.push(q);
        ratios.push(c / q);
    }
    println!(
        "stdio-mcp call demo echo: {:.1} ms vs examples/quickstart --call: {:.1} ms = {:.3}x (median of {BLOCKS} blocks; target <= 1.3x)",
        median(cli_times),
        median(quick_times.clone()),
        median(ratios)
    );

    // Through the daemon: the server stays warm between calls.
    timed(&mut cli(&["daemon", "start"]));
    timed(&mut cli(&["call", "demo", "echo", "message=warm"])); // starts the server
    let (mut through, mut direct) = (Vec::new(), Vec::new());
    for _ in 0..BLOCKS {
        through.push(block(&["call", "demo", "echo", "message=hi"]));
        direct.push(block(&[
            "--no-daemon",
            "call",
            "demo",
            "echo",
            "message=hi",
        ]));
    }
    timed(&mut cli(&["daemon", "stop"]));
    println!(
        "stdio-mcp call demo echo through the daemon: {:.1} ms wall, directly {:.1} ms, examples/quickstart --call {:.1} ms (medians of {BLOCKS} blocks; target <= 50 ms)",
        median(through),
        median(direct),
        median(quick_times)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
