"""The sandbox's jail: how the process that runs submitted code is started and ended.

Interface (for ``conftest.py`` / ``remote.py``)::

    from autograd_kata.classroom.jail import launcher
    launch = launcher(folder)              # folder = the --sandbox stage folder
    proc = launch([sys.executable, "-I", "-S", server, ...],
                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=...)

``launch`` returns a ``subprocess.Popen``.  It sets cwd (the stage folder),
a minimal environment (the caller's ``env`` is ignored on purpose: the judge's
environment holds ``KATA_HIDDEN_SEED``) and its own session (``os.setsid``),
so ``os.killpg(proc.pid, SIGKILL)`` ends the sandbox and its children.
Inside the jail only the stage folder and the standard library exist (not
the venv, not this package): run the server as ``-c <its text>``.  An
``argv[0]`` equal to ``sys.executable`` is replaced by the base interpreter
(a venv's ``bin/python`` is not visible inside the jail; with ``-I -S`` the
venv adds nothing).  The grader passes its choices to the judge in the
environment, read by ``launcher``:

* ``KATA_SANDBOX_USER``  -- the unprivileged user the sandbox runs as (set
  only when the grader is root); unset: no uid change.
* ``KATA_SANDBOX_CPU``   -- RLIMIT_CPU seconds for the sandbox (default 60).

What the jail does when the grader is root (``isolation()`` says which):

* a mount namespace of its own, where the sandbox's root is a fresh tmpfs
  holding only, read-only, the system's ``/usr`` (and ``/lib*``, ``/bin``
  links), the interpreter's prefix, ``/dev/null|zero|random|urandom``, an empty
  ``/tmp`` (private, vanishes with it) and the stage folder at its own path:
  the reference, the tests, the judge's scratch, the results folder, other
  students' work and the venv are simply not there;
* a network namespace of its own (no network), where the kernel allows it;
* ``setgroups([])``, then gid and uid of ``kata-sandbox`` (created with
  ``useradd --system`` when missing): it cannot write the venv, the scratch
  or the results, nor signal the judge;
* rlimits: address space 1 GiB, CPU seconds, 64 processes, files of 8 MiB,
  no core files.

Without root: the same separate process, in its own session, with the
rlimits; no uid change and no hidden disk (``isolation()`` says so and the
report's first line repeats it).

At the end ``kill_user(uid)`` kills every process of the sandbox user (a
detached process in its own session included; so one grading at a time holds
``UserLock`` while it uses that user), and ``kill_descendants()``
kills whatever the grader's children left behind (the grader is a child
subreaper, so orphans come back to it instead of to init).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import pwd
import resource
import signal
import subprocess
import sys
import time

SANDBOX_USER = "kata-sandbox"
ENV_USER = "KATA_SANDBOX_USER"
ENV_CPU = "KATA_SANDBOX_CPU"

GiB = 1 << 30
LIMITS = {  # rlimit -> value; RLIMIT_CPU comes from KATA_SANDBOX_CPU
    resource.RLIMIT_AS: GiB,
    resource.RLIMIT_NPROC: 64,
    resource.RLIMIT_FSIZE: 8 << 20,
    resource.RLIMIT_CORE: 0,
}

# <sched.h>, <sys/mount.h>, <sys/prctl.h>
CLONE_NEWNS, CLONE_NEWNET = 0x00020000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 32, 4096, 0x4000, 1 << 18
PR_SET_CHILD_SUBREAPER = 36

# what a Python interpreter needs from the system, bound read-only into the jail
SYSTEM = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin")
DEVICES = ("/dev/null", "/dev/zero", "/dev/random", "/dev/urandom")
FILES = ("/etc/ld.so.cache",)

_libc = None


def _c():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
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


def ensure_user(name: str = SANDBOX_USER) -> tuple[int, int] | None:
    """(uid, gid) of the sandbox user, created if missing; None without root
    or when it cannot be created."""
    if not is_root():
        return None
    for attempt in range(2):
        try:
            pw = pwd.getpwnam(name)
            if pw.pw_uid == 0 or pw.pw_gid == 0:
                return None  # never "sandbox" as root
            return pw.pw_uid, pw.pw_gid
        except KeyError:
            if attempt:
                return None
            subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                            "--user-group", name], capture_output=True, check=False)
    return None


def namespaces_work() -> bool:
    """Whether this machine lets root make a mount namespace (containers may not)."""
    if not is_root():
        return False
    probe = subprocess.run([base_python(), "-I", "-S", "-c", "import ctypes, sys\n"
                            "libc = ctypes.CDLL(None, use_errno=True)\n"
                            f"sys.exit(0 if libc.unshare({CLONE_NEWNS}) == 0 else 1)"],
                           capture_output=True, check=False)
    return probe.returncode == 0


def isolation() -> tuple[bool, str]:
    """(uid isolation available, one line for the report)."""
    if not is_root():
        return False, ("uid isolation was not available (the grader is not root): the submitted code ran in "
                       "its own process, but as the grading user, and could read what that user can read")
    if ensure_user() is None:
        return False, f"uid isolation was not available (could not create the user {SANDBOX_USER})"
    if not namespaces_work():
        return False, ("uid isolation was not available (this machine refuses a mount namespace, so the disk "
                       "cannot be hidden)")
    return True, (f"isolation: each stage's code ran as the unprivileged user {SANDBOX_USER}, in a jail that "
                  f"shows it only its own file and the Python standard library")


def base_python() -> str:
    return os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)


def _set_limits(cpu: int) -> None:
    for which, value in {**LIMITS, resource.RLIMIT_CPU: cpu}.items():
        soft, hard = resource.getrlimit(which)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            if sys.platform.startswith("linux"):
                raise  # Linux has them all; elsewhere (macOS: RLIMIT_AS) one may be refused



def _build_root(folder: str, python: str) -> None:
    """In a new mount namespace: a tmpfs at ``folder`` becomes the new root,
    holding the system read-only and ``folder``'s own contents at its path."""
    libc = _c()
    _check(libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    libc.unshare(CLONE_NEWNET)  # no network if the kernel allows it; not fatal
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    # opened in the new namespace (a bind source must be in it), before the tmpfs hides it
    keep = os.open(folder, os.O_PATH | os.O_DIRECTORY)
    root = folder
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64m")

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
            _mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID)
        except OSError:
            pass  # read-only is a second fence; the uid cannot write there anyway

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
    for path in DEVICES + FILES:
        if os.path.exists(path):
            bind(path, inside(path), is_dir=False)
    os.makedirs(inside("/tmp"), exist_ok=True)
    os.chmod(inside("/tmp"), 0o1777)
    # not recursive: the tmpfs now mounted on folder would come along and hide it again
    bind(f"/proc/self/fd/{keep}", inside(folder), flags=MS_BIND)
    os.close(keep)
    os.chroot(root)
    os.chdir(folder)


def _child(folder: str, python: str, user: tuple[int, int] | None, cpu: int) -> None:
    os.setsid()
    if user is not None:
        _build_root(folder, python)
    else:
        os.chdir(folder)
    _set_limits(cpu)
    if user is not None:
        os.setgroups([])
        os.setgid(user[1])
        os.setuid(user[0])
        if os.getuid() == 0 or os.geteuid() == 0:
            os._exit(126)  # never run submitted code as root


def launcher(folder, user: str | None = None, cpu: int | None = None):
    """A ``launch(argv, **popen_kwargs) -> Popen`` for the sandbox of ``folder``.
    ``user`` and ``cpu`` default to ``KATA_SANDBOX_USER`` / ``KATA_SANDBOX_CPU``."""
    folder = os.path.realpath(folder)
    user = user if user is not None else os.environ.get(ENV_USER) or None
    cpu = int(cpu or os.environ.get(ENV_CPU) or 60)
    ids = None
    if user:
        pw = pwd.getpwnam(user)
        if pw.pw_uid == 0:
            raise ValueError(f"{ENV_USER}={user} is root")
        ids = (pw.pw_uid, pw.pw_gid)
    python = base_python()

    def launch(argv, **kwargs) -> subprocess.Popen:
        argv = list(argv)
        if argv and argv[0] == sys.executable:
            argv[0] = python
        for key in ("env", "cwd", "preexec_fn", "start_new_session", "user", "group", "extra_groups"):
            kwargs.pop(key, None)
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": folder, "TMPDIR": "/tmp"}
        return subprocess.Popen(argv, cwd="/", env=env, close_fds=True,
                                preexec_fn=lambda: _child(folder, python, ids, cpu), **kwargs)

    launch.folder, launch.user, launch.uid = folder, user, ids[0] if ids else None
    return launch


# --- the end ------------------------------------------------------------------------

def processes_of(uid: int) -> list[int]:
    """Live processes of ``uid`` (a zombie is dead: it only waits for its parent to reap it)."""
    found = []
    for entry in (os.listdir("/proc") if os.path.isdir("/proc") else []):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid != uid:
                    continue
                with open(f"/proc/{entry}/stat", "rb") as f:
                    state = f.read().rsplit(b")", 1)[1].split()[0]
                if state not in (b"Z", b"X"):
                    found.append(int(entry))
            except (OSError, IndexError):
                pass
    return found


def kill_user(uid: int | None) -> bool:
    """Kill every process of ``uid`` (root only): a child takes that uid and
    sends SIGKILL to -1 until nothing is left. True when none remain."""
    if uid is None or not is_root() or uid == 0:
        return True
    for _ in range(20):
        pid = os.fork()
        if pid == 0:
            try:
                os.setgroups([])
                os.setgid(65534)
                os.setuid(uid)
                for _ in range(100):
                    os.kill(-1, signal.SIGKILL)
            except BaseException:  # noqa: BLE001 - ESRCH: nothing left to kill
                pass
            os._exit(0)
        os.waitpid(pid, 0)
        if not processes_of(uid):
            return True
        time.sleep(0.05)
    return not processes_of(uid)


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


def kill_descendants() -> None:
    """SIGKILL every descendant of this process, then reap them."""
    me = os.getpid()
    for _ in range(20):
        tree, found, todo = _children(), [], [me]
        while todo:
            for child in tree.get(todo.pop(), []):
                found.append(child)
                todo.append(child)
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


class UserLock:
    """One grading at a time may use the sandbox user: its end kills every
    process of that user, which must not be another grading's sandbox.  An
    exclusive ``flock`` on a root-only file, held from before the first
    sandbox starts until after ``kill_user``; a second grader waits."""

    def __init__(self, path: str = "/run/kata-sandbox.lock"):
        self.path, self.fd = path if os.path.isdir(os.path.dirname(path)) else "/var/lock/kata-sandbox.lock", None

    def __enter__(self):
        import fcntl
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        os.close(self.fd)  # releases the lock
        self.fd = None


def kill_tree(pid: int) -> None:
    """SIGKILL ``pid``'s descendants, then ``pid`` itself (a stage's judge and
    the sandbox it started, before the other stages are done)."""
    tree, found, todo = _children(), [], [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    for p in found + [pid]:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
    try:
        os.killpg(pid, signal.SIGKILL)  # the judge leads its own session (start_new_session)
    except OSError:
        pass
