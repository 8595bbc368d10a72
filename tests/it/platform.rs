//! The platform table (docs/platforms.md), each row on the platform it speaks of: how
//! the close ladder ends a server that ignores it, what an exit status holds,
//! and on Windows how a bare name is found (`PATHEXT`) and how arguments reach
//! a batch file. Run here on Linux and, with `../shared/tools/test-windows`,
//! on Windows under Wine.

use crate::common;

use std::time::{Duration, Instant};

use common::{peer, run};
use serde_json::json;

#[test]
fn the_ladder_ends_a_server_that_ignores_eof_and_sigterm() {
    run(20, async {
        let t = peer(&["--ignore-eof", "--ignore-term"]).spawn().unwrap();
        t.send_request("ping", None).await.unwrap();
        let started = Instant::now();
        t.close().await.unwrap();
        let took = started.elapsed();
        let status = t.exit_status().unwrap();
        // Unix: EOF, 2 s, SIGTERM (ignored), 2 s, SIGKILL.
        #[cfg(unix)]
        {
            assert_eq!((status.code(), status.signal()), (None, Some(9)));
            assert!(took >= Duration::from_millis(3900), "{took:?}");
        }
        // Windows: EOF, 2 s, TerminateProcess (exit code 1): no third step.
        #[cfg(windows)]
        {
            assert_eq!((status.code(), status.signal()), (Some(1), None));
            assert!(took >= Duration::from_millis(1900), "{took:?}");
            assert!(took < Duration::from_millis(3900), "{took:?}");
        }
    });
}

#[test]
fn a_server_that_stops_on_eof_is_never_terminated() {
    run(10, async {
        let t = peer(&[]).spawn().unwrap();
        t.send_request("ping", None).await.unwrap();
        let started = Instant::now();
        t.close().await.unwrap();
        assert!(started.elapsed() < Duration::from_millis(1900));
        let status = t.exit_status().unwrap();
        assert_eq!((status.code(), status.signal()), (Some(0), None));
    });
}

/// A server that asks something once its input ended (server-everything
/// with `roots/list` in flight) waits for an answer that cannot come and
/// never exits by itself: the ladder skips the rest of its EOF step.
#[test]
fn a_server_that_asks_after_its_input_ended_is_terminated_at_once() {
    run(10, async {
        let t = peer(&["--ask-on-eof"]).spawn().unwrap();
        t.send_request("ping", None).await.unwrap();
        let started = Instant::now();
        t.close().await.unwrap();
        let took = started.elapsed();
        assert!(took < Duration::from_millis(1000), "{took:?}");
        common::assert_ladder_step_two(t.exit_status().unwrap());
    });
}

/// (A signal on Unix: `lifecycle::death_by_signal_is_reported_as_such`.)
#[test]
fn an_exit_code_is_reported_with_no_signal() {
    run(10, async {
        let t = peer(&[]).spawn().unwrap();
        let _ = t
            .send_request("test/exit", Some(json!({ "code": 3 })))
            .await;
        t.close().await.unwrap();
        let status = t.exit_status().unwrap();
        assert_eq!((status.code(), status.signal()), (Some(3), None));
        assert_eq!(
            t.send_request("ping", None).await.unwrap_err().to_string(),
            "MCP server process has exited"
        );
    });
}

/// Asked for explicitly, everywhere: the watchdog on Unix, a Job Object on Windows.
#[test]
fn kill_on_parent_death_is_available_on_every_platform() {
    run(10, async {
        let t = peer(&[]).kill_on_parent_death(true).spawn().unwrap();
        t.send_request("ping", None).await.unwrap();
        t.close().await.unwrap();
        assert_eq!(t.exit_status().unwrap().code(), Some(0));
    });
}

/// A folder on `PATH` holding `NAME.cmd`, a batch file that starts the peer
/// with the arguments it was given.
#[cfg(windows)]
fn batch_wrapper(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("stdio-mcp-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join(format!("{name}.cmd")),
        format!("@\"{}\" %*\r\n", common::peer_exe()),
    )
    .unwrap();
    dir
}

#[cfg(windows)]
#[test]
fn a_bare_name_finds_a_cmd_file_through_pathext() {
    run(20, async {
        let dir = batch_wrapper("pathext");
        let t = stdio_mcp::Transport::builder(["pathext"])
            .env("PATH", &dir)
            .spawn()
            .unwrap();
        assert_eq!(
            t.send_request("test/echo", Some(json!("via cmd")))
                .await
                .unwrap(),
            json!("via cmd")
        );
        t.close().await.unwrap();
    });
}

#[cfg(windows)]
#[test]
fn an_argument_for_a_batch_file_runs_no_command() {
    run(20, async {
        let dir = batch_wrapper("inject");
        // Were `&` read by cmd.exe, `echo INJECTED` would run and print to stdout.
        let t = stdio_mcp::Transport::builder(["inject", "&echo INJECTED"])
            .env("PATH", &dir)
            .spawn()
            .unwrap();
        // The peer gets the text as one argument, an unknown flag: it says so and exits 2.
        let _ = t.close().await;
        assert_eq!(t.exit_status().unwrap().code(), Some(2));
        assert!(
            t.stderr_tail()
                .iter()
                .any(|l| l.contains("unknown flag &echo INJECTED")),
            "{:?}",
            t.stderr_tail()
        );
        assert_eq!(t.discarded_lines(), 0, "something ran and wrote to stdout");
    });
}

#[cfg(windows)]
#[test]
fn a_batch_argument_that_cannot_be_quoted_is_a_start_error() {
    let dir = batch_wrapper("refuse");
    let error = stdio_mcp::Transport::builder(["refuse", "line\nbreak"])
        .env("PATH", &dir)
        .spawn()
        .unwrap_err();
    let text = error.to_string();
    assert!(
        text.starts_with("MCP server failed to start: cannot run refuse: "),
        "{text}"
    );
    assert!(text.contains("batch file"), "{text}");
}
