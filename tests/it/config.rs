//! `stdio_mcp::config`: the configuration shapes hosts write (fixtures modelled
//! on Claude Desktop's, Claude Code's `.mcp.json`, Cursor's and VS Code's
//! documented formats), variable substitution, bad files, and servers started
//! from a configuration.

use crate::common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::{peer_exe, run};
use serde_json::json;
use stdio_mcp::client::Client;
use stdio_mcp::config::{Config, ConfigError, ServerConfig};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/config")
}

/// A folder as the loader gives `${workspaceFolder}` and a relative `cwd`:
/// absolute in the platform's own form (`C:\\…` with backslashes on Windows).
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap()
}

fn fixture(name: &str) -> PathBuf {
    fixtures().join(name)
}

/// Parses a fixture as if loaded, with `vars` as the whole environment.
fn load_with(name: &str, vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
    let path = fixture(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let vars: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    Config::parse_with(&text, Some(&path), |name| vars.get(name).cloned())
}

/// Each skipped entry's name and reason.
fn skipped(config: &Config) -> Vec<(&str, &str)> {
    config
        .skipped()
        .iter()
        .map(|s| (s.name.as_str(), s.reason.as_str()))
        .collect()
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn set(key: &str, value: &str) -> (String, Option<String>) {
    (key.to_owned(), Some(value.to_owned()))
}

#[test]
fn claude_desktop_config_gives_every_server_in_name_order() {
    let config = Config::load(fixture("claude_desktop_config.json")).unwrap();
    let names: Vec<&str> = config.servers().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["filesystem", "github", "time"]);
    assert!(config.skipped().is_empty());
    let fs = config.server("filesystem").unwrap();
    assert_eq!(fs.command, "npx");
    assert_eq!(
        fs.args,
        strings(&[
            "-y",
            "@modelcontextprotocol/server-filesystem",
            "/Users/me/Desktop",
            "/Users/me/Downloads"
        ])
    );
    assert_eq!(fs.cwd, None);
    let github = config.server("github").unwrap();
    assert_eq!(
        github.env,
        [set("GITHUB_PERSONAL_ACCESS_TOKEN", "ghp_example")]
    );
}

#[test]
fn claude_code_mcp_json_substitutes_variables_with_defaults_and_skips_remote_servers() {
    let config = load_with(
        "claude_code.mcp.json",
        &[("API_KEY", "k-123"), ("CONFIG_PATH", "/etc/api.json")],
    )
    .unwrap();
    let api = config.server("api-server").unwrap();
    assert_eq!(
        api.command, "/opt/tools/api-mcp",
        "the default of ${{TOOLS_DIR:-…}}"
    );
    assert_eq!(
        api.args,
        strings(&["--config", "/etc/api.json", "--verbose"])
    );
    assert_eq!(api.env, [set("API_KEY", "k-123"), set("DEBUG", "false")]);
    let skipped = skipped(&config);
    assert_eq!(
        skipped,
        [
            ("legacy-sse", "type \"sse\" is not stdio"),
            ("sentry", "type \"http\" is not stdio")
        ]
    );
    // A skipped entry's variables are not needed: SENTRY_TOKEN was not set.
}

#[test]
fn an_unset_variable_without_a_default_names_the_file_server_and_field() {
    let config = load_with("claude_code.mcp.json", &[]).unwrap();
    let e = &config.errors()[0];
    assert_eq!(e.server(), Some("api-server"));
    assert_eq!(e.field(), Some("env.API_KEY"));
    assert_eq!(e.file(), Some(fixture("claude_code.mcp.json").as_path()));
    assert_eq!(
        e.to_string(),
        format!(
            "{}: server \"api-server\", field env.API_KEY: environment variable API_KEY is not set \
             (write ${{API_KEY:-default}} for a fallback)",
            fixture("claude_code.mcp.json").display()
        )
    );
}

#[test]
fn cursor_mcp_json_uses_env_user_home_and_the_workspace_folder() {
    let config = load_with(
        ".cursor/mcp.json",
        &[("NOTES_TOKEN", "n-1"), ("HOME", "/home/me")],
    )
    .unwrap();
    let notes = config.server("notes").unwrap();
    // The file sits in .cursor/: the workspace is the folder above it.
    assert_eq!(
        notes.args,
        [format!(
            "{}/servers/notes.js",
            absolute(&fixtures()).display()
        )]
    );
    assert_eq!(
        notes.env,
        [
            set(
                "HOME_DIR",
                &absolute(Path::new("/home/me")).display().to_string()
            ),
            set("NOTES_TOKEN", "n-1")
        ]
    );
    let skipped = skipped(&config);
    assert_eq!(
        skipped,
        [
            ("paused", "disabled"),
            ("remote", "a url: not a stdio server")
        ]
    );
}

#[test]
fn vscode_mcp_json_with_comments_trailing_commas_env_file_and_cwd() {
    let config = load_with(".vscode/mcp.json", &[("AGENT", "stdio-mcp-tests")]).unwrap();
    let fetch = config.server("fetch").unwrap();
    assert_eq!(fetch.command, "uvx");
    assert_eq!(
        fetch.args,
        strings(&["mcp-server-fetch", "--user-agent=stdio-mcp-tests"])
    );
    assert_eq!(
        fetch.env,
        [
            set("FETCH_TIMEOUT", "30"),
            set("QUOTED", "a value"),
            ("DROP_ME".to_owned(), None),
            set("LOG_LEVEL", "debug"),
            set("RETRIES", "3"),
        ]
    );
    let cwd = fetch.cwd.as_ref().unwrap();
    assert_eq!(
        cwd.to_string_lossy(),
        format!("{}/tools", absolute(&fixtures()).display())
    );
    assert_eq!(config.skipped()[0].name, "github");
}

#[test]
fn an_input_variable_is_refused_with_the_reason() {
    let text = r#"{"servers": {"p": {"type": "stdio", "command": "p", "env": {"KEY": "${input:perplexity-key}"}}}}"#;
    assert_eq!(
        error_of(text).to_string(),
        "server \"p\", field env.KEY: ${input:perplexity-key} is a prompt of VS Code's; \
         give the value in the file or as ${env:NAME}"
    );
}

/// The error `text` gives: the whole file's, or else its one failed entry's.
fn error_of(text: &str) -> ConfigError {
    match Config::parse_with(text, None, |_| None) {
        Err(e) => e,
        Ok(config) => {
            assert_eq!(config.errors().len(), 1, "{text}: {config:?}");
            assert!(config.servers().is_empty(), "{text}");
            config.errors()[0].clone()
        }
    }
}

#[test]
fn malformed_files_give_errors_naming_what_is_wrong() {
    let cases = [
        ("{", "not valid JSON: EOF while parsing an object at line 1 column 1"),
        ("[]", "the top level must be an object with \"mcpServers\" or \"servers\""),
        ("{\"other\": {}}", "no \"mcpServers\" or \"servers\" object at the top level"),
        ("{\"mcpServers\": []}", "field mcpServers: must be an object of named servers"),
        ("{\"mcpServers\": {\"a\": \"npx\"}}", "server \"a\", must be an object, not a string"),
        (
            "{\"mcpServers\": {\"a\": {\"args\": []}}}",
            "server \"a\", field command: missing (a stdio server needs its program)",
        ),
        ("{\"mcpServers\": {\"a\": {\"command\": \" \"}}}", "server \"a\", field command: is empty"),
        (
            "{\"mcpServers\": {\"a\": {\"command\": [\"npx\"]}}}",
            "server \"a\", field command: must be a string, not an array",
        ),
        (
            "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"args\": [\"ok\", 2]}}}",
            "server \"a\", field args[1]: must be a string, not a number",
        ),
        (
            "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"args\": \"--flag\"}}}",
            "server \"a\", field args: must be an array of strings, not a string",
        ),
        (
            "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"env\": {\"K\": [1]}}}}",
            "server \"a\", field env.K: must be a string, not an array",
        ),
        (
            "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"env\": []}}}",
            "server \"a\", field env: must be an object, not an array",
        ),
        (
            "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"cwd\": 1}}}",
            "server \"a\", field cwd: must be a string, not a number",
        ),
        (
            "{\"mcpServers\": {\"a\": {\"type\": 1, \"command\": \"x\"}}}",
            "server \"a\", field type: must be a string, not a number",
        ),
        (
            "{\"mcpServers\": {\"a\": {\"command\": \"${OPEN\"}}}",
            "server \"a\", field command: unterminated ${ in \"${OPEN\"",
        ),
        (
            "{\"mcpServers\": {\"a\": {\"command\": \"${not a name}\"}}}",
            "server \"a\", field command: unknown variable ${not a name}",
        ),
        (
            "{\"mcpServers\": {\"a\": {\"command\": \"${A:-${B}}\"}}}",
            "server \"a\", field command: a variable inside the default of ${A:-…} is not supported",
        ),
        (
            "{\"mcpServers\": {\"a\": {\"command\": \"${workspaceFolder}/x\"}}}",
            "server \"a\", field command: ${workspaceFolder} needs the file's location (Config::load or parse_with)",
        ),
        (
            "{\"mcpServers\": {\"a\": {\"command\": \"x\"}}, \"servers\": {\"a\": {\"command\": \"y\"}}}",
            "server \"a\", defined under both \"mcpServers\" and \"servers\"",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(error_of(text).to_string(), expected, "for {text}");
    }
}

#[test]
fn unreadable_files_and_env_files_name_the_file() {
    let missing = fixture("no-such.json");
    let e = Config::load(&missing).unwrap_err();
    assert_eq!(e.file(), Some(missing.as_path()));
    assert!(
        e.to_string()
            .starts_with(&format!("{}: cannot read it: ", missing.display())),
        "{e}"
    );
    let dir = std::env::temp_dir().join(format!("stdio-mcp-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mcp.json");
    std::fs::write(
        &file,
        r#"{"servers": {"a": {"type": "stdio", "command": "x", "envFile": "missing.env"}}}"#,
    )
    .unwrap();
    let config = Config::load(&file).unwrap();
    let e = &config.errors()[0];
    assert_eq!(e.file(), Some(file.as_path()));
    assert_eq!((e.server(), e.field()), (Some("a"), Some("envFile")));
    assert!(
        e.to_string().contains(&format!(
            "cannot read {}",
            dir.join("missing.env").display()
        )),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_server_from_a_configuration_starts_with_its_args_env_and_cwd() {
    run(30, async {
        let dir = std::env::temp_dir();
        let text = json!({ "mcpServers": { "peer": {
            "command": "${PEER}",
            "args": ["--watchdog", "30"],
            "env": { "FROM_CONFIG": "${GREETING:-hello}", "HOME_SEEN": "${env:HOME_FOR_TEST}" },
            "cwd": dir,
        } } })
        .to_string();
        let config = Config::parse_with(&text, None, |name| match name {
            "PEER" => Some(peer_exe().to_owned()),
            "HOME_FOR_TEST" => Some("/home/test".to_owned()),
            _ => None,
        })
        .unwrap();
        let server: &ServerConfig = config.server("peer").unwrap();
        let client = Client::connect(server.builder()).await.unwrap();
        let t = client.transport();
        for (name, value) in [("FROM_CONFIG", "hello"), ("HOME_SEEN", "/home/test")] {
            let seen = t
                .send_request("test/env", Some(json!({ "name": name })))
                .await
                .unwrap();
            assert_eq!(seen, value, "{name} in the server's environment");
        }
        let cwd = t.send_request("test/cwd", None).await.unwrap();
        assert_eq!(
            std::fs::canonicalize(cwd.as_str().unwrap()).unwrap(),
            std::fs::canonicalize(&dir).unwrap()
        );
        client.close().await.unwrap();
    });
}

#[test]
fn unknown_keys_of_a_server_entry_are_warned_with_the_key_they_likely_meant() {
    let config = Config::parse(
        r#"{"mcpServers": {
            "fs": {"command": "mcp-fs", "arg": ["/srv"], "evn": {"A": "1"}, "Cwd": "/tmp"},
            "gh": {"command": "mcp-gh", "autoApprove": ["list"], "timeout": 30, "frobnicate": 1},
            "remote": {"url": "https://example.invalid/mcp", "headres": {}}
        }}"#,
    )
    .unwrap();
    let warnings: Vec<(&str, &str, Option<&str>)> = config
        .warnings()
        .iter()
        .map(|w| (w.server.as_str(), w.key.as_str(), w.suggestion.as_deref()))
        .collect();
    // Keys other hosts use are no mistake; a skipped entry is not looked at.
    assert_eq!(
        warnings,
        [
            ("fs", "Cwd", Some("cwd")),
            ("fs", "arg", Some("args")),
            ("fs", "evn", Some("env")),
            ("gh", "frobnicate", None),
        ]
    );
    assert_eq!(
        config.warnings()[1].to_string(),
        r#"server "fs": unknown key "arg" is ignored (did you mean "args"?)"#
    );
    // The entry loads all the same, without what the typos held.
    let fs = config.server("fs").unwrap();
    assert!(fs.args.is_empty() && fs.env.is_empty() && fs.cwd.is_none());
    let clean = Config::parse(r#"{"servers": {"a": {"type": "stdio", "command": "x", "args": [], "env": {}, "cwd": ".", "disabled": false}}}"#).unwrap();
    assert!(clean.warnings().is_empty());
}

#[test]
fn a_configured_server_gets_the_default_environment_not_the_hosts_whole_one() {
    // A variable only the host has, set from its start: this test runs itself
    // again with it (setting it here would race with the other tests' spawns).
    let host_only = "STDIO_MCP_HOST_ONLY_SECRET";
    if std::env::var_os(host_only).is_none() {
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "a_configured_server_gets_the_default_environment_not_the_hosts_whole_one",
                "--test-threads=1",
            ])
            .env(host_only, "s3cret")
            .status()
            .unwrap();
        assert!(status.success(), "the run with the variable set failed");
        return;
    }
    run(30, async {
        let text = json!({ "mcpServers": { "peer": {
            "command": peer_exe(), "env": { "FROM_ENTRY": "yes" }
        } } })
        .to_string();
        let env_of = |config: Config| async move {
            let client = Client::connect(config.server("peer").unwrap().builder())
                .await
                .unwrap();
            let names = client
                .transport()
                .send_request("test/env_names", None)
                .await
                .unwrap();
            client.close().await.unwrap();
            let names: Vec<String> = serde_json::from_value(names).unwrap();
            names
        };
        let names = env_of(Config::parse(&text).unwrap()).await;
        let has = |n: &str| names.iter().any(|m| m.eq_ignore_ascii_case(n));
        assert!(has("PATH") && has("FROM_ENTRY"), "{names:?}");
        assert!(
            !has(host_only),
            "the host's own variables stay with it: {names:?}"
        );
        for name in &names {
            let allowed = stdio_mcp::config::INHERITED_VARIABLES
                .iter()
                .any(|v| v.eq_ignore_ascii_case(name));
            // Windows adds a few of its own to any process (under Wine too).
            assert!(
                allowed || name == "FROM_ENTRY" || cfg!(windows),
                "{name} in {names:?}"
            );
        }
        // The opt-in: everything, the entry's env too.
        let names = env_of(Config::parse(&text).unwrap().inherit_environment(true)).await;
        let has = |n: &str| names.iter().any(|m| m.eq_ignore_ascii_case(n));
        assert!(has(host_only) && has("FROM_ENTRY"), "{names:?}");
    });
}

#[test]
fn a_bad_entry_fails_alone_with_a_did_you_mean_and_wrong_types_are_errors() {
    let text = r#"{"mcpServers": {
        "good": {"command": "mcp-good"},
        "typo": {"comand": "mcp-typo", "args": []},
        "yes": {"command": "mcp-yes", "disabled": "yes"},
        "off": {"command": "mcp-off", "disabled": true}
    }}"#;
    let config = Config::parse(text).unwrap();
    let names: Vec<&str> = config.servers().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["good"]);
    assert_eq!(config.skipped()[0].name, "off");
    let errors: Vec<String> = config.errors().iter().map(ToString::to_string).collect();
    assert_eq!(
        errors,
        [
            "server \"typo\", field command: missing (a stdio server needs its program): \
             unknown key \"comand\" (did you mean \"command\"?)",
            "server \"yes\", field disabled: must be a boolean, not a string",
        ]
    );
    // The whole file still fails when it is not a config at all.
    assert!(Config::parse("{\"mcpServers\": 3}").is_err());
}

/// The launch fingerprint covers the code an entry runs from its project
/// folder: an edited script is a change named `file ./PATH`; a data file
/// the server writes, or a file outside the folder, is not covered; a
/// fingerprint kept before files were covered (the store's old entries)
/// reads, and names the newly covered file.
#[test]
fn the_fingerprint_covers_the_scripts_an_entry_runs_from_its_project() {
    let dir = std::env::temp_dir().join(format!("stdio-mcp-code-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("tools")).unwrap();
    let outside =
        std::env::temp_dir().join(format!("stdio-mcp-code-out-{}.js", std::process::id()));
    std::fs::write(dir.join("server.js"), "one").unwrap();
    std::fs::write(dir.join("tools/mcp.py"), "print(1)").unwrap();
    std::fs::write(dir.join("app.db"), "rows").unwrap();
    std::fs::write(&outside, "elsewhere").unwrap();
    let file = dir.join(".mcp.json");
    let entry = json!({ "mcpServers": {
        "node": { "command": "node", "args": ["./server.js", "--db", "./app.db", outside.to_str().unwrap()] },
        "py": { "command": "python3", "args": ["mcp.py"], "cwd": "tools" },
    }});
    std::fs::write(&file, entry.to_string()).unwrap();
    let fingerprints = || {
        let config = Config::load(&file).unwrap();
        (
            config.server("node").unwrap().fingerprint(),
            config.server("py").unwrap().fingerprint(),
        )
    };
    let (node, py) = fingerprints();
    // Data and files outside the project change nothing.
    std::fs::write(dir.join("app.db"), "more rows").unwrap();
    std::fs::write(&outside, "changed").unwrap();
    assert_eq!(fingerprints(), (node.clone(), py.clone()));
    std::fs::write(dir.join("server.js"), "two").unwrap();
    std::fs::write(dir.join("tools/mcp.py"), "print(2)").unwrap();
    let (node_now, py_now) = fingerprints();
    assert_eq!(node_now.changes_since(&node), ["file ./server.js"]);
    assert_eq!(py_now.changes_since(&py), ["file ./tools/mcp.py"]);
    // An entry parsed from text has no project folder: nothing is covered,
    // as a store written before this kept it.
    let before = Config::parse(&entry.to_string()).unwrap();
    let old = before.server("node").unwrap().fingerprint();
    assert_eq!(node_now.changes_since(&old), ["file ./server.js"]);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&outside);
}

/// A fingerprint's digest does not move between builds: a trust store kept
/// by an earlier one still matches (names, quotes, backslashes, control and
/// non-ASCII characters, an unset variable).
#[test]
fn a_launch_fingerprint_is_what_it_was() {
    let text = r#"{"mcpServers": {"t": {"command": "C:\\tools\\srv.exe",
        "args": ["--name=\"Zoë\"", "tab\there", "\u0001", "日本", "\ud83d\ude00"],
        "env": {"B": "2", "A": "é", "GONE": null}, "cwd": "/srv/x",
        "sandboxEnabled": true, "sandbox": {"network": {"allowedDomains": ["*"]}}}}}"#;
    let config = Config::parse(text).unwrap();
    assert_eq!(
        config.servers()[0].fingerprint().digest(),
        "sha256:f7631a9a0278ee4c080d6bc95ade274459ee80c40e41b079d84810abc46d8446"
    );
}

/// Threads saving the trust store at once each write it whole: no save
/// fails, and what is left reads back (their temporary files do not meet).
#[test]
fn a_trust_store_saved_by_threads_at_once_stays_whole() {
    use stdio_mcp::config::TrustStore;
    let dir = std::env::temp_dir().join(format!("stdio-mcp-trust-race-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.join("trust.json");
    let config = Config::parse(r#"{"mcpServers": {"t": {"command": "t"}}}"#).unwrap();
    let server = config.servers()[0].clone();
    let savers: Vec<_> = (0..8)
        .map(|i| {
            let (path, server) = (path.clone(), server.clone());
            std::thread::spawn(move || {
                let mut store = TrustStore::open(&path).unwrap();
                store.trust(Path::new(&format!("/project-{i}/.mcp.json")), &server);
                for _ in 0..25 {
                    store.save().unwrap();
                }
            })
        })
        .collect();
    for saver in savers {
        saver.join().expect("a save failed");
    }
    let store = TrustStore::open(&path).unwrap();
    let kept = (0..8)
        .filter(|i| {
            store.state(Path::new(&format!("/project-{i}/.mcp.json")), &server)
                == stdio_mcp::config::TrustState::Trusted
        })
        .count();
    // The last save whole (a thread that opened after another's save keeps
    // that one's entry too).
    assert!(kept >= 1, "nothing trusted is left");
    let leftovers = std::fs::read_dir(&dir).unwrap().count();
    assert_eq!(leftovers, 1, "no temporary file left");
    let _ = std::fs::remove_dir_all(&dir);
}
