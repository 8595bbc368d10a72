//! `cargo bench`: stdio-mcp against a blocking std client ("raw"), in the same run.
//!
//! Every workload is measured three ways against the same fast std server
//! (`benches/support/bench_server.rs`):
//! - `raw`: blocking std pipes, hand framing, serde_json — the practical limit;
//! - `thread`: stdio-mcp with its default background thread;
//! - `local task`: stdio-mcp with the driver as a task on the caller's
//!   single-threaded executor (async-executor's `LocalExecutor` under
//!   `async_io::block_on`, as smol runs it);
//! - `same task`: the driver and the caller's work in one task, with
//!   `Driver::run_until` under `async_io::block_on`.
//!
//! The parent process runs the whole set twice, as children of its own: pinned to
//! CPU 0 (`taskset -c 0`) and unpinned, and prints one table. Judge on pinned:
//! a wake-up across CPUs costs tens of microseconds on a small VM.
//!
//! `BENCH_QUICK=1` shrinks every workload for a fast look. For profiling, a child
//! can be run by hand with `STDIO_MCP_BENCH_CHILD=x` and either
//! `BENCH_ONE=workload,mode[,size,rounds]` (one figure) or `BENCH_SIZES=1` (blob
//! throughput and client CPU per MiB from 1 to 32 MiB). `BENCH_SKIP_CALLGRIND=1`
//! skips the instruction count.

use std::env;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use futures::stream::{FuturesUnordered, StreamExt};
use serde_json::{json, Value};
use stdio_mcp::{Transport, TransportBuilder};
use stdio_mcp_testkit::median;

/// The bench server of this build (`cargo build --release -p stdio-mcp-testkit`).
fn server_exe() -> &'static str {
    static EXE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    EXE.get_or_init(|| stdio_mcp_testkit::exe("stdio-mcp-bench-server"))
}

fn quick() -> bool {
    env::var_os("BENCH_QUICK").is_some()
}

fn scaled(full: u64, quick_value: u64) -> u64 {
    if quick() {
        quick_value
    } else {
        full
    }
}

fn server() -> TransportBuilder {
    Transport::builder([server_exe()])
}

// ---------- raw: the blocking baseline ----------

struct Raw {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    line: Vec<u8>,
    out: Vec<u8>,
    next_id: u64,
}

impl Raw {
    fn start() -> Raw {
        let mut child = Command::new(server_exe())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("bench server");
        Raw {
            stdin: child.stdin.take().unwrap(),
            stdout: BufReader::with_capacity(64 * 1024, child.stdout.take().unwrap()),
            child,
            line: Vec::new(),
            out: Vec::new(),
            next_id: 1,
        }
    }

    fn send(&mut self, method: &str, params: &Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.out.clear();
        serde_json::to_writer(
            &mut self.out,
            &json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }),
        )
        .unwrap();
        self.out.push(b'\n');
        self.stdin.write_all(&self.out).unwrap();
        id
    }

    /// Reads until a response; returns it and the number of notifications before it.
    fn receive(&mut self) -> (Value, u64) {
        let mut notifications = 0;
        loop {
            self.line.clear();
            self.stdout.read_until(b'\n', &mut self.line).unwrap();
            let mut message: Value = serde_json::from_slice(&self.line).unwrap();
            if message.get("id").is_some() {
                return (message["result"].take(), notifications);
            }
            notifications += 1;
        }
    }

    fn request(&mut self, method: &str, params: &Value) -> (Value, u64) {
        self.send(method, params);
        self.receive()
    }

    fn close(mut self) {
        drop(self.stdin);
        self.child.wait().unwrap();
    }
}

// ---------- running stdio-mcp both ways ----------

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// `TransportBuilder::spawn`: the shared background thread.
    Thread,
    /// The driver as a task of smol's single-threaded executor, beside the work.
    Local,
    /// The driver and the work in one task: `Driver::run_until`.
    SameTask,
}

/// Runs `work` against a fresh transport in `mode`, then closes it.
fn run<T, F, Fut>(mode: Mode, builder: TransportBuilder, work: F) -> T
where
    F: FnOnce(Transport) -> Fut,
    Fut: std::future::Future<Output = T>,
{
    match mode {
        Mode::Thread => {
            let t = builder.spawn().unwrap();
            let closer = t.clone();
            let out = futures::executor::block_on(work(t));
            futures::executor::block_on(closer.close()).unwrap();
            out
        }
        Mode::Local => {
            // smol's single-threaded executor: the driver is a task beside the work.
            let ex = async_executor::LocalExecutor::new();
            async_io::block_on(ex.run(async {
                let (t, driver) = builder.spawn_with_driver().unwrap();
                let driver = ex.spawn(driver);
                let closer = t.clone();
                let out = work(t).await;
                closer.close().await.unwrap();
                drop(closer);
                driver.await;
                out
            }))
        }
        Mode::SameTask => {
            let (t, driver) = builder.spawn_with_driver().unwrap();
            let closer = t.clone();
            let (out, driver) = async_io::block_on(driver.run_until(work(t)));
            let closing = closer.close();
            drop(closer);
            async_io::block_on(async {
                driver.await;
                closing.await.unwrap();
            });
            out
        }
    }
}

// ---------- workloads ----------

fn seq_raw(n: u64) -> f64 {
    let mut raw = Raw::start();
    for _ in 0..1000 {
        raw.request("ping", &json!({}));
    }
    let start = Instant::now();
    for _ in 0..n {
        raw.request("ping", &json!({}));
    }
    let us = start.elapsed().as_secs_f64() * 1e6 / n as f64;
    raw.close();
    us
}

fn seq(mode: Mode, n: u64) -> f64 {
    run(mode, server(), |t| async move {
        for _ in 0..1000 {
            t.send_request("ping", None).await.unwrap();
        }
        let start = Instant::now();
        for _ in 0..n {
            t.send_request("ping", None).await.unwrap();
        }
        start.elapsed().as_secs_f64() * 1e6 / n as f64
    })
}

/// A bench server with async-process's pipes (async-io's `Async` on Unix), for
/// the floors below.
fn async_server() -> (
    async_process::Child,
    async_process::ChildStdin,
    futures::io::BufReader<async_process::ChildStdout>,
) {
    let mut child = async_process::Command::new(server_exe())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("bench server");
    let stdin = child.stdin.take().unwrap();
    let stdout = futures::io::BufReader::new(child.stdout.take().unwrap());
    (child, stdin, stdout)
}

fn ping_line(id: u64) -> Vec<u8> {
    let mut out =
        serde_json::to_vec(&json!({ "jsonrpc": "2.0", "id": id, "method": "ping" })).unwrap();
    out.push(b'\n');
    out
}

/// Warm-up calls before the clock starts, in each floor.
const FLOOR_WARM_UP: u64 = 1000;

/// The floor for any client built on async-io: one task, `Async` pipes, hand
/// framing, no transport at all. It shows what the reactor itself costs per call.
fn seq_async_io_floor(n: u64) -> f64 {
    use futures::io::{AsyncBufReadExt, AsyncWriteExt};
    let (mut child, mut stdin, mut stdout) = async_server();
    let us = async_io::block_on(async {
        let mut line = Vec::new();
        let mut start = Instant::now();
        for id in 0..n + FLOOR_WARM_UP {
            if id == FLOOR_WARM_UP {
                start = Instant::now();
            }
            stdin.write_all(&ping_line(id)).await.unwrap();
            line.clear();
            stdout.read_until(b'\n', &mut line).await.unwrap();
            let answer: Value = serde_json::from_slice(&line).unwrap();
            assert_eq!(answer["id"], json!(id));
        }
        start.elapsed().as_secs_f64() * 1e6 / n as f64
    });
    drop(stdin);
    async_io::block_on(child.status()).unwrap();
    us
}

/// The floor for a client whose I/O is a task of its own on the caller's
/// `LocalExecutor`, the shape of a driver run with `ex.spawn(driver)`: the
/// caller hands each request line to an I/O task, which writes it, reads the
/// answer and hands that back, both through channels. No transport; what it
/// costs beyond the single-task floor is the executor's hand-off between tasks.
fn seq_local_task_floor(n: u64) -> f64 {
    use futures::io::{AsyncBufReadExt, AsyncWriteExt};
    let (mut child, mut stdin, mut stdout) = async_server();
    let (to_io, mut requests) = futures::channel::mpsc::unbounded::<Vec<u8>>();
    let (to_caller, mut answers) = futures::channel::mpsc::unbounded::<Vec<u8>>();
    let ex = async_executor::LocalExecutor::new();
    let io = ex.spawn(async move {
        while let Some(request) = requests.next().await {
            stdin.write_all(&request).await.unwrap();
            let mut line = Vec::new();
            stdout.read_until(b'\n', &mut line).await.unwrap();
            to_caller.unbounded_send(line).unwrap();
        }
    });
    let us = async_io::block_on(ex.run(async {
        let mut start = Instant::now();
        for id in 0..n + FLOOR_WARM_UP {
            if id == FLOOR_WARM_UP {
                start = Instant::now();
            }
            to_io.unbounded_send(ping_line(id)).unwrap();
            let line = answers.next().await.unwrap();
            let answer: Value = serde_json::from_slice(&line).unwrap();
            assert_eq!(answer["id"], json!(id));
        }
        drop(to_io);
        io.await;
        start.elapsed().as_secs_f64() * 1e6 / n as f64
    }));
    async_io::block_on(child.status()).unwrap();
    us
}

const WINDOW: usize = 256;

fn pipe_raw(n: u64) -> f64 {
    let mut raw = Raw::start();
    let start = Instant::now();
    let mut sent = 0;
    while sent < WINDOW as u64 {
        raw.send("ping", &json!({}));
        sent += 1;
    }
    for _ in 0..n {
        raw.receive();
        if sent < n {
            raw.send("ping", &json!({}));
            sent += 1;
        }
    }
    let rate = n as f64 / start.elapsed().as_secs_f64();
    raw.close();
    rate
}

fn pipe(mode: Mode, n: u64) -> f64 {
    run(mode, server(), |t| async move {
        let start = Instant::now();
        let mut in_flight = FuturesUnordered::new();
        let mut sent = 0;
        while sent < WINDOW as u64 {
            in_flight.push(t.send_request("ping", None));
            sent += 1;
        }
        while let Some(r) = in_flight.next().await {
            r.unwrap();
            if sent < n {
                in_flight.push(t.send_request("ping", None));
                sent += 1;
            }
        }
        n as f64 / start.elapsed().as_secs_f64()
    })
}

fn blob_params(bytes: u64) -> Value {
    json!({ "name": "blob", "arguments": { "bytes": bytes } })
}

fn blob_raw(bytes: u64, rounds: u64) -> f64 {
    let mut raw = Raw::start();
    raw.request("tools/call", &blob_params(bytes));
    let start = Instant::now();
    for _ in 0..rounds {
        let (r, _) = raw.request("tools/call", &blob_params(bytes));
        assert_eq!(
            r["content"][0]["text"].as_str().unwrap().len() as u64,
            bytes
        );
    }
    let rate = (bytes * rounds) as f64 / start.elapsed().as_secs_f64() / 1e6;
    raw.close();
    rate
}

fn blob(mode: Mode, bytes: u64, rounds: u64) -> f64 {
    run(mode, server(), |t| async move {
        t.send_request("tools/call", Some(blob_params(bytes)))
            .await
            .unwrap();
        let start = Instant::now();
        for _ in 0..rounds {
            let r = t
                .send_request("tools/call", Some(blob_params(bytes)))
                .await
                .unwrap();
            assert_eq!(
                r["content"][0]["text"].as_str().unwrap().len() as u64,
                bytes
            );
        }
        (bytes * rounds) as f64 / start.elapsed().as_secs_f64() / 1e6
    })
}

fn notify_params(count: u64) -> Value {
    json!({ "name": "notify", "arguments": { "count": count }, "_meta": { "progressToken": 1 } })
}

fn notify_raw(count: u64) -> f64 {
    let mut raw = Raw::start();
    let start = Instant::now();
    let (_, seen) = raw.request("tools/call", &notify_params(count));
    let rate = seen as f64 / start.elapsed().as_secs_f64();
    assert_eq!(seen, count);
    raw.close();
    rate
}

fn notify(mode: Mode, count: u64) -> f64 {
    let seen = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&seen);
    let builder = server().on_notification(move |_| {
        counter.fetch_add(1, Ordering::Relaxed);
    });
    run(mode, builder, |t| async move {
        let start = Instant::now();
        t.send_request("tools/call", Some(notify_params(count)))
            .await
            .unwrap();
        let elapsed = start.elapsed();
        // Every notification must have been delivered before the call's result.
        assert_eq!(
            seen.load(Ordering::Relaxed),
            count,
            "notifications lost or late"
        );
        count as f64 / elapsed.as_secs_f64()
    })
}

fn init_params() -> Value {
    json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "bench", "version": "1" } })
}

/// One spawn + initialize + close, raw.
fn spawn_round_raw() {
    let mut raw = Raw::start();
    raw.request("initialize", &init_params());
    raw.close();
}

/// One spawn + initialize + close on the background thread.
async fn spawn_round_thread() {
    let t = server().spawn().unwrap();
    t.send_request("initialize", Some(init_params()))
        .await
        .unwrap();
    t.close().await.unwrap();
}

fn spawn_raw(rounds: u64) -> f64 {
    let start = Instant::now();
    for _ in 0..rounds {
        spawn_round_raw();
    }
    start.elapsed().as_secs_f64() * 1e3 / rounds as f64
}

/// One executor for all the rounds, as in an application that starts servers as it
/// goes: a fresh `block_on` per round would measure async-io handing its reactor
/// to its fallback thread and back each time, not the transport.
fn spawn(mode: Mode, rounds: u64) -> f64 {
    let start = Instant::now();
    match mode {
        Mode::Thread => futures::executor::block_on(async {
            for _ in 0..rounds {
                spawn_round_thread().await;
            }
        }),
        Mode::Local => {
            let ex = async_executor::LocalExecutor::new();
            async_io::block_on(ex.run(async {
                for _ in 0..rounds {
                    let (t, driver) = server().spawn_with_driver().unwrap();
                    let driver = ex.spawn(driver);
                    t.send_request("initialize", Some(init_params()))
                        .await
                        .unwrap();
                    t.close().await.unwrap();
                    drop(t);
                    driver.await;
                }
            }))
        }
        Mode::SameTask => async_io::block_on(async {
            for _ in 0..rounds {
                let (t, driver) = server().spawn_with_driver().unwrap();
                let (_, driver) = driver
                    .run_until(t.send_request("initialize", Some(init_params())))
                    .await;
                let closing = t.close();
                drop(t);
                driver.await;
                closing.await.unwrap();
            }
        }),
    }
    start.elapsed().as_secs_f64() * 1e3 / rounds as f64
}

/// Spawn + initialize + close on the background thread, round by round in turn
/// with raw's: (median of the rounds' own ratios, raw's median round in ms, the
/// thread's median round in ms). Blocks of a hundred rounds each take a hundred
/// milliseconds, long enough for one of the VM's stalls (a round of 5-15 ms
/// instead of about 1) to land on one side of a ratio; pairs of rounds a
/// millisecond apart see the same host, and the median ignores the stalls.
fn spawn_paired(rounds: u64) -> (f64, f64, f64) {
    let mut raws = Vec::new();
    let mut ours = Vec::new();
    futures::executor::block_on(async {
        for _ in 0..rounds {
            // Whatever a round left running (a reaped child's last clean-up in
            // the kernel, the background thread's last steps) ends before the
            // next round starts, so it is not timed as the other side's.
            std::thread::sleep(SETTLE);
            let start = Instant::now();
            spawn_round_raw();
            raws.push(start.elapsed().as_secs_f64() * 1e3);
            std::thread::sleep(SETTLE);
            let start = Instant::now();
            spawn_round_thread().await;
            ours.push(start.elapsed().as_secs_f64() * 1e3);
        }
    });
    let ratios = ours.iter().zip(&raws).map(|(o, r)| o / r).collect();
    (median(ratios), median(raws), median(ours))
}

/// The pause before each round of `spawn_paired`.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(1);

/// CPU time (user + system) this process has used, in seconds.
#[cfg(unix)]
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct we pass; zeroed is a valid initial value.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// The bench measures on Linux; elsewhere it only has to build.
#[cfg(not(unix))]
fn cpu_seconds() -> f64 {
    0.0
}

// ---------- scale ----------

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

/// Resident memory in bytes, after handing freed memory back to the system.
fn rss() -> f64 {
    // SAFETY: malloc_trim only releases free heap memory; it has no preconditions.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    unsafe {
        libc::malloc_trim(0);
    }
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: f64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096.0
}

struct Scale {
    threads_before: usize,
    threads_with_200: usize,
    idle_bytes: f64,
    pending_bytes: f64,
    pending_json: f64,
    rss_base_mb: f64,
    rss_after_mb: f64,
}

fn scale(mode: Mode, transports: usize, pending: u64) -> Scale {
    // Warm up the shared threads so they are not counted as growth.
    run(mode, server(), |t| async move {
        t.send_request("ping", None).await.unwrap()
    });
    let threads_before = threads();
    let rss0 = rss();
    let (threads_with_200, idle_bytes) = match mode {
        Mode::Thread => {
            let all: Vec<Transport> = (0..transports).map(|_| server().spawn().unwrap()).collect();
            futures::executor::block_on(async {
                for t in &all {
                    t.send_request("ping", None).await.unwrap();
                }
            });
            let counts = (threads(), (rss() - rss0) / transports as f64);
            futures::executor::block_on(futures::future::join_all(all.iter().map(|t| t.close())));
            counts
        }
        Mode::Local | Mode::SameTask => async_io::block_on(async {
            let ex = async_executor::LocalExecutor::new();
            ex.run(async {
                let mut all = Vec::new();
                for _ in 0..transports {
                    let (t, driver) = server().spawn_with_driver().unwrap();
                    ex.spawn(driver).detach();
                    all.push(t);
                }
                for t in &all {
                    t.send_request("ping", None).await.unwrap();
                }
                let counts = (threads(), (rss() - rss0) / transports as f64);
                futures::future::join_all(all.iter().map(|t| t.close())).await;
                counts
            })
            .await
        }),
    };

    let (pending_bytes, pending_json, rss_base, rss_after) = run(mode, server(), |t| async move {
        let line_len = format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"bench/hold"}}"#,
            50_000
        )
        .len()
            + 1;
        t.send_request("ping", None).await.unwrap();
        let before = rss();
        let held: Vec<_> = (0..pending)
            .map(|_| t.send_request("bench/hold", None))
            .collect();
        // Let the driver write them all, so what is measured is the pending state.
        t.send_request("ping", None).await.unwrap();
        let per = (rss() - before) / pending as f64;
        drop(held);
        // The cancels go out; the transport stays up, and its memory should come back.
        t.send_request("ping", None).await.unwrap();
        (per, line_len as f64, before, rss())
    });
    Scale {
        threads_before,
        threads_with_200,
        idle_bytes,
        pending_bytes,
        pending_json,
        rss_base_mb: rss_base / 1e6,
        rss_after_mb: rss_after / 1e6,
    }
}

// ---------- the table ----------

/// The ways stdio-mcp is run, in the table's column order.
const MODES: [Mode; 3] = [Mode::Thread, Mode::Local, Mode::SameTask];

/// One measured row: workload, unit, raw, then stdio-mcp in each of `MODES`.
struct Row {
    name: &'static str,
    unit: &'static str,
    raw: f64,
    ours: Vec<f64>,
    /// Per mode: the median over blocks of that block's figure over raw's.
    ratios: Vec<f64>,
}

/// Blocks per row: raw and every mode take turns, block after block, so a drift of
/// the machine during the run hits both sides. Each figure is the median block,
/// and each ratio the median of the blocks' own ratios: a block's figures are
/// taken within a few seconds of each other, so the host's slower and faster
/// spells (on this VM the same figure moved by half within an hour) mostly
/// cancel out of each ratio.
const BLOCKS: usize = 7;

fn row(
    name: &'static str,
    unit: &'static str,
    raw: impl Fn() -> f64,
    ours: impl Fn(Mode) -> f64,
) -> Row {
    let (raw, figures) = in_blocks(raw, MODES.len(), |i| ours(MODES[i]));
    let (ours, ratios) = figures.into_iter().unzip();
    Row {
        name,
        unit,
        raw,
        ours,
        ratios,
    }
}

/// `raw`, then each of `n` other figures, in BLOCKS blocks. Returns raw's median
/// and, for each figure, its median and the median of its blocks' ratios to raw.
fn in_blocks(
    raw: impl Fn() -> f64,
    n: usize,
    figure: impl Fn(usize) -> f64,
) -> (f64, Vec<(f64, f64)>) {
    let mut raws = Vec::new();
    let mut figures = vec![Vec::new(); n];
    let mut ratios = vec![Vec::new(); n];
    for _ in 0..BLOCKS {
        let baseline = raw();
        raws.push(baseline);
        for i in 0..n {
            let f = figure(i);
            figures[i].push(f);
            ratios[i].push(f / baseline);
        }
    }
    let each = figures.into_iter().zip(ratios);
    (
        median(raws),
        each.map(|(f, r)| (median(f), median(r))).collect(),
    )
}

fn rows() -> Vec<Row> {
    // Per block; BLOCKS blocks per row.
    let n_seq = scaled(20_000, 2_000);
    let n_pipe = scaled(200_000, 20_000);
    let blob_rounds = scaled(15, 2);
    let n_notify = 200_000;
    let spawns = scaled(100, 10);
    let mb8 = 8 << 20;
    // time(32 MiB) / time(4 MiB) = 8 * rate(4 MiB) / rate(32 MiB); 8 is perfectly linear.
    let (small, large, rounds) = (4u64 << 20, 32u64 << 20, scaled(4, 1));
    vec![
        row("seq", "us/call", || seq_raw(n_seq), |m| seq(m, n_seq)),
        row(
            "pipe (256)",
            "calls/s",
            || pipe_raw(n_pipe),
            |m| pipe(m, n_pipe),
        ),
        row(
            "blob 8 MiB",
            "MB/s",
            || blob_raw(mb8, blob_rounds),
            |m| blob(m, mb8, blob_rounds),
        ),
        row(
            "notify",
            "notes/s",
            || notify_raw(n_notify),
            |m| notify(m, n_notify),
        ),
        row(
            "spawn+init+close",
            "ms",
            || spawn_raw(spawns),
            |m| spawn(m, spawns),
        ),
        row(
            "32 MiB / 4 MiB time",
            "x",
            || 8.0 * blob_raw(small, rounds * 4) / blob_raw(large, rounds),
            |m| 8.0 * blob(m, small, rounds * 4) / blob(m, large, rounds),
        ),
    ]
}

/// The client on the background thread against the bench server, in the era
/// `modern` says: `n` sequential tool calls (µs each), or `n` calls with
/// WINDOW in flight (calls per second).
/// `mode`: `legacy` or `modern`, and `+restart` for a client with a restart policy.
/// Pipelined with `window` calls in flight.
/// The tool catalog's rows, µs per call: `tools` (the list from a warm cache),
/// `validate-off` and `validate-on` (a `tools/call` whose ten arguments are
/// checked against the tool's schema; `on` needs `--features validate`).
fn client_catalog(mode: &str, n: u64) -> f64 {
    use stdio_mcp::client::{Client, Era};
    futures::executor::block_on(async {
        let builder = Client::builder(Transport::builder([server_exe()])).era(Era::Legacy);
        #[cfg(feature = "validate")]
        let builder = builder.validate_arguments(match mode {
            "validate-on" => stdio_mcp::client::Validation::Enforce,
            _ => stdio_mcp::client::Validation::Off,
        });
        #[cfg(not(feature = "validate"))]
        assert!(
            mode != "validate-on",
            "validate-on needs --features validate"
        );
        let client = builder.connect().await.unwrap();
        let args = json!({
            "p0": "a", "p1": 1, "p2": 1.5, "p3": true, "p4": "e",
            "p5": "f", "p6": 6, "p7": 7.5, "p8": false, "p9": "j"
        });
        let once = || async {
            match mode {
                "tools" => drop(client.tools().await.unwrap()),
                _ => drop(client.call_tool("echo", &args).await.unwrap()),
            }
        };
        for _ in 0..1000 {
            once().await;
        }
        let start = Instant::now();
        for _ in 0..n {
            once().await;
        }
        let micros = start.elapsed().as_secs_f64() * 1e6 / n as f64;
        client.close().await.unwrap();
        micros
    })
}

fn client_calls(mode: &str, n: u64, pipelined: bool, window: usize) -> f64 {
    use stdio_mcp::client::{Client, Era, RestartPolicy};
    let modern = mode.starts_with("modern");
    let args: &[&str] = if modern {
        &[server_exe(), "--modern"]
    } else {
        &[server_exe()]
    };
    futures::executor::block_on(async {
        let mut builder = Client::builder(Transport::builder(args)).era(if modern {
            Era::Modern
        } else {
            Era::Legacy
        });
        if mode.ends_with("+restart") {
            builder = builder.restart(RestartPolicy::default());
        }
        let client = builder.connect().await.unwrap();
        let call = || client.call_tool("echo", json!({ "n": 1 }));
        for _ in 0..1000 {
            call().await.unwrap();
        }
        let start = Instant::now();
        if pipelined {
            let mut in_flight = FuturesUnordered::new();
            let mut sent = 0;
            while sent < n || !in_flight.is_empty() {
                while sent < n && in_flight.len() < window {
                    in_flight.push(call());
                    sent += 1;
                }
                in_flight.next().await.unwrap().unwrap();
            }
        } else {
            for _ in 0..n {
                call().await.unwrap();
            }
        }
        let secs = start.elapsed().as_secs_f64();
        client.close().await.unwrap();
        if pipelined {
            n as f64 / secs
        } else {
            secs * 1e6 / n as f64
        }
    })
}

fn child_main(label: &str) {
    if let Ok(spec) = env::var("BENCH_ONE") {
        // For profiling one workload: BENCH_ONE=workload,mode[,size MiB,rounds]
        // with workload seq|pipe|notify|spawn|spawn-paired|blob|floor|local-floor and mode
        // raw|thread|local|same; or client-seq|client-pipe with mode modern|legacy,
        // either with +restart (a client with a restart policy), and for
        // client-pipe the calls in flight after the count (default WINDOW); or
        // client-catalog with mode tools|validate-off|validate-on.
        let parts: Vec<&str> = spec.split(',').collect();
        let mode = match parts.get(1).copied().unwrap_or("thread") {
            "raw" => None,
            "local" => Some(Mode::Local),
            "same" => Some(Mode::SameTask),
            _ => Some(Mode::Thread),
        };
        let arg = |i: usize, default: u64| parts.get(i).map_or(default, |p| p.parse().unwrap());
        let figure = match (parts[0], mode) {
            ("seq", None) => seq_raw(arg(2, 50_000)),
            ("seq", Some(m)) => seq(m, arg(2, 50_000)),
            ("floor", _) => seq_async_io_floor(arg(2, 50_000)),
            ("local-floor", _) => seq_local_task_floor(arg(2, 50_000)),
            ("pipe", None) => pipe_raw(arg(2, 500_000)),
            ("pipe", Some(m)) => pipe(m, arg(2, 500_000)),
            ("notify", None) => notify_raw(arg(2, 200_000)),
            ("notify", Some(m)) => notify(m, arg(2, 200_000)),
            ("spawn", None) => spawn_raw(arg(2, 200)),
            ("spawn", Some(m)) => spawn(m, arg(2, 200)),
            ("spawn-paired", _) => spawn_paired(arg(2, 300)).0,
            ("client-seq", _) => client_calls(parts[1], arg(2, 20_000), false, 1),
            ("client-catalog", _) => client_catalog(parts[1], arg(2, 20_000)),
            ("client-pipe", _) => client_calls(
                parts[1],
                arg(2, 100_000),
                true,
                arg(3, WINDOW as u64) as usize,
            ),
            ("blob", None) => blob_raw(arg(2, 8) << 20, arg(3, 10)),
            ("blob", Some(m)) => blob(m, arg(2, 8) << 20, arg(3, 10)),
            _ => panic!("unknown workload {spec}"),
        };
        println!("{figure:.3}");
        return;
    }
    if env::var_os("BENCH_SIZES").is_some() {
        for shift in [20u32, 21, 22, 23, 24, 25] {
            let bytes = 1u64 << shift;
            let rounds = (256u64 << 20) / bytes;
            let cpu0 = cpu_seconds();
            let raw = blob_raw(bytes, rounds);
            let cpu1 = cpu_seconds();
            let ours = blob(Mode::Local, bytes, rounds);
            let cpu2 = cpu_seconds();
            println!(
                "SIZE {} MiB raw {:.0} MB/s ({:.1} ms cpu/MiB) local {:.0} MB/s ({:.1} ms cpu/MiB)",
                bytes >> 20,
                raw,
                (cpu1 - cpu0) * 1e3 / 256.0,
                ours,
                (cpu2 - cpu1) * 1e3 / 256.0
            );
        }
        return;
    }
    let rows = rows();
    for r in &rows {
        // Each mode's figure, then its ratio to raw.
        let ours: Vec<String> = r
            .ours
            .iter()
            .zip(&r.ratios)
            .map(|(figure, ratio)| format!("{figure}\t{ratio}"))
            .collect();
        println!(
            "ROW\t{label}\t{}\t{}\t{}\t{}",
            r.name,
            r.unit,
            r.raw,
            ours.join("\t")
        );
    }
    // What async-io itself costs: one task, no transport, no hand-off between
    // tasks; then with the I/O in a task of its own on a LocalExecutor ("local
    // task"). Each in blocks with raw's own, like the rows.
    let n_floor = scaled(20_000, 2_000);
    let (_, floors) = in_blocks(
        || seq_raw(n_floor),
        2,
        |i| match i {
            0 => seq_async_io_floor(n_floor),
            _ => seq_local_task_floor(n_floor),
        },
    );
    let (floor, ratio) = floors[0];
    println!(
        "{label}: seq floor of a single-task async-io client (no transport): {floor:.2} us/call = {ratio:.2}x raw"
    );
    let (floor, ratio) = floors[1];
    println!(
        "{label}: seq floor of a two-task LocalExecutor async-io client (no transport): {floor:.2} us/call = {ratio:.2}x raw"
    );
    // The 2026-07-28 era puts the protocol fields in every request's _meta:
    // what that costs, modern against legacy in blocks (the client on the thread).
    let (n_seq, n_pipe) = (scaled(20_000, 2_000), scaled(100_000, 10_000));
    for (name, unit, pipelined, n) in [
        ("seq", "us/call", false, n_seq),
        ("pipe (256)", "calls/s", true, n_pipe),
    ] {
        // Modern against legacy; then a client with a restart policy (it asks
        // its Life for the process at each call) against one without.
        for (mode, what) in [
            ("modern", "modern era"),
            ("legacy+restart", "with a restart policy"),
        ] {
            let (legacy, other) = in_blocks(
                || client_calls("legacy", n, pipelined, WINDOW),
                1,
                |_| client_calls(mode, n, pipelined, WINDOW),
            );
            let (other, ratio) = other[0];
            println!(
                "{label}: client tools/call {name}: {what} {} vs legacy {} {unit} = {ratio:.3}x legacy",
                fmt(other),
                fmt(legacy)
            );
        }
    }
    let (ratio, raw, ours) = spawn_paired(scaled(500, 50));
    println!(
        "{label}: spawn+init+close on the thread, rounds in turn with raw's: median round {ours:.3} ms vs raw {raw:.3} ms; median of the rounds' ratios {ratio:.3}x"
    );
    let transports = 200;
    let pending = scaled(100_000, 20_000);
    for mode in [Mode::Thread, Mode::Local] {
        let s = scale(mode, transports, pending);
        let name = if mode == Mode::Thread {
            "thread"
        } else {
            "local"
        };
        println!(
            "SCALE\t{label}\t{name}\t{}\t{}\t{:.0}\t{:.0}\t{:.0}\t{:.1}\t{:.1}",
            s.threads_before,
            s.threads_with_200,
            s.idle_bytes,
            s.pending_bytes,
            s.pending_json,
            s.rss_base_mb,
            s.rss_after_mb
        );
    }
}

fn fmt(v: f64) -> String {
    if v >= 1000.0 {
        format!("{:.0}", v)
    } else if v >= 10.0 {
        format!("{:.1}", v)
    } else {
        format!("{:.2}", v)
    }
}

fn main() {
    if let Ok(label) = env::var("STDIO_MCP_BENCH_CHILD") {
        return child_main(&label);
    }
    if env::args().any(|a| a == "--list") {
        return; // `cargo bench -- --list` and friends: nothing to list
    }
    let exe = env::current_exe().unwrap();
    let mut rows = Vec::new();
    let mut scale_rows = Vec::new();
    for (label, pinned) in [("pinned", true), ("unpinned", false)] {
        let mut command = if pinned {
            let mut c = Command::new("taskset");
            c.args(["-c", "0"]).arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        let started = Instant::now();
        let output = command
            .env("STDIO_MCP_BENCH_CHILD", label)
            .stderr(Stdio::inherit())
            .output()
            .expect("run the bench child (is taskset installed?)");
        assert!(output.status.success(), "{label} run failed");
        eprintln!("{label} run took {:.1?}", started.elapsed());
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            let cols: Vec<String> = line.split('\t').map(str::to_owned).collect();
            match cols.first().map(String::as_str) {
                Some("ROW") => rows.push(cols),
                Some("SCALE") => scale_rows.push(cols),
                _ => println!("{line}"),
            }
        }
    }
    println!(
        "\n| run | workload | unit | raw | thread | ×raw | local task | ×raw | same task | ×raw |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for c in &rows {
        let v: Vec<f64> = c[4..].iter().map(|x| x.parse().unwrap()).collect();
        let ours: Vec<String> = v[1..]
            .chunks(2)
            .map(|pair| format!("{} | {:.2}", fmt(pair[0]), pair[1]))
            .collect();
        println!(
            "| {} | {} | {} | {} | {} |",
            c[1],
            c[2],
            c[3],
            fmt(v[0]),
            ours.join(" | ")
        );
    }
    println!("\n| run | driver | threads before | threads with 200 transports | bytes per idle transport | bytes per pending request | its JSON line | RSS MB before 100k pending | RSS MB after |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for c in &scale_rows {
        println!("| {} |", c[1..].join(" | "));
    }
    linear_in_instructions(&exe);
}

/// The client's instructions for one result of 4 MiB and of 32 MiB, counted by
/// callgrind (immune to caches and to the other core): the ratio shows whether any
/// buffering is worse than linear. Each size is run for 1 and for k rounds; the
/// difference divided by k - 1 is the cost of one request, start-up excluded.
fn linear_in_instructions(exe: &std::path::Path) {
    if env::var_os("BENCH_SKIP_CALLGRIND").is_some()
        || Command::new("valgrind").arg("--version").output().is_err()
    {
        println!("\n(valgrind not found: instruction-count linearity check skipped)");
        return;
    }
    let instructions = |mib: u64, rounds: u64| -> f64 {
        let out = Command::new("valgrind")
            .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
            .arg(exe)
            .env("STDIO_MCP_BENCH_CHILD", "callgrind")
            .env("BENCH_ONE", format!("blob,local,{mib},{rounds}"))
            .output()
            .expect("valgrind");
        let text = String::from_utf8_lossy(&out.stderr);
        let line = text
            .lines()
            .find(|l| l.contains("Collected :"))
            .expect("callgrind total");
        line.rsplit(':').next().unwrap().trim().parse().unwrap()
    };
    let per_request =
        |mib, rounds| (instructions(mib, rounds) - instructions(mib, 1)) / (rounds - 1) as f64;
    let small = per_request(4, 5);
    let large = per_request(32, 2);
    println!(
        "\nlinear cost (callgrind, client instructions per request, driver on the caller's executor):\n\
         | result | instructions | per byte |\n|---|---|---|\n\
         | 4 MiB | {small:.0} | {:.2} |\n| 32 MiB | {large:.0} | {:.2} |\n\
         32 MiB / 4 MiB = {:.2}x (target <= 8.5x)",
        small / (4 << 20) as f64,
        large / (32 << 20) as f64,
        large / small
    );
}
