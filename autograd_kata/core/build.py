"""Cut the reference (``solutions/``) and the learner's stubs (``exercises/``)
out of the one engine source, ``reference/engine.py``.

The engine is written once.  Stage-range markers in it say in which stage
each piece appears and, when a later stage replaces it, in which stage it
goes (the syntax is documented at the top of ``reference/engine.py``).
``cut(source, stage)`` writes one stage's reference module, which keeps the
nbgrader markers around what the learner writes::

    def tanh(self):
        # BEGIN SOLUTION
        ...reference code...
        # END SOLUTION

``stub_source`` turns each region into one line, ``raise
NotImplementedError("stage 4: write Value.tanh (kata hint 4)")``, named after
the function that holds it (a second region in the same function becomes
``pass  # stage N: part 2 ...``, so a stub never raises twice).  A stage whose
stub is *naive code* rather than a raise (stage 6 assigns where it must add)
marks single lines instead::

    total += part  # STUB: total = part

and the stub keeps everything after ``# STUB:`` in place of the line.
"""
from __future__ import annotations

import ast
import io
import re
import shutil
import time
import tokenize
from dataclasses import dataclass
from pathlib import Path

from autograd_kata.core.errors import Refusal
from autograd_kata.core.i18n import t
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


def owner_of(lines: list[str], index: int) -> str:
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
    begin: int | None = None
    owners: list[str] = []
    for i, line in enumerate(lines):
        mark = line.strip()
        if mark == BEGIN:
            if begin is not None:
                raise MarkerError(f"{filename}:{i + 1}: {BEGIN} inside the region opened at line {begin + 1}")
            begin = i
        elif mark == END:
            if begin is None:
                raise MarkerError(f"{filename}:{i + 1}: {END} without a {BEGIN}")
            what = owner_of(lines, begin)
            part = owners.count(what) + 1
            owners.append(what)
            if part == 1:
                stub = (f'{_indent(lines[begin])}raise NotImplementedError('
                        f'"stage {stage.number}: write {what} (kata hint {stage.number})")\n')
            else:  # the first part already raises: a second raise would follow dead code
                stub = (f'{_indent(lines[begin])}pass  # stage {stage.number}: part {part} of {what} '
                        f'goes here (kata hint {stage.number})\n')
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


# --- the one engine source ---------------------------------------------------

ENGINE = "reference/engine.py"  # the reference engine, written once

_RANGE = re.compile(r"^\s*# >> (?:stage (\d+)( only)?|stages (\d+)-(\d+))\s*$")
_CLOSE = re.compile(r"^\s*# <<\s*$")
_BEFORE = re.compile(r"\s+# before (\d+): (.+?)\s*$")
SOLUTIONS_INIT = ('"""The reference, one module per stage, the learner\'s parts between solution markers.\n\n'
                  'Generated by `kata build` from reference/engine.py: edit that, never these."""\n')
EXERCISES_INIT = '"""Your code: one module per stage. Edit these."""\n'


def _split_comment(line: str) -> tuple[str, str]:
    """``line`` as (code, trailing comment with the spaces before it)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline))
    except (tokenize.TokenError, SyntaxError):
        return line, ""
    for tok in tokens:
        if tok.type == tokenize.COMMENT:
            cut = len(_indent(line)) + tok.start[1]
            code = line[:cut].rstrip()
            return code, line[len(code):cut] + line[cut:]
    return line, ""


def banner(stage: Stage, indent: str = "") -> str:
    return (f"{indent}# ---- stage {stage.number} starts here: its first new line "
            f"(kata diff {stage.number} --previous shows all it adds) ----\n")


def cut(source: str, stage: Stage, filename: str = ENGINE) -> str:
    """The reference module of ``stage`` (solution markers kept) cut from the engine source."""
    out: list[tuple[str, int]] = []  # (line, the stage it first appears in)
    ranges: list[tuple[int, int, int]] = []  # (first stage, last stage, line number)
    for number, line in enumerate(source.splitlines(keepends=True), 1):
        text = line.rstrip("\n")
        if text.lstrip().startswith("##"):
            continue  # a maintainer's note
        opened = _RANGE.match(text)
        if opened:
            if opened.group(1):
                first = int(opened.group(1))
                last = first if opened.group(2) else 10 ** 6
            else:
                first, last = int(opened.group(3)), int(opened.group(4))
                if last < first:
                    raise MarkerError(f"{filename}:{number}: stages {first}-{last} is an empty range")
            ranges.append((first, last, number))
            continue
        if _CLOSE.match(text):
            if not ranges:
                raise MarkerError(f"{filename}:{number}: `# <<` closes no range")
            ranges.pop()
            continue
        if not all(first <= stage.number <= last for first, last, _ in ranges):
            continue
        since = max((first for first, _, _ in ranges), default=1)
        if text.strip() in (BEGIN, END) and since != stage.number:
            continue  # an earlier stage's region: here it is plain reference code
        before = _BEFORE.search(text)
        if before:
            changes, old = int(before.group(1)), before.group(2)
            code, comment = _split_comment(text[:before.start()])
            if stage.number < changes:
                line = f"{_indent(text)}{old}{comment}\n"
            elif stage.number == changes:
                line = f"{code}{comment}  {STUB} {old}{comment}\n"
                since = changes
            else:
                line = f"{code}{comment}\n"
                since = max(since, changes)
        if line.strip() or out:  # the notes' blank lines do not start a module
            out.append((line, since))
    if ranges:
        raise MarkerError(f"{filename}:{ranges[-1][2]}: this range is never closed by `# <<`")
    text = "".join(line for line, _ in out)
    try:
        tree = ast.parse(text)
    except SyntaxError as error:
        raise MarkerError(f"{filename}: stage {stage.number}'s module does not parse: {error}") from None
    start = 0
    if tree.body and isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Constant):
        start = tree.body[0].end_lineno or 0  # the banner never goes above the module docstring
    for i in range(start, len(out)):
        line, since = out[i]
        if since == stage.number and line.strip():
            out.insert(i, (banner(stage, _indent(line)), since))
            break
    else:
        raise MarkerError(f"{filename}: stage {stage.number} adds nothing")
    return "".join(line for line, _ in out)


def expected_files(root: Path) -> dict[Path, str]:
    """What ``solutions/`` and ``exercises/`` should hold, file by file, cut from the engine source."""
    root = Path(root)
    path = root / ENGINE
    source = path.read_text(encoding="utf-8")
    wanted = {root / "solutions" / "__init__.py": SOLUTIONS_INIT,
              root / "exercises" / "__init__.py": EXERCISES_INIT}
    for stage in STAGES:
        reference = cut(source, stage, str(path))
        wanted[root / stage.source("solutions")] = reference
        wanted[root / stage.source("exercises")] = stub_source(reference, stage, stage.source("solutions"))
    return wanted


def expected_exercises(root: Path) -> dict[Path, str]:
    """What ``exercises/`` should hold, file by file: the engine source's cut when
    there is one, else the stubs generated from ``solutions/``."""
    root = Path(root)
    if (root / ENGINE).is_file():
        return {p: text for p, text in expected_files(root).items() if p.parent.name == "exercises"}
    wanted = {root / "exercises" / "__init__.py": EXERCISES_INIT}
    for stage in STAGES:
        src = root / stage.source("solutions")
        wanted[root / stage.source("exercises")] = stub_source(src.read_text(encoding="utf-8"), stage, str(src))
    return wanted


def previous_diff(root: Path, stage: Stage, reveal: bool = False) -> list[str]:
    """What ``stage`` adds to the stage before it, as unified-diff lines (no
    newlines).  The stubs by default (the earlier stage's reference plus this
    stage's stubs: nothing is given away); with ``reveal``, the reference
    modules.  FileNotFoundError says what is missing."""
    import difflib

    root = Path(root)

    def module(s: Stage) -> tuple[str, list[str]]:
        reference = root / s.source("solutions")
        if reference.is_file():
            text = reference.read_text(encoding="utf-8")
            if reveal:
                return s.source("solutions"), strip_markers(text).splitlines()
            return t("diff.stub_label", file=s.source("exercises")), stub_source(text, s, str(reference)).splitlines()
        if reveal:
            raise FileNotFoundError(t("diff.previous_no_reference", file=s.source("solutions"), n=stage.number))
        pristine = pristine_path(root, s)
        if not pristine.is_file():
            raise FileNotFoundError(t("diff.previous_nothing", file=s.source("solutions"),
                                      pristine=pristine.relative_to(root).as_posix(), n=s.number))
        return t("diff.stub_label", file=s.source("exercises")), pristine.read_text(encoding="utf-8").splitlines()

    def without_banner(s: Stage, lines: list[str]) -> list[str]:
        return [line for line in lines if line.strip() != banner(s).strip()]

    earlier = next((s for s in STAGES if s.number == stage.number - 1), None)
    old_name, old = module(earlier) if earlier else ("(nothing: stage 1 is the first)", [])
    new_name, new = module(stage)
    old = without_banner(earlier, old) if earlier else old
    return list(difflib.unified_diff(old, without_banner(stage, new), fromfile=old_name, tofile=new_name,
                                     lineterm=""))


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
    """Write (or with ``check``, compare) ``solutions/`` and ``exercises/``, both
    cut from the engine source. Returns an exit code."""
    root = Path(root)
    if not (root / ENGINE).is_file():
        raise Refusal(f"kata build needs {ENGINE} (the reference engine), which this copy does not have.\n"
                      "To restore one stage's stub in a student copy, use: kata reset N", 2, where=None)
    try:
        wanted = expected_files(root)
    except MarkerError as error:
        raise Refusal(str(error), 2, where="build") from None
    stale = [p for p, text in wanted.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
    if check:
        for path in stale:
            state = "is missing" if not path.exists() else "differs from what `kata build` writes"
            out(f"{path.relative_to(root)} {state}")
        if stale:
            out(f"{len(stale)} file(s) out of date with {ENGINE}: "
                "run `kata build` and commit solutions/ and exercises/.")
            return 1
        out(f"solutions/ and exercises/ are up to date with {ENGINE} ({len(wanted)} files).")
        return 0
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            saved = backup(path, root)
            out(f"saved your {path.relative_to(root)} to {saved.relative_to(root)}")
        path.write_text(wanted[path], encoding="utf-8")
        out(f"wrote {path.relative_to(root)}")
    if not stale:
        out(f"solutions/ and exercises/ are up to date with {ENGINE} ({len(wanted)} files).")
    return 0


def build_command(check: bool = False) -> int:
    """``kata build [--check]``."""
    from autograd_kata.core.manifest import find_root
    return build(find_root(), check=check)
