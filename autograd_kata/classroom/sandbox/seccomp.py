"""A seccomp filter, written as data: the system calls the sandbox may make, every other refused.

``install(pid)`` runs in the sandbox's process just before it executes the
interpreter.  It needs no privilege (``PR_SET_NO_NEW_PRIVS`` first, which also
makes a set-user-ID program gain nothing), it holds across ``execve`` and every
child inherits it, so submitted code cannot lift it.  It is an allow list
(``ALLOW``): what the interpreter, the sandbox's server and the reference
engine call while the whole course is graded (measured with ``strace -f`` on a
grading of the reference: 32 calls), and what the standard library commonly
asks besides (clocks, sleeps, signals, the stat family, waits, exits).  Any
other call fails with ``EPERM`` (``clone3`` with ``ENOSYS``, so the C library
falls back to ``clone``, whose flags a filter can read).  Among what that takes
away, in every mode, ``none`` included:

* writing any file: ``open``/``openat`` only without ``O_WRONLY``, ``O_RDWR``,
  ``O_CREAT``, ``O_TRUNC``, ``O_APPEND`` or ``O_TMPFILE`` (``openat2``, whose
  flags a filter cannot read, is refused whole), no ``mkdir``, ``rename``,
  ``unlink``, ``chmod``, ``link``, ``truncate``; and ``memfd_create``, memory no
  address-space limit counts;
* signalling any process but itself (``kill``/``tgkill``/``tkill`` only to its
  own pid, or ``kill`` to 0, its own group);
* reaching into another process: ``ptrace``, ``process_vm_readv``/``writev``,
  ``process_madvise``, ``pidfd_open``, ``pidfd_getfd``, ``kcmp``;
* SysV IPC, keyrings, sockets, new namespaces (``clone`` with a ``CLONE_NEW*``
  flag), mounts (``fsopen``, ``open_tree`` too), ``chroot``, ``bpf``,
  ``io_uring``, ``userfaultfd``, ``modify_ldt``, ``perf_event_open``.

A call of another architecture than the interpreter's (32-bit calls on x86-64,
x32) is refused whole.  On an architecture not in ``NUMBERS`` nothing is
installed and ``install`` returns False (the other fences still hold).

``python -m autograd_kata.classroom.sandbox.seccomp --no-userns -- CMD ...`` runs CMD
with only user namespaces refused: how the tool tests see a machine whose
kernel forbids them (Debian's and Ubuntu's setting), without changing the
machine's sysctl.
"""
from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct
import sys

CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x02000000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
NEW_NAMESPACES = (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID
                  | CLONE_NEWNET)

# (AUDIT_ARCH_*, {name: number}); x86-64 from arch/x86/entry/syscalls/syscall_64.tbl,
# aarch64 from include/uapi/asm-generic/unistd.h
NUMBERS = {
    "x86_64": (0xC000003E, {
        "read": 0, "write": 1, "open": 2, "close": 3, "stat": 4, "fstat": 5, "lstat": 6, "poll": 7, "lseek": 8,
        "mmap": 9, "mprotect": 10, "munmap": 11, "brk": 12, "rt_sigaction": 13, "rt_sigprocmask": 14,
        "rt_sigreturn": 15, "ioctl": 16, "pread64": 17, "pwrite64": 18, "readv": 19, "writev": 20, "access": 21,
        "pipe": 22, "select": 23, "sched_yield": 24, "mremap": 25, "madvise": 28, "dup": 32, "dup2": 33,
        "nanosleep": 35, "getitimer": 36, "alarm": 37, "setitimer": 38, "getpid": 39, "clone": 56, "fork": 57,
        "vfork": 58, "execve": 59, "exit": 60, "wait4": 61, "kill": 62, "uname": 63, "fcntl": 72, "getcwd": 79,
        "chdir": 80, "fchdir": 81, "readlink": 89, "umask": 95, "gettimeofday": 96, "getrlimit": 97, "getrusage": 98,
        "sysinfo": 99, "times": 100, "getuid": 102, "getgid": 104, "geteuid": 107, "getegid": 108, "getppid": 110,
        "getpgrp": 111, "getgroups": 115, "getresuid": 118, "getresgid": 120, "getpgid": 121, "getsid": 124,
        "rt_sigpending": 127, "rt_sigtimedwait": 128, "rt_sigsuspend": 130, "sigaltstack": 131, "statfs": 137,
        "fstatfs": 138, "arch_prctl": 158, "gettid": 186, "tkill": 200, "time": 201, "futex": 202,
        "sched_getaffinity": 204, "getdents64": 217, "set_tid_address": 218, "clock_gettime": 228,
        "clock_getres": 229, "clock_nanosleep": 230, "exit_group": 231, "epoll_wait": 232, "epoll_ctl": 233,
        "tgkill": 234, "waitid": 247, "openat": 257, "newfstatat": 262, "readlinkat": 267, "faccessat": 269,
        "pselect6": 270, "ppoll": 271, "unshare": 272, "set_robust_list": 273, "epoll_pwait": 281,
        "epoll_create1": 291, "dup3": 292, "pipe2": 293, "prlimit64": 302, "getcpu": 309, "getrandom": 318,
        "statx": 332, "rseq": 334, "clone3": 435, "faccessat2": 439}),
    "aarch64": (0xC00000B7, {
        "getcwd": 17, "epoll_create1": 20, "epoll_ctl": 21, "epoll_pwait": 22, "dup": 23, "dup3": 24, "fcntl": 25,
        "ioctl": 29, "statfs": 43, "fstatfs": 44, "faccessat": 48, "chdir": 49, "fchdir": 50, "openat": 56,
        "close": 57, "pipe2": 59, "getdents64": 61, "lseek": 62, "read": 63, "write": 64, "readv": 65, "writev": 66,
        "pread64": 67, "pwrite64": 68, "pselect6": 72, "ppoll": 73, "readlinkat": 78, "newfstatat": 79, "fstat": 80,
        "exit": 93, "exit_group": 94, "waitid": 95, "set_tid_address": 96, "unshare": 97, "futex": 98,
        "set_robust_list": 99, "nanosleep": 101, "getitimer": 102, "setitimer": 103, "clock_gettime": 113,
        "clock_getres": 114, "clock_nanosleep": 115, "sched_getaffinity": 123, "sched_yield": 124, "kill": 129,
        "tkill": 130, "tgkill": 131, "sigaltstack": 132, "rt_sigsuspend": 133, "rt_sigaction": 134,
        "rt_sigprocmask": 135, "rt_sigpending": 136, "rt_sigtimedwait": 137, "rt_sigreturn": 139, "getresuid": 148,
        "getresgid": 150, "times": 153, "getpgid": 155, "getsid": 156, "getgroups": 158, "uname": 160,
        "getrlimit": 163, "getrusage": 165, "umask": 166, "getcpu": 168, "gettimeofday": 169, "getpid": 172,
        "getppid": 173, "getuid": 174, "geteuid": 175, "getgid": 176, "getegid": 177, "gettid": 178, "sysinfo": 179,
        "brk": 214, "munmap": 215, "mremap": 216, "clone": 220, "execve": 221, "mmap": 222, "mprotect": 226,
        "madvise": 233, "wait4": 260, "prlimit64": 261, "getrandom": 278, "statx": 291, "rseq": 293, "clone3": 435,
        "faccessat2": 439}),
}
X32_BIT = 0x40000000  # x86-64 only: the x32 ABI's numbers

# what the sandbox may call, as it is (a name an architecture lacks is skipped there) ...
ALLOW = ("read", "write", "readv", "writev", "pread64", "pwrite64", "close", "lseek", "fstat", "stat", "lstat",
         "newfstatat", "statx", "statfs", "fstatfs", "access", "faccessat", "faccessat2", "readlink", "readlinkat",
         "getdents64", "getcwd", "chdir", "fchdir", "fcntl", "dup", "dup2", "dup3", "pipe", "pipe2", "poll", "ppoll",
         "select", "pselect6", "epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait", "mmap", "munmap",
         "mprotect", "mremap", "madvise", "brk", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending",
         "rt_sigsuspend", "rt_sigtimedwait", "sigaltstack", "setitimer", "getitimer", "alarm", "clock_gettime",
         "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time", "getpid", "getppid", "gettid",
         "getuid", "geteuid", "getgid", "getegid", "getgroups", "getresuid", "getresgid", "getpgrp", "getpgid",
         "getsid", "getrusage", "times", "sysinfo", "uname", "umask", "getrandom", "prlimit64", "getrlimit",
         "sched_getaffinity", "sched_yield", "getcpu", "futex", "set_robust_list", "set_tid_address", "rseq",
         "arch_prctl", "exit", "exit_group", "wait4", "waitid", "execve", "fork", "vfork")
# ... and with an argument checked: (name, the argument's index, what it must be)
READ_ONLY = 0o20003103  # O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND | __O_TMPFILE: none may be set
IOCTLS = (0x5401, 0x5413, 0x541B, 0x5450, 0x5451)  # TCGETS (isatty), TIOCGWINSZ, FIONREAD, FIONCLEX, FIOCLEX

# <linux/filter.h>, <linux/seccomp.h>, <linux/prctl.h>
LD_W_ABS, JEQ_K, JGE_K, JSET_K, RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
RET_ALLOW, RET_ERRNO, RET_KILL_PROCESS = 0x7FFF0000, 0x00050000, 0x80000000
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
NR, ARCH = 0, 4  # offsets in struct seccomp_data


def _arg(n: int) -> int:
    return 16 + 8 * n  # args[n]'s low half (little-endian)


def program(arch: str, pid: int | None = None, no_userns: bool = False) -> list[tuple[int, int, int, int]]:
    """The filter as (code, jt, jf, k) tuples: the sandbox's allow list, for the process ``pid``
    (whom it may signal); with ``no_userns`` instead, everything but new user namespaces."""
    audit, numbers = NUMBERS[arch]
    body: list[tuple] = [(LD_W_ABS, 0, 0, ARCH), (JEQ_K, 1, 0, audit), ("kill",), (LD_W_ABS, 0, 0, NR)]
    if arch == "x86_64":
        body.append((JGE_K, "eperm", 0, X32_BIT))
    body.append((JEQ_K, "enosys", 0, numbers["clone3"]))
    rules: list[tuple[str, int, list[tuple]]]
    if no_userns:
        rules = [("clone", 0, [(JSET_K, "eperm", "allow", CLONE_NEWUSER)]),
                 ("unshare", 0, [(JSET_K, "eperm", "allow", CLONE_NEWUSER)])]
        default = "allow"
    else:
        rules = [("clone", 0, [(JSET_K, "eperm", "allow", NEW_NAMESPACES)]),
                 ("openat", 2, [(JSET_K, "eperm", "allow", READ_ONLY)]),
                 ("open", 1, [(JSET_K, "eperm", "allow", READ_ONLY)]),
                 ("ioctl", 1, [(JEQ_K, "allow", 0, n) for n in IOCTLS[:-1]] + [(JEQ_K, "allow", "eperm", IOCTLS[-1])]),
                 ("kill", 0, [(JEQ_K, "allow", 0, pid or 0), (JEQ_K, "allow", "eperm", 0)]),
                 ("tgkill", 0, [(JEQ_K, "allow", "eperm", pid or 0)]),
                 ("tkill", 0, [(JEQ_K, "allow", "eperm", pid or 0)])]
        default = "eperm"
    for name, arg, tests in rules:
        if name in numbers:  # its number, else the next rule; then argument ``arg``, judged by ``tests``
            body += [(JEQ_K, 0, len(tests) + 1, numbers[name]), (LD_W_ABS, 0, 0, _arg(arg)), *tests]
    if not no_userns:
        body += [(JEQ_K, "allow", 0, numbers[name]) for name in ALLOW if name in numbers]
    body.append((default,))
    ends = {"kill": RET_KILL_PROCESS, "allow": RET_ALLOW, "eperm": RET_ERRNO | errno.EPERM,
            "enosys": RET_ERRNO | errno.ENOSYS}
    where = {"allow": len(body), "eperm": len(body) + 1, "enosys": len(body) + 2}
    out: list[tuple[int, int, int, int]] = []
    for i, ins in enumerate(body):
        if len(ins) == 1:
            out.append((RET_K, 0, 0, ends[str(ins[0])]))
            continue
        code, jt, jf, k = ins
        jt, jf = (where[j] - i - 1 if isinstance(j, str) else j for j in (jt, jf))
        out.append((int(code), int(jt), int(jf), int(k)))
    out += [(RET_K, 0, 0, ends["allow"]), (RET_K, 0, 0, ends["eperm"]), (RET_K, 0, 0, ends["enosys"])]
    assert all(0 <= jt < 256 and 0 <= jf < 256 for _, jt, jf, _ in out)
    return out


def available() -> bool:
    """Whether ``install`` has a filter for this system (Linux on x86-64 or aarch64)."""
    return sys.platform.startswith("linux") and platform.machine() in NUMBERS


def install(pid: int | None = None, no_userns: bool = False) -> bool:
    """Install the filter on this process (and all it will start): the sandbox's allow list, the
    process ``pid`` (this one's, by default) the only one it may signal; ``no_userns``: refuse
    only new user namespaces.  False where the architecture is unknown; OSError if the kernel
    refuses."""
    if not available():
        return False
    rules = program(platform.machine(), pid=os.getpid() if pid is None else pid, no_userns=no_userns)
    code = b"".join(struct.pack("=HBBI", *ins) for ins in rules)
    buffer = ctypes.create_string_buffer(code, len(code))

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = Prog(len(rules), ctypes.addressof(buffer))
    libc = ctypes.CDLL(None, use_errno=True)  # this process's own libc
    libc.prctl.argtypes = (ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or \
            libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(prog), 0, 0) != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"seccomp: {os.strerror(number)}")
    return True


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[0] != "--no-userns" or argv[1] != "--":
        print("usage: python -m autograd_kata.classroom.sandbox.seccomp --no-userns -- CMD [ARG...]", file=sys.stderr)
        return 2
    if not install(no_userns=True):
        print(f"seccomp: no filter for {platform.machine()}", file=sys.stderr)
        return 2
    os.execvp(argv[2], argv[2:])
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
