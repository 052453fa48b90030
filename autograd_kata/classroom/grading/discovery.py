"""Which submitted file a stage grades (README, "Which file is graded"): the grader's
first step, and the only way the grader reads a submitted file (``read_regular``).

A submission is anyone's folder: its walk is iterative and bounded (``MAX_DEPTH``
folders deep, ``MAX_ENTRIES`` entries in all), never follows a link, and takes any
file name (a name that is not UTF-8 is kept as Python's ``surrogateescape`` str;
``shown`` is how a report writes it)."""
from __future__ import annotations

import os
import stat
from collections import deque
from itertools import islice
from pathlib import Path

from autograd_kata.core.manifest import Stage

SKIP_DIRS = ("solutions", "__pycache__", "node_modules", "venv")
MAX_DEPTH, MAX_ENTRIES = 64, 20_000  # a walk stops there: deeper or further is not a submission's layout
MAX_FILE = 1_000_000  # bytes; a bigger "module" is not a submission


def _walk(submission: Path):
    """(folder, file names) of every folder searched, shallowest first, within the bounds."""
    todo, seen = deque([(str(submission), 0)]), 0
    while todo:
        folder, depth = todo.popleft()
        try:
            with os.scandir(folder) as it:
                entries = sorted(islice(it, MAX_ENTRIES + 1 - seen), key=lambda e: e.name)
        except OSError:
            continue
        seen += len(entries)
        files = []
        for e in entries:
            try:
                if e.is_dir(follow_symlinks=False):
                    if depth < MAX_DEPTH and not e.name.startswith(".") and e.name not in SKIP_DIRS:
                        todo.append((e.path, depth + 1))
                else:
                    files.append(e.name)
            except OSError:
                continue
        yield folder, files
        if seen > MAX_ENTRIES:
            return


def find_stage_files(submission: Path, stage: Stage) -> list[Path]:
    """Every file of the submission named like ``stage``'s module, in the
    order of the rule (README, "Which file is graded"): ``exercises/NAME`` at
    the top, then ``NAME`` at the top, then the shallowest, preferring a
    folder named ``exercises``, ties alphabetical.  Hidden folders,
    ``solutions/`` and caches are never searched; the first two places are
    looked at whatever the walk's bounds cut off."""
    submission = Path(submission)
    name = f"{stage.module}.py"
    first = [p for p in (submission / "exercises" / name, submission / name) if os.path.lexists(p)]
    found = first + [Path(folder) / name for folder, files in _walk(submission) if name in files]
    found = list(dict.fromkeys(found))  # the rule's first two, whatever the walk reached

    def rank(p: Path):
        rel = p.relative_to(submission)
        return (rel != Path("exercises") / name, rel != Path(name), len(rel.parts),
                p.parent.name != "exercises", str(rel))
    return sorted(found, key=rank)


def near_misses(submission: Path, stage: Stage, most: int = 5) -> list[Path]:
    """Files that look meant for ``stage`` but are not named its module exactly (a re-download's
    ``stage04_tanh (1).py``, ``stage04_tanh.py.txt``, ``Stage04_Tanh.py``): never graded (the rule
    is the exact name), but named in the reason, so the student knows what to rename."""
    submission, prefix = Path(submission), f"stage{stage.number:02d}"
    exact = f"{stage.module}.py"
    found = [Path(folder) / name for folder, files in _walk(submission) for name in files
             if name != exact and name.lower().startswith(prefix) and ".py" in name.lower()]
    return sorted(found, key=lambda p: (len(p.relative_to(submission).parts), str(p)))[:most]


def read_regular(path: Path, cap: int = MAX_FILE) -> bytes | None:
    """The bytes of ``path`` if it is a regular file (not a link, a FIFO, a device) of at
    most ``cap`` bytes; else None. Never blocks, never follows a link, never reads past ``cap``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > cap:
            return None
        data = b""
        while len(data) <= cap:
            chunk = os.read(fd, cap + 1 - len(data))
            if not chunk:
                break
            data += chunk
        return data if len(data) <= cap else None
    except OSError:
        return None
    finally:
        os.close(fd)


def shown(text: str) -> str:
    """``text`` (a path, a name, a message's line) as a report may print it: a byte that was
    not UTF-8 as ``\\xff``, an ASCII control character (newline, escape, ...) as ``\\x1b``,
    another (U+0085, U+2028) as ``\\u0085``, a backslash as ``\\\\``, so two different names
    never look alike and none starts a line; ``unshown`` reads it back."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the byte that was not UTF-8
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code < 0x20 or 0x7F <= code < 0xA0 or 0xD800 <= code < 0xE000 or code in (0x2028, 0x2029):
            # \x for ASCII only: a C1 control (U+0085) is \u0085, never the \x85 of a byte not UTF-8
            out.append(f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def unshown(text: str) -> str:
    """The text ``shown`` wrote ``text`` for (its inverse: a byte that was not UTF-8 comes back
    as Python's surrogate escape, as ``os.fsdecode`` gives it)."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and text[i + 1:i + 2] == "\\":
            out.append("\\")
            i += 2
        elif text[i] == "\\" and text[i + 1:i + 2] in ("x", "u"):
            width = 2 if text[i + 1] == "x" else 4
            code = int(text[i + 2:i + 2 + width], 16)
            out.append(chr(0xDC00 + code if text[i + 1] == "x" and code >= 0x80 else code))
            i += 2 + width
        else:
            out.append(text[i])
            i += 1
    return "".join(out)
