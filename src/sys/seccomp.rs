//! Linux: the system calls a sandboxed server is refused, as seccomp
//! programs that bubblewrap loads just before it starts the server (built
//! with rust-vmm's `seccompiler`, not written by hand). What the mount and
//! namespace rules cannot stop is stopped here:
//!
//! - a Unix-domain socket made to reach something outside (a session bus, an
//!   agent, `docker.sock`): `socket` only for the Internet families and
//!   netlink; no datagram `socketpair` (its end could send to any path);
//!   io_uring, which makes sockets without `socket`;
//! - the user's keys: the keyring calls;
//! - a setuid or setgid file left for someone to run later: no such mode in
//!   `chmod`, nor in a file made by `open`, `creat` or `mknod`;
//! - keystrokes pushed into a terminal (`TIOCSTI`, `TIOCLINUX`);
//! - with a bubblewrap too old for `--disable-userns`, a user namespace of
//!   its own (where it would have every capability again).
//!
//! A program is refused with `EPERM`, or `ENOSYS` where a caller should take
//! another way (io_uring, `openat2`, `clone3`). A system call of another
//! architecture (a 32-bit program on x86_64) kills the process: its numbers
//! would pass the filter unread.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// What the programs refuse beyond what every sandbox refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Options {
    /// Unix-domain sockets of every kind allowed (`allowAllUnixSockets`).
    pub(crate) unix_sockets: bool,
    /// New user namespaces refused here: bubblewrap cannot (`--disable-userns`).
    pub(crate) no_user_namespaces: bool,
}

/// The programs to hand bubblewrap, each as the bytes `--add-seccomp-fd`
/// reads; `Err` on an architecture they are not written for.
pub(crate) fn programs(options: Options) -> Result<Vec<Vec<u8>>, String> {
    let arch = match std::env::consts::ARCH {
        "x86_64" => TargetArch::x86_64,
        "aarch64" => TargetArch::aarch64,
        other => {
            return Err(format!(
                "its system-call filter is written for x86_64 and aarch64, not {other}, \
                 so it is not started"
            ))
        }
    };
    let mut out = Vec::new();
    for (rules, errno) in [
        (refused(options), libc::EPERM),
        (absent(options), libc::ENOSYS),
    ] {
        let filter = SeccompFilter::new(
            with_x32(rules),
            SeccompAction::Allow,
            SeccompAction::Errno(errno as u32),
            arch,
        )
        .map_err(|e| format!("its system-call filter: {e}"))?;
        let program: BpfProgram = filter
            .try_into()
            .map_err(|e| format!("its system-call filter: {e}"))?;
        out.push(bytes(&program));
    }
    Ok(out)
}

type Rules = BTreeMap<i64, Vec<SeccompRule>>;

/// Refused with `EPERM`: a rule list matches when any of its rules does (a
/// rule when all its conditions do); an empty list matches every call.
fn refused(options: Options) -> Rules {
    let mut rules = Rules::new();
    if !options.unix_sockets {
        // socket(domain, ..): any family but these.
        let other_family = [libc::AF_INET, libc::AF_INET6, libc::AF_NETLINK]
            .into_iter()
            .map(|family| arg(0, SeccompCmpOp::Ne, family as u64))
            .collect();
        rules.insert(libc::SYS_socket, vec![rule(other_family)]);
        // socketpair(domain, type, ..): a datagram pair (type's low bits).
        let datagram = arg(1, SeccompCmpOp::MaskedEq(0xf), libc::SOCK_DGRAM as u64);
        rules.insert(libc::SYS_socketpair, vec![rule(vec![datagram])]);
    }
    for call in [libc::SYS_keyctl, libc::SYS_add_key, libc::SYS_request_key] {
        rules.insert(call, Vec::new());
    }
    // A mode with the setuid or setgid bit: (call, index of its mode).
    let chmods: &[(i64, u8)] = &[
        (libc::SYS_fchmod, 1),
        (libc::SYS_fchmodat, 2),
        (SYS_FCHMODAT2, 2),
        (libc::SYS_mknodat, 2),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_chmod, 1),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_creat, 1),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_mknod, 1),
    ];
    for &(call, mode) in chmods {
        rules.insert(call, special_mode(mode, None));
    }
    // A file made by open: (call, index of its flags, index of its mode).
    let opens: &[(i64, u8, u8)] = &[
        (libc::SYS_openat, 2, 3),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_open, 1, 2),
    ];
    for &(call, flags, mode) in opens {
        let mut list = special_mode(mode, Some((flags, libc::O_CREAT as u64)));
        list.extend(special_mode(mode, Some((flags, O_TMPFILE_BIT))));
        rules.insert(call, list);
    }
    // The request's type differs between C libraries.
    #[allow(clippy::unnecessary_cast)]
    let terminal = [libc::TIOCSTI, libc::TIOCLINUX]
        .into_iter()
        .map(|request| rule(vec![arg(1, SeccompCmpOp::Eq, request as u64)]))
        .collect();
    rules.insert(libc::SYS_ioctl, terminal);
    if options.no_user_namespaces {
        let new_user = || {
            vec![rule(vec![arg(
                0,
                SeccompCmpOp::MaskedEq(libc::CLONE_NEWUSER as u64),
                libc::CLONE_NEWUSER as u64,
            )])]
        };
        rules.insert(libc::SYS_unshare, new_user());
        rules.insert(libc::SYS_clone, new_user());
    }
    rules
}

/// Refused with `ENOSYS`, as if the kernel lacked them.
fn absent(options: Options) -> Rules {
    let mut rules = Rules::new();
    for call in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        // Its flags are behind a pointer, so its mode cannot be read.
        SYS_OPENAT2,
    ] {
        rules.insert(call, Vec::new());
    }
    if options.no_user_namespaces {
        // Its flags are behind a pointer too; callers fall back to clone.
        rules.insert(SYS_CLONE3, Vec::new());
    }
    rules
}

/// Not in every libc release this crate accepts (same number on both architectures).
const SYS_FCHMODAT2: i64 = 452;
const SYS_OPENAT2: i64 = 437;
const SYS_CLONE3: i64 = 435;
/// `__O_TMPFILE`: an unnamed file whose mode applies once it is linked.
const O_TMPFILE_BIT: u64 = 0o20_000_000;
/// x86_64's x32 ABI reaches the same calls with this bit set in the number.
#[cfg(target_arch = "x86_64")]
const X32: i64 = 0x4000_0000;

/// The rules, and on x86_64 the same again under the x32 numbers (where a
/// kernel offers x32, its calls carry x86_64's audit architecture).
fn with_x32(rules: Rules) -> Rules {
    #[cfg(target_arch = "x86_64")]
    {
        let mut all = rules.clone();
        for (call, list) in rules {
            // x32's ioctl has a number of its own.
            let number = if call == libc::SYS_ioctl { 514 } else { call };
            all.insert(number | X32, list);
        }
        all
    }
    #[cfg(not(target_arch = "x86_64"))]
    rules
}

/// Rules matching a mode argument with the setuid or setgid bit, and when
/// `flag` is given, only with that flag argument's bits set.
fn special_mode(mode: u8, flag: Option<(u8, u64)>) -> Vec<SeccompRule> {
    [libc::S_ISUID, libc::S_ISGID]
        .into_iter()
        .map(|bit| {
            let bit = u64::from(bit);
            let mut conditions = vec![arg(mode, SeccompCmpOp::MaskedEq(bit), bit)];
            if let Some((index, flag)) = flag {
                conditions.push(arg(index, SeccompCmpOp::MaskedEq(flag), flag));
            }
            rule(conditions)
        })
        .collect()
}

fn arg(index: u8, op: SeccompCmpOp, value: u64) -> SeccompCondition {
    SeccompCondition::new(index, SeccompCmpArgLen::Dword, op, value)
        .expect("an argument index below 6")
}

fn rule(conditions: Vec<SeccompCondition>) -> SeccompRule {
    SeccompRule::new(conditions).expect("a rule with at least one condition")
}

/// The program as the kernel's `struct sock_filter` array, in this machine's byte order.
fn bytes(program: &BpfProgram) -> Vec<u8> {
    let mut out = Vec::with_capacity(program.len() * 8);
    for instruction in program {
        out.extend_from_slice(&instruction.code.to_ne_bytes());
        out.push(instruction.jt);
        out.push(instruction.jf);
        out.extend_from_slice(&instruction.k.to_ne_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_programs_build_and_the_socket_rules_go_with_allow_all_unix_sockets() {
        let strict = Options {
            unix_sockets: false,
            no_user_namespaces: true,
        };
        let built = programs(strict).unwrap();
        assert_eq!(built.len(), 2);
        assert!(built.iter().all(|p| !p.is_empty() && p.len() % 8 == 0));
        assert!(refused(strict).contains_key(&libc::SYS_socket));
        assert!(absent(strict).contains_key(&SYS_CLONE3));
        let open = Options {
            unix_sockets: true,
            no_user_namespaces: false,
        };
        assert!(!refused(open).contains_key(&libc::SYS_socket));
        assert!(!refused(open).contains_key(&libc::SYS_socketpair));
        assert!(!refused(open).contains_key(&libc::SYS_clone));
        assert!(!absent(open).contains_key(&SYS_CLONE3));
        assert!(programs(open).unwrap()[0].len() < programs(strict).unwrap()[0].len());
    }
}
