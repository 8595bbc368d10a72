//! A host process over a group, run as a separate process (this test binary
//! again, with `STDIO_MCP_GROUP_HOST` set): whether it closes the group and
//! exits at once, or is killed, nothing it started runs on. Linux: the
//! process table is read from `/proc`.
#![cfg(target_os = "linux")]

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{peer_exe, run};
use serde_json::json;
use stdio_mcp::config::Config;
use stdio_mcp::group::Group;

/// The host's group: a good server, and one that never reads its stdin (its
/// start limit runs out, and its close needs the ladder's SIGTERM). Each
/// carries `marker` on its command line, so the test finds its processes.
fn hosted(marker: &str) -> Config {
    let config = json!({ "mcpServers": {
        "good": { "command": peer_exe(), "args": ["--log-start", format!("{marker}-good")] },
        "mute": { "command": peer_exe(), "args": ["--no-read", "--log-start", format!("{marker}-mute")] },
    } });
    Config::parse(&config.to_string()).unwrap()
}

/// The host, when asked for: `close` closes the group and exits at once;
/// `crash` waits to be killed.
#[test]
fn group_host_helper() {
    let Ok(task) = std::env::var("STDIO_MCP_GROUP_HOST") else {
        return;
    };
    let (mode, marker) = task.split_once(':').unwrap();
    run(30, async {
        let mut builder = Group::builder(hosted(marker));
        if mode == "close" {
            // Only close() is to see to it here, not the watchdog.
            builder = builder.transport(|_, t| t.kill_on_parent_death(false));
        }
        let group = builder
            .start_timeout(Duration::from_millis(300))
            .ready_within(Duration::from_millis(100))
            .connect()
            .await;
        println!("host-connected");
        if mode == "close" {
            group.close().await;
            println!("host-closed");
        } else {
            let _ = group.client("good").await;
            println!("host-waiting");
            std::thread::sleep(Duration::from_secs(30));
        }
    });
}

/// The processes whose command line holds `marker`, that are not zombies.
fn running_with(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let held = String::from_utf8_lossy(&cmdline).contains(marker);
        if held && !matches!(common::process_state(pid), None | Some('Z')) {
            found.push(pid);
        }
    }
    found
}

/// Starts the host in `mode` and reads its stdout until it says `until`.
fn host(mode: &str, marker: &str, until: &str) -> std::process::Child {
    let mut host = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "group_host_helper",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("STDIO_MCP_GROUP_HOST", format!("{mode}:{marker}"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = host.stdout.take().unwrap();
    let (said, heard) = std::sync::mpsc::channel();
    let until = until.to_owned();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.contains(&until) {
                let _ = said.send(());
            }
        }
    });
    heard
        .recv_timeout(Duration::from_secs(15))
        .expect("the host got that far");
    host
}

/// A name of this run's own, in the temporary folder (the servers log
/// their start to files named after it).
fn marker(test: &str) -> String {
    let name = format!("stdio-mcp-host-{test}-{}", std::process::id());
    std::env::temp_dir().join(name).display().to_string()
}

#[test]
fn a_host_that_exits_right_after_close_leaves_no_process_behind() {
    let marker = marker("close");
    let started = Instant::now();
    let mut host = host("close", &marker, "host-closed");
    let status = host.wait().unwrap();
    assert!(status.success());
    assert_eq!(running_with(&marker), Vec::<u32>::new());
    // The mute server was still starting when close() was called, and
    // needs the ladder's SIGTERM: close() waited for its exit.
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    // Both were started: the marker files say so.
    for server in ["good", "mute"] {
        let log = format!("{marker}-{server}");
        assert!(std::path::Path::new(&log).exists(), "{server} started");
        let _ = std::fs::remove_file(log);
    }
}

#[test]
fn a_host_that_is_killed_takes_its_servers_down() {
    let marker = marker("crash");
    let mut host = host("crash", &marker, "host-waiting");
    let before = running_with(&marker);
    assert!(!before.is_empty());
    host.kill().unwrap(); // SIGKILL: no chance to clean up
    host.wait().unwrap();
    run(
        10,
        common::eventually(5, || running_with(&marker).is_empty()),
    );
    for server in ["good", "mute"] {
        let _ = std::fs::remove_file(format!("{marker}-{server}"));
    }
}
