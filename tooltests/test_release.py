"""The student release (kata release): a copy that is a student's.

The copy holds what the manifest's allow-list names and nothing of the
reference; its README is the learner's; its `kata --help` lists learner
commands; its pyproject has no maintainer settings (written from a template);
its GitHub Actions workflow verifies the graded files before installing
once and grading every stage into JUnit XML and the job summary.  The slow part - a fresh venv with the
copy installed, as a student would - is made once per module.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from autograd_kata import __version__
from autograd_kata.classroom.release import WORKFLOW, grading_workflow, protected_files, release
from autograd_kata.cli import AUDIENCE, NOT_IN_A_STUDENT_COPY
from autograd_kata.core.build import PRISTINE_DIR, pristine_path, regions
from autograd_kata.core.errors import Refusal
from autograd_kata.core.leaks import scan
from autograd_kata.core.manifest import READMES, RELEASE_FILE, STAGES, impl_problem, stage, student_role
from autograd_kata.core.state import pristine_stub
from autograd_kata.core.student_copy import sha256, student_pyproject, student_readme
from kit import clone, reference, run, stub

pytestmark = pytest.mark.timeout(600)  # a fresh venv and pip install take a while on two busy cores

ROOT = Path(__file__).resolve().parent.parent
LEARNER_COMMANDS = ("status", "check", "hint", "diff", "reset", "watch", "graph", "explore", "train")


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    dest = tmp_path_factory.mktemp("release") / "student"
    said = []
    code = release(ROOT, dest, out=said.append)
    assert code == 0, "\n".join(said)
    return dest


@pytest.fixture(scope="module")
def student_venv(released, tmp_path_factory):
    """A fresh venv with the released copy installed (editable), as its README says."""
    home = tmp_path_factory.mktemp("student-venv") / "venv"
    venv.create(home, with_pip=True)
    python = home / "bin" / "python"
    proc = run([str(python), "-m", "pip", "install", "-q", "-e", str(released)], cwd=released, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return home


def in_venv(home: Path, *args, cwd, timeout=300):
    env = {"PATH": f"{home / 'bin'}{os.pathsep}{os.environ['PATH']}", "VIRTUAL_ENV": str(home),
           "PYTHONDONTWRITEBYTECODE": "1", "NO_COLOR": "1"}
    env_all = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False,
                          env={**env_all, "KATA_IMPL": "", **env})


# --- what the copy holds ---------------------------------------------------------------

def test_the_copy_holds_exactly_the_allow_list_and_no_reference_code(released):
    assert not (released / "solutions").exists() and not (released / "reference").exists()
    for left_out in ("benchmarks", "tooltests", ".ci", "mutants", "autograd_kata/maintainer"):
        assert not (released / left_out).exists(), left_out
    generated = {RELEASE_FILE, WORKFLOW}
    for path in released.rglob("*"):
        rel = path.relative_to(released).as_posix()
        if path.is_file() and rel not in generated and not rel.startswith(PRISTINE_DIR + "/"):
            assert student_role(rel), f"{rel} is in the copy but no STUDENT_FILES entry names it"
    assert scan(released, ROOT) == []
    for s in STAGES:
        assert (released / s.source("exercises")).read_text() == stub(s.number)
        assert pristine_path(released, s).read_text() == stub(s.number)
        assert pristine_stub(s, released) == stub(s.number)
        assert (released / s.test_file).is_file()
    for name in ("conftest.py", "pyproject.toml", "README.md", ".gitignore", "LICENSE", "autograd_kata/cli.py",
                 "tests/expect.py", "autograd_kata/templates/verify_release.py.tmpl"):
        assert (released / name).is_file(), name
    hints = sorted(p.relative_to(ROOT) for p in (ROOT / "hints").rglob("*.md"))
    assert hints == sorted(p.relative_to(released) for p in (released / "hints").rglob("*.md"))


def test_the_pyproject_is_written_from_the_template_without_maintainer_settings(released):
    tomllib = pytest.importorskip("tomllib")
    text = (released / "pyproject.toml").read_text()
    ours = tomllib.loads((ROOT / "pyproject.toml").read_text())
    theirs = tomllib.loads(text)
    for word in ("mutmut", "solutions", "micrograd", "torch", "selenium"):
        assert word not in text, word
    assert set(theirs["project"]["optional-dependencies"]) == {"pictures"}
    assert theirs["project"]["dependencies"] == ours["project"]["dependencies"]
    assert theirs["project"]["version"] == __version__  # pyproject's version is dynamic: __init__'s
    assert theirs["tool"]["pytest"]["ini_options"] == ours["tool"]["pytest"]["ini_options"]
    assert "written by `kata release`" in text


def test_student_pyproject_fills_the_template_from_any_maintainer_pyproject():
    tomllib = pytest.importorskip("tomllib")
    text = '''[project]
name = "x"
version = "9.9"
dependencies = ["pytest>=8"]
[project.optional-dependencies]
dev = ["mutmut>=3.3,<4"]
pictures = ["matplotlib", "numpy"]
[tool.setuptools.package-data]
"autograd_kata.maintainer" = ["equivalent_mutants.json"]
"autograd_kata.pictures" = ["explore.html"]
[tool.pytest.ini_options]
timeout = 3
addopts = "-q \\"quoted\\""
[tool.mutmut]
source_paths = ["solutions/"]
'''
    out = tomllib.loads(student_pyproject(text))
    assert out["project"]["name"] == "x" and out["project"]["version"] == "9.9"
    assert out["project"]["optional-dependencies"] == {"pictures": ["matplotlib", "numpy"]}
    assert out["tool"]["pytest"]["ini_options"] == {"timeout": 3, "addopts": '-q "quoted"'}
    assert out["tool"]["setuptools"]["package-data"] == {"autograd_kata.pictures": ["explore.html"]}
    assert "mutmut" not in out["tool"]


@pytest.mark.parametrize("readme", READMES)
def test_the_readme_is_the_learners(released, readme):
    text = (released / readme).read_text()
    for gone in ("For instructors", "For maintainers", "kata release", "kata build", "kata verify",
                 "--impl solutions", "solutions/", "mutation", "<!--"):
        assert gone not in text, gone
    assert "kata check" in text and "kata hint" in text and "kata diff N --previous" in text
    assert "kata diff N`." not in text  # the step that needs the reference


def test_student_readme_keeps_reference_steps_only_with_diff():
    text = ("# Kata\n\nlearn\n\n4. compare: `kata diff N`. <!-- reference-line -->\n5. go on\n\n"
            "<!-- maintainers -->\nsecret\n<!-- /maintainers -->\n## For instructors\n\ngrade\n\n"
            "## Stages\n\none\n\n## For maintainers\n\nbuild\n")
    out = student_readme(text)
    assert "learn" in out and "one" in out and "5. go on" in out
    for gone in ("grade", "build", "secret", "kata diff", "<!--"):
        assert gone not in out, gone
    kept = student_readme(text, with_diff=True)
    assert "4. compare: `kata diff N`.\n" in kept and "<!--" not in kept and "secret" not in kept


# --- the copy in a fresh venv, as a student uses it ----------------------------------------

def test_kata_help_in_the_copy_lists_learner_commands_only(released, student_venv):
    proc = in_venv(student_venv, "kata", "--help", cwd=released)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    listed = {line.split()[0] for line in proc.stdout.splitlines() if line.startswith("    ") and line.split()}
    assert set(LEARNER_COMMANDS) <= listed, proc.stdout
    assert not listed & set(NOT_IN_A_STUDENT_COPY), proc.stdout
    proc = in_venv(student_venv, "kata", "verify", cwd=released)
    assert proc.returncode == 2 and len((proc.stdout + proc.stderr).strip().splitlines()) == 1, \
        proc.stdout + proc.stderr
    assert "student copy" in proc.stderr


def test_every_command_has_an_audience():
    from autograd_kata.cli import COMMANDS as COMMAND_MODULES
    assert set(COMMAND_MODULES) == set(AUDIENCE)
    assert set(AUDIENCE.values()) <= {"learners", "instructors", "maintainers"}


def test_pytest_impl_solutions_in_the_copy_is_one_usage_error(released, student_venv):
    problem = impl_problem(released, "solutions")
    assert problem and "no solutions/" in problem and impl_problem(released, "exercises") is None
    assert impl_problem(ROOT, "solutions") is None
    proc = in_venv(student_venv, "python", "-m", "pytest", "--impl", "solutions", "-p", "no:cacheprovider",
                   cwd=released)
    out = (proc.stdout + proc.stderr).strip().splitlines()
    assert proc.returncode == 4 and len(out) <= 2 and "no solutions/" in out[-1], "\n".join(out)


def test_the_copys_tests_run_and_fail_on_the_stubs(released, student_venv):
    proc = in_venv(student_venv, "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
                   stage(1).test_file, cwd=released)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "not written yet: stage 1" in proc.stdout


def test_kata_train_with_stage_8_unwritten_says_what_to_do_in_one_line(released, student_venv, tmp_path):
    pytest.importorskip("matplotlib")  # without it, train says so in one line (another path)
    proc = in_venv(student_venv, "python", "-m", "pip", "install", "-q", "-e", f"{released}[pictures]",
                   cwd=released, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = in_venv(student_venv, "kata", "train", "--out", str(tmp_path / "t.png"), cwd=released)
    lines = (proc.stdout + proc.stderr).strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1, "\n".join(lines)
    assert "stage 8" in lines[0] and "kata check 8" in lines[0] and "Traceback" not in lines[0]
    assert not (tmp_path / "t.png").exists()


def test_kata_graph_on_an_unwritten_stage_says_what_to_do_in_one_line(released, student_venv, tmp_path):
    proc = in_venv(student_venv, "kata", "graph", "--stage", "2", "--out", str(tmp_path / "g.txt"), cwd=released)
    lines = (proc.stdout + proc.stderr).strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1, "\n".join(lines)
    assert "not written yet: stage 2" in lines[0] and "--impl solutions" not in lines[0]


def test_kata_status_hint_reset_and_diff_previous_work_in_the_copy(released, student_venv, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(released, copy)
    proc = in_venv(student_venv, "python", "-m", "autograd_kata", "hint", "1", "--lang", "en", cwd=copy)
    assert proc.returncode == 0 and proc.stdout.strip(), proc.stdout + proc.stderr
    target = copy / stage(4).source("exercises")
    target.write_text(reference(4))
    proc = in_venv(student_venv, "kata", "reset", "4", "--yes", cwd=copy)
    assert proc.returncode == 0 and target.read_text() == stub(4), proc.stdout + proc.stderr
    proc = in_venv(student_venv, "kata", "diff", "4", "--previous", cwd=copy)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert '+        raise NotImplementedError("stage 4: write Value.tanh (kata hint 4)")' in proc.stdout
    assert "math.tanh(self.data)" not in proc.stdout  # nothing of stage 4's answer


# --- GitHub Actions (any repository; Classroom 50 leaves a template's own workflows alone) -------------

def workflow_steps(copy: Path):
    yaml = pytest.importorskip("yaml")
    flow = yaml.safe_load((copy / WORKFLOW).read_text())
    return flow, flow["jobs"]["grade"]["steps"]


def verify(copy: Path) -> subprocess.CompletedProcess:
    """Run the workflow's verification step in ``copy`` as the runner would (bash)."""
    _, steps = workflow_steps(copy)
    (check,) = [s for s in steps if "KATA_VERIFY" in s.get("run", "")]
    return subprocess.run(["bash", "-c", check["run"]], cwd=copy, capture_output=True, text=True, timeout=60,
                          check=False)


def test_the_workflow_verifies_then_installs_once_then_grades_into_junit_and_the_job_summary(released):
    flow, steps = workflow_steps(released)
    assert WORKFLOW == ".github/workflows/kata-grade.yml", "never autograde.yaml: Classroom 50 writes that one"
    assert flow["name"] == "kata grade" and set(flow["on"]) == {"push", "workflow_dispatch"}
    assert flow["permissions"] == {"contents": "read"}
    assert "classroom-resources" not in (released / WORKFLOW).read_text(), "the sunset Classroom's actions are gone"
    names = [s.get("name", "") for s in steps]
    check = next(i for i, s in enumerate(steps) if "KATA_VERIFY" in s.get("run", ""))
    installs = [i for i, s in enumerate(steps) if "pip install" in s.get("run", "")]
    grades = [i for i, s in enumerate(steps) if "autograd_kata.instructor grade" in s.get("run", "")]
    assert len(installs) == 1 and len(grades) == 1 and check < installs[0] < grades[0], names
    run = steps[grades[0]]["run"]
    assert '--format junit --out "$repo/kata-grade.xml"' in run and '>> "$GITHUB_STEP_SUMMARY"' in run
    assert "exit $status" in run, "the job fails unless every stage earned its points"
    keep = steps[-1]
    assert keep["uses"].startswith("actions/upload-artifact@") and keep["with"]["path"] == "kata-grade.xml"
    assert keep["if"] == "always()"


def grading_step(copy: Path) -> str:
    _, steps = workflow_steps(copy)
    return next(s for s in steps if "autograd_kata.instructor grade" in s.get("run", ""))["run"]


def run_step(step: str, repo: Path, tmp_path: Path, path: str = os.environ["PATH"]):
    """A step's shell as the runner runs it: in the checkout, with its temporary folder and job summary."""
    runner = tmp_path / "runner-temp"
    runner.mkdir(exist_ok=True)
    summary = tmp_path / "summary.md"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "KATA_IMPL")}
    proc = subprocess.run(["bash", "-c", step], cwd=repo, capture_output=True, text=True, timeout=900, check=False,
                          env={**env, "PATH": path, "RUNNER_TEMP": str(runner), "GITHUB_STEP_SUMMARY": str(summary)})
    return proc, runner, summary


def test_the_grading_step_writes_the_job_summary_and_keeps_the_exit_status(released, tmp_path):
    """The step's shell, with a stand-in for python: the installed grader is run isolated (-I) from
    the runner's temporary folder, the table lands in the job summary in a code block no line of
    it can close, the JUnit XML in the checkout, and the step fails as the grading did."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "python").write_text(
        f"#!{sys.executable}\nimport json, os, sys\nargs = sys.argv[1:]\n"
        f"json.dump({{'cwd': os.getcwd(), 'args': args}}, open({str(tmp_path / 'called.json')!r}, 'w'))\n"
        "open(args[args.index('--out') + 1], 'w').write('<testsuites/>')\n"
        "print('total 25/100')\nprint('   Graded x````/stage01_value.py.')\nsys.exit(1)\n")
    (fake / "python").chmod(0o755)
    repo = tmp_path / "repo"
    repo.mkdir()
    proc, runner, summary = run_step(grading_step(released), repo, tmp_path, f"{fake}{os.pathsep}{os.environ['PATH']}")
    assert proc.returncode == 1 and "total 25/100" in proc.stdout, proc.stdout + proc.stderr
    assert summary.read_text() == ("## kata grade\n\n`````\ntotal 25/100\n   Graded x````/stage01_value.py.\n"
                                   "`````\n")
    called = json.loads((tmp_path / "called.json").read_text())
    assert called["cwd"] == str(runner), "never from the checkout: nothing in it is on the path"
    assert called["args"][:3] == ["-I", "-m", "autograd_kata.instructor"], called
    assert called["args"][called["args"].index("--submission") + 1] == str(repo)
    assert called["args"][called["args"].index("--tests-from") + 1] == str(repo)
    assert (repo / "kata-grade.xml").read_text() == "<testsuites/>", "where the artifact step takes it"


# a stand-in for the standard library's secrets (the grader imports it): run, it forges a full score
FORGED_SECRETS = """import os, sys
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "secrets-ran"), "w").close()
print("total 100/100")
open("kata-grade.xml", "w").write('<testsuites tests="8" failures="0" errors="0"/>')
sys.stdout.flush()
os._exit(0)
"""


@pytest.mark.parametrize("name, text, why", [
    ("secrets.py", FORGED_SECRETS, "an importable file"),
    ("setup.py", "import os\nos.system('echo forged')\n", "a build script"),
    ("setup.cfg", "[metadata]\nname = x\n", "a build script"),
    ("sitecustomize.py", "", "an importable file"),
    ("forged.pth", "import os\n", "an importable file"),
    ("json/__init__.py", "", "a package"),
])
def test_anything_importable_added_at_the_top_is_refused(released, tmp_path, name, text, why):
    copy = tmp_path / "copy"
    shutil.copytree(released, copy)
    (copy / name).parent.mkdir(parents=True, exist_ok=True)
    (copy / name).write_text(text)
    (copy / "test").mkdir()  # folders of one's own, and a text file at the top: nothing to import
    (copy / "test" / "data.txt").write_text("1 2 3\n")
    (copy / "notes.txt").write_text("my notes\n")
    proc = verify(copy)
    top = name.split("/")[0]
    assert proc.returncode == 1 and "REFUSED" in proc.stdout, proc.stdout
    assert proc.stdout.count("::error::") == 1, proc.stdout
    assert f"::error::{top} was added at the top of the repository ({why}" in proc.stdout, proc.stdout


def test_the_workflow_grades_what_was_released_whatever_the_top_of_the_repository_holds(
        released, student_venv, tmp_path):
    """The untouched stubs and a root secrets.py that forges 100/100 when the grader imports it (as
    it did when the grading step ran from the checkout): the check refuses it, and the grading
    step, run anyway, grades the stubs 0/100 without ever running it."""
    copy = tmp_path / "copy"
    shutil.copytree(released, copy)
    (copy / "secrets.py").write_text(FORGED_SECRETS)
    path = f"{student_venv / 'bin'}{os.pathsep}{os.environ['PATH']}"
    old = subprocess.run([str(student_venv / "bin" / "python"), "-m", "autograd_kata.instructor", "grade"],
                         cwd=copy, capture_output=True, text=True, timeout=120, check=False)
    assert old.returncode == 0 and "total 100/100" in old.stdout, "the attack, as the old step ran the grader"
    (copy / "secrets-ran").unlink()
    (copy / "kata-grade.xml").unlink()
    assert verify(copy).returncode == 1
    proc, _, summary = run_step(grading_step(copy), copy, tmp_path, path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert not (copy / "secrets-ran").exists(), "the repository's secrets.py never ran"
    assert "0/100" in proc.stdout and "100/100" not in proc.stdout, proc.stdout
    xml = ET.parse(copy / "kata-grade.xml").getroot()
    assert int(xml.get("failures")) >= len(STAGES) and int(xml.get("tests")) > len(STAGES)
    assert "0/100" in summary.read_text()


def test_the_checksums_are_in_the_workflow_and_in_the_record(released):
    record = json.loads((released / RELEASE_FILE).read_text())["files"]
    protected = protected_files(released)
    assert {"conftest.py", "pyproject.toml", "tests/expect.py", "autograd_kata/cli.py"} <= set(protected)
    assert not [p for p in protected if p.startswith("exercises/")]
    assert record == {**{p: sha256(released / p) for p in protected}, WORKFLOW: sha256(released / WORKFLOW)}
    text = (released / WORKFLOW).read_text()
    assert text == grading_workflow({p: sha256(released / p) for p in protected})
    assert all(sha256(released / p) in text for p in protected)


def test_the_verification_passes_on_the_release(released, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(released, copy)
    (copy / stage(3).source("exercises")).write_text(reference(3))  # the student's own work is theirs
    proc = verify(copy)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "unchanged" in proc.stdout


@pytest.mark.parametrize("tamper, named", [
    (lambda c: (c / "tests" / "expect.py").write_text("# all pass\n"), "tests/expect.py is not the released"),
    (lambda c: (c / "tests" / "test_zz_all_pass.py").write_text("def test_ok():\n    pass\n"),
     "tests/test_zz_all_pass.py was added"),
    (lambda c: (c / "conftest.py").unlink(), "conftest.py is missing"),
    (lambda c: (c / "autograd_kata" / "core" / "results" / "channel.py").write_text(""),
     "autograd_kata/core/results/channel.py"),
    (lambda c: (c / "pyproject.toml").write_text((c / "pyproject.toml").read_text() + "\n# x\n"), "pyproject.toml"),
    (lambda c: (c / WORKFLOW).write_text((c / WORKFLOW).read_text().replace("exit $status", "exit 0")),
     "this workflow"),
])
def test_a_changed_graded_file_fails_the_run_loudly(released, tmp_path, tamper, named):
    copy = tmp_path / "copy"
    shutil.copytree(released, copy)
    tamper(copy)
    proc = verify(copy)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "::error::" in proc.stdout and named in proc.stdout and "REFUSED" in proc.stdout, proc.stdout


def test_editing_a_test_and_the_record_is_still_caught_by_the_workflow(released, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(released, copy)
    (copy / "tests" / "expect.py").write_text("# all pass\n")
    record = json.loads((copy / RELEASE_FILE).read_text())
    record["files"]["tests/expect.py"] = sha256(copy / "tests" / "expect.py")
    (copy / RELEASE_FILE).write_text(json.dumps(record))
    proc = verify(copy)
    assert proc.returncode == 1 and "tests/expect.py is not the released file" in proc.stdout


# --- the release command and its scan ------------------------------------------------------

def test_release_never_writes_into_a_non_empty_folder(tmp_path):
    dest = tmp_path / "taken"
    dest.mkdir()
    (dest / "mine.txt").write_text("keep me")
    with pytest.raises(Refusal) as refused:
        release(ROOT, dest)
    assert refused.value.code == 2 and "refusing" in refused.value.line()
    assert refused.value.line().startswith("kata release: ")
    assert [p.name for p in dest.iterdir()] == ["mine.txt"]


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

    assert plant(4, tanh.text) == {(stage(4).source("exercises"), 4)}
    (copy / stage(4).source("exercises")).write_text(stub(4))
    assert plant(3, tanh.text) == {(stage(3).source("exercises"), 4)}
    (copy / stage(3).source("exercises")).write_text(stub(3))
    assert plant(5, tanh.text) == set()                                     # a later stage carries it
    (copy / stage(5).source("exercises")).write_text(stub(5))
    # stage 6's += rule is a leak in stage 6 itself, which ships the naive = ...
    assert plant(6, "        self.grad += (1 - t * t) * out.grad\n") == {(stage(6).source("exercises"), 6)}
    (copy / stage(6).source("exercises")).write_text(stub(6))
    # ... and in the stages before it, which assign
    assert plant(5, "        self.grad += (1 - t * t) * out.grad\n") == {(stage(5).source("exercises"), 6)}
    (copy / stage(5).source("exercises")).write_text(stub(5))
    pristine = pristine_path(copy, stage(4))
    pristine.write_text(pristine.read_text() + tanh.text)
    assert {(leak.path, leak.stage) for leak in scan(copy, ROOT)} == {
        (f"{PRISTINE_DIR}/exercises/stage04_tanh.py", 4)}
