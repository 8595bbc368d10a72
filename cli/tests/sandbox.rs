//! The ways around a sandbox's rules through the command line, as an
//! unprivileged user (root's tests are the library's:
//! tests/it/sandbox_ways_out.rs): `stdio-mcp call box escape way=…` against
//! the test peer's `escape` tool in the default sandbox, each way first
//! tried unconfined (`open`) where it is open there. Run as root (as CI
//! does), the commands run as `nobody` through setpriv, from a copy of the
//! binaries nobody may read; run as anyone else, as that user.
#![cfg(target_os = "linux")]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use common::{finish, Run, Scratch, CLI};

fn root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
}

/// A scratch folder an unprivileged user may use, with the command line
/// and the peer copied into it, and a config of `box` (the peer in the
/// default sandbox, with `extra` sandbox keys) and `open` (unconfined).
struct Unprivileged {
    s: Scratch,
    cli: PathBuf,
}

impl Unprivileged {
    fn new(test: &str, extra: Value) -> Self {
        let s = Scratch::new(test);
        std::fs::set_permissions(&s.0, std::fs::Permissions::from_mode(0o777)).unwrap();
        let copy = |from: &str, name: &str| {
            let to = s.0.join(name);
            std::fs::copy(from, &to).unwrap();
            std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o755)).unwrap();
            to
        };
        let cli = copy(CLI, "stdio-mcp");
        let peer = copy(&common::peer(), "stdio-mcp-peer");
        let mut sandbox = json!({"filesystem": {"allowWrite": [s.path("out")]}});
        if let (Some(sandbox), Some(extra)) = (sandbox.as_object_mut(), extra.as_object()) {
            sandbox.extend(extra.clone());
        }
        std::fs::create_dir_all(s.0.join("out")).unwrap();
        std::fs::set_permissions(s.0.join("out"), std::fs::Permissions::from_mode(0o777)).unwrap();
        s.config(json!({
            "box": {"command": peer, "args": ["--escape"], "sandboxEnabled": true, "sandbox": sandbox},
            "open": {"command": peer, "args": ["--escape"]},
        }));
        Unprivileged { s, cli }
    }

    /// `stdio-mcp` with `args`, as an unprivileged user.
    fn command(&self, args: &[String]) -> Command {
        // The scratch folder's environment (HOME, cache, config), another program.
        let command = self.s.cli(&[]);
        let mut line: Vec<String> = Vec::new();
        if root() {
            line.extend(
                [
                    "setpriv",
                    "--reuid=65534",
                    "--regid=65534",
                    "--clear-groups",
                    "--",
                ]
                .map(String::from),
            );
        }
        line.push(self.cli.display().to_string());
        line.extend(args.iter().cloned());
        let mut replaced = Command::new(&line[0]);
        replaced.args(&line[1..]);
        for (key, value) in command.get_envs() {
            match value {
                Some(value) => replaced.env(key, value),
                None => replaced.env_remove(key),
            };
        }
        replaced
            .current_dir(&self.s.0)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        replaced
    }

    fn call(&self, server: &str, way: &str, params: &[(&str, String)]) -> Value {
        let mut args = vec![
            "--config".to_owned(),
            self.s.path("mcp.json"),
            "call".to_owned(),
            server.to_owned(),
            "escape".to_owned(),
            format!("way={way}"),
        ];
        args.extend(params.iter().map(|(k, v)| format!("{k}={v}")));
        let run = finish(self.command(&args).spawn().unwrap(), 60);
        outcome(&run)
    }
}

fn outcome(run: &Run) -> Value {
    assert_eq!(run.code, 0, "{run:?}");
    serde_json::from_str(run.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {run:?}"))
}

fn refused(outcome: &Value) {
    assert_eq!(outcome["ok"], false, "got out: {outcome}");
}

fn got_out(outcome: &Value) {
    assert_eq!(
        outcome["ok"], true,
        "not open here even unconfined: {outcome}"
    );
}

#[test]
fn as_an_unprivileged_user_no_way_out_is_open() {
    if !stdio_mcp_testkit::bubblewrap("as_an_unprivileged_user_no_way_out_is_open") {
        return;
    }
    let u = Unprivileged::new("unprivileged", json!({}));
    let at = |name: &str| u.s.path(name);
    // A socket, a secret only the user may read, and a process of the user's.
    let socket = at("agent.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::write(at("token"), "s3cr3t").unwrap();
    std::fs::set_permissions(at("token"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut sleeper = if root() {
        Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "--",
                "sleep",
                "60",
            ])
            .spawn()
            .unwrap()
    } else {
        Command::new("sleep").arg("60").spawn().unwrap()
    };
    let pid = sleeper.id().to_string();

    got_out(&u.call("open", "unix_connect", &[("path", socket.clone())]));
    got_out(&u.call(
        "open",
        "proc_root_read",
        &[("pid", pid.clone()), ("path", at("token"))],
    ));
    got_out(&u.call("open", "setuid_chmod", &[("path", at("out/a"))]));
    let shm = format!("/dev/shm/stdio-mcp-cli-{}", std::process::id());
    got_out(&u.call(
        "open",
        "fill",
        &[("path", shm.clone()), ("bytes", (80u64 << 20).to_string())],
    ));

    refused(&u.call("box", "unix_connect", &[("path", socket)]));
    refused(&u.call("box", "io_uring", &[]));
    refused(&u.call(
        "box",
        "proc_root_read",
        &[("pid", pid.clone()), ("path", at("token"))],
    ));
    refused(&u.call("box", "signal", &[("pid", pid)]));
    refused(&u.call("box", "setuid_chmod", &[("path", at("out/b"))]));
    refused(&u.call("box", "umount", &[("path", "/".to_owned())]));
    refused(&u.call(
        "box",
        "fill",
        &[("path", shm), ("bytes", (80u64 << 20).to_string())],
    ));
    assert!(
        sleeper.try_wait().unwrap().is_none(),
        "the sandboxed server killed the sleeper"
    );
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    assert!(
        !Path::new(&at("out/b")).exists() || {
            let mode = std::fs::metadata(at("out/b")).unwrap().permissions().mode();
            mode & 0o6000 == 0
        }
    );
}

#[test]
fn as_an_unprivileged_user_its_processes_are_counted() {
    if !stdio_mcp_testkit::bubblewrap("as_an_unprivileged_user_its_processes_are_counted") {
        return;
    }
    let u = Unprivileged::new("processes", json!({"limits": {"processes": 16}}));
    let open = u.call("open", "fork", &[("count", "40".to_owned())]);
    got_out(&open);
    let boxed = u.call("box", "fork", &[("count", "40".to_owned())]);
    refused(&boxed);
    assert!(boxed["started"].as_u64().unwrap() < 16, "{boxed}");
}

#[test]
fn no_keystroke_reaches_the_terminal_the_command_runs_in() {
    if !stdio_mcp_testkit::bubblewrap("no_keystroke_reaches_the_terminal_the_command_runs_in") {
        return;
    }
    let u = Unprivileged::new("terminal", json!({}));
    // `script` runs the command on a new terminal it controls, as a shell would.
    let on_terminal = |server: &str| -> Value {
        let line = vec![
            "--config".to_owned(),
            u.s.path("mcp.json"),
            "call".to_owned(),
            server.to_owned(),
            "escape".to_owned(),
            "way=tiocsti".to_owned(),
        ];
        let inner = u.command(&line);
        let quoted: Vec<String> = std::iter::once(inner.get_program())
            .chain(inner.get_args())
            .map(|a| format!("'{}'", a.to_string_lossy()))
            .collect();
        let mut command = Command::new("script");
        command
            .args(["-qec", &quoted.join(" "), "/dev/null"])
            .envs(inner.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))))
            .current_dir(&u.s.0)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let run = finish(command.spawn().unwrap(), 60);
        let text = run
            .stdout
            .lines()
            .find(|l| l.contains("\"ok\""))
            .unwrap_or_else(|| panic!("{run:?}"));
        // What the terminal echoed (a pushed keystroke) may stand before it.
        let json = &text[text.find('{').unwrap()..];
        serde_json::from_str(json.trim()).unwrap_or_else(|e| panic!("{e}: {run:?}"))
    };
    let legacy =
        std::fs::read_to_string("/proc/sys/dev/tty/legacy_tiocsti").is_ok_and(|v| v.trim() == "1");
    if legacy {
        // This kernel lets a process push keystrokes into its own terminal.
        got_out(&on_terminal("open"));
    }
    refused(&on_terminal("box"));
}
