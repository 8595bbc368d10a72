//! Process groups and the parent-death signal: no server outlives its host.

mod common;

use std::process::Command;
use std::time::Duration;

use common::{eventually, peer, process_state, run};

/// Dead means gone, or a zombie waiting for whoever adopted it.
fn dead(pid: u32) -> bool {
    matches!(process_state(pid), None | Some('Z'))
}

fn grandchild_pid(t: &stdio_mcp::Transport) -> Option<u32> {
    t.stderr_tail()
        .iter()
        .find_map(|l| l.strip_prefix("grandchild ").and_then(|p| p.parse().ok()))
}

#[test]
fn process_group_close_takes_down_a_wrapped_grandchild() {
    run(15, async {
        let t = peer(&["--grandchild", "--ignore-eof"])
            .process_group(true)
            .spawn()
            .unwrap();
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
        let t = peer(&["--grandchild"]).process_group(true).spawn().unwrap();
        t.send_request("ping", None).await.unwrap();
        eventually(5, || grandchild_pid(&t).is_some()).await;
        let grandchild = grandchild_pid(&t).unwrap();
        t.close().await.unwrap();
        assert_eq!(t.exit_status().unwrap().code(), Some(0));
        eventually(5, || dead(grandchild)).await;
    });
}

#[test]
fn without_a_group_the_grandchild_survives_which_is_why_the_option_exists() {
    run(15, async {
        let t = peer(&["--grandchild", "--ignore-eof"]).spawn().unwrap();
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

/// On its own: a server spawned with `kill_on_parent_death` works as usual.
/// Run by the test below as a separate "host" process (with
/// `STDIO_MCP_HOST_HELPER` set), it prints the server's pid and waits to be killed.
#[test]
fn kill_on_parent_death_spawns_a_working_server() {
    if std::env::var_os("STDIO_MCP_HOST_HELPER").is_some() {
        let t = peer(&["--ignore-eof", "--ignore-term"])
            .kill_on_parent_death(true)
            .spawn()
            .unwrap();
        println!("server-pid {}", t.pid());
        std::thread::sleep(Duration::from_secs(30));
        return;
    }
    run(10, async {
        let t = peer(&[]).kill_on_parent_death(true).spawn().unwrap();
        assert_eq!(
            t.send_request("test/echo", Some(serde_json::json!(1)))
                .await
                .unwrap(),
            serde_json::json!(1)
        );
        t.close().await.unwrap();
        assert_eq!(t.exit_status().unwrap().code(), Some(0));
    });
}

#[test]
fn kill_on_parent_death_takes_the_server_down_with_a_crashed_host() {
    run(20, async {
        use std::io::{BufRead, BufReader};
        let mut host = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "kill_on_parent_death_spawns_a_working_server",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("STDIO_MCP_HOST_HELPER", "1")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Read on a thread of its own, so a silent host fails the wait below
        // instead of blocking this test forever.
        let stdout = host.stdout.take().unwrap();
        let (found, pid) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                // libtest prints "test NAME ... " before the helper's own output.
                if let Some((_, pid)) = line.split_once("server-pid ") {
                    let _ = found.send(pid.trim().parse::<u32>().unwrap());
                    return;
                }
            }
        });
        let server = pid
            .recv_timeout(Duration::from_secs(10))
            .expect("the host printed the server pid");
        assert!(!dead(server));
        host.kill().unwrap(); // SIGKILL: the host gets no chance to clean up
        host.wait().unwrap();
        eventually(5, || dead(server)).await;
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
    let t = peer(&flags).process_group(true).spawn().unwrap();
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
            .process_group(true)
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
        let script = format!("sleep 0.1 & exec {} --ignore-eof", common::PEER);
        let t = stdio_mcp::Transport::builder(["sh", "-c", &script])
            .process_group(true)
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
