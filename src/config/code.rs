//! The code an entry runs from its project folder: the files its
//! definition names there (the command when it is a path, each argument
//! naming an existing file that is code), each with the digest of its
//! content, so that trust covers what runs and not only how it is called.

use std::collections::BTreeMap;
use std::path::{Component, Path};

use super::fingerprint::sha256;

/// Each file inside `project` that `command` names, or an argument that is
/// code ([`is_code`]) — relative ones taken from `cwd`, else the project
/// folder — as `./path` from the project folder with `/` between names,
/// with its digest. Files the code imports are not followed; a file that
/// cannot be read is left out.
pub(super) fn digests(
    project: &Path,
    cwd: Option<&Path>,
    command: &str,
    args: &[String],
) -> BTreeMap<String, String> {
    let base = cwd.unwrap_or(project);
    let command_is_path = command.contains('/') || command.contains('\\');
    let named = command_is_path
        .then_some((command, true))
        .into_iter()
        .chain(args.iter().map(|arg| (arg.as_str(), false)));
    // The project folder as the files' paths will be: looked up once, and
    // only when a word names something that exists.
    let mut canonical_project = None;
    let mut found = BTreeMap::new();
    for (word, is_command) in named {
        // Options and URLs are no files; an empty word would be the folder.
        if word.is_empty() || word.starts_with('-') || word.contains("://") {
            continue;
        }
        let Ok(path) = std::fs::canonicalize(base.join(word)) else {
            continue;
        };
        let project = match &canonical_project {
            Some(project) => project,
            None => match std::fs::canonicalize(project) {
                Ok(canonical) => canonical_project.insert(canonical),
                Err(_) => return found,
            },
        };
        let Ok(inside) = path.strip_prefix(project) else {
            continue;
        };
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if !meta.is_file() || !(is_command || is_code(&path, &meta)) {
            continue;
        }
        let Ok(content) = std::fs::read(&path) else {
            continue;
        };
        found.insert(shown(inside), sha256(&content));
    }
    found
}

/// The extensions of files an interpreter or loader runs.
const CODE: &[&str] = &[
    "js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx", "py", "pyw", "pyz", "rb", "pl", "pm",
    "php", "lua", "r", "jl", "sh", "bash", "zsh", "fish", "ps1", "psm1", "cmd", "bat", "jar",
    "wasm", "exe", "dll", "so", "dylib",
];

/// Whether the file at `path` is code: a script's or a program's extension,
/// or (Unix) an executable file. What a server reads or writes as data (a
/// database, a log, a settings file) is not, so a server that writes its
/// own files in the project stays trusted.
fn is_code(path: &Path, meta: &std::fs::Metadata) -> bool {
    let by_name = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| CODE.iter().any(|code| code.eq_ignore_ascii_case(e)));
    #[cfg(unix)]
    let executable = {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o111 != 0
    };
    #[cfg(not(unix))]
    let executable = {
        let _ = meta;
        false
    };
    by_name || executable
}

/// `./a/b.js` for the path `a/b.js` inside the project folder.
fn shown(inside: &Path) -> String {
    let mut text = String::from(".");
    for part in inside.components() {
        if let Component::Normal(name) = part {
            text.push('/');
            text.push_str(&name.to_string_lossy());
        }
    }
    text
}
