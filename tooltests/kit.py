"""Helpers the tool tests share: the repository, its stage modules, a throwaway
copy of it, and running ``kata`` in this process or a command in a child."""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

from autograd_kata.core.build import strip_markers, stub_source
from autograd_kata.core.manifest import stage
from autograd_kata.core.student_copy import source_files

ROOT = Path(__file__).resolve().parent.parent


def reference(n: int) -> str:
    """Stage n's reference module as a learner would have written it (no markers)."""
    s = stage(n)
    return strip_markers((ROOT / s.source("solutions")).read_text(encoding="utf-8"))


def stub(n: int) -> str:
    """Stage n's untouched stub, as `kata build` writes it."""
    s = stage(n)
    return stub_source((ROOT / s.source("solutions")).read_text(encoding="utf-8"), s)


def clone(dest: Path) -> Path:
    """A throwaway copy of the maintainers' repository (no .git: the walk path)."""
    names = source_files(ROOT) + [p.relative_to(ROOT).as_posix() for p in (ROOT / "solutions").glob("*.py")]
    for name in names + ["reference/engine.py"]:
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def working_tree(dest: Path) -> Path:
    """A throwaway copy of the whole working tree, tool tests and maintainers' files too:
    git's tracked and untracked-but-not-ignored files (uncommitted edits included), or,
    outside a git checkout, every file but caches, venvs and build output."""
    proc = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                          capture_output=True, text=True, check=False) if shutil.which("git") else None
    if proc is not None and proc.returncode == 0 and proc.stdout:
        for name in sorted(set(proc.stdout.split("\0")) - {""}):
            if (ROOT / name).is_file():  # a file deleted but not yet committed is listed too
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, dest / name)
        return dest
    shutil.copytree(ROOT, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns(
        "__pycache__", ".git", ".kata", ".ci-venv", "mutants", "build", "dist", "*.egg-info"))
    return dest


@functools.cache
def stage_test_count(n: int) -> int:
    """How many tests stage n has for a learner (``pytest --collect-only`` of its file on
    exercises/): what ``kata check n`` counts, never a number written into a test."""
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           stage(n).test_file], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "KATA_IMPL": "exercises"}, check=False)
    count = sum("::" in line for line in proc.stdout.splitlines())
    assert count, f"no test of stage {n} collected:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
    return count


def run(args, cwd, env=None, timeout=300):
    """A command in a child process, with no KATA_IMPL of the caller's."""
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False,
                          env={**os.environ, "KATA_IMPL": "", **(env or {})})


def run_kata(capsys, *argv):
    """``kata argv`` in this process: (exit code, stdout, stderr)."""
    from autograd_kata import cli
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def kata_copy(tmp_path: Path, monkeypatch, unset=()) -> Path:
    """A throwaway kata from this repository (stubs, reference, tests, their configuration)
    as the working directory, with the environment variables ``unset`` removed."""
    root = tmp_path / "kata"
    for name in ("exercises", "solutions", "tests"):
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("conftest.py", "pyproject.toml"):
        shutil.copy(ROOT / name, root / name)
    monkeypatch.chdir(root)
    for var in unset:
        monkeypatch.delenv(var, raising=False)
    return root


def fresh_copy(template: Path, tmp_path: Path, monkeypatch, unset=()) -> Path:
    """A copy of ``template`` to break freely, as the working directory, with the
    environment variables ``unset`` removed for the test."""
    root = tmp_path / "kata"
    shutil.copytree(template, root)
    monkeypatch.chdir(root)
    for var in unset:
        monkeypatch.delenv(var, raising=False)
    return root
