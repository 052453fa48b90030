"""The seccomp filter read as the kernel reads it: an allow list, for both architectures (issue 26).

``test_attacks_jail.py`` tries the calls from inside a real sandbox, on this machine's
kernel and architecture, where a call may also be refused for another reason (no
privilege, a bad argument).  Here the filter's program (``seccomp.program``) is run by a
small classic-BPF interpreter on the ``seccomp_data`` the kernel would hand it, so each
answer is the filter's own: every call issue 26 named, by its number in the kernel's own
tables (not the filter's), fails with ``EPERM``; a call the filter does not know is
refused too (the allow list's default); and the calls a grading of the reference needs
pass.  The honest reference grading 100 with this filter in every set-up is
``test_attacks.py``'s (``.ci/jail-setups``).
"""
from __future__ import annotations

import errno
import struct

import pytest

from autograd_kata.classroom.sandbox import seccomp

# from the kernel: arch/x86/entry/syscalls/syscall_64.tbl, include/uapi/asm-generic/unistd.h
REFUSED = {
    "x86_64": {"modify_ldt": 154, "fsopen": 430, "open_tree": 428, "move_mount": 429, "fsmount": 432,
               "pidfd_getfd": 438, "pidfd_open": 434, "process_vm_readv": 310, "process_vm_writev": 311,
               "process_madvise": 440, "kcmp": 312, "memfd_create": 319, "ptrace": 101, "mount": 165,
               "socket": 41, "bpf": 321, "userfaultfd": 323, "io_uring_setup": 425, "openat2": 437,
               "unlink": 87, "mkdir": 83, "rename": 82, "chmod": 90, "truncate": 76, "setuid": 105},
    "aarch64": {"fsopen": 430, "open_tree": 428, "move_mount": 429, "fsmount": 432, "pidfd_getfd": 438,
                "pidfd_open": 434, "process_vm_readv": 270, "process_vm_writev": 271, "process_madvise": 440,
                "kcmp": 272, "memfd_create": 279, "ptrace": 117, "mount": 40, "socket": 198, "bpf": 280,
                "userfaultfd": 282, "io_uring_setup": 425, "openat2": 437, "unlinkat": 35, "mkdirat": 34,
                "renameat2": 276, "fchmodat": 53, "truncate": 45, "setuid": 146},
}
NEEDED = {  # what the interpreter and the server call while the reference is graded (a few of the 32)
    "x86_64": {"read": 0, "write": 1, "mmap": 9, "brk": 12, "futex": 202, "exit_group": 231, "newfstatat": 262,
               "getdents64": 217, "rt_sigaction": 13, "getrandom": 318},
    "aarch64": {"read": 63, "write": 64, "mmap": 222, "brk": 214, "futex": 98, "exit_group": 94,
                "newfstatat": 79, "getdents64": 61, "rt_sigaction": 134, "getrandom": 278},
}
OPENAT = {"x86_64": 257, "aarch64": 56}
EPERM = seccomp.RET_ERRNO | errno.EPERM


def run(program: list[tuple[int, int, int, int]], arch: str, nr: int, args=(0,) * 6, audit: int | None = None) -> int:
    """What the kernel's classic-BPF machine returns for this call: ``struct seccomp_data``
    (nr, arch, instruction pointer, six 64-bit arguments), little-endian."""
    audit = seccomp.NUMBERS[arch][0] if audit is None else audit
    data = struct.pack("<iIQ6Q", nr, audit, 0, *(a & (1 << 64) - 1 for a in (*args, 0, 0, 0, 0, 0, 0)[:6]))
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = program[pc]
        pc += 1
        if code == seccomp.LD_W_ABS:
            acc = struct.unpack_from("<I", data, k)[0]
        elif code == seccomp.RET_K:
            return k
        else:
            taken = {seccomp.JEQ_K: acc == k, seccomp.JGE_K: acc >= k, seccomp.JSET_K: bool(acc & k)}[code]
            pc += jt if taken else jf


@pytest.mark.parametrize("arch", sorted(seccomp.NUMBERS))
def test_every_call_issue_26_named_is_refused_with_eperm_and_what_the_reference_needs_passes(arch):
    program = seccomp.program(arch, pid=4242)
    answers = {name: run(program, arch, nr) for name, nr in REFUSED[arch].items()}
    assert answers == dict.fromkeys(REFUSED[arch], EPERM), {n: hex(a) for n, a in answers.items()}
    needed = {name: run(program, arch, nr) for name, nr in NEEDED[arch].items()}
    assert needed == dict.fromkeys(NEEDED[arch], seccomp.RET_ALLOW)
    assert run(program, arch, 999) == EPERM  # a call added to a later kernel: refused, not let through


@pytest.mark.parametrize("arch", sorted(seccomp.NUMBERS))
def test_opening_is_allowed_only_to_read_and_signalling_only_oneself(arch):
    program = seccomp.program(arch, pid=4242)
    openat = OPENAT[arch]
    assert run(program, arch, openat, (-100, 0, 0o2000000)) == seccomp.RET_ALLOW  # O_RDONLY | O_CLOEXEC
    for flags in (0o1, 0o2, 0o100, 0o1000, 0o2000, 0o20000000):  # O_WRONLY .. __O_TMPFILE
        assert run(program, arch, openat, (-100, 0, flags)) == EPERM, oct(flags)
    kill = seccomp.NUMBERS[arch][1]["kill"]
    assert run(program, arch, kill, (4242, 0)) == seccomp.RET_ALLOW
    assert run(program, arch, kill, (1, 9)) == EPERM
    assert run(program, arch, seccomp.NUMBERS[arch][1]["clone3"]) == seccomp.RET_ERRNO | errno.ENOSYS


def test_a_call_of_another_abi_is_refused_whole():
    program = seccomp.program("x86_64", pid=4242)
    assert run(program, "x86_64", seccomp.X32_BIT | 0) == EPERM  # x32's read
    assert run(program, "x86_64", 3, audit=0x40000003) == seccomp.RET_KILL_PROCESS  # i386's read
