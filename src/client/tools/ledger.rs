//! What a client keeps of its server's tools between listings: the last
//! listing, so that the next one can say what changed, and, when changes
//! are held, the definitions accepted so far, so that a tool new or changed
//! since is neither listed nor called until the host accepts it (the
//! client's methods that read it are in `safety.rs`), and the comparison
//! of two listings.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

use crate::client::model::tool_changes::{ToolChange, ToolChanges};
use crate::client::model::types::Tool;

pub(crate) struct ToolLedger {
    /// Whether listings are noted at all (a hook, held changes or a baseline
    /// asked for it); else nothing here costs a listing anything.
    tracking: bool,
    hold: bool,
    state: Mutex<Ledger>,
}

#[derive(Default)]
struct Ledger {
    /// The last listing (shared with the tool cache); `None` before the
    /// first (and no baseline).
    seen: Option<Arc<[Tool]>>,
    /// The definitions accepted (held changes only): the first listing or
    /// the baseline, then what `accept` took; a tool removed leaves it.
    accepted: Option<Vec<Tool>>,
    /// The tools of the last listing that await acceptance, by name.
    held: HashSet<String>,
}

/// Why a tool is held back.
pub(crate) enum Held {
    New,
    Changed,
}

impl ToolLedger {
    /// `baseline`: definitions known before the first listing (a group's
    /// catalog cache), which it is compared with and, with `hold`, accepted.
    pub(crate) fn new(tracking: bool, hold: bool, baseline: Option<Vec<Tool>>) -> Self {
        let tracking = tracking || hold || baseline.is_some();
        ToolLedger {
            tracking,
            hold,
            state: Mutex::new(Ledger {
                seen: baseline.clone().map(Arc::from),
                accepted: baseline.filter(|_| hold),
                held: HashSet::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Ledger> {
        crate::lock::lock(&self.state)
    }

    pub(crate) fn tracking(&self) -> bool {
        self.tracking
    }

    /// Notes a listing: what changed since the last one (`None` for the
    /// first without a baseline), and which tools it holds back.
    pub(crate) fn listed(&self, tools: &Arc<[Tool]>) -> Option<ToolChanges> {
        let mut ledger = self.lock();
        let changes = ledger.seen.as_deref().map(|seen| compare(seen, tools));
        ledger.seen = Some(Arc::clone(tools));
        if !self.hold {
            return changes;
        }
        let Some(accepted) = ledger.accepted.as_mut() else {
            ledger.accepted = Some(tools.to_vec());
            ledger.held.clear();
            return changes;
        };
        // A tool removed goes at once: were it listed again, it would be new.
        let listed: HashSet<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        accepted.retain(|tool| listed.contains(tool.name.as_str()));
        let by_name: HashMap<&str, &Tool> = accepted.iter().map(|t| (t.name.as_str(), t)).collect();
        let held = tools
            .iter()
            .filter(|tool| {
                by_name
                    .get(tool.name.as_str())
                    .is_none_or(|a| !same(a, tool))
            })
            .map(|tool| tool.name.clone())
            .collect();
        ledger.held = held;
        changes
    }

    /// `tools` without those held back.
    pub(crate) fn visible(&self, tools: Arc<[Tool]>) -> Arc<[Tool]> {
        let ledger = self.lock();
        if ledger.held.is_empty() {
            return tools;
        }
        tools
            .iter()
            .filter(|tool| !ledger.held.contains(&tool.name))
            .cloned()
            .collect()
    }

    /// Whether `name` is held back, and why.
    pub(crate) fn held(&self, name: &str) -> Option<Held> {
        let ledger = self.lock();
        if !ledger.held.contains(name) {
            return None;
        }
        let known = ledger.accepted.iter().flatten().any(|t| t.name == name);
        Some(if known { Held::Changed } else { Held::New })
    }

    /// What awaits acceptance: tools new since the accepted definitions, and
    /// those whose definitions changed.
    pub(crate) fn held_changes(&self) -> ToolChanges {
        let ledger = self.lock();
        match (&ledger.accepted, &ledger.seen) {
            (Some(accepted), Some(seen)) if !ledger.held.is_empty() => compare(accepted, seen),
            _ => ToolChanges::default(),
        }
    }

    /// The last listing becomes the accepted definitions.
    pub(crate) fn accept(&self) {
        let mut ledger = self.lock();
        if self.hold {
            ledger.accepted = ledger.seen.as_deref().map(<[Tool]>::to_vec);
        }
        ledger.held.clear();
    }

    /// The definitions accepted so far (all of the last listing, unless
    /// changes are held); `None` before any listing or without tracking.
    pub(crate) fn accepted(&self) -> Option<Vec<Tool>> {
        let ledger = self.lock();
        if self.hold {
            ledger.accepted.clone()
        } else {
            ledger.seen.as_deref().map(<[Tool]>::to_vec)
        }
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
    use crate::client::model::types::Tool;

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
