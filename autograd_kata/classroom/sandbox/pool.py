"""The sandbox users: one unprivileged uid per running sandbox, and the sweep after it.

Only root uses this (a grader that can change uid).  Each sandbox process takes
a *lease* on one user of the pool ``kata-sandbox-01`` ... ``kata-sandbox-64``
(created with ``useradd --system`` the first time one is needed): an exclusive
``flock`` on ``/run/kata-sandbox/NN.lock``, held by the judge from before the
sandbox starts until after its end.  Two sandboxes never share a uid, so one
grading's end can kill every process of its users without touching another
grading, and gradings run side by side.  A lease is cleaned when it is taken
and when it is given back (``clean``): every process of the uid is killed,
a detached one included, and every SysV IPC object (shared memory, semaphore
set, message queue) it owns or made is removed.  A judge killed midway drops
its lock with its life; the next lease of that user cleans first, and
``sweep()`` (the end of every grading) cleans every user nobody holds.
"""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import time
from dataclasses import dataclass

try:  # POSIX only; the pool is root's on Linux (on Windows kata grade refuses: commands.py)
    import fcntl
    import pwd
except ImportError:
    fcntl = pwd = None  # type: ignore[assignment]

PREFIX = "kata-sandbox-"
SIZE = 64  # users at most; made one by one, as the sandboxes running at once need them
LOCKS = "/run/kata-sandbox"


def name(n: int) -> str:
    return f"{PREFIX}{n:02d}"


def _lock_dir() -> str:
    folder = LOCKS if os.path.isdir(os.path.dirname(LOCKS)) else "/var/lock/kata-sandbox"
    os.makedirs(folder, mode=0o700, exist_ok=True)
    return folder


def _open_lock(n) -> int:
    return os.open(os.path.join(_lock_dir(), f"{n}.lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                   0o600)


def ids(user: str) -> tuple[int, int] | None:
    """(uid, gid) of ``user``; None if there is no such user or it is root's."""
    try:
        pw = pwd.getpwnam(user)
    except KeyError:
        return None
    return None if pw.pw_uid == 0 or pw.pw_gid == 0 else (pw.pw_uid, pw.pw_gid)


def ensure(n: int) -> tuple[int, int] | None:
    """The pool's user ``n``, created if missing (one useradd at a time)."""
    found = ids(name(n))
    if found is None:
        fd = _open_lock("useradd")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if ids(name(n)) is None:
                subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                                "--user-group", name(n)], capture_output=True, check=False)
        except OSError:
            pass  # no useradd: found stays None
        finally:
            os.close(fd)
        found = ids(name(n))
    return found


def existing() -> list[int]:
    """Numbers of the pool users this machine has."""
    return [n for n in range(1, SIZE + 1) if ids(name(n)) is not None]


@dataclass
class Lease:
    number: int
    uid: int
    gid: int
    fd: int | None

    @property
    def user(self) -> str:
        return name(self.number)

    def release(self) -> None:
        if self.fd is not None:
            clean(self.uid)
            os.close(self.fd)
            self.fd = None


def _try_lock(n) -> int | None:
    """The lock of user ``n``, held, if nobody else holds it."""
    fd = _open_lock(n)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def acquire(wait: float = 600.0) -> Lease | None:
    """A cleaned user nobody else holds; None if no user can be had (no useradd)."""
    deadline = time.monotonic() + wait
    while True:
        for n in range(1, SIZE + 1):
            fd = _try_lock(n)
            if fd is None:
                continue
            found = ensure(n)
            if found is None:
                os.close(fd)
                return None
            if clean(found[0]) and not processes_of(found[0], zombies=True):
                return Lease(n, found[0], found[1], fd)
            os.close(fd)  # a process of it not yet reaped would take the sandbox's one process: the next

        if time.monotonic() > deadline:
            return None
        time.sleep(0.1)  # all 64 in use


def _unheld():
    """The uid of each pool user no running sandbox holds, locked while the caller looks."""
    for n in existing():
        fd = _try_lock(n)
        if fd is None:
            continue
        try:
            found = ids(name(n))
            if found is not None:
                yield found[0]
        finally:
            os.close(fd)


def sweep() -> None:
    """Clean every pool user that no running sandbox holds."""
    for uid in _unheld():
        clean(uid)


def leftovers() -> list[str]:
    """What the users no sandbox holds still have (nothing, when every grading ended well): live
    processes and IPC objects.  (A zombie is dead; a grading still running may hold one until it
    reaps its orphans at its end, and a lease skips a user that has one.)"""
    found = []
    for uid in _unheld():
        found += [f"process {pid} of uid {uid}" for pid in processes_of(uid)]
        found += [f"{kind} {number} of uid {uid}" for kind, number in ipc_of(uid)]
    return found


# --- what a uid leaves behind -----------------------------------------------------------

def processes_of(uid: int, zombies: bool = False) -> list[int]:
    """Live processes of ``uid`` (a zombie is dead: it only waits for its parent to reap it;
    ``zombies=True`` counts them too, as RLIMIT_NPROC does)."""
    found = []
    for entry in (os.listdir("/proc") if os.path.isdir("/proc") else []):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid != uid:
                    continue
                with open(f"/proc/{entry}/stat", "rb") as f:
                    state = f.read().rsplit(b")", 1)[1].split()[0]
                if zombies or state not in (b"Z", b"X"):
                    found.append(int(entry))
            except (OSError, IndexError):
                pass
    return found


def kill_user(uid: int | None) -> bool:
    """Kill every process of ``uid`` (root only); True when none remain."""
    if uid is None or os.geteuid() != 0 or uid == 0:
        return True
    return clean(uid, ipc=False)


def _as(uid: int, work) -> None:
    """Run ``work()`` in a child that has become ``uid``: a user may kill its own processes and
    remove its own IPC objects, which root without CAP_SYS_ADMIN (a container) may not do for it."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(uid)
            work()
        except BaseException:  # noqa: BLE001 - ESRCH: nothing left to kill
            pass
        os._exit(0)
    os.waitpid(pid, 0)


def _kill_all() -> None:
    for _ in range(100):
        os.kill(-1, signal.SIGKILL)


# /proc/sysvipc/<kind>: the id column, the columns of the owner's and the creator's uid, and
# how to remove one (shmctl/semctl/msgctl with IPC_RMID)
IPC = {"shm": (1, ("uid", "cuid"), "shmctl"), "sem": (1, ("uid", "cuid"), "semctl"),
       "msg": (1, ("uid", "cuid"), "msgctl")}
IPC_RMID = 0


def ipc_of(uid: int) -> list[tuple[str, int]]:
    """The SysV IPC objects (kind, id) that ``uid`` owns or made, in this IPC namespace."""
    found = []
    for kind, (id_col, uid_cols, _) in IPC.items():
        try:
            with open(f"/proc/sysvipc/{kind}", encoding="ascii") as f:
                head, *rows = f.read().splitlines()
        except OSError:
            continue
        names = head.split()
        for row in rows:
            cells = row.split()
            if len(cells) == len(names) and any(int(cells[names.index(c)]) == uid for c in uid_cols):
                found.append((kind, int(cells[id_col])))
    return found


def _remove(objects) -> None:
    libc = ctypes.CDLL(None, use_errno=True)  # this process's own libc
    for kind, number in objects:
        if kind == "sem":
            libc.semctl(number, 0, IPC_RMID)
        else:
            getattr(libc, IPC[kind][2])(number, IPC_RMID, None)


def clean(uid: int, kill: bool = True, ipc: bool = True) -> bool:
    """Nothing of ``uid`` runs or remains in IPC; True when that holds."""
    for _ in range(20):
        procs, objects = kill and processes_of(uid), ipc and ipc_of(uid)
        if not procs and not objects:
            return True

        def work(objects=objects, procs=procs):
            if objects:
                _remove(objects)
            if procs:
                _kill_all()
        _as(uid, work)
        time.sleep(0.02)
    return not (kill and processes_of(uid)) and not (ipc and ipc_of(uid))
