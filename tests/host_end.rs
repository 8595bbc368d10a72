//! No server outlives its host, with the defaults, however the host ends:
//! `main` returns or `std::process::exit` with the server never closed, a
//! panic, SIGTERM, SIGKILL. The host is this test binary run again as a
//! separate process (`STDIO_MCP_HOST_END` names how it ends); the server is a
//! wrapper that ignores EOF and SIGTERM, with a grandchild on its pipes.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{dead, eventually, peer, run, Leftovers};

/// How long a host's servers may outlive it (DESIGN.md, "The process tree").
const WITHIN: u64 = 5;

/// The host, when run as one: starts a server with the defaults, prints the
/// pids of the server and its grandchild (and, with `unrelated`, of a process
/// group the crate did not make), then ends as `how` says. Run as a plain
/// test, it checks that such a server answers and that close ends its tree.
#[test]
fn host() {
    let how = std::env::var("STDIO_MCP_HOST_END").ok();
    let mut server = peer(&["--grandchild", "--ignore-eof", "--ignore-term"]);
    let sandboxed = std::env::var_os("STDIO_MCP_HOST_SANDBOX").is_some();
    if sandboxed {
        server = server.sandbox(stdio_mcp::Sandbox::new());
    }
    let t = server.spawn().unwrap();
    let (grandchild, inside) = run(10, async {
        // Sandboxed, the transport's child is bubblewrap; the server is its child.
        let inside = t.send_request("test/pid", None).await.unwrap();
        eventually(5, || grandchild_pid(&t).is_some()).await;
        (grandchild_pid(&t).unwrap(), inside.as_u64().unwrap() as u32)
    });
    let Some(how) = how else {
        let _leftovers = Leftovers(vec![t.pid(), grandchild]);
        run(15, async {
            t.close().await.unwrap();
            eventually(WITHIN, || dead(grandchild)).await;
        });
        return;
    };
    let mut line = format!("pids {} {grandchild}", t.pid());
    if sandboxed {
        // In its own PID namespace the server's pids are its own: the real
        // ones are those below bubblewrap (its namespace's first process too).
        let _ = (grandchild, inside);
        let below = sandboxed_tree(t.pid());
        line = format!("pids {}", t.pid());
        for pid in below {
            line.push_str(&format!(" {pid}"));
        }
    }
    if std::env::var_os("STDIO_MCP_HOST_UNRELATED").is_some() {
        // A server closed before the host's end is no longer watched, and a
        // group this crate did not make is never signalled.
        let closed = peer(&[]).spawn().unwrap();
        run(10, closed.close()).unwrap();
        let unrelated = unrelated_group();
        line.push_str(&format!(" {}", unrelated.id()));
        std::mem::forget(unrelated);
    }
    println!("{line}");
    std::mem::forget(t);
    // The test looks at the processes first, then says when to end.
    let mut go = String::new();
    let _ = std::io::stdin().read_line(&mut go);
    match how.as_str() {
        "exit" => std::process::exit(0),
        "return" => {}
        "panic" => panic!("the host panics with its server open"),
        _ => std::thread::sleep(Duration::from_secs(60)),
    }
}

/// A process in a group of its own, started without this crate.
#[cfg(unix)]
fn unrelated_group() -> std::process::Child {
    use std::os::unix::process::CommandExt;
    Command::new("sleep")
        .arg("30")
        .process_group(0)
        .spawn()
        .unwrap()
}

#[cfg(windows)]
fn unrelated_group() -> std::process::Child {
    Command::new(common::peer_exe())
        .args(["--no-read", "--watchdog", "30"])
        .spawn()
        .unwrap()
}

#[cfg(target_os = "linux")]
fn sandboxed_tree(bwrap: u32) -> Vec<u32> {
    // The server and its grandchild: bubblewrap, its first process, and two below.
    run(
        10,
        common::eventually(5, || common::descendants(bwrap).len() >= 3),
    );
    common::descendants(bwrap)
}

#[cfg(not(target_os = "linux"))]
fn sandboxed_tree(_bwrap: u32) -> Vec<u32> {
    unreachable!("a sandboxed host runs on Linux only here")
}

fn grandchild_pid(t: &stdio_mcp::Transport) -> Option<u32> {
    t.stderr_tail()
        .iter()
        .find_map(|l| l.strip_prefix("grandchild ").and_then(|p| p.parse().ok()))
}

/// Runs the host, ending as `how`, and returns it with the pids it printed.
fn start_host(how: &str, unrelated: bool, sandboxed: bool) -> (std::process::Child, Vec<u32>) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", "host", "--nocapture", "--test-threads=1"])
        .env("STDIO_MCP_HOST_END", how)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if unrelated {
        command.env("STDIO_MCP_HOST_UNRELATED", "1");
    }
    if sandboxed {
        command.env("STDIO_MCP_HOST_SANDBOX", "1");
    }
    let mut host = command.spawn().unwrap();
    // Read on a thread of its own, so a silent host fails the wait below
    // instead of blocking this test forever.
    let stdout = host.stdout.take().unwrap();
    let (found, pids) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            // libtest prints "test host ... " before the host's own output.
            if let Some((_, pids)) = line.split_once("pids ") {
                let pids: Vec<u32> = pids.split(' ').map(|p| p.parse().unwrap()).collect();
                let _ = found.send(pids);
                return;
            }
        }
    });
    let pids = pids
        .recv_timeout(Duration::from_secs(15))
        .expect("the host printed its server's pids");
    (host, pids)
}

/// Ends the host as `how` and checks that its server and the server's
/// grandchild are gone within the bound.
fn host_ends(how: &str, kill: Option<&str>) {
    host_ends_with(how, kill, false);
}

fn host_ends_with(how: &str, kill: Option<&str>, sandboxed: bool) {
    run(40, async {
        let (mut host, pids) = start_host(how, false, sandboxed);
        let _leftovers = Leftovers(pids.clone());
        assert!(pids.iter().all(|&pid| !dead(pid)), "{pids:?} run");
        match kill {
            Some(signal) => signal_host(&host, signal),
            None => {
                use std::io::Write;
                let _ = host.stdin.take().unwrap().write_all(b"go\n");
            }
        }
        // The host's end, however it came.
        let waited = std::thread::spawn(move || host.wait().unwrap());
        eventually(10, || waited.is_finished()).await;
        eventually(WITHIN, || pids.iter().all(|&pid| dead(pid))).await;
    });
}

#[cfg(unix)]
fn signal_host(host: &std::process::Child, signal: &str) {
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &host.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}

#[cfg(windows)]
fn signal_host(host: &std::process::Child, _signal: &str) {
    common::kill_pid(host.id());
}

#[test]
fn a_host_killed_with_sigkill_leaves_nothing_behind() {
    host_ends("wait", Some("KILL"));
}

#[cfg(unix)]
#[test]
fn a_host_ended_by_sigterm_leaves_nothing_behind() {
    host_ends("wait", Some("TERM"));
}

/// A sandboxed server is bubblewrap, the server inside, and its grandchild:
/// all in the group the watchdog ends.
#[cfg(target_os = "linux")]
#[test]
fn a_host_of_a_sandboxed_server_killed_with_sigkill_leaves_nothing_behind() {
    if !stdio_mcp_testkit::bubblewrap("a_host_of_a_sandboxed_server_killed_with_sigkill") {
        return;
    }
    host_ends_with("wait", Some("KILL"), true);
}

#[test]
fn a_host_whose_main_returns_without_close_leaves_nothing_behind() {
    host_ends("return", None);
}

#[test]
fn a_host_that_calls_exit_leaves_nothing_behind() {
    host_ends("exit", None);
}

#[test]
fn a_host_that_panics_leaves_nothing_behind() {
    host_ends("panic", None);
}

/// The watchdog signals only what the host still had: a server closed before
/// is off its list, and a group the crate did not make is left alone.
#[test]
fn the_watchdog_never_signals_a_group_it_did_not_make() {
    run(40, async {
        let (mut host, pids) = start_host("wait", true, false);
        let unrelated = pids[2];
        let _leftovers = Leftovers(pids.clone());
        host.kill().unwrap();
        host.wait().unwrap();
        eventually(WITHIN, || dead(pids[0]) && dead(pids[1])).await;
        // The watchdog's whole ladder (1 s, SIGTERM, 1 s, SIGKILL) is over by now.
        async_io::Timer::after(Duration::from_secs(1)).await;
        assert!(!dead(unrelated), "the unrelated process was signalled");
    });
}
