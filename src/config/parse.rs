//! A configuration document read into its stdio servers, the entries left
//! aside, and what it says that is ignored.

use std::path::Path;

use serde_json::{Map, Value};

use super::error::{kind, ConfigError};
use super::fingerprint::sha256;
use super::jsonc::strip_jsonc;
use super::substitute::{substitute, Place};
use super::warning::{self, ConfigWarning};
use super::{Config, ServerConfig, Skipped};

pub(super) fn parse_document(text: &str, place: &Place<'_>) -> Result<Config, ConfigError> {
    let document: Value = serde_json::from_str(&strip_jsonc(text))
        .map_err(|e| ConfigError::new(None, None, format!("not valid JSON: {e}")))?;
    let Value::Object(top) = document else {
        return Err(ConfigError::new(
            None,
            None,
            "the top level must be an object with \"mcpServers\" or \"servers\"",
        ));
    };
    let mut config = Config::default();
    let mut found = false;
    for key in ["mcpServers", "servers"] {
        let Some(entries) = top.get(key) else {
            continue;
        };
        found = true;
        let Value::Object(entries) = entries else {
            return Err(ConfigError::new(
                None,
                Some(key),
                "must be an object of named servers",
            ));
        };
        for (name, entry) in entries {
            let known = config.server(name).is_some()
                || config.skipped.iter().any(|s| &s.name == name)
                || config.errors.iter().any(|e| e.server() == Some(name));
            if known {
                return Err(ConfigError::new(
                    Some(name),
                    None,
                    "defined under both \"mcpServers\" and \"servers\"",
                ));
            }
            // An entry that cannot be read fails alone.
            match parse_entry(name, entry, place, &mut config.warnings) {
                Ok(ReadEntry::Stdio(server)) => config.servers.push(*server),
                Ok(ReadEntry::Skipped(reason)) => config.skipped.push(Skipped {
                    name: name.clone(),
                    reason,
                }),
                Err(error) => config.errors.push(error),
            }
        }
    }
    if !found {
        return Err(ConfigError::new(
            None,
            None,
            "no \"mcpServers\" or \"servers\" object at the top level",
        ));
    }
    config.servers.sort_by(|a, b| a.name.cmp(&b.name));
    config.skipped.sort_by(|a, b| a.name.cmp(&b.name));
    config
        .warnings
        .sort_by(|a, b| (&a.server, &a.key).cmp(&(&b.server, &b.key)));
    config.errors.sort_by(|a, b| a.server().cmp(&b.server()));
    Ok(config)
}

/// What one entry of the file turned out to be.
enum ReadEntry {
    Stdio(Box<ServerConfig>),
    Skipped(String),
}

fn parse_entry(
    name: &str,
    entry: &Value,
    place: &Place<'_>,
    warnings: &mut Vec<ConfigWarning>,
) -> Result<ReadEntry, ConfigError> {
    let fail = |field: &str, message: String| ConfigError::new(Some(name), Some(field), message);
    let expand = |field: &str, text: &str| substitute(text, place).map_err(|m| fail(field, m));
    let Value::Object(entry) = entry else {
        return Err(ConfigError::new(
            Some(name),
            None,
            format!("must be an object, not {}", kind(entry)),
        ));
    };
    // A field that is absent or null is `None`; one of another type an error.
    let field = |key: &str, wanted: &str, fits: fn(&Value) -> bool| match entry.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) if fits(value) => Ok(Some(value)),
        Some(other) => Err(fail(key, format!("must be {wanted}, not {}", kind(other)))),
    };
    let string = |key: &str| Ok(field(key, "a string", Value::is_string)?.and_then(Value::as_str));
    if field("disabled", "a boolean", Value::is_boolean)? == Some(&Value::Bool(true)) {
        return Ok(ReadEntry::Skipped("disabled".into()));
    }
    match string("type")? {
        None | Some("stdio") => {}
        Some(other) => return Ok(ReadEntry::Skipped(format!("type {other:?} is not stdio"))),
    }
    let command = match string("command")? {
        Some(c) if c.trim().is_empty() => return Err(fail("command", "is empty".into())),
        Some(c) => expand("command", c)?,
        None if entry.contains_key("url") => {
            return Ok(ReadEntry::Skipped("a url: not a stdio server".into()))
        }
        None => {
            let typo = entry
                .keys()
                .find(|key| *key != "command" && warning::closest(key) == Some("command"))
                .map(|key| format!(": unknown key {key:?} (did you mean \"command\"?)"))
                .unwrap_or_default();
            return Err(fail(
                "command",
                format!("missing (a stdio server needs its program){typo}"),
            ));
        }
    };
    // A stdio server (others are skipped above): what it says that is not read.
    warnings.extend(warning::unknown_keys(name, entry));
    let mut args = Vec::new();
    let items = field("args", "an array of strings", Value::is_array)?;
    for (i, item) in items
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let key = format!("args[{i}]");
        let Value::String(arg) = item else {
            return Err(fail(&key, format!("must be a string, not {}", kind(item))));
        };
        args.push(expand(&key, arg)?);
    }
    let mut env = Vec::new();
    let mut env_file_digest = None;
    if let Some(file) = string("envFile")? {
        let file = place.resolve(&expand("envFile", file)?);
        let text = std::fs::read_to_string(&file)
            .map_err(|e| fail("envFile", format!("cannot read {}: {e}", file.display())))?;
        env_file_digest = Some(sha256(text.as_bytes()));
        env.extend(read_env_file(&file, &text).map_err(|m| fail("envFile", m))?);
    }
    if let Some(vars) = field("env", "an object", Value::is_object)?.and_then(Value::as_object) {
        env.extend(parse_env(vars, place, &fail)?);
    }
    let patterns = |key: &str| -> Result<Option<Vec<String>>, ConfigError> {
        let Some(items) = field(key, "an array of strings", Value::is_array)? else {
            return Ok(None);
        };
        let mut patterns = Vec::new();
        for (i, item) in items.as_array().into_iter().flatten().enumerate() {
            let Value::String(pattern) = item else {
                return Err(fail(
                    &format!("{key}[{i}]"),
                    format!("must be a string, not {}", kind(item)),
                ));
            };
            patterns.push(pattern.clone());
        }
        Ok(Some(patterns))
    };
    let include_tools = patterns("includeTools")?;
    let exclude_tools = patterns("excludeTools")?;
    let trust = field("trust", "a boolean", Value::is_boolean)? == Some(&Value::Bool(true));
    let sandbox = super::sandbox::read(name, entry, place, warnings)?;
    let cwd = match string("cwd")? {
        Some(dir) => Some(place.resolve(&expand("cwd", dir)?)),
        None => None,
    };
    let code_digests = place
        .workspace()
        .map(|project| super::code::digests(project, cwd.as_deref(), &command, &args))
        .unwrap_or_default();
    Ok(ReadEntry::Stdio(Box::new(ServerConfig {
        name: name.to_owned(),
        command,
        args,
        env,
        cwd,
        include_tools,
        exclude_tools: exclude_tools.unwrap_or_default(),
        inherit_environment: false,
        trust,
        sandbox,
        env_file_digest,
        code_digests,
        sandbox_keys: sandbox_keys(entry),
    })))
}

fn parse_env(
    vars: &Map<String, Value>,
    place: &Place<'_>,
    fail: &dyn Fn(&str, String) -> ConfigError,
) -> Result<Vec<(String, Option<String>)>, ConfigError> {
    let mut env = Vec::new();
    for (key, value) in vars {
        let field = format!("env.{key}");
        let value = match value {
            Value::Null => None,
            Value::String(v) => Some(substitute(v, place).map_err(|m| fail(&field, m))?),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            other => {
                return Err(fail(
                    &field,
                    format!("must be a string, not {}", kind(other)),
                ))
            }
        };
        env.push((key.clone(), value));
    }
    Ok(env)
}

/// `KEY=VALUE` lines; `#` comments, blank lines, `export ` and quotes allowed.
fn read_env_file(path: &Path, text: &str) -> Result<Vec<(String, Option<String>)>, String> {
    let mut env = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((key, value)) = line.split_once('=') else {
            return Err(format!(
                "{} line {}: expected KEY=VALUE",
                path.display(),
                n + 1
            ));
        };
        let value = value.trim();
        let unquoted = ['"', '\'']
            .iter()
            .find_map(|q| value.strip_prefix(*q)?.strip_suffix(*q))
            .unwrap_or(value);
        env.push((key.trim().to_owned(), Some(unquoted.to_owned())));
    }
    Ok(env)
}

/// The entry's sandbox keys as written, for its launch fingerprint.
fn sandbox_keys(entry: &Map<String, Value>) -> Option<Value> {
    let keys: Map<String, Value> = ["sandboxEnabled", "sandbox"]
        .into_iter()
        .filter_map(|key| Some((key.to_owned(), entry.get(key)?.clone())))
        .collect();
    (!keys.is_empty()).then_some(Value::Object(keys))
}
