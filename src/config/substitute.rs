//! `${…}` in a configuration's strings: each host's forms of environment
//! variables, the user's home and the workspace folder, and where relative
//! paths are taken from.

use std::path::{Path, PathBuf};

/// Where the text came from, and how variables are found.
pub(super) struct Place<'a> {
    /// The folder relative paths are taken from.
    dir: Option<PathBuf>,
    workspace: Option<PathBuf>,
    env: &'a dyn Fn(&str) -> Option<String>,
}

impl<'a> Place<'a> {
    /// The place of text read from `file`: its folder made absolute (as VS
    /// Code gives `${workspaceFolder}`), so a relative `--config` or a
    /// server's own `cwd` cannot move what a path names.
    pub(super) fn new(file: Option<&Path>, env: &'a dyn Fn(&str) -> Option<String>) -> Self {
        let dir = file.map(|f| match f.parent() {
            Some(p) if !p.as_os_str().is_empty() => absolute(p),
            _ => absolute(Path::new(".")),
        });
        let workspace = dir.as_ref().map(|d| {
            let hidden = d
                .file_name()
                .is_some_and(|n| n == ".vscode" || n == ".cursor");
            match d.parent() {
                Some(parent) if hidden => parent.to_path_buf(),
                _ => d.clone(),
            }
        });
        Place {
            dir,
            workspace,
            env,
        }
    }

    /// The project folder: `${workspaceFolder}` (none for text not read
    /// from a file).
    pub(super) fn workspace(&self) -> Option<&Path> {
        self.workspace.as_deref()
    }

    pub(super) fn resolve(&self, path: &str) -> PathBuf {
        let path = PathBuf::from(path);
        match &self.dir {
            Some(dir) if path.is_relative() => dir.join(path),
            _ => path,
        }
    }
}

/// `path` from the root, without `.` parts (symbolic links kept, as
/// written); as given when there is no current folder to start from.
fn absolute(path: &Path) -> PathBuf {
    let made = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    made.components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect()
}

/// `text` with every `${…}` replaced, or why one cannot be.
pub(super) fn substitute(text: &str, place: &Place<'_>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("unterminated ${{ in {text:?}"));
        };
        out.push_str(&variable(&after[..end], place)?);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn variable(inside: &str, place: &Place<'_>) -> Result<String, String> {
    let lookup = |name: &str| (place.env)(name);
    if let Some(name) = inside.strip_prefix("env:") {
        return lookup(name).ok_or_else(|| format!("environment variable {name} is not set"));
    }
    if let Some(id) = inside.strip_prefix("input:") {
        return Err(format!(
            "${{input:{id}}} is a prompt of VS Code's; give the value in the file or as ${{env:NAME}}"
        ));
    }
    match inside {
        "userHome" => {
            return lookup("HOME")
                .or_else(|| lookup("USERPROFILE"))
                .map(|home| absolute(Path::new(&home)).display().to_string())
                .ok_or_else(|| "${userHome}: neither HOME nor USERPROFILE is set".to_owned())
        }
        "workspaceFolder" => {
            return place
                .workspace
                .as_ref()
                .map(|w| w.display().to_string())
                .ok_or_else(|| {
                    "${workspaceFolder} needs the file's location (Config::load or parse_with)"
                        .to_owned()
                })
        }
        _ => {}
    }
    let (name, default) = match inside.split_once(":-") {
        Some((name, default)) if default.contains("${") => {
            return Err(format!(
                "a variable inside the default of ${{{name}:-…}} is not supported"
            ))
        }
        Some((name, default)) => (name, Some(default)),
        None => (inside, None),
    };
    let valid = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !valid {
        return Err(format!("unknown variable ${{{inside}}}"));
    }
    match (lookup(name), default) {
        (Some(value), _) => Ok(value),
        (None, Some(default)) => Ok(default.to_owned()),
        (None, None) => Err(format!(
            "environment variable {name} is not set (write ${{{name}:-default}} for a fallback)"
        )),
    }
}
