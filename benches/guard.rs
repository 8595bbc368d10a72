//! What standing between a model and the tools costs: a call with and
//! without an approval hook (one that allows at once), a listing of 100 tools
//! with and without change tracking (nothing changes: what a host pays on
//! every `list_changed`), digesting a 100-tool listing (what a listing
//! in which every tool changed costs at most, twice over), and loading a
//! project config whose entry runs a 5 MB script (hashed for trust).
//!
//! Each pair runs in the same process against its own bench server, in
//! alternating blocks (the order swapped each block); a row prints both
//! medians and the median of the blocks' ratios. Judge it pinned:
//! `taskset -c 0 cargo bench --bench guard` (docs/performance.md).

use std::future::Future;
use std::time::Instant;

use serde_json::json;
use stdio_mcp::client::{Approval, Client, ToolCall};
use stdio_mcp::Transport;
use stdio_mcp_testkit::{alternate, median};

/// The bench server of this build (`cargo build --release -p stdio-mcp-testkit`).
fn server_exe() -> &'static str {
    static EXE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    EXE.get_or_init(|| stdio_mcp_testkit::exe("stdio-mcp-bench-server"))
}

fn blocks() -> usize {
    std::env::var("BENCH_BLOCKS")
        .ok()
        .and_then(|b| b.parse().ok())
        .unwrap_or(9)
}

/// µs per run of `work` (`n` runs), measured in alternating blocks for `a`
/// and `b`; prints the row.
fn pair<F: Future<Output = ()>>(
    label: &str,
    n: u64,
    a: (&str, &dyn Fn() -> F),
    b: (&str, &dyn Fn() -> F),
) {
    let time = |work: &dyn Fn() -> F| {
        futures::executor::block_on(async {
            let start = Instant::now();
            for _ in 0..n {
                work().await;
            }
            start.elapsed().as_secs_f64() * 1e6 / n as f64
        })
    };
    let (ta, tb, ratio) = alternate(blocks(), || time(a.1), || time(b.1));
    println!(
        "| {label} | {}: {:.2} µs | {}: {:.2} µs | {ratio:.3} |",
        a.0, ta, b.0, tb
    );
}

async fn connect(tools: usize, approve: bool, track: bool) -> Client {
    let count = tools.to_string();
    let mut builder = Client::builder(Transport::builder([
        server_exe(),
        "--tools",
        count.as_str(),
    ]));
    if approve {
        builder = builder.approve_calls(|_: ToolCall| async { Approval::Allow });
    }
    if track {
        builder = builder.on_tools_changed(|changes| {
            assert!(changes.is_empty(), "nothing changes in this bench");
        });
    }
    let client = builder.connect().await.unwrap();
    client.tools().await.unwrap();
    client
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    println!("| row | without | with | with / without (median of blocks) |");
    println!("|---|---|---|---|");
    let (plain, hooked, untracked, tracked) = futures::executor::block_on(async {
        (
            connect(1, false, false).await,
            connect(1, true, false).await,
            connect(100, false, false).await,
            connect(100, false, true).await,
        )
    });
    let call = |client: &Client| {
        let client = client.clone();
        async move {
            client.call_tool("echo", json!({"n": 1})).await.unwrap();
        }
    };
    pair(
        "call_tool",
        2_000,
        ("no hook", &|| call(&plain)),
        ("approval hook", &|| call(&hooked)),
    );
    let list = |client: &Client| {
        let client = client.clone();
        async move {
            assert_eq!(client.list_tools().await.unwrap().len(), 100);
        }
    };
    pair(
        "list_tools, 100 tools",
        300,
        ("untracked", &|| list(&untracked)),
        ("change tracking", &|| list(&tracked)),
    );
    let tools = futures::executor::block_on(untracked.list_tools()).unwrap();
    let rounds = 200;
    let mut per_listing = Vec::new();
    for _ in 0..blocks() {
        let start = Instant::now();
        for _ in 0..rounds {
            for tool in &tools {
                std::hint::black_box(tool.digest());
            }
        }
        per_listing.push(start.elapsed().as_secs_f64() * 1e6 / f64::from(rounds));
    }
    println!(
        "| digest of 100 tools | | {:.1} µs per listing | |",
        median(per_listing)
    );
    futures::executor::block_on(async {
        for client in [plain, hooked, untracked, tracked] {
            client.close().await.unwrap();
        }
    });
    project_code();
}

/// What trust in the code an entry runs costs a start: loading a project's
/// config whose entry runs a 5 MB script of the project (read and hashed
/// for its launch fingerprint) against one whose script lies outside it
/// (not covered), and a whole start (spawn, initialize, close) for scale.
fn project_code() {
    let dir = std::env::temp_dir().join(format!("stdio-mcp-bench-code-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("inside")).unwrap();
    let script: Vec<u8> = (0..5u32 << 20).map(|i| b'a' + (i % 26) as u8).collect();
    std::fs::write(dir.join("inside/server.js"), &script).unwrap();
    std::fs::write(dir.join("server.js"), &script).unwrap();
    let config = |name: &str, arg: &str| {
        let file = dir.join("inside").join(name);
        let text = json!({ "mcpServers": { "s": { "command": "node", "args": [arg] } } });
        std::fs::write(&file, text.to_string()).unwrap();
        file
    };
    let covered = config("covered.json", "./server.js");
    let outside = config("outside.json", "../server.js");
    let fingerprint = |file: &std::path::Path| {
        let config = stdio_mcp::config::Config::load(file).unwrap();
        std::hint::black_box(config.servers()[0].fingerprint());
    };
    let ms = |file: &std::path::Path| {
        let rounds = 20;
        let start = Instant::now();
        for _ in 0..rounds {
            fingerprint(file);
        }
        start.elapsed().as_secs_f64() * 1e3 / f64::from(rounds)
    };
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for block in 0..blocks() {
        if block % 2 == 0 {
            with.push(ms(&covered));
            without.push(ms(&outside));
        } else {
            without.push(ms(&outside));
            with.push(ms(&covered));
        }
    }
    let started = Instant::now();
    futures::executor::block_on(async {
        let client = Client::builder(Transport::builder([server_exe()]))
            .connect()
            .await
            .unwrap();
        client.close().await.unwrap();
    });
    println!(
        "| config load + fingerprint, entry runs a 5 MB project script | {:.2} ms (outside the project) | {:.2} ms (hashed) | a whole start here: {:.1} ms |",
        median(without),
        median(with),
        started.elapsed().as_secs_f64() * 1e3
    );
    let _ = std::fs::remove_dir_all(&dir);
}
