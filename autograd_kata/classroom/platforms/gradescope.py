"""``kata grade --autograder ZIP``: a Gradescope autograder for the kata.

The zip holds, at its root, what Gradescope's autograder specification asks
for: ``setup.sh`` (run once, as root, when the image is built: a virtual
environment with the kata and its test dependencies) and ``run_autograder``
(run for every submission: ``kata grade`` on ``/autograder/submission``,
writing ``/autograder/results/results.json``), next to the grader's own tests,
``conftest.py`` and the ``kata`` tool, with the stubs, never the reference.
The zip's files are scanned for reference code like a student release.

``run_autograder`` reads ``KATA_AUTOGRADER_ROOT`` (default ``/autograder``) and
``KATA_PYTHON`` (default the image's virtual environment), so it can be tried
anywhere.
"""
from __future__ import annotations

import os
import shutil
import stat
import tempfile
import zipfile
from pathlib import Path

from autograd_kata.core.errors import Refusal

# the student copy's files the grader needs
NEEDED = ("autograd_kata/", "tests/", "exercises/", "conftest.py", "pyproject.toml", "README.md")

SETUP_SH = """\
#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image:
# one virtual environment with the kata and its test dependencies (installed
# once, for every stage and every submission), and the jail the submitted code
# runs in.
# The kata needs Python 3.10 or newer with pytest, pytest-check and pytest-timeout.
set -euxo pipefail
apt-get update
apt-get install -y python3 python3-pip python3-venv
python3 -m venv /autograder/venv
/autograder/venv/bin/python -m pip install --upgrade pip
/autograder/venv/bin/python -m pip install /autograder/source
# the jail, made once for every submission: the sandbox users and, in a container without
# namespaces, the read-only copy of Python it chroots into; prints which isolation grading will use
/autograder/venv/bin/python -m autograd_kata.classroom.sandbox.jail
"""

RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Gradescope runs this for every submission: grade /autograder/submission with
# the tests shipped in /autograder/source, into /autograder/results/results.json.
# {policy}.
# results.json is only ever the grader's: an old one is removed first, and the
# grader's report (written to a private folder) takes its place only when the
# grader's own exit status says it graded (0: full marks, 1: not full marks).
# A grader that failed (3: not graded, or no report at all) leaves no results.json
# and exits 1: Gradescope then says "The autograder failed to execute correctly"
# instead of publishing a score, and the instructor can rerun it once it is fixed.
set -u
ROOT="${{KATA_AUTOGRADER_ROOT:-/autograder}}"
PYTHON="${{KATA_PYTHON:-$ROOT/venv/bin/python}}"
RESULTS="$ROOT/results/results.json"
mkdir -p "$ROOT/results"
rm -f "$RESULTS"
fail() {{
  echo "kata: $1 No score was published; fix the autograder and rerun this submission." >&2
  exit 1
}}
PRIVATE="$(mktemp -d "$ROOT/results/.kata-grade.XXXXXX")" || fail "The autograder could not make its folder."
chmod 700 "$PRIVATE"
cd "$ROOT/source" || fail "The autograder has no source folder."
"$PYTHON" -m autograd_kata grade \\
    --submission "$ROOT/submission" --tests-from "$ROOT/source" \\
    --stage-timeout "${{KATA_STAGE_TIMEOUT:-30}}" \\
    --format gradescope --lang {lang} --out "$PRIVATE/results.json"
status=$?
if [ "$status" -le 1 ] && [ -s "$PRIVATE/results.json" ]; then
  mv -f "$PRIVATE/results.json" "$RESULTS"
  rm -rf "$PRIVATE"
  exit 0
fi
rm -rf "$PRIVATE"
fail "The autograder failed (kata grade exit status $status)."
"""


def build_autograder(root: Path, zip_path: Path, out=print, lang: str = "en") -> int:
    """Write the Gradescope autograder zip for the kata at ``root``; its feedback is in ``lang``. Exit code."""
    from autograd_kata.classroom.grading.report import POLICY
    from autograd_kata.core.leaks import refuse_leaks
    from autograd_kata.core.student_copy import source_files, write_student_tree

    root, zip_path = Path(root).resolve(), Path(zip_path).resolve()
    if not (root / "solutions").is_dir():
        raise Refusal(f"{root} has no solutions/; run it in the maintainers' repository.", 2,
                      where="grade --autograder")
    if zip_path.exists():
        raise Refusal(f"{zip_path} exists; refusing to overwrite it.", 2, where="grade --autograder")
    with tempfile.TemporaryDirectory(prefix="kata-autograder-") as tmp:
        staging = Path(tmp) / "source"
        staging.mkdir()
        files = [f for f in source_files(root) if f.startswith(NEEDED)]
        write_student_tree(root, staging, files, pristine=False)
        (staging / "setup.sh").write_text(SETUP_SH, encoding="utf-8")
        (staging / "run_autograder").write_text(RUN_AUTOGRADER.format(policy=POLICY, lang=lang), encoding="utf-8")
        if refuse_leaks(staging, root, "the autograder", out):
            return 1
        zip_path.parent.mkdir(parents=True, exist_ok=True)
        partial = zip_path.with_name(zip_path.name + ".partial")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as zf:
            for path in sorted(staging.rglob("*")):
                if not path.is_file():
                    continue
                rel = path.relative_to(staging).as_posix()
                info = zipfile.ZipInfo(rel, date_time=(2020, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                mode = 0o755 if rel in ("setup.sh", "run_autograder") else 0o644
                info.external_attr = (stat.S_IFREG | mode) << 16
                zf.writestr(info, path.read_bytes())
        os.replace(partial, zip_path)
    out(f"wrote the Gradescope autograder to {zip_path}")
    out("Upload it in Gradescope: Configure Autograder -> Zip file upload. "
        "Students submit their exercises/stageNN_*.py files (or the whole repository).")
    return 0


def unpack(zip_path: Path, autograder_root: Path) -> Path:
    """Lay the zip out as Gradescope does (``source/``, ``run_autograder``), for trying it locally."""
    autograder_root = Path(autograder_root)
    source = autograder_root / "source"
    source.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(source)
        for info in zf.infolist():
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                os.chmod(source / info.filename, mode)
    shutil.copy2(source / "run_autograder", autograder_root / "run_autograder")
    (autograder_root / "results").mkdir(exist_ok=True)
    return autograder_root / "run_autograder"
