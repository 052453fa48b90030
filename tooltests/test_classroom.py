"""Classroom: the student release (no reference code, a copy that works) and
grading instructors can trust (isolated, fail-closed, every format valid)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

from autograd_kata.core.build import PRISTINE_DIR, pristine_path, regions, strip_markers, stub_source
from autograd_kata.classroom.grade import Report, as_gradescope, as_json, as_junit, as_text, grade
from autograd_kata.classroom.gradescope import build_autograder, unpack
from autograd_kata.core.manifest import STAGES, stage
from autograd_kata.core.state import pristine_stub
from autograd_kata.classroom.release import (
    classroom_workflow,
    release,
    scan,
    source_files,
    student_pyproject,
    student_readme,
)

# whole gradings take seconds each: lift the stage tests' 10 s limit for these tool tests
pytestmark = pytest.mark.timeout(240)

ROOT = Path(__file__).resolve().parent.parent
TOTAL = sum(s.points for s in STAGES)


def reference(n) -> str:
    s = stage(n)
    return strip_markers((ROOT / s.source("solutions")).read_text(encoding="utf-8"))


def stub(n) -> str:
    s = stage(n)
    return stub_source((ROOT / s.source("solutions")).read_text(encoding="utf-8"), s)


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


def clone(dest: Path) -> Path:
    """A throwaway copy of the maintainers' repository (no .git: the walk path)."""
    for name in source_files(ROOT) + [str(p.relative_to(ROOT)) for p in (ROOT / "solutions").glob("*.py")]:
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def run(args, cwd, env=None, timeout=120):
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False,
                          env={**os.environ, "KATA_IMPL": "", **(env or {})})


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
        assert g.ok, f"stage {g.stage.number}: {g.reason}"
        assert g.total > 0 and g.score == g.stage.points
    assert reference_report.score == reference_report.max_score == TOTAL


def test_the_untouched_stubs_score_zero(tmp_path):
    report = grade(submission(tmp_path, default=stub), ROOT)
    assert report.score == 0 and report.max_score == TOTAL
    for g in report.stages:
        assert g.total > 0 and g.passed < g.total and g.reason, g.stage.number


def test_a_hanging_stage_loses_only_itself_within_a_bounded_time(tmp_path):
    hang = reference(3) + "\nimport signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True:\n    pass\n"
    folder = submission(tmp_path, {3: hang})
    start = time.monotonic()
    report = grade(folder, ROOT, stages=[stage(n) for n in (2, 3, 4, 5)], stage_timeout=4)
    elapsed = time.monotonic() - start
    stages = by_stage(report)
    assert stages[3].score == 0 and "did not finish within 4 s" in stages[3].reason
    assert all(g.ok for n, g in stages.items() if n != 3), [g.reason for g in report.stages if not g.ok]
    assert report.score == sum(stage(n).points for n in (2, 4, 5))
    assert elapsed < 30, f"grading took {elapsed:.1f} s"


def test_exits_aborts_crashes_and_import_errors_score_zero_with_a_reason(troubled_report):
    stages = by_stage(troubled_report)
    assert stages[7].ok, stages[7].reason  # the others are graded all the same
    for n in (1, 2, 3, 5, 6):
        assert stages[n].score == 0 and stages[n].reason, n
        assert stages[n].total > 0 and all(t.status != "passed" for t in stages[n].tests), n
    assert "without a test report" in stages[1].reason and "exit code 0" in stages[1].reason
    assert "SIGABRT" in stages[2].reason
    assert "SIGSEGV" in stages[5].reason
    assert any("does not import" in t.message for t in stages[6].tests)
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
    assert any("No module named 'solutions'" in t.message for t in stages[4].tests), stages[4].tests[0].message


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
    assert "changed the test harness (expect.Expect" in report.stages[0].reason


def test_a_symlink_to_the_reference_is_refused(tmp_path):
    folder = submission(tmp_path, default=stub)
    target = folder / stage(1).source("exercises")
    target.unlink()
    target.symlink_to(ROOT / stage(1).source("solutions"))
    report = grade(folder, ROOT, stages=[stage(1)])
    assert report.score == 0 and "symbolic link" in report.stages[0].reason


def test_a_missing_stage_file_scores_zero_and_flat_uploads_are_found(tmp_path):
    folder = submission(tmp_path, flat=True)
    (folder / f"{stage(2).module}.py").unlink()
    report = grade(folder, ROOT, stages=[stage(1), stage(2)])
    stages = by_stage(report)
    assert stages[1].ok and stages[1].source == f"{stage(1).module}.py"
    assert stages[2].score == 0 and "no exercises/stage02" in stages[2].reason


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
    for test, g in zip(data["tests"], report.stages):
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
    for suite, g in zip(suites, report.stages):
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
    for entry, g in zip(data["stages"], report.stages):
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
    assert proc.returncode == 1
    data = json.loads(missing.read_text())
    assert data["score"] == 0 and "not a folder" in data["message"]
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


# --- the student release ------------------------------------------------------------------

@pytest.fixture(scope="module")
def released(tmp_path_factory):
    dest = tmp_path_factory.mktemp("release") / "student"
    said = []
    code = release(ROOT, dest, out=said.append)
    assert code == 0, "\n".join(said)
    return dest


def test_the_release_holds_no_reference_code(released):
    assert not (released / "solutions").exists()
    for left_out in ("benchmarks", "tooltests", ".ci", "mutants", "autograd_kata/maintainer/mistakes.py"):
        assert not (released / left_out).exists(), left_out
    assert scan(released, ROOT) == []
    for s in STAGES:
        assert (released / s.source("exercises")).read_text() == stub(s.number)
        assert pristine_path(released, s).read_text() == stub(s.number)
        assert pristine_stub(s, released) == stub(s.number)
        assert (released / s.test_file).is_file() or not (ROOT / s.test_file).is_file()
    for name in ("conftest.py", "pyproject.toml", "README.md", ".gitignore", "autograd_kata/cli.py", "tests/expect.py"):
        assert (released / name).is_file(), name
    hints = sorted(p.relative_to(ROOT) for p in (ROOT / "hints").rglob("*.md"))
    assert hints == sorted(p.relative_to(released) for p in (released / "hints").rglob("*.md"))
    text = (released / "pyproject.toml").read_text()
    assert "mutmut" not in text and "solutions" not in text
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads(text)
    assert project["project"]["name"] and project["tool"]["pytest"]["ini_options"]["timeout"]


def test_the_release_tests_run_and_fail_on_the_stubs(released):
    env = {"PYTHONPATH": str(released), "PYTHONDONTWRITEBYTECODE": "1"}
    proc = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", stage(1).test_file],
               cwd=released, env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "not written yet: stage 1" in proc.stdout
    proc = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--impl", "solutions",
                stage(1).test_file], cwd=released, env=env)
    assert proc.returncode != 0  # there is no reference to test


def test_kata_status_and_hint_work_in_the_release(released, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(released, copy)
    env = {"PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    proc = run([sys.executable, "-m", "autograd_kata.cli", "status"], cwd=copy, env=env)
    assert "Traceback" not in proc.stderr + proc.stdout and proc.returncode in (0, 1), proc.stdout + proc.stderr
    assert stage(1).title in proc.stdout
    if (ROOT / stage(1).hint_file("en")).is_file():
        proc = run([sys.executable, "-m", "autograd_kata.cli", "hint", "1", "--lang", "en"], cwd=copy, env=env)
        assert proc.returncode == 0 and proc.stdout.strip(), proc.stdout + proc.stderr


def test_kata_reset_restores_the_stub_in_the_release(released, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(released, copy)
    target = copy / stage(4).source("exercises")
    target.write_text(reference(4))
    proc = run([sys.executable, "-m", "autograd_kata.cli", "reset", "4", "--yes"], cwd=copy,
               env={"PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert target.read_text() == stub(4)


def test_the_release_workflow_is_github_classrooms_form(released):
    text = (released / ".github" / "workflows" / "classroom.yml").read_text()
    assert text == classroom_workflow()
    yaml = pytest.importorskip("yaml")
    flow = yaml.safe_load(text)
    assert flow["name"] == "Autograding Tests" and flow["on"] == ["push", "repository_dispatch"]
    steps = flow["jobs"]["run-autograding-tests"]["steps"]
    graders = [s for s in steps if s.get("uses") == "classroom-resources/autograding-command-grader@v1"]
    assert [g["id"] for g in graders] == [f"stage{s.number}" for s in STAGES]
    for g, s in zip(graders, STAGES):
        w = g["with"]
        assert set(w) == {"test-name", "setup-command", "command", "timeout", "max-score"}
        assert w["max-score"] == s.points and isinstance(w["timeout"], int)
        assert w["command"].endswith(f"grade --stage {s.number}")
    reporter = steps[-1]
    assert reporter["uses"] == "classroom-resources/autograding-grading-reporter@v1"
    assert reporter["with"]["runners"] == ",".join(f"stage{s.number}" for s in STAGES)
    assert reporter["env"] == {f"STAGE{s.number}_RESULTS": f"${{{{steps.stage{s.number}.outputs.result}}}}"
                               for s in STAGES}


def test_release_never_writes_into_a_non_empty_folder(tmp_path):
    dest = tmp_path / "taken"
    dest.mkdir()
    (dest / "mine.txt").write_text("keep me")
    said = []
    assert release(ROOT, dest, out=said.append) == 2
    assert [p.name for p in dest.iterdir()] == ["mine.txt"] and "refusing" in said[0]


def test_a_planted_leak_makes_the_release_refuse(tmp_path):
    repo = clone(tmp_path / "repo")
    tanh = next(r for r in regions((repo / stage(4).source("solutions")).read_text(), stage(4))
                if "math.tanh" in r.text)
    hint = repo / "hints" / "en" / f"{stage(4).module}.md"
    hint.parent.mkdir(parents=True, exist_ok=True)
    with hint.open("a") as f:
        f.write("\n## Level 4 (oops)\n```python\n" + tanh.text + "```\n")
    said = []
    dest = tmp_path / "student"
    assert release(repo, dest, out=said.append) == 1
    assert not dest.exists() and [p.name for p in tmp_path.iterdir()] == ["repo"]  # nothing left behind
    assert any(f"hints/en/{stage(4).module}.md: stage 4's solution of Value.tanh" in line for line in said), said


def test_a_filled_in_exercise_never_ships(tmp_path):
    repo = clone(tmp_path / "repo")
    (repo / stage(4).source("exercises")).write_text(reference(4))  # a maintainer tried it out
    dest = tmp_path / "student"
    said = []
    assert release(repo, dest, out=said.append) == 0, said
    assert (dest / stage(4).source("exercises")).read_text() == stub(4)


def test_the_scan_tells_carried_code_from_a_leak(released, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(released, copy)
    assert scan(copy, ROOT) == []
    tanh = next(r for r in regions((ROOT / stage(4).source("solutions")).read_text(), stage(4))
                if "math.tanh" in r.text)

    def plant(n, text):
        path = copy / stage(n).source("exercises")
        path.write_text(path.read_text() + "\n\ndef planted(self):\n" + text)
        return {(leak.path, leak.stage) for leak in scan(copy, ROOT)}

    # (stage 4's tanh rule assigns (=), as stage 6's published stub does: no leak of stage 6)
    assert plant(4, tanh.text) == {(stage(4).source("exercises"), 4)}
    (copy / stage(4).source("exercises")).write_text(stub(4))
    assert plant(3, tanh.text) == {(stage(3).source("exercises"), 4)}
    (copy / stage(3).source("exercises")).write_text(stub(3))
    assert plant(5, tanh.text) == set()                                     # a later stage carries it
    (copy / stage(5).source("exercises")).write_text(stub(5))
    # stage 6's tanh rule (+=), planted in stage 5, whose carried tanh assigns (=): a leak of stage 6
    assert plant(5, "        self.grad += (1 - t * t) * out.grad\n") == {(stage(5).source("exercises"), 6)}
    (copy / stage(5).source("exercises")).write_text(stub(5))
    # stage 6's `+=` lines are its own answer: a leak in stage 6 itself
    assert plant(6, "        self.grad += out.grad\n") == {(stage(6).source("exercises"), 6)}
    (copy / stage(6).source("exercises")).write_text(stub(6))
    pristine = pristine_path(copy, stage(4))
    pristine.write_text(pristine.read_text() + tanh.text)
    assert {(leak.path, leak.stage) for leak in scan(copy, ROOT)} == {
        (f"{PRISTINE_DIR}/exercises/stage04_tanh.py", 4)}


def test_student_pyproject_drops_maintainer_configuration():
    text = '''[project]
name = "x"
dependencies = ["pytest>=8"]

[project.optional-dependencies]
dev = [
    "mutmut>=3.3,<4",
]
bench = ["micrograd==0.1.0"]
viz = ["matplotlib"]

[tool.pytest.ini_options]
timeout = 10

[tool.mutmut]
source_paths = ["solutions/"]
pytest_add_cli_args = ["--impl", "solutions"]

[tool.coverage.run]
source = ["solutions"]
'''
    out = student_pyproject(text)
    assert "mutmut" not in out and "solutions" not in out and "micrograd" not in out
    assert 'viz = ["matplotlib"]' in out and "timeout = 10" in out
    tomllib = pytest.importorskip("tomllib")
    assert tomllib.loads(out)["project"]["optional-dependencies"] == {"viz": ["matplotlib"]}


def test_student_readme_drops_the_maintainers_and_instructors_sections():
    text = "# Kata\n\nlearn\n\n## For instructors\n\ngrade\n\n## Stages\n\none\n\n## For maintainers\n\nbuild\n"
    out = student_readme(text)
    assert "learn" in out and "one" in out and "grade" not in out and "build" not in out
