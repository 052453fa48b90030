"""``kata autograder --prairielearn DIR``: a PrairieLearn question graded by the kata.

PrairieLearn's external grading (its docs, "External Grading") copies a question's
``tests/`` to ``/grade/tests`` and the student's files to ``/grade/student`` in a Docker
container, runs the question's ``entrypoint``, and reads ``/grade/results/results.json``
(at most 1 MB): ``score`` from 0 to 1, ``tests`` with ``points`` and ``max_points``, and
``gradable: false`` for a submission that cannot be graded (then no points are given or
taken and the student loses no attempt).

DIR gets a question folder: ``info.json`` (external grading on, the entrypoint
``/grade/tests/run.sh``), ``question.html`` (a file upload for the stage files and the
results element) and ``tests/``: the grader's files a Gradescope zip holds
(``gradescope.NEEDED``, scanned for reference code) and ``run.sh``, which grades
``/grade/student`` with ``kata grade --format prairielearn`` (``formats.as_prairielearn``):
a syntax error or a grader that failed (exit status 3) is ``gradable: false``, and a grader
that never reported writes ``gradable: false`` itself: never a 0 for the grader's failure.
``run.sh`` reads ``KATA_GRADE_ROOT`` (default ``/grade``) and ``KATA_PYTHON`` (default: a
virtual environment it makes and installs the kata into, which needs the network), so it
can be tried anywhere.
"""
from __future__ import annotations

import json
import shutil
import stat
import tempfile
import uuid
from pathlib import Path

from autograd_kata.core.errors import Refusal

ENTRYPOINT = "/grade/tests/run.sh"
IMAGE = "python:3.12"  # any image with Python 3.10+; the entrypoint installs the kata from /grade/tests

RUN_SH = """\
#!/usr/bin/env bash
# PrairieLearn runs this for every submission: grade /grade/student with the tests in
# /grade/tests, into /grade/results/results.json. {policy}.
# A grader that failed never gives a score: kata grade writes "gradable": false itself
# (exit status 3), and a grader that never reported gets it here.
set -u
ROOT="${{KATA_GRADE_ROOT:-/grade}}"
RESULTS="$ROOT/results/results.json"
mkdir -p "$ROOT/results"
rm -f "$RESULTS"
fail() {{
  printf '{{"gradable": false, "message": "%s", "format_errors": ["%s"], "tests": []}}\\n' "$1" "$1" \\
    > "$RESULTS.partial" && mv -f "$RESULTS.partial" "$RESULTS"
  echo "kata: $1" >&2
  exit 0
}}
PRIVATE="$(mktemp -d)" || fail "The autograder could not make its folder."
PYTHON="${{KATA_PYTHON:-}}"
if [ -z "$PYTHON" ]; then
  # installed from a private copy: a build writes next to its source, and /grade/tests may be read-only
  cp -r "$ROOT/tests" "$PRIVATE/source" && python3 -m venv "$PRIVATE/venv" \\
    && "$PRIVATE/venv/bin/python" -m pip install --quiet "$PRIVATE/source" \\
    || fail "The autograder could not install the kata."
  PYTHON="$PRIVATE/venv/bin/python"
fi
cd "$ROOT/tests" || fail "The autograder has no tests folder."
"$PYTHON" -m autograd_kata.instructor grade \\
    --submission "$ROOT/student" --tests-from "$ROOT/tests" \\
    --stage-timeout "${{KATA_STAGE_TIMEOUT:-30}}" \\
    --format prairielearn --lang {lang} --out "$PRIVATE/results.json"
status=$?
if [ "$status" -le 1 ] || [ "$status" -eq 3 ]; then
  if [ -s "$PRIVATE/results.json" ]; then
    mv -f "$PRIVATE/results.json" "$RESULTS"
    rm -rf "$PRIVATE"
    exit 0
  fi
fi
rm -rf "$PRIVATE"
fail "The autograder failed (kata grade exit status $status)."
"""

QUESTION_HTML = """\
<pl-question-panel>
  <p>Submit your stage files ({names}). Each stage earns its points only when every one of its tests passes.</p>
  <pl-file-upload file-patterns="stage0*.py"></pl-file-upload>
</pl-question-panel>
<pl-submission-panel>
  <pl-external-grader-results></pl-external-grader-results>
  <pl-file-preview></pl-file-preview>
</pl-submission-panel>
"""


def info(title: str, timeout: int) -> dict:
    """The question's info.json: graded externally, by ``run.sh``."""
    return {"uuid": str(uuid.uuid4()), "title": title, "topic": "autograd kata", "type": "v3",
            "gradingMethod": "External", "singleVariant": True,
            "externalGradingOptions": {"enabled": True, "image": IMAGE, "entrypoint": ENTRYPOINT,
                                       "timeout": timeout, "enableNetworking": True}}


def build_prairielearn(root: Path, folder: Path, out=print, lang: str = "en") -> int:
    """Write a PrairieLearn question for the kata at ``root`` to ``folder``. Exit code."""
    from autograd_kata.classroom.grading.report import POLICY
    from autograd_kata.classroom.platforms.gradescope import NEEDED
    from autograd_kata.core.leaks import refuse_leaks
    from autograd_kata.core.manifest import STAGES
    from autograd_kata.core.student_copy import source_files, write_student_tree

    root, folder = Path(root).resolve(), Path(folder).resolve()
    if not (root / "solutions").is_dir():
        raise Refusal(f"{root} has no solutions/; run it in the maintainers' repository.", 2,
                      where="autograder --prairielearn")
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise Refusal(f"{folder} exists and is not an empty folder; refusing to overwrite it.", 2,
                      where="autograder --prairielearn")
    with tempfile.TemporaryDirectory(prefix="kata-prairielearn-") as tmp:
        staging = Path(tmp) / "question"
        tests = staging / "tests"
        tests.mkdir(parents=True)
        write_student_tree(root, tests, [f for f in source_files(root) if f.startswith(NEEDED)], pristine=False)
        run_sh = tests / "run.sh"
        run_sh.write_text(RUN_SH.format(policy=POLICY, lang=lang), encoding="utf-8")
        run_sh.chmod(run_sh.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        if refuse_leaks(tests, root, "the PrairieLearn question", out):
            return 1
        timeout = 60 + 30 * len(STAGES)  # every stage's limit, and the install
        (staging / "info.json").write_text(json.dumps(info("autograd kata", timeout), indent=2) + "\n",
                                           encoding="utf-8")
        names = ", ".join(f"{s.module}.py" for s in STAGES)
        (staging / "question.html").write_text(QUESTION_HTML.format(names=names), encoding="utf-8")
        folder.parent.mkdir(parents=True, exist_ok=True)
        if folder.exists():
            folder.rmdir()
        shutil.copytree(staging, folder)
    out(f"wrote the PrairieLearn question to {folder}")
    out("Copy it into your course's questions/ folder; each submission is graded by tests/run.sh "
        "with these tests (results.json: score 0-1, one test per stage).")
    return 0
