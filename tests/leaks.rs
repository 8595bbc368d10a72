//! Hundreds of spawn/close cycles leave no file descriptor, thread, child process
//! or zombie behind. Alone in its own test binary so nothing else moves the counts.

// Counts descriptors, threads and children through Linux's /proc.
#![cfg(target_os = "linux")]

mod common;

use std::fs;
use std::sync::Mutex;
use std::time::Duration;

use common::{eventually, peer, run};
use serde_json::json;
use stdio_mcp::client::{CallOptions, Client, Era, RestartPolicy};

fn open_fds() -> usize {
    fs::read_dir("/proc/self/fd").unwrap().count()
}

fn fd_targets() -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| format!("{:?} -> {:?}", e.file_name(), fs::read_link(e.path()).ok()))
        .collect();
    v.sort();
    v
}

fn threads() -> usize {
    fs::read_dir("/proc/self/task").unwrap().count()
}

/// Our child processes (zombies included), from each process's parent pid,
/// but for the watchdog (one per process, for as long as it lives).
fn children() -> usize {
    our_children().filter(|stat| !is_watchdog(stat)).count()
}

/// The watchdogs among our children: one however many servers ran.
fn watchdogs() -> usize {
    our_children().filter(|stat| is_watchdog(stat)).count()
}

/// Named `stdio-mcp-watch` in its command line (it runs `/bin/sh`).
fn is_watchdog(stat: &str) -> bool {
    let pid = stat.split(' ').next().unwrap_or_default();
    let argv = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    argv.split(|b| *b == 0).next() == Some(b"stdio-mcp-watch".as_slice())
}

/// The `stat` lines of our child processes.
fn our_children() -> impl Iterator<Item = String> {
    let me = std::process::id().to_string();
    fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|e| fs::read_to_string(e.path().join("stat")).ok())
        .filter(move |stat| {
            let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
            after.split_whitespace().nth(1) == Some(me.as_str())
        })
}

/// The tests here count the whole process: one at a time.
static ALONE: Mutex<()> = Mutex::new(());

#[test]
fn a_thousand_cycles_leak_nothing() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    run(120, async {
        // Warm up: the first spawns start the background, reactor and reaper
        // threads and their descriptors; both ways of ending are exercised once.
        for close in [true, false] {
            let t = peer(&[]).spawn().unwrap();
            t.send_request("ping", None).await.unwrap();
            if close {
                t.close().await.unwrap();
            }
        }
        eventually(5, || children() == 0).await;
        let (fds, thread_count) = (open_fds(), threads());
        let before = fd_targets();

        for i in 0..500 {
            let t = peer(&[]).spawn().unwrap();
            assert_eq!(
                t.send_request("test/echo", Some(json!(i))).await.unwrap(),
                json!(i)
            );
            t.close().await.unwrap();
        }
        eventually(10, || children() == 0).await;
        assert_eq!(watchdogs(), 1, "one watchdog for 502 servers");
        // At most the starting count: the baseline may still have held a warm-up
        // driver's descriptors, while one leak per cycle would show as 500 more.
        eventually(5, || open_fds() <= fds).await;
        let after = fd_targets();
        assert!(
            after.len() <= before.len(),
            "file descriptors after 500 closes: {before:?} then {after:?}"
        );
        assert!(threads() <= thread_count, "threads after 500 closes");

        for i in 0..500 {
            let t = peer(&[]).spawn().unwrap();
            assert_eq!(
                t.send_request("test/echo", Some(json!(i))).await.unwrap(),
                json!(i)
            );
            drop(t); // no close: the driver closes the child once every handle is gone
        }
        eventually(20, || children() == 0).await;
        eventually(10, || open_fds() <= fds).await;
        assert!(threads() <= thread_count, "threads after 500 drops");
    });
}

#[test]
fn two_hundred_crash_and_restart_cycles_leak_nothing() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    run(120, async {
        let policy = RestartPolicy::new()
            .max_restarts(1000)
            .within(Duration::from_secs(600))
            .backoff(Duration::ZERO, Duration::ZERO);
        // Warm up: one crash and restart of each era starts every thread there is.
        for era in [Era::Legacy, Era::Modern] {
            let client = connect(era, policy).await;
            crash_and_call(&client, 0).await;
            client.close().await.unwrap();
        }
        eventually(5, || children() == 0).await;
        let (fds, thread_count) = (open_fds(), threads());
        let before = fd_targets();

        for (era, cycles) in [(Era::Modern, 150), (Era::Legacy, 50)] {
            let client = connect(era, policy).await;
            for i in 1..=cycles {
                crash_and_call(&client, i).await;
                // The crashed process is reaped: only the running one is ours.
                eventually(5, || children() == 1).await;
            }
            assert_eq!(client.restarts(), cycles);
            client.close().await.unwrap();
        }
        eventually(10, || children() == 0).await;
        eventually(10, || open_fds() <= fds).await;
        let after = fd_targets();
        assert!(
            after.len() <= before.len(),
            "file descriptors after 200 restarts: {before:?} then {after:?}"
        );
        assert!(threads() <= thread_count, "threads after 200 restarts");
    });
}

async fn connect(era: Era, policy: RestartPolicy) -> Client {
    let flags: &[&str] = match era {
        Era::Modern => &["--discover", "modern"],
        _ => &[],
    };
    Client::builder(peer(flags))
        .era(era)
        .restart(policy)
        .connect()
        .await
        .unwrap()
}

/// The server crashes on a call; the next call goes to its successor.
async fn crash_and_call(client: &Client, i: u64) {
    let crashed = client
        .request("test/exit", Some(json!({"code": 1})), CallOptions::new())
        .await
        .unwrap_err();
    assert_eq!(
        crashed.to_string(),
        "server \"stdio-mcp-peer\": MCP server process exited (code 1)"
    );
    let echoed = client
        .request("test/echo", Some(json!({"i": i})), CallOptions::new())
        .await
        .unwrap();
    assert_eq!(echoed["i"], i);
}
