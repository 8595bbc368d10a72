//! The `stdio-mcp` binary end to end, as a script or a person runs it:
//! against the library's test peer (built by the library's own tests:
//! `cargo test` at the root, as `scripts/test` does first) and the pinned
//! real servers of `scripts/install-test-servers`. Each run has a bound.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::{finish, installed, peer, Scratch};
use serde_json::json;

fn demo(scratch: &Scratch) -> String {
    scratch.config(json!({
        "demo": { "command": peer(), "args": ["--log-start", scratch.path("starts")] },
        "tasks": { "command": peer(), "args": ["--tasks"] },
        "typo": { "comand": "x" },
    }))
}

#[test]
fn tools_come_from_the_cache_after_the_first_run_and_refresh_starts_again() {
    let s = Scratch::new("cache");
    let config = demo(&s);
    let first = s.run(&["--config", &config, "tools", "demo"]);
    assert_eq!(first.code, 0, "{first:?}");
    assert!(first.stdout.starts_with("echo "), "{first:?}");
    assert_eq!(s.lines("starts"), 1);
    let second = s.run(&["--config", &config, "tools", "demo"]);
    assert_eq!(second.stdout, first.stdout);
    assert_eq!(s.lines("starts"), 1, "the second listing started nothing");
    let all = s.run(&["--config", &config, "--json", "servers"]).json();
    let states: Vec<(String, String)> = all["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_owned(),
                s["state"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(
        states.contains(&("demo".into(), "idle".into())),
        "{states:?}"
    );
    assert!(
        states.contains(&("typo".into(), "failed".into())),
        "{states:?}"
    );
    assert_eq!(all["servers"][0]["source"], config);
    s.run(&["--config", &config, "--refresh", "tools", "demo"]);
    assert_eq!(s.lines("starts"), 2, "--refresh starts it");
}

#[test]
fn tools_are_marked_by_their_claims_and_a_tool_changed_since_the_cache_is_named_on_stderr() {
    let s = Scratch::new("marks");
    let file = s.path("tools.json");
    let tools = |read_description: &str, read_only: bool| {
        let tools = json!([
            {"name": "read", "description": read_description, "inputSchema": {"type": "object"},
             "annotations": {"readOnlyHint": read_only, "openWorldHint": false}},
            {"name": "fetch", "description": "Fetches.", "inputSchema": {"type": "object"},
             "annotations": {"destructiveHint": false}},
            {"name": "rm", "description": "Removes.", "inputSchema": {"type": "object"}}
        ]);
        std::fs::write(&file, tools.to_string()).unwrap();
    };
    tools("Reads.", true);
    let config =
        s.config(json!({ "files": { "command": peer(), "args": ["--tools-file", file] } }));
    let first = s.run(&["--config", &config, "tools", "files"]);
    let row = |name: &str, marks: &str, text: &str| format!("{name:<32} {marks:<25} {text}\n");
    let expected = [
        row("read", "[read-only]", "Reads."),
        row("fetch", "[open-world]", "Fetches."),
        row("rm", "[destructive, open-world]", "Removes."),
    ];
    assert_eq!(first.stdout, expected.concat(), "{first:?}");
    assert_eq!(first.stderr, "", "{first:?}");
    let json = s
        .run(&["--config", &config, "--json", "tools", "files"])
        .json();
    assert_eq!(
        json["tools"][2],
        json!({"name": "rm", "description": "Removes.", "inputSchema": {"type": "object"}})
    );

    // Between runs the server changed a tool: said once, when it is started.
    tools("Reads, and sends what it read elsewhere.", false);
    let cached = s.run(&["--config", &config, "tools", "files"]);
    assert_eq!(
        cached.stdout, first.stdout,
        "served from the cache, not started"
    );
    let refreshed = s.run(&["--config", &config, "--refresh", "tools", "files"]);
    assert_eq!(refreshed.code, 0, "{refreshed:?}");
    assert_eq!(
        refreshed.stderr,
        "stdio-mcp: files: tool read changed since it was last seen (annotations, description)\n"
    );
    assert!(
        refreshed.stdout.starts_with(&row(
            "read",
            "[destructive]",
            "Reads, and sends what it read elsewhere."
        )),
        "{refreshed:?}"
    );
    let again = s.run(&["--config", &config, "--refresh", "tools", "files"]);
    assert_eq!(
        again.stderr, "",
        "the cache took the new definition: {again:?}"
    );
}

#[test]
fn call_types_arguments_by_the_schema_and_says_what_does_not_fit() {
    let s = Scratch::new("call");
    let config = demo(&s);
    let r = s.run(&["--config", &config, "call", "demo", "echo", "message=007"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "Echo: 007\n"), "{r:?}");
    let r = s.run(&[
        "--config", &config, "--json", "call", "demo", "add", "a=2", "b:=3.5",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.json()["content"][0]["text"], "5.5");
    let r = s.run(&[
        "--config",
        &config,
        "--json",
        "call",
        "demo",
        "countdown",
        "from=ten",
    ]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.json()["error"]["message"],
        "argument from: \"ten\" is not an integer (the tool's schema says so)"
    );
    // Checked against the schema before sending: a and b are required.
    let r = s.run(&["--config", &config, "--json", "call", "demo", "add", "a=1"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(r.json()["error"]["kind"], "invalid_arguments");
    let r = s.run(&[
        "--config",
        &config,
        "call",
        "demo",
        "add",
        "--args",
        "{\"a\": 1, \"b\": 2}",
    ]);
    assert_eq!(r.stdout, "3\n", "{r:?}");
}

#[test]
fn exit_codes_tell_a_tool_error_a_server_error_and_a_server_that_cannot_start() {
    let s = Scratch::new("codes");
    let config = demo(&s);
    let r = s.run(&[
        "--config",
        &config,
        "--json",
        "call",
        "tasks",
        "job",
        "outcome=error_result",
    ]);
    assert_eq!(r.code, 2, "isError: {r:?}");
    assert_eq!(r.json()["isError"], true);
    let r = s.run(&[
        "--config",
        &config,
        "--json",
        "call",
        "tasks",
        "job",
        "outcome=fail",
    ]);
    assert_eq!(r.code, 2, "a JSON-RPC error: {r:?}");
    assert_eq!(r.json()["error"]["kind"], "rpc");
    assert_eq!(r.json()["error"]["server"], "tasks");
    let r = s.run(&["--json", "tools", "--", "/no/such/server"]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("no such program"));
    let r = s.run(&[
        "--json",
        "call",
        "echo",
        "message=x",
        "--",
        &peer(),
        "--initialize",
        "exit",
    ]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("exited"),
        "{r:?}"
    );
}

#[test]
fn bad_input_exits_1_with_one_line_and_a_did_you_mean() {
    let s = Scratch::new("usage");
    let config = demo(&s);
    for (args, expected) in [
        (vec!["tolls"], "a similar subcommand exists: 'tools'"),
        (
            vec!["--config", &config, "tools", "dmeo"],
            "\"dmeo\" (did you mean \"demo\"?)",
        ),
        (
            vec!["--config", &config, "call", "demo", "ecko"],
            "(did you mean \"echo\"?)",
        ),
        (
            vec!["--config", &config, "call", "demo", "echo", "--frob"],
            "unexpected argument '--frob'",
        ),
        (
            vec!["--config", &config, "tools", "typo"],
            "unknown key \"comand\" (did you mean \"command\"?)",
        ),
    ] {
        let r = s.run(&args);
        assert_eq!(r.code, 1, "{args:?}: {r:?}");
        assert!(r.stderr.contains(expected), "{args:?}: {r:?}");
        assert_eq!(r.stderr.trim_end().lines().count(), 1, "{args:?}: {r:?}");
        assert!(r.stdout.is_empty());
    }
    let broken = s.path("broken.json");
    std::fs::write(&broken, "{\"mcpServers\": [1]}").unwrap();
    let r = s.run(&["--config", &broken, "--json", "servers"]);
    assert_eq!(r.code, 1);
    let message = r.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(
        message.contains(&broken) && message.contains("field mcpServers"),
        "{message}"
    );
}

#[test]
fn an_ad_hoc_server_after_the_double_dash() {
    let s = Scratch::new("adhoc");
    let r = s.run(&["--json", "tools", "--", &peer(), "--discover", "modern"]);
    assert_eq!(r.code, 0, "{r:?}");
    let listed = r.json();
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echo", "add", "countdown"]);
    let r = s.run(&["--json", "info", "--", &peer(), "--discover", "modern"]);
    assert_eq!(r.json()["era"], "modern");
    assert_eq!(r.json()["protocolVersion"], "2026-07-28");
    let r = s.run(&[
        "prompt",
        "greet",
        "who=Ada",
        "--",
        &peer(),
        "--catalog",
        "p",
    ]);
    assert_eq!(r.stdout, "[user]\np greets Ada\n", "{r:?}");
    let r = s.run(&["read", "memo://p", "--", &peer(), "--catalog", "p"]);
    assert_eq!(r.stdout, "memo://p read from p\n", "{r:?}");
}

/// `stdio-mcp call` of a task that never ends, returned once the task is
/// polled (the peer logs every line it reads to `log`).
fn a_running_task(s: &Scratch, log: &str) -> std::process::Child {
    let child = s
        .cli(&[
            "call",
            "job",
            "outcome=never",
            "--",
            &peer(),
            "--tasks",
            "--log-lines",
            log,
        ])
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !std::fs::read_to_string(log).is_ok_and(|l| l.contains("tasks/get")) {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the call never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

/// `stdio-mcp … | head`: a reader that leaves ends the command quietly with
/// the status a shell expects (141), its call cancelled on the wire, its
/// server closed as usual.
#[cfg(unix)]
#[test]
fn a_closed_stdout_ends_the_command_quietly_with_141() {
    let s = Scratch::new("closed-stdout");
    let log = s.path("lines");
    let mut child = a_running_task(&s, &log);
    // The reader leaves while the call runs.
    drop(child.stdout.take());
    let r = finish(child, 20);
    assert_eq!((r.code, r.stderr.as_str()), (141, ""), "quietly: {r:?}");
    let lines = std::fs::read_to_string(&log).unwrap();
    assert!(lines.contains("\"method\":\"tasks/cancel\""), "{lines}");

    // A listing whose reader left before it was written: the same status.
    let config = demo(&s);
    let mut child = s
        .cli(&["--config", &config, "--refresh", "tools", "demo"])
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(
        (child.wait().unwrap().code(), stderr.as_str()),
        (Some(141), "")
    );
}

/// A server that asks something after the command is done with it
/// (server-everything asks `roots/list`) is not waited for: the ladder's 2 s
/// would come on top of every one-shot command.
#[test]
fn a_one_shot_command_does_not_wait_for_a_server_that_waits_for_it() {
    let s = Scratch::new("ask-on-eof");
    let started = Instant::now();
    let r = s.run(&["call", "echo", "message=hi", "--", &peer(), "--ask-on-eof"]);
    let took = started.elapsed();
    assert_eq!((r.code, r.stdout.trim()), (0, "Echo: hi"), "{r:?}");
    assert!(took < Duration::from_millis(1500), "{took:?}");
}

#[test]
fn ctrl_c_cancels_the_call_on_the_wire_then_exits_130() {
    let s = Scratch::new("interrupt");
    let log = s.path("lines");
    // Once the task runs (it is polled), the interrupt.
    let child = a_running_task(&s, &log);
    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let r = finish(child, 20);
    assert_eq!(r.code, 130, "{r:?}");
    let lines = std::fs::read_to_string(&log).unwrap();
    assert!(lines.contains("\"method\":\"tasks/cancel\""), "{lines}");
}

#[test]
fn completions_name_the_servers_and_the_cached_tools() {
    let s = Scratch::new("complete");
    let config = demo(&s);
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let r = s.run(&["completions", shell]);
        assert_eq!(r.code, 0);
        assert!(r.stdout.contains("stdio-mcp"), "{shell}: {r:?}");
    }
    s.run(&["--config", &config, "tools", "demo"]);
    let starts = s.lines("starts");
    let complete = |words: &[&str]| {
        let mut command = s.cli(&["--", "stdio-mcp", "--config", &config]);
        command.args(words).env("COMPLETE", "fish");
        let r = finish(command.spawn().unwrap(), 30);
        r.stdout
            .lines()
            .map(|l| l.split('\t').next().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let servers = complete(&["call", ""]);
    assert!(
        servers.contains(&"demo".to_owned()) && servers.contains(&"tasks".to_owned()),
        "{servers:?}"
    );
    let tools = complete(&["call", "demo", ""]);
    assert!(
        tools.starts_with(&["add".to_owned(), "countdown".to_owned(), "echo".to_owned()]),
        "{tools:?}"
    );
    assert_eq!(s.lines("starts"), starts, "completing started no server");
}

/// A pinned real server, installed by scripts/install-test-servers.
#[test]
fn the_pinned_real_servers_from_a_config_and_ad_hoc() {
    let (Some(old_time), Some(everything)) = (
        installed("old-python-sdk/bin/mcp-server-time"),
        installed("node_modules/.bin/mcp-server-everything"),
    ) else {
        return;
    };
    let s = Scratch::new("real");
    let config =
        s.config(json!({ "time": { "command": old_time, "args": ["--local-timezone", "UTC"] } }));
    let r = s.run(&[
        "--config",
        &config,
        "--json",
        "call",
        "time",
        "get_current_time",
        "timezone=UTC",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.json()["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("UTC"),
        "{r:?}"
    );
    let r = s.run(&[
        "--json",
        "call",
        "get-sum",
        "a=19",
        "b=23",
        "--",
        &everything,
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.json()["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("42"),
        "{r:?}"
    );
    let r = s.run(&["tools", "--", &everything]);
    assert!(r.stdout.lines().any(|l| l.starts_with("echo ")), "{r:?}");
}

#[cfg(target_os = "linux")]
#[test]
fn a_sandboxed_server_is_marked_and_its_denied_write_is_what_the_user_sees() {
    if !stdio_mcp_testkit::bubblewrap("a_sandboxed_server_is_marked") {
        return;
    }
    let s = Scratch::new("sandbox");
    let file = s.path("tools.json");
    let save = json!([{"name": "save", "inputSchema": {"type": "object",
                       "properties": {"write": {"type": "string"}}}}]);
    std::fs::write(&file, save.to_string()).unwrap();
    std::fs::create_dir_all(s.0.join("out")).unwrap();
    let config = s.config(json!({
        "boxed": { "command": peer(), "args": ["--tools-file", file],
                   "sandboxEnabled": true,
                   "sandbox": { "filesystem": { "allowWrite": [s.path("out")] } } },
    }));
    let servers = s.run(&["--config", &config, "servers"]);
    assert!(servers.stdout.contains("(sandboxed)"), "{servers:?}");
    let inside = format!("write={}", s.path("out/a"));
    let r = s.run(&["--config", &config, "call", "boxed", "save", &inside]);
    assert_eq!(
        (r.code, r.stdout.trim()),
        (0, format!("wrote {}", s.path("out/a")).as_str()),
        "{r:?}"
    );
    let outside = format!("write={}", s.path("b"));
    let r = s.run(&["--config", &config, "call", "boxed", "save", &outside]);
    assert_eq!(r.code, 2, "a tool's error: {r:?}");
    assert_eq!(
        r.stdout.trim(),
        format!(
            "cannot write {}: Read-only file system (os error 30)",
            s.path("b")
        )
    );
    assert!(!s.0.join("b").exists());
}

/// Config warnings are said once a command, on stderr and in `--json`; a
/// `sandbox` without `sandboxEnabled` says that the server runs unconfined.
#[test]
fn config_warnings_are_said_once_and_an_unconfined_sandbox_says_so() {
    let s = Scratch::new("warnings");
    let config = s.config(json!({
        "t4": { "command": peer(), "sandbox": { "filesystem": { "allowWrite": [s.path("out")] } } },
        "typo": { "command": peer(), "arg": ["--tasks"] },
    }));
    let unconfined = "stdio-mcp: warning: server \"t4\": \"sandbox\" is ignored without \
                      \"sandboxEnabled\": true — it runs unconfined";
    let typo = "stdio-mcp: warning: server \"typo\": unknown key \"arg\" is ignored (did you mean \"args\"?)";
    let r = s.run(&["--config", &config, "call", "t4", "echo", "message=hi"]);
    assert_eq!((r.code, r.stdout.trim()), (0, "Echo: hi"), "{r:?}");
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines, [unconfined], "only the named server's, once: {r:?}");
    let r = s.run(&["--config", &config, "servers"]);
    assert_eq!(r.code, 0, "{r:?}");
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines, [unconfined, typo], "{r:?}");
    let r = s.run(&[
        "--config",
        &config,
        "--json",
        "call",
        "t4",
        "echo",
        "message=hi",
    ]);
    let document = r.json();
    assert_eq!(document["content"][0]["text"], "Echo: hi", "{r:?}");
    assert_eq!(
        document["warnings"],
        json!([unconfined.trim_start_matches("stdio-mcp: warning: ")]),
        "{r:?}"
    );
    let r = s.run(&["--config", &config, "--json", "call", "t4", "nope"]);
    let document = r.json();
    assert_eq!(document["error"]["kind"], "usage", "{r:?}");
    assert_eq!(
        document["warnings"].as_array().map(Vec::len),
        Some(1),
        "{r:?}"
    );
}

/// `${workspaceFolder}` is absolute, as VS Code gives it: a relative
/// `--config` and a server's own `cwd` do not move what it names.
#[test]
fn workspace_folder_is_absolute_whatever_the_config_path_and_cwd() {
    let s = Scratch::new("workspace");
    let project = s.0.join("proj");
    std::fs::create_dir_all(project.join("sub")).unwrap();
    let tools = json!([{"name": "from-the-workspace", "inputSchema": {"type": "object"}}]);
    std::fs::write(project.join("tools.json"), tools.to_string()).unwrap();
    let entry = json!({"mcpServers": {"srv": {
        "command": peer(),
        "args": ["--tools-file", "${workspaceFolder}/tools.json"],
        "cwd": "${workspaceFolder}/sub",
    }}});
    std::fs::write(project.join("mcp.json"), entry.to_string()).unwrap();
    // From the project's parent, the config named relatively.
    let r = s.run(&["--config", "proj/mcp.json", "--json", "tools", "srv"]);
    assert_eq!(r.code, 0, "{r:?}");
    let listed = r.json();
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["from-the-workspace"], "{r:?}");
}

/// The catalog cache keys a server on what defines it, not on the terminal
/// the command runs in; a completion whose key differs reads and never
/// removes the entry.
#[test]
fn the_catalog_cache_ignores_the_terminal_and_a_completion_keeps_its_entries() {
    let s = Scratch::new("cache-term");
    let config = demo(&s);
    let tools = |term: &str| {
        let mut command = s.cli(&["--config", &config, "tools", "demo"]);
        command.env("TERM", term).env("COLUMNS", "80");
        finish(command.spawn().unwrap(), 60)
    };
    let first = tools("xterm-256color");
    assert!(first.stdout.starts_with("echo "), "{first:?}");
    assert_eq!(s.lines("starts"), 1);
    let under_tmux = tools("screen-256color");
    assert!(under_tmux.stdout.starts_with("echo "), "{under_tmux:?}");
    assert_eq!(
        s.lines("starts"),
        1,
        "another TERM started the server again"
    );
    // A completion run where the server's definition differs (another PATH).
    let mut command = s.cli(&["--", "stdio-mcp", "--config", &config, "call", "demo", ""]);
    command.env("COMPLETE", "fish").env("PATH", "/nonexistent");
    let completed = finish(command.spawn().unwrap(), 30);
    assert_eq!(completed.code, 0, "{completed:?}");
    let again = tools("xterm-256color");
    assert!(again.stdout.starts_with("echo "), "{again:?}");
    assert_eq!(
        s.lines("starts"),
        1,
        "the completion removed the cached entry"
    );
}

/// A server that fails in its sandbox says so when it times out, as when it
/// exits: in its sandbox, its last stderr lines, the likely cause; the
/// start is bounded by `--timeout`; a missing folder names its field.
#[cfg(target_os = "linux")]
#[test]
fn a_server_failing_in_its_sandbox_says_why_and_timeout_bounds_its_start() {
    if !stdio_mcp_testkit::bubblewrap("a_server_failing_in_its_sandbox_says_why") {
        return;
    }
    let s = Scratch::new("sandbox-fails");
    let config = s.config(json!({
        "offline": { "command": "sh", "sandboxEnabled": true,
                     "args": ["-c", "echo 'npm error code EAI_AGAIN' >&2; sleep 30"] },
        "readonly": { "command": "sh", "sandboxEnabled": true,
                      "args": ["-c", "echo 'EROFS: read-only file system, open /home/me/.npm/x' >&2; exit 1"] },
        "missing": { "command": "sh", "args": ["-c", "true"], "sandboxEnabled": true,
                     "sandbox": { "filesystem": { "allowWrite": [s.path("not-here")] } } },
    }));
    let r = s.run(&[
        "--config",
        &config,
        "--timeout",
        "2",
        "call",
        "offline",
        "x",
    ]);
    assert_eq!(r.code, 3, "{r:?}");
    for said in [
        "before the start limit of 2s (--timeout)",
        "in its sandbox",
        "its stderr: npm error code EAI_AGAIN",
        "likely: its sandbox keeps it off the network unless \"allowedDomains\": [\"*\"]",
    ] {
        assert!(r.stderr.contains(said), "{said:?} in {r:?}");
    }
    assert!(
        !r.stderr.contains("Group::") && !r.stderr.contains("Era::"),
        "{r:?}"
    );
    let r = s.run(&["--config", &config, "call", "readonly", "x"]);
    assert!(
        r.stderr.contains("in its sandbox")
            && r.stderr
                .contains("likely: it wrote outside its sandbox's writable folders"),
        "{r:?}"
    );
    let r = s.run(&["--config", &config, "call", "missing", "x"]);
    assert!(
        r.stderr.contains("\"sandbox.filesystem.allowWrite\""),
        "{r:?}"
    );
    assert!(!r.stderr.contains("\"command\""), "{r:?}");
}

/// clap's refusals in one whole line: what is missing, the values a word
/// takes; a command that needs a subcommand shows them; `call --help` says
/// what each word is, in both shapes.
#[test]
fn refusals_say_what_is_missing_and_call_help_names_its_words() {
    let s = Scratch::new("refusals");
    let r = s.run(&["call"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("not provided: <SERVER>"), "{r:?}");
    let r = s.run(&["completions", "nushell"]);
    assert!(
        r.stderr
            .contains("[possible values: bash, zsh, fish, powershell]"),
        "{r:?}"
    );
    let r = s.run(&["daemon"]);
    assert_eq!(r.code, 1, "{r:?}");
    for word in ["start", "status", "stop", "restart"] {
        assert!(r.stderr.contains(word), "{word} in {r:?}");
    }
    let r = s.run(&["--json", "daemon"]);
    assert_eq!(r.json()["error"]["kind"], "usage", "{r:?}");
    let r = s.run(&["call", "--help"]);
    assert_eq!(r.code, 0, "{r:?}");
    for said in [
        "stdio-mcp call [OPTIONS] <SERVER> <TOOL> [ARG]...",
        "stdio-mcp call [OPTIONS] <TOOL> [ARG]... -- <COMMAND>...",
        "<SERVER>      A configured server",
        "[TOOL]        The tool to call",
        "[ARG]...      key=value",
    ] {
        assert!(r.stdout.contains(said), "{said:?} in {r:?}");
    }
}

/// A tool's error is said once: its text on stdout, one line on stderr
/// that it was an error (exit 2), not the text again.
#[test]
fn a_tools_error_is_said_once() {
    let s = Scratch::new("tool-error");
    let file = s.path("tools.json");
    let save = json!([{"name": "save", "inputSchema": {"type": "object",
                       "properties": {"write": {"type": "string"}}}}]);
    std::fs::write(&file, save.to_string()).unwrap();
    let config = s.config(json!({ "t": { "command": peer(), "args": ["--tools-file", file] } }));
    let nowhere = format!("write={}", s.path("no/such/folder/x"));
    let r = s.run(&["--config", &config, "call", "t", "save", &nowhere]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stdout.starts_with("cannot write "), "{r:?}");
    assert_eq!(
        r.stderr.trim(),
        "stdio-mcp: the tool save reported an error (its result is above)",
        "{r:?}"
    );
}

/// `--json` has no placeholders: an era not known is `null`, and a failure
/// about a named server names it in `server`.
#[test]
fn json_documents_hold_no_placeholders() {
    let s = Scratch::new("placeholders");
    let config = demo(&s);
    let r = s.run(&["--config", &config, "--json", "call", "demo", "nope"]);
    assert_eq!(r.json()["error"]["server"], "demo", "{r:?}");
    let r = s.run(&["--config", &config, "--json", "call", "typo", "x"]);
    assert_eq!(
        (
            r.json()["error"]["kind"].as_str(),
            r.json()["error"]["server"].as_str()
        ),
        (Some("config"), Some("typo")),
        "{r:?}"
    );
    let r = s.run(&["--config", &config, "--json", "servers"]);
    let rows = r.json()["servers"].as_array().unwrap().clone();
    assert!(
        rows.iter()
            .all(|row| row["era"].is_null() || row["era"] == "legacy" || row["era"] == "modern"),
        "{rows:?}"
    );
}

/// A server's question on a terminal: a list field is answered with a list
/// (choices picked, or words separated by commas), titled choices are
/// offered by title and answered with the value.
#[cfg(target_os = "linux")]
#[test]
fn a_forms_lists_and_titled_choices_are_answered_as_their_schema_says() {
    let s = Scratch::new("form");
    let config = s.config(json!({ "asker": { "command": peer(), "args": ["--scenario", "ask"] } }));
    let schema = json!({ "type": "object", "properties": {
        "instruments": { "type": "array", "items": { "type": "string", "enum": ["Guitar", "Drums", "Bass"] } },
        "level": { "type": "string", "oneOf": [ { "const": "b", "title": "Beginner" },
                                                 { "const": "p", "title": "Professional" } ] },
        "tags": { "type": "array", "items": { "type": "string" } },
    }});
    let line = format!(
        "{} --config {config} call asker ask 'schema:={}'",
        common::CLI,
        schema
    );
    // Answer: yes; pick the first instrument; the second level; two tags.
    let keys = ["y", " ", "\r", "\x1b[B", "\r", "a, b\r"];
    let r = common::on_terminal(&s, &line, &[], &keys);
    let answered = r
        .stdout
        .lines()
        .find_map(|l| {
            l.split_once("Elicitation completed: ")
                .map(|(_, a)| a.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no answer: {r:?}"));
    let answered: serde_json::Value = serde_json::from_str(&answered).unwrap();
    assert_eq!(
        answered,
        json!({ "instruments": ["Guitar"], "level": "p", "tags": ["a", "b"] }),
        "{r:?}"
    );
}

/// A tool filter that matches none of its server's tools is a warning on
/// stderr (and in `--json`'s `warnings`), naming the entry and the closest
/// tool: an `excludeTools` that matches nothing leaves every tool reachable.
#[test]
fn a_tool_filter_that_matches_nothing_is_said() {
    let s = Scratch::new("filter-warning");
    let config = s.config(json!({
        "demo": { "command": peer(), "excludeTools": ["countdwn", "add"] },
    }));
    let said = "stdio-mcp: warning: server \"demo\": excludeTools entry \"countdwn\" matches none of its 3 tools (did you mean \"countdown\"?)";
    let r = s.run(&["--config", &config, "tools", "demo"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stderr.lines().collect::<Vec<_>>(), [said], "{r:?}");
    let listed: Vec<&str> = r
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(listed, ["echo", "countdown"], "{r:?}");
    let document = s.run(&["--config", &config, "--json", "tools"]).json();
    assert_eq!(
        document["warnings"],
        json!([said.trim_start_matches("stdio-mcp: warning: ")])
    );
}
