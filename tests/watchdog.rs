//! The watchdog at its edges (DESIGN.md, "The process tree", "At its edges"),
//! through real processes on Linux, whose /proc shows memory and parents:
//! it holds none of the host's memory; a host that forks without exec gets
//! a watchdog of its own in the copy, and neither side's end touches the
//! other's servers; a watchdog that is killed is replaced while the host
//! runs, so the host's SIGKILL still leaves nothing. The host is this test
//! binary run again (`STDIO_MCP_WATCHDOG_HOST` names what it does).
#![cfg(target_os = "linux")]

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{dead, eventually, peer, run, Leftovers};

/// How long a host's servers may outlive it (DESIGN.md, "The process tree").
const WITHIN: u64 = 5;
/// The buffer the memory host rewrites after its first spawn.
const BUFFER: usize = 400 << 20;

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 2..].split(' ').nth(1)?.parse().ok()
}

/// Whether `pid` is a watchdog: named `stdio-mcp-watch` in its command line
/// or, for one forked from its host, in its thread name.
fn is_watchdog(pid: u32) -> bool {
    let argv0 = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    argv0.split(|b| *b == 0).next() == Some(b"stdio-mcp-watch") || comm.trim() == "stdio-mcp-watch"
}

/// The live watchdogs whose parent is `host`.
fn watchdogs_of(host: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| parent_of(pid) == Some(host) && !dead(pid) && is_watchdog(pid))
        .collect()
}

/// A field of `/proc/PID/smaps_rollup`, in KiB.
fn rollup_kib(pid: u32, field: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap();
    text.lines()
        .find_map(|line| {
            line.strip_prefix(field)?
                .trim()
                .strip_suffix("kB")?
                .trim()
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no {field} in {text}"))
}

/// Prints a line for the test to read, at once.
fn say(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// The host, when run as one (else it returns at once).
#[test]
fn host() {
    let Ok(what) = std::env::var("STDIO_MCP_WATCHDOG_HOST") else {
        return;
    };
    let server = || peer(&["--no-read", "--ignore-term"]).spawn().unwrap();
    // What the host holds until it is killed.
    let mut held = Vec::new();
    match what.as_str() {
        "memory" => {
            let mut buffer = vec![1u8; BUFFER];
            let t = server();
            // Every page written again after the watchdog started.
            for byte in buffer.iter_mut().step_by(4096) {
                *byte = 2;
            }
            held.push(std::hint::black_box(buffer));
            say(&format!("ready {}", t.pid()));
            std::mem::forget(t);
        }
        "fork" => {
            let t = server();
            match stdio_mcp_testkit::host::fork().unwrap() {
                Some(copy) => say(&format!(
                    "host {} server {} copy {copy}",
                    std::process::id(),
                    t.pid()
                )),
                None => {
                    if std::env::var_os("STDIO_MCP_COPY_SPAWNS").is_some() {
                        let own = server();
                        say(&format!("copy {} server {}", std::process::id(), own.pid()));
                        std::mem::forget(own);
                    } else {
                        say(&format!("copy {} server none", std::process::id()));
                    }
                }
            }
            std::mem::forget(t);
        }
        "plain" => {
            let t = server();
            say(&format!("ready {}", t.pid()));
            std::mem::forget(t);
        }
        other => panic!("no such host: {other}"),
    }
    // Killed by the test.
    std::thread::sleep(Duration::from_secs(120));
    drop(held);
}

/// Runs the host `what`: the process and the lines it prints.
fn start_host(what: &str, env: &[(&str, &str)]) -> (Child, mpsc::Receiver<String>) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", "host", "--nocapture", "--test-threads=1"])
        .env("STDIO_MCP_WATCHDOG_HOST", what)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    let mut host = command.spawn().unwrap();
    let stdout = host.stdout.take().unwrap();
    let (lines, heard) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            // libtest prints "test host ... " before the host's own output.
            let line = line.trim_start_matches("test host ... ").to_owned();
            if lines.send(line).is_err() {
                return;
            }
        }
    });
    (host, heard)
}

/// The next line the host printed that starts with `word`, split in words.
fn next_line(heard: &mpsc::Receiver<String>, word: &str) -> Vec<String> {
    loop {
        let line = heard
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("the host never printed a {word:?} line"));
        if line.starts_with(word) {
            return line.split(' ').map(str::to_owned).collect();
        }
    }
}

fn number(words: &[String], after: &str) -> u32 {
    let at = words.iter().position(|w| w == after).unwrap();
    words[at + 1].parse().unwrap()
}

fn sigkill(pid: u32) {
    common::kill_pid(pid);
}

#[test]
fn the_watchdog_holds_none_of_the_memory_the_host_rewrites() {
    let (mut host, heard) = start_host("memory", &[]);
    let words = next_line(&heard, "ready");
    let server = number(&words, "ready");
    let _leftovers = Leftovers(vec![host.id(), server]);
    let dogs = watchdogs_of(host.id());
    assert_eq!(dogs.len(), 1, "one watchdog: {dogs:?}");
    let private = rollup_kib(dogs[0], "Private_Dirty:") + rollup_kib(dogs[0], "Private_Clean:");
    let host_private = rollup_kib(host.id(), "Private_Dirty:");
    eprintln!("watchdog private {private} KiB; host private dirty {host_private} KiB");
    assert!(
        host_private > (BUFFER as u64 >> 10),
        "the host holds its buffer"
    );
    assert!(
        private < 8 << 10,
        "the watchdog holds {private} KiB of its own (the host rewrote {} MiB)",
        BUFFER >> 20
    );
    host.kill().unwrap();
    host.wait().unwrap();
    run(20, eventually(WITHIN, || dead(server)));
}

/// A forked copy that spawned its own server ends: its server goes with
/// it, the original's stays; then the original ends, and its server goes.
#[test]
fn a_forked_copy_and_its_original_each_end_only_their_own_servers() {
    let (mut host, heard) = start_host("fork", &[("STDIO_MCP_COPY_SPAWNS", "1")]);
    let original = next_line(&heard, "host");
    let copied = next_line(&heard, "copy");
    let (host_server, copy) = (number(&original, "server"), number(&copied, "copy"));
    let copy_server = number(&copied, "server");
    assert_eq!(number(&original, "copy"), copy);
    let _leftovers = Leftovers(vec![host.id(), copy, host_server, copy_server]);
    run(40, async {
        eventually(10, || watchdogs_of(copy).len() == 1).await;
        sigkill(copy);
        eventually(WITHIN, || dead(copy_server)).await;
        // The copy's watchdog's whole ladder (1 s, SIGTERM, 1 s, SIGKILL) is over by now.
        async_io::Timer::after(Duration::from_secs(3)).await;
        assert!(
            !dead(host_server),
            "the copy's end took the original's server"
        );
        host.kill().unwrap();
        host.wait().unwrap();
        eventually(WITHIN, || dead(host_server)).await;
    });
}

/// The original ends while a copy that started nothing lives on: the
/// copy holds nothing that keeps the original's watchdog waiting.
#[test]
fn an_original_ends_its_servers_while_its_forked_copy_lives() {
    let (mut host, heard) = start_host("fork", &[]);
    let original = next_line(&heard, "host");
    let copied = next_line(&heard, "copy");
    let (host_server, copy) = (number(&original, "server"), number(&copied, "copy"));
    let _leftovers = Leftovers(vec![host.id(), copy, host_server]);
    run(40, async {
        host.kill().unwrap();
        host.wait().unwrap();
        eventually(WITHIN, || dead(host_server)).await;
        assert!(!dead(copy), "the copy was ended with its original");
        sigkill(copy);
    });
}

/// The watchdog killed: another is there while the host runs, and the
/// host's SIGKILL then leaves nothing.
#[test]
fn a_killed_watchdog_is_replaced_while_the_host_runs() {
    let (mut host, heard) = start_host("plain", &[]);
    let server = number(&next_line(&heard, "ready"), "ready");
    let _leftovers = Leftovers(vec![host.id(), server]);
    run(40, async {
        let first = watchdogs_of(host.id());
        assert_eq!(first.len(), 1, "{first:?}");
        sigkill(first[0]);
        let killed = Instant::now();
        eventually(10, || {
            let now = watchdogs_of(host.id());
            now.len() == 1 && now[0] != first[0]
        })
        .await;
        eprintln!("a new watchdog within {:?} of the kill", killed.elapsed());
        host.kill().unwrap();
        host.wait().unwrap();
        eventually(WITHIN, || dead(server)).await;
    });
}
