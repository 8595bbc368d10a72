//! A transport builder's sandbox: the rules it is given, and the command
//! that starts the server confined by them.

use std::ffi::OsString;

use crate::error::Error;
use crate::sandbox::{Sandbox, Scratch};

use super::TransportBuilder;

impl TransportBuilder {
    /// Runs the server confined by `sandbox` (see [`crate::sandbox`]): what
    /// it may write and read, whether it reaches the network; the same for
    /// everything it starts. Linux (bubblewrap) and macOS (`sandbox-exec`);
    /// elsewhere, or without bubblewrap, [`spawn`](Self::spawn) fails with
    /// an [`Error::Start`] saying why: a sandboxed server never runs
    /// unconfined. A server that exits says `in its sandbox` in its exit
    /// error, beside its own last words (a denied write's path, say).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use stdio_mcp::sandbox::Sandbox;
    ///
    /// let transport = stdio_mcp::Transport::builder(["uvx", "mcp-server-time"])
    ///     .sandbox(Sandbox::new().allow_write("~/.cache/uv"))
    ///     .spawn()?;
    /// # Ok::<(), stdio_mcp::Error>(())
    /// ```
    pub fn sandbox(mut self, sandbox: Sandbox) -> Self {
        self.sandbox = Some(sandbox);
        self
    }

    /// The command that starts `resolved` with the builder's arguments,
    /// confined when the builder has a sandbox (with its private folder).
    pub(super) fn command_for(
        &self,
        resolved: &OsString,
        program: &str,
    ) -> Result<(std::process::Command, Option<Scratch>), Error> {
        let Some(sandbox) = &self.sandbox else {
            let mut command = std::process::Command::new(resolved);
            command.args(&self.command[1..]);
            return Ok((command, None));
        };
        let argv: Vec<OsString> = std::iter::once(resolved.clone())
            .chain(self.command[1..].iter().cloned())
            .collect();
        match crate::sandbox::confine(sandbox, &argv, self.cwd.as_deref()) {
            Ok((command, scratch)) => Ok((command, Some(scratch))),
            Err(reason) => Err(Error::Start {
                program: program.to_owned(),
                reason: format!("sandbox: {reason}"),
            }),
        }
    }
}
