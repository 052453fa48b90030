"""docs/instructors.md's commands, run word for word as an instructor would paste them.

Every indented command block of the guide (outside the fenced YAML and Python, which
tooltests/test_course.py and test_attacks_files.py parse and run) is read from the file, not
copied here, and run with bash in a scratch copy of the working tree: the paths it names
(``path/to/clones`` with two students, one complete and one untouched; ``path/to/student``
complete) are made first.  Each command's effect is then checked: the files it says it
writes exist and parse, and what they say is what the submission earned.  A command that
needs the network (``kata site DIR --fetch``, an install) is in no indented block.  The
Gradescope block ("Try it locally") is run by
test_classroom.py::test_the_readmes_try_it_locally_recipe_works_word_for_word; a new block
that no check here knows fails, so the guide cannot gain a command no test runs.
"""
from __future__ import annotations

import csv
import json
import os
import re
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from autograd_kata.core.manifest import STAGES
from kit import ROOT, reference, run, stub, working_tree

pytestmark = pytest.mark.timeout(900)

GUIDE = ROOT / "docs" / "instructors.md"
POINTS = sum(s.points for s in STAGES)


def command_blocks(text: str) -> list[list[str]]:
    """The guide's indented blocks (four spaces, outside ``` fences): each a list of lines."""
    blocks, current, fenced = [], [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("    ") and line.strip():
            current.append(line[4:])
            continue
        if current:
            blocks.append(current)
            current = []
    return blocks + ([current] if current else [])


def submission(folder: Path, complete: bool) -> Path:
    folder.mkdir(parents=True)
    for s in STAGES:
        (folder / f"{s.module}.py").write_text(reference(s.number) if complete else stub(s.number), encoding="utf-8")
    return folder


def total_of(table: str) -> str:
    found = re.search(r"^total\s+(\d+)/(\d+)", table, re.M)
    assert found, table
    return found.group(1)


# checks, by the command's first words: (exit status expected, what its effect must be)
def released(copy: Path, out: str) -> None:
    student = (copy / ".." / "autograd-kata-student").resolve()
    assert (student / "exercises").is_dir() and not (student / "solutions").exists(), sorted(os.listdir(student))


def classroom50(copy: Path, out: str) -> None:
    folder = Path("/tmp/kata-c50")
    assert (folder / "autograder.py").is_file() and (folder / "tests").is_dir(), sorted(os.listdir(folder))


def course(copy: Path, out: str) -> None:
    with open(copy / "grades.csv", encoding="utf-8-sig", newline="") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert set(rows) == {"ada", "bo"}, rows
    assert rows["ada"]["total"] == str(POINTS) and rows["bo"]["total"] == "0", rows
    assert (copy / "grades.reports" / "ada.txt").is_file()


def table(copy: Path, out: str) -> None:
    assert total_of(out) == str(POINTS), out


def junit(copy: Path, out: str) -> None:
    suites = ET.parse(copy / "grades.xml").getroot()
    cases = suites.findall(".//testcase")
    assert len(cases) >= len(STAGES) and not suites.findall(".//failure"), ET.tostring(suites)[:2000]


def as_json(copy: Path, out: str) -> None:
    report = json.loads((copy / "grades.json").read_text(encoding="utf-8"))
    assert report["graded"] and report["score"] == report["max_score"] == POINTS, \
        {k: v for k, v in report.items() if k != "stages"}


CHECKS = {
    "kata release": (0, released),
    "kata autograder --classroom50": (0, classroom50),
    "kata grade --class": (0, course),  # --class: 0 once every student is graded (kata grade --help)
    "kata grade --submission": (0, None),  # the format decides the check, below
}
BY_FORMAT = {None: table, "junit": junit, "json": as_json}


def check_for(line: str):
    for prefix, (status, check) in CHECKS.items():
        if line.startswith(prefix + " "):
            if check is None:
                fmt = re.search(r"--format\s+(\S+)", line)
                check = BY_FORMAT.get(fmt.group(1) if fmt else None)
                if check is None:
                    return None
            return status, check
    return None


def test_every_command_block_of_the_guide_runs_word_for_word_with_its_effect(tmp_path):
    blocks = command_blocks(GUIDE.read_text(encoding="utf-8"))
    gradescope = [b for b in blocks if any("run_autograder" in line for line in b)]
    assert len(gradescope) == 1, "the Gradescope block is run by test_classroom.py; it is not found as one block"
    lines = [line for b in blocks if b not in gradescope for line in b]
    unknown = [line for line in lines if check_for(line) is None]
    assert not unknown, f"docs/instructors.md has commands no check here runs (add one to CHECKS): {unknown}"
    unused = [p for p in CHECKS if not any(line.startswith(p + " ") for line in lines)]
    assert not unused, f"checks here whose command the guide no longer gives (drop them): {unused}"

    copy = working_tree(tmp_path / "kata")
    submission(copy / "path" / "to" / "clones" / "ada", complete=True)
    submission(copy / "path" / "to" / "clones" / "bo", complete=False)
    submission(copy / "path" / "to" / "student", complete=True)
    shutil.rmtree("/tmp/kata-c50", ignore_errors=True)
    env = {"PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"]}
    try:
        for line in lines:
            status, check = check_for(line)
            proc = run(["bash", "-euc", line], cwd=copy, env=env, timeout=600)
            said = proc.stdout + proc.stderr
            assert proc.returncode == status, f"{line}\nexit {proc.returncode}, expected {status}:\n{said[-3000:]}"
            check(copy, proc.stdout)
    finally:
        shutil.rmtree("/tmp/kata-c50", ignore_errors=True)
