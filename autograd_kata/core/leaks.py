"""The leak scan: no solution region's text in a student copy, a learner's kit or
the wheel (``scan``); a copy with a leak is refused whole (``refuse_leaks``)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autograd_kata.core.build import PRISTINE_DIR
from autograd_kata.core.manifest import STAGES, Stage

MIN_LEAK = 10  # a region shorter than this (whitespace removed), e.g. `return []`, is ordinary code
MIN_LINE_LEAK = 40  # one line of a region this long (whitespace removed) is a leak on its own


@dataclass(frozen=True)
class Leak:
    path: str          # relative to the scanned folder
    stage: int         # whose reference code it is
    owner: str         # the function the region belongs to
    excerpt: str       # the region's first line
    found: int         # times the region occurs there
    allowed: int       # times it may occur there (carried code of earlier stages)

    def __str__(self) -> str:
        return (f"{self.path}: stage {self.stage}'s solution of {self.owner} "
                f"({self.excerpt!r}) appears {self.found}x, allowed {self.allowed}x")


def normalize(text: str) -> str:
    """Code reduced to what identifies it: comments and all whitespace removed,
    blank lines dropped (so re-indenting or re-spacing a region does not hide it)."""
    out = []
    for line in text.splitlines():
        line = _strip_comment(line)
        line = "".join(line.split())
        if line:
            out.append(line)
    return "\n".join(out)


def _strip_comment(line: str) -> str:
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            return line[:i]
    return line


@dataclass(frozen=True)
class _Region:
    stage: Stage
    owner: str
    excerpt: str
    key: str  # normalized text


def solution_regions(root: Path) -> list[_Region]:
    """Every solution region of every stage, normalized for the scan."""
    from autograd_kata.core.build import owner_of, regions

    found = []
    for s in STAGES:
        path = Path(root) / s.source("solutions")
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines(keepends=True)
        for r in regions(text, s, str(path)):
            key = normalize(r.text)
            if len(key.replace("\n", "")) < MIN_LEAK:
                continue
            first = next((ln.strip() for ln in r.text.splitlines() if ln.strip()), "")
            owner = owner_of(lines, r.start)
            found.append(_Region(s, owner, first[:60], key))
            found.extend(_Region(s, owner, _line_excerpt(r.text, line), line)
                         for line in dict.fromkeys(key.splitlines())
                         if len(line) >= MIN_LINE_LEAK and line != key)
    return found


def _line_excerpt(text: str, key: str) -> str:
    """The region's line whose normalized form is ``key``, as written (for the report)."""
    return next((ln.strip() for ln in text.splitlines() if normalize(ln) == key), key)[:60]


def scan(folder: Path, reference_root: Path) -> list[Leak]:
    """Reference code in ``folder``, by the kata's definition of a leak.

    A solution region of stage N leaks when its text (normalized) appears, and so
    does any single line of it at least ``MIN_LINE_LEAK`` characters long (so a
    solution cannot ship re-wrapped into another function, line by line),

    * in ``exercises/stageNN`` itself more often than in the stub ``kata build``
      writes for it (normally: at all);
    * in an exercises module of an earlier stage, unless that exact text is
      also carried reference code there (it is in the stub ``kata build``
      writes for that module): stage 6's ``+=`` lines legitimately appear in
      stages 3-5 as carried stage 2 and 4 code;
    * anywhere in any other file (hints, README, tests, the tool, workflows).

    Later stages' exercises modules carry it by design.  A ``solutions/``
    folder anywhere is a leak in itself.
    """
    from autograd_kata.core.build import stub_source

    folder, reference_root = Path(folder), Path(reference_root)
    regions_ = solution_regions(reference_root)
    expected = {}
    for s in STAGES:
        src = reference_root / s.source("solutions")
        expected[s.source("exercises")] = normalize(stub_source(src.read_text(encoding="utf-8"), s, str(src)))
    leaks: list[Leak] = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if path.is_dir():
            if path.name == "solutions":
                leaks.append(Leak(rel + "/", 0, "everything", "a solutions/ folder", 1, 0))
            continue
        if not path.is_file():
            continue
        try:
            text = normalize(path.read_bytes().decode("utf-8", errors="replace"))
        except OSError:
            continue
        module = _exercise_stage(rel)
        for region in regions_:
            found = text.count(region.key)
            if not found:
                continue
            if module is not None and module.number > region.stage.number:
                continue  # a later stage carries it
            allowed = expected[module.source("exercises")].count(region.key) if module is not None else 0
            if module is not None and module.number < region.stage.number and allowed:
                continue  # an earlier stage's module, where this exact text is carried reference code
            if found > allowed:
                leaks.append(Leak(rel, region.stage.number, region.owner, region.excerpt, found, allowed))
    return leaks


def refuse_leaks(staging: Path, root: Path, what: str, out=print) -> bool:
    """Scan ``staging``; on any leak say so (``what`` names the output) and return True."""
    leaks = scan(staging, root)
    if leaks:
        out(f"REFUSED: reference code would leak into {what} ({len(leaks)} place(s)); nothing was written.")
        for leak in leaks:
            out(f"  {leak}")
    return bool(leaks)


def _exercise_stage(rel: str) -> Stage | None:
    """The stage whose exercises module ``rel`` is (at its usual place or a
    pristine copy of it); None for any other file."""
    for s in STAGES:
        if rel in (s.source("exercises"), f"{PRISTINE_DIR}/{s.source('exercises')}"):
            return s
    return None
