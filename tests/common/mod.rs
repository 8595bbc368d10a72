//! Helpers shared by the integration tests: the peer binary, and a bound on every wait.
#![allow(dead_code)]

use std::future::Future;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use futures::future::{select, Either};
use futures::pin_mut;
use serde_json::Value;
use stdio_mcp::{Transport, TransportBuilder};

/// The scriptable server built from `testkit/src/peer/` (`stdio-mcp-peer`).
pub fn peer_exe() -> &'static str {
    static PEER: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PEER.get_or_init(|| stdio_mcp_testkit::exe("stdio-mcp-peer"))
}

/// A builder for the peer with the given flags.
pub fn peer(flags: &[&str]) -> TransportBuilder {
    Transport::builder(std::iter::once(peer_exe()).chain(flags.iter().copied()))
}

/// Awaits `fut`, failing the test if it takes longer than `secs` seconds.
pub async fn within<T>(secs: u64, fut: impl Future<Output = T>) -> T {
    let timer = async_io::Timer::after(Duration::from_secs(secs));
    pin_mut!(fut);
    match select(fut, timer).await {
        Either::Left((value, _)) => value,
        Either::Right(_) => panic!("still waiting after {secs}s: the behaviour under test hangs"),
    }
}

/// `futures::executor::block_on` with a bound: the whole test body gets `secs` seconds.
pub fn run<T>(secs: u64, fut: impl Future<Output = T>) -> T {
    futures::executor::block_on(within(secs, fut))
}

/// The lines the peer has read so far, parsed (non-JSON lines as strings).
pub async fn received(t: &Transport) -> Vec<Value> {
    let lines = t
        .send_request("test/received", None)
        .await
        .expect("test/received");
    lines
        .as_array()
        .expect("an array")
        .iter()
        .map(|l| {
            let text = l.as_str().expect("a string");
            serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
        })
        .collect()
}

/// The `notifications/cancelled` messages among `lines`.
pub fn cancels(lines: &[Value]) -> Vec<&Value> {
    lines
        .iter()
        .filter(|l| l["method"] == "notifications/cancelled")
        .collect()
}

/// Waits until `cond` holds, polling every few milliseconds, for at most `secs`.
pub async fn eventually(secs: u64, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < Duration::from_secs(secs),
            "condition not reached within {secs}s"
        );
        async_io::Timer::after(Duration::from_millis(5)).await;
    }
}

/// Whether a process with this pid still exists (zombies included).
pub fn process_exists(pid: u32) -> bool {
    process_state(pid).is_some()
}

/// A process's state letter from /proc (`Z` for a zombie), if it exists.
#[cfg(target_os = "linux")]
pub fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.rsplit_once(')')?.1;
    after.trim_start().chars().next()
}

/// A process's state letter as `ps` gives it (`Z` for a zombie), if it exists.
#[cfg(all(unix, not(target_os = "linux")))]
pub fn process_state(pid: u32) -> Option<char> {
    let out = std::process::Command::new("ps")
        .args(["-o", "state=", "-p", &pid.to_string()])
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).trim().chars().next()
}

/// `R` while the process runs, `Z` once it exited (someone still holds a
/// handle on it), `None` once it is gone.
#[cfg(windows)]
pub fn process_state(pid: u32) -> Option<char> {
    use windows_sys::Win32::Foundation::{CloseHandle, STILL_ACTIVE};
    use windows_sys::Win32::System::Threading::{
        GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
    };
    // SAFETY: OpenProcess takes plain values; the handle it returns is closed below.
    let handle = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if handle.is_null() {
        return None;
    }
    let mut code = 0u32;
    // SAFETY: `handle` is valid and `code` is a live u32 for the call to fill.
    let asked = unsafe { GetExitCodeProcess(handle, &mut code) };
    // SAFETY: `handle` came from OpenProcess and is closed once.
    unsafe { CloseHandle(handle) };
    Some(if asked != 0 && code == STILL_ACTIVE as u32 {
        'R'
    } else {
        'Z'
    })
}

/// Kills a process that is not our child, by pid.
pub fn kill_pid(pid: u32) {
    #[cfg(unix)]
    let _ = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status();
    #[cfg(windows)]
    {
        use windows_sys::Win32::Foundation::CloseHandle;
        use windows_sys::Win32::System::Threading::{
            OpenProcess, TerminateProcess, PROCESS_TERMINATE,
        };
        // SAFETY: plain values in; the handle, if any, is used once and closed.
        unsafe {
            let handle = OpenProcess(PROCESS_TERMINATE, 0, pid);
            if !handle.is_null() {
                TerminateProcess(handle, 1);
                CloseHandle(handle);
            }
        }
    }
}

/// A small deterministic random sequence (xorshift), so failures reproduce.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The names of every tool the client's server offers.
pub async fn tool_names(client: &stdio_mcp::client::Client) -> Vec<String> {
    let tools = client.list_tools().await.expect("tools/list");
    tools.into_iter().map(|t| t.name).collect()
}

/// A list that a handler fills with the params of every notification of `method`,
/// and the handler to give `TransportBuilder::on_notification`.
pub fn notifications_of(
    method: &'static str,
) -> (
    std::sync::Arc<std::sync::Mutex<Vec<Value>>>,
    impl FnMut(&stdio_mcp::Notification) + Send + 'static,
) {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = std::sync::Arc::clone(&seen);
    let handler = move |n: &stdio_mcp::Notification| {
        if n.method == method {
            log.lock()
                .unwrap()
                .push(n.params.clone().unwrap_or(Value::Null));
        }
    };
    (seen, handler)
}

/// The close ladder's second step ended this child: SIGTERM on Unix,
/// `TerminateProcess` (exit code 1, no signal) on Windows.
pub fn assert_ladder_step_two(status: stdio_mcp::ExitStatus) {
    #[cfg(unix)]
    assert_eq!((status.code(), status.signal()), (None, Some(15)));
    #[cfg(windows)]
    assert_eq!((status.code(), status.signal()), (Some(1), None));
}

/// Has the test peer announce that its tools changed (`test/changed`).
pub async fn announce_tools_changed(client: &stdio_mcp::client::Client) {
    client
        .request(
            "test/changed",
            Some(serde_json::json!({"what": "tools"})),
            Default::default(),
        )
        .await
        .expect("test/changed");
}

/// The installed server's command, or `None` (after saying so) when missing.
pub fn installed(relative: &str, test: &str) -> Option<TransportBuilder> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(".servers")
        .join(relative);
    if path.exists() {
        return Some(Transport::builder([path]));
    }
    let message = format!(
        "{test}: NOT RUN: {} is not installed (run scripts/install-test-servers)",
        path.display()
    );
    assert!(
        std::env::var_os("STDIO_MCP_REQUIRE_SERVERS").is_none(),
        "{message}"
    );
    // Written past the test harness's capture, so it shows in a passing run.
    let _ = writeln!(std::io::stderr(), "{message}");
    None
}

/// What the client answered when the peer asked it `method` with `params`
/// (the peer's `test/ask`): `{"result": ..}` or `{"error": ..}`.
pub async fn answer_to(client: &stdio_mcp::client::Client, method: &str, params: Value) -> Value {
    let asked = client
        .request(
            "test/ask",
            Some(serde_json::json!({"method": method, "params": params})),
            stdio_mcp::client::CallOptions::new(),
        )
        .await
        .unwrap();
    asked["answer"].clone()
}

/// A group's tool changes in one line: `server: +added -removed ~changed(fields)`.
pub fn describe_changes(server: &str, changes: &stdio_mcp::client::ToolChanges) -> String {
    let mut words: Vec<String> = changes
        .added
        .iter()
        .map(|t| format!("+{}", t.name))
        .collect();
    words.extend(changes.removed.iter().map(|t| format!("-{}", t.name)));
    words.extend(
        changes
            .changed
            .iter()
            .map(|c| format!("~{}({})", c.after.name, c.fields.join(","))),
    );
    format!("{server}: {}", words.join(" "))
}

/// Writes the tools a `--tools-file` peer lists: `(name, description)`.
pub fn write_tools(path: &std::path::Path, tools: &[(&str, &str)]) {
    let tools: Vec<serde_json::Value> = tools
        .iter()
        .map(|(name, description)| {
            serde_json::json!({"name": name, "description": description,
                               "inputSchema": {"type": "object"}})
        })
        .collect();
    write_whole(path, &serde_json::Value::Array(tools).to_string());
}

/// Writes `text` to `path` in one step (a file renamed into place), so that
/// a peer watching the file never reads it half-written.
pub fn write_whole(path: &std::path::Path, text: &str) {
    let next = path.with_extension("next");
    std::fs::write(&next, text).unwrap();
    // Windows refuses to replace a file another process has open (the peer
    // reading it): tried again for up to a second.
    for _ in 0..100 {
        match std::fs::rename(&next, path) {
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                std::thread::sleep(Duration::from_millis(10));
            }
            done => return done.unwrap(),
        }
    }
    panic!("{} stayed in use for a second", path.display());
}

/// The live (not zombie) processes of process group `group`, from `ps`.
#[cfg(unix)]
pub fn live_members(group: u32) -> Vec<u32> {
    let out = std::process::Command::new("ps")
        .args(["-e", "-o", "pid=,pgid=,stat="])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let pid = fields.next()?.parse().ok()?;
            let pgid: u32 = fields.next()?.parse().ok()?;
            let state = fields.next()?;
            (pgid == group && !state.starts_with('Z')).then_some(pid)
        })
        .collect()
}

/// The processes below `pid` (its children, theirs, …), from `/proc`: a
/// sandboxed server runs in a session and PID namespace of its own, so
/// neither its transport's process group nor the pids it reports find it.
#[cfg(target_os = "linux")]
pub fn descendants(pid: u32) -> Vec<u32> {
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
            // The parent is the second field after the name, which ends with the last ')'.
            let parent = stat[stat.rfind(')')? + 2..]
                .split(' ')
                .nth(1)?
                .parse()
                .ok()?;
            Some((p, parent))
        })
        .collect();
    let mut found = vec![pid];
    let mut at = 0;
    while at < found.len() {
        let parent = found[at];
        found.extend(
            parents
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        at += 1;
    }
    found.remove(0);
    found
}

/// Dead: gone, or exited and not yet reaped (a zombie; on Windows, a
/// handle still held).
pub fn dead(pid: u32) -> bool {
    matches!(process_state(pid), None | Some('Z'))
}

/// Kills what a failed test left running, when it goes.
pub struct Leftovers(pub Vec<u32>);

impl Drop for Leftovers {
    fn drop(&mut self) {
        for &pid in &self.0 {
            if !dead(pid) {
                kill_pid(pid);
            }
        }
    }
}
