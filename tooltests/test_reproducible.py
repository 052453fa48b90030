"""The same ``--seed`` gives byte-identical reports even for code whose answer depends on where
its objects live (a set of nodes ordered by address, ``id()``): the sandbox runs without
address-space randomization (``ADDR_NO_RANDOMIZE``) and with a fixed string hash (issue 31)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from autograd_kata.classroom.grading import grade as g
from autograd_kata.classroom.grading.formats import render
from autograd_kata.classroom.sandbox.confine import ADDR_NO_RANDOMIZE
from autograd_kata.core.manifest import stage
from kit import ROOT, reference

STAGE = stage(1)
pytestmark = pytest.mark.timeout(240)


def personality_allowed() -> bool:
    """Whether this machine lets a process turn address randomization off (Docker's default
    seccomp profile refuses it)."""
    probe = f"import ctypes, sys; sys.exit(ctypes.CDLL(None).personality({ADDR_NO_RANDOMIZE}) == -1)"
    return subprocess.run([sys.executable, "-c", probe]).returncode == 0


def address_dependent(folder: Path) -> Path:
    """Stage 1's reference with a bug whose effect depends on each node's address."""
    source = reference(1)
    bug = "        self.data = float(data) + ((id(self) >> 6) & 1)  # where the node lives decides\n"
    assert "        self.data = float(data)\n" in source
    (folder / "exercises").mkdir(parents=True)
    (folder / STAGE.source("exercises")).write_text(source.replace("        self.data = float(data)\n", bug, 1),
                                                    encoding="utf-8")
    return folder


@pytest.mark.skipif(not personality_allowed(), reason="this machine refuses personality(ADDR_NO_RANDOMIZE)")
def test_the_same_seed_grades_address_dependent_code_byte_for_byte_alike(tmp_path):
    submission = address_dependent(tmp_path / "ada")
    reports = []
    for _ in range(4):
        report = g.grade(submission, ROOT, [STAGE], stage_timeout=30, jobs=1, seed=7)
        reports.append(render(report, "json", "en", timed=False))
        assert 0 < report.stages[0].passed < report.stages[0].total, "the bug shows in some tests, not all"
    assert len(set(reports)) == 1, "four gradings with --seed 7 differ"
