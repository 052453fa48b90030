"""What a course keeps of one student's grading (the ``course`` part of its JSON): what
the grading depended on (the stage files' and the grader's tests' hashes: a rerun skips a
student whose two hashes are unchanged), each stage's status and the classic mistakes
its failures name."""
from __future__ import annotations

import errno
import hashlib
import os
from pathlib import Path

from autograd_kata import __version__
from autograd_kata.classroom.grading.discovery import MAX_FILE, find_stage_files, near_misses, read_regular, shown
from autograd_kata.core.i18n import Text
from autograd_kata.core.mistakes import PHRASES

# a stage's status in the summary, in the summary's order
STATUSES = ("passed", "failed", "not_started", "no_import", "hangs", "crashes", "misnamed", "no_file", "not_graded")


def files_hash(submission: Path, stages) -> str:
    """Every candidate file of every graded stage (its path, as bytes, and its bytes when it is
    a regular file the grading would read): what the grading reads; and the names of the files
    nearly named so (``misnamed``). Never reads anything else."""
    h = hashlib.sha256()
    for s in stages:
        for path in find_stage_files(submission, s):
            h.update(f"{s.number}\0".encode() + os.fsencode(path.relative_to(submission)) + b"\0")
            data = read_regular(path, MAX_FILE)
            h.update(b"?" if data is None else hashlib.sha256(data).digest())
        for path in near_misses(submission, s):  # named in the summary: a new one is seen at a rerun
            h.update(b"near\0" + os.fsencode(path.relative_to(submission)) + b"\0")
    return h.hexdigest()


def tests_hash(grader_root: Path) -> str:
    """The grader's tests/, conftest.py, pyproject.toml and the kata's version."""
    root = Path(grader_root)
    h = hashlib.sha256(__version__.encode())
    paths = [p for p in sorted((root / "tests").rglob("*.py")) if "__pycache__" not in p.parts]
    paths += [root / name for name in ("conftest.py", "pyproject.toml") if (root / name).is_file()]
    for path in paths:
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def _normal(text: bytes) -> bytes:
    return b"\n".join(line.rstrip() for line in text.replace(b"\r\n", b"\n").split(b"\n")).strip()


def stubs(grader_root: Path, stages) -> dict[int, bytes]:
    """The released stub of each stage (exercises/ of the grader, else .kata-pristine/), normalized."""
    found = {}
    for s in stages:
        for base in ("", ".kata-pristine/"):
            path = Path(grader_root) / (base + s.source("exercises"))
            if path.is_file():
                found[s.number] = _normal(path.read_bytes())
                break
    return found


def stage_status(g, submission: Path, stub: bytes | None) -> str:
    """One word for a stage: not_graded (the grader failed), passed, misnamed (no file of the
    exact name, but one nearly named so: ``misnamed``), no_file, not_started (the untouched
    stub), no_import, hangs, crashes or failed."""
    if not g.graded:
        return "not_graded"
    if g.ok:
        return "passed"
    if not g.source:
        return "misnamed" if misnamed(submission, g.stage) else "no_file"
    data = read_regular(g.file or submission / g.source, MAX_FILE) if stub is not None else None
    if data is not None and _normal(data) == stub:
        return "not_started"
    kinds = [t.kind for t in g.tests if t.status != "passed"]  # data the judge wrote, not its words
    if "import" in kinds:
        return "no_import"
    if _named(g):  # a classic mistake the report names is that mistake, though a later test crashed on it
        return "failed"
    if "hang" in kinds or g.problem_kind == "hang":
        return "hangs"
    if "crash" in kinds or g.problem_kind == "crash":
        return "crashes"
    return "failed"


def stage_mistakes(g, status: str) -> list[tuple[int, str]]:
    """The classic mistakes (stage, phrase) a failed stage's tests name (the judge names them:
    ``mistakes`` in its results, whatever language it spoke), an earlier stage's too (stage 7's
    tests find stage 5's visited list), each under its own stage; none for a stage not started
    (stage 6's stub is the naive = code: it is no one's mistake) or not importing."""
    if status in ("passed", "misnamed", "no_file", "not_started", "no_import", "not_graded"):
        return []
    return _named(g)


def misnamed(submission: Path, stage) -> list[str]:
    """The files nearly named as ``stage``'s module (``stage04_tanh (1).py``), as a report shows
    them: not graded (the rule is the exact name), named so the student knows what to rename."""
    return [shown(str(p.relative_to(submission))) for p in near_misses(submission, stage)]


def _named(g) -> list[tuple[int, str]]:
    """(the stage it belongs to, its phrase) of every catalogued mistake ``g``'s failing tests name."""
    named = {ident for t in g.tests if t.status != "passed" for ident in t.mistakes}
    return [(number, phrase) for number, phrase, ident in PHRASES if ident in named]


def _data(text) -> dict | None:
    """A message's data (``i18n.Text.data``), so a summary says it again in its own language."""
    return text.data() if isinstance(text, Text) else None


def record(name: str, report, submission: Path, stages, files: str, tests: str, stub: dict,
           seed: int | None) -> dict:
    """What the course keeps of one student's grading (the ``course`` part of its JSON)."""
    status: dict[str, str] = {}
    mistakes: dict[str, list[str]] = {}
    near: dict[str, list[str]] = {}
    for g in report.stages:
        status[str(g.stage.number)] = stage_status(g, submission, stub.get(g.stage.number))
        if status[str(g.stage.number)] == "misnamed":
            near[str(g.stage.number)] = misnamed(submission, g.stage)
        for number, phrase in stage_mistakes(g, status[str(g.stage.number)]):
            mistakes[str(number)] = sorted({*mistakes.get(str(number), []), phrase})
    by = {g.stage.number: g.score if g.graded else None for g in report.stages}  # None: not graded, never 0
    return {"student": name, "files": files, "tests": tests, "stages": [s.number for s in stages],
            "seed": seed, "scores": {str(s.number): by.get(s.number, 0) for s in stages}, "graded": report.graded,
            "score": report.score if report.graded else None, "max_score": report.max_score,
            "isolated": report.isolated, "isolation_said": _data(report.isolation),
            "isolation": report.isolation, "status": status, "mistakes": mistakes, "misnamed": near}


# a failure of the run itself (the disk, the machine), never one student's: raised, the run stops
RUN_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM)


def own_failure(error: BaseException) -> bool:
    """Whether ``error``, met while grading or writing one student, is met with that student only
    (their files, their name, their report), so it becomes their stated reason; not an
    interrupt, nor the disk."""
    if not isinstance(error, Exception):
        return False
    return not (isinstance(error, OSError) and error.errno in RUN_ERRNOS)
