//! Shell completions: the registration script `completions SHELL` prints,
//! and the names it completes (servers from the config files, tools from the
//! catalog cache: no server is started to complete a name).

use std::ffi::OsStr;
use std::path::PathBuf;

use clap_complete::engine::CompletionCandidate;
use clap_complete::env::{Bash, EnvCompleter, Fish, Powershell, Zsh};
use stdio_mcp::config::Config;
use stdio_mcp::group::Group;

use crate::{project, sources};

/// The variable the shell sets when it asks this program for completions.
pub const VAR: &str = "COMPLETE";

/// Prints the script that registers the completions for `shell`.
pub fn registration(shell: &str) -> std::io::Result<()> {
    let completer: &dyn EnvCompleter = match shell {
        "bash" => &Bash,
        "zsh" => &Zsh,
        "fish" => &Fish,
        _ => &Powershell,
    };
    let bin = std::env::args()
        .next()
        .unwrap_or_else(|| "stdio-mcp".into());
    let bin = if bin.contains(std::path::MAIN_SEPARATOR) {
        bin
    } else {
        "stdio-mcp".into()
    };
    completer.write_registration(VAR, "stdio-mcp", &bin, &bin, &mut std::io::stdout())
}

/// The `--config` files on the command line being completed, if any.
fn named_configs() -> Vec<PathBuf> {
    let words: Vec<String> = std::env::args().collect();
    words
        .windows(2)
        .filter(|w| w[0] == "--config")
        .map(|w| PathBuf::from(&w[1]))
        .collect()
}

/// The servers of the config files; a project's that may not start are left
/// out (a completion never asks, and starts nothing).
fn config() -> Config {
    let Ok(servers) = sources::load(&named_configs()) else {
        return Config::default();
    };
    let mut config = servers.config.clone();
    match project::held(&servers, &config) {
        Ok(held) => config.retain(|name| !held.iter().any(|h| h.name == name)),
        Err(_) => config.retain(|name| !servers.origins[name].iter().any(|o| o.project)),
    }
    config
}

/// The configured servers' names.
pub fn servers() -> Vec<CompletionCandidate> {
    config().names().map(CompletionCandidate::new).collect()
}

/// The tools the catalog cache knows: of the server named earlier on the
/// command line, else of every server.
pub fn tools(current: &OsStr) -> Vec<CompletionCandidate> {
    let mut config = config();
    let words: Vec<String> = std::env::args().collect();
    let named: Vec<String> = config
        .names()
        .filter(|n| words.iter().any(|w| w == n))
        .map(str::to_owned)
        .collect();
    if !named.is_empty() {
        config.retain(|n| named.iter().any(|m| m == n));
    }
    let Some(cache) = sources::cache_file() else {
        return Vec::new();
    };
    let group = Group::builder(config).catalog_cache(cache).lazy(true);
    let tools = futures::executor::block_on(async {
        let group = group.connect().await;
        group.tools().await
    });
    let prefix = current.to_string_lossy();
    let mut names: Vec<String> = tools.into_iter().map(|t| t.tool.name).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter(|n| n.starts_with(prefix.as_ref()))
        .map(CompletionCandidate::new)
        .collect()
}
