//! The tool list a client keeps: fresh until its `ttlMs` runs out, the server
//! says its tools changed, or the server is restarted; and one listing at a
//! time, however many callers find it stale.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use event_listener::{Event, EventListener};

use crate::client::model::types::Tool;
#[cfg(feature = "validate")]
use crate::client::validation::{compile, Checked, Compiled};

/// What the cached list is measured against: the tools `list_changed`
/// notifications seen and the restarts, when it was listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Version {
    pub(crate) changes: u64,
    pub(crate) restarts: u64,
}

#[derive(Default)]
pub(crate) struct ToolCache {
    state: Mutex<Cached>,
    /// A listing ended (stored or failed): waiting callers look again.
    listed: Event,
}

#[derive(Default)]
struct Cached {
    tools: Option<Arc<[Tool]>>,
    version: Option<Version>,
    fresh_until: Option<Instant>,
    listing: bool,
    /// Each tool's schemas, compiled on first use; dropped with the list.
    #[cfg(feature = "validate")]
    validators: std::collections::HashMap<String, Schemas>,
}

/// A tool's two schemas, each compiled once it is first needed.
#[cfg(feature = "validate")]
#[derive(Default)]
struct Schemas {
    arguments: Option<Compiled>,
    result: Option<Compiled>,
}

#[cfg(feature = "validate")]
impl Schemas {
    fn slot(&mut self, checked: Checked) -> &mut Option<Compiled> {
        match checked {
            Checked::Arguments => &mut self.arguments,
            Checked::Result => &mut self.result,
        }
    }
}

/// What a caller of `Client::tools` is to do.
pub(crate) enum Look<'a> {
    /// The cached list is fresh: here it is.
    Fresh(Arc<[Tool]>),
    /// Another caller is listing: wait for it, then look again.
    Wait(EventListener),
    /// List the tools and [`store`](ToolCache::store) them; the guard lets
    /// the waiting callers go however the listing ends.
    List(ListingUnderway<'a>),
}

impl ToolCache {
    fn lock(&self) -> MutexGuard<'_, Cached> {
        crate::lock::lock(&self.state)
    }

    pub(crate) fn look(&self, now: Version) -> Look<'_> {
        let mut state = self.lock();
        let fresh = state.version == Some(now)
            && state.fresh_until.is_none_or(|until| Instant::now() < until);
        if let (true, Some(tools)) = (fresh, &state.tools) {
            return Look::Fresh(Arc::clone(tools));
        }
        if state.listing {
            return Look::Wait(self.listed.listen());
        }
        state.listing = true;
        Look::List(ListingUnderway { cache: self })
    }

    /// Keeps `tools`, listed at `version`, until `fresh_until` (if any).
    pub(crate) fn store(&self, tools: Arc<[Tool]>, fresh_until: Option<Instant>, version: Version) {
        let mut state = self.lock();
        state.tools = Some(tools);
        state.fresh_until = fresh_until;
        state.version = Some(version);
        #[cfg(feature = "validate")]
        state.validators.clear();
    }

    /// The validator of `tool`'s schema for `checked`, compiled the first time
    /// it is asked for (then `true` comes with it, so that a schema that does
    /// not compile is reported once); `None` when the list has no such tool
    /// or the tool no such schema.
    #[cfg(feature = "validate")]
    pub(crate) fn validator(&self, tool: &str, checked: Checked) -> Option<(Compiled, bool)> {
        let mut state = self.lock();
        if let Some(compiled) = state
            .validators
            .get_mut(tool)
            .and_then(|s| s.slot(checked).clone())
        {
            return Some((compiled, false));
        }
        let found = state.tools.as_ref()?.iter().find(|t| t.name == tool)?;
        let schema = match checked {
            Checked::Arguments => Some(&found.input_schema).filter(|s| !s.is_null()),
            Checked::Result => found.output_schema.as_ref(),
        }?;
        let compiled = compile(schema);
        let schemas = state.validators.entry(tool.to_owned()).or_default();
        *schemas.slot(checked) = Some(compiled.clone());
        Some((compiled, true))
    }
}

/// A listing under way; dropping it (done, failed or cancelled) lets the
/// callers that wait for it look again.
pub(crate) struct ListingUnderway<'a> {
    cache: &'a ToolCache,
}

impl Drop for ListingUnderway<'_> {
    fn drop(&mut self) {
        self.cache.lock().listing = false;
        self.cache.listed.notify(usize::MAX);
    }
}

impl std::fmt::Debug for ToolCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("ToolCache")
            .field("tools", &state.tools.as_ref().map(|t| t.len()))
            .field("version", &state.version)
            .field("fresh_until", &state.fresh_until)
            .field("listing", &state.listing)
            .finish()
    }
}
