//! Start, exit, stderr, close and the driver's end, against a real child.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{eventually, peer, peer_exe, process_exists, process_state, run};
use serde_json::json;
use stdio_mcp::{Error, Transport};

fn start_error(builder: stdio_mcp::TransportBuilder) -> Error {
    builder.spawn().map(drop).expect_err("the start must fail")
}

#[test]
fn missing_program_fails_to_start() {
    let e = start_error(Transport::builder(["/nonexistent/mcp-server", "--stdio"]));
    assert!(matches!(e, Error::Start { .. }));
    assert_eq!(
        e.to_string(),
        "MCP server failed to start: cannot run /nonexistent/mcp-server: no such program"
    );
    let e = start_error(Transport::builder(["no-such-mcp-server-on-path"]));
    assert_eq!(
        e.to_string(),
        "MCP server failed to start: cannot run no-such-mcp-server-on-path: no such program"
    );
}

#[cfg(unix)]
#[test]
fn program_that_is_not_executable_fails_to_start() {
    // No execute bit at all: refused even for root.
    let path =
        std::env::temp_dir().join(format!("stdio-mcp-not-executable-{}", std::process::id()));
    std::fs::write(&path, "#!/bin/sh\n").unwrap();
    let e = start_error(Transport::builder([&path]));
    std::fs::remove_file(&path).unwrap();
    assert_eq!(
        e.to_string(),
        format!(
            "MCP server failed to start: cannot run {}: permission denied",
            path.display()
        )
    );
}

#[test]
fn missing_working_directory_fails_to_start() {
    let e = start_error(peer(&[]).cwd("/nonexistent/dir"));
    assert_eq!(
        e.to_string(),
        format!(
            "MCP server failed to start: cannot run {}: no such directory: /nonexistent/dir",
            peer_exe()
        )
    );
}

#[test]
fn empty_command_fails_to_start() {
    let e = start_error(Transport::builder(Vec::<String>::new()));
    assert!(matches!(e, Error::EmptyCommand));
    assert_eq!(
        e.to_string(),
        "MCP server failed to start: the command is empty"
    );
}

#[test]
fn cwd_and_env_reach_the_child() {
    run(10, async {
        std::env::set_var("STDIO_MCP_TEST_INHERITED", "inherited");
        std::env::set_var("STDIO_MCP_TEST_REMOVED", "removed");
        let dir = std::env::temp_dir();
        let t = peer(&[])
            .cwd(&dir)
            .env("STDIO_MCP_TEST_SET", "set value")
            .env_remove("STDIO_MCP_TEST_REMOVED")
            .spawn()
            .unwrap();
        let env = |name: &'static str| t.send_request("test/env", Some(json!({ "name": name })));
        assert_eq!(env("STDIO_MCP_TEST_SET").await.unwrap(), json!("set value"));
        assert_eq!(
            env("STDIO_MCP_TEST_INHERITED").await.unwrap(),
            json!("inherited")
        );
        assert_eq!(env("STDIO_MCP_TEST_REMOVED").await.unwrap(), json!(null));
        let cwd = t.send_request("test/cwd", None).await.unwrap();
        let cwd = std::path::PathBuf::from(cwd.as_str().unwrap());
        assert_eq!(cwd.canonicalize().unwrap(), dir.canonicalize().unwrap());
        t.close().await.unwrap();
    });
}

#[test]
fn env_clear_passes_only_what_is_set_afterwards_and_no_secret() {
    run(10, async {
        std::env::set_var("STDIO_MCP_TEST_SECRET", "do not leak");
        let t = peer(&[])
            .env("SET_BEFORE_CLEAR", "gone")
            .env_clear()
            .env("ONLY_THIS", "1")
            .spawn()
            .unwrap();
        let names = t.send_request("test/env_names", None).await.unwrap();
        #[cfg(unix)]
        assert_eq!(names, json!(["ONLY_THIS"]));
        // Windows (Wine too) gives every process a few variables of its own,
        // such as SystemRoot; none of ours may pass.
        #[cfg(windows)]
        {
            let names: Vec<&str> = names
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|n| n.as_str())
                .collect();
            assert!(names.contains(&"ONLY_THIS"), "{names:?}");
            for ours in ["STDIO_MCP_TEST_SECRET", "SET_BEFORE_CLEAR", "PATH", "Path"] {
                assert!(!names.contains(&ours), "{ours} passed: {names:?}");
            }
        }
        t.close().await.unwrap();
    });
}

#[test]
fn exit_with_a_code_fails_pending_requests_with_the_stderr_tail() {
    run(10, async {
        let t = peer(&[]).spawn().unwrap();
        let waiting = t.send_request("test/never", None);
        let exit = t.send_request(
            "test/exit",
            Some(json!({"code": 3, "stderr": ["loading config", "", "fatal: no token"]})),
        );
        let e = waiting.await.unwrap_err();
        assert_eq!(
            e.to_string(),
            "MCP server process exited (code 3): loading config | fatal: no token"
        );
        assert_eq!(e.category(), None);
        assert!(exit.await.is_err());
        assert_eq!(t.exit_status().unwrap().code(), Some(3));
        assert!(!t.is_alive());
        assert_eq!(t.stderr_tail(), ["loading config", "fatal: no token"]);
        // After the exit, sends fail at once.
        let late = t.send_request("ping", None);
        assert_eq!(late.id(), 0);
        assert_eq!(
            late.await.unwrap_err().to_string(),
            "MCP server process has exited"
        );
        assert_eq!(
            t.send_notification("x", None).unwrap_err().to_string(),
            "MCP server process has exited"
        );
        // close() after the exit is ready at once.
        t.close().await.unwrap();
    });
}

#[test]
fn exit_without_stderr_has_no_tail_in_the_message() {
    run(10, async {
        let t = peer(&[]).spawn().unwrap();
        let e = t
            .send_request("test/exit", Some(json!({"code": 0})))
            .await
            .unwrap_err();
        assert_eq!(e.to_string(), "MCP server process exited (code 0)");
    });
}

#[cfg(unix)]
#[test]
fn death_by_signal_is_reported_as_such() {
    run(10, async {
        let t = peer(&[]).spawn().unwrap();
        let waiting = t.send_request("test/never", None);
        let _dying = t.send_request(
            "test/signal",
            Some(json!({"signal": 9, "stderr": ["about to die"]})),
        );
        let e = waiting.await.unwrap_err();
        assert_eq!(
            e.to_string(),
            "MCP server process exited (signal 9): about to die"
        );
        assert_eq!(t.exit_status().unwrap().signal(), Some(9));
        assert_eq!(t.exit_status().unwrap().code(), None);
    });
}

#[test]
fn a_response_written_just_before_exit_is_delivered() {
    run(10, async {
        let t = peer(&[]).spawn().unwrap();
        let answered = t.send_request("test/echo", Some(json!("in time")));
        let _exiting = t.send_request("test/exit", Some(json!({"code": 0})));
        assert_eq!(answered.await.unwrap(), json!("in time"));
    });
}

/// Unix only: under Wine, a child that closes its stdout handle and runs on gave
/// its reader no end of stream (whether Windows itself does is not tested here).
#[cfg(unix)]
#[test]
fn stdout_closed_while_running_fails_requests_in_bounded_time() {
    run(10, async {
        let t = peer(&["--ignore-eof"]).spawn().unwrap();
        let start = Instant::now();
        let waiting = t.send_request("test/never", None);
        let _closing = t.send_request("test/close_stdout", None);
        let e = waiting.await.unwrap_err();
        assert!(matches!(e, Error::StdoutClosed), "{e}");
        assert!(e.to_string().contains("closed its stdout"), "{e}");
        assert!(start.elapsed() < Duration::from_secs(3));
        assert!(!t.is_alive());
        assert!(matches!(
            t.send_request("ping", None).await.unwrap_err(),
            Error::StdoutClosed
        ));
        // It is then closed by the ladder (it ignores EOF, so SIGTERM ends it).
        t.close().await.unwrap();
        common::assert_ladder_step_two(t.exit_status().unwrap());
    });
}

#[test]
fn stderr_is_drained_through_ten_megabytes_with_every_line_seen() {
    run(30, async {
        let lines = Arc::new(Mutex::new(0usize));
        let count = Arc::clone(&lines);
        let t = peer(&[])
            .on_stderr(move |line| {
                assert!(!line.ends_with('\n') && !line.ends_with('\r'));
                *count.lock().unwrap() += 1;
            })
            .spawn()
            .unwrap();
        let r = t
            .send_request("test/stderr", Some(json!({"bytes": 10_000_000})))
            .await;
        assert_eq!(r.unwrap(), json!({"written": 10_000_000}));
        // The answer came after the last stderr write; the lines may trail it a little.
        eventually(5, || *lines.lock().unwrap() == 100_000).await;
        let r = t
            .send_request(
                "test/stderr",
                Some(json!({"lines": ["crlf line\r", "last words"]})),
            )
            .await;
        assert!(r.is_ok());
        eventually(5, || {
            t.stderr_tail().last().map(String::as_str) == Some("last words")
        })
        .await;
        let tail = t.stderr_tail();
        assert_eq!(tail.len(), 20);
        assert_eq!(tail[18], "crlf line");
        t.close().await.unwrap();
        // Still there after the exit.
        assert_eq!(t.stderr_tail(), tail);
    });
}

#[cfg(unix)]
#[test]
fn stderr_lines_are_decoded_lossily() {
    run(10, async {
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let log = Arc::clone(&seen);
        let t = Transport::builder([
            "sh",
            "-c",
            "printf 'caf\\303\\251 \\377 ok\\n' >&2; printf 'no newline' >&2",
        ])
        .on_stderr(move |l| log.lock().unwrap().push(l.to_owned()))
        .spawn()
        .unwrap();
        t.close().await.unwrap();
        assert_eq!(*seen.lock().unwrap(), ["café \u{fffd} ok", "no newline"]);
    });
}

#[test]
fn close_of_a_child_that_exits_on_eof_never_signals_it() {
    run(10, async {
        let t = peer(&[]).spawn().unwrap();
        let start = Instant::now();
        assert!(t.is_alive());
        let queued = t.send_request("test/echo", Some(json!("flushed first")));
        let closing = t.close();
        // close() takes effect at once.
        assert!(!t.is_alive());
        assert_eq!(
            t.send_request("ping", None).await.unwrap_err().to_string(),
            "MCP server process has exited"
        );
        // What was queued before close() was still written and answered.
        assert_eq!(queued.await.unwrap(), json!("flushed first"));
        closing.await.unwrap();
        assert!(
            start.elapsed() < Duration::from_secs(1),
            "no signal ladder for a polite child"
        );
        let status = t.exit_status().unwrap();
        assert_eq!((status.code(), status.signal()), (Some(0), None));
    });
}

#[test]
fn every_close_future_resolves_whichever_thread_awaits_it() {
    // A child that ignores EOF keeps the close waiting for SIGTERM (~2 s), so
    // every waiter below is registered well before the driver finishes.
    let t = peer(&["--ignore-eof"]).spawn().unwrap();
    run(10, t.send_request("ping", None)).unwrap();
    let start = Instant::now();
    // One close future is polled once and dropped: its task must not be needed.
    let abandoned = run(10, async {
        let mut closing = t.close();
        futures::poll!(&mut closing).is_pending()
    });
    assert!(
        abandoned,
        "the child ignores EOF, so the close is still going"
    );
    let waiters: Vec<_> = (0..3)
        .map(|_| {
            let t = t.clone();
            std::thread::spawn(move || run(10, t.close()))
        })
        .collect();
    let here = run(10, t.close());
    assert!(here.is_ok(), "{here:?}");
    for waiter in waiters {
        let outcome = waiter.join().unwrap();
        assert!(outcome.is_ok(), "{outcome:?}");
    }
    // Each waiter is woken when the child is gone (SIGTERM after 2 s), not found
    // done later by chance.
    let took = start.elapsed();
    assert!(took < Duration::from_millis(3500), "{took:?}");
    common::assert_ladder_step_two(t.exit_status().unwrap());
}

#[test]
fn close_sends_sigterm_to_a_child_that_ignores_eof() {
    run(10, async {
        let t = peer(&["--ignore-eof"]).spawn().unwrap();
        t.send_request("ping", None).await.unwrap();
        let start = Instant::now();
        t.close().await.unwrap();
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(1900) && took < Duration::from_millis(3500),
            "{took:?}"
        );
        common::assert_ladder_step_two(t.exit_status().unwrap());
    });
}

/// (Windows has no SIGTERM to ignore: `platform.rs` covers its ladder.)
#[cfg(unix)]
#[test]
fn close_sends_sigkill_to_a_child_that_ignores_sigterm() {
    run(15, async {
        let t = peer(&["--ignore-eof", "--ignore-term"]).spawn().unwrap();
        t.send_request("ping", None).await.unwrap();
        let start = Instant::now();
        let first = t.close();
        let second = t.close();
        let (a, b) = futures::join!(first, second);
        let took = start.elapsed();
        assert!(a.is_ok() && b.is_ok());
        assert!(
            took >= Duration::from_millis(3900) && took < Duration::from_millis(6000),
            "{took:?}"
        );
        assert_eq!(t.exit_status().unwrap().signal(), Some(9));
        // A third call after the exit is ready at once.
        t.close().await.unwrap();
    });
}

#[test]
fn requests_pending_at_close_get_the_exit_error() {
    run(10, async {
        let t = peer(&[]).spawn().unwrap();
        let waiting = t.send_request("test/never", None);
        t.close().await.unwrap();
        assert_eq!(
            waiting.await.unwrap_err().to_string(),
            "MCP server process exited (code 0)"
        );
    });
}

#[test]
fn dropping_the_driver_fails_requests_and_close_and_kills_the_child() {
    run(10, async {
        let (t, driver) = peer(&["--ignore-eof", "--ignore-term"])
            .spawn_with_driver()
            .unwrap();
        let pid = t.pid();
        let driver_task = async {
            let driver = driver;
            // Run it long enough to get one answer, then drop it with work pending.
            let mut driver = Box::pin(driver);
            let answered = t.send_request("test/echo", Some(json!(1)));
            let (r, _) = match futures::future::select(answered, driver.as_mut()).await {
                futures::future::Either::Left(x) => x,
                futures::future::Either::Right(_) => panic!("driver ended early"),
            };
            assert_eq!(r.unwrap(), json!(1));
            let waiting = t.send_request("test/never", None);
            let closing = t.close();
            drop(driver);
            (waiting, closing)
        };
        let (waiting, closing) = driver_task.await;
        assert_eq!(
            waiting.await.unwrap_err().to_string(),
            "MCP server process left the loop before the request was answered"
        );
        assert_eq!(
            closing.await.unwrap_err().to_string(),
            "MCP server process left the loop before it exited"
        );
        assert!(!t.is_alive());
        // Killed, then reaped on the background thread: no orphan, no zombie.
        eventually(5, || !process_exists(pid)).await;
    });
}

#[test]
fn dropping_every_handle_closes_the_child() {
    run(10, async {
        let t = peer(&[]).spawn().unwrap();
        let pid = t.pid();
        t.send_request("ping", None).await.unwrap();
        let clone = t.clone();
        drop(t);
        assert!(process_exists(pid), "a clone still holds it");
        let pending = clone.send_request("test/never", None);
        drop(clone);
        assert!(process_exists(pid), "a pending request still holds it");
        drop(pending);
        eventually(5, || !process_exists(pid)).await;
    });
}

#[test]
fn no_zombie_after_exit() {
    run(10, async {
        let t = peer(&[]).spawn().unwrap();
        let pid = t.pid();
        t.close().await.unwrap();
        eventually(5, || process_state(pid).is_none()).await;
    });
}

#[test]
fn is_alive_through_the_life_cycle() {
    run(10, async {
        let t = peer(&[]).spawn().unwrap();
        assert!(t.is_alive());
        assert!(t.exit_status().is_none());
        t.send_request("ping", None).await.unwrap();
        assert!(t.is_alive());
        let _ = t.send_request("test/exit", Some(json!({"code": 1}))).await;
        assert!(!t.is_alive());
        assert_eq!(t.exit_status().unwrap().code(), Some(1));
    });
}

#[cfg(target_os = "linux")]
fn thread_names() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("comm")).ok())
        .map(|name| name.trim().to_owned())
        .collect()
}

#[cfg(target_os = "linux")]
#[test]
fn async_process_reaps_on_our_background_thread_not_a_thread_of_its_own() {
    run(20, async {
        // Both ways of running a driver; a child dropped before its exit is reaped.
        let (t, driver) = peer(&[]).spawn_with_driver().unwrap();
        let driven = async_io::block_on(driver.run_until(t.send_request("ping", None)));
        driven.0.unwrap();
        let pid = t.pid();
        drop(t);
        drop(driven.1);
        let t = peer(&[]).spawn().unwrap();
        t.send_request("ping", None).await.unwrap();
        t.close().await.unwrap();
        eventually(5, || process_state(pid).is_none()).await;
        let names = thread_names();
        assert!(
            !names.iter().any(|n| n == "async-process"),
            "async-process started its own reaper thread: {names:?}"
        );
        assert_eq!(
            names.iter().filter(|n| *n == "stdio-mcp").count(),
            1,
            "{names:?}"
        );
    });
}
