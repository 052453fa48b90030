"""``kata autograder --classroom50 DIR``: the autograder Classroom 50 runs.

GitHub Classroom was sunset in 2026; Classroom 50 (``foundation50/classroom50``)
grades each submission in the student's own repository with GitHub Actions, but
the grading code is the teacher's: the runner fetches
``CLASSROOM/autograders/ASSIGNMENT/autograder.py`` and the files beside it from
the teacher's ``classroom50`` repository, runs it in the student's checkout, and
publishes the ``result.json`` it writes (schema ``classroom50/result/v1``) on a
``submit/...`` tag's Release (Classroom 50's wiki: Advanced Autograding, "The
result.json contract").

DIR gets that folder: ``autograder.py`` (``templates/classroom50_autograder.py.tmpl``:
standard library only; it installs the kata from its own folder and grades with
``--tests-from`` its own tests, so a student's edited tests grade nothing) and
the grader's files a Gradescope zip holds (``staging.NEEDED``: the tool, the
tests, conftest.py, pyproject.toml, the stubs), scanned for reference code like
a student release.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

AUTOGRADER = "autograder.py"


def build_classroom50(root: Path, folder: Path, out=print, lang: str = "en") -> int:
    """Write Classroom 50's autograder folder for the kata at ``root`` to ``folder``. Exit code."""
    from autograd_kata.classroom.platforms.staging import (
        copy_grader_files,
        empty_destination,
        move_into_place,
        source_root,
    )
    from autograd_kata.core.leaks import refuse_leaks
    from autograd_kata.core.student_copy import fill, template

    root = source_root(root, "autograder --classroom50")
    folder = empty_destination(folder, "autograder --classroom50")
    with tempfile.TemporaryDirectory(prefix="kata-classroom50-") as tmp:
        staging = Path(tmp) / "autograder"
        staging.mkdir()
        copy_grader_files(root, staging)
        (staging / AUTOGRADER).write_text(fill(template("classroom50_autograder.py.tmpl"), lang=lang), encoding="utf-8")
        if refuse_leaks(staging, root, "the Classroom 50 autograder", out):
            return 1
        move_into_place(staging, folder)
    out(f"wrote the Classroom 50 autograder to {folder}")
    out("Copy its contents to CLASSROOM/autograders/ASSIGNMENT/ in your classroom50 repository "
        "(autograder.py beside the kata's tests); every submission is then graded with these tests.")
    return 0
