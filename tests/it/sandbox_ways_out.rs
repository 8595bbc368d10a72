//! The ways around a sandbox's rules (DESIGN.md, "No way around the
//! rules"): the test peer, confined with the default rules, tries each one
//! (`test/escape`) and must be refused; where the way is open to an
//! unconfined process on this machine, the same peer unconfined tries it
//! first and must get through, so that each refusal is the sandbox's doing.
//! Linux, under bubblewrap; as the user the tests run as (root in CI). The
//! same ways as an unprivileged user, with the process limit, run through
//! the command line (cli/tests/sandbox.rs).
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use stdio_mcp::sandbox::{Limits, Sandbox};
use stdio_mcp::{ErrorKind, Transport};

use crate::common::{peer, run};

/// A folder of the test's own, emptied first.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("stdio-mcp-ways-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::canonicalize(&dir).unwrap()
}

fn confined(sandbox: Sandbox) -> Transport {
    peer(&[]).sandbox(sandbox).spawn().unwrap()
}

fn unconfined() -> Transport {
    peer(&[]).spawn().unwrap()
}

async fn attempt(t: &Transport, way: &str, mut params: Value) -> Value {
    params["way"] = json!(way);
    t.send_request("test/escape", Some(params)).await.unwrap()
}

/// Asserts the way was refused, and returns the OS's words.
fn refused(outcome: &Value) -> String {
    assert_eq!(outcome["ok"], false, "got out: {outcome}");
    outcome["error"].as_str().unwrap_or_default().to_owned()
}

fn got_out(outcome: &Value) {
    assert_eq!(
        outcome["ok"], true,
        "the way is not open here even unconfined: {outcome}"
    );
}

fn root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
}

#[test]
fn no_unix_socket_outside_is_reached_by_any_route() {
    if !stdio_mcp_testkit::bubblewrap("sandbox_ways_out") {
        return;
    }
    let dir = scratch("unix");
    let stream = dir.join("agent.sock");
    let datagram = dir.join("log.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&stream).unwrap();
    let _log = std::os::unix::net::UnixDatagram::bind(&datagram).unwrap();
    run(30, async {
        let open = unconfined();
        got_out(&attempt(&open, "unix_connect", json!({"path": stream})).await);
        got_out(&attempt(&open, "dgram_pair_send", json!({"path": datagram})).await);
        open.close().await.unwrap();

        let t = confined(Sandbox::new());
        refused(&attempt(&t, "unix_connect", json!({"path": stream})).await);
        refused(&attempt(&t, "dgram_pair_send", json!({"path": datagram})).await);
        let uring = refused(&attempt(&t, "io_uring", json!({})).await);
        assert!(uring.contains("not implemented"), "{uring}");
        // What Node and Python start their children with still works.
        got_out(&attempt(&t, "stream_pair", json!({})).await);
        t.close().await.unwrap();

        // allowAllUnixSockets lifts the socket rules.
        let t = confined(Sandbox::new().allow_all_unix_sockets(true));
        got_out(&attempt(&t, "unix_connect", json!({"path": stream})).await);
        t.close().await.unwrap();
    });
    // A socket allowed by its path cannot be enforced on Linux: no start.
    let error = peer(&[])
        .sandbox(Sandbox::new().allow_unix_socket(&stream))
        .spawn()
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Start);
    assert!(error.to_string().contains("allowUnixSockets"), "{error}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn another_process_is_neither_seen_through_proc_nor_signalled() {
    if !stdio_mcp_testkit::bubblewrap("sandbox_ways_out") {
        return;
    }
    let dir = scratch("proc");
    let secret = dir.join("secret");
    std::fs::create_dir_all(&secret).unwrap();
    std::fs::write(secret.join("token"), "s3cr3t").unwrap();
    let host = std::process::id();
    let mut sleeper = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    run(30, async {
        let open = unconfined();
        got_out(
            &attempt(
                &open,
                "proc_root_read",
                json!({"pid": host, "path": secret.join("token")}),
            )
            .await,
        );
        open.close().await.unwrap();

        let t = confined(Sandbox::new().deny_read(&secret));
        let token = json!({"pid": host, "path": secret.join("token")});
        refused(&attempt(&t, "proc_root_read", token).await);
        let outside = json!({"pid": host, "path": dir.join("written")});
        refused(&attempt(&t, "proc_root_write", outside).await);
        refused(&attempt(&t, "signal", json!({"pid": sleeper.id()})).await);
        t.close().await.unwrap();
    });
    assert!(
        sleeper.try_wait().unwrap().is_none(),
        "the sleeper was killed"
    );
    assert!(!dir.join("written").exists());
    run(30, async {
        // The same signal from outside the sandbox ends it: the way was real.
        let open = unconfined();
        got_out(&attempt(&open, "signal", json!({"pid": sleeper.id()})).await);
        open.close().await.unwrap();
    });
    sleeper.wait().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn no_capability_is_left_to_undo_the_mounts() {
    if !stdio_mcp_testkit::bubblewrap("sandbox_ways_out") {
        return;
    }
    let dir = scratch("caps");
    let secret = dir.join("secret");
    std::fs::create_dir_all(&secret).unwrap();
    std::fs::write(secret.join("token"), "s3cr3t").unwrap();
    run(30, async {
        let t = confined(Sandbox::new().deny_read(&secret));
        refused(&attempt(&t, "umount", json!({"path": secret})).await);
        let read = t
            .send_request("test/read", Some(json!({"path": secret.join("token")})))
            .await
            .unwrap();
        assert_eq!(read["ok"], false, "the denial was undone: {read}");
        let written =
            refused(&attempt(&t, "remount_write", json!({"path": dir.join("outside")})).await);
        assert!(written.contains("Read-only"), "{written}");
        t.close().await.unwrap();
    });
    assert!(!dir.join("outside").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn what_guards_a_denied_path_cannot_be_renamed_away() {
    if !stdio_mcp_testkit::bubblewrap("sandbox_ways_out") {
        return;
    }
    let dir = scratch("rename");
    let repo = dir.join("repo");
    std::fs::create_dir_all(repo.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(repo.join("conf/keys")).unwrap();
    std::fs::write(repo.join("conf/keys/id"), "key").unwrap();
    run(30, async {
        let sandbox = Sandbox::new()
            .allow_write(&repo)
            .deny_write(repo.join(".git/hooks"))
            .deny_read(repo.join("conf/keys"));
        let t = confined(sandbox);
        let hooks = json!({"from": repo.join(".git"), "to": repo.join("git-old"),
                           "plant": repo.join(".git/hooks/pre-commit")});
        let moved = refused(&attempt(&t, "rename_plant", hooks).await);
        assert!(moved.contains("busy"), "{moved}");
        let keys = json!({"from": repo.join("conf"), "to": repo.join("conf-old"),
                          "plant": repo.join("conf-old/keys/id")});
        refused(&attempt(&t, "rename_plant", keys).await);
        t.close().await.unwrap();
    });
    assert!(!repo.join(".git/hooks/pre-commit").exists());
    assert!(repo.join(".git/hooks").is_dir() && repo.join("conf/keys/id").is_file());
    // A denied path that does not exist inside a writable folder could be
    // made there: the start fails, naming it.
    let error = peer(&[])
        .sandbox(
            Sandbox::new()
                .allow_write(&repo)
                .deny_read(repo.join("missing")),
        )
        .spawn()
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Start);
    assert!(
        error.to_string().contains("denyRead") && error.to_string().contains("missing"),
        "{error}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_session_keyring_and_a_leaked_descriptor_stay_outside() {
    if !stdio_mcp_testkit::bubblewrap("sandbox_ways_out") {
        return;
    }
    let dir = scratch("inherited");
    let leaked = std::fs::File::create(dir.join("leaked")).unwrap();
    let fd = stdio_mcp_testkit::host::leak(&leaked).unwrap();
    // This thread's children share the new session keyring, as a login's do.
    stdio_mcp_testkit::host::session_key("stdio-mcp-token", "s3cr3t").unwrap();
    run(30, async {
        let open = unconfined();
        let key = attempt(&open, "keyring", json!({"description": "stdio-mcp-token"})).await;
        got_out(&key);
        assert_eq!(key["key"], "s3cr3t");
        got_out(&attempt(&open, "fd_write", json!({"fd": fd})).await);
        open.close().await.unwrap();

        let t = confined(Sandbox::new());
        refused(&attempt(&t, "keyring", json!({"description": "stdio-mcp-token"})).await);
        let write = refused(&attempt(&t, "fd_write", json!({"fd": fd})).await);
        assert!(write.contains("Bad file descriptor"), "{write}");
        t.close().await.unwrap();
    });
    drop(leaked);
    assert_eq!(
        std::fs::read_to_string(dir.join("leaked")).unwrap(),
        "escaped\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn no_setuid_or_setgid_file_is_planted() {
    if !stdio_mcp_testkit::bubblewrap("sandbox_ways_out") {
        return;
    }
    let dir = scratch("setuid");
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    run(30, async {
        let open = unconfined();
        got_out(&attempt(&open, "setuid_chmod", json!({"path": dir.join("a")})).await);
        got_out(&attempt(&open, "setuid_create", json!({"path": dir.join("b")})).await);
        open.close().await.unwrap();

        let t = confined(Sandbox::new().allow_write(&out));
        refused(&attempt(&t, "setuid_chmod", json!({"path": out.join("a")})).await);
        refused(&attempt(&t, "setuid_create", json!({"path": out.join("b")})).await);
        t.close().await.unwrap();
    });
    for file in ["a", "b"] {
        if let Ok(meta) = std::fs::metadata(out.join(file)) {
            let mode = std::os::unix::fs::PermissionsExt::mode(&meta.permissions());
            assert_eq!(mode & 0o6000, 0, "{file}: {mode:o}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn dev_shm_tmpdir_and_files_are_bounded() {
    if !stdio_mcp_testkit::bubblewrap("sandbox_ways_out") {
        return;
    }
    let dir = scratch("bounds");
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let mib = |n: u64| n << 20;
    run(60, async {
        let open = unconfined();
        let shm =
            json!({"path": format!("/dev/shm/stdio-mcp-{}", std::process::id()), "bytes": mib(80)});
        got_out(&attempt(&open, "fill", shm.clone()).await);
        open.close().await.unwrap();

        // The defaults: 64 MiB of /dev/shm, 512 MiB of TMPDIR.
        let t = confined(Sandbox::new().allow_write(&out));
        let full = refused(&attempt(&t, "fill", shm).await);
        assert!(full.contains("No space left"), "{full}");
        let tmp = t
            .send_request("test/env", Some(json!({"name": "TMPDIR"})))
            .await
            .unwrap();
        let in_tmp = Path::new(tmp.as_str().unwrap()).join("big");
        let full = refused(&attempt(&t, "fill", json!({"path": in_tmp, "bytes": mib(520)})).await);
        assert!(full.contains("No space left"), "{full}");
        got_out(
            &attempt(
                &t,
                "fill",
                json!({"path": out.join("ok"), "bytes": mib(80)}),
            )
            .await,
        );
        t.close().await.unwrap();

        // A file's size, set lower.
        let t = confined(
            Sandbox::new()
                .allow_write(&out)
                .limits(Limits::default().file_bytes(mib(8))),
        );
        let big = refused(
            &attempt(
                &t,
                "fill",
                json!({"path": out.join("big"), "bytes": mib(16)}),
            )
            .await,
        );
        assert!(big.contains("too large"), "{big}");
        t.close().await.unwrap();
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_process_limit_holds_where_the_kernel_counts() {
    if !stdio_mcp_testkit::bubblewrap("sandbox_ways_out") {
        return;
    }
    run(60, async {
        let t = confined(Sandbox::new().limits(Limits::default().processes(16)));
        let forked = attempt(&t, "fork", json!({"count": 40})).await;
        t.close().await.unwrap();
        if root() {
            // The kernel does not count root's processes (docs/sandbox.md):
            // as root the limit is not in force, and the peer says so.
            got_out(&forked);
        } else {
            refused(&forked);
            assert!(forked["started"].as_u64().unwrap() < 16, "{forked}");
        }
    });
}
