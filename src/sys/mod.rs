//! Everything that differs between operating systems, and every OS call the
//! crate makes: how a command is prepared, how a started child and what it
//! starts in turn are stopped, and where a bare program name is looked up.
//!
//! Each platform module offers the same items: [`configure`], [`resolve_program`],
//! [`explain_spawn_error`] and [`Stopper`] (made by `Stopper::new`, with
//! `terminate`, `kill` and `kill_rest`).

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub(crate) use unix::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub(crate) use windows::*;

#[cfg(not(any(unix, windows)))]
compile_error!("stdio-mcp supports Unix (Linux, macOS, the BSDs) and Windows");

/// What a platform is asked to arrange around the child.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Options {
    /// The child and everything it starts are stopped together.
    pub(crate) process_group: bool,
    /// The child dies with this process.
    pub(crate) kill_on_parent_death: bool,
}
