//! Windows: a Job Object for the child's whole tree, which it is in before
//! its first instruction; `PATHEXT` lookup; no console window.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::os::windows::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use windows_sys::Win32::Foundation::{CloseHandle, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, Thread32First, Thread32Next, TH32CS_SNAPTHREAD, THREADENTRY32,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectBasicAccountingInformation,
    JobObjectExtendedLimitInformation, QueryInformationJobObject, SetInformationJobObject,
    TerminateJobObject, JOBOBJECT_BASIC_ACCOUNTING_INFORMATION,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};
use windows_sys::Win32::System::Threading::{
    OpenThread, ResumeThread, TerminateProcess, CREATE_NO_WINDOW, CREATE_SUSPENDED,
    THREAD_SUSPEND_RESUME,
};

use super::Options;

/// What `TerminateProcess` and `TerminateJobObject` leave as the exit code.
const KILLED_EXIT_CODE: u32 = 1;

/// Prepares `command`: a server is a background program, so no console window
/// flashes up for it. A child that gets a Job Object starts suspended, and
/// runs once inside it ([`Stopper::new`]): what it starts at once (a `.cmd`
/// shim's `node`) cannot be outside.
pub(crate) fn configure(command: &mut Command, options: Options) -> Result<Watched, String> {
    let mut flags = CREATE_NO_WINDOW;
    if gets_job(options) {
        flags |= CREATE_SUSPENDED;
    }
    command.creation_flags(flags);
    Ok(Watched)
}

/// Whether a child started with `options` is put in a Job Object.
fn gets_job(options: Options) -> bool {
    options.process_group || options.kill_on_parent_death
}

/// Windows needs no watchdog: a Job Object with kill-on-close ends with the
/// last handle on it, which this process holds.
#[derive(Debug)]
pub(crate) struct Watched;

/// Looks a bare program name up in `path` (the child's `PATH`, else ours) with
/// each extension of `PATHEXT`, as a shell does, so `npx` finds `npx.cmd`; std
/// alone would look for `npx.exe` only. A name with a directory, or one found
/// nowhere, is left as it is.
pub(crate) fn resolve_program(program: &OsStr, path: Option<&OsStr>) -> OsString {
    let as_path = Path::new(program);
    if as_path.components().count() != 1 || as_path.is_absolute() {
        return program.to_os_string();
    }
    let extensions = path_extensions();
    let has_known_extension = as_path
        .extension()
        .map(|e| {
            let e = format!(".{}", e.to_string_lossy());
            extensions
                .iter()
                .any(|known| known.eq_ignore_ascii_case(&e))
        })
        .unwrap_or(false);
    let search = path
        .map(OsStr::to_os_string)
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_default();
    for dir in std::env::split_paths(&search) {
        let candidates: Vec<PathBuf> = if has_known_extension {
            vec![dir.join(program)]
        } else {
            extensions
                .iter()
                .map(|ext| {
                    let mut name = program.to_os_string();
                    name.push(ext);
                    dir.join(name)
                })
                .collect()
        };
        if let Some(found) = candidates.into_iter().find(|c| c.is_file()) {
            return found.into_os_string();
        }
    }
    program.to_os_string()
}

fn path_extensions() -> Vec<String> {
    let listed = std::env::var("PATHEXT").unwrap_or_default();
    let listed: Vec<String> = listed
        .split(';')
        .filter(|e| e.starts_with('.') && e.len() > 1)
        .map(str::to_owned)
        .collect();
    if listed.is_empty() {
        [".COM", ".EXE", ".BAT", ".CMD"].map(String::from).to_vec()
    } else {
        listed
    }
}

/// std refuses batch-file arguments it cannot quote safely for `cmd.exe`
/// (`InvalidInput`); say so rather than a bare "invalid input".
pub(crate) fn explain_spawn_error(error: &io::Error, program: &Path) -> Option<String> {
    let batch = program
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("bat") || e.eq_ignore_ascii_case("cmd"));
    (batch && error.kind() == io::ErrorKind::InvalidInput).then(|| {
        format!(
            "an argument cannot be passed safely to the batch file {} ({error})",
            program.display()
        )
    })
}

/// Stops a started child: `TerminateProcess`, or with `process_group`
/// `TerminateJobObject` for its whole tree. With `kill_on_parent_death` the
/// tree's Job Object ends with this process (kill-on-close).
#[derive(Debug)]
pub(crate) struct Stopper {
    job: Option<OwnedHandle>,
    /// The ladder ends the whole job, not the child alone.
    group: bool,
}

/// Jobs of children started without `process_group` whose trees outlived
/// them: kept open so they still end with this process, and closed once
/// empty (looked at whenever another is kept).
static KEPT_JOBS: std::sync::Mutex<Vec<OwnedHandle>> = std::sync::Mutex::new(Vec::new());

impl Stopper {
    pub(crate) fn new(
        child: &async_process::Child,
        options: Options,
        _watched: Watched,
    ) -> io::Result<Self> {
        let group = options.process_group;
        if !gets_job(options) {
            return Ok(Stopper { job: None, group });
        }
        // Started suspended: it runs once in its job, or not at all.
        let job = job_for(child, options).and_then(|job| {
            resume(child.id())?;
            Ok(job)
        });
        match job {
            Ok(job) => Ok(Stopper {
                job: Some(job),
                group,
            }),
            Err(error) => {
                // SAFETY: the child's handle lives as long as `child`.
                unsafe { TerminateProcess(child.as_raw_handle(), KILLED_EXIT_CODE) };
                Err(error)
            }
        }
    }

    /// Windows has no polite signal for a console-less child: the ladder's
    /// second step is already the end.
    pub(crate) fn terminate(&self, child: &mut async_process::Child) {
        self.kill(child);
    }

    pub(crate) fn kill(&self, child: &mut async_process::Child) {
        if self.group {
            self.kill_rest();
        } else {
            let _ = child.kill();
        }
    }

    /// The child was reaped: its job still holds what it started.
    pub(crate) fn reaped(&mut self) {}

    /// Ends every process left in the child's job, with `process_group`.
    pub(crate) fn kill_rest(&self) {
        if let Some(job) = self.job.as_ref().filter(|_| self.group) {
            // SAFETY: the job handle is ours and valid.
            unsafe {
                TerminateJobObject(job.as_raw_handle(), KILLED_EXIT_CODE);
            }
        }
    }

    /// After the child's own exit: Windows has no polite step, so this ends
    /// what is left of its job too.
    pub(crate) fn terminate_rest(&self) {
        self.kill_rest();
    }

    /// After the child's own exit: whether its job still has a running process.
    /// The job handle is ours, so it can never name anything else.
    pub(crate) fn group_lingers(&self) -> bool {
        match self.job.as_ref().filter(|_| self.group) {
            Some(job) => job_busy(job),
            None => false,
        }
    }
}

/// A Job Object holding `child`: killing its tree on the last handle's
/// close with `kill_on_parent_death`.
fn job_for(child: &async_process::Child, options: Options) -> io::Result<OwnedHandle> {
    // SAFETY: both pointers may be null (default security, no name); a
    // non-null result is a new handle that we own.
    let raw = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
    if raw.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a valid handle nobody else owns.
    let job = unsafe { OwnedHandle::from_raw_handle(raw) };
    if options.kill_on_parent_death {
        let mut limits = JOBOBJECT_EXTENDED_LIMIT_INFORMATION::default();
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: the pointer and size describe `limits`, a live struct of
        // the type the information class names.
        let set = unsafe {
            SetInformationJobObject(
                job.as_raw_handle(),
                JobObjectExtendedLimitInformation,
                (&raw const limits).cast(),
                std::mem::size_of_val(&limits) as u32,
            )
        };
        if set == 0 {
            return Err(io::Error::last_os_error());
        }
    }
    // SAFETY: both handles are valid for the call: the job is ours and the
    // child's handle lives as long as `child`.
    if unsafe { AssignProcessToJobObject(job.as_raw_handle(), child.as_raw_handle()) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(job)
}

/// Lets the child `pid`, started suspended, run: its one thread resumed
/// (std keeps no handle on it; a snapshot of the system's threads finds it).
fn resume(pid: u32) -> io::Result<()> {
    // SAFETY: a snapshot of every thread; checked, and closed below.
    let snapshot = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
    if snapshot == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `snapshot` is a handle we own, closed once when this drops.
    let snapshot = unsafe { OwnedHandle::from_raw_handle(snapshot) };
    let mut entry = THREADENTRY32 {
        dwSize: std::mem::size_of::<THREADENTRY32>() as u32,
        ..Default::default()
    };
    let mut resumed = 0;
    // SAFETY: the snapshot is valid and `entry` a live struct whose size is set.
    let mut more = unsafe { Thread32First(snapshot.as_raw_handle(), &raw mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: plain values; a non-null handle is ours, closed below.
            let thread = unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID) };
            if thread.is_null() {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: `thread` is a valid handle with THREAD_SUSPEND_RESUME.
            let count = unsafe { ResumeThread(thread) };
            // SAFETY: `thread` came from OpenThread and is closed once.
            unsafe { CloseHandle(thread) };
            if count == u32::MAX {
                return Err(io::Error::last_os_error());
            }
            resumed += 1;
        }
        // SAFETY: as for Thread32First.
        more = unsafe { Thread32Next(snapshot.as_raw_handle(), &raw mut entry) } != 0;
    }
    if resumed == 0 {
        return Err(io::Error::other(format!(
            "the suspended child {pid} has no thread to resume"
        )));
    }
    Ok(())
}

impl Drop for Stopper {
    fn drop(&mut self) {
        // Without `process_group` what the child left runs on; with
        // `kill_on_parent_death` it must still end with this process.
        let Some(job) = self.job.take().filter(|job| !self.group && job_busy(job)) else {
            return;
        };
        let mut kept = crate::lock::lock(&KEPT_JOBS);
        kept.retain(job_busy);
        kept.push(job);
    }
}

/// Whether a job still has a running process.
fn job_busy(job: &OwnedHandle) -> bool {
    let mut info = JOBOBJECT_BASIC_ACCOUNTING_INFORMATION::default();
    // SAFETY: the pointer and size describe `info`, a live struct of the type
    // the information class names; the length pointer may be null.
    let asked = unsafe {
        QueryInformationJobObject(
            job.as_raw_handle(),
            JobObjectBasicAccountingInformation,
            (&raw mut info).cast(),
            std::mem::size_of_val(&info) as u32,
            std::ptr::null_mut(),
        )
    };
    // A job that cannot be asked is taken as still busy: the ladder's last
    // step then ends it, a bounded wait.
    asked == 0 || info.ActiveProcesses > 0
}

/// Windows' pipes are written by a thread of async-process's (they cannot be
/// made non-blocking): a caller never writes its own line, the driver does.
#[derive(Debug)]
pub(crate) enum DirectWriter {}

impl DirectWriter {
    pub(crate) fn of<T>(_stdin: &T) -> Option<Self> {
        None
    }

    pub(crate) fn write_now(&self, _bytes: &[u8]) -> usize {
        match *self {}
    }

    pub(crate) fn unread(&self) -> Option<usize> {
        match *self {}
    }
}

/// Makes `dir` and its missing parents; they inherit the ACL of the user's
/// profile folder they are made in.
pub(crate) fn create_private_dir(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// Creates `dir`, which must not exist; it inherits its folder's ACL.
#[allow(dead_code)] // no sandbox on Windows
pub(crate) fn create_new_private_dir(dir: &Path) -> io::Result<()> {
    std::fs::create_dir(dir)
}

/// Creates `file`, which must not exist; it inherits its folder's ACL.
pub(crate) fn create_private_file(file: &Path) -> io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(file)
}

/// Where the user's data lives: `%APPDATA%` (the roaming profile folder).
pub(crate) fn user_data_dir() -> Option<PathBuf> {
    std::env::var_os("APPDATA")
        .map(PathBuf::from)
        .filter(|d| d.is_absolute())
}
