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
import signal
import sys
from dataclasses import dataclass

try:
    import resource
except ImportError:  # Windows: no rlimits (kata grade refuses to grade there: commands.py)
    resource = None  # type: ignore[assignment]

from autograd_kata.classroom.sandbox import seccomp

GiB = 1 << 30
ADDR_NO_RANDOMIZE = 0x0040000  # personality(2): what this process execs gets no address randomization
WANTED = {"RLIMIT_AS": GiB, "RLIMIT_NPROC": 1,  # the engine needs one process and no thread
          "RLIMIT_NOFILE": 64, "RLIMIT_FSIZE": 8 << 20, "RLIMIT_CORE": 0, "RLIMIT_MEMLOCK": 0, "RLIMIT_MSGQUEUE": 0}
# rlimit -> value, those this system has (macOS: no RLIMIT_MSGQUEUE); RLIMIT_CPU comes from KATA_SANDBOX_CPU
LIMITS = {getattr(resource, name): value for name, value in WANTED.items() if hasattr(resource, name)}

# <sched.h>, <sys/mount.h>, <sys/prctl.h>
CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER = seccomp.CLONE_NEWNS, seccomp.CLONE_NEWIPC, seccomp.CLONE_NEWUSER
CLONE_NEWPID, CLONE_NEWNET = seccomp.CLONE_NEWPID, seccomp.CLONE_NEWNET
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 32, 4096, 0x4000, 1 << 18
# a mount's flags that a user namespace may not clear (the kernel locks them), as statvfs reports
# them (ST_*) -> as a remount keeps them (MS_*): noexec, noatime, nodiratime, relatime
LOCKED = {8: 8, 1024: 1024, 2048: 2048, 4096: 1 << 21}
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER = 1, 4, 36

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


def prctl(option: int, value: int) -> bool:
    """``prctl(option, value)`` where there is one (Linux); False elsewhere or if refused."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return libc().prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def die_with_parent() -> None:
    """SIGKILL for this process when the thread that started it ends (a judge's ``preexec_fn``:
    a grader killed by its platform's timeout takes its judges, and so their sandboxes, along)."""
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def not_dumpable() -> bool:
    """This process's memory, environment (the judge's holds ``KATA_HIDDEN_SEED``) and
    descriptors become unreadable to processes of its own uid: /proc/<pid>/ turns root's,
    ptrace, process_vm_readv and pidfd_getfd are refused (until it executes another program)."""
    return prctl(PR_SET_DUMPABLE, 0)


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _mount(source, target, fstype, flags, data=None) -> None:
    enc = lambda s: s.encode() if isinstance(s, str) else s  # noqa: E731
    _check(libc().mount(enc(source), enc(target), enc(fstype), flags, enc(data)), f"mount {target}")



def _set_limits(cpu: int) -> None:
    if resource is None:
        return
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
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
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


class Refused(OSError):
    """A step of the sandbox's start was refused: the sandbox does not run (``str()`` says which)."""


def read_only(target: str) -> None:
    """Remount the bind mount at ``target`` read-only, keeping the flags a user namespace may not
    clear (a stage folder on a ``noexec`` TMPDIR); ``Refused`` unless it is read-only after."""
    kept = sum(ms for st, ms in LOCKED.items() if os.statvfs(target).f_flag & st)
    try:
        _mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | kept)
    except OSError as error:
        raise Refused(error.errno, f"{target} could not be made read-only: {error.strerror}") from None
    if not os.statvfs(target).f_flag & os.ST_RDONLY:
        raise Refused(0, f"{target} is still writable after its read-only remount")


def _build_root(folder: str, python: str, system: str | None = None) -> None:
    """In the new mount namespace: a tmpfs at ``folder`` becomes the new root, holding read-only
    ``system``'s top folders (the jail root's copy of the interpreter and its standard library,
    root's modes) or else the system's own ``/usr``, ``/lib*`` and the interpreter's prefix, and
    ``folder``'s own contents at its path; then it is made read-only too."""
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
        read_only(target)

    prefixes = [] if system else [sys.base_prefix, os.path.dirname(python)]
    for name in sorted(os.listdir(system)) if system else []:
        source = os.path.join(str(system), name)
        if name == "stages":  # the chroot mode's stage folders: never another grading's
            continue
        if os.path.islink(source):
            os.symlink(os.readlink(source), inside(name))
        elif os.path.isdir(source):
            bind(source, inside(name))
    for path in () if system else SYSTEM:
        if os.path.islink(path):
            os.symlink(os.readlink(path), inside(path))
        elif os.path.isdir(path):
            bind(path, inside(path))
    for path in prefixes:
        path = os.path.realpath(path)
        if not any(path == s or path.startswith(s + "/") for s in SYSTEM) and not os.path.exists(inside(path)):
            bind(path, inside(path))
    for path in () if system else FILES:
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


def child(plan: Plan, ids: tuple[int, int] | None, why: int | None = None) -> None:
    """The sandbox's set-up (its ``preexec_fn``); a step that fails writes why to the pipe ``why``
    (the launcher's) and the launch fails with it."""
    try:
        _confine(plan, ids)
    except BaseException as error:
        if why is not None:
            os.write(why, f"{error}".encode(errors="replace")[:2000])
        raise


def _confine(plan: Plan, ids: tuple[int, int] | None) -> None:
    if plan.mode == "userns":
        # the judge is not dumpable (not_dumpable), nor this child of it until it execs: its memory
        # is the judge's, hidden seed and all, and a sandbox of the same uid (mode none) would read
        # it through /proc.  Only a user namespace's maps need it, and there no one of the uid sees it
        prctl(PR_SET_DUMPABLE, 1)
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the judge dies: this process and its namespace die too
    os.setsid()
    # the same addresses on every run (no ASLR for what it execs): code whose answer depends on
    # id() or on a set's order (a set of nodes, ordered by address) answers alike, so --seed
    # reproduces a grading byte for byte (where the machine allows it: Docker's seccomp may not)
    if sys.platform.startswith("linux"):
        libc().personality(libc().personality(0xFFFFFFFF) | ADDR_NO_RANDOMIZE)
    if plan.mode == "namespaces":
        _unshare(CLONE_NEWNS, optional=CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWPID)
        _in_pid_namespace()
        _build_root(plan.folder, plan.python, plan.root)
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
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # again after the uid change, which clears it
    seccomp.install()


