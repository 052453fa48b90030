"""``kata release DIR``: a student copy of the kata, with no reference code in it.

What the copy holds is decided by the allow-list in the manifest
(``STUDENT_FILES``: each file's role, as Exercism's ``.meta/config.json``):
``exercises/`` (written afresh as stubs, so a maintainer's filled-in files
never ship), ``tests/``, ``conftest.py``, ``hints/``, the tool without
``maintainer/``, the learner's part of the README and a ``pyproject.toml``
written from a template with no maintainer settings in it.  ``kata release``
adds ``.kata-pristine/exercises/`` (the untouched stubs, for ``kata reset``),
``.github/workflows/kata-grade.yml`` (GitHub Actions, any repository: verify,
install once, grade every stage into the job summary and JUnit XML) and
``.kata-release.json`` (the checksums of the graded files, which the workflow
also embeds).  GitHub Classroom was sunset in 2026; its successor Classroom 50
grades with an ``autograder.py`` from the teacher's repository, which ``kata
autograder --classroom50 DIR`` writes (``gradescope.py``).  The workflow, the script it
runs and the pyproject are template files in ``classroom/templates/``, the
ones that are not yet what they say named ``*.tmpl`` so that no tool takes one for the
project's own configuration (``pyproject.toml.tmpl`` is not TOML until filled).

Before it finishes, the command scans its own output for reference code (see
``scan``) and, if it finds any, deletes the output and exits non-zero.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from autograd_kata import __version__
from autograd_kata.core.build import PRISTINE_DIR
from autograd_kata.core.errors import Refusal
from autograd_kata.core.manifest import PROTECTED_ROLES, READMES, RELEASE_FILE, STAGES, Stage, student_role

# not autograde.yaml: Classroom 50 writes that one into each student's repository
WORKFLOW = ".github/workflows/kata-grade.yml"
# never copied, wherever they are (a walk without git)
SKIPPED = {".git", ".venv", ".ci-venv", ".kata", "__pycache__", ".pytest_cache", ".mypy_cache",
           ".ruff_cache", "node_modules"}
# README parts that are not for learners: ## sections, and <!-- maintainers --> blocks;
# <!-- reference --> blocks (steps that need solutions/) stay only with --with-diff
README_DROPPED = re.compile(r"^##\s+(for\s+)?(maintainers|instructors)\b", re.IGNORECASE)


def template(name: str) -> str:
    """A template file shipped in ``autograd_kata/classroom/templates/``."""
    return (resources.files("autograd_kata.classroom") / "templates" / name).read_text(encoding="utf-8")


def fill(text: str, **values: str) -> str:
    """``text`` with every ``@@KEY@@`` replaced; an unknown or unfilled key is an error."""
    def one(match):
        key = match.group(1).lower()
        if key not in values:
            raise KeyError(f"template placeholder @@{match.group(1)}@@ has no value")
        return values[key]
    return re.sub(r"@@([A-Z_]+)@@", one, text)


def source_files(root: Path) -> list[str]:
    """The files of the kata a student copy holds (the manifest's allow-list),
    relative to ``root``: from ``git ls-files`` (tracked, plus untracked files
    git does not ignore) in a git checkout, else a walk."""
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
                names.append(Path(folder, name).relative_to(root).as_posix())
        names.sort()
    return [name for name in names if student_role(Path(name).as_posix()) and (root / name).is_file()]


# --- the pyproject.toml of a student copy: a template, filled from the maintainers' one

def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} into the student pyproject.toml")


def toml_table(name: str, table: dict) -> str:
    lines = [f"[{name}]"]
    for key, value in table.items():
        key = key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)
        lines.append(f"{key} = {toml_value(value)}")
    return "\n".join(lines)


def load_toml(text: str) -> dict:
    """``text`` read as TOML (tomllib; tomli on Python 3.10)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    return tomllib.loads(text)


def student_pyproject(text: str) -> str:
    """The copy's ``pyproject.toml``: the template, filled with the project's
    name, version, dependencies, the ``pictures`` extra, package data (minus
    the maintainers') and the pytest settings, read from the maintainers'
    ``text`` with tomllib (nothing is edited in place)."""
    data = load_toml(text)
    project = data["project"]
    package_data = {k: v for k, v in data.get("tool", {}).get("setuptools", {}).get("package-data", {}).items()
                    if not k.startswith("autograd_kata.maintainer")}
    pytest_ini = data.get("tool", {}).get("pytest", {}).get("ini_options", {})
    return fill(
        template("pyproject.toml.tmpl"),
        name=toml_value(project["name"]),
        version=toml_value(project.get("version", __version__)),  # the maintainers' is dynamic: __init__'s
        description=toml_value(project.get("description", "")),
        requires_python=toml_value(project.get("requires-python", ">=3.10")),
        license=toml_value(project.get("license", "MIT")),
        dependencies=toml_value(project.get("dependencies", [])),
        pictures=toml_value(project.get("optional-dependencies", {}).get("pictures", [])),
        package_data=toml_table("tool.setuptools.package-data", package_data),
        pytest=toml_table("tool.pytest.ini_options", pytest_ini),
    )


def student_readme(text: str, with_diff: bool = False) -> str:
    """The learner's README: without its ``## For maintainers`` / ``## For
    instructors`` sections, anything between ``<!-- maintainers -->`` and
    ``<!-- /maintainers -->``, and (unless ``with_diff``) every line marked
    ``<!-- reference-line -->`` (a step that needs the reference)."""
    text = re.sub(r"<!--\s*maintainers\s*-->.*?<!--\s*/maintainers\s*-->\n?", "", text, flags=re.DOTALL)
    marked = re.compile(r"\s*<!--\s*reference-line\s*-->")
    text = "".join(marked.sub("", line) if with_diff else line
                   for line in text.splitlines(keepends=True) if with_diff or not marked.search(line))
    out, dropping = [], False
    for line in text.splitlines(keepends=True):
        if line.startswith(("## ", "# ")):
            dropping = bool(README_DROPPED.match(line))
        if not dropping:
            out.append(line)
    return "".join(out).rstrip("\n") + "\n"


# --- GitHub Actions: the workflow and the checksums it verifies

def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def protected_files(copy: Path) -> list[str]:
    """The files of a student copy whose change would change the grading."""
    names = []
    for path in sorted(Path(copy).rglob("*")):
        rel = path.relative_to(copy).as_posix()
        if path.is_file() and (student_role(rel) in PROTECTED_ROLES or rel == "pyproject.toml"):
            names.append(rel)
    return names


def _indent(text: str, spaces: int) -> str:
    return "".join((" " * spaces + line) if line.strip() else line for line in text.splitlines(keepends=True))


def grading_workflow(checksums: dict[str, str] | None = None, python: str = "3.12",
                     timeout_minutes: int = 15) -> str:
    """``.github/workflows/kata-grade.yml``: verify the graded files against
    ``checksums`` (path -> sha256, ``.kata-release.json`` among them), install
    once, then grade every stage: the text table in the job summary, JUnit XML
    as an artifact, and the job's status (success only with every stage's points)."""
    checksums = dict(sorted((checksums or {}).items()))
    folders = sorted({path.split("/", 1)[0] + "/" for path in checksums if "/" in path} - {".github/"})
    verify = fill(template("verify_release.py.tmpl"), checksums=json.dumps(checksums, indent=1),
                  release_file=RELEASE_FILE, workflow=WORKFLOW, folders=json.dumps([f.rstrip("/") for f in folders]))
    return fill(template("kata-grade.yml.tmpl"), python=python, verify=_indent(verify, 8).rstrip("\n"),
                timeout=str(timeout_minutes))


def write_release_checks(copy: Path) -> list[str]:
    """Write the workflow, which embeds the checksums of the protected files,
    then ``.kata-release.json``, which holds them and the workflow's own
    checksum (a file cannot hold its own): to change what is graded unseen, a
    student has to edit the file, the workflow and the record.  Returns what
    was written."""
    copy = Path(copy)
    files = {rel: sha256(copy / rel) for rel in protected_files(copy)}
    workflow = copy / WORKFLOW
    workflow.parent.mkdir(parents=True, exist_ok=True)
    workflow.write_text(grading_workflow(files), encoding="utf-8")
    record = {"kata": __version__, "files": {**files, WORKFLOW: sha256(workflow)}}
    (copy / RELEASE_FILE).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return [WORKFLOW, RELEASE_FILE]


def write_student_tree(root: Path, dest: Path, files: list[str] | None = None,
                       pristine: bool = True, with_diff: bool = False) -> list[str]:
    """Write the student copy's files under ``dest`` (which must exist), with the
    pristine stubs for ``kata reset`` unless ``pristine`` is false. Returns what
    was written, relative to ``dest``."""
    from autograd_kata.core.build import expected_exercises

    root, dest = Path(root), Path(dest)
    generated = {p.relative_to(root).as_posix(): text for p, text in expected_exercises(root).items()}
    written = []

    def put(rel: str, text: str | None = None, source: Path | None = None) -> None:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if text is not None:
            target.write_text(text, encoding="utf-8")
        else:
            assert source is not None, rel
            shutil.copy2(source, target)
        written.append(rel)

    for rel in files if files is not None else source_files(root):
        rel = Path(rel).as_posix()
        if rel in generated:
            continue  # written below, from the reference
        src = root / rel
        if rel == "pyproject.toml":
            put(rel, student_pyproject(src.read_text(encoding="utf-8")))
        elif rel in READMES:
            put(rel, student_readme(src.read_text(encoding="utf-8"), with_diff=with_diff))
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

@contextlib.contextmanager
def staged(dest: Path, tag: str):
    """A fresh folder beside ``dest`` to write a copy into, removed when the block ends unless
    ``install`` made it ``dest``: a copy that fails midway (or leaks) leaves nothing behind."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.{tag}-", dir=dest.parent))
    try:
        yield staging
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def install(staging: Path, dest: Path) -> None:
    """The staged copy becomes ``dest`` (missing, or an empty folder), in one rename."""
    if dest.exists():
        dest.rmdir()
    staging.rename(dest)


def release(root: Path, dest: Path, out=print, with_diff: bool = False) -> int:
    """Write a student copy of ``root`` to ``dest``. Exit code: 0 done, 1 a leak
    (nothing is left behind); ``Refusal`` (code 2) when ``dest`` is not empty or
    there is no reference."""
    root, dest = Path(root).resolve(), Path(dest).resolve()
    if not (root / "solutions").is_dir():
        raise Refusal(f"{root} has no solutions/; run it in the maintainers' repository.", 2, where="release")
    if dest == root or root in dest.parents:
        raise Refusal(f"{dest} is inside the kata itself; choose a folder outside {root}.", 2, where="release")
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise Refusal(f"{dest} exists and is not an empty folder; refusing to overwrite it.", 2, where="release")
    with staged(dest, "kata-release") as staging:
        written = write_student_tree(root, staging, with_diff=with_diff)
        written += write_release_checks(staging)
        if refuse_leaks(staging, root, f"the student copy {dest}", out):
            return 1
        install(staging, dest)
    out(f"kata release: wrote {len(written)} files to {dest}")
    out("  no solutions/ and no solution region's text anywhere (scanned).")
    out(f"  pristine stubs for `kata reset`: {PRISTINE_DIR}/exercises/")
    out(f"  GitHub Actions grading: {WORKFLOW} (checks the graded files against {RELEASE_FILE},")
    out("  installs once, grades every stage into the job summary and JUnit XML)")
    out("  for Classroom 50: `kata autograder --classroom50 DIR` writes CLASSROOM/autograders/ASSIGNMENT/")
    out("Next: cd there, `git init && git add -A && git commit -m 'Autograd kata'`, push it as a template repository.")
    return 0
