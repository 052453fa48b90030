"""The sandbox's jail: how the process that runs submitted code is started and ended.

Interface (for ``conftest.py`` / ``remote.py``)::

    from autograd_kata.classroom.sandbox.jail import launcher
    launch = launcher(folder)              # folder = the --sandbox stage folder
    proc = launch([sys.executable, "-I", "-S", "-c", server, launch.folder_inside, ...],
                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=...)
    ...
    proc.kata_end()                        # after killing it: the uid cleaned, its lease given back

``launch`` returns a ``subprocess.Popen``.  It sets cwd (the stage folder), a
minimal environment (the caller's ``env`` is ignored on purpose: the judge's
holds ``KATA_HIDDEN_SEED``) and its own session, so ``os.killpg(proc.pid,
SIGKILL)`` ends the sandbox and its children.  Inside the jail only the stage
folder and the standard library exist (not the venv, not this package): run
the server as ``-c <its text>``; an ``argv[0]`` equal to ``sys.executable`` is
replaced by the base interpreter.  The grader passes its choices to the judge
in the environment: ``KATA_SANDBOX_MODE`` (one of ``MODES``, default
``none``), ``KATA_SANDBOX_ROOT`` (the chroot mode's root) and
``KATA_SANDBOX_CPU`` (RLIMIT_CPU seconds, default 60).

The modes, strongest first; ``detect()`` picks the first this machine allows,
and the report's first line says which (``Isolation.line``):

* ``namespaces`` (root with ``CAP_SYS_ADMIN``): mount, IPC, PID and network
  namespaces of its own; its root is a fresh tmpfs, read-only, holding only
  the system's ``/usr`` (and ``/lib*``, ``/bin`` links) and the interpreter's
  prefix, read-only, and the stage folder at its own path;
* ``chroot`` (root with Docker's default capabilities: no namespaces):
  chrooted into a root-owned read-only copy of the interpreter and its
  standard library (``jailroot.py``), the stage folder inside it;
* ``userns`` (not root, where unprivileged user namespaces are allowed): a
  user namespace, then the same namespaces and root as ``namespaces``;
* ``none``: a separate process in its own session with the limits, nothing more.

In ``namespaces`` and ``chroot`` the sandbox then drops every group and takes
the uid of a user of the pool (``pool.py``) that no other sandbox holds; in
``userns`` it keeps the grader's uid, without any capability, where nothing of
the grader's is visible.  In every mode: ``PR_SET_NO_NEW_PRIVS`` and a seccomp
filter (``seccomp.py``: no SysV IPC, keyrings, namespaces, mounts or ptrace),
and rlimits: one process (no fork, no thread), 1 GiB of address space, CPU
seconds, 64 files open, nothing written over 8 MiB, no core files.

At the end ``proc.kata_end()`` kills every process of the lease's uid and
removes its IPC objects; a PID namespace dies with its first process;
``kill_descendants()`` kills whatever the grader's children left behind (the
grader is a child subreaper, so orphans come back to it).
"""
from __future__ import annotations

import ctypes
import functools
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from autograd_kata.classroom.sandbox import jailroot, pool, seccomp
from autograd_kata.core.i18n import t

MODES = ("namespaces", "chroot", "userns", "none")
ENV_MODE, ENV_ROOT, ENV_CPU = "KATA_SANDBOX_MODE", "KATA_SANDBOX_ROOT", "KATA_SANDBOX_CPU"

GiB = 1 << 30
ADDR_NO_RANDOMIZE = 0x0040000  # personality(2): this process's children get no address randomization
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
# <linux/capability.h>: what the chroot mode needs of root
CAP_SETGID, CAP_SETUID, CAP_SYS_CHROOT = 6, 7, 18

# what a Python interpreter needs from the system, bound read-only into the namespaces' root
SYSTEM = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin")
FILES = ("/etc/ld.so.cache",)

_libc = None


def _c():
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
    _check(_c().mount(enc(source), enc(target), enc(fstype), flags, enc(data)), f"mount {target}")


def is_root() -> bool:
    return os.name == "posix" and os.geteuid() == 0


def base_python() -> str:
    return jailroot.python()


# --- which mode ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Isolation:
    mode: str
    why: str = ""      # a catalogue id: why no stronger mode (for "none")
    root: str = ""     # the chroot mode's root

    @property
    def isolated(self) -> bool:
        return self.mode != "none"

    @property
    def line(self) -> str:
        """The report's first line, in words an instructor understands."""
        if self.mode == "none":
            return t("isolation.none", why=t(self.why or "isolation.why.other"))
        return t(f"isolation.{self.mode}")

    def env(self) -> dict:
        """What the judge's ``launcher`` reads."""
        return {ENV_MODE: self.mode, **({ENV_ROOT: self.root} if self.root else {})}


def _capable(*caps: int) -> bool:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            effective = next(int(line.split()[1], 16) for line in f if line.startswith("CapEff:"))
    except (OSError, StopIteration, ValueError):
        return False
    return all(effective >> cap & 1 for cap in caps)


def _works(mode: str, root: str = "") -> bool:
    """Whether a sandbox of ``mode`` starts here: the real launch, on an empty folder."""
    with tempfile.TemporaryDirectory(prefix="kata-probe-") as tmp:
        folder = str(jailroot.stage_folder(Path(root))) if mode == "chroot" else tmp
        os.chmod(tmp, 0o755)
        try:
            proc = launcher(folder, mode=mode, root=root or None, cpu=10)(
                [sys.executable, "-I", "-S", "-c", "pass"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            return False
        try:
            return proc.wait(timeout=30) == 0
        except subprocess.TimeoutExpired:
            proc.kill()
            return False
        finally:
            proc.kata_end()
            if mode == "chroot":
                os.rmdir(folder)


@functools.cache
def detect() -> Isolation:
    """The strongest mode this machine allows, tried for real (once per process)."""
    if not sys.platform.startswith("linux"):
        return Isolation("none", "isolation.why.not_linux")
    if not is_root():
        return Isolation("userns") if _works("userns") else Isolation("none", "isolation.why.no_userns")
    if pool.ensure(1) is None:
        return Isolation("none", "isolation.why.no_user")
    if _works("namespaces"):
        return Isolation("namespaces")
    if not _capable(CAP_SETGID, CAP_SETUID, CAP_SYS_CHROOT):
        return Isolation("none", "isolation.why.no_chroot")
    try:
        root = str(jailroot.ready())
    except (OSError, subprocess.SubprocessError, jailroot.JailBroken):
        return Isolation("none", "isolation.why.no_jail_root")
    if _works("chroot", root):
        return Isolation("chroot", root=root)
    return Isolation("none", "isolation.why.no_chroot")


def isolation() -> tuple[bool, str]:
    """(isolated, the report's first line)."""
    found = detect()
    return found.isolated, found.line


# --- the start ------------------------------------------------------------------------------

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
    _check(_c().unshare(flags), f"unshare({flags:#x})")
    for flag in (CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWPID):
        if optional & flag:
            _c().unshare(flag)  # where the kernel allows it; the other fences hold without it


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
        _c().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
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


def _child(plan: Plan, ids: tuple[int, int] | None) -> None:
    os.setsid()
    # the same addresses on every run (no ASLR for what it execs): code whose answer depends on
    # id() or on a set's order (a set of nodes, ordered by address) answers alike, so --seed
    # reproduces a grading byte for byte
    libc = _c()
    libc.personality(libc.personality(0xFFFFFFFF) | ADDR_NO_RANDOMIZE)
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
    _c().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # after the uid change, which clears it
    seccomp.install()


def launcher(folder, mode: str | None = None, root: str | None = None, cpu: int | None = None):
    """A ``launch(argv, **popen_kwargs) -> Popen`` for the sandbox of ``folder``; ``mode``,
    ``root`` and ``cpu`` default to ``KATA_SANDBOX_MODE`` / ``_ROOT`` / ``_CPU``."""
    folder = os.path.realpath(folder)
    mode = mode or os.environ.get(ENV_MODE) or "none"
    if mode not in MODES:
        raise ValueError(f"{ENV_MODE}={mode!r}: not one of {', '.join(MODES)}")
    root = root or os.environ.get(ENV_ROOT) or None
    if mode == "chroot" and not root:
        raise ValueError(f"{ENV_MODE}=chroot needs {ENV_ROOT}")
    inside = jailroot.inside(Path(root), folder) if root and mode == "chroot" else folder
    plan = Plan(mode, folder, inside, root, base_python(), int(cpu or os.environ.get(ENV_CPU) or 60))

    def launch(argv, **kwargs) -> subprocess.Popen:
        argv = list(argv)
        if argv and argv[0] == sys.executable:
            argv[0] = plan.python
        for key in ("env", "cwd", "preexec_fn", "start_new_session", "user", "group", "extra_groups"):
            kwargs.pop(key, None)
        lease = None
        if mode in ("namespaces", "chroot"):
            lease = pool.acquire()
            if lease is None:
                raise OSError("no sandbox user could be had (useradd?)")
        ids = (lease.uid, lease.gid) if lease else None
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": plan.inside, "PYTHONHASHSEED": "0"}
        try:
            proc = subprocess.Popen(argv, cwd="/", env=env, close_fds=True,
                                    preexec_fn=lambda: _child(plan, ids), **kwargs)
        except BaseException:
            if lease:
                lease.release()
            raise

        def end() -> None:
            """Kill this sandbox and give its uid back, cleaned.  The sandbox goes first, alone,
            so the parents waiting for it in a PID namespace reap it and end by themselves (a
            zombie left to another parent would still count against the uid's one process)."""
            if lease:
                pool.kill_user(lease.uid)
            else:  # the deepest: the sandbox under its parents (userns), or the one process (none)
                for pid in _descendants(proc.pid)[-1:] or [proc.pid]:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
            try:
                proc.wait(timeout=10)  # its parents reap it and end; a loaded machine may take seconds
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            proc.wait()
            if lease:
                lease.release()

        proc.kata_end, proc.kata_uid = end, ids[0] if ids else None  # type: ignore[attr-defined]
        return proc

    launch.folder, launch.folder_inside, launch.mode = folder, inside, mode  # type: ignore[attr-defined]
    return launch


# --- the end ------------------------------------------------------------------------

processes_of, kill_user = pool.processes_of, pool.kill_user


def become_subreaper() -> bool:
    """Orphaned descendants (a double fork, a new session) are re-parented to
    this process instead of init, so ``kill_descendants`` finds them."""
    try:
        return _c().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    if not os.path.isdir("/proc"):
        return tree  # no /proc (macOS): each stage's process group is still killed
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    stat = f.read().decode(errors="replace")
                ppid = int(stat.rsplit(")", 1)[1].split()[1])
                tree.setdefault(ppid, []).append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return tree


def _descendants(pid: int) -> list[int]:
    tree, found, todo = _children(), [], [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def kill_descendants() -> None:
    """SIGKILL every descendant of this process, then reap them."""
    for _ in range(20):
        found = _descendants(os.getpid())
        if not found:
            return
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for pid in found:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
        time.sleep(0.02)


def kill_tree(pid: int) -> None:
    """SIGKILL ``pid``'s descendants, then ``pid`` itself (a stage's judge and
    the sandbox it started, before the other stages are done); the descendants,
    orphaned to this subreaper, are reaped here (``pid`` is its ``Popen``'s to reap)."""
    found = _descendants(pid)
    for p in found + [pid]:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
    try:
        os.killpg(pid, signal.SIGKILL)  # the judge leads its own session (start_new_session)
    except OSError:
        pass
    deadline = time.monotonic() + 2
    while found and time.monotonic() < deadline:
        for p in list(found):
            try:
                if os.waitpid(p, os.WNOHANG)[0]:
                    found.remove(p)
            except ChildProcessError:  # not (or no longer) ours: its own parent reaps it
                found.remove(p)
        time.sleep(0.01)


if __name__ == "__main__":  # setup.sh: make what the strongest jail needs now (users, the chroot root), and say which
    print(detect().line)
