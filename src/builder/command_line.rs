//! The command line a builder starts, as its callers name it: the server's
//! name in a client's errors, and the key the era memory and a group's
//! catalog cache keep it under.

use std::ffi::OsStr;
use std::path::Path;

use serde_json::Value;

use super::{Builder, EnvChange};

impl Builder {
    /// What a client calls this server in its errors: the name it was given
    /// (a config entry's), else the program as given.
    pub(crate) fn server_name(&self) -> String {
        match (&self.name, self.command.first()) {
            (Some(name), _) => name.clone(),
            (None, Some(program)) => program_name(program),
            (None, None) => String::new(),
        }
    }

    /// What the era found for this server is remembered under, and what a
    /// group's catalog cache fingerprints: the command line, the environment
    /// changes and the working directory, as JSON (a text no Rust release
    /// changes, unlike `Debug`'s).
    pub(crate) fn command_key(&self) -> String {
        let env: Vec<Value> = self
            .env
            .iter()
            .map(|change| match change {
                EnvChange::Set(key, value) => {
                    serde_json::json!(["set", os_text(key), os_text(value)])
                }
                EnvChange::Remove(key) => serde_json::json!(["remove", os_text(key)]),
                EnvChange::Clear => serde_json::json!(["clear"]),
            })
            .collect();
        let command: Vec<Value> = self.command.iter().map(|part| os_text(part)).collect();
        let cwd = self.cwd.as_deref().map(|cwd| os_text(cwd.as_os_str()));
        serde_json::json!([command, env, cwd]).to_string()
    }
}

/// `text` as a JSON string, or, when it is not Unicode, as `{"bytes": hex}` of
/// its platform encoding (so two such texts are never taken for one).
fn os_text(text: &OsStr) -> Value {
    match text.to_str() {
        Some(text) => Value::from(text),
        None => {
            let hex: String = text
                .as_encoded_bytes()
                .iter()
                .map(|byte| format!("{byte:02x}"))
                .collect();
            serde_json::json!({ "bytes": hex })
        }
    }
}

/// A program as a person calls it: its file name without the folder or an
/// executable extension (`npx` for `C:\\nodejs\\npx.cmd`).
fn program_name(program: &OsStr) -> String {
    let name = Path::new(program)
        .file_name()
        .unwrap_or(program)
        .to_string_lossy();
    let executable = [".exe", ".cmd", ".bat", ".com"].iter().find(|ext| {
        name.len() > ext.len()
            && name.is_char_boundary(name.len() - ext.len())
            && name[name.len() - ext.len()..].eq_ignore_ascii_case(ext)
    });
    match executable {
        Some(ext) => name[..name.len() - ext.len()].to_owned(),
        None => name.into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::program_name;
    use std::ffi::OsStr;

    #[test]
    fn a_program_is_named_by_its_file_name_without_an_executable_extension() {
        assert_eq!(program_name(OsStr::new("npx")), "npx");
        assert_eq!(
            program_name(OsStr::new("/usr/bin/python3.11")),
            "python3.11"
        );
        assert_eq!(program_name(OsStr::new("C:/nodejs/npx.CMD")), "npx");
        assert_eq!(
            program_name(OsStr::new("stdio-mcp-peer.exe")),
            "stdio-mcp-peer"
        );
        assert_eq!(program_name(OsStr::new(".exe")), ".exe");
    }

    #[test]
    fn a_command_key_is_json_of_everything_the_child_is_started_with() {
        let builder = crate::Transport::builder(["npx", "-y", "server \"x\""])
            .env_clear()
            .env("TOKEN", "a b")
            .env_remove("HOME")
            .cwd("/srv");
        assert_eq!(
            builder.command_key(),
            r#"[["npx","-y","server \"x\""],[["clear"],["set","TOKEN","a b"],["remove","HOME"]],"/srv"]"#
        );
        let bare = crate::Transport::builder(["npx"]);
        assert_eq!(bare.command_key(), r#"[["npx"],[],null]"#);
        assert_ne!(
            bare.command_key(),
            crate::Transport::builder(["npx", ""]).command_key()
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_command_key_keeps_text_that_is_not_unicode_apart() {
        use std::os::unix::ffi::OsStrExt;
        let key =
            |bytes: &[u8]| crate::Transport::builder([OsStr::from_bytes(bytes)]).command_key();
        assert_eq!(key(b"a\xff"), r#"[[{"bytes":"61ff"}],[],null]"#);
        assert_ne!(key(b"a\xff"), key(b"a\xfe"));
    }
}
