"""``kata release DIR``: a student copy of the kata, with no reference code in it.

The copy holds what a learner needs: ``exercises/`` (written afresh from
``solutions/``, so a maintainer's filled-in files never ship), ``tests/``,
``conftest.py``, ``hints/``, the README, ``pyproject.toml``, the ``kata`` tool
and ``.gitignore``; plus ``.kata-pristine/exercises/`` (the untouched stubs, for
``kata reset`` when there is no ``solutions/`` to rebuild them from) and
``.github/workflows/classroom.yml`` (GitHub Classroom autograding, one step per
stage).  What only maintainers need is left out (``solutions/``,
``benchmarks/``, ``tooltests/``, ``.ci/``, ``autograd_kata/maintainer/mistakes.py``) or adjusted (``[tool.mutmut]`` and the
maintainers' extras leave ``pyproject.toml``; the README loses its sections for
maintainers and instructors).

Before it finishes, the command scans its own output for reference code (see
``scan``) and, if it finds any, deletes the output and exits non-zero.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from autograd_kata.core.build import PRISTINE_DIR
from autograd_kata.core.manifest import STAGES, Stage

# --- where a student copy keeps its pristine stubs -------------------------

# --- what goes into a student copy ------------------------------------------

# top-level entries a student copy never holds (the workflow folder is written afresh)
LEFT_OUT = {"solutions", "benchmarks", "tooltests", ".ci", ".github", "mutants", "build", "dist",
            PRISTINE_DIR}
# maintainers' files elsewhere: the classic-mistake catalogue quotes the reference
# to mutate it (tooltests/test_mistakes.py is its only user)
MAINTAINER_FILES = {"autograd_kata/maintainer/mistakes.py"}
# never copied, wherever they are (a walk without git)
SKIPPED = {".git", ".venv", ".ci-venv", ".kata", "__pycache__", ".pytest_cache", ".mypy_cache",
           ".ruff_cache", "node_modules"}
SKIPPED_SUFFIXES = (".pyc", ".pyo", ".egg-info")
# optional-dependency groups only maintainers use (mutmut, micrograd, torch)
MAINTAINER_EXTRAS = {"dev", "bench", "parity"}
# README sections (## headings) that are not for learners
README_DROPPED = re.compile(r"^##\s+(for\s+)?(maintainers|instructors)\b", re.IGNORECASE)


def source_files(root: Path) -> list[str]:
    """Files of the kata, relative to ``root``: ``git ls-files`` (tracked, plus
    untracked files git does not ignore) in a git checkout, else a walk."""
    root = Path(root)
    names: list[str] = []
    if (root / ".git").exists() and shutil.which("git"):
        proc = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                              cwd=root, capture_output=True, text=True, check=False)
        if proc.returncode == 0:
            names = sorted({n for n in proc.stdout.split("\0") if n})
    if not names:
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED and not d.endswith(".egg-info"))
            for name in files:
                names.append(str(Path(folder, name).relative_to(root)))
        names.sort()
    keep = []
    for name in names:
        parts = Path(name).parts
        if parts[0] in LEFT_OUT or Path(name).as_posix() in MAINTAINER_FILES \
                or any(p in SKIPPED or p.endswith(SKIPPED_SUFFIXES) for p in parts):
            continue
        if not (root / name).is_file():  # deleted in the work tree
            continue
        keep.append(name)
    return keep


def student_pyproject(text: str) -> str:
    """``pyproject.toml`` without what only maintainers need: ``[tool.mutmut]``
    (it points at solutions/), any other tool section naming solutions/, and
    the maintainers' optional dependencies."""
    sections: list[tuple[str, list[str]]] = [("", [])]
    for line in text.splitlines(keepends=True):
        header = re.match(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$", line)
        if header:
            sections.append((header.group(1), [line]))
        else:
            sections[-1][1].append(line)
    out = []
    for name, lines in sections:
        body = "".join(lines)
        if name == "tool.mutmut" or name.startswith("tool.mutmut."):
            continue
        if name.startswith("tool.") and name not in ("tool.setuptools", "tool.pytest.ini_options") \
                and "solutions" in body:
            continue
        if name == "project.optional-dependencies":
            body = _drop_extras(lines)
            if not body.strip().replace("[project.optional-dependencies]", "").strip():
                continue
        out.append(body)
    result = "".join(out)
    return re.sub(r"\n{3,}", "\n\n", result)


def _drop_extras(lines: list[str]) -> str:
    kept, skipping, depth = [], False, 0
    for line in lines:
        if not skipping:
            key = re.match(r"^\s*([A-Za-z0-9_.-]+)\s*=", line)
            if key and key.group(1) in MAINTAINER_EXTRAS:
                depth = line.count("[") - line.count("]")
                skipping = depth > 0
                continue
            kept.append(line)
        else:
            depth += line.count("[") - line.count("]")
            skipping = depth > 0
    return "".join(kept)


def student_readme(text: str) -> str:
    """The README without its ``## For maintainers`` / ``## For instructors``
    sections, and without anything between ``<!-- maintainers -->`` and
    ``<!-- /maintainers -->``."""
    text = re.sub(r"<!--\s*maintainers\s*-->.*?<!--\s*/maintainers\s*-->\n?", "", text, flags=re.DOTALL)
    out, dropping = [], False
    for line in text.splitlines(keepends=True):
        if line.startswith(("## ", "# ")):
            dropping = bool(README_DROPPED.match(line))
        if not dropping:
            out.append(line)
    return "".join(out).rstrip("\n") + "\n"


def classroom_workflow(stages=STAGES, python: str = "3.12", timeout_minutes: int = 5) -> str:
    """``.github/workflows/classroom.yml`` in the form GitHub Classroom writes:
    one ``autograding-command-grader`` step per stage (all of a stage's tests
    pass, or it scores 0) and the ``autograding-grading-reporter``."""
    lines = [
        "# GitHub Classroom autograding: one step per stage, worth the stage's points.",
        "# Written by `kata release`; a stage scores its points when every test of it passes.",
        "name: Autograding Tests",
        "'on':",
        "- push",
        "- repository_dispatch",
        "permissions:",
        "  checks: write",
        "  actions: read",
        "  contents: read",
        "jobs:",
        "  run-autograding-tests:",
        "    runs-on: ubuntu-latest",
        "    if: github.actor != 'github-classroom[bot]'",
        "    steps:",
        "    - name: Checkout code",
        "      uses: actions/checkout@v4",
        "    - name: Set up Python",
        "      uses: actions/setup-python@v5",
        "      with:",
        f"        python-version: '{python}'",
    ]
    for s in stages:
        name = f"Stage {s.number} - {s.title}"
        lines += [
            f"    - name: {_yaml_str(name)}",
            f"      id: stage{s.number}",
            "      uses: classroom-resources/autograding-command-grader@v1",
            "      with:",
            f"        test-name: {_yaml_str(name)}",
            "        setup-command: python -m pip install -q -e .",
            f"        command: python -m autograd_kata grade --stage {s.number}",
            f"        timeout: {timeout_minutes}",
            f"        max-score: {s.points}",
        ]
    lines += [
        "    - name: Autograding Reporter",
        "      uses: classroom-resources/autograding-grading-reporter@v1",
        "      env:",
    ]
    for s in stages:
        lines.append(f'        STAGE{s.number}_RESULTS: "${{{{steps.stage{s.number}.outputs.result}}}}"')
    lines += [
        "      with:",
        f"        runners: {','.join(f'stage{s.number}' for s in stages)}",
    ]
    return "\n".join(lines) + "\n"


def _yaml_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def write_student_tree(root: Path, dest: Path, files: list[str] | None = None,
                       pristine: bool = True) -> list[str]:
    """Write the student copy's files under ``dest`` (which must exist), with the
    pristine stubs for ``kata reset`` unless ``pristine`` is false. Returns what
    was written, relative to ``dest``."""
    from autograd_kata.core.build import expected_exercises

    root, dest = Path(root), Path(dest)
    generated = {str(p.relative_to(root)): text for p, text in expected_exercises(root).items()}
    written = []

    def put(rel: str, text: str | None = None, source: Path | None = None) -> None:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if text is not None:
            target.write_text(text, encoding="utf-8")
        else:
            shutil.copy2(source, target)
        written.append(rel)

    for rel in files if files is not None else source_files(root):
        rel = Path(rel).as_posix()
        if rel in generated:
            continue  # written below, from solutions/
        src = root / rel
        if rel == "pyproject.toml":
            put(rel, student_pyproject(src.read_text(encoding="utf-8")))
        elif rel == "README.md":
            put(rel, student_readme(src.read_text(encoding="utf-8")))
        else:
            put(rel, source=src)
    for rel, text in generated.items():
        put(rel, text)
        if pristine and rel != "exercises/__init__.py":
            put(f"{PRISTINE_DIR}/{rel}", text)
    return written


# --- the leak scan ----------------------------------------------------------

MIN_LEAK = 10  # a region shorter than this (whitespace removed), e.g. `return []`, is ordinary code


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
    from autograd_kata.core.build import _owner, regions

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
            owner = _owner(lines, r.start)
            found.append(_Region(s, owner, first[:60], key))
    return found


def scan(folder: Path, reference_root: Path) -> list[Leak]:
    """Reference code in ``folder``, by the kata's definition of a leak.

    A solution region of stage N leaks when its text (normalized) appears

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


# --- the command ------------------------------------------------------------

def release(root: Path, dest: Path, out=print) -> int:
    """Write a student copy of ``root`` to ``dest``. Exit code: 0 done, 1 a leak
    (nothing is left behind), 2 refused (``dest`` not empty, no reference)."""
    root, dest = Path(root).resolve(), Path(dest).resolve()
    if not (root / "solutions").is_dir():
        out(f"kata release: {root} has no solutions/; run it in the maintainers' repository.")
        return 2
    if dest == root or root in dest.parents:
        out(f"kata release: {dest} is inside the kata itself; choose a folder outside {root}.")
        return 2
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        out(f"kata release: {dest} exists and is not an empty folder; refusing to overwrite it.")
        return 2
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.kata-release-", dir=dest.parent))
    try:
        written = write_student_tree(root, staging)
        workflow = staging / ".github" / "workflows" / "classroom.yml"
        workflow.parent.mkdir(parents=True, exist_ok=True)
        workflow.write_text(classroom_workflow(), encoding="utf-8")
        written.append(".github/workflows/classroom.yml")
        if refuse_leaks(staging, root, f"the student copy {dest}", out):
            return 1
        if dest.exists():
            dest.rmdir()
        staging.rename(dest)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    out(f"kata release: wrote {len(written)} files to {dest}")
    out("  no solutions/ and no solution region's text anywhere (scanned).")
    out(f"  pristine stubs for `kata reset`: {PRISTINE_DIR}/exercises/")
    out("  GitHub Classroom autograding: .github/workflows/classroom.yml")
    out("Next: cd there, `git init && git add -A && git commit -m 'Autograd kata'`, push it as a template repository.")
    return 0
