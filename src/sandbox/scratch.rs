//! A sandboxed server's private temporary folder: made before it starts,
//! only its user may enter it, removed with everything in it once the
//! server is gone.

use std::path::{Path, PathBuf};

/// Removes its folder when dropped (with the child that used it).
#[derive(Debug)]
pub(crate) struct Scratch(PathBuf);

impl Scratch {
    /// A new folder under the system's temporary folder.
    #[cfg_attr(not(any(target_os = "linux", target_os = "macos")), allow(dead_code))]
    pub(crate) fn make() -> Result<Self, String> {
        let base = std::env::temp_dir();
        for attempt in 0..16u32 {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let name = format!("stdio-mcp-{}-{nanos:x}-{attempt}", std::process::id());
            let path = base.join(name);
            match crate::sys::create_new_private_dir(&path) {
                Ok(()) => return Ok(Scratch(path)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(format!(
                        "cannot make its temporary folder in {}: {e}",
                        base.display()
                    ))
                }
            }
        }
        Err(format!(
            "cannot make its temporary folder in {}: every name was taken",
            base.display()
        ))
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
