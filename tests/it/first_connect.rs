//! Connecting quickly (DESIGN.md): a second probe reaches only a server that
//! read the first and left it unanswered, so one whose session died on it
//! (the Python SDK before 1.9.4) is found out in about a second, and nothing
//! changes for the others: a server that answers sees one probe, a slow
//! starter keeps its era and is started once, a silent one still gets
//! `probe_timeout`.

use crate::common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::{peer, run};
use stdio_mcp::client::{Client, Era};

/// A file of the test's own, gone before and after.
struct Scratch(PathBuf);

impl Scratch {
    fn new(what: &str) -> Self {
        let path = std::env::temp_dir().join(format!(
            "stdio-mcp-first-connect-{what}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&path);
        Scratch(path)
    }

    fn arg(&self) -> &str {
        self.0.to_str().unwrap()
    }

    /// The lines in the file: one per process started (`--log-start`), or
    /// every line the peer read (`--log-lines`).
    fn lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.0)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// How many of the lines the peer read were `server/discover` probes.
fn probes(read: &Scratch) -> usize {
    read.lines()
        .iter()
        .filter(|line| line.contains("\"server/discover\""))
        .count()
}

async fn timed_connect(builder: stdio_mcp::TransportBuilder, era: Era) -> (Client, Duration) {
    let started = Instant::now();
    let client = Client::builder(builder).era(era).connect().await.unwrap();
    (client, started.elapsed())
}

/// A server that starts slowly and dies quietly on the probe (as
/// mcp-server-fetch 2025.4.7 does, about 2 s to start) costs one more start:
/// at most twice its handshake-only connect, plus 1 s.
#[test]
fn a_slow_starter_dying_quietly_costs_one_more_start() {
    run(30, async {
        let (starts, legacy_starts) = (Scratch::new("slow-dier"), Scratch::new("slow-legacy"));
        let flags = |log: &Scratch| {
            peer(&[
                "--discover",
                "die-quietly",
                "--start-delay",
                "1500",
                "--log-start",
                log.arg(),
            ])
        };
        let (legacy, handshake_only) = timed_connect(flags(&legacy_starts), Era::Legacy).await;
        legacy.close().await.unwrap();
        let (client, took) = timed_connect(flags(&starts), Era::Auto).await;
        assert_eq!(client.era(), Era::Legacy);
        assert!(
            took <= handshake_only * 2 + Duration::from_secs(1),
            "{took:?} against a handshake-only connect of {handshake_only:?}"
        );
        assert_eq!(starts.lines().len(), 2, "the probed process and the next");
        client.close().await.unwrap();
    });
}

/// A modern server slower to start than the probe's first second sees one
/// probe and nothing else before its answer: the client sees that it has not
/// read the probe yet (Linux tells; elsewhere the second probe comes at 1 s,
/// which such a server answers too).
#[cfg(target_os = "linux")]
#[test]
fn a_slow_server_that_answers_sees_one_probe() {
    run(20, async {
        let read = Scratch::new("slow-modern");
        let builder = peer(&[
            "--discover",
            "modern",
            "--start-delay",
            "1500",
            "--log-lines",
            read.arg(),
        ]);
        let (client, took) = timed_connect(builder, Era::Auto).await;
        assert_eq!(client.era(), Era::Modern);
        assert!(took >= Duration::from_millis(1500), "{took:?}");
        client.close().await.unwrap();
        assert_eq!(probes(&read), 1, "{:?}", read.lines());
    });
}

/// A legacy server that takes 3 s to start (an `npx`/`uvx` fetch) and
/// answers the probe with an error keeps its era, is started once, and (where
/// the system tells whether it read its input) sees one probe.
#[test]
fn a_slow_legacy_starter_keeps_its_era_and_starts_once() {
    run(20, async {
        let (starts, read) = (
            Scratch::new("slow-legacy-starts"),
            Scratch::new("slow-legacy-read"),
        );
        let builder = peer(&[
            "--start-delay",
            "3000",
            "--log-start",
            starts.arg(),
            "--log-lines",
            read.arg(),
        ]);
        let (client, _) = timed_connect(builder, Era::Auto).await;
        assert_eq!(client.era(), Era::Legacy);
        client.close().await.unwrap();
        assert_eq!(starts.lines().len(), 1);
        if cfg!(target_os = "linux") {
            assert_eq!(probes(&read), 1, "{:?}", read.lines());
        }
    });
}

/// A legacy server that reads the probe and never answers it is alive and
/// silent: it gets `probe_timeout`, then the handshake on the same process.
#[test]
fn a_silent_server_still_gets_the_whole_probe_timeout() {
    run(20, async {
        let starts = Scratch::new("silent-starts");
        let probe_timeout = Duration::from_secs(2);
        let builder = peer(&["--discover", "silent", "--log-start", starts.arg()]);
        let started = Instant::now();
        let client = Client::builder(builder)
            .probe_timeout(probe_timeout)
            .connect()
            .await
            .unwrap();
        let took = started.elapsed();
        assert_eq!(client.era(), Era::Legacy);
        assert!(took >= probe_timeout, "{took:?}");
        assert!(took < probe_timeout + Duration::from_secs(1), "{took:?}");
        client.close().await.unwrap();
        assert_eq!(starts.lines().len(), 1);
    });
}
