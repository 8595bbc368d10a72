//! The integration tests that share one process: every area of the
//! transport, the client, config files and groups, each a module, against
//! real child processes (the test peer and the demo server). The tests that
//! count threads or scan the process table, need third-party servers or a
//! feature, are binaries of their own beside this one (`tests/*.rs`).

#[path = "../common/mod.rs"]
mod common;

mod asks;
mod call_options;
mod cancel_timeout;
mod catalog;
mod chaos;
mod client;
mod config;
mod conformance;
mod connect;
mod era;
mod executors;
mod first_connect;
mod group;
mod group_cache;
mod group_runtime;
mod host_client;
mod lifecycle;
mod listen;
mod platform;
mod requests;
mod restart;
mod sandbox;
mod sandbox_ways_out;
mod tasks;
mod tool_guard;
mod tool_hints;
mod typed_handlers;
