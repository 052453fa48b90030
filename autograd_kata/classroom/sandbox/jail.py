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
  the chroot mode's read-only copy of the interpreter and its standard library
  (``jailroot.py``; the system's ``/usr``, ``/lib*`` and the interpreter's
  prefix where no copy can be made), and the stage folder at its own path;
* ``chroot`` (root with Docker's default capabilities: no namespaces):
  chrooted into a root-owned read-only copy of the interpreter and its
  standard library (``jailroot.py``), the stage folder inside it;
* ``userns`` (not root, where unprivileged user namespaces are allowed): a
  user namespace, then the same namespaces as ``namespaces``, its root holding
  the system's ``/usr`` and ``/lib*`` and the interpreter's prefix;
* ``none``: a separate process in its own session with the limits, nothing more.

In ``namespaces`` and ``chroot`` the sandbox then drops every group and takes
the uid of a user of the pool (``pool.py``) that no other sandbox holds; in
``userns`` it keeps the grader's uid, without any capability, where nothing of
the grader's is visible.  In every mode (``confine.py`` sets it up in the
child): ``PR_SET_NO_NEW_PRIVS`` and a seccomp filter (``seccomp.py``: no SysV
IPC, keyrings, namespaces, mounts or ptrace), and rlimits: one process (no
fork, no thread), 1 GiB of address space, CPU seconds, 64 files open, nothing
written over 8 MiB, no core files.

At the end ``proc.kata_end()`` kills every process of the lease's uid and
removes its IPC objects; a PID namespace dies with its first process;
``kill_descendants()`` kills whatever the grader's children left behind (the
grader is a child subreaper, so orphans come back to it: ``reaper.py``).
"""
from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from autograd_kata.classroom.sandbox import jailroot, pool, seccomp
from autograd_kata.classroom.sandbox.confine import LIMITS, GiB, Plan, child, die_with_parent, not_dumpable
from autograd_kata.classroom.sandbox.reaper import become_subreaper, descendants, kill_descendants, kill_tree
from autograd_kata.core.i18n import t

__all__ = ["GiB", "LIMITS", "MODES", "Isolation", "LaunchError", "become_subreaper", "detect", "die_with_parent",
           "is_root", "isolation", "kill_descendants", "kill_tree", "launcher", "not_dumpable"]

MODES = ("namespaces", "chroot", "userns", "none")
ENV_MODE, ENV_ROOT, ENV_CPU = "KATA_SANDBOX_MODE", "KATA_SANDBOX_ROOT", "KATA_SANDBOX_CPU"
# <linux/capability.h>: what the chroot mode needs of root
CAP_SETGID, CAP_SETUID, CAP_SYS_CHROOT = 6, 7, 18


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
        """The report's first line, in words an instructor understands: in ``none``, what the
        system-call filter still holds where there is one (Linux), and that nothing does elsewhere."""
        if self.mode == "none":
            held = "isolation.none" if seccomp.available() else "isolation.none_unfiltered"
            return t(held, why=t(self.why or "isolation.why.other"))
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
                jailroot.remove_stage(Path(folder))


@functools.cache
def detect() -> Isolation:
    """The strongest mode this machine allows, tried for real (once per process)."""
    if not sys.platform.startswith("linux"):
        return Isolation("none", "isolation.why.not_linux")
    if not is_root():
        return Isolation("userns") if _works("userns") else Isolation("none", "isolation.why.no_userns")
    if pool.ensure(1) is None:
        return Isolation("none", "isolation.why.no_user")
    try:  # the read-only copy of the interpreter and its standard library, no site-packages
        root = str(jailroot.ready())
    except (OSError, subprocess.SubprocessError, jailroot.JailBroken):
        root = ""
    if root and _works("namespaces", root):
        return Isolation("namespaces", root=root)  # that copy as the namespace's system
    if _works("namespaces"):
        return Isolation("namespaces")  # no copy could be made here: the system's /usr instead
    if not _capable(CAP_SETGID, CAP_SETUID, CAP_SYS_CHROOT):
        return Isolation("none", "isolation.why.no_chroot")
    if not root:
        return Isolation("none", "isolation.why.no_jail_root")
    if _works("chroot", root):
        return Isolation("chroot", root=root)
    return Isolation("none", "isolation.why.no_chroot")


def isolation() -> tuple[bool, str]:
    """(isolated, the report's first line)."""
    found = detect()
    return found.isolated, found.line


# --- the start ------------------------------------------------------------------------------

class LaunchError(OSError):
    """The sandbox could not be started; its message says in which mode and why (nothing ran)."""


def _reason(why: int) -> str:
    """What the failed set-up wrote on its pipe (every writer of it is gone by now)."""
    os.set_blocking(why, False)
    try:
        return os.read(why, 4000).decode(errors="replace").strip()
    except BlockingIOError:
        return ""


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
    not_dumpable()  # the launching process (the judge): its environment holds the hidden seed

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
        why, told = os.pipe()  # the set-up's reason, if a step of it fails (confine.child)
        try:
            proc = subprocess.Popen(argv, cwd="/", env=env, close_fds=True,
                                    preexec_fn=lambda: child(plan, ids, told), **kwargs)
        except BaseException as error:
            if lease:
                lease.release()
            os.close(told)
            reason = _reason(why)
            os.close(why)
            if not isinstance(error, (OSError, subprocess.SubprocessError)):
                raise
            raise LaunchError(t("sandbox.launch_failed", mode=mode, why=reason or str(error))) from None
        os.close(told)
        os.close(why)

        def end() -> None:
            """Kill this sandbox and give its uid back, cleaned.  The sandbox goes first, alone,
            so the parents waiting for it in a PID namespace reap it and end by themselves (a
            zombie left to another parent would still count against the uid's one process)."""
            if lease:
                pool.kill_user(lease.uid)
            else:  # the deepest: the sandbox under its parents (userns), or the one process (none)
                for pid in descendants(proc.pid)[-1:] or [proc.pid]:
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


if __name__ == "__main__":  # setup.sh: make what the strongest jail needs now (users, the chroot root), and say which
    print(detect().line)
