"""``kata autograder --prairielearn DIR``: a PrairieLearn question whose external grader is the
kata, checked against PrairieLearn's documented format (docs/externalGrading.md, "The Grading
Process" and "Grading results"): the question's tests/ become /grade/tests, the student's files
/grade/student, and the entrypoint writes /grade/results/results.json: ``score`` from 0 to 1,
``tests`` with ``points`` and ``max_points``, ``gradable: false`` (no score) when the submission
cannot be graded (a syntax error, a grader that failed), at most 1 MB."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograd_kata.classroom.grading.formats import PRAIRIELEARN_LIMIT, as_prairielearn
from autograd_kata.classroom.grading.report import Report, StageGrade
from autograd_kata.core.manifest import STAGES, stage
from autograd_kata.core.results.model import TestResult
from kit import ROOT, reference, run, stub

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def question(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("pl") / "kata-question"
    proc = run([sys.executable, "-m", "autograd_kata.cli", "autograder", "--prairielearn", str(folder)], cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return folder


def test_the_question_is_what_prairielearn_reads(question):
    info = json.loads((question / "info.json").read_text(encoding="utf-8"))
    assert info["type"] == "v3" and info["gradingMethod"] == "External" and info["uuid"]
    options = info["externalGradingOptions"]
    assert options["enabled"] is True and isinstance(options["image"], str) and isinstance(options["timeout"], int)
    assert options["entrypoint"] == "/grade/tests/run.sh", "the question's tests/ is copied to /grade/tests"
    run_sh = question / "tests" / "run.sh"
    assert os.access(run_sh, os.X_OK)
    assert (question / "tests" / "tests" / "conftest.py").is_file() and (question / "tests" / "autograd_kata").is_dir()
    assert not (question / "tests" / "solutions").exists()
    html = (question / "question.html").read_text(encoding="utf-8")
    assert "<pl-file-upload" in html and "<pl-external-grader-results>" in html


def check_documented(results: dict) -> None:
    """PrairieLearn's results.json, as its docs define it."""
    assert isinstance(results.get("gradable", True), bool)
    if results.get("gradable", True):
        assert isinstance(results["score"], float) and 0.0 <= results["score"] <= 1.0
    else:
        assert "score" not in results, "not gradable: no score at all"
        errors = results.get("format_errors")
        assert isinstance(errors, (str, list)) and errors, "why it cannot be graded"
    for test in results.get("tests", []):
        assert isinstance(test["name"], str)
        assert isinstance(test["points"], (int, float)) and isinstance(test["max_points"], (int, float))
        assert 0 <= test["points"] <= test["max_points"]
        assert all(isinstance(test.get(key, ""), str) for key in ("description", "message", "output"))


def grade_in(question: Path, base: Path, files: dict[str, str], env: dict | None = None) -> dict:
    """Lay out /grade as PrairieLearn does (here under ``base``), run the entrypoint, read the results."""
    shutil.copytree(question / "tests", base / "tests", symlinks=True)
    (base / "student").mkdir(parents=True)
    for name, text in files.items():
        (base / "student" / name).write_text(text, encoding="utf-8")
    proc = run(["bash", str(base / "tests" / "run.sh")], cwd=base,
               env={"KATA_GRADE_ROOT": str(base), "KATA_PYTHON": sys.executable, **(env or {})})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    path = base / "results" / "results.json"
    assert path.stat().st_size < PRAIRIELEARN_LIMIT
    results = json.loads(path.read_text(encoding="utf-8"))
    check_documented(results)
    return results


def flat(done: int) -> dict[str, str]:
    """Stage files as a student uploads them: at the top, the first ``done`` stages solved."""
    return {f"{s.module}.py": reference(s.number) if s.number <= done else stub(s.number) for s in STAGES}


def test_a_submission_scores_its_share_from_0_to_1_with_points_per_stage(question, tmp_path):
    results = grade_in(question, tmp_path / "grade", flat(2))
    assert results["gradable"] is True
    earned = stage(1).points + stage(2).points
    assert results["score"] == pytest.approx(earned / sum(s.points for s in STAGES))
    assert [t["points"] for t in results["tests"]] == [float(s.points) if s.number <= 2 else 0.0 for s in STAGES]
    assert [t["max_points"] for t in results["tests"]] == [float(s.points) for s in STAGES]


def test_a_syntax_error_is_not_gradable_and_costs_no_attempt(question, tmp_path):
    files = flat(2)
    files[f"{stage(1).module}.py"] = "class Value(\n"
    results = grade_in(question, tmp_path / "grade", files)
    assert results["gradable"] is False
    (error,) = results["format_errors"]  # stage 1 alone: the others were graded
    assert error.startswith("Stage 1: ") and "SyntaxError" in error, error


def test_a_grader_that_failed_is_not_gradable(question, tmp_path):
    venv = tmp_path / "no-pytest"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    base = tmp_path / "grade"
    results = grade_in(question, base, flat(8), env={"KATA_PYTHON": str(venv / "bin" / "python"),
                                                    "PYTHONPATH": str(base / "tests")})
    assert results["gradable"] is False and "No module named pytest" in json.dumps(results, ensure_ascii=False)


def test_a_grader_that_never_reported_is_not_gradable(question, tmp_path):
    results = grade_in(question, tmp_path / "grade", flat(8), env={"KATA_PYTHON": "false"})
    assert results["gradable"] is False and "exit status 1" in results["message"]


def test_results_stay_under_prairielearns_limit_whatever_the_messages():
    flood = "x" * 4000  # one line each, 2,000 tests a stage: megabytes of first lines
    stages = []
    for s in STAGES:
        g = StageGrade(s, source=f"{s.module}.py")
        g.tests = [TestResult(f"tests/t.py::test_{i}", "failed", flood, "wrong") for i in range(2000)]
        g.problem = "many tests did not pass"
        stages.append(g)
    text = as_prairielearn(Report("sub", stages, isolated=True, isolation="isolated"), "en")
    assert len(text.encode("utf-8")) < PRAIRIELEARN_LIMIT
    check_documented(json.loads(text))
