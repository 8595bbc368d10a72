//! How much of the machine a sandboxed server may take: what it may write
//! to `/dev/shm` and to its private `TMPDIR` (each a memory-backed folder of
//! that size), the largest file it may write anywhere, and how many
//! processes it may run. Linux enforces all four; macOS none (Seatbelt
//! has no such rules): docs/sandbox.md.

/// The bounds of a sandboxed server (see [`crate::sandbox`]); the defaults
/// leave room for any real server and none for filling the machine.
///
/// # Examples
///
/// ```
/// use stdio_mcp::sandbox::{Limits, Sandbox};
///
/// let limits = Limits::default().tmp_bytes(2 << 30).processes(64);
/// assert_eq!(limits.tmp(), 2 << 30);
/// assert_eq!(limits.shm(), 64 << 20);
/// let sandbox = Sandbox::new().limits(limits);
/// assert_eq!(sandbox.resource_limits(), &limits);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Limits {
    shm: u64,
    tmp: u64,
    file: u64,
    processes: u64,
}

impl Default for Limits {
    /// 64 MiB of `/dev/shm`, 512 MiB of `TMPDIR`, files of at most 4 GiB,
    /// 1024 processes.
    fn default() -> Self {
        Limits {
            shm: 64 << 20,
            tmp: 512 << 20,
            file: 4 << 30,
            processes: 1024,
        }
    }
}

impl Limits {
    /// The size of its `/dev/shm`, in bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// let limits = stdio_mcp::sandbox::Limits::default().shm_bytes(16 << 20);
    /// assert_eq!(limits.shm(), 16 << 20);
    /// ```
    #[must_use]
    pub fn shm_bytes(mut self, bytes: u64) -> Self {
        self.shm = bytes;
        self
    }

    /// The size of its private `TMPDIR`, in bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// let limits = stdio_mcp::sandbox::Limits::default().tmp_bytes(1 << 30);
    /// assert_eq!(limits.tmp(), 1 << 30);
    /// ```
    #[must_use]
    pub fn tmp_bytes(mut self, bytes: u64) -> Self {
        self.tmp = bytes;
        self
    }

    /// The largest file it may write, in bytes (a larger write fails with
    /// `EFBIG`, or ends the writer with `SIGXFSZ`).
    ///
    /// # Examples
    ///
    /// ```
    /// let limits = stdio_mcp::sandbox::Limits::default().file_bytes(1 << 30);
    /// assert_eq!(limits.file(), 1 << 30);
    /// ```
    #[must_use]
    pub fn file_bytes(mut self, bytes: u64) -> Self {
        self.file = bytes;
        self
    }

    /// How many processes it may run at once, itself included, beyond
    /// those its user already runs when it starts. The kernel does not
    /// count for root, so a server run as root is not bounded by it.
    ///
    /// # Examples
    ///
    /// ```
    /// let limits = stdio_mcp::sandbox::Limits::default().processes(32);
    /// assert_eq!(limits.process_count(), 32);
    /// ```
    #[must_use]
    pub fn processes(mut self, count: u64) -> Self {
        self.processes = count;
        self
    }

    /// The size of its `/dev/shm`.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(stdio_mcp::sandbox::Limits::default().shm(), 64 << 20);
    /// ```
    #[must_use]
    pub fn shm(&self) -> u64 {
        self.shm
    }

    /// The size of its `TMPDIR`.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(stdio_mcp::sandbox::Limits::default().tmp(), 512 << 20);
    /// ```
    #[must_use]
    pub fn tmp(&self) -> u64 {
        self.tmp
    }

    /// The largest file it may write.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(stdio_mcp::sandbox::Limits::default().file(), 4 << 30);
    /// ```
    #[must_use]
    pub fn file(&self) -> u64 {
        self.file
    }

    /// How many processes it may run.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(stdio_mcp::sandbox::Limits::default().process_count(), 1024);
    /// ```
    #[must_use]
    pub fn process_count(&self) -> u64 {
        self.processes
    }
}
