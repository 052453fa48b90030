"""One judge process for some of a submission's stages (the grader's third step): its
command line, its run under a time limit, and each stage's grade from what it reported
(``report.fill``), failing closed: a judge that hung gives its stages 0 with the reason; a
judge that died, could not collect its tests or disagrees with its own results leaves them
not graded (``report.grader_failed``): the grader failed, not the submission (the judge never
runs submitted code, and a sandbox that cannot start ends it with ``SANDBOX_FAILED``)."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from autograd_kata.classroom.grading.folders import SEED_FD, judge_folder
from autograd_kata.classroom.grading.report import StageGrade, fill, grader_failed, not_passed, say
from autograd_kata.classroom.sandbox import jail
from autograd_kata.core.manifest import Stage
from autograd_kata.core.runner import plugin_args, read_results

# every run's plugin list (runner.plugin_args), and the judge's own; the hidden checks use
# Hypothesis without its pytest plugin, which that list blocks in every run alike
JUDGE_PLUGINS = dict(modules=("autograd_kata.classroom.grading.plugin",))


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
    env, seed, ends = dict(env), env.get("KATA_HIDDEN_SEED"), None
    if seed is not None and os.name == "posix":
        # Not in the judge's environment: /proc/<judge>/environ is that block as it was at exec,
        # readable by any process of its uid until the judge turns not dumpable, and without uid
        # isolation (mode none) a sandbox of the grading user is one.  A socket cannot be opened
        # through /proc/<pid>/fd, so only the judge reads it, once it is not dumpable (plugin.py).
        ends = socket.socketpair()
        del env["KATA_HIDDEN_SEED"]
        env[SEED_FD] = str(ends[1].fileno())
    with open(log, "wb") as sink:
        proc = subprocess.Popen(args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=sink,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                pass_fds=(ends[1].fileno(),) if ends else (),
                                preexec_fn=jail.die_with_parent)  # a killed grader takes its judges along
        if ends:
            ends[1].close()
            with ends[0]:
                try:
                    ends[0].sendall(str(seed).encode())  # a few bytes: the socket's buffer holds them
                except OSError:
                    pass  # a judge that is gone already: its run says so
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
        return say("report.exit.none")
    if code < 0:
        try:
            return say("report.exit.signal", signal=signal.Signals(-code).name)
        except ValueError:
            return say("report.exit.signal", signal=f"signal {-code}")
    return say("report.exit.code", code=code)


def _read_json(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


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
    try:  # the one reader of the results channel (core/runner.py), the learner's runner's too
        results: dict | None = read_results(judge / "results.json")
    except ValueError:
        results = None
    ids = collected.get("ids") if collected else None
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        for g in grades:
            grader_failed(g, say("report.reason.not_collected", exit=_describe_exit(run.returncode),
                                 output=run.output.strip()[-1500:]))
        return
    stopped = collected.get("stopped") if collected and isinstance(collected.get("stopped"), list) else []
    stopped = stopped or []
    named = collected.get("advisory") if collected else None
    advisory = {i for i in named if isinstance(i, str)} if isinstance(named, list) else set()
    reported = {}
    if results and isinstance(results.get("tests"), list):
        for entry in results["tests"]:
            if isinstance(entry, dict) and isinstance(entry.get("nodeid"), str):
                reported[entry["nodeid"]] = entry
    for g in grades:
        mine = [i for i in ids if i.split("::", 1)[0] == g.stage.test_file]
        fill(g, mine, reported, advisory)
        g.problem_kind = "crash"
        if not mine:
            grader_failed(g, say("report.reason.none_collected", file=g.stage.test_file))
        elif run.timed_out:
            g.problem, g.problem_kind = say("report.reason.judge_timeout",
                                          seconds=f"{stage_timeout * len(stages) + 30:g}"), "hang"
        elif g.stage.test_file in stopped:
            g.problem, g.problem_kind = say("report.reason.stage_stopped", seconds=f"{stage_timeout:g}"), "hang"
        elif results is None:
            grader_failed(g, say("report.reason.no_results", exit=_describe_exit(run.returncode)))
        elif results.get("collected") != len(ids):
            grader_failed(g, say("report.reason.collected_other", got=str(results.get("collected")), want=len(ids)))
        elif run.returncode not in (0, 1) or results.get("exitstatus") not in (0, 1):
            grader_failed(g, say("report.reason.judge_ended", exit=_describe_exit(run.returncode),
                                 output=run.output.strip()[-1500:]))
        elif g.passed < g.total:
            g.problem, g.problem_kind = not_passed(g, "en"), ""
        elif run.returncode == 0 and results.get("exitstatus") != 0:
            grader_failed(g, say("report.reason.disagree"))
        else:
            g.problem_kind = ""
    # pytest's 1 is explained when an advisory test failed (reported, not scored)
    explained = run.returncode == 1 and any(t.status != "passed" for g in grades for t in g.advisory)
    if run.returncode and not explained and all(not g.problem and g.passed == g.total for g in grades):
        for g in grades:  # every test passed, yet the judge failed: something outside the tests broke
            grader_failed(g, say("report.reason.ended_though_passed", exit=_describe_exit(run.returncode)))
