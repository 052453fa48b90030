"""What the learner's commands remember between calls, all under ``.kata/``
(git-ignored): test results keyed by file content, hint progress, and where
the pristine stubs come from.

Layout of ``.kata/``::

    .kata/cache/results.json   test results, one entry per stage, keyed by content hash
    .kata/progress.json        the highest hint level seen, per stage
    .kata/backups/             every file ``kata reset`` / ``kata build`` replaced
    .kata/pristine/            untouched stubs, if someone put them there (see pristine_stub)

A student copy made by ``kata release`` keeps its untouched stubs in the
committed folder ``.kata-pristine/exercises/`` instead.

Nothing here imports the runner or anything slow: ``kata --help`` stays fast.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from autograd_kata.core.build import PRISTINE_DIR, pristine_path
from autograd_kata.core.i18n import t
from autograd_kata.core.manifest import Stage

CACHE_VERSION = 6  # 2: results read from the JSON results channel (full messages); 3: each test's kind;
# 4: the classic mistake each failure names; 5: each test as the results file's entry (core.outcome);
# 6: one entry per content in any language (run in English, said in the learner's when read)


def kata_dir(root: Path) -> Path:
    return Path(root) / ".kata"


def load_json(path: Path, default):
    """The JSON in ``path``, or ``default`` when it is missing or unreadable
    (a damaged state file must never stop a learner)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return default


def save_json(path: Path, data) -> None:
    """Write atomically: a crash never leaves half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


def write_atomic(path: Path, text: str) -> None:
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


# --- pristine stubs ---------------------------------------------------------

class PristineMissing(LookupError):
    """No copy of a stage's untouched stub could be found."""


def _git_original(root: Path, relpath: str) -> str | None:
    """The file as the commit that first added it had it (the release commit
    of a student copy, even after the learner commits their own work)."""
    def git(*args):
        return subprocess.run(["git", "-C", str(root), *args], check=False, capture_output=True,
                              text=True, timeout=10)
    try:
        log = git("log", "--diff-filter=A", "--format=%H", "--", relpath)
        if log.returncode != 0:
            return None
        commits = log.stdout.split()
        for commit in [commits[-1]] if commits else []:
            shown = git("show", f"{commit}:./{relpath}")
            if shown.returncode == 0:
                return shown.stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return None


def pristine_stub(stage: Stage, root: Path) -> str:
    """The untouched stub of ``stage``: what ``exercises/<module>.py`` held
    before the learner wrote anything.  Looked for, in this order:

    1. ``solutions/<module>.py`` (a maintainer's copy): generated exactly as
       ``kata build`` does, so it is always current;
    2. ``.kata-pristine/exercises/<module>.py`` (a student copy): what
       ``kata release`` ships (kata/release.py, ``PRISTINE_DIR``); committed,
       so it survives a clone of a GitHub Classroom template;
    3. ``.kata/pristine/<module>.py``: a local, git-ignored copy (e.g. dropped in
       by an instructor's own packaging);
    4. git: the file as the commit that first added it holds it.

    Raises ``PristineMissing`` naming the places it looked.
    """
    root = Path(root)
    reference = root / stage.source("solutions")
    if reference.is_file():
        from autograd_kata.core.build import stub_source
        return stub_source(reference.read_text(encoding="utf-8"), stage, str(reference))
    for shipped in (pristine_path(root, stage),
                    kata_dir(root) / "pristine" / f"{stage.module}.py"):
        if shipped.is_file():
            return shipped.read_text(encoding="utf-8")
    from_git = _git_original(root, stage.source("exercises"))
    if from_git is not None:
        return from_git
    raise PristineMissing(t("state.pristine_missing", n=stage.number, solutions=stage.source("solutions"),
                              pristine=f"{PRISTINE_DIR}/{stage.source('exercises')}",
                              kata=f".kata/pristine/{stage.module}.py", exercises=stage.source("exercises")))


def is_pristine(stage: Stage, root: Path) -> bool | None:
    """True if the learner's module is the untouched stub; None if unknown."""
    try:
        stub = pristine_stub(stage, root)
    except PristineMissing:
        return None
    path = Path(root) / stage.source("exercises")
    try:
        return path.read_text(encoding="utf-8") == stub
    except OSError:
        return False


# --- test results, cached by content ------------------------------------------

def _digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "missing"


def result_key(stage: Stage, root: Path, impl: str = "exercises") -> str:
    """A hash of everything a stage's result depends on: the module under
    test, its test file, the shared test code, the pytest settings, the impl
    and the interpreter.  Not the language: a result is data, run in English
    (``runner.child_env``) and said in the learner's language when it is read
    (``spoken``), so one entry serves every language."""
    from autograd_kata import __version__
    from autograd_kata.core.i18n import catalogue_files
    root = Path(root)
    files = [stage.source(impl), stage.test_file, "conftest.py", "tests/expect.py",
             "tests/conftest.py", "pyproject.toml"]
    h = hashlib.sha256(f"{CACHE_VERSION}|{__version__}|{sys.version}|{impl}|{stage.number}".encode())
    for name in files:
        h.update(f"|{name}={_digest(root / name)}".encode())
    for path in catalogue_files("en"):  # the stored words: a corrected message must not be served from the cache
        h.update(f"|en/{path.name}={_digest(path)}".encode())
    return h.hexdigest()


def spoken(result):
    """``result`` with every test's message in the learner's language (from its messages
    as data), and a missing test file's problem said in it too."""
    from dataclasses import replace

    from autograd_kata.core.i18n import current_language
    lang = current_language()
    problem = t("runner.tests_missing", file=result.stage.test_file) if result.tests_missing else result.problem
    return replace(result, tests=[test.in_language(lang) for test in result.tests], problem=problem)


def untouched(stage: Stage, impl: str = "exercises"):
    """The result of a stage whose module is still the pristine stub: not started, no test run."""
    from autograd_kata.core.results.model import StageResult
    return StageResult(stage, impl, problem_kind="untouched")


def cache_path(root: Path) -> Path:
    return kata_dir(root) / "cache" / "results.json"


def known_results(stages, root: Path, impl: str = "exercises") -> dict:
    """The stored ``StageResult`` of each of ``stages`` whose files have not
    changed since; nothing is run (a stage not in the cache is left out)."""
    store = load_json(cache_path(root), {})
    return {s.number: spoken(r) for s in stages
            if (r := _stored(store, s, impl, result_key(s, root, impl))) is not None}


def _stored(store, stage: Stage, impl: str, key: str):
    """The ``StageResult`` the cache holds for ``stage`` under ``key``, or None."""
    from autograd_kata.core.results.model import TestResult
    from autograd_kata.core.runner import StageResult
    entry = store.get(f"{impl}:{stage.number}") if isinstance(store, dict) else None
    if not isinstance(entry, dict) or entry.get("key") != key:
        return None
    try:
        return StageResult(stage, impl, [TestResult.from_entry(t) for t in entry["tests"]],
                           str(entry.get("problem", "")), problem_kind=str(entry.get("problem_kind", "")))
    except (KeyError, TypeError, AttributeError, ValueError):
        return None


def cached_results(stages, root: Path, impl: str = "exercises", fresh: bool = False, run=None,
                   announce=None, overview: bool = False):
    """Every stage's ``StageResult``, re-running (in one pytest process) only
    the stages whose files changed since their result was stored (all of them
    with ``fresh``).  ``announce(stages)`` is called before a run, if given.
    For an ``overview`` (``kata status``, which stage is next) a stage whose module
    is still its pristine stub is ``untouched`` without a run: a fresh copy's first
    ``kata`` runs no test at all."""
    if run is None:
        from autograd_kata.core.runner import run
    root = Path(root)
    store = load_json(cache_path(root), {})
    if not isinstance(store, dict):
        store = {}
    keys = {s.number: result_key(s, root, impl) for s in stages}
    results, stale = {}, []
    for s in stages:
        if overview and not fresh and impl == "exercises" and is_pristine(s, root):
            known = untouched(s, impl)  # whatever the cache holds for the stub: the same answer, always
        else:
            known = None if fresh else _stored(store, s, impl, keys[s.number])
        if known is None:
            stale.append(s)
        else:
            results[s.number] = known
    if stale:
        if announce:
            announce(stale)
        try:
            new = run(impl, stale, root)
        finally:
            if announce:
                announce([])
        for s in stale:
            r = new[s.number]
            results[s.number] = r
            # A crash or a time-out may be passing trouble, and a run that did not
            # select every test of the stage is no verdict on it: never remember either.
            if (r.problem and not r.tests_missing) or not r.complete:
                store.pop(f"{impl}:{s.number}", None)
                continue
            # Re-hash after the run: a file saved during it must not get this result.
            if result_key(s, root, impl) == keys[s.number]:
                store[f"{impl}:{s.number}"] = {
                    "key": keys[s.number], "problem": r.problem, "problem_kind": r.problem_kind,
                    "tests": [t.to_entry() for t in r.tests]}
        try:
            save_json(cache_path(root), store)
        except OSError:
            pass  # a read-only copy still gets its results, just not cached
    return {s.number: spoken(results[s.number]) for s in stages}


# --- hint progress ----------------------------------------------------------

def progress_path(root: Path) -> Path:
    return kata_dir(root) / "progress.json"


def hint_seen(stage: Stage, root: Path) -> int:
    """The highest hint level already shown for ``stage`` (0: none)."""
    data = load_json(progress_path(root), {})
    try:
        return int(data.get("hints", {}).get(str(stage.number), 0))
    except (AttributeError, TypeError, ValueError):
        return 0


def record_hint(stage: Stage, root: Path, level: int) -> None:
    data = load_json(progress_path(root), {})
    if not isinstance(data, dict) or not isinstance(data.get("hints"), dict):
        data = {**(data if isinstance(data, dict) else {}), "hints": {}}
    seen = max(level, hint_seen(stage, root))
    data["hints"][str(stage.number)] = seen
    try:
        save_json(progress_path(root), data)
    except OSError:
        pass
