//! Replacing a file whole: written under a temporary name beside it, synced
//! to the disk, then renamed into place, so a reader sees the old content or
//! the new, never a part (the trust store, the catalog cache).

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::sys;

/// Why a replacement failed: the step, the temporary file, the OS's error.
#[derive(Debug)]
pub(crate) struct ReplaceError {
    /// `"write"` or `"rename into place"`.
    pub(crate) step: &'static str,
    pub(crate) temporary: PathBuf,
    pub(crate) error: io::Error,
}

/// Replaces the file at `path` with `content`; with `private`, the new file
/// is its user's alone (Unix: 0600) from its creation on. The temporary
/// file is gone whatever happens.
pub(crate) fn replace(path: &Path, content: &[u8], private: bool) -> Result<(), ReplaceError> {
    let temporary = temporary_beside(path);
    let fail = |step, error| {
        let _ = std::fs::remove_file(&temporary);
        ReplaceError {
            step,
            temporary: temporary.clone(),
            error,
        }
    };
    let created = if private {
        sys::create_private_file(&temporary)
    } else {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)
    };
    let written = created.and_then(|mut file| {
        file.write_all(content)?;
        // On the disk before the rename: never an empty file in its place.
        file.sync_all()
    });
    written.map_err(|e| fail("write", e))?;
    rename(&temporary, path).map_err(|e| fail("rename into place", e))
}

/// Renames `from` over `to`. Unix replaces a file whoever else renames onto
/// it at once; Windows refuses a rename onto a file another rename is
/// replacing at that moment (access denied), so there it is tried again, a
/// few times, a moment apart.
fn rename(from: &Path, to: &Path) -> io::Result<()> {
    let mut tries = 0;
    loop {
        match std::fs::rename(from, to) {
            Err(error)
                if cfg!(windows)
                    && error.kind() == io::ErrorKind::PermissionDenied
                    && tries < 50 =>
            {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            outcome => return outcome,
        }
    }
}

/// A name beside `path` no other writer, thread or process, uses at once.
fn temporary_beside(path: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mut name = std::ffi::OsString::from(".");
    name.push(path.file_name().unwrap_or_default());
    name.push(format!(
        ".{}.{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    path.with_file_name(name)
}
