//! Tool arguments and results checked against the tools' JSON Schemas
//! (feature `validate`): what to do with a mismatch, what is reported, and
//! the check itself. No schema is ever fetched: `jsonschema` is built
//! without its HTTP and file features, so a `$ref` outside the schema fails
//! to compile, and such a schema is reported once and not enforced.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

/// What a client does when a tool's arguments (or result) do not match the
/// tool's `inputSchema` (or `outputSchema`).
///
/// # Examples
///
/// ```no_run
/// # futures::executor::block_on(async {
/// use stdio_mcp::client::{Client, Validation};
///
/// let client = Client::builder(["my-mcp-server"])
///     .validate_arguments(Validation::Enforce)
///     .validate_results(Validation::Warn)
///     .on_invalid(|invalid| eprintln!("{invalid}"))
///     .connect()
///     .await?;
/// # Ok::<(), stdio_mcp::Error>(()) });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Validation {
    /// Not checked (the default).
    #[default]
    Off,
    /// Checked; a mismatch is reported (to
    /// [`ClientBuilder::on_invalid`](crate::client::ClientBuilder::on_invalid) and,
    /// with the `tracing` feature, as a warning) and the call goes on.
    Warn,
    /// Checked; mismatching arguments are never sent (the call fails with
    /// [`ErrorKind::InvalidArguments`](crate::ErrorKind::InvalidArguments)), a
    /// mismatching result fails the call with
    /// [`ErrorKind::Protocol`](crate::ErrorKind::Protocol).
    Enforce,
}

/// What was checked: a call's arguments or a tool's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Checked {
    /// The arguments, against the tool's `inputSchema`.
    Arguments,
    /// The result's `structuredContent`, against the tool's `outputSchema`.
    Result,
}

/// A mismatch, or a schema that cannot be used, as reported to
/// [`ClientBuilder::on_invalid`](crate::client::ClientBuilder::on_invalid).
///
/// ```
/// use stdio_mcp::client::{Checked, Invalid};
///
/// let invalid = Invalid {
///     tool: "add".into(),
///     checked: Checked::Arguments,
///     problems: vec!["/a: \"x\" is not of type \"number\"".into()],
///     unusable_schema: false,
/// };
/// assert_eq!(
///     invalid.to_string(),
///     "the arguments of tool add do not match its inputSchema:\n- /a: \"x\" is not of type \"number\""
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    /// The tool's name.
    pub tool: String,
    /// Arguments or result.
    pub checked: Checked,
    /// One line per problem: the JSON pointer of the value at fault (`/` for
    /// the whole), then what was expected of it. For an unusable schema, why
    /// it cannot be compiled.
    pub problems: Vec<String>,
    /// The schema itself cannot be compiled (reported once; not enforced).
    pub unusable_schema: bool,
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (what, schema) = match self.checked {
            Checked::Arguments => ("arguments", "inputSchema"),
            Checked::Result => ("structured result", "outputSchema"),
        };
        if self.unusable_schema {
            write!(
                f,
                "the {schema} of tool {} cannot be used, so its {what} are not checked",
                self.tool
            )?;
        } else {
            write!(
                f,
                "the {what} of tool {} do not match its {schema}:",
                self.tool
            )?;
        }
        for problem in &self.problems {
            write!(f, "\n- {problem}")?;
        }
        Ok(())
    }
}

pub(crate) type InvalidHook = Arc<dyn Fn(&Invalid) + Send + Sync>;

/// The client's settings: what to check, and whom to tell.
#[derive(Clone, Default)]
pub(crate) struct Checks {
    pub(crate) arguments: Validation,
    pub(crate) results: Validation,
    pub(crate) on_invalid: Option<InvalidHook>,
}

impl Checks {
    pub(crate) fn mode(&self, checked: Checked) -> Validation {
        match checked {
            Checked::Arguments => self.arguments,
            Checked::Result => self.results,
        }
    }

    /// Tells the hook and the log.
    pub(crate) fn report(&self, invalid: &Invalid) {
        event!(warn, tool = %invalid.tool, "{invalid}");
        if let Some(hook) = &self.on_invalid {
            hook(invalid);
        }
    }
}

impl fmt::Debug for Checks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Checks")
            .field("arguments", &self.arguments)
            .field("results", &self.results)
            .field("on_invalid", &self.on_invalid.is_some())
            .finish()
    }
}

/// A schema compiled once per tool and kept with the tool list, or why it
/// could not be.
pub(crate) type Compiled = Result<Arc<jsonschema::Validator>, String>;

/// Compiles `schema` in the draft its `$schema` names (2020-12 if none).
pub(crate) fn compile(schema: &Value) -> Compiled {
    jsonschema::validator_for(schema)
        .map(Arc::new)
        .map_err(|e| e.to_string())
}

/// Each problem of `value` against `validator`, as a line: pointer, then what
/// was expected.
pub(crate) fn problems(validator: &jsonschema::Validator, value: &Value) -> Vec<String> {
    validator
        .iter_errors(value)
        .map(|error| {
            let pointer = error.instance_path().to_string();
            let pointer = if pointer.is_empty() { "/" } else { &pointer };
            format!("{pointer}: {error}")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{compile, problems};
    use serde_json::json;

    #[test]
    fn a_schema_without_dollar_schema_is_read_as_2020_12() {
        // `prefixItems` exists from 2020-12 on: it binds here.
        let validator =
            compile(&json!({"type": "array", "prefixItems": [{"type": "string"}]})).unwrap();
        assert_eq!(
            problems(&validator, &json!([1])),
            ["/0: 1 is not of type \"string\""]
        );
    }

    #[test]
    fn dollar_schema_picks_the_draft() {
        // Draft 7 has no `prefixItems`: ignored there.
        let draft7 = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "array",
            "prefixItems": [{"type": "string"}]
        });
        assert!(problems(&compile(&draft7).unwrap(), &json!([1])).is_empty());
        // Draft 4's boolean `exclusiveMaximum` makes `maximum` exclusive.
        let draft4 = json!({
            "$schema": "http://json-schema.org/draft-04/schema#",
            "type": "number", "maximum": 5, "exclusiveMaximum": true
        });
        assert_eq!(problems(&compile(&draft4).unwrap(), &json!(5)).len(), 1);
        assert!(problems(&compile(&draft4).unwrap(), &json!(4)).is_empty());
    }

    #[test]
    fn a_reference_outside_the_schema_does_not_compile_and_nothing_is_fetched() {
        let started = std::time::Instant::now();
        let why = compile(&json!({"$ref": "https://schemas.example.invalid/x.json"})).unwrap_err();
        assert!(!why.is_empty());
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }
}
