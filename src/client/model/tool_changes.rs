//! What changed between two listings of a server's tools: the tools added,
//! the tools removed, and each changed definition with the fields that
//! differ. Two definitions are the same when their digests are
//! ([`Tool::digest`]): `_meta`, key order and spacing are no change.

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;

use super::types::Tool;

/// The tools of one server that changed between two listings (see
/// [`ClientBuilder::on_tools_changed`](crate::client::ClientBuilder::on_tools_changed)),
/// or that await acceptance ([`Client::held_tool_changes`](crate::client::Client::held_tool_changes)).
///
/// # Examples
///
/// ```
/// use stdio_mcp::client::ToolChanges;
///
/// fn log(changes: &ToolChanges) {
///     for tool in &changes.added {
///         eprintln!("new tool {}", tool.name);
///     }
///     for change in &changes.changed {
///         eprintln!("tool {} changed: {}", change.after.name, change.fields.join(", "));
///     }
///     for tool in &changes.removed {
///         eprintln!("tool {} is gone", tool.name);
///     }
/// }
/// assert!(ToolChanges::default().is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ToolChanges {
    /// Tools the server did not list before, in the server's order.
    pub added: Vec<Tool>,
    /// Tools the server no longer lists, in the order it used to list them.
    pub removed: Vec<Tool>,
    /// Tools whose definitions changed, in the server's order.
    pub changed: Vec<ToolChange>,
}

/// One tool whose definition changed: before, after, and which of its
/// top-level fields differ.
///
/// # Examples
///
/// ```
/// use stdio_mcp::client::ToolChange;
///
/// fn describe(change: &ToolChange) -> String {
///     let was = change.before.hints().read_only;
///     let is = change.after.hints().read_only;
///     format!("{}: {} (read-only {was} → {is})", change.after.name, change.fields.join(", "))
/// }
/// # let _ = describe;
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolChange {
    /// The definition held before.
    pub before: Tool,
    /// The definition the server gives now.
    pub after: Tool,
    /// The top-level keys of the wire definition that differ (`"annotations"`,
    /// `"description"`, `"inputSchema"`, …), sorted; `_meta` is never one.
    pub fields: Vec<String>,
}

impl ToolChanges {
    /// Whether nothing changed.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(stdio_mcp::client::ToolChanges::default().is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }

    /// Only the tools whose names `keep` says yes to (a group's
    /// `includeTools` / `excludeTools`).
    pub(crate) fn retain(mut self, keep: impl Fn(&str) -> bool) -> Self {
        self.added.retain(|tool| keep(&tool.name));
        self.removed.retain(|tool| keep(&tool.name));
        self.changed.retain(|change| keep(&change.after.name));
        self
    }
}

/// Whether two definitions are the same tool: equal, or with one digest.
pub(crate) fn same(before: &Tool, after: &Tool) -> bool {
    before == after || before.digest() == after.digest()
}

/// What changed from `before` to `after` (two listings of one server).
pub(crate) fn compare(before: &[Tool], after: &[Tool]) -> ToolChanges {
    let old: HashMap<&str, &Tool> = before.iter().map(|t| (t.name.as_str(), t)).collect();
    let new: HashMap<&str, &Tool> = after.iter().map(|t| (t.name.as_str(), t)).collect();
    let mut changes = ToolChanges::default();
    for tool in after {
        match old.get(tool.name.as_str()) {
            None => changes.added.push(tool.clone()),
            Some(held) if !same(held, tool) => changes.changed.push(ToolChange {
                before: (*held).clone(),
                after: tool.clone(),
                fields: fields_that_differ(held, tool),
            }),
            Some(_) => {}
        }
    }
    changes.removed = before
        .iter()
        .filter(|tool| !new.contains_key(tool.name.as_str()))
        .cloned()
        .collect();
    changes
}

/// The top-level wire keys whose values differ, sorted, `_meta` left out.
pub(crate) fn fields_that_differ(before: &Tool, after: &Tool) -> Vec<String> {
    let wire = |tool: &Tool| match serde_json::to_value(tool) {
        Ok(Value::Object(fields)) => fields,
        _ => serde_json::Map::new(),
    };
    let (before, after) = (wire(before), wire(after));
    let keys: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    keys.into_iter()
        .filter(|key| *key != "_meta" && before.get(*key) != after.get(*key))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(definition: Value) -> Tool {
        serde_json::from_value(definition).unwrap()
    }

    #[test]
    fn reports_each_kind_of_change_once_in_order() {
        let before = [
            tool(json!({"name": "a", "inputSchema": {"type": "object"}})),
            tool(json!({"name": "b", "description": "x", "inputSchema": {"type": "object"}})),
            tool(json!({"name": "gone", "inputSchema": {"type": "object"}})),
        ];
        let after = [
            tool(json!({"name": "new", "inputSchema": {"type": "object"}})),
            tool(json!({"_meta": {"k": 1}, "inputSchema": {"type": "object"}, "name": "a"})),
            tool(
                json!({"name": "b", "description": "y", "inputSchema": {"type": "object"},
                        "annotations": {"readOnlyHint": true}}),
            ),
        ];
        let changes = compare(&before, &after);
        let names = |tools: &[Tool]| tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&changes.added), ["new"]);
        assert_eq!(names(&changes.removed), ["gone"]);
        assert_eq!(changes.changed.len(), 1, "a _meta-only change is none");
        assert_eq!(changes.changed[0].fields, ["annotations", "description"]);
        assert_eq!(changes.changed[0].before, before[1]);
        assert!(compare(&after, &after).is_empty());
    }
}
