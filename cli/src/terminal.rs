//! What a person at a terminal sees of a call, and answers: a progress bar
//! for its progress, a status line for its task, and the server's questions
//! (elicitation) asked field by field. Without a terminal, or with
//! `--no-input`, questions are declined.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dialoguer::{Confirm, Input, MultiSelect, Select};
use futures::future::BoxFuture;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{json, Map, Value};
use stdio_mcp::client::{ElicitRequest, ElicitResult, Progress, TaskStatus};
use stdio_mcp::{RpcError, ServerRequest};

/// Whether a person can be asked and shown things (stderr and stdin are terminals).
pub fn interactive(no_input: bool) -> bool {
    !no_input && std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// The bar a call's progress and task status are shown on, once there is any.
#[derive(Clone, Default)]
pub struct Bar(Arc<Mutex<Option<ProgressBar>>>);

impl Bar {
    fn with(&self, show: impl FnOnce(&ProgressBar)) {
        if !std::io::stderr().is_terminal() {
            return;
        }
        let mut bar = crate::lock::lock(&self.0);
        let bar = bar.get_or_insert_with(|| {
            let bar = ProgressBar::new_spinner();
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        show(bar);
    }

    pub fn progress(&self, p: &Progress) {
        self.with(|bar| {
            if let Some(total) = p.total {
                if bar.length().is_none() {
                    bar.set_style(
                        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
                            .unwrap_or_else(|_| ProgressStyle::default_bar()),
                    );
                }
                bar.set_length(total.max(0.0) as u64);
            }
            bar.set_position(p.progress.max(0.0) as u64);
            if let Some(message) = &p.message {
                bar.set_message(message.clone());
            }
        });
    }

    pub fn task(&self, t: &TaskStatus) {
        self.with(|bar| {
            let message = t.status_message.as_deref().unwrap_or_default();
            bar.set_message(format!("task {}: {} {message}", t.task_id, t.status));
        });
    }

    pub fn finish(&self) {
        if let Some(bar) = crate::lock::lock(&self.0).take() {
            bar.finish_and_clear();
        }
    }

    fn suspend<T>(&self, ask: impl FnOnce() -> T) -> T {
        match &*crate::lock::lock(&self.0) {
            Some(bar) => bar.suspend(ask),
            None => ask(),
        }
    }
}

/// How a group's servers' questions (elicitation) are answered: given the
/// server's name and its request, the result to send back.
pub type Questions =
    Arc<dyn Fn(&str, ServerRequest) -> BoxFuture<'static, Result<Value, RpcError>> + Send + Sync>;

/// Questions asked on this process's terminal when `interactive`, else declined.
pub fn on_this_terminal(interactive: bool, bar: Bar) -> Questions {
    Arc::new(move |_, request| {
        let bar = bar.clone();
        Box::pin(async move {
            let Some((message, schema)) = form_of(&request)? else {
                return Ok(ElicitResult::decline().into());
            };
            if !interactive {
                return Ok(ElicitResult::decline().into());
            }
            Ok(ask(message, schema, bar).await)
        })
    })
}

/// The form an elicitation asks (its message and schema), or `None` for
/// one the command line declines (a URL to open); an error for a request
/// that is not an elicitation.
pub fn form_of(request: &ServerRequest) -> Result<Option<(String, Value)>, RpcError> {
    Ok(match ElicitRequest::from_request(request)? {
        ElicitRequest::Form {
            message,
            requested_schema,
        } => Some((message, requested_schema)),
        _ => None,
    })
}

/// Asks the form `message` describes on this terminal, field by field, on
/// a thread of its own (the call's I/O goes on meanwhile): see [`answer`].
pub async fn ask(message: String, schema: Value, bar: Bar) -> Value {
    let (answer_sent, answered) = futures::channel::oneshot::channel();
    std::thread::spawn(move || {
        let _ = answer_sent.send(bar.suspend(|| answer(&message, &schema)));
    });
    answered
        .await
        .unwrap_or_else(|_| ElicitResult::cancel().into())
}

/// Asks the form `message` describes on this terminal, field by field, now:
/// an elicitation result, accepted with the answers, or cancelled.
pub fn answer(message: &str, schema: &Value) -> Value {
    match ask_form(message, schema) {
        Some(content) => ElicitResult::accept(content).into(),
        None => ElicitResult::cancel().into(),
    }
}

/// Asks each field of a flat form schema; `None` when the person declines.
fn ask_form(message: &str, schema: &Value) -> Option<Value> {
    eprintln!("The server asks: {message}");
    let proceed = Confirm::new()
        .with_prompt("Answer?")
        .default(true)
        .interact()
        .ok()?;
    if !proceed {
        return None;
    }
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut content = Map::new();
    for (name, field) in schema["properties"].as_object().into_iter().flatten() {
        let label = field["title"].as_str().unwrap_or(name);
        let prompt = match field["description"].as_str() {
            Some(d) => format!("{label} ({d})"),
            None => label.to_owned(),
        };
        let optional = !required.contains(&name.as_str());
        if let Some(value) = ask_field(&prompt, field, optional)? {
            content.insert(name.clone(), value);
        }
    }
    Some(Value::Object(content))
}

/// The choices a schema offers, as (value, label): `enum` (labelled by
/// `enumNames` where given), or `oneOf`/`anyOf` of `{const, title}`.
fn choices(schema: &Value) -> Option<Vec<(Value, String)>> {
    let label = |value: &Value| {
        value
            .as_str()
            .map_or_else(|| value.to_string(), str::to_owned)
    };
    if let Some(values) = schema["enum"].as_array() {
        let names = schema["enumNames"].as_array();
        return Some(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let name = names.and_then(|n| n.get(i)).and_then(Value::as_str);
                    (v.clone(), name.map_or_else(|| label(v), str::to_owned))
                })
                .collect(),
        );
    }
    let options = schema["oneOf"].as_array().or(schema["anyOf"].as_array())?;
    let listed: Vec<(Value, String)> = options
        .iter()
        .filter_map(|option| {
            let value = option.get("const")?.clone();
            let name = option["title"]
                .as_str()
                .map_or_else(|| label(&value), str::to_owned);
            Some((value, name))
        })
        .collect();
    (!listed.is_empty()).then_some(listed)
}

/// One field, by its type; `Some(None)` for an optional field left empty.
fn ask_field(prompt: &str, field: &Value, optional: bool) -> Option<Option<Value>> {
    if field["type"] == "array" {
        return ask_list(prompt, field, optional);
    }
    if let Some(choices) = choices(field) {
        let labels: Vec<&str> = choices.iter().map(|(_, l)| l.as_str()).collect();
        let default = choices
            .iter()
            .position(|(v, _)| *v == field["default"])
            .unwrap_or(0);
        let picked = Select::new()
            .with_prompt(prompt)
            .items(&labels)
            .default(default)
            .interact()
            .ok()?;
        return Some(Some(choices[picked].0.clone()));
    }
    match field["type"].as_str() {
        Some("boolean") => {
            let default = field["default"].as_bool().unwrap_or(false);
            let yes = Confirm::new()
                .with_prompt(prompt)
                .default(default)
                .interact()
                .ok()?;
            Some(Some(json!(yes)))
        }
        Some(kind @ ("number" | "integer")) => loop {
            let text = ask_text(prompt, field, optional)?;
            let Some(text) = text else { return Some(None) };
            let parsed: Option<Value> = serde_json::from_str(&text).ok();
            match parsed {
                Some(v) if v.is_i64() || v.is_u64() || (kind == "number" && v.is_number()) => {
                    return Some(Some(v));
                }
                _ => eprintln!(
                    "  that is not {}",
                    if kind == "integer" {
                        "an integer"
                    } else {
                        "a number"
                    }
                ),
            }
        },
        _ => Some(ask_text(prompt, field, optional)?.map(Value::String)),
    }
}

/// A field that takes a list: the choices its items offer, several
/// picked, or else words separated by commas.
fn ask_list(prompt: &str, field: &Value, optional: bool) -> Option<Option<Value>> {
    let items = &field["items"];
    let Some(choices) = choices(items) else {
        let text = ask_text(&format!("{prompt} (separated by commas)"), field, optional)?;
        let Some(text) = text else { return Some(None) };
        let words: Vec<Value> = text
            .split(',')
            .map(str::trim)
            .filter(|w| !w.is_empty())
            .map(|w| Value::String(w.to_owned()))
            .collect();
        return Some(Some(Value::Array(words)));
    };
    let labels: Vec<&str> = choices.iter().map(|(_, l)| l.as_str()).collect();
    let defaults: Vec<bool> = choices
        .iter()
        .map(|(v, _)| field["default"].as_array().is_some_and(|d| d.contains(v)))
        .collect();
    let picked = MultiSelect::new()
        .with_prompt(format!("{prompt} (space picks, enter ends)"))
        .items(&labels)
        .defaults(&defaults)
        .interact()
        .ok()?;
    let values: Vec<Value> = picked.into_iter().map(|i| choices[i].0.clone()).collect();
    if values.is_empty() && optional {
        return Some(None);
    }
    Some(Some(Value::Array(values)))
}

fn ask_text(prompt: &str, field: &Value, optional: bool) -> Option<Option<String>> {
    let mut input = Input::<String>::new()
        .with_prompt(prompt)
        .allow_empty(optional);
    if let Some(default) = field.get("default").filter(|d| !d.is_null()) {
        input = input.default(
            default
                .as_str()
                .map_or_else(|| default.to_string(), str::to_owned),
        );
    }
    let text = input.interact_text().ok()?;
    Some((!text.is_empty()).then_some(text))
}
