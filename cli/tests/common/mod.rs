//! What the command line's tests share: the binary, the library's test
//! peer, a scratch folder per test, and a bounded run.

#![allow(dead_code)] // each test file uses its own part

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub const CLI: &str = env!("CARGO_BIN_EXE_stdio-mcp");

/// The library's test peer (`stdio-mcp-testkit`), of this build.
pub fn peer() -> String {
    stdio_mcp_testkit::exe("stdio-mcp-peer")
}

/// A folder of this test's own: its config file, its cache, its logs.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(test: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("stdio-mcp-cli-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    pub fn path(&self, name: &str) -> String {
        self.0.join(name).display().to_string()
    }

    /// Writes a config of `servers` (name → entry) and returns its path.
    pub fn config(&self, servers: Value) -> String {
        let file = self.path("mcp.json");
        std::fs::write(&file, json!({ "mcpServers": servers }).to_string()).unwrap();
        file
    }

    /// The `stdio-mcp` command, with this folder's cache and as its working
    /// directory (so no config file of the user's is found), and a HOME of its own.
    pub fn cli(&self, args: &[&str]) -> Command {
        let mut command = Command::new(CLI);
        command
            .args(args)
            .current_dir(&self.0)
            .env("STDIO_MCP_CACHE", self.path("catalog.json"))
            .env("HOME", &self.0)
            .env("XDG_CONFIG_HOME", self.0.join("config"))
            .env("XDG_DATA_HOME", self.0.join("data"))
            .env_remove("STDIO_MCP_TRUST")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    pub fn run(&self, args: &[&str]) -> Run {
        finish(self.cli(args).spawn().unwrap(), 90)
    }

    pub fn lines(&self, name: &str) -> usize {
        std::fs::read_to_string(self.path(name)).map_or(0, |t| t.lines().count())
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not one JSON document ({e}): {self:?}"))
    }
}

/// Waits for `child` at most `secs`, killing it past that (the test fails),
/// and for its output, which something it left running must not hold open.
pub fn finish(mut child: Child, secs: u64) -> Run {
    // Read on threads of their own while it runs (a full pipe would stall it).
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_string(&mut text);
            }
            text
        })
    };
    // A test that closed stdout (its reader left) reads no stdout.
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            panic!("stdio-mcp still running after {secs}s");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let ended = Instant::now();
    while !(stdout.is_finished() && stderr.is_finished()) {
        assert!(
            ended.elapsed() < Duration::from_secs(10),
            "stdio-mcp exited, but something it started holds its output open"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    Run {
        code: status.code().unwrap_or(-1),
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

/// A pinned real server of `scripts/install-test-servers`, if installed
/// (with `STDIO_MCP_REQUIRE_SERVERS`, as in CI, a missing one fails).
pub fn installed(relative: &str) -> Option<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../.servers")
        .join(relative);
    if path.exists() {
        return Some(path.display().to_string());
    }
    assert!(
        std::env::var_os("STDIO_MCP_REQUIRE_SERVERS").is_none(),
        "{} is not installed (run scripts/install-test-servers)",
        path.display()
    );
    eprintln!("NOT RUN: {} is not installed", path.display());
    None
}

/// Runs the shell command `line` on a pseudo-terminal of its own (`script`
/// gives it one, and passes our input to it), with this folder's
/// environment, `TERM=dumb` and `extra` variables, typing each of `keys`
/// after a pause as a person would; waits for it as [`finish`] does.
#[cfg(target_os = "linux")]
pub fn on_terminal(s: &Scratch, line: &str, extra: &[(&str, &Path)], keys: &[&str]) -> Run {
    use std::io::Write;
    let command = s.cli(&[]);
    let mut script = Command::new("script");
    script
        .args(["-qec", line, "/dev/null"])
        .envs(command.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .env("TERM", "dumb")
        .current_dir(&s.0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, value) in extra {
        script.env(name, value);
    }
    let mut child = script.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    for typed in keys {
        std::thread::sleep(Duration::from_millis(300));
        let _ = input.write_all(typed.as_bytes());
        let _ = input.flush();
    }
    let run = finish(child, 60);
    drop(input);
    run
}
