//! Fuzzes the trust store's file: any text is a store or an error naming
//! the file, never a panic, and a store read back from its own text is the
//! same store.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stdio_mcp::config::{Config, TrustStore};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let store = match TrustStore::from_text("trust.json", text) {
        Ok(store) => store,
        Err(error) => {
            assert!(error.to_string().starts_with("trust store trust.json: "));
            return;
        }
    };
    assert_eq!(TrustStore::from_text("trust.json", &store.to_text()).as_ref(), Ok(&store));
    let config = Config::parse(r#"{"mcpServers": {"demo": {"command": "demo"}}}"#).unwrap();
    let _ = store.state(std::path::Path::new("/repo/.mcp.json"), &config.servers()[0]);
});
