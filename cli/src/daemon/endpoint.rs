//! Where the daemon listens and how a command reaches it: a Unix socket in a
//! folder only its user can enter, or on Windows a named pipe whose only
//! access rule is for its user. Both carry lines both ways; a connection is
//! a byte stream that can be cloned (one side reads while the other writes).

use std::io;
use std::path::{Path, PathBuf};

/// One connection between a command and the daemon.
#[cfg(unix)]
pub(crate) type Connection = std::os::unix::net::UnixStream;
/// One connection between a command and the daemon: a pipe handle.
#[cfg(windows)]
pub(crate) type Connection = std::fs::File;

/// Reaches the daemon at `address`. `NotFound` or `ConnectionRefused`:
/// nobody listens there.
pub(crate) fn connect(address: &Path) -> io::Result<Connection> {
    #[cfg(unix)]
    return std::os::unix::net::UnixStream::connect(address);
    #[cfg(windows)]
    return pipe::connect(address);
}

/// The daemon's listening end.
pub(crate) struct Listener {
    #[cfg(unix)]
    socket: std::os::unix::net::UnixListener,
    #[cfg(windows)]
    pipe: pipe::Server,
}

impl Listener {
    /// Listens at `address`, which nothing else may hold; only this user may connect.
    pub(crate) fn bind(address: &Path) -> io::Result<Listener> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // Made under another name and renamed into place once it listens:
            // a client that finds the address refused takes the socket for
            // one left behind and removes it, which between bind(2) and
            // listen(2) would take the new one.
            // (A shorter name than the address, in its folder: within a socket's limit.)
            let fresh = address.with_file_name(format!(".n{}", std::process::id()));
            let _ = std::fs::remove_file(&fresh);
            let socket = std::os::unix::net::UnixListener::bind(&fresh)?;
            std::fs::set_permissions(&fresh, std::fs::Permissions::from_mode(0o600))?;
            // A socket left by a daemon that is gone (`start` found nobody there).
            std::fs::rename(&fresh, address)?;
            Ok(Listener { socket })
        }
        #[cfg(windows)]
        Ok(Listener {
            pipe: pipe::Server::bind(address)?,
        })
    }

    /// The next command's connection.
    pub(crate) fn accept(&self) -> io::Result<Connection> {
        #[cfg(unix)]
        return self.socket.accept().map(|(stream, _)| stream);
        #[cfg(windows)]
        return self.pipe.accept();
    }
}

/// Whether an address is still held by a daemon's listener (a Unix socket is
/// a file that outlives its daemon; a pipe is gone with it).
pub(crate) fn left_behind(address: &Path) -> bool {
    cfg!(unix) && address.exists()
}

/// Keeps this process's own standard streams out of the daemon it starts:
/// on Windows every inheritable handle is passed on, and a daemon holding
/// the pipe a script reads this command's output from would keep it open.
pub(crate) fn keep_std_handles_from_children() {
    #[cfg(windows)]
    pipe::keep_std_handles_from_children();
}

/// The name a daemon's address ends with, for a folder and its files' `key`.
pub(crate) fn address_in(dir: &Path, key: u64) -> PathBuf {
    #[cfg(unix)]
    return dir.join(format!("daemon-{key:016x}.sock"));
    #[cfg(windows)]
    {
        let _ = dir;
        let user = std::env::var("USERNAME").unwrap_or_default();
        PathBuf::from(format!(r"\\.\pipe\stdio-mcp-{user}-daemon-{key:016x}"))
    }
}

#[cfg(windows)]
mod pipe {
    //! Named pipes: one instance per connection, made before the last was
    //! handed out, each with an access rule for this user alone.

    use std::ffi::{c_void, OsStr};
    use std::io;
    use std::os::windows::ffi::OsStrExt;
    use std::os::windows::io::{FromRawHandle, OwnedHandle};
    use std::path::Path;
    use std::sync::Mutex;

    use windows_sys::Win32::Foundation::{
        CloseHandle, LocalFree, ERROR_PIPE_BUSY, ERROR_PIPE_CONNECTED, GENERIC_READ, GENERIC_WRITE,
        HANDLE, INVALID_HANDLE_VALUE,
    };
    use windows_sys::Win32::Security::Authorization::{
        ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW,
        SDDL_REVISION_1,
    };
    use windows_sys::Win32::Security::{
        GetTokenInformation, TokenUser, PSECURITY_DESCRIPTOR, SECURITY_ATTRIBUTES, TOKEN_QUERY,
        TOKEN_USER,
    };
    use windows_sys::Win32::Storage::FileSystem::{
        CreateFileW, FILE_FLAG_FIRST_PIPE_INSTANCE, OPEN_EXISTING, PIPE_ACCESS_DUPLEX,
    };
    use windows_sys::Win32::System::Pipes::{
        ConnectNamedPipe, CreateNamedPipeW, WaitNamedPipeW, PIPE_READMODE_BYTE,
        PIPE_REJECT_REMOTE_CLIENTS, PIPE_TYPE_BYTE, PIPE_UNLIMITED_INSTANCES, PIPE_WAIT,
    };
    use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

    pub(super) fn keep_std_handles_from_children() {
        use windows_sys::Win32::Foundation::{SetHandleInformation, HANDLE_FLAG_INHERIT};
        use windows_sys::Win32::System::Console::{
            GetStdHandle, STD_ERROR_HANDLE, STD_INPUT_HANDLE, STD_OUTPUT_HANDLE,
        };
        for which in [STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE] {
            // SAFETY: GetStdHandle takes a constant; a handle it returns is
            // this process's, and only its inherit flag is changed.
            unsafe {
                let handle = GetStdHandle(which);
                if !handle.is_null() && handle != INVALID_HANDLE_VALUE {
                    SetHandleInformation(handle, HANDLE_FLAG_INHERIT, 0);
                }
            }
        }
    }

    /// How long a command waits for a free instance of a busy pipe.
    const BUSY_WAIT_MS: u32 = 1000;

    fn wide(text: &OsStr) -> Vec<u16> {
        text.encode_wide().chain(std::iter::once(0)).collect()
    }

    fn owned(handle: HANDLE) -> io::Result<OwnedHandle> {
        if handle == INVALID_HANDLE_VALUE || handle.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a valid handle just returned to us, owned by nobody else.
        Ok(unsafe { OwnedHandle::from_raw_handle(handle) })
    }

    pub(super) fn connect(address: &Path) -> io::Result<std::fs::File> {
        let name = wide(address.as_os_str());
        for _ in 0..2 {
            // SAFETY: `name` is a NUL-terminated wide string that outlives
            // the call; the other arguments are plain values or null.
            let handle = unsafe {
                CreateFileW(
                    name.as_ptr(),
                    GENERIC_READ | GENERIC_WRITE,
                    0,
                    std::ptr::null(),
                    OPEN_EXISTING,
                    0,
                    std::ptr::null_mut(),
                )
            };
            match owned(handle) {
                Ok(handle) => return Ok(std::fs::File::from(handle)),
                Err(error) if error.raw_os_error() == Some(ERROR_PIPE_BUSY as i32) => {
                    // SAFETY: as above.
                    unsafe { WaitNamedPipeW(name.as_ptr(), BUSY_WAIT_MS) };
                }
                Err(error) => return Err(error),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the daemon's pipe stays busy",
        ))
    }

    /// The listening side: the instance the next command will connect to.
    pub(super) struct Server {
        name: Vec<u16>,
        /// This user's access rule, as a security descriptor (LocalAlloc'd).
        descriptor: usize,
        next: Mutex<Option<OwnedHandle>>,
    }

    impl Server {
        pub(super) fn bind(address: &Path) -> io::Result<Server> {
            let server = Server {
                name: wide(address.as_os_str()),
                descriptor: user_only_descriptor()? as usize,
                next: Mutex::new(None),
            };
            // The first instance fails if another daemon holds the name.
            let first = server.instance(FILE_FLAG_FIRST_PIPE_INSTANCE)?;
            *crate::lock::lock(&server.next) = Some(first);
            Ok(server)
        }

        fn instance(&self, flags: u32) -> io::Result<OwnedHandle> {
            let attributes = SECURITY_ATTRIBUTES {
                nLength: std::mem::size_of::<SECURITY_ATTRIBUTES>() as u32,
                lpSecurityDescriptor: self.descriptor as *mut c_void,
                bInheritHandle: 0,
            };
            // SAFETY: the name is NUL-terminated and lives as long as `self`;
            // `attributes` and its descriptor are valid for the call.
            owned(unsafe {
                CreateNamedPipeW(
                    self.name.as_ptr(),
                    PIPE_ACCESS_DUPLEX | flags,
                    PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT | PIPE_REJECT_REMOTE_CLIENTS,
                    PIPE_UNLIMITED_INSTANCES,
                    64 * 1024,
                    64 * 1024,
                    0,
                    &attributes,
                )
            })
        }

        pub(super) fn accept(&self) -> io::Result<std::fs::File> {
            let current = match crate::lock::lock(&self.next).take() {
                Some(handle) => handle,
                None => self.instance(0)?,
            };
            use std::os::windows::io::AsRawHandle;
            // SAFETY: a pipe instance we own; no overlapped I/O.
            let connected = unsafe {
                ConnectNamedPipe(current.as_raw_handle() as HANDLE, std::ptr::null_mut())
            };
            if connected == 0 {
                let error = io::Error::last_os_error();
                if error.raw_os_error() != Some(ERROR_PIPE_CONNECTED as i32) {
                    return Err(error);
                }
            }
            *crate::lock::lock(&self.next) = self.instance(0).ok();
            Ok(std::fs::File::from(current))
        }
    }

    /// A security descriptor whose one rule gives this process's user all
    /// access, and nobody else any.
    fn user_only_descriptor() -> io::Result<PSECURITY_DESCRIPTOR> {
        let mut token: HANDLE = std::ptr::null_mut();
        // SAFETY: the pseudo-handle of this process; `token` receives a handle we close.
        if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
            return Err(io::Error::last_os_error());
        }
        let mut buffer = vec![0u64; 64];
        let mut length = 0u32;
        // SAFETY: the buffer and its size describe live memory, aligned for TOKEN_USER.
        let asked = unsafe {
            GetTokenInformation(
                token,
                TokenUser,
                buffer.as_mut_ptr().cast(),
                (buffer.len() * 8) as u32,
                &mut length,
            )
        };
        // SAFETY: a handle from OpenProcessToken, closed once.
        unsafe { CloseHandle(token) };
        if asked == 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: GetTokenInformation filled the buffer with a TOKEN_USER.
        let sid = unsafe { (*buffer.as_ptr().cast::<TOKEN_USER>()).User.Sid };
        let mut text: *mut u16 = std::ptr::null_mut();
        // SAFETY: a valid SID; `text` receives a LocalAlloc'd string freed below.
        if unsafe { ConvertSidToStringSidW(sid, &mut text) } == 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a NUL-terminated string from ConvertSidToStringSidW.
        let sid_text = unsafe {
            let len = (0..).take_while(|&i| *text.add(i) != 0).count();
            String::from_utf16_lossy(std::slice::from_raw_parts(text, len))
        };
        // SAFETY: allocated by ConvertSidToStringSidW, freed once.
        unsafe { LocalFree(text.cast()) };
        let sddl = wide(OsStr::new(&format!("D:P(A;;GA;;;{sid_text})")));
        let mut descriptor: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
        // SAFETY: `sddl` is NUL-terminated; `descriptor` receives memory kept
        // for the daemon's life.
        let made = unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                sddl.as_ptr(),
                SDDL_REVISION_1,
                &mut descriptor,
                std::ptr::null_mut(),
            )
        };
        if made == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(descriptor)
    }
}
