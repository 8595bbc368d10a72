//! Managing the servers of a running group: restart or stop one, reload the
//! configuration (only what changed is touched), and close servers that
//! have been idle too long.

use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::config::Config;
use crate::error::Error;

use super::member::{Member, MemberState};
use super::{lock, runtime, Core, Group};

/// What [`Group::reload`] did to one server.
///
/// ```no_run
/// # futures::executor::block_on(async {
/// use stdio_mcp::config::Config;
/// use stdio_mcp::group::{Group, Reloaded};
///
/// let group = Group::builder(Config::load(".mcp.json")?).connect().await;
/// for (server, done) in group.reload(Config::load(".mcp.json")?).await {
///     if done != Reloaded::Kept {
///         println!("{server}: {done:?}");
///     }
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(()) });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reloaded {
    /// New in the configuration: started.
    Added,
    /// Gone from the configuration: closed, and no longer among the servers.
    Removed,
    /// Its entry changed (command, arguments, environment, folder, tool
    /// filters): closed and started again with the new one.
    Restarted,
    /// Unchanged: left running as it was.
    Kept,
}

impl Group {
    /// Closes the server named `name` (whatever its state: failed, closed
    /// and idle ones too) and starts it again; resolves when the new one is
    /// ready or failed, after the old processes have exited.
    ///
    /// # Errors
    ///
    /// When there is no such server (naming those there are), its entry
    /// could not be read (its config error), or the new start fails.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let group = stdio_mcp::group::Group::builder(stdio_mcp::config::Config::load(".mcp.json")?).connect().await;
    /// group.restart("time").await?;
    /// # Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    pub async fn restart(&self, name: &str) -> Result<(), Error> {
        let member = self.member(name)?;
        let starter = &self.inner.starter;
        member.end(starter, MemberState::Closed).await;
        member.begin_start(starter, true);
        member.client(starter).await.map(drop)
    }

    /// Closes the server named `name`: it is `Closed`, its tools leave
    /// [`tools`](Self::tools), and calls to it fail until
    /// [`restart`](Self::restart) brings it back. Resolves when its
    /// processes have exited.
    ///
    /// # Errors
    ///
    /// When there is no such server (naming those there are) or its entry
    /// could not be read.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// let group = stdio_mcp::group::Group::builder(stdio_mcp::config::Config::load(".mcp.json")?).connect().await;
    /// group.stop("time").await?;
    /// # Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    pub async fn stop(&self, name: &str) -> Result<(), Error> {
        let member = self.member(name)?;
        member.end(&self.inner.starter, MemberState::Closed).await;
        Ok(())
    }

    /// Takes `config` as the group's configuration: servers it adds start,
    /// servers it removes close and leave [`servers`](Self::servers),
    /// servers whose entry changed start again, and the rest are not
    /// touched. Entries that cannot be read fail alone. Resolves when the
    /// closed processes have exited and the new servers are ready, failed,
    /// or past the group's `ready_within`; says what it did to each server.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use stdio_mcp::config::Config;
    ///
    /// let group = stdio_mcp::group::Group::builder(Config::load(".mcp.json")?).connect().await;
    /// // The file changed on disk: read it again. A file that cannot be
    /// // read leaves the running group as it is.
    /// let config = Config::load(".mcp.json")?;
    /// println!("{:?}", group.reload(config).await);
    /// # Ok::<(), Box<dyn std::error::Error>>(()) });
    /// ```
    pub async fn reload(&self, config: Config) -> Vec<(String, Reloaded)> {
        let starter = &self.inner.starter;
        let old = self.members();
        let mut next: Vec<Arc<Member>> = Vec::new();
        let mut done = Vec::new();
        let mut ending = Vec::new();
        let mut starting = Vec::new();
        for server in config.servers() {
            // The same entry is the same command line: the group's hooks are fixed.
            match old.iter().find(|m| m.name() == server.name) {
                Some(member) if member.config == *server => {
                    next.push(Arc::clone(member));
                    done.push((server.name.clone(), Reloaded::Kept));
                }
                found => {
                    if let Some(member) = found {
                        ending.push(Arc::clone(member));
                    }
                    let cache_key = starter.cache_key(server);
                    let member =
                        Member::new(server.clone(), cache_key, MemberState::Starting(None));
                    next.push(Arc::clone(&member));
                    starting.push(member);
                    let what = if found.is_some() {
                        Reloaded::Restarted
                    } else {
                        Reloaded::Added
                    };
                    done.push((server.name.clone(), what));
                }
            }
        }
        for member in &old {
            if !next.iter().any(|m| m.name() == member.name()) {
                ending.push(Arc::clone(member));
                done.push((member.name().to_owned(), Reloaded::Removed));
            }
        }
        // The old go first: a changed server never runs twice at once.
        futures::future::join_all(ending.iter().map(|m| m.end(starter, MemberState::Closed))).await;
        *lock(&self.inner.members) = next;
        *lock(&self.inner.errors) = config.errors().to_vec();
        for member in &starting {
            member.report(starter);
            member.begin_start(starter, true);
        }
        let within = self.inner.ready_within;
        let settling = futures::future::join_all(starting.iter().map(|m| m.settled()));
        futures::future::select(std::pin::pin!(settling), async_io::Timer::after(within)).await;
        done.sort_by(|a, b| a.0.cmp(&b.0));
        done
    }
}

/// Closes the servers of `group` unused for `limit` to `Idle`, checking a
/// few times per limit, for as long as the group lives.
pub(super) fn close_idle_servers(group: Weak<Core>, limit: Duration) {
    let every = (limit / 4).clamp(Duration::from_millis(10), Duration::from_secs(5));
    runtime::spawn(async move {
        loop {
            async_io::Timer::after(every).await;
            let Some(shared) = group.upgrade() else {
                return;
            };
            let group = Group { inner: shared };
            for member in group.members() {
                if member.running().is_none() || member.idle_since().elapsed() < limit {
                    continue;
                }
                // Its tools stay listed, from its last listing.
                if let Some(entry) = member.last_catalog().await {
                    member.close_idle(&group.inner.starter, limit, entry).await;
                }
            }
        }
    });
}
