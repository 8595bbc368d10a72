//! Where the servers come from: the files named with `--config`, else the
//! host config files found in their usual places (the first file that
//! defines a name keeps it), or one server's command line after `--`; and
//! where the catalog cache lives.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use directories::{BaseDirs, ProjectDirs};
use serde_json::json;
use stdio_mcp::config::Config;

use crate::failure::Failure;

/// The servers a command may use, and the file each came from.
pub struct Servers {
    pub config: Config,
    pub sources: BTreeMap<String, String>,
    /// One server given by its command line after `--`.
    pub ad_hoc: bool,
}

/// The files looked for without `--config`, in order: the project's, then
/// the user's hosts' (Claude Desktop, Claude Code, Cursor, Windsurf).
pub fn usual_files() -> Vec<PathBuf> {
    let mut files = vec![
        PathBuf::from(".mcp.json"),
        PathBuf::from(".vscode/mcp.json"),
        PathBuf::from(".cursor/mcp.json"),
    ];
    if let Some(dirs) = BaseDirs::new() {
        files.push(
            dirs.config_dir()
                .join("Claude")
                .join("claude_desktop_config.json"),
        );
        let home = dirs.home_dir();
        files.push(home.join(".claude.json"));
        files.push(home.join(".cursor").join("mcp.json"));
        files.push(
            home.join(".codeium")
                .join("windsurf")
                .join("mcp_config.json"),
        );
    }
    files
}

/// Reads the config files: those named, else the usual ones that exist.
pub fn load(named: &[PathBuf]) -> Result<Servers, Failure> {
    let explicit = !named.is_empty();
    let files = if explicit {
        named.to_vec()
    } else {
        usual_files()
    };
    let mut servers = Servers {
        config: Config::default(),
        sources: BTreeMap::new(),
        ad_hoc: false,
    };
    for file in files {
        if !explicit && !holds_servers(&file) {
            continue;
        }
        let config = Config::load(&file).map_err(|e| Failure::config(e.to_string()))?;
        for name in config.names() {
            servers
                .sources
                .entry(name.to_owned())
                .or_insert_with(|| file.display().to_string());
        }
        servers.config.merge(config);
    }
    Ok(servers)
}

/// Whether a file found in a usual place is there and may hold servers
/// (`~/.claude.json` holds much else, and often none).
fn holds_servers(file: &Path) -> bool {
    std::fs::read_to_string(file)
        .is_ok_and(|text| text.contains("\"mcpServers\"") || text.contains("\"servers\""))
}

/// One server from its command line, named after its program; it gets the
/// whole environment, as a command typed in a shell does.
pub fn ad_hoc(command: &[String]) -> Result<Servers, Failure> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| Failure::usage("no server command after --"))?;
    let name = Path::new(program)
        .file_stem()
        .map_or_else(|| "server".to_owned(), |s| s.to_string_lossy().into_owned());
    let text = json!({ "mcpServers": { &name: { "command": program, "args": args } } });
    let config = Config::parse(&text.to_string())
        .map_err(|e| Failure::usage(format!("the command after --: {e}")))?
        .inherit_environment(true);
    if let Some(error) = config.errors().first() {
        return Err(Failure::usage(format!("the command after --: {error}")));
    }
    let mut sources = BTreeMap::new();
    sources.insert(name, "the command line".to_owned());
    Ok(Servers {
        config,
        sources,
        ad_hoc: true,
    })
}

/// The catalog cache: `STDIO_MCP_CACHE` if set, else `catalog.json` in the
/// user's cache directory.
pub fn cache_file() -> Option<PathBuf> {
    if let Some(file) = std::env::var_os("STDIO_MCP_CACHE") {
        return Some(PathBuf::from(file));
    }
    ProjectDirs::from("", "", "stdio-mcp").map(|dirs| dirs.cache_dir().join("catalog.json"))
}
