"""A seccomp filter, written as data: the system calls the sandbox is refused.

``install(DENY)`` runs in the sandbox's process just before it executes the
interpreter.  It needs no privilege (``PR_SET_NO_NEW_PRIVS`` first, which also
makes a set-user-ID program gain nothing), it holds across ``execve`` and every
child inherits it, so submitted code cannot lift it.  Refused calls fail with
``EPERM`` (``clone3`` with ``ENOSYS``, so the C library falls back to ``clone``,
whose flags a filter can read).  What it takes away from the sandbox:

* SysV IPC and keyrings (``shmget``, ``semget``, ``msgget``, ``add_key``,
  ``request_key``, ``keyctl``): objects that would outlive every process of the
  grading;
* new namespaces (``unshare``, ``setns``, ``clone`` with a ``CLONE_NEW*`` flag),
  mounts and ``chroot``: the ways out of a jail;
* ``ptrace``, ``process_vm_readv``/``writev``, ``bpf``, ``perf_event_open``,
  ``userfaultfd``, ``io_uring_setup``: reaching into other processes or the kernel;
* ``socket``: the network (where no network namespace hides it) and local
  sockets alike; the sandbox talks to its judge only through the pipes it was given.

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
        "shmget": 29, "semget": 64, "msgget": 68, "ptrace": 101, "pivot_root": 155, "chroot": 161,
        "mount": 165, "umount2": 166, "add_key": 248, "request_key": 249, "keyctl": 250, "unshare": 272,
        "perf_event_open": 298, "setns": 308, "process_vm_readv": 310, "process_vm_writev": 311, "bpf": 321,
        "userfaultfd": 323, "io_uring_setup": 425, "clone3": 435, "clone": 56, "socket": 41}),
    "aarch64": (0xC00000B7, {
        "umount2": 39, "mount": 40, "pivot_root": 41, "chroot": 51, "unshare": 97, "ptrace": 117,
        "msgget": 186, "semget": 190, "shmget": 194, "add_key": 217, "request_key": 218, "keyctl": 219,
        "perf_event_open": 241, "setns": 268, "process_vm_readv": 270, "process_vm_writev": 271, "bpf": 280,
        "userfaultfd": 282, "io_uring_setup": 425, "clone3": 435, "clone": 220, "socket": 198}),
}
X32_BIT = 0x40000000  # x86-64 only: the x32 ABI's numbers

# what the sandbox is refused; "clone" is refused only with a namespace flag (CLONE_FLAGS)
DENY = ("shmget", "semget", "msgget", "add_key", "request_key", "keyctl", "unshare", "setns", "mount",
        "umount2", "pivot_root", "chroot", "ptrace", "process_vm_readv", "process_vm_writev", "bpf",
        "perf_event_open", "userfaultfd", "io_uring_setup", "clone3", "socket")
NO_USERNS = ("clone3",)  # with clone's CLONE_NEWUSER and unshare's: see install(no_userns=True)

# <linux/filter.h>, <linux/seccomp.h>, <linux/prctl.h>
LD_W_ABS, JEQ_K, JGE_K, JSET_K, RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
RET_ALLOW, RET_ERRNO, RET_KILL_PROCESS = 0x7FFF0000, 0x00050000, 0x80000000
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
NR, ARCH, ARG0 = 0, 4, 16  # offsets in struct seccomp_data (args[0]'s low half, little-endian)


def program(arch: str, deny=DENY, clone_flags: int = NEW_NAMESPACES,
            unshare_flags: int | None = None) -> list[tuple[int, int, int, int]]:
    """The filter as (code, jt, jf, k) tuples.  ``unshare_flags``: refuse ``unshare`` only
    with these flags (``deny`` then must not name it)."""
    audit, numbers = NUMBERS[arch]
    deny = [numbers[name] for name in deny if name != "clone3"]
    body: list[tuple] = [(LD_W_ABS, 0, 0, ARCH), (JEQ_K, 1, 0, audit), ("kill",), (LD_W_ABS, 0, 0, NR)]
    if arch == "x86_64":
        body.append((JGE_K, "eperm", 0, X32_BIT))
    body.append((JEQ_K, "enosys", 0, numbers["clone3"]))
    body += [(JEQ_K, "eperm", 0, nr) for nr in deny]
    for name, flags in (("clone", clone_flags), ("unshare", unshare_flags)):
        if flags:
            body += [(JEQ_K, 0, 3, numbers[name]), (LD_W_ABS, 0, 0, ARG0), (JSET_K, "eperm", 0, flags),
                     (LD_W_ABS, 0, 0, NR)]
    body.append(("allow",))
    ends = {"kill": RET_KILL_PROCESS, "allow": RET_ALLOW, "eperm": RET_ERRNO | errno.EPERM,
            "enosys": RET_ERRNO | errno.ENOSYS}
    where = {"eperm": len(body), "enosys": len(body) + 1}
    out: list[tuple[int, int, int, int]] = []
    for i, ins in enumerate(body):
        if len(ins) == 1:
            out.append((RET_K, 0, 0, ends[str(ins[0])]))
            continue
        code, jt, jf, k = ins
        jump = where[jt] - i - 1 if isinstance(jt, str) else jt
        out.append((int(code), int(jump), int(jf), int(k)))
    out += [(RET_K, 0, 0, ends["eperm"]), (RET_K, 0, 0, ends["enosys"])]
    assert all(0 <= jt < 256 and 0 <= jf < 256 for _, jt, jf, _ in out)
    return out


def install(deny=DENY, no_userns: bool = False) -> bool:
    """Install the filter on this process (and all it will start).  ``no_userns``: refuse only
    new user namespaces.  False where the architecture is unknown; OSError if the kernel refuses."""
    arch = platform.machine()
    if arch not in NUMBERS or not sys.platform.startswith("linux"):
        return False
    if no_userns:
        rules = program(arch, deny=NO_USERNS, clone_flags=CLONE_NEWUSER, unshare_flags=CLONE_NEWUSER)
    else:
        rules = program(arch, deny=deny)
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
