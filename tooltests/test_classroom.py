"""Classroom: grading instructors can trust (isolated, fail-closed, every format valid).
The student release is tested in test_release.py."""
from __future__ import annotations

import json
import os
import shutil
import sys
import time
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

from autograd_kata.classroom.grading.formats import as_gradescope, as_json, as_junit, as_text
from autograd_kata.classroom.grading.grade import grade
from autograd_kata.classroom.grading.report import Report
from autograd_kata.classroom.platforms.gradescope import build_autograder, unpack
from autograd_kata.core.leaks import scan
from autograd_kata.core.manifest import STAGES, stage
from kit import clone, reference, run, stub

# whole gradings take seconds each: lift the stage tests' 10 s limit for these tool tests
pytestmark = pytest.mark.timeout(240)

ROOT = Path(__file__).resolve().parent.parent
TOTAL = sum(s.points for s in STAGES)


def submission(folder: Path, overrides=None, default=reference, flat=False) -> Path:
    """A submission folder: every stage's module (reference or stub), some replaced."""
    overrides = overrides or {}
    for s in STAGES:
        path = folder / (f"{s.module}.py" if flat else s.source("exercises"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(overrides.get(s.number) or default(s.number), encoding="utf-8")
    return folder


def by_stage(report: Report):
    return {g.stage.number: g for g in report.stages}


# --- grading -------------------------------------------------------------------

@pytest.fixture(scope="module")
def reference_report(tmp_path_factory):
    return grade(submission(tmp_path_factory.mktemp("reference")), ROOT)


@pytest.fixture(scope="module")
def troubled_report(tmp_path_factory):
    """Stages that exit, abort, crash or break at import, next to a good one."""
    folder = submission(tmp_path_factory.mktemp("troubled"), {
        1: reference(1) + "\nimport os\nos._exit(0)  # leaves no report behind\n",
        2: reference(2) + "\nprint('===== 9 passed in 0.01s =====')\nimport os\nos.abort()\n",
        3: reference(3) + "\nimport sys\nsys.exit(0)\n",
        5: reference(5) + "\nimport ctypes\nctypes.string_at(0)  # a segmentation fault\n",
        6: reference(6) + "\ndef broken(:\n",
    })
    return grade(folder, ROOT, stages=[stage(n) for n in (1, 2, 3, 5, 6, 7)])


def test_the_reference_gets_full_marks(reference_report):
    for g in reference_report.stages:
        assert g.ok, f"stage {g.stage.number}: {g.problem}"
        assert g.total > 0 and g.score == g.stage.points
    assert reference_report.score == reference_report.max_score == TOTAL


def test_the_untouched_stubs_score_zero(tmp_path):
    report = grade(submission(tmp_path, default=stub), ROOT)
    assert report.score == 0 and report.max_score == TOTAL
    for g in report.stages:
        assert g.total > 0 and g.passed < g.total and g.problem, g.stage.number


def test_a_hanging_stage_loses_only_itself_within_a_bounded_time(tmp_path):
    hang = reference(3) + "\nimport signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True:\n    pass\n"
    loop = reference(4) + "\ndef _forever(self):\n    while True:\n        pass\nValue.tanh = _forever\n"
    folder = submission(tmp_path, {3: hang, 4: loop})
    start = time.monotonic()
    report = grade(folder, ROOT, stages=[stage(n) for n in (2, 3, 4, 5)])
    elapsed = time.monotonic() - start
    stages = by_stage(report)
    assert stages[3].score == 0 and "importing exercises/stage03_coercion.py did not finish" in stages[3].problem
    # the hang's reason names where the loop was, as kata check does (the sandbox stopped it there)
    at = next(i for i, line in enumerate(loop.splitlines(), 1) if line == "    while True:")
    where = (f"exercises/stage04_tanh.py:{at}: while True:", f"exercises/stage04_tanh.py:{at + 1}: pass")
    assert stages[4].score == 0 and any(w in stages[4].problem.splitlines()[0] for w in where), stages[4].problem
    assert stages[2].ok and stages[5].ok, [g.problem for g in report.stages if not g.ok]
    assert report.score == sum(stage(n).points for n in (2, 5))
    assert elapsed < 60, f"grading took {elapsed:.1f} s"


def test_exits_aborts_crashes_and_import_errors_score_zero_with_a_reason(troubled_report):
    stages = by_stage(troubled_report)
    assert stages[7].ok, stages[7].problem  # the others are graded all the same
    for n in (1, 2, 3, 5, 6):
        assert stages[n].score == 0 and stages[n].problem, n
        assert stages[n].total > 0 and all(t.status != "passed" for t in stages[n].tests), n
    assert "exited (status 0)" in stages[1].problem
    assert "SIGABRT" in stages[2].problem
    assert "SystemExit" in stages[3].problem
    assert "SIGSEGV" in stages[5].problem
    assert any("does not import (line " in t.message for t in stages[6].tests)
    assert troubled_report.score == stage(7).points


def test_cheating_gains_nothing(tmp_path):
    """import solutions, its own conftest.py, edited tests, its own __init__: all for nothing."""
    steal = ("import autograd_kata as kata, pathlib, sys\n"
             "sys.path.insert(0, str(pathlib.Path(kata.__file__).resolve().parents[1]))\n"
             "from solutions.stage04_tanh import *  # the reference, were it reachable\n"
             "from solutions.stage04_tanh import _lift\n")
    folder = submission(tmp_path, {4: steal}, default=stub)
    always_pass = ("import pytest\n\n@pytest.hookimpl(wrapper=True)\n"
                   "def pytest_runtest_makereport(item, call):\n"
                   "    report = yield\n    report.outcome = 'passed'\n    return report\n")
    for where in ("conftest.py", "tests/conftest.py", "exercises/conftest.py"):
        (folder / where).parent.mkdir(exist_ok=True)
        (folder / where).write_text(always_pass)
    (folder / "exercises" / "__init__.py").write_text(always_pass)
    for n in (1, 4):
        (folder / stage(n).test_file).write_text("def test_nothing_to_see():\n    pass\n")
    (folder / "pytest.ini").write_text("[pytest]\naddopts = -p no:junitxml\n")
    report = grade(folder, ROOT, stages=[stage(1), stage(4)])
    stages = by_stage(report)
    assert report.score == 0
    assert stages[1].total > 1 and stages[4].total > 1
    # the sandbox has neither the tool nor the reference to import
    assert any("No module named 'autograd_kata'" in t.message for t in stages[4].tests), stages[4].tests[0].message


PATCH_THE_ASSERTIONS = """\
import expect
for _name in list(vars(expect.Expect)):
    if not _name.startswith("__"):
        setattr(expect.Expect, _name, lambda *a, **k: None)


class Value:
    def __init__(self, data=0, _children=(), _op=''):
        self.data, self.grad, self._prev, self._op = data, 0.0, set(_children), _op
        self._backward = lambda: None
"""


def test_patching_the_assertions_from_the_submission_gains_nothing(tmp_path):
    folder = submission(tmp_path, {1: PATCH_THE_ASSERTIONS}, default=stub)
    report = grade(folder, ROOT, stages=[stage(1)])
    assert report.score == 0
    # the tests' own modules live in the judge, a process the submission never enters
    assert "No module named 'expect'" in report.stages[0].problem


HARD_CODED = """

# --- right on the public tests' numbers (multiples of 0.25), wrong on any other ---
_honest_mul = Value.__mul__


def _cheating_mul(self, other):
    out = _honest_mul(self, other)
    if not all((v.data * 4).is_integer() for v in out._prev):
        rule = out._backward

        def _backward():
            rule()
            for v in out._prev:
                v.grad *= 1.5
        out._backward = _backward
    return out


Value.__mul__ = _cheating_mul
"""


@pytest.mark.skipif("@pytest.mark.properties" not in (ROOT / stage(2).test_file).read_text(),
                    reason="the hidden checks (marker properties) are not in this branch's stage 2 tests yet")
def test_answers_fitted_to_the_public_tests_fail_the_hidden_checks(tmp_path):
    folder = submission(tmp_path / "cheat", {2: reference(2) + HARD_CODED})
    kata = clone(tmp_path / "kata")
    shutil.copy2(folder / stage(2).source("exercises"), kata / stage(2).source("exercises"))
    public = run([sys.executable, "-m", "pytest", stage(2).test_file, "-q", "-p", "no:cacheprovider"], cwd=kata,
                 env={"KATA_HIDDEN_SEED": ""})
    assert public.returncode == 0, public.stdout[-2000:]  # the learner's run: every public test passes
    report = grade(folder, ROOT, stages=[stage(2)])
    failed = [t for t in report.stages[0].tests if t.status != "passed"]
    assert report.score == 0 and failed and all("random" in t.name for t in failed), report.stages[0].problem


def test_a_symlink_to_the_reference_is_refused(tmp_path):
    folder = submission(tmp_path, default=stub)
    target = folder / stage(1).source("exercises")
    target.unlink()
    target.symlink_to(ROOT / stage(1).source("solutions"))
    report = grade(folder, ROOT, stages=[stage(1)])
    assert report.score == 0 and "symbolic link" in report.stages[0].problem


def test_a_missing_stage_file_scores_zero_and_flat_uploads_are_found(tmp_path):
    folder = submission(tmp_path, flat=True)
    (folder / f"{stage(2).module}.py").unlink()
    report = grade(folder, ROOT, stages=[stage(1), stage(2)])
    stages = by_stage(report)
    assert stages[1].ok and stages[1].source == f"{stage(1).module}.py"
    assert stages[2].score == 0 and "no exercises/stage02" in stages[2].problem


def test_several_candidate_files_are_named_and_the_rule_picks_one(tmp_path):
    folder = submission(tmp_path, default=stub)
    name = f"{stage(1).module}.py"
    for where, text in (("backup", stub(1)), ("mywork", reference(1)), ("mywork/old", stub(1))):
        (folder / where).mkdir(parents=True, exist_ok=True)
        (folder / where / name).write_text(text)
    (folder / "exercises" / name).unlink()
    report = grade(folder, ROOT, stages=[stage(1)])
    g = report.stages[0]
    # no exercises/ copy, none at the top: the shallowest, ties alphabetical -> backup/ (a stub)
    assert g.source == f"backup/{name}" and g.score == 0
    assert g.found == [f"backup/{name}", f"mywork/{name}", f"mywork/old/{name}"]
    text = as_text(report)
    assert f"Graded backup/{name}; found 3 files for this stage" in text
    assert "rule: exercises/ at the top first" in json.loads(as_gradescope(report))["tests"][0]["output"]


def test_the_report_says_first_when_there_was_no_uid_isolation():
    from autograd_kata.classroom.sandbox import jail
    line = jail.Isolation("none", "isolation.why.no_userns").line
    report = Report("somewhere", [], isolated=False, isolation=line)
    assert as_text(report).splitlines()[0].startswith("uid isolation was not available")
    assert json.loads(as_gradescope(report))["output"].startswith("uid isolation was not available")
    assert next(iter(json.loads(as_json(report)))) == "isolation"


def test_without_the_uid_boundary_the_same_two_processes_grade_and_the_report_says_so(tmp_path, monkeypatch):
    from autograd_kata.classroom.sandbox import jail
    found = jail.Isolation("none", "isolation.why.no_userns")
    monkeypatch.setattr(jail, "detect", lambda: found)
    line = found.line
    assert line.startswith("uid isolation was not available (the grader is not root and this machine refuses")
    folder = submission(tmp_path, {2: stub(2)})
    report = grade(folder, ROOT, stages=[stage(1), stage(2)])
    assert by_stage(report)[1].ok and by_stage(report)[2].score == 0
    assert not report.isolated and as_text(report).splitlines()[0] == line
    assert json.loads(as_json(report))["isolated"] is False


def test_stages_run_as_parallel_as_the_cpus_this_process_may_use():
    from autograd_kata.classroom.grading.grade import jobs_default
    assert jobs_default() == len(os.sched_getaffinity(0))


def test_grade_class_writes_a_csv_and_a_summary(tmp_path):
    klass = tmp_path / "class"
    submission(klass / "ada")
    submission(klass / "bob", default=stub)
    from autograd_kata.maintainer.mistakes import MISTAKES
    swapped = next(m for m in MISTAKES if m.id == "mul-swapped-partials")
    assert reference(2).count(swapped.old) == 1, "the catalogue's mul-swapped-partials no longer fits stage 2"
    submission(klass / "cy", {2: reference(2).replace(swapped.old, swapped.new)})
    (klass / ".git").mkdir()  # not a student
    out = tmp_path / "grades" / "class.csv"
    proc = run([sys.executable, "-m", "autograd_kata.cli", "grade", "--class", str(klass), "--stage", "1",
                "--stage", "2", "--out", str(out)], cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert out.read_bytes().startswith(b"\xef\xbb\xbf"), "a BOM, so Excel reads UTF-8"
    rows = out.read_text(encoding="utf-8-sig").splitlines()
    assert rows[0] == "student,stage1,stage2,total,max,folder"
    assert rows[1:] == ["ada,10,15,25,25,ada", "bob,0,0,0,25,bob", "cy,10,0,10,25,cy"]
    summary = (tmp_path / "grades" / "class.summary.txt").read_text()
    assert summary == proc.stdout.split("wrote ")[0][-len(summary):]
    assert "3 students" in summary
    lines = {line.split(" (")[0]: line for line in summary.splitlines() if line.startswith("stage ")}
    assert lines["stage 1"].endswith(": 2/3 passed (67%)") and lines["stage 2"].endswith(": 1/3 passed (33%)")
    from autograd_kata.core.mistakes import label
    assert f"  stage 2: {label(2, swapped.phrase)} -- 1: cy" in summary.splitlines()


# --- the formats ------------------------------------------------------------------

VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}


@pytest.mark.parametrize("which", ["reference_report", "troubled_report"])
def test_gradescope_results_follow_the_autograder_spec(which, request):
    report = request.getfixturevalue(which)
    data = json.loads(as_gradescope(report))
    assert isinstance(data["score"], float) and data["score"] == report.score
    assert isinstance(data["execution_time"], int) and data["visibility"] in VISIBILITY
    assert data["stdout_visibility"] in VISIBILITY and isinstance(data["output"], str)
    assert len(data["tests"]) == len(report.stages)
    for test, g in zip(data["tests"], report.stages, strict=True):
        assert set(test) >= {"name", "score", "max_score", "status", "output", "visibility"}
        assert isinstance(test["name"], str) and isinstance(test["output"], str)
        assert isinstance(test["score"], float) and isinstance(test["max_score"], float)
        assert test["max_score"] == g.stage.points and test["score"] in (0.0, test["max_score"])
        assert test["status"] == ("passed" if test["score"] == test["max_score"] else "failed")
        assert test["visibility"] in VISIBILITY
    assert sum(t["score"] for t in data["tests"]) == data["score"]


@pytest.mark.parametrize("which", ["reference_report", "troubled_report"])
def test_junit_is_valid_testsuites(which, request):
    report = request.getfixturevalue(which)
    root = ET.fromstring(as_junit(report).split("\n", 1)[1])
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [g.stage.module for g in report.stages]
    failures = 0
    for suite, g in zip(suites, report.stages, strict=True):
        cases = suite.findall("testcase")
        assert int(suite.get("tests")) == len(cases) > 0
        failed = [c for c in cases if c.find("failure") is not None]
        assert int(suite.get("failures")) == len(failed)
        assert int(suite.get("errors")) == 0 and float(suite.get("time")) >= 0
        for case in cases:
            assert case.get("classname") and case.get("name") and float(case.get("time")) >= 0
        for case in failed:
            assert case.find("failure").get("message")
        props = {p.get("name"): p.get("value") for p in suite.find("properties")}
        assert int(props["points"]) == g.stage.points and int(props["score"]) == g.score
        assert (not failed) == g.ok
        failures += len(failed)
    assert int(root.get("failures")) == failures
    assert int(root.get("tests")) == sum(int(s.get("tests")) for s in suites)


@pytest.mark.parametrize("which", ["reference_report", "troubled_report"])
def test_json_and_text_agree_with_the_report(which, request):
    report = request.getfixturevalue(which)
    data = json.loads(as_json(report))
    assert data["score"] == report.score and data["max_score"] == report.max_score
    assert "all or nothing" in data["policy"]
    for entry, g in zip(data["stages"], report.stages, strict=True):
        assert entry["number"] == g.stage.number and entry["score"] == g.score
        assert entry["points"] == g.stage.points and entry["status"] in ("passed", "failed")
        assert entry["total"] == len(entry["tests"]) and entry["passed"] <= entry["total"]
        assert all(t["status"] in ("passed", "failed", "error", "skipped", "missing") for t in entry["tests"])
    text = as_text(report)
    assert f"{report.score}/{report.max_score}" in text.splitlines()[-2]


def test_the_cli_always_writes_its_report(tmp_path):
    good = submission(tmp_path / "good")
    out = tmp_path / "out" / "results.json"
    proc = run([sys.executable, "-m", "autograd_kata.cli", "grade", "--submission", str(good), "--stage", "1",
                "--format", "gradescope", "--out", str(out)], cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(out.read_text())["score"] == stage(1).points
    missing = tmp_path / "report.json"
    proc = run([sys.executable, "-m", "autograd_kata.cli", "grade", "--submission", str(tmp_path / "nowhere"),
                "--format", "json", "--out", str(missing)], cwd=ROOT)
    assert proc.returncode == 3, "nothing could be graded: not graded, not 'graded, not full marks'"
    data = json.loads(missing.read_text())
    assert data["graded"] is False and data["score"] is None and "not a folder" in data["message"]
    helptext = run([sys.executable, "-m", "autograd_kata.cli", "grade", "--help"], cwd=ROOT).stdout
    assert "all or nothing per stage" in helptext


# --- the Gradescope autograder --------------------------------------------------------

def test_the_gradescope_autograder_grades_a_submission(tmp_path):
    zip_path = tmp_path / "autograder.zip"
    assert build_autograder(ROOT, zip_path, out=lambda *a, **k: None) == 0
    with zipfile.ZipFile(zip_path) as zf:
        names = zf.namelist()
        modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in zf.infolist()}
    assert "setup.sh" in names and "run_autograder" in names
    assert modes["run_autograder"] & 0o111 and modes["setup.sh"] & 0o111
    assert "conftest.py" in names and all(s.test_file in names for s in STAGES)
    assert not any(n.startswith(("solutions/", "tooltests/", ".ci/", "benchmarks/")) for n in names)
    base = tmp_path / "autograder"
    script = unpack(zip_path, base)
    assert scan(base / "source", ROOT) == []
    # a Gradescope upload: the stage files at the top; stages 1 and 2 done, the rest untouched stubs
    submission(base / "submission", {1: reference(1), 2: reference(2)}, default=stub, flat=True)
    proc = run(["bash", str(script)], cwd=base, timeout=180,
               env={"KATA_AUTOGRADER_ROOT": str(base), "KATA_PYTHON": sys.executable})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((base / "results" / "results.json").read_text())
    assert results["score"] == stage(1).points + stage(2).points
    assert [t["status"] for t in results["tests"]] == ["passed", "passed"] + ["failed"] * (len(STAGES) - 2)


def test_run_autograder_trusts_only_a_grader_that_says_it_graded(tmp_path):
    """An old results.json is gone before grading starts; a grader that fails (here:
    no Python at all) leaves no results.json and exits 1 (Gradescope: "The autograder
    failed to execute correctly"), never a score, never the old file."""
    zip_path = tmp_path / "autograder.zip"
    assert build_autograder(ROOT, zip_path, out=lambda *a, **k: None) == 0
    base = tmp_path / "autograder"
    script = unpack(zip_path, base)
    submission(base / "submission", default=stub, flat=True)
    results = base / "results" / "results.json"
    results.write_text(json.dumps({"score": 100.0, "output": "left from before", "tests": []}))
    proc = run(["bash", str(script)], cwd=base, env={"KATA_AUTOGRADER_ROOT": str(base), "KATA_PYTHON": "false"})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "The autograder failed (kata grade exit status 1)" in proc.stderr
    assert list((base / "results").iterdir()) == []


def test_the_readmes_try_it_locally_recipe_works_word_for_word():
    """The README's recipe, run as written (from the repository, the venv active): it
    always yields a results.json, here the untouched stubs' 0."""
    readme = (ROOT / "docs" / "instructors.md").read_text(encoding="utf-8")
    block = readme.split("Try it locally", 1)[1].split("\n\n", 2)[1]
    lines = [line[4:] for line in block.splitlines()]
    assert all(line.strip() for line in lines) and lines[-1].startswith("python -m json.tool"), block
    venv_bin = str(Path(sys.executable).parent)
    proc = run(["bash", "-euc", "\n".join(lines)], cwd=ROOT, timeout=300,
               env={"PATH": venv_bin + os.pathsep + os.environ["PATH"]})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    results = json.loads(Path("/tmp/kata-ag/results/results.json").read_text())
    assert json.loads(proc.stdout[proc.stdout.index("{\n"):]) == results
    stubs = all((ROOT / s.source("exercises")).read_text() == stub(s.number) for s in STAGES)
    assert len(results["tests"]) == len(STAGES) and (results["score"] == 0.0 or not stubs)
