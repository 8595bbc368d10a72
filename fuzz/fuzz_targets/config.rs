//! Fuzzes what a stranger's repository now controls: a config file's text,
//! in every shape `Config` reads (JSON or VS Code's JSON with comments, both
//! top-level keys, substitutions). Nothing may panic, and each server's
//! launch fingerprint is the same however often it is taken.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stdio_mcp::config::Config;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(config) = Config::parse(text) else {
        return;
    };
    for server in config.servers() {
        let print = server.fingerprint();
        assert_eq!(print, server.fingerprint());
        assert!(print.changes_since(&print).is_empty());
        let _ = server.builder();
    }
});
