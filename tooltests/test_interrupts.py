"""SIGINT or SIGTERM to a ``kata grade --class`` run, sent to its main process or to its whole
process group (what Ctrl-C sends): it stops within seconds, keeps every student who finished,
leaves nothing running and never hangs (issue 31)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograd_kata.classroom.course import outputs
from autograd_kata.classroom.sandbox.reaper import descendants
from autograd_kata.core.manifest import stage
from kit import ROOT, reference

STAGE = stage(1)
pytestmark = pytest.mark.timeout(240)


def student(klass: Path, name: str, source: str) -> None:
    (klass / name / "exercises").mkdir(parents=True)
    (klass / name / STAGE.source("exercises")).write_text(source, encoding="utf-8")


def alive(pids: list[int]) -> list[int]:
    """Those of ``pids`` still running (a zombie is not)."""
    found = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            found.append(pid)
    return found


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("to", ["process", "group"])
def test_an_interrupted_class_stops_in_seconds_and_keeps_who_finished(tmp_path, sig, to):
    klass = tmp_path / "class"
    student(klass, "ada", reference(1))                       # graded first (one worker, in order)
    student(klass, "bob", "while True:\n    pass\n")          # hangs at import for up to the stage timeout
    student(klass, "cy", reference(1))                        # never reached
    out = tmp_path / "grades.csv"
    proc = subprocess.Popen([sys.executable, "-m", "autograd_kata.instructor", "grade", "--class", str(klass),
                             "--out", str(out), "--stage", "1", "--workers", "1", "--stage-timeout", "120"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and "ada" not in out.read_text(encoding="utf-8-sig") if out.exists() \
                else time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)  # bob's grading is under way: a worker, a judge and a sandbox
        running = descendants(proc.pid)
        assert len(running) >= 2, "bob is being graded"
        sent = time.monotonic()
        os.killpg(proc.pid, sig) if to == "group" else os.kill(proc.pid, sig)
        stdout, stderr = proc.communicate(timeout=15)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 128 + sig, (proc.returncode, stdout, stderr)
    assert took < 10, f"stopped {took:.1f} s after the signal"
    assert "interrupted: every student who finished is in" in stderr, stderr
    assert alive(running) == [], "nothing the run started outlives it"
    rows = out.read_text(encoding="utf-8-sig").splitlines()
    assert rows[1:] == ["ada,10,10,10,ada"], rows
    assert outputs.load_record(outputs.reports_dir(out), "ada") is not None
    assert outputs.load_record(outputs.reports_dir(out), "bob") is None, "an unfinished grading is never written"
