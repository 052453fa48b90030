"""``kata grade`` off Linux (issue 29 item 3), simulated where the OS is not at hand.

An instructor trying a submission on a laptop: on macOS there is no
``resource.RLIMIT_MSGQUEUE`` and no ``prctl``; on Windows no ``resource``, ``fcntl``
or ``pwd`` at all.  A child interpreter is made to look like each (``sys.platform``
set, the missing names taken away, the modules refused) before it imports the grader,
then runs ``kata grade`` as the command line would: macOS grades in ``none`` and says
why on the report's first line; Windows refuses in one line (exit 2).  Neither shows
a traceback.  (The judges the macOS run starts are real Linux processes: the grading
process is the one simulated, and it is where the crash was.)
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from autograd_kata.core.i18n import t
from autograd_kata.core.manifest import stage
from kit import reference

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="simulates other OSes on Linux"),
              pytest.mark.timeout(300)]

LOOK_LIKE = r'''
import ctypes, importlib.abc, shutil, subprocess, sys, tempfile, concurrent.futures, json, select, signal  # noqa
system, argv = sys.argv[1], sys.argv[2:]
if system == "darwin":
    import resource
    del resource.RLIMIT_MSGQUEUE                 # macOS has none
    real = ctypes.CDLL
    class NoPrctl:                               # a libc without prctl (nor mount, unshare)
        def __init__(self, lib):
            self._lib = lib
        def __getattr__(self, name):
            if name in ("prctl", "mount", "unshare"):
                raise AttributeError(name)
            return getattr(self._lib, name)
    ctypes.CDLL = lambda *a, **k: NoPrctl(real(*a, **k))
else:                                            # Windows: these modules do not exist
    missing = {"resource", "fcntl", "pwd", "grp", "termios"}
    for name in missing:
        sys.modules.pop(name, None)
    class Refuse(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name in missing:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    sys.meta_path.insert(0, Refuse())
sys.platform = system
import autograd_kata.classroom.grading.grade  # noqa: F401 - importing the grader must not crash
from autograd_kata.cli import main
sys.exit(main(argv))
'''


def kata_on(system: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", LOOK_LIKE, system, *args], capture_output=True, text=True,
                          timeout=240, check=False, cwd=ROOT, env={"PATH": "/usr/bin:/bin", "KATA_IMPL": "",
                                                                   "KATA_LANG": "en", "HOME": str(ROOT)})


@pytest.fixture
def submission(tmp_path):
    path = tmp_path / "student" / stage(1).source("exercises")
    path.parent.mkdir(parents=True)
    path.write_text(reference(1), encoding="utf-8")
    return path.parent.parent


def test_on_macos_kata_grade_grades_in_none_and_says_why_on_the_first_line(submission, tmp_path):
    out = tmp_path / "r.json"
    proc = kata_on("darwin", "grade", "--submission", str(submission), "--stage", "1", "--format", "json",
                   "--out", str(out))
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    data = json.loads(out.read_text())
    assert data["isolation"] == t("isolation.none_unfiltered", why=t("isolation.why.not_linux")), data["isolation"]
    assert data["isolated"] is False and proc.returncode == 0, data
    assert data["score"] == stage(1).points, [g["reason"] for g in data["stages"]]


def test_on_windows_kata_grade_refuses_in_one_line(submission, tmp_path):
    proc = kata_on("win32", "grade", "--submission", str(submission), "--stage", "1", "--format", "json",
                   "--out", str(tmp_path / "r.json"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and t("grade.refused.windows") in lines[0], proc.stderr
    assert not (tmp_path / "r.json").exists()
