//! What a client keeps of its server's tools between listings: the last
//! listing, so that the next one can say what changed, and, when changes
//! are held, the definitions accepted so far, so that a tool new or changed
//! since is neither listed nor called until the host accepts it (the
//! client's methods that read it are in `tool_safety.rs`).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use super::model::tool_changes::{compare, same, ToolChanges};
use super::model::types::Tool;

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
