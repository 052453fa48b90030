"""``kata grade``: score a submission stage by stage, in isolation, failing closed.

Scoring policy: **all or nothing per stage.**  A stage earns its points (from
the stage manifest) when every one of its tests is reported passed, and 0
otherwise.  It is the kata's own rule (a stage is done when its tests pass),
and it is what GitHub Classroom's command grader can express, so every format
and every platform gives the same number.

How a stage is graded, so that the score can be trusted:

* Each stage runs in its own pytest subprocess, in a fresh temporary folder
  holding the grader's own ``tests/``, ``conftest.py``, ``pyproject.toml`` and
  ``kata`` tool, and from the submission only ``exercises/stageNN_*.py`` of
  that stage (never its tests, conftest or anything else; a symlink is refused).
* The subprocess runs with that folder as working directory and as the only
  ``PYTHONPATH``, plugin autoloading off (only pytest-timeout and pytest-check),
  no cache.  There is no ``solutions/`` to import.
* Each test has pytest-timeout's limit; the stage as a whole has a wall-clock
  limit, after which its whole process group is killed.
* A test counts as passed only when the JUnit XML that the grader asked pytest
  for says so, and only tests the grader collected itself (from its own tests,
  before any submitted code ran) count: a stage whose process hangs, aborts,
  exits early (``os._exit(0)``) or stops reporting scores 0, with a reason;
  the other stages are graded all the same.
* A guard plugin fails every test from the moment the submitted code changes
  the test harness (``expect``, the test modules, ``pytest_check``, ``math``,
  ``builtins``...), so patching the assertions gains nothing.

Limits: the submitted module runs inside the pytest process that tests it, as
with any pytest-based grader (Gradescope, GitHub Classroom); code written to
attack that process (or this guard) could forge a report, and code runs with
the grading user's rights, so it could read a reference that is on the same
disk.  Grade untrusted work where there is no reference (a student copy, the
Gradescope autograder), and read the code of suspicious submissions.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from autograd_kata import __version__
from autograd_kata.core.manifest import STAGES, Stage
from autograd_kata.core.runner import Tally

POLICY = "all or nothing per stage: a stage earns its points only when every one of its tests passes"
FORMATS = ("text", "json", "gradescope", "junit")
PLUGINS = ("pytest_timeout", "pytest_check.plugin")
MAX_FILE = 1_000_000  # bytes; a bigger "module" is not a submission
EXERCISES_INIT = '"""Your code: one module per stage. Edit these."""\n'

_COLLECTOR = '''\
"""kata grade's collector: the test ids the grader's own tests define."""
import json, os


def pytest_collection_finish(session):
    with open(os.environ["KATA_GRADE_COLLECT"], "w", encoding="utf-8") as f:
        json.dump({"ids": [item.nodeid for item in session.items]}, f)
'''


# Loaded into every stage's pytest process (-p): a test passes only if the test
# harness is as it was before any submitted code ran.  It stops the cheap cheat
# of patching the assertions (``expect.Expect.equal = lambda *a: None``) from
# the submitted module; code written against this guard itself is beyond it.
_GUARD = '''\
"""kata grade's guard: the test harness must not change while the tests run."""
import os
import sys

import pytest

WATCHED = ("builtins", "math", "operator", "random", "expect", "conftest", "pytest_check",
           "pytest_check.check_functions", "pytest_check.context_manager", "pytest_check.check_log",
           "pytest_check.plugin")
_before = None
_tampered = []


def _harness_modules(root):
    names = set(WATCHED)
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) or ""
        if path.startswith(os.path.join(root, "tests") + os.sep) or path == os.path.join(root, "conftest.py"):
            names.add(name)
    return sorted(names)


def _state(names):
    state = {}
    for name in names:
        module = sys.modules.get(name)
        state[(name, "")] = module
        if module is None:
            continue
        for key, value in list(vars(module).items()):
            state[(name, key)] = (value, getattr(value, "__code__", None))
            if isinstance(value, type) and getattr(value, "__module__", None) == name:
                for attr, member in list(vars(value).items()):
                    state[(name, f"{key}.{attr}")] = (member, getattr(member, "__code__", None))
    return state


def _same(a, b):
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) == 2:
        return a[0] is b[0] and a[1] is b[1]
    return a is b


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    global _before
    root = str(session.config.rootpath)
    names = _harness_modules(root)
    _before = (names, _state(names))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if call.when != "call" or _before is None:
        return report
    if not _tampered:
        names, before = _before
        now = _state(names)
        changed = sorted(f"{m}.{k}" if k else m for (m, k) in set(before) | set(now)
                         if (m, k) not in before or (m, k) not in now or not _same(before[(m, k)], now[(m, k)]))
        if changed:
            _tampered.append(", ".join(changed[:5]))
    if _tampered:
        report.outcome = "failed"
        report.longrepr = ("kata grade: the submitted code changed the test harness (" + _tampered[0]
                           + "), so no test after that can count")
    return report
'''


@dataclass
class TestResult:
    name: str          # pytest's node id, e.g. tests/test_stage04_tanh.py::test_x[stage04_tanh]
    status: str        # passed, failed, error, skipped, missing (not reported)
    message: str = ""
    seconds: float = 0.0

    @property
    def short(self) -> str:
        return self.name.split("::", 1)[-1]


@dataclass
class StageGrade(Tally):
    stage: Stage
    tests: list[TestResult] = field(default_factory=list)
    reason: str = ""       # why the stage scored 0 (empty when it scored its points)
    seconds: float = 0.0
    source: str = ""       # the submitted file graded, relative to the submission

    @property
    def max_score(self) -> int:
        return self.stage.points

    @property
    def ok(self) -> bool:
        return not self.reason and self.all_passed

    @property
    def score(self) -> int:
        return self.stage.points if self.ok else 0

    def to_dict(self) -> dict:
        s = self.stage
        return {"number": s.number, "module": s.module, "title": s.title, "points": s.points,
                "score": self.score, "max_score": self.max_score, "status": "passed" if self.ok else "failed",
                "passed": self.passed, "total": self.total, "reason": self.reason,
                "seconds": round(self.seconds, 3), "source": self.source,
                "tests": [{"name": t.name, "status": t.status, "message": t.message,
                           "seconds": round(t.seconds, 3)} for t in self.tests]}


@dataclass
class Report:
    submission: str
    stages: list[StageGrade]
    seconds: float = 0.0
    message: str = ""  # about the whole grading (e.g. the grader itself failed)
    warnings: list[str] = field(default_factory=list)  # for the instructor, not the student

    @property
    def score(self) -> int:
        return sum(g.score for g in self.stages)

    @property
    def max_score(self) -> int:
        return sum(g.max_score for g in self.stages)

    def to_dict(self) -> dict:
        return {"kata_version": __version__, "policy": POLICY, "submission": self.submission,
                "score": self.score, "max_score": self.max_score, "seconds": round(self.seconds, 3),
                "message": self.message, "warnings": list(self.warnings),
                "stages": [g.to_dict() for g in self.stages]}


# --- finding the submitted files ---------------------------------------------

def find_stage_file(submission: Path, stage: Stage) -> Path | None:
    """The submission's file for ``stage``: ``exercises/stageNN_*.py`` or
    ``stageNN_*.py`` at its top; failing that, the shallowest one anywhere
    (preferring one inside an ``exercises`` folder). Hidden folders and
    ``solutions/`` are never searched."""
    submission = Path(submission)
    name = f"{stage.module}.py"
    for candidate in (submission / "exercises" / name, submission / name):
        if candidate.exists() or candidate.is_symlink():
            return candidate
    found, seen = [], 0
    for folder, dirs, files in os.walk(submission):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("solutions", "__pycache__"))
        seen += len(files)
        if name in files:
            found.append(Path(folder) / name)
        if seen > 20000:
            break
    if not found:
        return None
    return min(found, key=lambda p: (p.parent.name != "exercises", len(p.parts), str(p)))


# --- the grading folder --------------------------------------------------------

def _copy_tree(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache"),
                    symlinks=False)


def prepare_base(grader_root: Path, dest: Path) -> None:
    """The grader's own files, with an empty ``exercises`` package."""
    grader_root = Path(grader_root)
    dest.mkdir(parents=True, exist_ok=True)
    _copy_tree(grader_root / "tests", dest / "tests")
    for name in ("conftest.py", "pyproject.toml"):
        if (grader_root / name).is_file():
            shutil.copy2(grader_root / name, dest / name)
    package = Path(__file__).resolve().parent.parent
    _copy_tree(package, dest / package.name)
    (dest / "exercises").mkdir()
    (dest / "exercises" / "__init__.py").write_text(EXERCISES_INIT, encoding="utf-8")
    (dest / "_kata_grade_guard.py").write_text(_GUARD, encoding="utf-8")


def _env(folder: Path, extra: dict | None = None) -> dict:
    keep = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "SYSTEMROOT", "TMPDIR", "TEMP", "TMP")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update({
        "PYTHONPATH": str(folder),
        "HOME": str(folder),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        "PYTHONHASHSEED": "0",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "KATA_IMPL": "exercises",
        "MPLBACKEND": "Agg",
    })
    env.update(extra or {})
    return env


def _pytest_args(folder: Path, files, extra=()) -> list[str]:
    args = [sys.executable, "-m", "pytest", *files, "--impl=exercises", "-q", "--no-header",
            "-p", "no:cacheprovider", "--rootdir", str(folder)]
    if (folder / "pyproject.toml").is_file():
        args += ["-c", str(folder / "pyproject.toml")]
    for plugin in PLUGINS:
        args += ["-p", plugin]
    return args + list(extra)


@dataclass
class _Run:
    returncode: int | None
    output: str
    timed_out: bool
    seconds: float
    head: str = ""  # the start of the output (a crash report begins there)


def _run(args, folder: Path, env: dict, timeout: float, log: Path) -> _Run:
    start = time.monotonic()
    with open(log, "wb") as sink:
        kwargs = {"start_new_session": True} if os.name == "posix" else {}
        proc = subprocess.Popen(args, cwd=folder, env=env, stdin=subprocess.DEVNULL,
                                stdout=sink, stderr=subprocess.STDOUT, **kwargs)
        timed_out = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            # the whole group: whatever the submission started dies with it
            if os.name == "posix":
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            if proc.poll() is None:
                proc.kill()
            proc.wait()
    with open(log, "rb") as f:
        head = f.read(200_000).decode("utf-8", errors="replace")
        f.seek(max(0, log.stat().st_size - 4000))
        output = f.read().decode("utf-8", errors="replace")
    return _Run(None if timed_out else proc.returncode, output, timed_out, time.monotonic() - start, head)


def collect(base: Path, stages, scratch: Path, timeout: float = 120) -> tuple[dict[int, list[str]], str]:
    """The test ids of each stage, from the grader's own tests, with no submitted
    code anywhere near. Returns ({stage number: ids}, problem)."""
    folder = scratch / "collect"
    _copy_tree(base, folder)
    plugin_dir = scratch / "collector"
    plugin_dir.mkdir()
    (plugin_dir / "_kata_grade_collect.py").write_text(_COLLECTOR, encoding="utf-8")
    out = scratch / "collected.json"
    env = _env(folder, {"PYTHONPATH": f"{folder}{os.pathsep}{plugin_dir}", "KATA_GRADE_COLLECT": str(out)})
    files = [s.test_file for s in stages if (folder / s.test_file).is_file()]
    ids: dict[int, list[str]] = {s.number: [] for s in stages}
    if not files:
        return ids, "the grader has none of these stages' test files"
    args = _pytest_args(folder, files, ["--collect-only", "-p", "_kata_grade_collect"])
    run = _run(args, folder, env, timeout, scratch / "collect.log")
    if not out.is_file():
        return ids, f"the grader's own tests could not be collected:\n{run.output[-1500:]}"
    for nodeid in json.loads(out.read_text(encoding="utf-8"))["ids"]:
        path = nodeid.split("::", 1)[0]
        for s in stages:
            if path == s.test_file:
                ids[s.number].append(nodeid)
    empty = [s for s in stages if not ids[s.number]]
    if empty and run.returncode not in (0, 5):
        return ids, f"the grader's own tests did not all collect:\n{run.output[-1500:]}"
    return ids, ""


def junit_key(nodeid: str) -> tuple[str, str]:
    """(classname, name) as pytest's JUnit XML writes them for ``nodeid``."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = names[0].replace("/", ".")
    names[0] = names[0].removesuffix(".py")
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


def case_status(case: ET.Element) -> tuple[str, str]:
    """(status, message) of one JUnit <testcase>: passed unless a child says otherwise."""
    for child in case:
        if child.tag in ("failure", "error", "skipped"):
            status = {"failure": "failed"}.get(child.tag, child.tag)
            return status, (child.get("message") or child.text or "").strip()
    return "passed", ""


def read_junit(path: Path) -> dict[tuple[str, str], tuple[str, str, float]]:
    """{(classname, name): (status, message, seconds)}; a duplicated test counts
    as passed only if every report of it passed."""
    found: dict[tuple[str, str], tuple[str, str, float]] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        key = (case.get("classname") or "", case.get("name") or "")
        status, message = case_status(case)
        try:
            seconds = float(case.get("time") or 0)
        except ValueError:
            seconds = 0.0
        if key in found and found[key][0] != "passed":
            continue
        found[key] = (status, message, seconds)
    return found


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "no exit status"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _clues(output: str, stage: Stage) -> list[str]:
    """The lines of a crashed run that say what happened: the fatal error and
    where in the submitted module (not the interpreter's own frames)."""
    lines = [ln.strip() for ln in output.splitlines()]
    picked = []
    for ln in lines:
        if (ln.startswith("Fatal Python error") or stage.source("exercises") in ln) and ln not in picked:
            picked.append(ln)
    return picked[:4] or [ln for ln in lines if ln][-2:]


def grade_stage(stage: Stage, submission: Path, base: Path, expected: list[str], scratch: Path,
                stage_timeout: float) -> StageGrade:
    grade = StageGrade(stage)
    pending = [TestResult(nid, "missing", "not run") for nid in expected]
    source = find_stage_file(submission, stage)
    if source is None:
        grade.tests, grade.reason = pending, f"no {stage.source('exercises')} in the submission"
        return grade
    try:
        grade.source = str(source.relative_to(submission))
    except ValueError:
        grade.source = str(source)
    if source.is_symlink():
        grade.tests, grade.reason = pending, f"{grade.source} is a symbolic link; submit the file itself"
        return grade
    if not source.is_file() or source.stat().st_size > MAX_FILE:
        grade.tests, grade.reason = pending, f"{grade.source} is not a regular file under {MAX_FILE} bytes"
        return grade
    if not expected:
        grade.reason = f"the grader found no tests for this stage ({stage.test_file})"
        return grade
    folder = scratch / f"stage{stage.number:02d}"
    _copy_tree(base, folder)
    shutil.copyfile(source, folder / stage.source("exercises"))
    junit = scratch / f"stage{stage.number:02d}.xml"
    args = _pytest_args(folder, [stage.test_file],
                        ["-p", "_kata_grade_guard", f"--junitxml={junit}", "-o", "junit_family=xunit2",
                         "-o", "junit_logging=no"])
    run = _run(args, folder, _env(folder), stage_timeout, scratch / f"stage{stage.number:02d}.log")
    grade.seconds = run.seconds
    tail = run.output.strip()[-1500:]
    if run.timed_out:
        grade.tests = pending
        grade.reason = f"did not finish within {stage_timeout:g} s (stopped); an infinite loop?"
        return grade
    if not junit.is_file():
        grade.tests = pending
        grade.reason = (f"the test process ended ({_describe_exit(run.returncode)}) without a test report: "
                        f"the module crashed or exited the interpreter")
        clues = [c.replace(str(folder) + os.sep, "") for c in _clues(run.head + "\n" + run.output, stage)]
        if clues:
            grade.reason += "\n" + "\n".join(clues)
        return grade
    try:
        reported = read_junit(junit)
    except (ET.ParseError, OSError) as error:
        grade.tests, grade.reason = pending, f"unreadable test report: {error}"
        return grade
    for nodeid in expected:
        status, message, seconds = reported.get(junit_key(nodeid), ("missing", "not reported", 0.0))
        grade.tests.append(TestResult(nodeid, status, message, seconds))
    if run.returncode not in (0, 1):
        grade.reason = f"pytest ended with {_describe_exit(run.returncode)}"
        if tail:
            grade.reason += f"\n{tail}"
    elif grade.passed < grade.total:
        bad = [t for t in grade.tests if t.status != "passed"]
        first = bad[0].message.splitlines()[0] if bad[0].message else bad[0].status
        grade.reason = f"{len(bad)} of {grade.total} tests did not pass; first: {bad[0].short}: {first}"
    return grade


def reference_warnings(grader_root: Path) -> list[str]:
    """A note when the reference is on this disk: ``import solutions`` is
    impossible in the grading folder, but submitted code runs as the grading
    user and could go and read files."""
    places = {Path(grader_root).resolve() / "solutions", Path(__file__).resolve().parent.parent / "solutions"}
    found = sorted(str(p) for p in places if p.is_dir())
    if not found:
        return []
    return [(f"the reference solutions are on this machine ({', '.join(found)}); submitted code cannot import "
             f"them, but runs as you and could read them. Grade untrusted submissions from a student copy "
             f"(kata release) or the Gradescope autograder, where there is no reference.")]


def grade(submission: Path, grader_root: Path, stages=STAGES, stage_timeout: float = 60.0,
          jobs: int | None = None) -> Report:
    """Grade ``submission`` with the tests of ``grader_root``. Never raises:
    a failure of the grader itself gives every stage 0 with the reason."""
    start = time.monotonic()
    submission = Path(submission).resolve()
    stages = list(stages)
    report = Report(str(submission), [], warnings=reference_warnings(Path(grader_root)))
    try:
        if not submission.is_dir():
            raise FileNotFoundError(f"the submission {submission} is not a folder")
        with tempfile.TemporaryDirectory(prefix="kata-grade-") as tmp:
            scratch = Path(tmp)
            base = scratch / "base"
            prepare_base(Path(grader_root), base)
            ids, problem = collect(base, stages, scratch)
            jobs = max(1, jobs or min(8, os.cpu_count() or 1))
            with ThreadPoolExecutor(max_workers=jobs) as pool:
                futures = [pool.submit(grade_stage, s, submission, base, ids[s.number], scratch, stage_timeout)
                           for s in stages]
                report.stages = [f.result() for f in futures]
            if problem:
                report.message = problem
    except Exception as error:  # noqa: BLE001 - the grader's own failure: still a report, every stage 0
        report.message = f"the grader failed: {type(error).__name__}: {error}"
        report.stages = [StageGrade(s, reason=report.message) for s in stages]
    report.seconds = time.monotonic() - start
    return report


# --- formats --------------------------------------------------------------------

def as_text(report: Report) -> str:
    lines = [f"kata grade: {report.submission}", f"policy: {POLICY}"]
    lines += [f"note: {w}" for w in report.warnings] + [""]
    lines.append(f"{'stage':<6}{'title':<30}{'tests':>9}{'score':>9}")
    for g in report.stages:
        lines.append(f"{g.stage.number:<6}{g.stage.title[:29]:<30}{f'{g.passed}/{g.total}':>9}"
                     f"{f'{g.score}/{g.max_score}':>9}")
        if g.reason:
            for i, line in enumerate(g.reason.splitlines()[:6]):
                lines.append(f"{'':6}{'-> ' if i == 0 else '   '}{line}")
    lines.append(f"{'total':<45}{f'{report.score}/{report.max_score}':>9}")
    if report.message:
        lines += ["", report.message]
    lines.append(f"graded in {report.seconds:.1f} s")
    return "\n".join(lines) + "\n"


def as_json(report: Report) -> str:
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n"


def as_gradescope(report: Report) -> str:
    """Gradescope's results.json: one test entry per stage, worth its points."""
    tests = []
    for g in report.stages:
        out = [f"{g.passed}/{g.total} tests passed. {POLICY}."]
        if g.reason:
            out.append(g.reason)
        for t in g.tests:
            line = f"{'PASS' if t.status == 'passed' else t.status.upper()}  {t.short}"
            if t.status != "passed" and t.message:
                line += f"\n      {t.message.splitlines()[0]}"
            out.append(line)
        tests.append({"name": f"Stage {g.stage.number}: {g.stage.title}", "number": str(g.stage.number),
                      "score": float(g.score), "max_score": float(g.max_score),
                      "status": "passed" if g.ok else "failed", "output": "\n".join(out),
                      "visibility": "visible"})
    summary = f"{report.score}/{report.max_score} points. {POLICY}."
    if report.message:
        summary += "\n" + report.message
    return json.dumps({"score": float(report.score), "execution_time": round(report.seconds),
                       "output": summary, "visibility": "visible", "stdout_visibility": "hidden",
                       "tests": tests}, indent=2, ensure_ascii=False) + "\n"


def as_junit(report: Report) -> str:
    """JUnit XML: one testsuite per stage, one testcase per test; anything not
    reported passed is a failure."""
    failures = sum(g.total - g.passed + (1 if g.reason and not g.tests else 0) for g in report.stages)
    tests = sum(max(g.total, 1 if g.reason and not g.tests else 0) for g in report.stages)
    root = ET.Element("testsuites", name="kata grade", tests=str(tests), failures=str(failures),
                      errors="0", time=f"{report.seconds:.3f}")
    for g in report.stages:
        cases = g.tests or ([TestResult(g.stage.module, "failed", g.reason)] if g.reason else [])
        suite = ET.SubElement(root, "testsuite", name=g.stage.module,
                              tests=str(len(cases)), failures=str(sum(c.status != "passed" for c in cases)),
                              errors="0", skipped="0", time=f"{g.seconds:.3f}")
        props = ET.SubElement(suite, "properties")
        for key, value in (("title", g.stage.title), ("points", g.max_score), ("score", g.score),
                           ("policy", POLICY), ("reason", g.reason)):
            ET.SubElement(props, "property", name=key, value=str(value))
        for c in cases:
            classname, name = junit_key(c.name) if "::" in c.name else (f"kata.{g.stage.module}", c.name)
            case = ET.SubElement(suite, "testcase", classname=classname, name=name, time=f"{c.seconds:.3f}")
            if c.status != "passed":
                message = (c.message or c.status).splitlines()[0] if (c.message or c.status) else c.status
                failure = ET.SubElement(case, "failure", message=f"{c.status}: {message}"[:500], type=c.status)
                failure.text = c.message or c.status
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


WRITERS = {"text": as_text, "json": as_json, "gradescope": as_gradescope, "junit": as_junit}


def render(report: Report, fmt: str) -> str:
    return WRITERS[fmt](report)


def write(report: Report, fmt: str, out: str | None, echo=print) -> None:
    """Write the report; to ``out`` if given (also echoing the text table), else to stdout."""
    text = render(report, fmt)
    if out:
        path = Path(out)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if fmt != "text":
            echo(as_text(report), end="")
        echo(f"wrote {fmt} report to {path}")
    else:
        echo(text, end="")
