//! A repository's servers start only once their user trusted them, as they
//! are: each command through the built binary, in a scratch folder that
//! plays the cloned repository (its `.mcp.json` is a project file), with a
//! server that records each start.

mod common;

use common::{peer, Scratch};
use serde_json::{json, Value};

/// Writes the project's `.mcp.json`: `demo` (recording its starts in
/// `starts`) with `extra` arguments, and `other`.
fn project(s: &Scratch, extra: &[&str]) {
    let mut args = vec![json!("--log-start"), json!(s.path("starts"))];
    args.extend(extra.iter().map(|a| json!(a)));
    let servers = json!({ "mcpServers": {
        "demo": { "command": peer(), "args": args },
        "other": { "command": peer(), "args": ["--log-start", s.path("other-starts")] },
    }});
    std::fs::write(s.0.join(".mcp.json"), servers.to_string()).unwrap();
}

fn trust_file(s: &Scratch) -> std::path::PathBuf {
    s.0.join("data").join("stdio-mcp").join("trust.json")
}

#[test]
fn a_projects_server_starts_only_once_trusted_as_it_is() {
    let s = Scratch::new("trust-flow");
    project(&s, &[]);
    let tools = s.run(&["tools"]);
    assert_eq!(tools.code, 0, "{tools:?}");
    assert!(tools.stdout.is_empty(), "{tools:?}");
    for name in ["demo", "other"] {
        let line = format!("stdio-mcp: server {name:?} of ");
        let left_out = tools
            .stderr
            .lines()
            .filter(|l| l.starts_with(&line))
            .count();
        assert_eq!(left_out, 1, "one line for {name}: {tools:?}");
    }
    let servers = s.run(&["--json", "servers"]).json();
    let states: Vec<(&str, &str)> = servers["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["name"].as_str().unwrap(), r["trust"].as_str().unwrap()))
        .collect();
    assert_eq!(states, [("demo", "untrusted"), ("other", "untrusted")]);

    let refused = s.run(&["call", "demo", "echo", "message=hi"]);
    assert_eq!(refused.code, 1, "{refused:?}");
    let file = std::fs::canonicalize(s.0.join(".mcp.json")).unwrap();
    for needed in [
        format!("of the project file {} is untrusted", file.display()),
        format!("command: {} --log-start {}", peer(), s.path("starts")),
        "stdio-mcp trust demo".to_owned(),
    ] {
        assert!(
            refused.stderr.contains(&needed),
            "{needed:?} in {refused:?}"
        );
    }
    let json = s.run(&["--json", "call", "demo", "echo", "message=hi"]);
    assert_eq!(json.code, 1);
    assert_eq!(json.json()["error"]["kind"], "untrusted");
    assert_eq!(json.json()["error"]["server"], "demo");
    assert_eq!(s.lines("starts"), 0, "nothing started before the trust");

    let trusted = s.run(&["trust", "demo"]);
    assert_eq!(trusted.code, 0, "{trusted:?}");
    assert!(
        trusted.stdout.starts_with("trusted \"demo\" of "),
        "{trusted:?}"
    );
    let call = s.run(&["call", "demo", "echo", "message=hi"]);
    assert_eq!((call.code, call.stdout.trim()), (0, "Echo: hi"), "{call:?}");
    assert_eq!(s.lines("starts"), 1);
    assert_eq!(
        s.lines("other-starts"),
        0,
        "only the trusted server started"
    );

    // The repository changes the server's arguments: untrusted again, naming what changed.
    project(&s, &["--noise", "0"]);
    let changed = s.run(&["call", "demo", "echo", "message=hi"]);
    assert_eq!(changed.code, 1, "{changed:?}");
    assert!(
        changed
            .stderr
            .contains("changed since you trusted it (args)"),
        "{changed:?}"
    );
    let listed = s.run(&["--json", "trust"]).json();
    assert_eq!(listed["servers"][0]["state"], "changed");
    assert_eq!(listed["servers"][0]["changes"], json!(["args"]));
    assert_eq!(s.lines("starts"), 1, "the changed server did not start");

    let untrusted = s.run(&["untrust", "demo"]);
    assert_eq!(untrusted.code, 0, "{untrusted:?}");
    let store: Value =
        serde_json::from_str(&std::fs::read_to_string(trust_file(&s)).unwrap()).unwrap();
    assert_eq!(store["servers"], json!({}), "{store}");
}

/// The store is its user's alone, and written whole.
#[cfg(unix)]
#[test]
fn the_store_is_private_to_its_user() {
    use std::os::unix::fs::PermissionsExt;
    let s = Scratch::new("trust-mode");
    project(&s, &[]);
    assert_eq!(s.run(&["trust", "demo", "other"]).code, 0);
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&trust_file(&s)), 0o600);
    assert_eq!(mode(trust_file(&s).parent().unwrap()), 0o700);
    let leftovers: Vec<_> = std::fs::read_dir(trust_file(&s).parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, ["trust.json"], "no temporary file left");
}

/// A name that the project and one of the user's own files both define is
/// refused while the project's is untrusted: never silently the other one.
#[test]
fn a_name_the_project_shares_with_the_users_file_is_refused_naming_both() {
    let s = Scratch::new("trust-shadow");
    project(&s, &[]);
    let users = s.0.join(".cursor").join("mcp.json");
    std::fs::create_dir_all(users.parent().unwrap()).unwrap();
    let mine = json!({ "mcpServers": { "demo": {
        "command": peer(), "args": ["--log-start", s.path("user-starts")] } } });
    std::fs::write(&users, mine.to_string()).unwrap();
    // Run from a folder below, so ./.cursor/mcp.json is not the user's file there.
    let repo = s.0.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::rename(s.0.join(".mcp.json"), repo.join(".mcp.json")).unwrap();
    let run = common::finish(
        s.cli(&["call", "demo", "echo", "message=hi"])
            .current_dir(&repo)
            .spawn()
            .unwrap(),
        60,
    );
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains(
            &repo
                .join(".mcp.json")
                .canonicalize()
                .unwrap()
                .display()
                .to_string()
        ),
        "{run:?}"
    );
    assert!(run.stderr.contains(&users.display().to_string()), "{run:?}");
    assert_eq!((s.lines("starts"), s.lines("user-starts")), (0, 0));
}

#[test]
fn trust_takes_project_servers_only_and_a_bad_store_starts_nothing() {
    let s = Scratch::new("trust-input");
    // Outside any project: nothing to list.
    let none = s.run(&["trust"]);
    assert_eq!((none.code, none.stdout.as_str()), (0, ""), "{none:?}");
    project(&s, &[]);
    let typo = s.run(&["trust", "dmeo"]);
    assert_eq!(typo.code, 1, "{typo:?}");
    assert!(
        typo.stderr.contains("\"dmeo\" is not a project server"),
        "{typo:?}"
    );
    assert!(
        typo.stderr.contains(" (did you mean \"demo\"?)"),
        "{typo:?}"
    );

    std::fs::create_dir_all(trust_file(&s).parent().unwrap()).unwrap();
    std::fs::write(trust_file(&s), "not json").unwrap();
    let broken = s.run(&["call", "demo", "echo", "message=hi"]);
    assert_eq!(broken.code, 1, "{broken:?}");
    let named = format!("trust store {}: is not JSON", trust_file(&s).display());
    assert!(broken.stderr.contains(&named), "{broken:?}");
    std::fs::write(trust_file(&s), r#"{"version": 1, "servers": []}"#).unwrap();
    let shape = s.run(&["tools"]);
    assert_eq!(shape.code, 1, "{shape:?}");
    assert!(shape.stderr.contains("is not a trust store"), "{shape:?}");
    assert_eq!(s.lines("starts"), 0);
}

/// The user's own act needs no trust: a file named with `--config`.
#[test]
fn a_file_named_with_config_starts_as_before() {
    let s = Scratch::new("trust-explicit");
    project(&s, &[]);
    let call = s.run(&[
        "--config",
        ".mcp.json",
        "call",
        "demo",
        "echo",
        "message=hi",
    ]);
    assert_eq!(call.code, 0, "{call:?}");
    assert_eq!(s.lines("starts"), 1);
}

/// On a terminal the first command that needs the server asks; `n` starts
/// nothing, `y` trusts it and goes on. (`script` gives the command a
/// pseudo-terminal and passes our input to it.)
#[cfg(target_os = "linux")]
#[test]
fn the_question_on_a_terminal_answered_n_then_y() {
    let s = Scratch::new("trust-ask");
    project(&s, &[]);
    let ask = |answer: &str| {
        let line = format!("{} call demo echo message=hi", common::CLI);
        common::on_terminal(&s, &line, &[], &[answer])
    };
    let no = ask("n\n");
    assert_eq!(no.code, 1, "{no:?}");
    for shown in [
        "wants to start the server \"demo\"",
        "command: ",
        "runs with your rights",
        "[y/N]",
    ] {
        assert!(no.stdout.contains(shown), "{shown:?} in {no:?}");
    }
    assert!(no.stdout.contains("nothing was started"), "{no:?}");
    assert_eq!(s.lines("starts"), 0);
    let yes = ask("y\n");
    assert_eq!(yes.code, 0, "{yes:?}");
    assert!(yes.stdout.contains("Echo: hi"), "{yes:?}");
    assert_eq!(s.lines("starts"), 1);
    let again = s.run(&["call", "demo", "echo", "message=again"]);
    assert_eq!(again.code, 0, "trusted for good: {again:?}");
}

/// A sandboxed project entry is shown with its rules and a risk sentence
/// true for them: in the question, in `trust`'s list and in `servers`.
#[cfg(target_os = "linux")]
#[test]
fn a_sandboxed_entry_shows_its_rules_and_its_real_risk() {
    let s = Scratch::new("trust-sandboxed");
    std::fs::create_dir_all(s.0.join("out")).unwrap();
    let servers = json!({ "mcpServers": {
        "boxed": { "command": peer(), "sandboxEnabled": true,
                   "sandbox": { "filesystem": { "allowWrite": ["${workspaceFolder}/out"],
                                                "denyRead": ["~/.ssh"] },
                                "network": { "allowedDomains": ["*"] } } },
    }});
    std::fs::write(s.0.join(".mcp.json"), servers.to_string()).unwrap();
    let out = std::fs::canonicalize(s.0.join("out")).unwrap();
    let allow = format!("allowWrite: {}", out.display());
    let risk = format!(
        "It runs in a sandbox: it can read your files but {}/.ssh, change files only under {}, and reach the network.",
        s.0.display(),
        out.display()
    );
    let list = s.run(&["trust"]);
    assert_eq!(list.code, 0, "{list:?}");
    assert!(list.stdout.contains("(sandboxed)"), "{list:?}");
    assert!(
        list.stdout.contains(&format!("sandbox: {allow}")),
        "{list:?}"
    );
    assert!(list.stdout.contains("sandbox: network: all"), "{list:?}");
    let listed = s.run(&["--json", "trust"]).json();
    assert_eq!(
        listed["servers"][0]["sandbox"]["network"], "all",
        "{listed}"
    );
    let servers = s.run(&["servers"]);
    assert!(
        servers.stdout.contains("(project, untrusted) (sandboxed)"),
        "{servers:?}"
    );
    assert!(servers.stdout.contains(&allow), "{servers:?}");
    let json = s.run(&["--json", "servers"]).json();
    assert_eq!(json["servers"][0]["sandboxed"], true, "{json}");

    let line = format!("{} call boxed echo message=hi", common::CLI);
    let asked = common::on_terminal(&s, &line, &[], &["n\n"]);
    assert!(asked.stdout.contains(&allow), "{asked:?}");
    // A terminal may fold the sentence; compare it without line ends.
    let flat = asked.stdout.replace(['\r', '\n'], "");
    assert!(flat.contains(&risk), "{risk:?} in {asked:?}");
    assert!(!asked.stdout.contains("runs with your rights"), "{asked:?}");
}

/// From a subfolder of the repository, its project file is found (the
/// nearest one up, as git finds its repository), and trusted as ever.
#[test]
fn a_project_file_is_found_from_a_subfolder() {
    let s = Scratch::new("trust-subfolder");
    let repo = s.0.join("repo");
    std::fs::create_dir_all(repo.join("src/deep")).unwrap();
    let servers = json!({ "mcpServers": {
        "demo": { "command": peer(), "args": ["--log-start", s.path("starts")] },
    }});
    std::fs::write(repo.join(".mcp.json"), servers.to_string()).unwrap();
    let from_deep = |args: &[&str]| {
        let mut command = s.cli(args);
        command.current_dir(repo.join("src/deep"));
        common::finish(command.spawn().unwrap(), 60)
    };
    let listed = from_deep(&["servers"]);
    let file = std::fs::canonicalize(repo.join(".mcp.json")).unwrap();
    assert!(
        listed
            .stdout
            .contains(&format!("{} (project, untrusted)", file.display())),
        "{listed:?}"
    );
    let refused = from_deep(&["call", "demo", "echo", "message=hi"]);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert_eq!(s.lines("starts"), 0);
    assert_eq!(from_deep(&["trust", "demo"]).code, 0);
    let called = from_deep(&["call", "demo", "echo", "message=hi"]);
    assert_eq!(
        (called.code, called.stdout.trim()),
        (0, "Echo: hi"),
        "{called:?}"
    );
}

/// Trust covers the code the entry runs from the project: a trusted server
/// whose script is edited (a `git pull`) is refused naming the file, and
/// runs again once trusted as it is now.
#[cfg(unix)]
#[test]
fn an_edited_script_of_a_trusted_server_is_refused_naming_the_file() {
    let s = Scratch::new("trust-code");
    let script = |extra: &str| {
        let text = format!("exec {} --log-start {} {extra}\n", peer(), s.path("starts"));
        std::fs::write(s.0.join("server.sh"), text).unwrap();
    };
    script("");
    let servers = json!({ "mcpServers": { "demo": { "command": "sh", "args": ["./server.sh"] } } });
    std::fs::write(s.0.join(".mcp.json"), servers.to_string()).unwrap();
    assert_eq!(s.run(&["trust", "demo"]).code, 0);
    let call = s.run(&["call", "demo", "echo", "message=hi"]);
    assert_eq!((call.code, call.stdout.trim()), (0, "Echo: hi"), "{call:?}");
    // The command line is the same; what it runs is not.
    script("--banner");
    let refused = s.run(&["call", "demo", "echo", "message=hi"]);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(
        refused
            .stderr
            .contains("changed since you trusted it (file ./server.sh)"),
        "{refused:?}"
    );
    let listed = s.run(&["--json", "trust"]).json();
    assert_eq!(listed["servers"][0]["changes"], json!(["file ./server.sh"]));
    assert_eq!(s.lines("starts"), 1, "the edited script did not run");
    assert_eq!(s.run(&["trust", "demo"]).code, 0);
    let again = s.run(&["call", "demo", "echo", "message=hi"]);
    assert_eq!(
        (again.code, again.stdout.trim()),
        (0, "Echo: hi"),
        "{again:?}"
    );
    assert_eq!(s.lines("starts"), 2);
}

/// A launcher that fetches what it runs is said wherever the command line
/// is shown: unpinned, or pinned. Nothing is started for it here (the
/// entries stay untrusted).
#[test]
fn unpinned_launchers_are_said_in_trust_and_servers() {
    let s = Scratch::new("trust-unpinned");
    let servers = json!({ "mcpServers": {
        "loose": { "command": "npx", "args": ["-y", "@example/mcp-server"] },
        "fixed": { "command": "uvx", "args": ["mcp-server-time==0.6.2"] },
        "image": { "command": "docker", "args": ["run", "-i", "--rm", "mcp/fetch:latest"] },
    }});
    std::fs::write(s.0.join(".mcp.json"), servers.to_string()).unwrap();
    let listed = s.run(&["trust"]);
    assert_eq!(listed.code, 0, "{listed:?}");
    for line in [
        "    fetches: npx @example/mcp-server: unpinned: the registry decides what runs at each start",
        "    fetches: uvx mcp-server-time==0.6.2: pinned",
        "    fetches: docker run mcp/fetch:latest: unpinned: the registry decides what runs at each start",
    ] {
        assert!(listed.stdout.lines().any(|l| l == line), "{line:?} in {listed:?}");
    }
    let rows = s.run(&["--json", "servers"]).json();
    let fetches: Vec<(&str, &Value)> = rows["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["name"].as_str().unwrap(), &r["fetches"]))
        .collect();
    assert_eq!(
        fetches,
        [
            (
                "fixed",
                &json!({ "launcher": "uvx", "what": "mcp-server-time==0.6.2", "pinned": true })
            ),
            (
                "image",
                &json!({ "launcher": "docker run", "what": "mcp/fetch:latest", "pinned": false })
            ),
            (
                "loose",
                &json!({ "launcher": "npx", "what": "@example/mcp-server", "pinned": false })
            ),
        ]
    );
    let text = s.run(&["servers"]);
    assert!(
        text.stdout
            .contains("    fetches: npx @example/mcp-server: unpinned"),
        "{text:?}"
    );
}

/// The question on a terminal says it too (answered no: nothing starts).
#[cfg(target_os = "linux")]
#[test]
fn the_question_says_an_unpinned_launcher() {
    let s = Scratch::new("trust-ask-unpinned");
    let servers = json!({ "mcpServers": {
        "loose": { "command": "npx", "args": ["-y", "@example/mcp-server"] },
    }});
    std::fs::write(s.0.join(".mcp.json"), servers.to_string()).unwrap();
    let line = format!("{} call loose some_tool", common::CLI);
    let no = common::on_terminal(&s, &line, &[], &["n\n"]);
    assert_eq!(no.code, 1, "{no:?}");
    assert!(
        no.stdout.contains(
            "  fetches: npx @example/mcp-server: unpinned: the registry decides what runs at each start"
        ),
        "{no:?}"
    );
    assert!(no.stdout.contains("nothing was started"), "{no:?}");
}
