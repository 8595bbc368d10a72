//! Hundreds of spawn/close cycles leave no file descriptor, thread, child process
//! or zombie behind. Alone in its own test binary so nothing else moves the counts.

// Counts descriptors, threads and children through Linux's /proc.
#![cfg(target_os = "linux")]

mod common;

use std::fs;

use common::{eventually, peer, run};
use serde_json::json;

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

/// Our child processes (zombies included), from each process's parent pid.
fn children() -> usize {
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
        .filter(|stat| {
            let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
            after.split_whitespace().nth(1) == Some(me.as_str())
        })
        .count()
}

#[test]
fn a_thousand_cycles_leak_nothing() {
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
