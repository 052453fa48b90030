"""How the sandbox's process is confined, in the child, before it executes the interpreter.

``child(plan, ids)`` runs as the ``preexec_fn`` of the sandbox's ``Popen`` (``jail.launcher``):
its own session; in ``namespaces`` and ``userns`` new mount (and PID, IPC, network) namespaces
and a fresh read-only root (``_build_root``); in ``chroot`` the jail's root (``jailroot.py``);
then the rlimits, the pool user's uid (root's modes), ``PR_SET_PDEATHSIG`` and the seccomp
filter (``seccomp.py``).  What each mode shows and holds is said in ``jail.py``.
"""
from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys
from dataclasses import dataclass

from autograd_kata.classroom.sandbox import seccomp

GiB = 1 << 30
ADDR_NO_RANDOMIZE = 0x0040000  # personality(2): what this process execs gets no address randomization
LIMITS = {  # rlimit -> value; RLIMIT_CPU comes from KATA_SANDBOX_CPU
    resource.RLIMIT_AS: GiB,
    resource.RLIMIT_NPROC: 1,      # the engine needs one process and no thread
    resource.RLIMIT_NOFILE: 64,
    resource.RLIMIT_FSIZE: 8 << 20,
    resource.RLIMIT_CORE: 0,
    resource.RLIMIT_MEMLOCK: 0,
    resource.RLIMIT_MSGQUEUE: 0,
}

# <sched.h>, <sys/mount.h>, <sys/prctl.h>
CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER = seccomp.CLONE_NEWNS, seccomp.CLONE_NEWIPC, seccomp.CLONE_NEWUSER
CLONE_NEWPID, CLONE_NEWNET = seccomp.CLONE_NEWPID, seccomp.CLONE_NEWNET
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 32, 4096, 0x4000, 1 << 18
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36

# what a Python interpreter needs from the system, bound read-only into the namespaces' root
SYSTEM = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin")
FILES = ("/etc/ld.so.cache",)


_libc = None


def libc():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)  # this process's own libc
        _libc.mount.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                                ctypes.c_char_p)
    return _libc


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _mount(source, target, fstype, flags, data=None) -> None:
    enc = lambda s: s.encode() if isinstance(s, str) else s  # noqa: E731
    _check(libc().mount(enc(source), enc(target), enc(fstype), flags, enc(data)), f"mount {target}")



def _set_limits(cpu: int) -> None:
    for which, value in {**LIMITS, resource.RLIMIT_CPU: cpu}.items():
        soft, hard = resource.getrlimit(which)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            if sys.platform.startswith("linux"):
                raise  # Linux has them all; elsewhere (macOS: RLIMIT_AS) one may be refused


def _unshare(flags: int, optional: int = 0) -> None:
    _check(libc().unshare(flags), f"unshare({flags:#x})")
    for flag in (CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWPID):
        if optional & flag:
            libc().unshare(flag)  # where the kernel allows it; the other fences hold without it


def _map_ids(uid: int, gid: int) -> None:
    """In a new user namespace: this process keeps its uid and gid, and nothing else is mapped."""
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w", encoding="ascii") as f:
            f.write(text)


def _in_pid_namespace() -> None:
    """After unshare(CLONE_NEWPID): fork the namespace's first process, which forks the sandbox
    and waits for it (the first process of a PID namespace ignores the signals it sends itself,
    so the sandbox must not be it: an abort() must stay an abort).  When the first process dies,
    every process in the namespace dies.  The waiting parents hold nothing of the sandbox's pipes;
    the sandbox's status comes back over a pipe of their own, and this one ends as it ended."""
    read, write = os.pipe()
    first = os.fork()
    if first == 0:
        os.close(read)
        libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        sandbox = os.fork()
        if sandbox == 0:
            os.close(write)
            return
        _keep_only(write)
        os.write(write, _wait(sandbox).to_bytes(4, "big"))
        os._exit(0)
    os.close(write)
    _keep_only(read)
    _wait(first)
    data = os.read(read, 4)
    status = int.from_bytes(data, "big") if len(data) == 4 else signal.SIGKILL  # the first one was killed
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def _keep_only(fd: int) -> None:
    os.closerange(0, fd)
    os.closerange(fd + 1, 1 << 16)


def _wait(pid: int) -> int:
    while True:
        try:
            return os.waitpid(pid, 0)[1]
        except InterruptedError:
            continue


def _build_root(folder: str, python: str) -> None:
    """In the new mount namespace: a tmpfs at ``folder`` becomes the new root, holding the
    system read-only and ``folder``'s own contents at its path; then it is made read-only too."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    # opened in the new namespace (a bind source must be in it), before the tmpfs hides it
    keep = os.open(folder, os.O_PATH | os.O_DIRECTORY)
    root = folder
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=16m")

    def inside(path):
        return os.path.join(root, path.lstrip("/"))

    def bind(source, target, is_dir=True, flags=MS_BIND | MS_REC):
        if is_dir:
            os.makedirs(target, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            open(target, "a").close()
        _mount(source, target, None, flags)
        try:
            _mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
        except OSError:
            pass  # a mount whose flags a user namespace may not change; the uid cannot write it anyway

    prefixes = [sys.base_prefix, os.path.dirname(python)]
    for path in SYSTEM:
        if os.path.islink(path):
            os.symlink(os.readlink(path), inside(path))
        elif os.path.isdir(path):
            bind(path, inside(path))
    for path in prefixes:
        path = os.path.realpath(path)
        if not any(path == s or path.startswith(s + "/") for s in SYSTEM) and not os.path.exists(inside(path)):
            bind(path, inside(path))
    for path in FILES:
        if os.path.exists(path):
            bind(path, inside(path), is_dir=False)
    # not recursive: the tmpfs now mounted on folder would come along and hide it again
    bind(f"/proc/self/fd/{keep}", inside(folder), flags=MS_BIND)
    os.close(keep)
    _mount(None, root, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chroot(root)
    os.chdir(folder)


@dataclass(frozen=True)
class Plan:
    mode: str
    folder: str          # the stage folder, as the grader sees it
    inside: str          # ... and as the sandbox sees it
    root: str | None     # the chroot mode's root
    python: str
    cpu: int


def child(plan: Plan, ids: tuple[int, int] | None) -> None:
    os.setsid()
    # the same addresses on every run (no ASLR for what it execs): code whose answer depends on
    # id() or on a set's order (a set of nodes, ordered by address) answers alike, so --seed
    # reproduces a grading byte for byte (where the machine allows it: Docker's seccomp may not)
    libc().personality(libc().personality(0xFFFFFFFF) | ADDR_NO_RANDOMIZE)
    if plan.mode == "namespaces":
        _unshare(CLONE_NEWNS, optional=CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWPID)
        _in_pid_namespace()
        _build_root(plan.folder, plan.python)
    elif plan.mode == "userns":
        uid, gid = os.getuid(), os.getgid()
        _unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID, optional=CLONE_NEWIPC | CLONE_NEWNET)
        _map_ids(uid, gid)
        _in_pid_namespace()
        _build_root(plan.folder, plan.python)
    elif plan.mode == "chroot" and plan.root:
        os.chroot(plan.root)
        os.chdir(plan.inside)
    else:
        os.chdir(plan.folder)
    _set_limits(plan.cpu)
    if ids is not None:
        os.setgroups([])
        os.setgid(ids[1])
        os.setuid(ids[0])
        if 0 in (os.getuid(), os.geteuid(), os.getgid(), os.getegid()):
            os._exit(126)  # never run submitted code as root
    libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # after the uid change, which clears it
    seccomp.install()


