"""What every platform's build shares: the maintainers' repository as its source, a destination
that holds nothing yet, the grader's files copied in (no reference code: the caller scans them),
and the finished folder moved into place only once it is whole."""

from __future__ import annotations

import shutil
from pathlib import Path

from autograd_kata.core.errors import Refusal

# what a platform's copy holds: the tool, the tests, the stubs (so a submission may leave a stage out)
NEEDED = ("autograd_kata/", "tests/", "exercises/", "conftest.py", "pyproject.toml", "README.md")


def source_root(root: Path, where: str) -> Path:
    """``root`` resolved; refused unless it is the maintainers' repository (it has solutions/)."""
    root = Path(root).resolve()
    if not (root / "solutions").is_dir():
        raise Refusal(f"{root} has no solutions/; run it in the maintainers' repository.", 2, where=where)
    return root


def empty_destination(folder: Path, where: str) -> Path:
    """``folder`` resolved; refused if it exists and is not an empty folder (nothing is overwritten)."""
    folder = Path(folder).resolve()
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise Refusal(f"{folder} exists and is not an empty folder; refusing to overwrite it.", 2, where=where)
    return folder


def copy_grader_files(root: Path, dest: Path) -> None:
    """The files of ``NEEDED`` from the repository at ``root``, as a student copy writes them."""
    from autograd_kata.core.student_copy import source_files, write_student_tree
    write_student_tree(root, dest, [f for f in source_files(root) if f.startswith(NEEDED)], pristine=False)


def move_into_place(staging: Path, folder: Path) -> None:
    """The whole staged folder copied to ``folder`` (empty or absent, as ``empty_destination`` saw)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    if folder.exists():
        folder.rmdir()
    shutil.copytree(staging, folder)
