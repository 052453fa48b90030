"""Write the learner's stubs (``exercises/``) from the reference (``solutions/``).

The reference modules are the single source.  What the learner writes is
marked there, with the nbgrader convention::

    def tanh(self):
        # BEGIN SOLUTION
        ...reference code...
        # END SOLUTION

Each region becomes one line, ``raise NotImplementedError("stage 4: write
Value.tanh (kata hint 4)")``, named after the function that holds it.  A stage
whose stub is *naive code* rather than a raise (stage 6 assigns where it must
add) marks single lines instead::

    total += part  # STUB: total = part

and the stub keeps everything after ``# STUB:`` in place of the line.
"""
from __future__ import annotations

import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from autograd_kata.core.manifest import STAGES, Stage

PRISTINE_DIR = ".kata-pristine"  # a student copy's untouched stubs (written by kata release)

BEGIN = "# BEGIN SOLUTION"
END = "# END SOLUTION"
STUB = "# STUB:"

_DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+(\w+)")
_CLASS = re.compile(r"^(\s*)class\s+(\w+)")


class MarkerError(ValueError):
    """A solution file whose markers do not pair up."""


@dataclass(frozen=True)
class Region:
    """One piece of reference code the learner writes: lines [start, end) of the file."""

    start: int
    end: int
    text: str
    stub: str  # what the learner gets in its place


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _owner(lines: list[str], index: int) -> str:
    """The dotted name of the function (and class) that encloses line ``index``."""
    names, limit = [], len(_indent(lines[index]))
    for line in reversed(lines[:index]):
        match = _DEF.match(line) or _CLASS.match(line)
        if match and len(match.group(1)) < limit:
            names.append(match.group(2))
            limit = len(match.group(1))
            if limit == 0:
                break
    return ".".join(reversed(names)) or "this part"


def regions(source: str, stage: Stage, filename: str = "<solution>") -> list[Region]:
    """Every solution region and STUB line of one reference module, in order."""
    lines = source.splitlines(keepends=True)
    found: list[Region] = []
    begin = None
    for i, line in enumerate(lines):
        mark = line.strip()
        if mark == BEGIN:
            if begin is not None:
                raise MarkerError(f"{filename}:{i + 1}: {BEGIN} inside the region opened at line {begin + 1}")
            begin = i
        elif mark == END:
            if begin is None:
                raise MarkerError(f"{filename}:{i + 1}: {END} without a {BEGIN}")
            what = _owner(lines, begin)
            stub = (f'{_indent(lines[begin])}raise NotImplementedError('
                    f'"stage {stage.number}: write {what} (kata hint {stage.number})")\n')
            found.append(Region(begin, i + 1, "".join(lines[begin + 1:i]), stub))
            begin = None
        elif STUB in line and not mark.startswith("#"):
            code, naive = line.split(STUB, 1)
            found.append(Region(i, i + 1, code.rstrip() + "\n", _indent(line) + naive.strip() + "\n"))
    if begin is not None:
        raise MarkerError(f"{filename}:{begin + 1}: {BEGIN} is never closed by {END}")
    if not found:
        raise MarkerError(f"{filename}: no {BEGIN} region and no {STUB} line: nothing for the learner to write")
    return found


def strip_markers(source: str) -> str:
    """The reference as a reader should see it: markers and STUB notes gone."""
    out = []
    for line in source.splitlines(keepends=True):
        if line.strip() in (BEGIN, END):
            continue
        if STUB in line and not line.strip().startswith("#"):
            line = line.split(STUB, 1)[0].rstrip() + "\n"
        out.append(line)
    return "".join(out)


def stub_source(source: str, stage: Stage, filename: str = "<solution>") -> str:
    """The learner's module: every region replaced by its stub."""
    lines = source.splitlines(keepends=True)
    for region in reversed(regions(source, stage, filename)):
        lines[region.start:region.end] = [region.stub]
    return "".join(lines)


def expected_exercises(root: Path) -> dict[Path, str]:
    """What ``exercises/`` should hold, file by file, generated from ``solutions/``."""
    wanted = {root / "exercises" / "__init__.py": '"""Your code: one module per stage. Edit these."""\n'}
    for stage in STAGES:
        src = root / stage.source("solutions")
        wanted[root / stage.source("exercises")] = stub_source(src.read_text(encoding="utf-8"), stage, str(src))
    return wanted


def pristine_path(root: Path, stage: Stage) -> Path:
    """Where a student copy keeps the untouched stub of ``stage``, for ``kata reset``."""
    return Path(root) / PRISTINE_DIR / stage.source("exercises")


def backup(path: Path, root: Path) -> Path:
    """Copy ``path`` to ``.kata/backups/`` under a timestamped name, and return it."""
    folder = root / ".kata" / "backups"
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = folder / f"{path.stem}.{stamp}{path.suffix}"
    n = 1
    while target.exists():
        n += 1
        target = folder / f"{path.stem}.{stamp}-{n}{path.suffix}"
    shutil.copy2(path, target)
    return target


def build(root: Path, check: bool = False, out=print) -> int:
    """Write (or with ``check``, compare) ``exercises/``. Returns an exit code."""
    if not (root / "solutions").is_dir():
        out("kata build needs solutions/ (the reference), which this copy does not have.")
        out("To restore one stage's stub in a student copy, use: kata reset N")
        return 2
    try:
        wanted = expected_exercises(root)
    except MarkerError as error:
        out(f"kata build: {error}")
        return 2
    stale = [p for p, text in wanted.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
    if check:
        for path in stale:
            state = "is missing" if not path.exists() else "differs from what `kata build` writes"
            out(f"{path.relative_to(root)} {state}")
        if stale:
            out(f"{len(stale)} file(s) out of date: run `kata build` and commit exercises/.")
            return 1
        out(f"exercises/ is up to date ({len(wanted)} files).")
        return 0
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            saved = backup(path, root)
            out(f"saved your {path.relative_to(root)} to {saved.relative_to(root)}")
        path.write_text(wanted[path], encoding="utf-8")
        out(f"wrote {path.relative_to(root)}")
    if not stale:
        out(f"exercises/ is up to date ({len(wanted)} files).")
    return 0


def _command(args) -> int:
    from autograd_kata.core.manifest import find_root
    return build(find_root(), check=args.check)


def register(sub) -> None:
    p = sub.add_parser("build", help="write exercises/ (the stubs) from solutions/ (the reference)",
                       description="Write exercises/ from the solution markers in solutions/. "
                                   "A learner's changed file is saved to .kata/backups/ before it is replaced.")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 naming every file of exercises/ that differs")
    p.set_defaults(func=_command)
