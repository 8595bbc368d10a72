//! Process groups: `close()` and dropping every handle end the server's whole
//! tree, with the defaults (each server leads a process group of its own;
//! Windows: a Job Object). How the tree ends with the host: tests/host_end.rs.

mod common;

use std::time::Duration;

use common::{dead, eventually, peer, run};

fn grandchild_pid(t: &stdio_mcp::Transport) -> Option<u32> {
    t.stderr_tail()
        .iter()
        .find_map(|l| l.strip_prefix("grandchild ").and_then(|p| p.parse().ok()))
}

#[test]
fn process_group_close_takes_down_a_wrapped_grandchild() {
    run(15, async {
        let t = peer(&["--grandchild", "--ignore-eof"]).spawn().unwrap();
        t.send_request("ping", None).await.unwrap();
        eventually(5, || grandchild_pid(&t).is_some()).await;
        let grandchild = grandchild_pid(&t).unwrap();
        assert!(!dead(grandchild));
        t.close().await.unwrap();
        common::assert_ladder_step_two(t.exit_status().unwrap());
        eventually(5, || dead(grandchild)).await;
    });
}

#[test]
fn process_group_kills_leftovers_when_the_wrapper_exits_on_eof() {
    run(15, async {
        // The wrapper exits politely on EOF but its grandchild keeps the pipes open.
        let t = peer(&["--grandchild"]).spawn().unwrap();
        t.send_request("ping", None).await.unwrap();
        eventually(5, || grandchild_pid(&t).is_some()).await;
        let grandchild = grandchild_pid(&t).unwrap();
        t.close().await.unwrap();
        assert_eq!(t.exit_status().unwrap().code(), Some(0));
        eventually(5, || dead(grandchild)).await;
    });
}

/// A shell that does not exec its server, with a job of its own in the
/// background: the ladder reaches the job too, not the shell alone.
#[cfg(unix)]
#[test]
fn close_ends_a_shells_background_job() {
    run(15, async {
        let script = format!(
            "sleep 300 & echo \"grandchild $!\" >&2; {} --ignore-eof; echo after >&2",
            common::peer_exe()
        );
        let t = stdio_mcp::Transport::builder(["sh", "-c", &script])
            .spawn()
            .unwrap();
        t.send_request("ping", None).await.unwrap();
        eventually(5, || grandchild_pid(&t).is_some()).await;
        let job = Leftover(grandchild_pid(&t).unwrap());
        assert!(!dead(job.0));
        t.close().await.unwrap();
        eventually(2, || dead(job.0)).await;
    });
}

/// The server leads a process group of its own: a terminal's Ctrl-C (SIGINT to
/// the foreground group) reaches the host alone, which decides what follows.
#[cfg(unix)]
#[test]
fn a_server_leads_a_process_group_of_its_own() {
    run(10, async {
        let t = peer(&[]).spawn().unwrap();
        t.send_request("ping", None).await.unwrap();
        let out = std::process::Command::new("ps")
            .args(["-o", "pgid=", "-p", &t.pid().to_string()])
            .output()
            .unwrap();
        let group: u32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        assert_eq!(group, t.pid());
        t.close().await.unwrap();
    });
}

/// Windows: the server is in its Job Object before it runs (it starts
/// suspended and is let go once inside), so nothing it starts at once can
/// be outside the job: its first look finds itself in a job, and the
/// grandchild it starts first thing ends with the tree.
#[cfg(windows)]
#[test]
fn a_server_is_in_its_job_before_its_first_instruction() {
    run(15, async {
        for _ in 0..5 {
            let t = peer(&["--job-at-start", "--grandchild", "--ignore-eof"])
                .spawn()
                .unwrap();
            t.send_request("ping", None).await.unwrap();
            eventually(5, || grandchild_pid(&t).is_some()).await;
            assert!(
                t.stderr_tail().iter().any(|l| l == "job at start: yes"),
                "{:?}",
                t.stderr_tail()
            );
            let grandchild = grandchild_pid(&t).unwrap();
            t.close().await.unwrap();
            eventually(5, || dead(grandchild)).await;
        }
    });
}

/// A server spawned from a thread that ends right after lives on while the
/// host does (Linux's parent-death signal would follow the spawning thread).
#[test]
fn a_server_started_by_a_short_lived_thread_outlives_the_thread() {
    run(10, async {
        let t = std::thread::spawn(|| peer(&[]).spawn().unwrap())
            .join()
            .unwrap();
        async_io::Timer::after(Duration::from_millis(300)).await;
        assert_eq!(
            t.send_request("test/echo", Some(serde_json::json!(1)))
                .await
                .unwrap(),
            serde_json::json!(1)
        );
        assert!(t.exit_status().is_none());
        t.close().await.unwrap();
        assert_eq!(t.exit_status().unwrap().code(), Some(0));
    });
}

/// The opt-out: without a group of its own only the direct child is signalled.
#[test]
fn process_group_false_leaves_the_grandchild_to_its_fate() {
    run(15, async {
        let t = peer(&["--grandchild", "--ignore-eof"])
            .process_group(false)
            .spawn()
            .unwrap();
        t.send_request("ping", None).await.unwrap();
        eventually(5, || grandchild_pid(&t).is_some()).await;
        let grandchild = grandchild_pid(&t).unwrap();
        // The close still finishes: the pipes the grandchild holds do not hang it.
        t.close().await.unwrap();
        assert!(!dead(grandchild), "only the direct child was signalled");
        common::kill_pid(grandchild);
        eventually(5, || dead(grandchild)).await;
    });
}

/// Kills a group member the test started, whatever the test's outcome, so a
/// failure cannot leave it running into the rest of the run.
struct Leftover(u32);

impl Drop for Leftover {
    fn drop(&mut self) {
        if !dead(self.0) {
            common::kill_pid(self.0);
        }
    }
}

/// A process-group leader with a member that ignores SIGTERM and holds none of
/// our pipes (a daemonised helper); `leader` adds the leader's own flags.
async fn leader_with_detached_member(leader: &[&str]) -> (stdio_mcp::Transport, Leftover) {
    let flags: Vec<&str> = ["--detached-grandchild"]
        .into_iter()
        .chain(leader.iter().copied())
        .collect();
    let t = peer(&flags).spawn().unwrap();
    t.send_request("ping", None).await.unwrap();
    eventually(5, || grandchild_pid(&t).is_some()).await;
    let member = Leftover(grandchild_pid(&t).unwrap());
    assert!(!dead(member.0));
    (t, member)
}

#[test]
fn close_ends_a_group_member_off_our_pipes_when_the_leader_dies_of_sigterm() {
    run(20, async {
        // The leader ignores EOF and dies of SIGTERM; its member ignores SIGTERM.
        let (t, member) = leader_with_detached_member(&["--ignore-eof"]).await;
        t.close().await.unwrap();
        common::assert_ladder_step_two(t.exit_status().unwrap());
        // close() resolved after the group's SIGKILL: nothing of it runs now.
        eventually(2, || dead(member.0)).await;
    });
}

#[test]
fn close_ends_a_group_member_off_our_pipes_when_the_leader_exits_on_eof() {
    run(20, async {
        let (t, member) = leader_with_detached_member(&[]).await;
        t.close().await.unwrap();
        assert_eq!(t.exit_status().unwrap().code(), Some(0));
        eventually(2, || dead(member.0)).await;
    });
}

#[test]
fn dropping_every_handle_ends_a_group_member_off_our_pipes() {
    run(20, async {
        let (t, member) = leader_with_detached_member(&["--ignore-eof"]).await;
        drop(t);
        // The driver closes as close() does: EOF, SIGTERM at 2 s, SIGKILL at 4 s.
        eventually(8, || dead(member.0)).await;
    });
}

#[test]
fn dropping_the_driver_after_the_leader_exited_ends_its_group() {
    run(20, async {
        let (t, driver) = peer(&["--detached-grandchild"])
            .spawn_with_driver()
            .unwrap();
        let mut driver = Box::pin(driver);
        let work = async {
            t.send_request("ping", None).await.unwrap();
            eventually(5, || grandchild_pid(&t).is_some()).await;
            drop(t.close());
            // The leader exits on EOF at once; the driver then waits on its group.
            eventually(5, || t.exit_status().is_some()).await;
        };
        let ran = futures::future::select(driver.as_mut(), Box::pin(work)).await;
        // On Unix the member ignores SIGTERM, so the driver still waits for its
        // group's SIGKILL when dropped; Windows ends the job at once instead.
        #[cfg(unix)]
        assert!(
            matches!(ran, futures::future::Either::Right(_)),
            "the driver ended before the group did"
        );
        drop(ran);
        let member = Leftover(grandchild_pid(&t).unwrap());
        drop(driver);
        eventually(2, || dead(member.0)).await;
    });
}

#[test]
fn a_group_whose_leader_exits_while_the_transport_is_open_does_not_outlive_it() {
    run(20, async {
        let (t, member) = leader_with_detached_member(&["--ignore-eof"]).await;
        let exit = t.send_request("test/exit", Some(serde_json::json!({"code": 4})));
        assert!(exit.await.is_err());
        assert_eq!(t.exit_status().map(|s| s.code()), Some(Some(4)));
        // Still holding the transport: the member gets SIGTERM, then SIGKILL 2 s later.
        eventually(5, || dead(member.0)).await;
        t.close().await.unwrap();
    });
}

/// A member of the group that has died but is not reaped (its parent never
/// waits, and whoever adopts it, init in a container, may reap late or never)
/// is not waited for: the close ends at the ladder's SIGTERM, not 2 s later.
#[cfg(target_os = "linux")]
#[test]
fn a_zombie_left_in_the_group_is_not_waited_for() {
    run(15, async {
        let script = format!("sleep 0.1 & exec {} --ignore-eof", common::peer_exe());
        let t = stdio_mcp::Transport::builder(["sh", "-c", &script])
            .spawn()
            .unwrap();
        t.send_request("ping", None).await.unwrap();
        // The sleep has exited by now; the peer never reaps it.
        async_io::Timer::after(Duration::from_millis(300)).await;
        let started = std::time::Instant::now();
        t.close().await.unwrap();
        let took = started.elapsed();
        common::assert_ladder_step_two(t.exit_status().unwrap());
        assert!(took < Duration::from_millis(3000), "{took:?}");
    });
}
