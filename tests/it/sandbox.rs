//! Sandboxed servers, against the test peer asked to write, read, connect
//! and have a child write — each rule both ways: from the builder and from a
//! config entry's VS Code keys. Linux runs them under bubblewrap (CI
//! installs it); elsewhere but macOS a sandboxed server must not start.

#[cfg(not(target_os = "macos"))]
use crate::common;

use std::path::PathBuf;

use stdio_mcp::config::Config;
use stdio_mcp::sandbox::{Network, Sandbox};
#[cfg(not(target_os = "macos"))]
use {common::peer, stdio_mcp::ErrorKind};
#[cfg(target_os = "linux")]
use {
    common::{peer_exe, run},
    serde_json::{json, Value},
    std::path::Path,
    stdio_mcp::Transport,
};

/// A folder of the test's own, emptied first.
#[cfg(target_os = "linux")]
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("stdio-mcp-sandbox-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[cfg(target_os = "linux")]
async fn ask(t: &Transport, method: &str, params: Value) -> Value {
    t.send_request(method, Some(params)).await.unwrap()
}

#[cfg(target_os = "linux")]
async fn write(t: &Transport, path: &Path) -> Value {
    ask(t, "test/write", json!({"path": path})).await
}

#[cfg(target_os = "linux")]
fn allowed(outcome: &Value) -> bool {
    outcome["ok"] == true
}

#[cfg(target_os = "linux")]
#[test]
fn each_rule_holds_both_ways_for_the_server_and_its_children() {
    if !stdio_mcp_testkit::bubblewrap("sandbox") {
        return;
    }
    let dir = scratch("rules");
    let (work, out, keys, secret) = (
        dir.join("work"),
        dir.join("out"),
        dir.join("out/keys"),
        dir.join("secret"),
    );
    for folder in [&work, &out, &keys, &secret] {
        std::fs::create_dir_all(folder).unwrap();
    }
    std::fs::write(secret.join("token"), "s3cr3t").unwrap();
    std::fs::write(dir.join("plain"), "plain").unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    run(30, async {
        let sandbox = Sandbox::new()
            .allow_write(&out)
            .deny_write(&keys)
            .deny_read(&secret);
        let t = peer(&[])
            .cwd(&work)
            .sandbox(sandbox.clone())
            .spawn()
            .unwrap();
        // Writes: only where allowed, its folder and its TMPDIR.
        assert!(allowed(&write(&t, &out.join("a")).await));
        assert!(allowed(&write(&t, &work.join("b")).await));
        let denied = write(&t, &dir.join("c")).await;
        assert!(!allowed(&denied));
        assert!(
            denied["error"]
                .as_str()
                .unwrap()
                .contains("Read-only file system"),
            "{denied}"
        );
        assert!(
            !allowed(&write(&t, &keys.join("k")).await),
            "denyWrite wins inside allowWrite"
        );
        let tmp = ask(&t, "test/env", json!({"name": "TMPDIR"})).await;
        let tmp = PathBuf::from(tmp.as_str().unwrap());
        assert!(tmp.is_dir() && tmp != std::env::temp_dir(), "{tmp:?}");
        assert!(allowed(&write(&t, &tmp.join("t")).await));
        // Reads: everywhere but denyRead.
        let plain = ask(&t, "test/read", json!({"path": dir.join("plain")})).await;
        assert_eq!(plain["bytes"], 5, "{plain}");
        assert!(!allowed(
            &ask(&t, "test/read", json!({"path": secret.join("token")})).await
        ));
        // Its children: the same rules.
        assert!(allowed(
            &ask(&t, "test/child_write", json!({"path": out.join("d")})).await
        ));
        assert!(!allowed(
            &ask(&t, "test/child_write", json!({"path": dir.join("e")})).await
        ));
        // The network: off.
        assert!(!allowed(
            &ask(&t, "test/connect", json!({"address": address})).await
        ));
        t.close().await.unwrap();
        assert!(!tmp.exists(), "its TMPDIR goes with it");

        // And on: the network allowed.
        let t = peer(&[])
            .sandbox(sandbox.network(Network::All))
            .spawn()
            .unwrap();
        let connected = ask(&t, "test/connect", json!({"address": address})).await;
        assert!(allowed(&connected), "{connected}");
        t.close().await.unwrap();
    });
    assert!(out.join("a").exists() && out.join("d").exists() && work.join("b").exists());
    assert!(!dir.join("c").exists() && !keys.join("k").exists() && !dir.join("e").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(target_os = "linux")]
#[test]
fn a_config_entry_is_confined_by_vs_codes_keys_and_its_exit_says_so() {
    if !stdio_mcp_testkit::bubblewrap("sandbox") {
        return;
    }
    let dir = scratch("config");
    std::fs::create_dir_all(dir.join("out")).unwrap();
    let text = json!({"servers": {
        "boxed": {"command": peer_exe(), "sandboxEnabled": true,
                  "sandbox": {"filesystem": {"allowWrite": ["${workspaceFolder}/out"]}}},
        "open": {"command": peer_exe()}
    }})
    .to_string();
    let file = dir.join("mcp.json");
    std::fs::write(&file, &text).unwrap();
    let config = Config::load(&file);
    run(30, async {
        let config = config.unwrap();
        let boxed = config.server("boxed").unwrap();
        assert!(boxed.sandbox.is_some() && config.server("open").unwrap().sandbox.is_none());
        let t = boxed.builder().spawn().unwrap();
        assert!(allowed(&write(&t, &dir.join("out/x")).await));
        assert!(!allowed(&write(&t, &dir.join("y")).await));
        let _ = t
            .send_request(
                "test/exit",
                Some(json!({"code": 3, "stderr": ["denied a write"]})),
            )
            .await;
        let e = t.send_request("ping", None).await.unwrap_err();
        assert_eq!(
            e.to_string(),
            "MCP server process has exited",
            "a request after the exit"
        );
        let status = t.exit_status().unwrap();
        assert_eq!(status.code(), Some(3));
        assert_eq!(status.to_string(), "code 3, in its sandbox");
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(target_os = "linux")]
#[test]
fn a_folder_to_write_that_does_not_exist_or_a_domain_list_is_refused_at_start() {
    if !stdio_mcp_testkit::bubblewrap("sandbox") {
        return;
    }
    let e = peer(&[])
        .sandbox(Sandbox::new().allow_write("/no/such/folder"))
        .spawn()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Start);
    assert!(
        e.to_string()
            .ends_with("sandbox: allowWrite /no/such/folder does not exist"),
        "{e}"
    );
    let e = peer(&[])
        .sandbox(Sandbox::new().network(Network::Domains(vec!["example.com".into()])))
        .spawn()
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("cannot be limited to a list of domains"),
        "{e}"
    );
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
#[test]
fn a_sandboxed_server_does_not_start_where_it_cannot_be_confined() {
    let e = peer(&[]).sandbox(Sandbox::new()).spawn().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Start);
    assert!(
        e.to_string()
            .contains("cannot be confined on this platform"),
        "{e}"
    );
}

#[test]
fn the_sandbox_keys_are_read_warned_of_and_refused_with_the_field_named() {
    let config = Config::parse(
        r#"{"mcpServers": {
            "strict": {"command": "x", "sandboxEnabled": true},
            "typo": {"command": "x", "sandboxEnabled": true,
                     "sandbox": {"filesystem": {"alowWrite": ["/tmp"]}, "netwrk": {}}},
            "off": {"command": "x", "sandbox": {"filesystem": {"allowWrite": ["/tmp"]}}},
            "all": {"command": "x", "sandboxEnabled": true,
                    "sandbox": {"network": {"allowedDomains": ["*"]}, "filesystem": {"allowWrite": ["~/.npm"]}}},
            "list": {"command": "x", "sandboxEnabled": true,
                     "sandbox": {"network": {"allowedDomains": ["registry.npmjs.org"]}}},
            "bad": {"command": "x", "sandboxEnabled": "yes"},
            "unset": {"command": "x", "sandboxEnabled": true,
                      "sandbox": {"filesystem": {"denyRead": ["${STDIO_MCP_NO_SUCH_VAR}/x"]}}}
        }}"#,
    )
    .unwrap();
    let strict = config.server("strict").unwrap().sandbox.clone().unwrap();
    assert_eq!(strict, Sandbox::new());
    assert!(config.server("off").unwrap().sandbox.is_none());
    let all = config.server("all").unwrap().sandbox.clone().unwrap();
    assert_eq!(all.network_access(), &Network::All);
    let home = std::env::var("HOME")
        .or_else(|_| std::env::var("USERPROFILE"))
        .unwrap();
    assert_eq!(
        all.allowed_writes(),
        [PathBuf::from(format!("{home}/.npm"))]
    );
    let warnings: Vec<String> = config.warnings().iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        [
            "server \"off\": \"sandbox\" is ignored without \"sandboxEnabled\": true — it runs unconfined",
            "server \"typo\": unknown key \"sandbox.filesystem.alowWrite\" is ignored (did you mean \"allowWrite\"?)",
            "server \"typo\": unknown key \"sandbox.netwrk\" is ignored (did you mean \"network\"?)",
        ]
    );
    let errors: Vec<String> = config.errors().iter().map(ToString::to_string).collect();
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert_eq!(
        errors[0],
        "server \"bad\", field sandboxEnabled: must be a boolean, not a string"
    );
    assert!(
        errors[1].starts_with(
            "server \"list\", field sandbox.network.allowedDomains: a list of domains cannot be enforced here"
        ),
        "{errors:?}"
    );
    assert_eq!(
        errors[2],
        "server \"unset\", field sandbox.filesystem.denyRead: environment variable \
         STDIO_MCP_NO_SUCH_VAR is not set (write ${STDIO_MCP_NO_SUCH_VAR:-default} for a fallback)"
    );
}

#[test]
fn the_socket_and_limit_keys_are_read_and_refused_with_the_field_named() {
    use stdio_mcp::sandbox::Limits;
    let config = Config::parse(
        r#"{"mcpServers": {
            "sockets": {"command": "x", "sandboxEnabled": true,
                        "sandbox": {"network": {"allowAllUnixSockets": true,
                                                "allowUnixSockets": ["/run/agent.sock"]},
                                    "limits": {"shmBytes": 1048576, "processes": 64, "tmpByte": 1}}},
            "notbool": {"command": "x", "sandboxEnabled": true,
                        "sandbox": {"network": {"allowAllUnixSockets": "yes"}}},
            "negative": {"command": "x", "sandboxEnabled": true,
                         "sandbox": {"limits": {"fileBytes": -1}}}
        }}"#,
    )
    .unwrap();
    let sockets = config.server("sockets").unwrap().sandbox.clone().unwrap();
    let expected = Sandbox::new()
        .allow_all_unix_sockets(true)
        .allow_unix_socket("/run/agent.sock")
        .limits(Limits::default().shm_bytes(1 << 20).processes(64));
    assert_eq!(sockets, expected);
    let warnings: Vec<String> = config.warnings().iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        ["server \"sockets\": unknown key \"sandbox.limits.tmpByte\" is ignored (did you mean \"tmpBytes\"?)"]
    );
    let errors: Vec<String> = config.errors().iter().map(ToString::to_string).collect();
    assert_eq!(
        errors,
        [
            "server \"negative\", field sandbox.limits.fileBytes: must be a whole number above 0, not -1",
            "server \"notbool\", field sandbox.network.allowAllUnixSockets: must be a boolean, not a string",
        ]
    );
}
