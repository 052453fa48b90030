"""Run stage tests in a fresh pytest process and read back every test's outcome.

The one results channel (``autograd_kata.core.results.channel``) writes each test's
outcome and *full* message as JSON; this module reads it and *fails closed*: a
test counts as passed only when the file says so, and a run that reported fewer
tests than it collected is a problem, never a pass.

The run is ours: pytest gets the project's configuration only.  The learner's
``PYTEST_*`` environment (``PYTEST_ADDOPTS=-k ...``, ``PYTEST_PLUGINS``, ...)
is dropped, the configuration file is named explicitly (a stray ``pytest.ini``
does not win), plugin auto-loading is off and only the plugins the stage tests
need (``PLUGINS``: pytest-check, pytest-timeout) are loaded by name, and the
ones that reorder, select, repeat or parallelise tests are blocked besides
(``-p no:X`` for a plugin that is not installed is harmless).  Auto-loading
off also spares the run pytest's assertion rewriting of every module of every
installed plugin's distribution (Hypothesis alone: ~2 s of CPU per run).
Only a run without extra selection arguments is ``complete``, and
only a complete run may be cached as a stage's result.

One process can run many stages; a stage module that does not import fails
only its own tests (the ``engine`` fixture imports lazily).  Where
pytest-timeout has to use its thread method, a hang ends the whole process:
then each stage of the run is run again on its own, so one hanging stage does
not leave the others untested.
"""
from __future__ import annotations

import json
import linecache
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from autograd_kata.core import i18n
from autograd_kata.core.manifest import STAGES, Stage
from autograd_kata.core.results.kinds import hang_dump
from autograd_kata.core.results.model import StageResult, TestResult

# Plugins that change which tests run, in what order, how often or in which
# process.  None of them is needed by the stage tests.
BLOCKED_PLUGINS = (
    "cacheprovider",   # --lf/--ff/--nf/--sw and the cache folder
    "stepwise",        # --sw: stop at the first failure, resume there
    "randomly",        # pytest-randomly: shuffles tests and reseeds random
    "random_order",    # pytest-random-order
    "xdist",           # pytest-xdist: -n, --dist
    "xdist.looponfail",
    "rerunfailures",   # pytest-rerunfailures: a flaky pass is not a pass
    "flaky",
    "repeat",          # pytest-repeat
    "order",           # pytest-order
    "ordering",        # pytest-ordering
    "testmon",         # pytest-testmon: selects tests by changed code
    "picked",          # pytest-picked
    "forked",          # pytest-forked
    # Not a reordering plugin but a cost: Hypothesis' pytest plugin imports all of
    # Hypothesis at start-up (~0.6 s of CPU, half of a stage run). Property tests
    # run without it (the falsifying example still comes as the error's note).
    "hypothesispytest",
)

# The plugins the stage tests need (pytest11 entry-point names), loaded by name
# with auto-loading off. A new plugin the tests rely on must be added here.
PLUGINS = ("check", "timeout")

# A learner's pytest settings that would leak into the run through the environment.
LEAKY_ENV = re.compile(r"^(PYTEST_|PY_COLORS$|KATA_HIDDEN_SEED$)")

def child_env(impl: str) -> dict[str, str]:
    """The environment of the pytest process: ours, minus the learner's pytest settings."""
    env = {k: v for k, v in os.environ.items() if not LEAKY_ENV.match(k)}
    env["KATA_IMPL"] = impl
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # only PLUGINS, loaded by name
    # The learner's file may be saved twice within one second at the same size;
    # a cached .pyc keyed by mtime and size would then test the old code.
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # Its output is read back as UTF-8 (``_run_once``), and it must be written so: on Windows
    # a pipe takes the ANSI code page, which cannot show Japanese, so the child's messages
    # would fall back to English under a Japanese frame.
    env["PYTHONIOENCODING"] = "utf-8"
    # The child speaks English: its results are data (each message as catalogue ids), said in
    # the learner's language when read (state.spoken), so one cached result serves every language.
    return {**i18n.child_env(env), i18n.ENV: "en"}


def needed_plugins(names=PLUGINS) -> list[str]:
    """``-p module`` for each of ``names`` that is installed (by its entry point)."""
    from importlib.metadata import entry_points
    found = {ep.name: ep.value for ep in entry_points(group="pytest11") if ep.name in names}
    return [arg for name in names if name in found for arg in ("-p", found[name])]


def plugin_args(modules=(), plugins=PLUGINS) -> list[str]:
    """The plugins of every pytest run of ours, learner's and grader's alike (with
    auto-loading off): ``BLOCKED_PLUGINS`` refused, ``plugins`` (``PLUGINS``) loaded by name,
    then our results plugin and ``modules``."""
    blocked = [arg for name in BLOCKED_PLUGINS for arg in ("-p", f"no:{name}")]
    ours = [arg for module in ("autograd_kata.core.results.channel", *modules) for arg in ("-p", module)]
    return blocked + needed_plugins(plugins) + ours


def pytest_command(impl: str, stages, results: Path, extra=(), root: Path | None = None,
                   modules=(), plugins=PLUGINS) -> list[str]:
    """The pytest run of ``stages`` (``plugin_args(modules, plugins)``), its results to ``results``."""
    files = [s.test_file for s in stages]
    root = Path(root or ".")
    config = [f"--rootdir={root}"]
    if (root / "pyproject.toml").is_file():  # named, so a stray pytest.ini or tox.ini does not win
        config[:0] = ["-c", str(root / "pyproject.toml")]
    return [sys.executable, "-m", "pytest", *files, f"--impl={impl}", "-q", "--no-header", "-rN",
            *config, *plugin_args(modules, plugins), f"--kata-results={results}", *extra]


def parse_results(data: dict, impl: str, stages, complete: bool = True) -> dict[int, StageResult]:
    """One ``StageResult`` per stage from the JSON the results plugin wrote."""
    results = {s.number: StageResult(s, impl, complete=complete) for s in stages}
    for entry in data["tests"]:
        if entry.get("stage") in results:
            results[entry["stage"]].tests.append(TestResult.from_entry(entry))
    reported, collected = len(data["tests"]), data.get("collected")
    short = not isinstance(collected, int) or reported < collected
    for result in results.values():
        if not result.tests:
            result.problem = i18n.t("runner.none_reported")
        elif short:
            result.problem = i18n.t("runner.stopped_early", reported=reported, collected=collected,
                                    status=data.get("exitstatus"))
    return results


def read_results(path: Path) -> dict:
    """The JSON the results plugin (``autograd_kata.core.results.channel``) wrote: the one reader
    of that file (the learner's runner, the grader's judging, the page), here and not in
    the plugin because importing the plugin imports pytest, a fifth of a second the
    learner's command need not pay.  ``ValueError`` if it is missing or malformed."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"no readable results at {path}: {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("tests"), list):
        raise ValueError(f"results at {path} are not in the expected shape")
    return data


def broken_run(status, output: str, stages) -> str:
    """Why a run that pytest itself did not finish gives no verdict (exit status 2-5:
    interrupted, an internal error, a usage error, no tests): what happened, the
    learner's line where the output names one, and pytest's own last words."""
    what = i18n.t(f"runner.status.{status}") if status in (2, 3, 4, 5) else i18n.t("runner.status.other")
    where = next((w for s in stages if (w := hang_location(output, s))), "")
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    last = [line for line in lines if line.startswith("INTERNALERROR>")][-1:] or lines[-1:] or [""]
    text = i18n.t("runner.broken", status=status, what=what)
    if where:
        text += "\n" + i18n.t("runner.broken_at", where=where)
    return f"{text}\n{last[0].strip()[:300]}"


def hang_location(output: str, stage: Stage) -> str:
    """From a stack dump, pytest-timeout's (thread method: innermost frame last, each with its
    line's text) or faulthandler's (``results.channel.CLoopWatch``, which ends a loop inside C:
    innermost first, no text, read here from the file): the innermost line of the stage's module,
    as ``path:line: text``; "" if none."""
    frames = re.findall(r'File "([^"]+)", line (\d+), in \S+\n\s*(.*)', output)
    if not frames:  # faulthandler's: most recent call first
        frames = [(p, n, linecache.getline(p, int(n)))
                  for p, n in reversed(re.findall(r'File "([^"]+)", line (\d+) in \S+', output))]
    own = [(short, n, text) for p, n, text in frames for short in (stage.source("exercises"), stage.source("solutions"))
           if p.replace("\\", "/").endswith(short)]
    if not own:
        return ""
    short, line, text = own[-1]
    return f"{short}:{line}: {text.strip()}"


def stacks_left(results: Path) -> str:
    """The stacks faulthandler wrote beside ``results`` when it ended a test no signal could stop
    (a loop inside C: ``results.channel.CLoopWatch``), to read as the run's output; "" if none."""
    dump = hang_dump(results)
    stacks = dump.read_text(encoding="utf-8", errors="replace") if dump.is_file() else ""
    return "\n" + stacks if stacks.strip() else ""


def _run_once(impl, stages, root, timeout, extra):
    """(results or None, why not, the kind of why not: "hang" or "")."""
    with tempfile.TemporaryDirectory(prefix="kata-") as tmp:
        out = Path(tmp) / "results.json"
        try:
            proc = subprocess.run(pytest_command(impl, stages, out, extra, root), cwd=root,
                                  env=child_env(impl), capture_output=True, text=True,
                                  encoding="utf-8", errors="replace", timeout=timeout)
            stacks = stacks_left(out)
            output, code = proc.stdout + proc.stderr + stacks, proc.returncode
            crash = f"{i18n.t('runner.exited', code=proc.returncode)}\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
        except subprocess.TimeoutExpired:
            output, code, crash, stacks = "", None, i18n.t("runner.timeout", seconds=f"{timeout:.0f}"), ""
        if out.exists():
            try:
                data = read_results(out)
            except ValueError as error:
                crash = i18n.t("runner.unreadable", error=error)
            else:
                status = data.get("exitstatus")
                if status in (0, 1) and code in (0, 1):
                    return parse_results(data, impl, stages, complete=not extra), "", ""
                crash = broken_run(status if status not in (0, 1) else code, output, stages)
        if len(stages) == 1:
            where = hang_location(output, stages[0])
            if stacks or "Timeout" in output:  # faulthandler's stacks, or pytest-timeout's own dump
                # (its thread method, where there is no SIGALRM: Windows). The learner's line and what
                # to do next, as a hang in one test says them; never pytest's stack dump.
                return None, (i18n.t("hang.prefix") + i18n.t("hang.whole_run")
                              + (i18n.t("hang.whole_run_at", where=where) if where else "")
                              + "\n" + i18n.t("hang.whole_run_next", n=stages[0].number)), "hang"
        return None, crash, ""


def run(impl: str = "exercises", stages=STAGES, root: Path | None = None,
        timeout: float = 300, extra=()) -> dict[int, StageResult]:
    """Run ``stages``' tests against ``impl`` in one pytest process under ``root``."""
    root = Path(root or Path.cwd()).resolve()
    missing = {s.number: StageResult(s, impl, problem=i18n.t("runner.tests_missing", file=s.test_file),
                                     problem_kind="missing") for s in stages if not (root / s.test_file).is_file()}
    stages = [s for s in stages if s.number not in missing]
    if not stages:
        return missing
    got, crash, kind = _run_once(impl, stages, root, timeout, extra)
    if got is not None:
        return {**got, **missing}
    if len(stages) > 1:  # one stage may have taken the process down: run each alone
        alone: dict[int, StageResult] = {}
        for s in stages:
            one, why, kind = _run_once(impl, [s], root, timeout, extra)
            alone.update(one or {s.number: StageResult(s, impl, problem=why, problem_kind=kind)})
        return {**alone, **missing}
    return {stages[0].number: StageResult(stages[0], impl, problem=crash, problem_kind=kind), **missing}
