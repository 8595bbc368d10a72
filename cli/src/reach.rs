//! What a configured server can reach, as a person reads it before trusting
//! it: a sentence of the risk, true for its sandbox or for none, the
//! sandbox's rules, and what its launcher fetches at each start (shown by
//! the trust question, `trust` and `servers`).

use serde_json::{json, Value};
use stdio_mcp::config::ServerConfig;
use stdio_mcp::sandbox::{Network, Sandbox};

/// One sentence: what the server can do to the user's files and network.
pub fn risk(server: &ServerConfig) -> String {
    let Some(sandbox) = &server.sandbox else {
        return "It runs with your rights: it can read and change your files and reach the network."
            .to_owned();
    };
    let reads = if sandbox.denied_reads().is_empty() {
        "read all your files".to_owned()
    } else {
        format!("read your files but {}", list(sandbox.denied_reads()))
    };
    let mut writable: Vec<String> = sandbox
        .allowed_writes()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    if let Some(cwd) = &server.cwd {
        writable.push(cwd.display().to_string());
    }
    let writes = if writable.is_empty() {
        "change nothing but its own temporary folder".to_owned()
    } else {
        format!("change files only under {}", writable.join(", "))
    };
    let network = match sandbox.network_access() {
        Network::None => "reach no network",
        _ => "reach the network",
    };
    let sockets = match sandbox.unix_sockets() {
        (true, _) => {
            " and every local socket (a session bus, an ssh agent: each a way to act outside)"
        }
        (false, []) => "",
        (false, _) => " and the local sockets named",
    };
    format!("It runs in a sandbox: it can {reads}, {writes}, and {network}{sockets}.")
}

/// The sandbox's rules, a line each, for a person (nothing without one).
pub fn rule_lines(server: &ServerConfig) -> Vec<String> {
    let Some(sandbox) = &server.sandbox else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    let mut add = |name: &str, paths: &[std::path::PathBuf]| {
        if !paths.is_empty() {
            lines.push(format!("{name}: {}", list(paths)));
        }
    };
    add("allowWrite", sandbox.allowed_writes());
    add("denyRead", sandbox.denied_reads());
    add("denyWrite", sandbox.denied_writes());
    add("allowUnixSockets", sandbox.unix_sockets().1);
    lines.push(format!("network: {}", network_name(sandbox)));
    if sandbox.unix_sockets().0 {
        lines.push("allowAllUnixSockets: true".to_owned());
    }
    lines
}

/// The sandbox's rules for `--json`: `null` without one.
pub fn rules_json(server: &ServerConfig) -> Value {
    let Some(sandbox) = &server.sandbox else {
        return Value::Null;
    };
    json!({
        "allowWrite": sandbox.allowed_writes(),
        "denyRead": sandbox.denied_reads(),
        "denyWrite": sandbox.denied_writes(),
        "network": network_name(sandbox),
        "allowAllUnixSockets": sandbox.unix_sockets().0,
        "allowUnixSockets": sandbox.unix_sockets().1,
    })
}

fn network_name(sandbox: &Sandbox) -> &'static str {
    match sandbox.network_access() {
        Network::None => "none",
        _ => "all",
    }
}

fn list(paths: &[std::path::PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// What the server's launcher fetches at each start, for a person:
/// `npx @scope/server: unpinned: the registry decides what runs at each
/// start`, or `… : pinned`; nothing when it runs no such launcher.
pub fn fetch_line(server: &ServerConfig) -> Option<String> {
    server.fetched().map(|fetched| fetched.to_string())
}

/// The same for `--json`: `{"launcher", "what", "pinned"}`, or `null`.
pub fn fetch_json(server: &ServerConfig) -> Value {
    server.fetched().map_or(
        Value::Null,
        |f| json!({ "launcher": f.launcher, "what": f.what, "pinned": f.pinned }),
    )
}
