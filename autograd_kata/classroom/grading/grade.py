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
  code, and it writes the results (``autograd_kata.core.results.channel``) into its
  private folder.  It gets a fresh hidden seed (never on a command line, which is
  world-readable, nor in its environment block: through a socket, ``judging._run``), which
  turns on the hidden checks;
* the **sandbox**: started by the judge through ``jail.launcher``; it imports
  only the submitted ``exercises/stageNN_*.py`` of that stage, from a stage
  folder that holds nothing else, and answers the judge's questions with data.
  It runs in the strongest jail the machine allows (``jail.py``: as root, a user of
  the sandbox pool, in namespaces or a chroot), which shows it only that folder
  and the standard library (``jail.py``).

A stage counts only what its judge reports: every test the judge collected
must be reported passed, the judge must exit 0; a judge that hangs past
``--stage-timeout`` scores 0 with a reason, and a judge that is killed, cannot
collect its tests, cannot start a sandbox or leaves no results leaves the stage
**not graded** (``report.GRADER``): the grader failed, which is never a grade.
Stages run in parallel, as many as the CPUs this process may use.  When every
stage is done, every process of the sandbox user (and every process the
grader's children left behind) is killed; only then is the report returned,
and only the grader writes it, in one of ``formats.FORMATS`` (``formats.py``).

The steps, one module each: ``discovery`` (which file), ``folders`` (where each
process runs), ``judging`` (one judge process and what it reported), ``report`` (the
grades), ``formats`` (the report written); this module runs them and ends every sandbox.
"""
from __future__ import annotations

import os
import secrets
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from autograd_kata.classroom.grading.folders import SCRATCH, hold, judge_env, prepare_stage, sweep
from autograd_kata.classroom.grading.judging import judge_stages
from autograd_kata.classroom.grading.report import Report, StageGrade, grader_failed, say
from autograd_kata.classroom.sandbox import jail, jailroot, pool
from autograd_kata.core.manifest import STAGES


def reference_warnings(grader_root: Path, isolated: bool) -> list[str]:
    """A note when the reference is on this disk and the sandbox could read it."""
    if isolated:
        return []
    places = {Path(grader_root).resolve() / "solutions", Path(__file__).resolve().parents[3] / "solutions"}
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
    a failure of the grader itself leaves every stage not graded, with the reason.
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
    jail.not_dumpable()  # the hidden seed is in this process's memory: closed to a sandbox of its uid
    if found.root:  # chroot, and namespaces (its system is the same copy)
        try:
            jailroot.check(Path(found.root))  # before each grading: nothing in it writable or not root's
            jailroot.sweep_stages(Path(found.root))  # what a grader killed midway left there
        except (OSError, jailroot.JailBroken) as error:
            report.message = say("report.reason.jail_unsound", error=str(error))
            report.stages = _not_graded(stages, report.message)
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
        sweep()  # what graders killed midway left in the temporary folder
        # held until this grading ends, or this process does; removed then (a sweep may be first)
        with tempfile.TemporaryDirectory(prefix=SCRATCH, ignore_cleanup_errors=True) as tmp, hold(Path(tmp)):
            scratch = Path(tmp)
            os.chmod(scratch, 0o711)  # the sandbox user may pass through to its stage folder, not list
            env = judge_env(scratch, {"KATA_HIDDEN_SEED": str(report.hidden_seed),
                                      jail.ENV_CPU: str(int(stage_timeout) + 5), **found.env()})
            folders = {}
            for s in stages:
                folders[s.number] = jailroot.stage_folder(Path(found.root)) if found.mode == "chroot" \
                    else scratch / f"stage{s.number:02d}"
                made += [folders[s.number]] if found.mode == "chroot" else []
            report.stages = [prepare_stage(s, submission, folders[s.number]) for s in stages]
            todo = [g for g in report.stages if not g.problem]
            groups = [todo[i::max(1, jobs or jobs_default())] for i in range(max(1, jobs or jobs_default()))]
            groups = [g for g in groups if g]
            with ThreadPoolExecutor(max_workers=max(1, len(groups))) as pool_:
                for future in [pool_.submit(judge_stages, group, folders, grader_root, scratch / f"judge{i}",
                                            stage_timeout, env) for i, group in enumerate(groups)]:
                    future.result()
            _end_every_sandbox()
    except Exception as error:  # noqa: BLE001 - the grader's own failure: still a report, nothing graded
        _end_every_sandbox()
        report.message = say("report.reason.grader_failed", error=f"{type(error).__name__}: {error}")
        report.stages = _not_graded(stages, report.message)
    finally:
        for folder in made:
            jailroot.remove_stage(folder)


def not_graded(submission: Path, stages, error: BaseException) -> Report:
    """The report of a grading that never came back (its worker process died): nothing graded."""
    report = Report(str(submission), [])
    report.message = say("report.reason.grader_failed", error=f"{type(error).__name__}: {error}")
    report.stages = _not_graded(stages, report.message)
    return report


def _not_graded(stages, why: str) -> list[StageGrade]:
    grades = [StageGrade(s) for s in stages]
    for g in grades:
        grader_failed(g, why)
    return grades


def _end_every_sandbox() -> None:
    """Nothing the submission started outlives the grading: every descendant of the grader,
    then every sandbox user no running sandbox holds (a judge killed midway did not clean its own)."""
    jail.kill_descendants()
    if jail.is_root():
        pool.sweep()
