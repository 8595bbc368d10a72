//! A call's arguments from the command line, typed by the tool's (or the
//! prompt's) schema: `key=value` (a string property keeps its text as it is;
//! other types parse it as JSON), `key:=JSON`, and `--args JSON|@FILE|-`.

use std::io::Read;

use serde_json::{Map, Value};

use crate::failure::Failure;
use crate::{Cli, Command};

/// The arguments object for `words` (each `key=value` or `key:=JSON`),
/// starting from `--args` if given.
pub fn parse(words: &[String], whole: Option<&str>, schema: &Value) -> Result<Value, Failure> {
    let mut arguments = match whole {
        Some(given) => read_whole(given)?,
        None => Map::new(),
    };
    for word in words {
        let (key, value) = if let Some((key, raw)) = word.split_once(":=") {
            let value = serde_json::from_str(raw).map_err(|e| {
                Failure::usage(format!("argument {key}: {raw:?} is not JSON ({e})"))
            })?;
            (key, value)
        } else if let Some((key, text)) = word.split_once('=') {
            (key, typed(key, text, &schema["properties"][key])?)
        } else {
            return Err(Failure::usage(format!(
                "argument {word:?}: write key=value, or key:=JSON for a raw JSON value"
            )));
        };
        if key.is_empty() {
            return Err(Failure::usage(format!("argument {word:?} has no key")));
        }
        arguments.insert(key.to_owned(), value);
    }
    Ok(Value::Object(arguments))
}

/// `--args`: the JSON itself, `@FILE`, or `-` for stdin; an object.
fn read_whole(given: &str) -> Result<Map<String, Value>, Failure> {
    let text = match given {
        "-" => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| Failure::usage(format!("--args -: cannot read stdin: {e}")))?;
            text
        }
        file if file.starts_with('@') => std::fs::read_to_string(&file[1..])
            .map_err(|e| Failure::usage(format!("--args {file}: cannot read it: {e}")))?,
        json => json.to_owned(),
    };
    match serde_json::from_str(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(Failure::usage(format!(
            "--args must be a JSON object, not {}",
            kind(&other)
        ))),
        Err(e) => Err(Failure::usage(format!("--args is not JSON: {e}"))),
    }
}

/// The types a property's schema allows (`type` as a string or a list).
fn types(property: &Value) -> Vec<&str> {
    match &property["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The value of `key=text` for a property of schema `property`.
fn typed(key: &str, text: &str, property: &Value) -> Result<Value, Failure> {
    let allowed = types(property);
    // A string property (or one the schema does not type as anything but
    // strings, an enum of strings say) keeps the text: "007" stays "007".
    if allowed.contains(&"string")
        || (allowed.is_empty()
            && property["enum"]
                .as_array()
                .is_some_and(|e| e.iter().all(Value::is_string)))
    {
        return Ok(Value::String(text.to_owned()));
    }
    if allowed.is_empty() {
        // Untyped or unknown to the schema: JSON if it reads as JSON, else text.
        return Ok(serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned())));
    }
    let value: Option<Value> = serde_json::from_str(text).ok();
    let fits = |value: &Value| {
        allowed.iter().any(|t| match *t {
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "null" => value.is_null(),
            "array" => value.is_array(),
            "object" => value.is_object(),
            _ => false,
        })
    };
    match value {
        Some(value) if fits(&value) => Ok(value),
        _ => Err(Failure::usage(format!(
            "argument {key}: {text:?} is not {} (the tool's schema says so)",
            allowed
                .iter()
                .map(|t| article(t))
                .collect::<Vec<_>>()
                .join(" or ")
        ))),
    }
}

fn article(t: &str) -> String {
    match t {
        "integer" | "array" | "object" => format!("an {t}"),
        other => format!("a {other}"),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Whether the command line asks for `--json` (before, or without, a parse).
pub(crate) fn json_asked() -> bool {
    std::env::args().any(|a| a == "--json")
}

/// `call --args -`: standard input read now, once, whether the command
/// runs here or in a daemon (to which it travels as the arguments' text).
pub(crate) fn read_stdin_arguments(mut cli: Cli) -> Result<Cli, Failure> {
    if let Command::Call { whole, .. } = &mut cli.command {
        if whole.as_deref() == Some("-") {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                .map_err(|e| Failure::usage(format!("--args -: cannot read stdin: {e}")))?;
            *whole = Some(text);
        }
    }
    Ok(cli)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({ "type": "object", "properties": {
            "zip": { "type": "string" }, "n": { "type": "integer" }, "x": { "type": "number" },
            "on": { "type": "boolean" }, "tags": { "type": "array" }, "opt": { "type": ["string", "null"] },
        } })
    }

    fn args(words: &[&str]) -> Result<Value, Failure> {
        let words: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
        parse(&words, None, &schema())
    }

    #[test]
    fn values_are_typed_by_the_schema() {
        let got = args(&[
            "zip=007",
            "n=3",
            "x=2.5",
            "on=true",
            "tags=[1,\"a\"]",
            "opt=null",
            "free=12",
            "raw:={\"a\":1}",
        ])
        .unwrap();
        assert_eq!(
            got,
            json!({ "zip": "007", "n": 3, "x": 2.5, "on": true, "tags": [1, "a"], "opt": "null",
                    "free": 12, "raw": { "a": 1 } })
        );
    }

    #[test]
    fn a_value_that_does_not_fit_names_the_key_and_the_type() {
        let e = args(&["n=three"]).unwrap_err();
        assert_eq!(
            e.message,
            "argument n: \"three\" is not an integer (the tool's schema says so)"
        );
        assert_eq!(e.code, 1);
        assert!(args(&["n=2.5"]).is_err());
        assert!(args(&["novalue"])
            .unwrap_err()
            .message
            .contains("key=value"));
    }

    #[test]
    fn args_give_the_whole_object_and_words_add_to_it() {
        let words = vec!["n=4".to_owned()];
        let got = parse(&words, Some("{\"zip\": \"1\", \"n\": 1}"), &schema()).unwrap();
        assert_eq!(got, json!({ "zip": "1", "n": 4 }));
        assert!(parse(&[], Some("[1]"), &schema())
            .unwrap_err()
            .message
            .contains("object"));
    }
}
