//! One server of a group: its entry, where it is (idle, starting, ready,
//! failed, closed), every process started for it, and the reports of its
//! changes to the group's hooks.
//!
//! Locks: `state` is held only to read or replace the state, never across an
//! await or a hook; `reported` is held while a change is told to the hooks,
//! so that one server's changes are told in the order they happened.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use event_listener::Event;
use futures::future::RemoteHandle;
use futures::FutureExt;

use crate::client::{Client, ClientState, Era, Tool, ToolChanges};
use crate::config::ServerConfig;
use crate::error::Error;
use crate::transport::Transport;

use super::cache::CachedServer;
use super::lock;
use super::naming::glob;
use super::runtime;
use super::start::Starter;
use super::state::ServerState;

pub(crate) enum MemberState {
    /// Not running; serving this catalog until its next call.
    Idle(Arc<CachedServer>),
    /// Being started; serving the cached catalog meanwhile, if there is one.
    Starting(Option<Arc<CachedServer>>),
    Ready {
        client: Client,
        /// MemberState by a call, after serving a cached catalog.
        lazily: bool,
    },
    Failed(Error),
    Closed,
}

/// What a member adds to the group's tools ([`Member::tools`]).
pub(crate) struct MemberTools {
    /// Listed and callable.
    pub(crate) tools: Vec<Tool>,
    /// Held back until accepted: named, but refused.
    pub(crate) held: Vec<Tool>,
    /// What the catalog cache is to keep of it.
    pub(crate) entry: Option<CachedServer>,
}

/// A server's client, and whether it was started by a call after serving a
/// cached catalog (whose tools may be gone since).
pub(crate) struct Reached {
    pub(crate) client: Client,
    pub(crate) lazily: bool,
}

pub(crate) struct Member {
    pub(crate) config: ServerConfig,
    /// Its command line's key in the catalog cache (and for reload).
    pub(crate) cache_key: String,
    state: Mutex<MemberState>,
    /// Notified when a start ends and when the member is closed.
    settled: Event,
    /// A start is under way on the group's thread.
    starting: AtomicBool,
    /// Dropping it cancels the start under way.
    start: Mutex<Option<RemoteHandle<()>>>,
    /// Every process started for it that may still run.
    processes: Mutex<Vec<Transport>>,
    /// The state last told to the hooks, and whether its tools were listed.
    reported: Mutex<(Option<ServerState>, bool)>,
    /// Its part of the group's tools as last known (for the change hook):
    /// what its client last listed and did not hold back, or its catalog.
    part: Mutex<Vec<Tool>>,
    /// The names of its tools as last listed (or cached), before the
    /// group's filters: `None` until known.
    listed: Mutex<Option<Vec<String>>>,
    /// When the group last asked something of it (for the idle timeout).
    used: Mutex<Instant>,
    /// The group's requests to it under way (a call, a read).
    in_use: AtomicUsize,
}

impl Member {
    pub(crate) fn new(config: ServerConfig, cache_key: String, started: MemberState) -> Arc<Self> {
        // Its catalog, when the cache knows one.
        let part = match &started {
            MemberState::Idle(cached) if cached.is_known() => Some(cached.tools.clone()),
            _ => None,
        };
        let mut member = Member {
            config,
            cache_key,
            state: Mutex::new(started),
            settled: Event::new(),
            starting: AtomicBool::new(false),
            start: Mutex::new(None),
            processes: Mutex::new(Vec::new()),
            reported: Mutex::new((None, false)),
            part: Mutex::new(Vec::new()),
            listed: Mutex::new(None),
            used: Mutex::new(Instant::now()),
            in_use: AtomicUsize::new(0),
        };
        if let Some(part) = part {
            member.part = Mutex::new(member.offered(part));
        }
        Arc::new(member)
    }

    /// Whether the group offers its tool `name` (`includeTools`, `excludeTools`).
    pub(crate) fn offers(&self, name: &str) -> bool {
        let config = &self.config;
        let included = config
            .include_tools
            .as_ref()
            .is_none_or(|patterns| patterns.iter().any(|p| glob(p, name)));
        included && !config.exclude_tools.iter().any(|p| glob(p, name))
    }

    /// Those of `tools`, its whole listing, the group offers; the names
    /// are kept for [`filter_warnings`](Self::filter_warnings).
    pub(crate) fn offered(&self, mut tools: Vec<Tool>) -> Vec<Tool> {
        *lock(&self.listed) = Some(tools.iter().map(|t| t.name.clone()).collect());
        tools.retain(|tool| self.offers(&tool.name));
        tools
    }

    /// Each `includeTools` or `excludeTools` pattern of its entry that
    /// matches none of its tools, once they are listed: a filter that
    /// filters nothing (a deny that never matches looks like a working one).
    pub(crate) fn filter_warnings(&self) -> Vec<super::GroupWarning> {
        let listed = lock(&self.listed);
        let Some(names) = listed.as_ref() else {
            return Vec::new();
        };
        let known: Vec<&str> = names.iter().map(String::as_str).collect();
        let config = &self.config;
        let include = config.include_tools.as_deref().unwrap_or_default();
        let mut warnings = Vec::new();
        for (key, patterns) in [
            ("includeTools", include),
            ("excludeTools", &config.exclude_tools[..]),
        ] {
            for pattern in patterns {
                if known.iter().any(|name| glob(pattern, name)) {
                    continue;
                }
                let near = crate::closest_name(pattern, known.iter().copied())
                    .or_else(|| {
                        known
                            .iter()
                            .copied()
                            .find(|name| name.contains(pattern.as_str()))
                    })
                    .map(|name| format!(" (did you mean {name:?}?)"))
                    .unwrap_or_default();
                warnings.push(super::GroupWarning {
                    server: self.name().to_owned(),
                    message: format!(
                        "{key} entry {pattern:?} matches none of its {} tools{near}",
                        known.len()
                    ),
                });
            }
        }
        warnings
    }

    /// Told of its client's listing: `visible` (what it does not hold back)
    /// becomes its part, and the hook hears what changed — the client's
    /// comparison with its last listing, or, for a client's first, its
    /// tools joining the group after `connect`.
    fn note_listing(&self, starter: &Starter, visible: &[Tool], changes: Option<&ToolChanges>) {
        let mut part = lock(&self.part);
        let before = std::mem::replace(&mut *part, self.offered(visible.to_vec()));
        let changes = match changes {
            Some(changes) => changes.clone().retain(|name| self.offers(name)),
            None if starter.is_connected() => crate::client::compare_tools(&before, &part),
            None => return,
        };
        starter.tools_changed(self.name(), &changes);
    }

    /// Its client accepted its held changes: they are in its part now.
    pub(crate) fn accepted(&self, client: &Client) {
        if let Some(tools) = client.accepted_tools() {
            *lock(&self.part) = self.offered(tools);
        }
    }

    /// Told that its server's tools may have changed: lists them again, on
    /// the group's thread, so that the hook hears what changed.
    fn relist(&self) {
        let client = match &*lock(&self.state) {
            MemberState::Ready { client, .. } => client.clone(),
            _ => return,
        };
        runtime::spawn(async move {
            let _ = client.tools().await;
        });
    }

    pub(crate) fn name(&self) -> &str {
        &self.config.name
    }

    pub(crate) fn state(&self) -> ServerState {
        Self::state_of(&lock(&self.state))
    }

    fn state_of(started: &MemberState) -> ServerState {
        match started {
            MemberState::Idle(_) => ServerState::Idle,
            MemberState::Starting(_) => ServerState::Starting,
            MemberState::Ready { client, .. } => match client.state() {
                ClientState::Ready => ServerState::Ready(client.era()),
                ClientState::Restarting => ServerState::Restarting,
                ClientState::Closed => ServerState::Closed,
                ClientState::GaveUp | ClientState::Exited => ServerState::Failed(
                    client
                        .failure()
                        .map_or_else(|| "exited".to_owned(), |e| e.to_string()),
                ),
            },
            MemberState::Failed(error) => ServerState::Failed(error.to_string()),
            MemberState::Closed => ServerState::Closed,
        }
    }

    /// Whether its tools are in the group's list in this state.
    fn listed(state: &ServerState, started: &MemberState) -> bool {
        match started {
            MemberState::Idle(_) | MemberState::Starting(Some(_)) => true,
            MemberState::Ready { .. } => {
                matches!(state, ServerState::Ready(_) | ServerState::Restarting)
            }
            _ => false,
        }
    }

    /// Tells the hooks of a change since the last report: the state, and
    /// whether the server's tools entered or left the list.
    pub(crate) fn report(&self, starter: &Starter) {
        let mut reported = lock(&self.reported);
        let (state, listed, catalog) = {
            let started = lock(&self.state);
            let state = Self::state_of(&started);
            let listed = Self::listed(&state, &started);
            let catalog = match &*started {
                MemberState::Idle(cached) | MemberState::Starting(Some(cached)) => {
                    Some(cached.tools.clone())
                }
                _ => None,
            };
            (state, listed, catalog)
        };
        if reported.0.as_ref() != Some(&state) {
            starter.state_changed(self.name(), &state);
        }
        if reported.0.is_some() && reported.1 != listed {
            self.joined_or_left(starter, listed, catalog);
        }
        *reported = (Some(state), listed);
    }

    /// Its tools joined the group's list (serving `catalog`; a client that
    /// starts tells of its own first listing) or left it.
    fn joined_or_left(&self, starter: &Starter, joined: bool, catalog: Option<Vec<Tool>>) {
        let mut part = lock(&self.part);
        let now = match (joined, catalog) {
            (true, Some(catalog)) => self.offered(catalog),
            (true, None) => return,
            (false, _) => Vec::new(),
        };
        let before = std::mem::replace(&mut *part, now);
        starter.tools_changed(self.name(), &crate::client::compare_tools(&before, &part));
    }

    /// Told of a new process of this member's: closed with the member.
    pub(crate) fn spawned(&self, transport: &Transport) {
        let mut processes = lock(&self.processes);
        processes.retain(|t| t.exit_status().is_none());
        processes.push(transport.clone());
    }

    /// Notes that the group asked something of it now.
    pub(crate) fn touch(&self) {
        *lock(&self.used) = Instant::now();
    }

    pub(crate) fn idle_since(&self) -> Instant {
        *lock(&self.used)
    }

    /// Its tools (listed by a running server, the catalog for one not
    /// running), those its client holds back, and, when `caching`, what the
    /// catalog cache is to keep of it; `None` when it has no list to give.
    pub(crate) async fn tools(&self, caching: bool) -> Option<MemberTools> {
        let client = match &*lock(&self.state) {
            MemberState::Idle(cached) | MemberState::Starting(Some(cached)) => {
                let entry = (caching && cached.is_known()).then(|| CachedServer::clone(cached));
                return Some(MemberTools {
                    tools: cached.tools.clone(),
                    held: Vec::new(),
                    entry,
                });
            }
            MemberState::Ready { client, .. } => client.clone(),
            _ => return None,
        };
        if !matches!(client.state(), ClientState::Ready | ClientState::Restarting) {
            return None;
        }
        let tools = client.tools().await.ok()?;
        let held = client.held_tools().await;
        *lock(&self.listed) = Some(tools.iter().chain(&held).map(|t| t.name.clone()).collect());
        let entry = caching.then(|| CachedServer::of(&client, &self.cache_key, &tools));
        Some(MemberTools { tools, held, entry })
    }

    /// Its client if it runs now, without starting it.
    pub(crate) fn running(&self) -> Option<Client> {
        match &*lock(&self.state) {
            MemberState::Ready { client, .. } if client.state() == ClientState::Ready => {
                Some(client.clone())
            }
            _ => None,
        }
    }

    pub(crate) fn is_starting(&self) -> bool {
        matches!(&*lock(&self.state), MemberState::Starting(_))
    }

    /// Starts it on the group's thread, unless a start is under way already:
    /// an idle one (serving its catalog meanwhile), or with `anew` one that
    /// failed or was closed.
    pub(crate) fn begin_start(self: &Arc<Self>, starter: &Arc<Starter>, anew: bool) {
        {
            let mut state = lock(&self.state);
            let served = match &*state {
                MemberState::Idle(entry) => Some(Arc::clone(entry)),
                MemberState::Starting(entry) => entry.clone(),
                MemberState::Failed(_) | MemberState::Closed if anew => None,
                _ => return,
            };
            if self.starting.swap(true, Ordering::AcqRel) {
                return;
            }
            *state = MemberState::Starting(served.clone());
            let run = Self::run_start(Arc::clone(self), Arc::clone(starter), served);
            let (run, handle) = run.remote_handle();
            *lock(&self.start) = Some(handle);
            runtime::spawn(run);
        }
        self.report(starter);
    }

    /// One start, on the group's thread: connect and list within the start
    /// limit, then settle (or, if the member was closed meanwhile, close
    /// what was started). Dropped when cancelled.
    async fn run_start(
        member: Arc<Member>,
        starter: Arc<Starter>,
        served: Option<Arc<CachedServer>>,
    ) {
        let _running = Running(Arc::clone(&member));
        let owner = Arc::downgrade(&member);
        let mut builder = starter.builder(
            &member.config,
            Arc::new(move |transport| {
                if let Some(member) = owner.upgrade() {
                    member.spawned(transport);
                }
            }),
        );
        // A server whose cached era is legacy is not probed (the probe may be a wait).
        if let Some(Era::Legacy) = served.as_ref().and_then(|e| e.era()) {
            if builder.era_asked() == Era::Auto {
                builder = builder.era(Era::Legacy);
            }
        }
        // What the cache accepted is what its first listing is held against.
        if let Some(served) = served.as_ref().filter(|s| s.is_known()) {
            builder = builder.tool_baseline(served.tools.clone());
        }
        if starter.tells_tool_changes() {
            let (owner, told) = (Arc::downgrade(&member), Arc::downgrade(&starter));
            builder = builder.on_tools_listed(Arc::new(move |visible, changes| {
                if let (Some(member), Some(starter)) = (owner.upgrade(), told.upgrade()) {
                    member.note_listing(&starter, visible, changes);
                }
            }));
            let owner = Arc::downgrade(&member);
            builder = builder.on_tools_stale(Arc::new(move || {
                if let Some(member) = owner.upgrade() {
                    member.relist();
                }
            }));
        }
        let opened = starter.open(builder, member.name()).await;
        let still_starting = matches!(&*lock(&member.state), MemberState::Starting(_));
        match opened {
            Ok(client) if still_starting => {
                *lock(&member.state) = MemberState::Ready {
                    client: client.clone(),
                    lazily: served.is_some(),
                };
                member.report(&starter);
                Member::watch(&member, &starter, client.clone());
            }
            Err(error) if still_starting => {
                *lock(&member.state) = MemberState::Failed(error);
                member.report(&starter);
            }
            // Closed or stopped meanwhile: what was started goes too.
            Ok(client) => {
                let _ = client.close().await;
            }
            Err(_) => {}
        }
    }

    /// Watches a running client on the group's thread: each change of its
    /// state is told; an exit no policy restarts, or a give-up, makes the
    /// member `Failed` with the whole error.
    fn watch(member: &Arc<Member>, starter: &Arc<Starter>, client: Client) {
        let (member, starter) = (Arc::downgrade(member), Arc::downgrade(starter));
        runtime::spawn(async move {
            loop {
                client.next_change().await;
                let (Some(member), Some(starter)) = (member.upgrade(), starter.upgrade()) else {
                    return;
                };
                let state = client.state();
                if matches!(state, ClientState::GaveUp | ClientState::Exited) {
                    let mut started = lock(&member.state);
                    let ours = matches!(&*started, MemberState::Ready { client: c, .. } if c.same(&client));
                    if ours {
                        let failure = client.failure().unwrap_or(Error::NotAlive);
                        *started = MemberState::Failed(failure);
                    }
                }
                member.report(&starter);
                if !matches!(state, ClientState::Ready | ClientState::Restarting) {
                    return;
                }
            }
        });
    }

    /// The server's client, starting it first if it is idle, waiting for a
    /// start under way: once, however many calls ask at the same time.
    pub(crate) async fn client(self: &Arc<Self>, starter: &Arc<Starter>) -> Result<Reached, Error> {
        self.touch();
        loop {
            let listener = self.settled.listen();
            match &*lock(&self.state) {
                MemberState::Ready { client, lazily } => {
                    return Ok(Reached {
                        client: client.clone(),
                        lazily: *lazily,
                    })
                }
                MemberState::Failed(error) => return Err(error.clone()),
                MemberState::Closed => return Err(Error::Closed.named(self.name())),
                MemberState::Idle(_) | MemberState::Starting(_) => {}
            }
            self.begin_start(starter, false);
            listener.await;
        }
    }

    /// Waits until no start is under way.
    pub(crate) async fn settled(&self) {
        loop {
            let listener = self.settled.listen();
            if !self.starting.load(Ordering::Acquire) {
                return;
            }
            listener.await;
        }
    }

    /// Ends it: a start under way is cancelled, its client closed, and every
    /// process started for it awaited until it has exited. `then` is the
    /// state it is left in (`Closed`, or `Idle` with its last catalog).
    pub(crate) async fn end(&self, starter: &Starter, then: MemberState) {
        self.end_if(starter, then, |_| true).await;
    }

    /// Closes a running server that has been idle `limit` to `Idle`, serving
    /// `catalog` meanwhile; `false` if it is in use or was used since (checked
    /// under the state's lock, so a call that begins meanwhile either keeps
    /// it running or finds it idle and starts it again).
    pub(crate) async fn close_idle(
        &self,
        starter: &Starter,
        limit: Duration,
        catalog: CachedServer,
    ) -> bool {
        let idle = |started: &MemberState| {
            matches!(started, MemberState::Ready { .. })
                && self.in_use.load(Ordering::SeqCst) == 0
                && self.idle_since().elapsed() >= limit
        };
        self.end_if(starter, MemberState::Idle(Arc::new(catalog)), idle)
            .await
    }

    /// [`end`](Self::end), if `now` holds of its state when it is taken.
    async fn end_if(
        &self,
        starter: &Starter,
        then: MemberState,
        now: impl FnOnce(&MemberState) -> bool,
    ) -> bool {
        // The processes it had when it ended: an idle server may be started
        // anew as soon as it is `Idle`, and the new process is not this end's.
        let (client, mut processes) = {
            let mut state = lock(&self.state);
            if !now(&state) {
                return false;
            }
            let processes = std::mem::take(&mut *lock(&self.processes));
            let client = match &*state {
                MemberState::Ready { client, .. } => Some(client.clone()),
                _ => None,
            };
            // A failed server keeps saying why unless it is closed for good.
            let keep =
                matches!(*state, MemberState::Failed(_)) && matches!(then, MemberState::Closed);
            if !keep {
                *state = then;
            }
            (client, processes)
        };
        self.report(starter);
        // Cancels a start under way and waits for it to be gone.
        drop(lock(&self.start).take());
        self.settled().await;
        if let Some(client) = client {
            let _ = client.close().await;
        }
        // Closed for good (or failed): what a cancelled start spawned is this end's too.
        if !matches!(
            *lock(&self.state),
            MemberState::Idle(_) | MemberState::Starting(_)
        ) {
            processes.append(&mut lock(&self.processes));
        }
        futures::future::join_all(processes.iter().map(Transport::close)).await;
        self.settled.notify(usize::MAX);
        true
    }

    /// Marks the member in use for as long as the guard lives: the idle
    /// timeout counts from the end of the last use, and never ends one under way.
    pub(crate) fn use_now(&self) -> InUse<'_> {
        self.in_use.fetch_add(1, Ordering::SeqCst);
        self.touch();
        InUse(self)
    }

    /// Ends it without waiting, for a group that is dropped: a start under
    /// way is cancelled and every process it has is closed in the background.
    pub(crate) fn abandon(&self) {
        let started = std::mem::replace(&mut *lock(&self.state), MemberState::Closed);
        drop(lock(&self.start).take());
        if let MemberState::Ready { client, .. } = started {
            drop(client.close());
        }
        for process in std::mem::take(&mut *lock(&self.processes)) {
            drop(process.close());
        }
    }

    /// The catalog to serve after an idle close: the last listing.
    pub(crate) async fn last_catalog(&self) -> Option<CachedServer> {
        let client = self.running()?;
        let tools = client.tools().await.ok()?;
        Some(CachedServer::of(&client, &self.cache_key, &tools))
    }
}

/// A use of a member under way ([`Member::use_now`]).
pub(crate) struct InUse<'a>(&'a Member);

impl Drop for InUse<'_> {
    fn drop(&mut self) {
        self.0.touch();
        self.0.in_use.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Held by a start while it runs: its end (done or cancelled) is told.
struct Running(Arc<Member>);

impl Drop for Running {
    fn drop(&mut self) {
        let member = &self.0;
        {
            // Cancelled before it settled: a start that was asked for again
            // finds the member still starting, and the next call restarts it.
            let mut state = lock(&member.state);
            if let MemberState::Starting(served) = &*state {
                *state = match served {
                    Some(entry) => MemberState::Idle(Arc::clone(entry)),
                    None => MemberState::Failed(Error::Protocol(format!(
                        "the start of server {:?} ended before it was ready",
                        member.name()
                    ))),
                };
            }
        }
        member.starting.store(false, Ordering::Release);
        member.settled.notify(usize::MAX);
    }
}
