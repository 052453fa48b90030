"""When grading itself goes wrong, no student pays (issue 31): a judge killed midway, a grader
environment that cannot import its tests (no pytest), a sandbox that cannot start.  Each
leaves the stage "not graded: the grader failed (why)": never a 0, never "crashes", not kept
by a rerun, exit status 3, and the platforms' wrappers publish no score."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from autograd_kata.classroom.course import outputs
from autograd_kata.classroom.course.run import Course
from autograd_kata.classroom.grading import grade as g
from autograd_kata.classroom.grading.formats import render
from autograd_kata.classroom.grading.report import GRADER
from autograd_kata.classroom.platforms.gradescope import build_autograder, unpack
from autograd_kata.classroom.sandbox import jail
from autograd_kata.classroom.sandbox.reaper import descendants
from autograd_kata.core.manifest import stage
from kit import ROOT, reference, run

STAGE = stage(1)
pytestmark = pytest.mark.timeout(240)


def perfect(folder: Path) -> Path:
    (folder / "exercises").mkdir(parents=True)
    (folder / STAGE.source("exercises")).write_text(reference(1), encoding="utf-8")
    return folder


def grader_copy(dest: Path, extra_test: str = "") -> Path:
    """The grader's own files (tests/, conftest.py, pyproject.toml), one test added to stage 1's."""
    shutil.copytree(ROOT / "tests", dest / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("conftest.py", "pyproject.toml"):
        shutil.copy2(ROOT / name, dest / name)
    if extra_test:
        test_file = dest / STAGE.test_file
        test_file.write_text(test_file.read_text(encoding="utf-8") + "\n\n" + extra_test, encoding="utf-8")
    return dest


def assert_not_graded(report, why: str) -> None:
    for grade_ in report.stages:
        assert grade_.problem_kind == GRADER and not grade_.graded, (grade_.problem_kind, grade_.problem)
        assert grade_.problem.startswith("not graded: the grader failed (") and why in grade_.problem, grade_.problem
    data = json.loads(render(report, "json", "en", False))
    assert data["graded"] is False and data["score"] is None, "a grader's failure is no score, not 0"
    assert [s["status"] for s in data["stages"]] == ["not_graded"] * len(report.stages)
    assert all(s["score"] is None for s in data["stages"])
    text = render(report, "text", "en", False)
    assert "not graded" in text.splitlines()[-3] and " 0/" not in text, text


def judges() -> list[int]:
    """The judges now running under this process (pytest with the grader's results channel)."""
    found = []
    for pid in descendants(os.getpid()):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"--kata-results=" in cmdline:
            found.append(pid)
    return found


def test_a_judge_killed_midway_leaves_the_stage_not_graded(tmp_path):
    """A judge killed by PID (the OOM killer does the same) while its tests run: the perfect
    submission is not graded, not given 55/100 as a crash."""
    grader = grader_copy(tmp_path / "grader", "def test_zz_holds_the_judge():\n    import time\n    time.sleep(60)\n")
    killed = []

    def kill_the_judge():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed:
            for pid in judges():
                if descendants(pid):  # its sandbox is up: the tests are running
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
            time.sleep(0.05)
    killer = threading.Thread(target=kill_the_judge)
    killer.start()
    report = g.grade(perfect(tmp_path / "ada"), grader, [STAGE], stage_timeout=60, jobs=1)
    killer.join()
    assert killed, "the judge was never seen running"
    assert_not_graded(report, "without results")
    assert report.seconds < 30, "a killed judge ends its stage at once"


def test_a_sandbox_that_cannot_start_leaves_the_stage_not_graded(tmp_path, monkeypatch):
    """The jail cannot launch the sandbox (here: its chroot root is missing): before any
    submitted code ran, so the grader failed, not the submission."""
    monkeypatch.setattr(jail.Isolation, "env", lambda self: {jail.ENV_MODE: "chroot",
                                                            jail.ENV_ROOT: str(tmp_path / "no-such-root")})
    report = g.grade(perfect(tmp_path / "ada"), ROOT, [STAGE], stage_timeout=30, jobs=1)
    assert_not_graded(report, "the sandbox could not start")


@pytest.fixture(scope="module")
def no_pytest(tmp_path_factory) -> Path:
    """A Python with the kata importable (PYTHONPATH) but no pytest: a grader venv set up wrong."""
    venv = tmp_path_factory.mktemp("venv") / "no-pytest"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    assert subprocess.run([str(python), "-c", "import pytest"], capture_output=True).returncode != 0
    return python


def kata_with(python: Path, *argv, cwd=ROOT):
    return run([str(python), "-m", "autograd_kata.instructor", *argv], cwd=cwd, env={"PYTHONPATH": str(ROOT)})


def test_a_grader_without_pytest_grades_nobody_exits_3_and_a_rerun_grades_again(tmp_path, no_pytest):
    klass = tmp_path / "class"
    perfect(klass / "ada")
    perfect(klass / "bob")
    out = tmp_path / "grades.csv"
    args = ("grade", "--class", str(klass), "--out", str(out), "--stage", "1", "--workers", "1")
    proc = kata_with(no_pytest, *args)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "ada: not graded (the grader failed" in proc.stdout and "No module named pytest" not in proc.stdout
    rows = out.read_text(encoding="utf-8-sig").splitlines()
    assert rows[1:] == ["ada,,,10,ada", "bob,,,10,bob"], "no score at all, never 0"
    report = json.loads((outputs.reports_dir(out) / "ada.json").read_text(encoding="utf-8"))
    assert "No module named pytest" in report["stages"][0]["reason"]
    summary = outputs.summary_path(out).read_text(encoding="utf-8")
    assert "not graded (the grader failed" in summary and "crashes" not in summary, summary
    fixed = run([sys.executable, "-m", "autograd_kata.instructor", *args], cwd=ROOT)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "kept" not in fixed.stdout, "a grader's failure is never kept by a rerun"
    assert out.read_text(encoding="utf-8-sig").splitlines()[1:] == ["ada,10,10,10,ada", "bob,10,10,10,bob"]


def test_kata_grade_of_one_submission_exits_3_when_the_grader_failed(tmp_path, no_pytest):
    proc = kata_with(no_pytest, "grade", "--submission", str(perfect(tmp_path / "ada")), "--stage", "1")
    assert proc.returncode == 3 and "total" in proc.stdout and "not graded" in proc.stdout, proc.stdout


def test_gradescope_publishes_no_score_when_the_grader_failed(tmp_path, no_pytest):
    """run_autograder with a grader that cannot load its tests: no results.json (an old one
    removed), exit 1: Gradescope says "The autograder failed to execute correctly"."""
    zip_path = tmp_path / "autograder.zip"
    assert build_autograder(ROOT, zip_path, out=lambda *a, **k: None) == 0
    base = tmp_path / "autograder"
    script = unpack(zip_path, base)
    perfect(base / "submission")
    results = base / "results" / "results.json"
    results.write_text(json.dumps({"score": 100.0, "output": "left from before", "tests": []}))
    proc = run(["bash", str(script)], cwd=base, env={"KATA_AUTOGRADER_ROOT": str(base), "KATA_PYTHON": str(no_pytest),
                                                      "PYTHONPATH": str(base / "source")})
    assert proc.returncode == 1 and "exit status 3" in proc.stderr, proc.stdout + proc.stderr
    assert list((base / "results").iterdir()) == [], "no score published, and the old one is gone"


def test_classroom50_reports_a_failed_autograder_and_leaves_no_result_json(tmp_path, no_pytest):
    folder = tmp_path / "autograder"
    proc = run([sys.executable, "-m", "autograd_kata.cli", "autograder", "--classroom50", str(folder)], cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    checkout = perfect(tmp_path / "checkout")
    (checkout / "result.json").write_text(json.dumps({"score": 100, "max-score": 100}))  # committed by the student
    proc = run([sys.executable, str(folder / "autograder.py")], cwd=checkout,
               env={"KATA_PYTHON": str(no_pytest), "PYTHONPATH": str(folder)})
    assert proc.returncode == 1 and "exit status 3" in proc.stderr, proc.stdout + proc.stderr
    assert not (checkout / "result.json").exists(), "the student's own result.json is never published"


def test_a_course_records_a_dead_worker_as_not_graded(tmp_path):
    """A grading that never came back (its worker died) is written as not graded."""
    klass = tmp_path / "class"
    perfect(klass / "ada")

    def dies(*a, **k):
        from concurrent.futures.process import BrokenProcessPool
        raise BrokenProcessPool("a worker died")
    out = tmp_path / "grades.csv"
    records = Course(klass, ROOT, out, (STAGE,), grade_one=dies).run()
    assert records[0]["graded"] is False and records[0]["status"] == {"1": "not_graded"}
    assert out.read_text(encoding="utf-8-sig").splitlines()[1:] == ["ada,,,10,ada"]


# --- what `kata grade --help` says, against what runs ---------------------------------------------

def grade_help() -> str:
    proc = run([sys.executable, "-m", "autograd_kata.cli", "grade", "--help"], cwd=ROOT, env={"KATA_LANG": "en"})
    assert proc.returncode == 0, proc.stderr
    return " ".join(proc.stdout.split())  # as one line: argparse wraps it at any word


def test_the_help_of_class_exit_statuses_is_what_a_class_run_returns(tmp_path, no_pytest):
    """Each exit status the help gives for --class, run: a class with a student who fails every
    test (graded, not full marks) exits 0; an empty class folder 1; a grader that cannot load its
    tests (some student not graded) 3. (Interrupted, 130 or 143: test_interrupts.py.)"""
    said = grade_help()
    assert ("With --class: 0 once every student is graded (whatever they scored; an empty shard too), "
            "1 when the class folder holds no student, 3 when some student could not be graded, "
            "130 or 143 when interrupted") in said, said
    klass = tmp_path / "class"
    perfect(klass / "ada")
    (klass / "bob" / "exercises").mkdir(parents=True)
    (klass / "bob" / STAGE.source("exercises")).write_text("raise SystemExit(1)\n", encoding="utf-8")
    args = ("grade", "--class", str(klass), "--stage", "1", "--workers", "1")
    graded = run([sys.executable, "-m", "autograd_kata.instructor", *args, "--out", str(tmp_path / "a.csv")], cwd=ROOT)
    assert graded.returncode == 0 and "bob: 0/10" in graded.stdout, graded.stdout + graded.stderr
    (tmp_path / "empty").mkdir()
    empty = run([sys.executable, "-m", "autograd_kata.instructor", "grade", "--class", str(tmp_path / "empty"),
                 "--out", str(tmp_path / "b.csv")], cwd=ROOT)
    assert empty.returncode == 1, empty.stdout + empty.stderr
    failed = kata_with(no_pytest, *args, "--out", str(tmp_path / "c.csv"))
    assert failed.returncode == 3 and "not graded" in failed.stdout, failed.stdout + failed.stderr


@pytest.mark.parametrize("root", [True, False], ids=["as-root", "not-root"])
def test_the_default_workers_are_the_cpus_this_process_may_use_as_root_and_not(tmp_path, monkeypatch, root):
    """--workers' help: by default, as many students at once as this process may use CPUs, as root
    too. Three CPUs allowed, five students: three gradings meet at once (a barrier of three), never four."""
    said = grade_help()
    assert ("students graded at once, each in its own process (default: the CPUs this process may use, "
            "as root too") in said, said
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2})
    monkeypatch.setattr(os, "geteuid", lambda: 0 if root else 1000)
    assert jail.is_root() is root
    meet, lock, now, most = threading.Barrier(3, timeout=30), threading.Lock(), [0], [0]

    def grade_one(submission, grader_root, stages, **kw):
        with lock:
            now[0] += 1
            most[0] = max(most[0], now[0])
        try:
            if Path(submission).name in ("s0", "s1", "s2"):
                meet.wait()  # only three at once if there are three workers
        finally:
            with lock:
                now[0] -= 1
        return g.Report(str(submission), [], isolated=True, isolation="isolation: fake")
    klass = tmp_path / "class"
    for n in range(5):
        perfect(klass / f"s{n}")
    records = Course(klass, ROOT, tmp_path / "grades.csv", (STAGE,), grade_one=grade_one).run()
    assert len(records) == 5 and most[0] == 3, most
