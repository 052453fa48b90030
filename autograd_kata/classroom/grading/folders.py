"""The folders a grading runs in (the grader's second step): the judge's private copy
of the grader's tests, each stage's folder for its sandbox (the one submitted file),
and the judge's environment; the grading's own folder held (``hold``) while it runs, and
those graders killed midway left swept away (``sweep``) when the next grading starts."""
from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:  # POSIX; on Windows kata grade refuses to grade (commands.py)
    import fcntl
except ImportError:
    fcntl = None  # type: ignore[assignment]

from autograd_kata.classroom.grading.discovery import MAX_FILE, find_stage_files, near_misses, read_regular, shown
from autograd_kata.classroom.grading.report import MAX_FOUND, StageGrade, say
from autograd_kata.classroom.sandbox import jail
from autograd_kata.core.manifest import Stage

SCRATCH = "kata-grade-"  # the grading's folder in the temporary folder: tempfile.TemporaryDirectory's prefix
HELD = ".kata-grader.lock"  # in it: locked by the grader that made it, for as long as it lives


@contextmanager
def hold(scratch: Path) -> Iterator[None]:
    """``scratch`` locked as a live grader's within the block; the lock goes with this process
    when it is killed (a platform's timeout), and ``sweep`` then removes the folder."""
    if fcntl is None:
        yield
        return
    # locked under another name, then named: a grading starting beside it (its sweep) never finds
    # the lock file unlocked, between its making and its locking, and removes the live folder
    fd = os.open(scratch / (HELD + ".new"), os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.replace(scratch / (HELD + ".new"), scratch / HELD)
        yield
    finally:
        os.close(fd)


def sweep(place: str | None = None) -> list[str]:
    """Remove the grading folders (copies of a submission, the judges' files) that graders killed
    midway left in the temporary folder: this user's, holding a lock no live grader holds (a
    folder without one is another tool's, or a grader's of before: left alone).  Their names."""
    removed: list[str] = []
    if fcntl is None:
        return removed
    place = place or tempfile.gettempdir()
    for name in sorted(os.listdir(place)):
        folder = os.path.join(place, name)
        try:
            if not name.startswith(SCRATCH) or not stat.S_ISDIR((st := os.lstat(folder)).st_mode) \
                    or st.st_uid != os.getuid():
                continue
            fd = os.open(os.path.join(folder, HELD), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(name)
        except OSError:
            pass  # a live grader's
        finally:
            os.close(fd)
    return removed


def _copy_tree(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache"),
                    symlinks=False)


def judge_folder(grader_root: Path, dest: Path) -> None:
    """A private copy of the grader's tests, conftest.py and pyproject.toml
    (0700): the judge's own, out of the sandbox's sight and reach."""
    dest.mkdir(mode=0o700)
    _copy_tree(Path(grader_root) / "tests", dest / "tests")
    for name in ("conftest.py", "pyproject.toml"):
        if (Path(grader_root) / name).is_file():
            shutil.copy2(Path(grader_root) / name, dest / name)


def stage_folder(source: bytes, stage: Stage, dest: Path) -> None:
    """What the sandbox sees: ``exercises/__init__.py`` (empty) and the one
    submitted file (its bytes, as read once), readable by all, writable by none but the grader."""
    (dest / "exercises").mkdir(parents=True)  # dest may exist (a chroot's stage folder)
    (dest / "exercises" / "__init__.py").write_bytes(b"")
    (dest / stage.source("exercises")).write_bytes(source)
    for path in (dest, dest / "exercises"):
        os.chmod(path, 0o755)
    for path in (dest / "exercises" / "__init__.py", dest / stage.source("exercises")):
        os.chmod(path, 0o644)


def prepare_stage(stage: Stage, submission: Path, folder: Path) -> StageGrade:
    """The stage's grade so far: which file it grades, or why it cannot be graded (then
    ``problem`` is set); when it can, its folder for the sandbox is written."""
    grade = StageGrade(stage)
    found = find_stage_files(submission, stage)
    # as a report writes them (any byte, any control character), at most MAX_FOUND of them
    grade.found = [shown(str(p.relative_to(submission))) for p in found[:MAX_FOUND]]
    grade.found_total = len(found)
    if not found:
        near = [shown(str(p.relative_to(submission))) for p in near_misses(submission, stage)]
        grade.problem = say("report.reason.no_file_but", file=stage.source("exercises"), found=", ".join(near),
                            name=f"{stage.module}.py") if near else say("report.reason.no_file",
                                                                         file=stage.source("exercises"))
        return grade
    source = grade.file = found[0]
    grade.source = grade.found[0]
    data = None if source.is_symlink() else read_regular(source, MAX_FILE)  # never a FIFO, a device, a link
    if source.is_symlink():
        grade.problem = say("report.reason.symlink", source=grade.source)
    elif data is None:
        grade.problem = say("report.reason.not_regular", source=grade.source, max=MAX_FILE)
    else:
        stage_folder(data, stage, folder)
    return grade


#: the judge's end of the socket its hidden seed comes through (judging._run, plugin._receive_hidden_seed)
SEED_FD = "KATA_HIDDEN_SEED_FD"


def judge_env(scratch: Path, extra: dict) -> dict:
    """The judge's environment: a few of ours, the tool alone on its path (a link in
    ``scratch``), English, the hidden seed and the jail's settings from ``extra``."""
    keep = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "SYSTEMROOT", "TMPDIR", "TEMP", "TMP")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    # the tool, and nothing else of the folder it lives in (a source tree holds exercises/ and
    # solutions/ too): a folder with one link to the package
    tool = scratch / "tool"
    tool.mkdir(mode=0o700)
    (tool / "autograd_kata").symlink_to(Path(jail.__file__).resolve().parents[2], target_is_directory=True)
    env.update({
        "PYTHONPATH": str(tool),
        "HOME": str(scratch),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        "PYTHONHASHSEED": "0",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "KATA_IMPL": "exercises",
        "KATA_LANG": "en",  # reports and the class summary read the English phrases
        "MPLBACKEND": "Agg",
    })
    env.update(extra)
    return env
