"""The end of a grading's processes: whatever the judges and their sandboxes left behind.

The grader becomes a child subreaper (``become_subreaper``), so an orphan (a double fork,
a new session) comes back to it instead of init; ``kill_tree`` ends one judge and the
sandbox it started, ``kill_descendants`` everything still below the grader at its end.
"""
from __future__ import annotations

import os
import signal
import time

from autograd_kata.classroom.sandbox.confine import PR_SET_CHILD_SUBREAPER, prctl


def become_subreaper() -> bool:
    """Orphaned descendants (a double fork, a new session) are re-parented to
    this process instead of init, so ``kill_descendants`` finds them."""
    return prctl(PR_SET_CHILD_SUBREAPER, 1)  # Linux only; elsewhere each judge's session is still killed


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


def descendants(pid: int) -> list[int]:
    tree, found, todo = _children(), [], [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def kill_descendants() -> None:
    """SIGKILL every descendant of this process, then reap them."""
    for _ in range(20):
        found = descendants(os.getpid())
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
    found = descendants(pid)
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
