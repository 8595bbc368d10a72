//! The close ladder: stdin's end, then SIGTERM, then SIGKILL, each a step
//! later, to the child or its process group; and after the leader's exit,
//! what is left of its group.

use std::task::{Context, Poll};
use std::time::Instant;

use async_io::Timer;
use futures::FutureExt;

use crate::error::Error;

use super::{ChildIo, Rung, Stage, GROUP_CHECK, LADDER_STEP};

impl ChildIo {
    pub(super) fn start_close(&mut self) {
        if let Stage::Running { .. } = self.stage {
            event!(
                info,
                "closing the MCP server: its input ends once the queue is written"
            );
            self.stage = Stage::Closing {
                next: Rung::Term,
                timer: Timer::after(LADDER_STEP),
            };
        }
    }

    pub(super) fn climb_ladder(&mut self, cx: &mut Context<'_>) {
        // A server that asks something after its input ended waits for an
        // answer that cannot come: it will not exit by itself, so it gets no
        // more of the EOF step.
        let stranded = self.stdin.is_none() && self.router.take_asked();
        let Stage::Closing { next, timer } = &mut self.stage else {
            return;
        };
        let hastened = stranded && *next == Rung::Term;
        if hastened {
            event!(
                info,
                "MCP server asked something after its input ended: it cannot be answered"
            );
        }
        if *next == Rung::Done || !hastened && timer.poll_unpin(cx).is_pending() {
            return;
        }
        match *next {
            Rung::Term => {
                *next = Rung::Kill;
                timer.set_after(LADDER_STEP);
                // Register the timer's new deadline.
                let _ = timer.poll_unpin(cx);
                if !hastened {
                    event!(
                        warn,
                        "MCP server still runs 2 s after its input ended: terminating it"
                    );
                }
                // Whatever was not written by now will not be.
                self.close_stdin();
                self.terminated_at = Some(Instant::now());
                self.child.terminate();
            }
            Rung::Kill => {
                event!(warn, "MCP server still runs 2 s after SIGTERM: killing it");
                *next = Rung::Done;
                self.child.kill();
            }
            Rung::Done => {}
        }
    }

    /// Settles the run once the exit is known and the pipes are drained (or the
    /// grace after the exit ran out), and what is left of the child's group
    /// has ended; handles stdout ending while the child runs.
    pub(super) fn poll_grace(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        match &mut self.stage {
            Stage::Exited { grace } => {
                let drained = self.stdout.is_none() && self.stderr.is_none();
                let grace_over = grace.as_mut().is_some_and(|t| t.poll_unpin(cx).is_ready());
                if !drained && !grace_over {
                    return Poll::Pending;
                }
                if !drained {
                    event!(warn, "MCP server exited but its pipes are still open: ending what is left of its group");
                    // The child is gone but something still holds its pipes: what
                    // is left of its group or job (a server behind a wrapper) goes too.
                    self.child.kill_rest();
                } else if self.child.group_lingers() {
                    // Members that hold none of our pipes: they get the rest of
                    // the ladder, so the group never outlives its leader.
                    self.fail_waiting();
                    self.end_group(cx);
                    return Poll::Pending;
                }
                self.finish();
                Poll::Ready(())
            }
            Stage::Ending { kill, check } => {
                if kill.poll_unpin(cx).is_ready() {
                    event!(
                        warn,
                        "MCP server's group still runs 2 s after SIGTERM: killing it"
                    );
                    self.child.kill_rest();
                } else if self.child.group_lingers() {
                    while check.poll_unpin(cx).is_ready() {}
                    return Poll::Pending;
                }
                self.finish();
                Poll::Ready(())
            }
            Stage::Running { eof: Some(timer) } => {
                if timer.poll_unpin(cx).is_ready() {
                    event!(
                        warn,
                        "MCP server closed its stdout while running: closing it"
                    );
                    // Stdout ended and the child still runs: nothing can answer any more.
                    self.fail_pending(Error::StdoutClosed);
                    self.start_close();
                    self.climb_ladder(cx);
                }
                Poll::Pending
            }
            _ => Poll::Pending,
        }
    }

    /// The leader exited and members of its group still run: SIGTERM to the
    /// group unless the ladder sent it already, and SIGKILL 2 s after it.
    pub(super) fn end_group(&mut self, cx: &mut Context<'_>) {
        let terminated = *self.terminated_at.get_or_insert_with(|| {
            event!(
                warn,
                "MCP server exited, members of its group still run: terminating them"
            );
            self.child.terminate_rest();
            Instant::now()
        });
        self.stage = Stage::Ending {
            kill: Timer::at(terminated + LADDER_STEP),
            check: Timer::interval(GROUP_CHECK),
        };
        // Registers both timers.
        let _ = self.poll_grace(cx);
    }
}
