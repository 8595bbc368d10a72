//! A server entry's `sandboxEnabled` and `sandbox` keys (VS Code's), read
//! into a [`Sandbox`]: paths substituted like every other field (`~` is the
//! home folder), unknown keys warned of with the likely one, and a network
//! rule no platform here can enforce refused with the field named. Beside
//! VS Code's keys, the sandbox runtime's `allowAllUnixSockets` and
//! `allowUnixSockets`, and this crate's `limits`.

use serde_json::{Map, Value};

use crate::sandbox::{Network, Sandbox};

use super::error::{kind, ConfigError};
use super::substitute::{substitute, Place};
use super::warning::ConfigWarning;

const SECTIONS: [&str; 3] = ["filesystem", "network", "limits"];
const FILESYSTEM: [&str; 3] = ["allowWrite", "denyRead", "denyWrite"];
const NETWORK: [&str; 4] = [
    "allowedDomains",
    "deniedDomains",
    "allowAllUnixSockets",
    "allowUnixSockets",
];
const LIMITS: [&str; 4] = ["shmBytes", "tmpBytes", "fileBytes", "processes"];

/// The entry's sandbox, if `sandboxEnabled` is true.
pub(super) fn read(
    name: &str,
    entry: &Map<String, Value>,
    place: &Place<'_>,
    warnings: &mut Vec<ConfigWarning>,
) -> Result<Option<Sandbox>, ConfigError> {
    let fail = |field: &str, message: String| ConfigError::new(Some(name), Some(field), message);
    let enabled = match entry.get("sandboxEnabled") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(on)) => *on,
        Some(other) => {
            return Err(fail(
                "sandboxEnabled",
                format!("must be a boolean, not {}", kind(other)),
            ))
        }
    };
    let rules = match entry.get("sandbox") {
        None | Some(Value::Null) => None,
        Some(Value::Object(rules)) => Some(rules),
        Some(other) => {
            return Err(fail(
                "sandbox",
                format!("must be an object, not {}", kind(other)),
            ))
        }
    };
    let mut warn = |key: String, suggestion: Option<&str>, reason: Option<&str>| {
        warnings.push(ConfigWarning {
            server: name.to_owned(),
            key,
            suggestion: suggestion.map(str::to_owned),
            reason: reason.map(str::to_owned),
        });
    };
    if !enabled {
        if rules.is_some() {
            let why = "without \"sandboxEnabled\": true — it runs unconfined";
            warn("sandbox".to_owned(), None, Some(why));
        }
        return Ok(None);
    }
    let empty = Map::new();
    let rules = rules.unwrap_or(&empty);
    let section = |key: &str| -> Result<&Map<String, Value>, ConfigError> {
        match rules.get(key) {
            None | Some(Value::Null) => Ok(&empty),
            Some(Value::Object(section)) => Ok(section),
            Some(other) => Err(fail(
                &format!("sandbox.{key}"),
                format!("must be an object, not {}", kind(other)),
            )),
        }
    };
    let (filesystem, network) = (section("filesystem")?, section("network")?);
    let limits = section("limits")?;
    for (within, keys, known) in [
        ("sandbox", rules, &SECTIONS[..]),
        ("sandbox.filesystem", filesystem, &FILESYSTEM[..]),
        ("sandbox.network", network, &NETWORK[..]),
        ("sandbox.limits", limits, &LIMITS[..]),
    ] {
        for key in keys.keys().filter(|k| !known.contains(&k.as_str())) {
            warn(
                format!("{within}.{key}"),
                crate::closest_name(key, known.iter().copied()),
                None,
            );
        }
    }
    let strings = |section: &Map<String, Value>, field: &str| -> Result<Vec<String>, ConfigError> {
        let full = if NETWORK.contains(&field) {
            format!("sandbox.network.{field}")
        } else {
            format!("sandbox.filesystem.{field}")
        };
        let items = match section.get(field) {
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(Value::Array(items)) => items,
            Some(other) => {
                return Err(fail(
                    &full,
                    format!("must be an array of strings, not {}", kind(other)),
                ))
            }
        };
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let Value::String(text) = item else {
                return Err(fail(
                    &format!("{full}[{i}]"),
                    format!("must be a string, not {}", kind(item)),
                ));
            };
            out.push(text.clone());
        }
        Ok(out)
    };
    let path = |full: &str, text: &str| -> Result<std::path::PathBuf, ConfigError> {
        let text = match text.strip_prefix('~') {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => {
                format!("${{userHome}}{rest}")
            }
            _ => text.to_owned(),
        };
        let expanded = substitute(&text, place).map_err(|m| fail(full, m))?;
        Ok(place.resolve(&expanded))
    };
    let mut sandbox = Sandbox::new();
    for text in strings(filesystem, "allowWrite")? {
        sandbox = sandbox.allow_write(path("sandbox.filesystem.allowWrite", &text)?);
    }
    for text in strings(filesystem, "denyRead")? {
        sandbox = sandbox.deny_read(path("sandbox.filesystem.denyRead", &text)?);
    }
    for text in strings(filesystem, "denyWrite")? {
        sandbox = sandbox.deny_write(path("sandbox.filesystem.denyWrite", &text)?);
    }
    let allowed = strings(network, "allowedDomains")?;
    let denied = strings(network, "deniedDomains")?;
    let all = allowed == ["*"];
    let none = allowed.is_empty();
    if !all && !none {
        return Err(fail(
            "sandbox.network.allowedDomains",
            "a list of domains cannot be enforced here: [\"*\"] allows every host, \
             an empty list (or none) none; the server is not started with its network unfiltered"
                .to_owned(),
        ));
    }
    if all && !denied.is_empty() {
        return Err(fail(
            "sandbox.network.deniedDomains",
            "domains cannot be denied here while every other host is allowed; \
             the server is not started with its network unfiltered"
                .to_owned(),
        ));
    }
    if all {
        sandbox = sandbox.network(Network::All);
    }
    match network.get("allowAllUnixSockets") {
        None | Some(Value::Null) => {}
        Some(Value::Bool(allow)) => sandbox = sandbox.allow_all_unix_sockets(*allow),
        Some(other) => {
            return Err(fail(
                "sandbox.network.allowAllUnixSockets",
                format!("must be a boolean, not {}", kind(other)),
            ))
        }
    }
    for text in strings(network, "allowUnixSockets")? {
        sandbox = sandbox.allow_unix_socket(path("sandbox.network.allowUnixSockets", &text)?);
    }
    let mut bounds = crate::sandbox::Limits::default();
    for key in LIMITS {
        let value = match limits.get(key) {
            None | Some(Value::Null) => continue,
            Some(value) => value.as_u64().filter(|n| *n > 0).ok_or_else(|| {
                fail(
                    &format!("sandbox.limits.{key}"),
                    match value {
                        Value::Number(n) => format!("must be a whole number above 0, not {n}"),
                        other => format!("must be a whole number above 0, not {}", kind(other)),
                    },
                )
            })?,
        };
        bounds = match key {
            "shmBytes" => bounds.shm_bytes(value),
            "tmpBytes" => bounds.tmp_bytes(value),
            "fileBytes" => bounds.file_bytes(value),
            _ => bounds.processes(value),
        };
    }
    Ok(Some(sandbox.limits(bounds)))
}
