"""A student copy's files, written from the maintainers' repository: shared by
``kata release`` (``classroom/release.py``), ``kata init`` (``learner/init.py``)
and the wheel's kit (``setup.py``).

The allow-list is the manifest's (``STUDENT_FILES``); the stubs are written afresh
from the reference (``core/build.py``), so a maintainer's filled-in files never ship;
the README keeps the learner's part, the ``pyproject.toml`` is written from a
template with no maintainer settings (``autograd_kata/templates/``).  Before a copy
is installed, ``core/leaks.py`` scans it for reference code.
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
from importlib import resources
from pathlib import Path

from autograd_kata import __version__
from autograd_kata.core.build import PRISTINE_DIR
from autograd_kata.core.manifest import READMES, student_role

# never copied, wherever they are (a walk without git)
SKIPPED = {".git", ".venv", ".ci-venv", ".kata", "__pycache__", ".pytest_cache", ".mypy_cache",
           ".ruff_cache", "node_modules"}


# README parts that are not for learners: ## sections, and <!-- maintainers --> blocks;
# <!-- reference --> blocks (steps that need solutions/) stay only with --with-diff
README_DROPPED = re.compile(r"^##\s+(for\s+)?(maintainers|instructors)\b", re.IGNORECASE)


def template(name: str) -> str:
    """A template file shipped in ``autograd_kata/templates/``."""
    return (resources.files("autograd_kata") / "templates" / name).read_text(encoding="utf-8")


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
    return renumbered("".join(out)).rstrip("\n") + "\n"


def renumbered(text: str) -> str:
    """Every numbered list counted 1, 2, 3, ... again: a dropped step leaves no gap (1, 2, 3, 5).
    A list goes on over its items' indented lines and ends at any other line."""
    out, number = [], 0
    for line in text.splitlines(keepends=True):
        item = re.match(r"(\d+)\. ", line)
        if item:
            number = number + 1 if number else int(item[1])
            line = f"{number}. {line[item.end():]}"
        elif not line.startswith((" ", "\t")):
            number = 0
        out.append(line)
    return "".join(out)


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


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
