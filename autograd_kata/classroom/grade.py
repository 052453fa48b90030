"""``kata grade``: score a submission stage by stage, failing closed.

Scoring policy: **all or nothing per stage.**  A stage earns its points (from
the stage manifest) when every one of its tests is reported passed, and 0
otherwise.  It is the kata's own rule (a stage is done when its tests pass),
and it is what GitHub Classroom's command grader can express, so every format
and every platform gives the same number.

Two processes per stage, one direction of trust (see README, "For instructors"):

* the **judge**: a pytest process running the grader's own ``tests/``,
  ``conftest.py`` and ``pyproject.toml`` (private copies, in a 0700 folder of
  the grader's), with ``--sandbox=<stage folder>``: it never imports submitted
  code, and it writes the results (``autograd_kata.core.results``) into its
  private folder.  Its environment holds a fresh ``KATA_HIDDEN_SEED`` (never
  a command line: those are world-readable), which turns on the hidden checks;
* the **sandbox**: started by the judge through ``jail.launcher``; it imports
  only the submitted ``exercises/stageNN_*.py`` of that stage, from a stage
  folder that holds nothing else, and answers the judge's questions with data.
  It runs in the strongest jail the machine allows (``jail.py``: as root, a user of
  the sandbox pool, in namespaces or a chroot), which shows it only that folder
  and the standard library (``jail.py``).

A stage counts only what its judge reports: every test the judge collected
must be reported passed, the judge must exit 0, and a judge that is killed,
hangs past ``--stage-timeout`` or leaves no results scores 0 with a reason.
Stages run in parallel, as many as the CPUs this process may use.  When every
stage is done, every process of the sandbox user (and every process the
grader's children left behind) is killed; only then is the report returned,
and only the grader writes it, in one of ``formats.FORMATS`` (``formats.py``).
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from autograd_kata import __version__
from autograd_kata.classroom import jail, jailroot, pool
from autograd_kata.core.kinds import KINDS
from autograd_kata.core.manifest import STAGES, Stage
from autograd_kata.core.runner import Tally, plugin_args

POLICY = "all or nothing per stage: a stage earns its points only when every one of its tests passes"
# every run's plugin list (runner.plugin_args), and the judge's own; the hidden checks use
# Hypothesis without its pytest plugin, which that list blocks in every run alike
JUDGE_PLUGINS = dict(modules=("autograd_kata.classroom.judge",))
MAX_FILE = 1_000_000  # bytes; a bigger "module" is not a submission
# what a report holds, whatever the submission makes its messages (README, "What is guaranteed"):
# a test's message at most MAX_MESSAGE characters, a stage's messages MAX_STAGE_MESSAGES in all
# (then each failure keeps its first line), so a report of 8 stages stays under 300 KB
MAX_MESSAGE, MAX_STAGE_MESSAGES, MAX_HEADLINE = 4000, 32_000, 200
SKIP_DIRS = ("solutions", "__pycache__", "node_modules", "venv")


@dataclass
class TestResult:
    name: str          # pytest's node id, e.g. tests/test_stage04_tanh.py::test_x[stage04_tanh]
    status: str        # passed, failed, error, skipped, missing (not reported)
    message: str = ""
    seconds: float = 0.0
    kind: str | None = None  # what sort of failure (core/kinds.py), as the judge named it

    @property
    def short(self) -> str:
        return self.name.split("::", 1)[-1]

    @property
    def headline(self) -> str:
        """The message's one line: a native traceback's is its last (the exception)."""
        lines = [line for line in self.message.splitlines() if line.strip()]
        if not lines:
            return self.status
        return lines[-1].strip() if lines[0].startswith("Traceback (most recent call last)") else lines[0]


@dataclass
class StageGrade(Tally):
    stage: Stage
    tests: list[TestResult] = field(default_factory=list)
    reason: str = ""       # why the stage scored 0 (empty when it scored its points)
    reason_kind: str = ""  # "hang" (stopped), "crash" (the judge or its results failed) or ""
    seconds: float = 0.0
    source: str = ""       # the submitted file graded, relative to the submission
    found: list[str] = field(default_factory=list)  # every candidate file for this stage

    @property
    def max_score(self) -> int:
        return self.stage.points

    @property
    def ok(self) -> bool:
        return not self.reason and self.all_passed

    @property
    def score(self) -> int:
        return self.stage.points if self.ok else 0

    @property
    def file_note(self) -> str:
        """Which file was graded; with several candidates, all of them and the rule."""
        if not self.source:
            return ""
        if len(self.found) < 2:
            return f"graded {self.source}"
        return (f"graded {self.source}; found {len(self.found)} files for this stage ({', '.join(self.found)}); "
                f"rule: exercises/ at the top first, then the top, then the shallowest, then alphabetical")

    def to_dict(self) -> dict:
        s = self.stage
        return {"number": s.number, "module": s.module, "title": s.title, "points": s.points,
                "score": self.score, "max_score": self.max_score, "status": "passed" if self.ok else "failed",
                "passed": self.passed, "total": self.total, "reason": self.reason, "reason_kind": self.reason_kind,
                "seconds": round(self.seconds, 3), "source": self.source, "found": list(self.found),
                "tests": [{"name": t.name, "status": t.status, "kind": t.kind, "message": t.message,
                           "seconds": round(t.seconds, 3)} for t in self.tests]}


@dataclass
class Report:
    submission: str
    stages: list[StageGrade]
    seconds: float = 0.0
    message: str = ""  # about the whole grading (e.g. the grader itself failed)
    warnings: list[str] = field(default_factory=list)  # for the instructor, not the student
    isolated: bool = False
    isolation: str = ""  # one line: how the submitted code was kept apart
    hidden_seed: int | None = None  # the hidden checks' seed: the instructor's JSON only, never a student's

    @property
    def score(self) -> int:
        return sum(g.score for g in self.stages)

    @property
    def max_score(self) -> int:
        return sum(g.max_score for g in self.stages)

    @property
    def first_line(self) -> str:
        """The report's first line: a missing uid boundary is said before anything else."""
        return self.isolation if not self.isolated else f"kata grade: {self.submission}"

    def to_dict(self) -> dict:
        return {"isolation": self.isolation, "isolated": self.isolated,
                "kata_version": __version__, "policy": POLICY, "submission": self.submission,
                "score": self.score, "max_score": self.max_score, "seconds": round(self.seconds, 3),
                "message": self.message, "warnings": list(self.warnings), "hidden_seed": self.hidden_seed,
                "stages": [g.to_dict() for g in self.stages]}


# --- finding the submitted files ---------------------------------------------

def find_stage_files(submission: Path, stage: Stage) -> list[Path]:
    """Every file of the submission named like ``stage``'s module, in the
    order of the rule (README, "Which file is graded"): ``exercises/NAME`` at
    the top, then ``NAME`` at the top, then the shallowest, preferring a
    folder named ``exercises``, ties alphabetical.  Hidden folders,
    ``solutions/`` and caches are never searched."""
    submission = Path(submission)
    name = f"{stage.module}.py"
    found, seen = [], 0
    for folder, dirs, files in os.walk(submission):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
        seen += len(files)
        if name in files:
            found.append(Path(folder) / name)
        if seen > 20000:
            break

    def rank(p: Path):
        rel = p.relative_to(submission)
        return (rel != Path("exercises") / name, rel != Path(name), len(rel.parts),
                p.parent.name != "exercises", str(rel))
    return sorted(found, key=rank)


def find_stage_file(submission: Path, stage: Stage) -> Path | None:
    found = find_stage_files(submission, stage)
    return found[0] if found else None


# --- the folders -------------------------------------------------------------------

def _copy_tree(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache"),
                    symlinks=False)


def judge_folder(grader_root: Path, dest: Path) -> None:
    """A private copy of the grader's tests, conftest.py and pyproject.toml
    (0700): the judge's own, out of the sandbox's sight and reach."""
    dest.mkdir(mode=0o700)
    _copy_tree(Path(grader_root) / "tests", dest / "tests")
    for name in ("conftest.py", "pyproject.toml"):
        if (Path(grader_root) / name).is_file():
            shutil.copy2(Path(grader_root) / name, dest / name)


def stage_folder(source: Path, stage: Stage, dest: Path) -> None:
    """What the sandbox sees: ``exercises/__init__.py`` (empty) and the one
    submitted file, readable by all, writable by none but the grader."""
    (dest / "exercises").mkdir(parents=True)  # dest may exist (a chroot's stage folder)
    (dest / "exercises" / "__init__.py").write_bytes(b"")
    shutil.copyfile(source, dest / stage.source("exercises"))
    for path in (dest, dest / "exercises"):
        os.chmod(path, 0o755)
    for path in (dest / "exercises" / "__init__.py", dest / stage.source("exercises")):
        os.chmod(path, 0o644)


def _env(scratch: Path, extra: dict) -> dict:
    keep = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "SYSTEMROOT", "TMPDIR", "TEMP", "TMP")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    # the tool, and nothing else of the folder it lives in (a source tree holds exercises/ and
    # solutions/ too): a folder with one link to the package
    tool = scratch / "tool"
    tool.mkdir(mode=0o700)
    (tool / "autograd_kata").symlink_to(Path(jail.__file__).resolve().parents[1], target_is_directory=True)
    env.update({
        "PYTHONPATH": str(tool),
        "HOME": str(scratch),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        "PYTHONHASHSEED": "0",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "KATA_IMPL": "exercises",
        "KATA_LANG": "en",  # reports and the class summary read the English phrases
        "MPLBACKEND": "Agg",
    })
    env.update(extra)
    return env


def judge_args(judge: Path, stages: list[Stage], folders: dict[int, Path], stage_timeout: float) -> list[str]:
    """One judge for ``stages``: their test files, each stage's module from its own folder (its
    own sandbox process and uid), each test file stopped once it has taken ``stage_timeout``."""
    # --tb=native: the teaching messages are the same (the conftest makes them), but a stage whose
    # sandbox hung fails every later test at once, and pytest's own traceback style parses the
    # source of every frame of every one of them (seconds per stage)
    args = [sys.executable, "-m", "pytest", *(s.test_file for s in stages), "--impl=exercises",
            *(f"--sandbox={s.module}={folders[s.number]}" for s in stages),
            "-q", "--no-header", "--tb=native", "--rootdir", str(judge), *plugin_args(**JUDGE_PLUGINS),
            f"--kata-results={judge / 'results.json'}", f"--kata-collected={judge / 'collected.json'}",
            f"--kata-stage-budget={stage_timeout:g}"]
    if (judge / "pyproject.toml").is_file():
        args += ["-c", str(judge / "pyproject.toml")]
    return args


@dataclass
class _Run:
    returncode: int | None
    output: str
    timed_out: bool
    seconds: float


def _run(args, cwd: Path, env: dict, timeout: float, log: Path) -> _Run:
    start = time.monotonic()
    with open(log, "wb") as sink:
        proc = subprocess.Popen(args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=sink,
                                stderr=subprocess.STDOUT, start_new_session=True)
        timed_out = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            jail.kill_tree(proc.pid)  # the judge's sandboxes go with it, now, not at the end
            proc.wait()
    with open(log, "rb") as f:
        f.seek(max(0, log.stat().st_size - 4000))
        output = f.read().decode("utf-8", errors="replace")
    return _Run(None if timed_out else proc.returncode, output, timed_out, time.monotonic() - start)


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "no exit status"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _read_json(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def prepare_stage(stage: Stage, submission: Path, folder: Path) -> StageGrade:
    """The stage's grade so far: which file it grades, or why it cannot be graded (then
    ``reason`` is set); when it can, its folder for the sandbox is written."""
    grade = StageGrade(stage)
    found = find_stage_files(submission, stage)
    grade.found = [str(p.relative_to(submission)) for p in found]
    if not found:
        grade.reason = f"no {stage.source('exercises')} in the submission"
        return grade
    source = found[0]
    grade.source = grade.found[0]
    if source.is_symlink():
        grade.reason = f"{grade.source} is a symbolic link; submit the file itself"
    elif not source.is_file() or source.stat().st_size > MAX_FILE:
        grade.reason = f"{grade.source} is not a regular file under {MAX_FILE} bytes"
    else:
        stage_folder(source, stage, folder)
    return grade


def judge_stages(grades: list[StageGrade], folders: dict[int, Path], grader_root: Path, judge: Path,
                 stage_timeout: float, env: dict) -> None:
    """Run one judge for these stages and fill in each stage's grade from what it reported."""
    judge_folder(grader_root, judge)
    stages = [g.stage for g in grades]
    # every stage stops itself after stage_timeout; the judge as a whole gets that per stage, and
    # its own start (a loaded machine: seconds), before it is killed
    run = _run(judge_args(judge, stages, folders, stage_timeout), judge, env,
               stage_timeout * len(stages) + 30, judge / "judge.log")
    collected = _read_json(judge / "collected.json")
    results = _read_json(judge / "results.json")
    ids = collected.get("ids") if collected else None
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        for g in grades:
            g.reason = (f"the grader's tests for this stage did not collect ({_describe_exit(run.returncode)}):\n"
                        f"{run.output.strip()[-1500:]}")
            g.reason_kind = "crash"
        return
    stopped = collected.get("stopped") if isinstance(collected.get("stopped"), list) else []
    reported = {}
    if results and isinstance(results.get("tests"), list):
        for entry in results["tests"]:
            if isinstance(entry, dict) and isinstance(entry.get("nodeid"), str):
                reported[entry["nodeid"]] = entry
    for g in grades:
        mine = [i for i in ids if i.split("::", 1)[0] == g.stage.test_file]
        _fill(g, mine, reported)
        g.reason_kind = "crash"
        if not mine:
            g.reason = f"the grader collected no test of this stage ({g.stage.test_file})"
        elif run.timed_out:
            g.reason, g.reason_kind = (f"the judge did not finish within {stage_timeout * len(stages) + 30:g} s "
                                       f"(stopped)"), "hang"
        elif g.stage.test_file in stopped:
            g.reason, g.reason_kind = f"did not finish within {stage_timeout:g} s (stopped); an infinite loop?", "hang"
        elif results is None:
            g.reason = f"the judge ended ({_describe_exit(run.returncode)}) without results"
        elif results.get("collected") != len(ids):
            g.reason = f"the judge collected {results.get('collected')} tests, expected {len(ids)}"
        elif run.returncode not in (0, 1) or results.get("exitstatus") not in (0, 1):
            g.reason = f"the judge ended with {_describe_exit(run.returncode)}\n{run.output.strip()[-1500:]}"
        elif g.passed < g.total:
            bad = [t for t in g.tests if t.status != "passed"]
            g.reason, g.reason_kind = (f"{len(bad)} of {g.total} tests did not pass; first: {bad[0].short}: "
                                       f"{bad[0].headline}"), ""
        elif run.returncode == 0 and results.get("exitstatus") != 0:
            g.reason = "the judge's exit status and its results disagree"
        else:
            g.reason_kind = ""
    if run.returncode and all(not g.reason and g.passed == g.total for g in grades):
        for g in grades:  # every test passed, yet the judge failed: something outside the tests broke
            g.reason = f"the judge ended with {_describe_exit(run.returncode)} although every test passed"


def _fill(grade: StageGrade, ids: list[str], reported: dict) -> None:
    budget = MAX_STAGE_MESSAGES
    for nodeid in ids:
        entry = reported.get(nodeid)
        if entry is None:
            grade.tests.append(TestResult(nodeid, "missing", "not run"))
            continue
        status = entry.get("outcome") if entry.get("outcome") in ("passed", "failed", "error", "skipped") \
            else "missing"
        message = _bounded(str(entry.get("message") or ""), budget)
        budget -= len(message)
        seconds = entry.get("duration") if isinstance(entry.get("duration"), (int, float)) else 0.0
        kind = entry.get("kind") if entry.get("kind") in KINDS else None
        grade.tests.append(TestResult(nodeid, status, message, float(seconds), kind))
        grade.seconds += float(seconds)


def _bounded(message: str, budget: int) -> str:
    """A test's message within MAX_MESSAGE, or only its first line once the stage's budget is spent."""
    if len(message) > MAX_MESSAGE:
        message = f"{message[:MAX_MESSAGE]}\n... [{len(message) - MAX_MESSAGE} more characters cut]"
    if len(message) > budget:
        first = TestResult("", "failed", message).headline[:MAX_HEADLINE]
        message = f"{first}\n... [cut: this stage's messages reached {MAX_STAGE_MESSAGES} characters]"
    return message


def reference_warnings(grader_root: Path, isolated: bool) -> list[str]:
    """A note when the reference is on this disk and the sandbox could read it."""
    if isolated:
        return []
    places = {Path(grader_root).resolve() / "solutions", Path(__file__).resolve().parents[2] / "solutions"}
    found = sorted(str(p) for p in places if p.is_dir())
    if not found:
        return []
    return [(f"the reference solutions are on this machine ({', '.join(found)}) and, without uid isolation, "
             f"submitted code runs as you and could read them. Grade untrusted submissions as root (the jail "
             f"hides the disk) or from a student copy (kata release) where there is no reference.")]


def jobs_default() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def grade(submission: Path, grader_root: Path, stages=STAGES, stage_timeout: float = 30.0,
          jobs: int | None = None, seed: int | None = None) -> Report:
    """Grade ``submission`` with the tests of ``grader_root``. Never raises:
    a failure of the grader itself gives every stage 0 with the reason.
    ``jobs`` judges share the stages (default: the CPUs; a class grades one student per CPU
    with ``jobs=1``).  ``seed`` (default: fresh, secret) seeds the hidden checks: the same
    seed grades alike."""
    start = time.monotonic()
    submission = Path(submission).resolve()
    stages = list(stages)
    found = jail.detect()
    report = Report(str(submission), [], isolated=found.isolated, isolation=found.line,
                    warnings=reference_warnings(Path(grader_root), found.isolated))
    report.hidden_seed = secrets.randbits(64) if seed is None else seed
    jail.become_subreaper()
    if found.mode == "chroot":
        try:
            jailroot.check(Path(found.root))  # before each grading: nothing in it writable or not root's
        except (OSError, jailroot.JailBroken) as error:
            report.message = f"the grader failed: the jail's root is not sound ({error})"
            report.stages = [StageGrade(s, reason=report.message, reason_kind="crash") for s in stages]
            return report
    _grade_stages(report, submission, Path(grader_root), stages, stage_timeout, jobs, found)
    report.seconds = time.monotonic() - start
    return report


def _grade_stages(report, submission, grader_root, stages, stage_timeout, jobs, found) -> None:
    made = []  # the chroot mode's stage folders, inside the jail's root: removed at the end
    try:
        if not submission.is_dir():
            raise FileNotFoundError(f"the submission {submission} is not a folder")
        if not (grader_root / "tests").is_dir():
            raise FileNotFoundError(f"the grader {grader_root} has no tests/")
        with tempfile.TemporaryDirectory(prefix="kata-grade-") as tmp:
            scratch = Path(tmp)
            os.chmod(scratch, 0o711)  # the sandbox user may pass through to its stage folder, not list
            env = _env(scratch, {"KATA_HIDDEN_SEED": str(report.hidden_seed),
                                 jail.ENV_CPU: str(int(stage_timeout) + 5), **found.env()})
            folders = {}
            for s in stages:
                folders[s.number] = jailroot.stage_folder(Path(found.root)) if found.mode == "chroot" \
                    else scratch / f"stage{s.number:02d}"
                made += [folders[s.number]] if found.mode == "chroot" else []
            report.stages = [prepare_stage(s, submission, folders[s.number]) for s in stages]
            todo = [g for g in report.stages if not g.reason]
            groups = [todo[i::max(1, jobs or jobs_default())] for i in range(max(1, jobs or jobs_default()))]
            groups = [g for g in groups if g]
            with ThreadPoolExecutor(max_workers=max(1, len(groups))) as pool_:
                for future in [pool_.submit(judge_stages, group, folders, grader_root, scratch / f"judge{i}",
                                            stage_timeout, env) for i, group in enumerate(groups)]:
                    future.result()
            _end_every_sandbox()
    except Exception as error:  # noqa: BLE001 - the grader's own failure: still a report, every stage 0
        _end_every_sandbox()
        report.message = f"the grader failed: {type(error).__name__}: {error}"
        report.stages = [StageGrade(s, reason=report.message, reason_kind="crash") for s in stages]
    finally:
        for folder in made:
            shutil.rmtree(folder, ignore_errors=True)


def _end_every_sandbox() -> None:
    """Nothing the submission started outlives the grading: every descendant of the grader,
    then every sandbox user no running sandbox holds (a judge killed midway did not clean its own)."""
    jail.kill_descendants()
    if jail.is_root():
        pool.sweep()

