//! The keep-alive daemon through the built binary: start, warm calls with the
//! same output and exit codes as a direct run, status, stop with nothing
//! left behind; a stale, silent or foreign daemon never hung on; Ctrl-C and
//! bad folders. Each test's daemon lives in its scratch folder and is stopped
//! whatever the outcome. (On Windows, through a named pipe: the first test;
//! the others send Unix signals.)

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::{peer, Run, Scratch};
use serde_json::{json, Value};

/// A scratch folder whose commands find their daemon in `run/` there, and
/// whose daemon is stopped when it goes.
struct Place {
    s: Scratch,
    config: String,
}

impl Place {
    fn new(test: &str) -> Self {
        let s = Scratch::new(test);
        let config = s.config(json!({
            "demo": { "command": peer(), "args": ["--log-start", s.path("starts")] },
            "tasks": { "command": peer(), "args": ["--tasks", "--log-lines", s.path("lines")] },
        }));
        Place { s, config }
    }

    fn run(&self, args: &[&str]) -> Run {
        common::finish(self.command(args).spawn().unwrap(), 60)
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut all = vec!["--config", self.config.as_str()];
        all.extend_from_slice(args);
        let mut command = self.s.cli(&all);
        command.env("STDIO_MCP_DAEMON_DIR", self.s.0.join("run"));
        command
    }

    fn status(&self) -> Value {
        let r = self.run(&["--json", "daemon", "status"]);
        assert_eq!(r.code, 0, "{r:?}");
        r.json()
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let status = self.status();
        if let Some(pid) = status["pid"].as_u64() {
            // A test may have left it stopped (SIGSTOP).
            #[cfg(unix)]
            let _ = Command::new("kill")
                .args(["-CONT", &pid.to_string()])
                .status();
            let _ = pid;
            let _ = self.run(&["daemon", "stop"]);
        }
    }
}

/// Start, two warm calls, status, stop: on every platform.
#[test]
fn a_daemon_keeps_a_server_warm_on_every_platform() {
    let p = Place::new("daemon-anywhere");
    let started = p.run(&["daemon", "start"]);
    assert_eq!(started.code, 0, "{started:?}");
    for message in ["one", "two"] {
        let call = p.run(&["call", "demo", "echo", &format!("message={message}")]);
        let expected = format!("Echo: {message}");
        assert_eq!(
            (call.code, call.stdout.trim()),
            (0, expected.as_str()),
            "{call:?}"
        );
    }
    assert_eq!(
        p.s.lines("starts"),
        1,
        "the server stayed warm between the calls"
    );
    let status = p.status();
    assert_eq!(status["servers"][0]["state"], "ready", "{status}");
    assert_eq!(p.run(&["daemon", "stop"]).code, 0);
    assert_eq!(p.status(), json!({ "daemon": null }));
}

#[cfg(unix)]
fn alive(pid: u64) -> bool {
    Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
        && !matches!(process_state(pid), Some('Z'))
}

#[cfg(unix)]
fn process_state(pid: u64) -> Option<char> {
    let out = Command::new("ps")
        .args(["-o", "state=", "-p", &pid.to_string()])
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).trim().chars().next()
}

fn wait_until(secs: u64, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(
            started.elapsed() < Duration::from_secs(secs),
            "not within {secs}s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(unix)]
#[test]
fn start_two_warm_calls_status_and_stop() {
    let p = Place::new("daemon-flow");
    let started = p.run(&["daemon", "start"]);
    assert_eq!(started.code, 0, "{started:?}");
    assert!(
        started.stdout.starts_with("daemon started (pid "),
        "{started:?}"
    );
    let again = p.run(&["daemon", "start"]);
    assert_eq!(again.code, 0, "{again:?}");
    assert!(
        again.stdout.starts_with("a daemon runs here already"),
        "{again:?}"
    );

    for message in ["one", "two"] {
        let call = p.run(&["call", "demo", "echo", &format!("message={message}")]);
        assert_eq!(
            (call.code, call.stdout.trim()),
            (0, format!("Echo: {message}").as_str())
        );
    }
    assert_eq!(
        p.s.lines("starts"),
        1,
        "the server stayed warm between the calls"
    );

    // The same output and exit codes as a direct run.
    for args in [
        vec!["--json", "call", "demo", "echo", "message=hi"],
        vec!["call", "demo", "ehco", "message=hi"],
        vec!["call", "nobody", "echo"],
        vec!["--json", "tools", "demo"],
        vec!["call", "demo"],
    ] {
        let through = p.run(&args);
        let mut direct_args = vec!["--no-daemon"];
        direct_args.extend_from_slice(&args);
        let direct = p.run(&direct_args);
        assert_eq!(
            (through.code, &through.stdout, &through.stderr),
            (direct.code, &direct.stdout, &direct.stderr),
            "{args:?}"
        );
    }

    let status = p.status();
    let demo = status["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "demo")
        .unwrap()
        .clone();
    assert_eq!(
        (demo["state"].as_str(), demo["era"].as_str()),
        (Some("ready"), Some("legacy"))
    );
    let (daemon, server) = (
        status["pid"].as_u64().unwrap(),
        demo["pid"].as_u64().unwrap(),
    );
    assert!(alive(server));
    let text = p.run(&["daemon", "status"]);
    let row = format!("demo                 ready      legacy  {server:>8}");
    assert!(text.stdout.contains(&row), "{row:?} in {text:?}");

    let stopped = p.run(&["daemon", "stop"]);
    assert_eq!(stopped.code, 0, "{stopped:?}");
    assert!(!alive(daemon) && !alive(server), "nothing left behind");
    let none = p.run(&["daemon", "stop"]);
    assert_eq!((none.code, none.stdout.trim()), (0, "no daemon runs here"));
}

#[cfg(unix)]
#[test]
fn a_dead_or_silent_daemon_is_never_hung_on() {
    let p = Place::new("daemon-stale");
    assert_eq!(p.run(&["daemon", "start"]).code, 0);
    let pid = p.status()["pid"].as_u64().unwrap();
    assert!(Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap()
        .success());
    wait_until(5, || !alive(pid));
    // Its socket is left: the command finds nobody there and runs itself.
    let started = Instant::now();
    let call = p.run(&["call", "demo", "echo", "message=hi"]);
    assert_eq!((call.code, call.stdout.trim()), (0, "Echo: hi"), "{call:?}");
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(p.status()["pid"], Value::Null, "the stale socket is gone");

    assert_eq!(p.run(&["daemon", "start"]).code, 0);
    let pid = p.status()["pid"].as_u64().unwrap();
    assert!(Command::new("kill")
        .args(["-STOP", &pid.to_string()])
        .status()
        .unwrap()
        .success());
    let started = Instant::now();
    let call = p.run(&["call", "demo", "echo", "message=hi"]);
    let took = started.elapsed();
    let _ = Command::new("kill")
        .args(["-CONT", &pid.to_string()])
        .status();
    assert_eq!((call.code, call.stdout.trim()), (0, "Echo: hi"), "{call:?}");
    #[cfg(target_os = "linux")]
    {
        // Found silent, it is ended (its servers with it), not abandoned.
        assert!(
            call.stderr.contains(
                "does not answer, so it was ended with its servers: running the command here"
            ),
            "{call:?}"
        );
        wait_until(10, || !alive(pid));
    }
    #[cfg(not(target_os = "linux"))]
    assert!(
        call.stderr
            .contains("does not answer: running the command here"),
        "{call:?}"
    );
    assert!(took < Duration::from_secs(4), "{took:?}");
}

#[cfg(unix)]
#[test]
fn ctrl_c_through_the_daemon_cancels_the_call_and_exits_130() {
    let p = Place::new("daemon-interrupt");
    assert_eq!(p.run(&["daemon", "start"]).code, 0);
    let child = p
        .command(&["call", "tasks", "job", "outcome=never"])
        .spawn()
        .unwrap();
    let lines = p.s.path("lines");
    wait_until(20, || {
        std::fs::read_to_string(&lines).is_ok_and(|l| l.contains("tasks/get"))
    });
    assert!(Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap()
        .success());
    let r = common::finish(child, 20);
    assert_eq!(r.code, 130, "{r:?}");
    wait_until(5, || {
        std::fs::read_to_string(&lines).is_ok_and(|l| l.contains("\"method\":\"tasks/cancel\""))
    });
}

#[cfg(unix)]
#[test]
fn a_command_of_another_version_is_refused_naming_both() {
    use std::io::{BufRead, BufReader, Write};
    let p = Place::new("daemon-version");
    assert_eq!(p.run(&["daemon", "start"]).code, 0);
    let socket = p.status()["socket"].as_str().unwrap().to_owned();
    let mut stream = std::os::unix::net::UnixStream::connect(&socket).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    // The wire of cli/src/daemon/protocol.rs.
    writeln!(stream, "{}", json!({ "hello": { "version": "0.0.1" } })).unwrap();
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let hello: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(hello["hello"]["version"], env!("CARGO_PKG_VERSION"));
    let run = json!({ "run": { "argv": ["servers"], "version": "0.0.1", "launch": {},
                               "roots": [], "asks": false } });
    writeln!(stream, "{run}").unwrap();
    line.clear();
    reader.read_line(&mut line).unwrap();
    let answer: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(answer["done"]["code"], 1, "{answer}");
    let said = answer["done"]["stderr"].as_str().unwrap();
    assert!(
        said.contains(env!("CARGO_PKG_VERSION")) && said.contains("0.0.1"),
        "{said}"
    );
}

#[cfg(unix)]
#[test]
fn folders_that_others_may_reach_and_paths_too_long_are_errors_naming_them() {
    use std::os::unix::fs::PermissionsExt;
    let p = Place::new("daemon-folders");
    let open = p.s.0.join("open");
    std::fs::create_dir_all(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
    let r = common::finish(
        p.command(&["daemon", "start"])
            .env("STDIO_MCP_DAEMON_DIR", &open)
            .spawn()
            .unwrap(),
        30,
    );
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains(&open.display().to_string()) && r.stderr.contains("755"),
        "{r:?}"
    );
    let long = p.s.0.join("x".repeat(120));
    let r = common::finish(
        p.command(&["daemon", "start"])
            .env("STDIO_MCP_DAEMON_DIR", &long)
            .spawn()
            .unwrap(),
        30,
    );
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("longer than a socket takes"), "{r:?}");
}

#[cfg(unix)]
/// A daemon hosts trusted entries only, and checks each command's entries as
/// a direct run would: a project server refused until trusted.
#[test]
fn a_daemon_starts_no_untrusted_project_server() {
    let s = Scratch::new("daemon-trust");
    let project = json!({ "mcpServers": { "demo": {
        "command": peer(), "args": ["--log-start", s.path("starts")] } } });
    std::fs::write(s.0.join(".mcp.json"), project.to_string()).unwrap();
    let run = |args: &[&str]| {
        let mut command = s.cli(args);
        command.env("STDIO_MCP_DAEMON_DIR", s.0.join("run"));
        common::finish(command.spawn().unwrap(), 60)
    };
    assert_eq!(run(&["daemon", "start"]).code, 0);
    let refused = run(&["call", "demo", "echo", "message=hi"]);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(refused.stderr.contains("is untrusted"), "{refused:?}");
    assert_eq!(s.lines("starts"), 0);
    assert_eq!(run(&["trust", "demo"]).code, 0);
    let call = run(&["call", "demo", "echo", "message=hi"]);
    assert_eq!((call.code, call.stdout.trim()), (0, "Echo: hi"), "{call:?}");
    let status = run(&["--json", "daemon", "status"]).json();
    assert_eq!(
        status["servers"][0]["state"], "ready",
        "served by the daemon: {status}"
    );
    assert_eq!(run(&["daemon", "stop"]).code, 0);
}

#[cfg(unix)]
/// The pinned real servers, warm in a daemon: a call to each twice, their
/// pids in `status`, and nothing of them left after `stop`.
#[test]
fn the_pinned_real_servers_stay_warm_in_a_daemon() {
    let (Some(everything), Some(time)) = (
        common::installed("node_modules/.bin/mcp-server-everything"),
        common::installed("venv/bin/mcp-server-time"),
    ) else {
        return;
    };
    let s = Scratch::new("daemon-real");
    let config = s.config(json!({
        "everything": { "command": everything },
        "time": { "command": time },
    }));
    let run = |args: &[&str]| {
        let mut all = vec!["--config", config.as_str()];
        all.extend_from_slice(args);
        let mut command = s.cli(&all);
        command.env("STDIO_MCP_DAEMON_DIR", s.0.join("run"));
        common::finish(command.spawn().unwrap(), 120)
    };
    assert_eq!(run(&["daemon", "start"]).code, 0);
    for _ in 0..2 {
        let sum = run(&["call", "everything", "get-sum", "a=19", "b=23"]);
        assert_eq!(
            (sum.code, sum.stdout.trim()),
            (0, "The sum of 19 and 23 is 42."),
            "{sum:?}"
        );
        let now = run(&["--json", "call", "time", "get_current_time", "timezone=UTC"]);
        assert_eq!(now.code, 0, "{now:?}");
        assert!(now.stdout.contains("UTC"), "{now:?}");
    }
    let status = run(&["--json", "daemon", "status"]).json();
    let pids: Vec<u64> = status["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["pid"].as_u64().unwrap_or_else(|| panic!("{status}")))
        .collect();
    assert_eq!(pids.len(), 2);
    let daemon = status["pid"].as_u64().unwrap();
    assert_eq!(run(&["daemon", "stop"]).code, 0);
    assert!(!alive(daemon));
    wait_until(5, || pids.iter().all(|&pid| !alive(pid)));
}

/// A project server changed since it was trusted: on a terminal the command
/// asks, through a daemon as without one (the question cannot go to the
/// daemon, so the command runs where it can be asked).
#[cfg(target_os = "linux")]
#[test]
fn a_changed_project_server_is_asked_about_with_a_daemon_as_without() {
    let s = Scratch::new("daemon-asks");
    let write = |extra: &str| {
        let servers = json!({ "mcpServers": {
            "demo": { "command": peer(), "args": ["--log-start", s.path("starts"), extra] },
        }});
        std::fs::write(s.0.join(".mcp.json"), servers.to_string()).unwrap();
    };
    write("--banner");
    let run = |args: &[&str]| {
        let mut command = s.cli(args);
        command.env("STDIO_MCP_DAEMON_DIR", s.0.join("run"));
        common::finish(command.spawn().unwrap(), 60)
    };
    assert_eq!(run(&["trust", "demo"]).code, 0);
    let started = run(&["daemon", "start"]);
    assert_eq!(started.code, 0, "{started:?}");
    write("--paged");
    let run_dir = s.0.join("run");
    let on_terminal = |extra: &str| {
        let line = format!("{} {extra} call demo echo message=hi", common::CLI);
        let env = [("STDIO_MCP_DAEMON_DIR", run_dir.as_path())];
        common::on_terminal(&s, &line, &env, &["n\n"])
    };
    let through = on_terminal("");
    let direct = on_terminal("--no-daemon");
    let _ = run(&["daemon", "stop"]);
    for r in [&through, &direct] {
        assert_eq!(r.code, 1, "{r:?}");
        assert!(
            r.stdout.contains("changed since you trusted it: args"),
            "{r:?}"
        );
        assert!(
            r.stdout.contains("[y/N]") && r.stdout.contains("nothing was started"),
            "{r:?}"
        );
    }
    assert_eq!(through.stdout, direct.stdout);
}

/// The command's standard input and environment travel with it: `--args -`
/// reads the command's stdin, and a server defined otherwise in the
/// command's environment (`${env:X}`) is not answered by the daemon's; each
/// compared with the same command run with `--no-daemon`.
#[cfg(unix)]
#[test]
fn stdin_and_the_commands_environment_give_the_same_answer_as_directly() {
    use std::io::Write;
    let s = Scratch::new("daemon-travels");
    for (file, tool) in [("one.json", "from-one"), ("two.json", "from-two")] {
        let tools = json!([{"name": tool, "inputSchema": {"type": "object"}}]);
        std::fs::write(s.0.join(file), tools.to_string()).unwrap();
    }
    let config = s.config(json!({
        "demo": { "command": peer() },
        "e": { "command": peer(), "args": ["--tools-file", "${env:X}"] },
    }));
    let command = |x: &str, args: &[&str]| {
        let mut all = vec!["--config", config.as_str()];
        all.extend_from_slice(args);
        let mut command = s.cli(&all);
        command
            .env("STDIO_MCP_DAEMON_DIR", s.0.join("run"))
            .env("X", s.path(x));
        command
    };
    let run = |x: &str, args: &[&str], stdin: Option<&str>| {
        let mut c = command(x, args);
        if stdin.is_some() {
            c.stdin(std::process::Stdio::piped());
        }
        let mut child = c.spawn().unwrap();
        if let Some(text) = stdin {
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
        }
        common::finish(child, 60)
    };
    let started = run("one.json", &["daemon", "start"], None);
    assert_eq!(started.code, 0, "{started:?}");
    let both = |x: &str, args: &[&str], stdin: Option<&str>| {
        let through = run(x, args, stdin);
        let mut direct_args = vec!["--no-daemon"];
        direct_args.extend_from_slice(args);
        let direct = run(x, &direct_args, stdin);
        assert_eq!(
            (through.code, &through.stdout, &through.stderr),
            (direct.code, &direct.stdout, &direct.stderr),
            "through the daemon, then directly"
        );
        through
    };
    let echoed = both(
        "one.json",
        &["call", "demo", "echo", "--args", "-"],
        Some("{\"message\":\"hi\"}"),
    );
    assert_eq!(
        (echoed.code, echoed.stdout.trim()),
        (0, "Echo: hi"),
        "{echoed:?}"
    );
    let empty = both(
        "one.json",
        &["call", "demo", "echo", "--args", "-"],
        Some(""),
    );
    assert_eq!(empty.code, 1, "{empty:?}");
    let listed = both("two.json", &["tools", "e"], None);
    assert!(listed.stdout.starts_with("from-two"), "{listed:?}");
    let warm = both("one.json", &["tools", "e"], None);
    assert!(warm.stdout.starts_with("from-one"), "{warm:?}");
    let _ = run("one.json", &["daemon", "stop"], None);
}

/// A server's question goes to the terminal of the command that made the
/// call, through a daemon as without one: the same form, the same answer
/// sent back; with `--no-input` it is declined in both.
#[cfg(target_os = "linux")]
#[test]
fn a_servers_question_is_asked_on_the_commands_terminal_through_the_daemon() {
    let s = Scratch::new("daemon-questions");
    let config = s.config(json!({ "asker": { "command": peer(), "args": ["--scenario", "ask"] } }));
    let run_dir = s.0.join("run");
    let env = [("STDIO_MCP_DAEMON_DIR", run_dir.as_path())];
    let cli = |args: &[&str]| {
        let mut command = s.cli(&[&["--config", config.as_str()], args].concat());
        command.env("STDIO_MCP_DAEMON_DIR", &run_dir);
        common::finish(command.spawn().unwrap(), 60)
    };
    let started = cli(&["daemon", "start"]);
    assert_eq!(started.code, 0, "{started:?}");
    let schema = json!({ "type": "object", "properties": {
        "name": { "type": "string", "title": "Name" },
        "level": { "type": "string", "enum": ["low", "high"] },
    }});
    let on_terminal = |extra: &str, keys: &[&str]| {
        let line = format!(
            "{} --config {config} {extra} call asker ask 'schema:={schema}'",
            common::CLI
        );
        common::on_terminal(&s, &line, &env, keys)
    };
    // Answer: yes; the second level; a name (the fields come in name order).
    let keys = ["y", "\x1b[B", "\r", "Ada\r"];
    let through = on_terminal("", &keys);
    let direct = on_terminal("--no-daemon", &keys);
    let declined_through = on_terminal("--no-input", &[]);
    let declined_direct = on_terminal("--no-input --no-daemon", &[]);
    let status = cli(&["--json", "daemon", "status"]).json();
    let _ = cli(&["daemon", "stop"]);
    let answered = |r: &Run| {
        r.stdout
            .lines()
            .find_map(|l| {
                l.split_once("Elicitation completed: ")
                    .map(|(_, a)| a.trim().to_owned())
            })
            .unwrap_or_else(|| panic!("no answer: {r:?}"))
    };
    assert_eq!(
        answered(&direct),
        r#"{"level":"high","name":"Ada"}"#,
        "{direct:?}"
    );
    assert_eq!(answered(&through), answered(&direct), "{through:?}");
    assert_eq!((through.code, direct.code), (0, 0));
    assert_eq!(answered(&declined_direct), "null", "{declined_direct:?}");
    assert_eq!(
        (declined_through.code, &declined_through.stdout),
        (declined_direct.code, &declined_direct.stdout)
    );
    // The daemon's server answered the calls that went through it.
    let asker = &status["servers"][0];
    assert_eq!(
        (asker["name"].as_str(), asker["state"].as_str()),
        (Some("asker"), Some("ready")),
        "{status}"
    );
}

/// `--timeout` bounds a server's start in a direct run: through a daemon
/// whose server is not running yet, the command runs directly, with the
/// same outcome; `--root` gives the server the command's roots.
#[cfg(unix)]
#[test]
fn timeout_and_roots_give_the_same_answer_through_the_daemon_as_directly() {
    let s = Scratch::new("daemon-timeout");
    let config = s.config(json!({
        "slow": { "command": peer(), "args": ["--start-delay", "3000"] },
        "roots": { "command": peer(), "args": ["--scenario", "roots"] },
    }));
    let run = |args: &[&str]| {
        let mut command = s.cli(&[&["--config", config.as_str()], args].concat());
        command.env("STDIO_MCP_DAEMON_DIR", s.0.join("run"));
        common::finish(command.spawn().unwrap(), 60)
    };
    let started = run(&["daemon", "start"]);
    assert_eq!(started.code, 0, "{started:?}");
    let both = |args: &[&str]| {
        let through = run(args);
        let direct = run(&[&["--no-daemon"], args].concat());
        assert_eq!(
            (through.code, &through.stdout, &through.stderr),
            (direct.code, &direct.stdout, &direct.stderr),
            "through the daemon, then directly"
        );
        through
    };
    let timed_out = both(&["--timeout", "1", "call", "slow", "echo", "message=hi"]);
    let root = s.0.join("elsewhere");
    std::fs::create_dir_all(&root).unwrap();
    let rooted = both(&["--root", root.to_str().unwrap(), "call", "roots", "roots"]);
    let here = both(&["call", "roots", "roots"]);
    let _ = run(&["daemon", "stop"]);
    assert!(
        timed_out.code == 3 && timed_out.stderr.contains("start limit of 1s (--timeout)"),
        "{timed_out:?}"
    );
    assert!(rooted.stdout.contains("elsewhere"), "{rooted:?}");
    assert!(
        !here.stdout.contains("elsewhere") && here.stdout.contains("Roots: ["),
        "{here:?}"
    );
}

/// A daemon out of descriptors (EMFILE) waits between failed accepts,
/// longer each time, instead of spinning; once descriptors free up it
/// answers again.
#[cfg(target_os = "linux")]
#[test]
fn a_daemon_out_of_descriptors_backs_off_and_recovers() {
    let p = Place::new("daemon-emfile");
    // Started under a small descriptor limit, which the daemon inherits.
    let start = p.command(&["daemon", "start"]);
    let program = start.get_program().to_owned();
    let args: Vec<_> = start.get_args().map(|a| a.to_owned()).collect();
    let mut limited = Command::new("sh");
    limited
        .arg("-c")
        .arg("ulimit -n 48 && exec \"$@\"")
        .arg("sh")
        .arg(&program)
        .args(&args)
        .envs(start.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .current_dir(start.get_current_dir().unwrap())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let started = common::finish(limited.spawn().unwrap(), 60);
    assert_eq!(started.code, 0, "{started:?}");
    let socket = p.status()["socket"].as_str().unwrap().to_owned();
    // Each connection the daemon takes costs it descriptors: these use them
    // all, and the rest wait in the listen queue.
    let held: Vec<_> = (0..64)
        .filter_map(|_| std::os::unix::net::UnixStream::connect(&socket).ok())
        .collect();
    std::thread::sleep(Duration::from_millis(1500));
    let log = std::fs::read_dir(p.s.0.join("run"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|path| path.extension().is_some_and(|e| e == "log"))
        .unwrap();
    let said = std::fs::read_to_string(&log).unwrap();
    // A failed accept, or an accepted connection whose second descriptor
    // fails and which is dropped at once: both are the daemon out of room.
    let failures = said
        .lines()
        .filter(|l| l.contains("Too many open files"))
        .count();
    assert!(failures > 0, "the daemon never ran out: {said}");
    // Backing off (10 ms, doubling up to 1 s): about 8 in 1.5 s; spinning: thousands.
    assert!(failures < 30, "{failures} failures in 1.5 s:\n{said}");
    drop(held);
    wait_until(10, || p.run(&["--json", "daemon", "status"]).code == 0);
}

/// `--verbose` (the servers' stderr is the command's) and a command typed in
/// another folder (the daemon serves the folder it was started in) run
/// where they are typed: the same outcome as with `--no-daemon`.
#[cfg(unix)]
#[test]
fn verbose_and_another_folder_give_the_same_answer_as_directly() {
    let s = Scratch::new("daemon-verbose");
    let config = s.config(
        json!({ "demo": { "command": peer(), "args": ["--log-start", s.path("starts")] } }),
    );
    let elsewhere = s.0.join("sub");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let run = |dir: &std::path::Path, args: &[&str]| {
        let mut command = s.cli(&[&["--config", config.as_str()], args].concat());
        command
            .current_dir(dir)
            .env("STDIO_MCP_DAEMON_DIR", s.0.join("run"));
        common::finish(command.spawn().unwrap(), 60)
    };
    let started = run(&s.0, &["daemon", "start"]);
    assert_eq!(started.code, 0, "{started:?}");
    assert_eq!(run(&s.0, &["call", "demo", "echo", "message=warm"]).code, 0);
    let starts = || s.lines("starts");
    let warm = starts();
    for (dir, args) in [
        (
            &s.0,
            &["--verbose", "call", "demo", "echo", "message=hi"][..],
        ),
        (&elsewhere, &["call", "demo", "echo", "message=hi"][..]),
    ] {
        let through = run(dir, args);
        let direct = run(dir, &[&["--no-daemon"], args].concat());
        assert_eq!(
            (through.code, &through.stdout, &through.stderr),
            (direct.code, &direct.stdout, &direct.stderr),
            "{args:?} in {}: through the daemon, then directly",
            dir.display()
        );
        assert_eq!(through.stdout.trim(), "Echo: hi", "{through:?}");
    }
    // Each ran its own server: the daemon's warm one answered neither.
    assert_eq!(starts(), warm + 4);
    let _ = run(&s.0, &["daemon", "stop"]);
}
