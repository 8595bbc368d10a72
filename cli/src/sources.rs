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
    /// Every file that defines each name, in the order read (the first keeps
    /// the name): a project's file first, where one defines it.
    pub origins: BTreeMap<String, Vec<Origin>>,
    /// One server given by its command line after `--`.
    pub ad_hoc: bool,
}

/// A file that defines a server.
#[derive(Debug, Clone)]
pub struct Origin {
    pub file: PathBuf,
    /// A project's file (found in the current directory without
    /// `--config`): its servers start only once trusted.
    pub project: bool,
}

/// The project's files, looked for in the current directory without `--config`.
pub const PROJECT_FILES: [&str; 3] = [".mcp.json", ".vscode/mcp.json", ".cursor/mcp.json"];

/// The files looked for without `--config`, in order: the project's, then
/// the user's hosts' (Claude Desktop, Claude Code, Cursor, Windsurf).
pub fn usual_files() -> Vec<PathBuf> {
    let mut files = project_files();
    files.extend(user_files());
    files
}

/// The project's files: those of the nearest folder, from the current one
/// up to (not into) the home folder, that has any — as git finds its
/// repository from a subfolder.
fn project_files() -> Vec<PathBuf> {
    let here: Vec<PathBuf> = PROJECT_FILES.iter().map(PathBuf::from).collect();
    let Ok(current) = std::env::current_dir() else {
        return here;
    };
    // Not above the home folder, whose `.cursor/mcp.json` is the user's own.
    let home = BaseDirs::new().map(|d| d.home_dir().to_path_buf());
    for dir in current.ancestors() {
        if dir != current && home.as_deref() == Some(dir) {
            break;
        }
        let found: Vec<PathBuf> = PROJECT_FILES
            .iter()
            .map(|p| dir.join(p))
            .filter(|f| holds_servers(f))
            .collect();
        if !found.is_empty() {
            return if dir == current { here } else { found };
        }
    }
    here
}

/// The user's own hosts' files.
fn user_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
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
        origins: BTreeMap::new(),
        ad_hoc: false,
    };
    let user = user_files();
    for file in files {
        if !explicit && !holds_servers(&file) {
            continue;
        }
        let project = !explicit && is_project_file(&file, &user);
        let config = Config::load(&file).map_err(|e| Failure::config(e.to_string()))?;
        for name in config.names() {
            servers
                .sources
                .entry(name.to_owned())
                .or_insert_with(|| file.display().to_string());
            servers
                .origins
                .entry(name.to_owned())
                .or_default()
                .push(Origin {
                    // A project's file is named by where it really is.
                    file: if project {
                        std::fs::canonicalize(&file).unwrap_or_else(|_| file.clone())
                    } else {
                        file.clone()
                    },
                    project,
                });
        }
        servers.config.merge(config);
    }
    Ok(servers)
}

/// Whether `file`, found without `--config`, is a project's: one of the
/// project's files, unless it is one of the user's own (the current
/// directory is home, say).
fn is_project_file(file: &Path, user: &[PathBuf]) -> bool {
    if !PROJECT_FILES.iter().any(|p| file.ends_with(p)) {
        return false;
    }
    let canonical = |f: &Path| std::fs::canonicalize(f).ok();
    let here = canonical(file);
    !user.iter().any(|u| here.is_some() && canonical(u) == here)
}

/// The config files a command reads, canonical: those named, else the usual
/// ones that exist and may hold servers.
pub fn files_read(named: &[PathBuf]) -> Vec<PathBuf> {
    let files = if named.is_empty() {
        usual_files()
            .into_iter()
            .filter(|f| holds_servers(f))
            .collect()
    } else {
        named.to_vec()
    };
    files
        .iter()
        .map(|f| std::fs::canonicalize(f).unwrap_or_else(|_| f.clone()))
        .collect()
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
        origins: BTreeMap::new(),
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
