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
runs and the pyproject are template files in ``autograd_kata/templates/``, the
ones that are not yet what they say named ``*.tmpl`` so that no tool takes one for the
project's own configuration (``pyproject.toml.tmpl`` is not TOML until filled).

Before it finishes, the command scans its own output for reference code (see
``core/leaks.py``) and, if it finds any, deletes the output and exits non-zero.
"""
from __future__ import annotations

import json
from pathlib import Path

from autograd_kata import __version__
from autograd_kata.core.build import PRISTINE_DIR
from autograd_kata.core.errors import Refusal
from autograd_kata.core.leaks import refuse_leaks
from autograd_kata.core.manifest import PROTECTED_ROLES, RELEASE_FILE, student_role
from autograd_kata.core.student_copy import fill, install, sha256, staged, template, write_student_tree

# not autograde.yaml: Classroom 50 writes that one into each student's repository
WORKFLOW = ".github/workflows/kata-grade.yml"


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
    as an artifact, and the job's status (success only with every stage's points).
    The check also refuses anything importable added at the top of the repository (a
    module, a package but the graded folders and exercises/, a ``.pth``, ``setup.*``)."""
    checksums = dict(sorted((checksums or {}).items()))
    folders = sorted({path.split("/", 1)[0] + "/" for path in checksums if "/" in path} - {".github/"})
    verify = fill(template("verify_release.py.tmpl"), checksums=json.dumps(checksums, indent=1),
                  release_file=RELEASE_FILE, workflow=WORKFLOW, folders=json.dumps([f.rstrip("/") for f in folders]),
                  packages=json.dumps(sorted({f.rstrip("/") for f in folders} | {"exercises"})))
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
