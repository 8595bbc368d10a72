//! The catalog cache: what a group knew of each server at its last listing,
//! kept in a JSON file so that the next run can serve the tools without
//! starting the servers. Read and written off the caller's thread; written
//! to a temporary file first and renamed over the old one, so a crash never
//! leaves a torn file. Whatever cannot be read is ignored: it only means
//! ordinary starts.

use std::collections::BTreeMap;
use std::path::PathBuf;

use futures::channel::oneshot;
use serde::{Deserialize, Serialize};

use crate::client::{Client, Era, Implementation, Tool};

/// What the file says of one server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CachedServer {
    /// A hash of the command line the server was started with (program,
    /// arguments, environment, folder): another one means another server.
    /// (Not the config's launch fingerprint; the file's name for it stays.)
    #[serde(rename = "fingerprint")]
    pub(crate) cache_key: String,
    /// `"modern"` or `"legacy"`.
    pub(crate) era: String,
    pub(crate) protocol_version: String,
    pub(crate) server_info: Implementation,
    pub(crate) tools: Vec<Tool>,
}

impl CachedServer {
    /// What a running server's client knows, with the tools just listed:
    /// only the definitions accepted, when its changes are held (the cache
    /// never takes a held one).
    pub(crate) fn of(client: &Client, cache_key: &str, listed: &[Tool]) -> Self {
        let tools = client.accepted_tools().unwrap_or_else(|| listed.to_vec());
        CachedServer {
            cache_key: cache_key.to_owned(),
            era: client.era().to_string(),
            protocol_version: client.protocol_version().to_owned(),
            server_info: client.server_info().clone(),
            tools,
        }
    }

    /// A server never started and not in the file (a lazy group's): no
    /// tools, no era; never written to the file.
    pub(crate) fn unknown(cache_key: &str) -> Self {
        CachedServer {
            cache_key: cache_key.to_owned(),
            era: String::new(),
            protocol_version: String::new(),
            server_info: Implementation {
                name: String::new(),
                version: String::new(),
                title: None,
                extra: Default::default(),
            },
            tools: Vec::new(),
        }
    }

    /// Whether this is what a server said (not [`unknown`](Self::unknown)).
    pub(crate) fn is_known(&self) -> bool {
        !self.era.is_empty()
    }

    /// The era the server spoke, if the file says one we know.
    pub(crate) fn era(&self) -> Option<Era> {
        match self.era.as_str() {
            "modern" => Some(Era::Modern),
            "legacy" => Some(Era::Legacy),
            _ => None,
        }
    }
}

/// The servers of the file, by name.
pub(crate) type Entries = BTreeMap<String, CachedServer>;

/// The file: a format mark, then the servers.
#[derive(Serialize, Deserialize)]
struct File {
    #[serde(rename = "stdio-mcp catalog")]
    format: u32,
    servers: Entries,
}

const FORMAT: u32 = 1;

/// A command line's key in the catalog cache: FNV-1a over its text, 64 bits in hex, the
/// same in every run.
pub(crate) fn cache_key(command_line: &str) -> String {
    let hash = command_line
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
    format!("{hash:016x}")
}

/// The entries of the file at `path`; none when it is missing or unreadable.
pub(crate) async fn read(path: PathBuf) -> Entries {
    off_thread(move || {
        let text = match std::fs::read(&path) {
            Ok(text) => text,
            Err(_error) => {
                if _error.kind() != std::io::ErrorKind::NotFound {
                    event!(warn, path = %path.display(), error = %_error, "cannot read the catalog cache: starting every server");
                }
                return Entries::new();
            }
        };
        match serde_json::from_slice::<File>(&text) {
            Ok(file) if file.format == FORMAT => file.servers,
            _ => {
                event!(warn, path = %path.display(), "the catalog cache is not one this version wrote: starting every server");
                Entries::new()
            }
        }
    })
    .await
    .unwrap_or_default()
}

/// Writes `servers` to `path` through a temporary file beside it.
pub(crate) async fn write(path: PathBuf, servers: Entries) -> std::io::Result<()> {
    off_thread(move || {
        let text = serde_json::to_vec(&File {
            format: FORMAT,
            servers,
        })
        .map_err(std::io::Error::other)?;
        crate::replace_file::replace(&path, &text, false).map_err(|e| e.error)
    })
    .await
    .unwrap_or_else(|| {
        Err(std::io::Error::other(
            "the catalog cache's writer thread died",
        ))
    })
}

/// Runs blocking file work on a thread of its own, so no executor's thread
/// waits for the disk; `None` if it panicked.
async fn off_thread<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (done, result) = oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("stdio-mcp-catalog".into())
        .spawn(move || {
            let _ = done.send(work());
        });
    match spawned {
        Ok(_) => result.await.ok(),
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_are_stable_and_tell_command_lines_apart() {
        assert_eq!(cache_key(""), "cbf29ce484222325");
        assert_eq!(cache_key("a"), "af63dc4c8601ec8c");
        assert_ne!(cache_key("npx a"), cache_key("npx b"));
    }

    #[test]
    fn a_written_file_reads_back_and_garbage_reads_as_nothing() {
        let dir = std::env::temp_dir().join(format!("stdio-mcp-cache-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("catalog.json");
        let entry = CachedServer {
            cache_key: cache_key("x"),
            era: "legacy".into(),
            protocol_version: "2025-06-18".into(),
            server_info: serde_json::from_value(serde_json::json!({"name": "s", "version": "1"}))
                .unwrap(),
            tools: vec![serde_json::from_value(
                serde_json::json!({"name": "t", "inputSchema": {"type": "object"}}),
            )
            .unwrap()],
        };
        let entries: Entries = [("s".to_owned(), entry)].into();
        futures::executor::block_on(async {
            write(path.clone(), entries.clone()).await.unwrap();
            assert_eq!(read(path.clone()).await, entries);
            std::fs::write(&path, b"{\"stdio-mcp catalog\": 1, \"servers\": ").unwrap();
            assert!(read(path.clone()).await.is_empty());
            std::fs::write(&path, b"{\"stdio-mcp catalog\": 2, \"servers\": {}}").unwrap();
            assert!(read(path.clone()).await.is_empty());
            assert!(read(dir.join("missing.json")).await.is_empty());
        });
        // No temporary file is left beside it.
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(left.len(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
