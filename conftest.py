"""How the stage tests find the code they test, and how they report.

* ``pytest`` tests your code in ``exercises/``; ``pytest --impl solutions``
  (or ``KATA_IMPL=solutions``) tests the reference in ``solutions/``.
* A test that takes the ``engine`` fixture gets the stage module, imported by
  package name (``exercises.stage04_tanh``).  With ``--impl solutions`` it also
  runs against every later stage module, since each carries the earlier ones
  (except a slow test marked ``own_stage_only``).
* Every test gets the marker of its stage: ``pytest -m stage4``.
* A stub that is not written yet, or a module that does not import, fails
  with one line that says what to do, instead of a traceback.
* Grading runs these same tests with ``--sandbox=FOLDER``: the module is then
  imported from FOLDER by a separate sandbox process (started through
  ``autograd_kata.classroom.jail``), and ``engine`` is a proxy for it
  (``autograd_kata.classroom.remote``); this process never imports it.
* Every stage test has a time limit sized to the tests (``STAGE_TIMEOUT`` below:
  2 s, where the slowest passing test takes about 0.1 s); a test marked
  ``heavy`` (or ``own_stage_only``, or ``properties``) gets ``HEAVY_TIMEOUT``.
  The first test of a stage that runs past its limit says where your code was
  spinning, and the rest of that stage is not run (reported as "not run").
* An unexpected exception in your code says where: ``exercises/...py:LINE``
  and that line (``autograd_kata.core.explain``).
"""
from __future__ import annotations

import importlib
import os
import sys
import traceback

import pytest

from autograd_kata.core import explain
from autograd_kata.core.i18n import t
from autograd_kata.core.manifest import IMPLS, STAGES, impl_problem, stage_of_module
from autograd_kata.core.results import record_kind
from expect import RuleBroken

# Time limits of the stage tests, in seconds (wall clock). The slowest passing
# test that is not heavy takes ~0.1 s (stage 8's training), so 2 s finds a loop
# fast and still leaves a busy machine 20x room (at 1 s, a 2-core machine
# running six test suites timed out correct code); a test marked heavy (the
# 100,000-op chain: ~0.3-0.6 s, property tests) gets HEAVY_TIMEOUT. ``pytest --timeout=N``
# overrides both; tests outside tests/ keep ``timeout`` from pyproject.toml.
STAGE_TIMEOUT = 2.0
HEAVY_TIMEOUT = 10.0
HEAVY_MARKERS = ("heavy", "own_stage_only", "properties")
HUNG = pytest.StashKey[dict]()  # test file's stage number -> where its first hang was


def pytest_addoption(parser):
    parser.addoption(
        "--impl",
        choices=IMPLS,
        default=os.environ.get("KATA_IMPL") or "exercises",
        help="which code the stage tests run against: exercises (yours, the default) "
             "or solutions (the reference). Also settable as KATA_IMPL.",
    )
    parser.addoption(
        "--sandbox",
        metavar="[MODULE=]FOLDER",
        action="append",
        default=None,
        help="grading: import the stage module from FOLDER in a separate sandbox process and test it "
             "through a proxy (one sandbox per stage module; the first hang or crash ends that module's tests). "
             "MODULE=FOLDER (repeated) gives each stage module a folder of its own.",
    )


def pytest_configure(config):
    impl = config.getoption("impl")
    if impl not in IMPLS:  # KATA_IMPL is not checked by argparse
        raise pytest.UsageError(f"KATA_IMPL={impl!r}: choose one of {', '.join(IMPLS)}")
    if impl == "solutions":  # a student copy has no reference: one usage error, not a failure per test
        problem = impl_problem(config.rootpath, impl)
        if problem:
            raise pytest.UsageError(problem)
    for stage in STAGES:
        config.addinivalue_line("markers", f"{stage.marker}: stage {stage.number}, {stage.title}")
    config.addinivalue_line("markers", "own_stage_only: a slow test that runs on its own stage's module only, "
                                       "even with --impl solutions (keeps feedback fast)")
    config.addinivalue_line("markers", "native_only: cannot run in the browser (kata site: Pyodide), which leaves "
                                       "it out and says so; never on a stage test (a verdict rests on all of them)")
    config.addinivalue_line("markers", f"heavy: a test that does real work: its time limit is {HEAVY_TIMEOUT:g} s "
                                       f"instead of the default (also for own_stage_only and properties)")
    config.stash[HUNG] = {}
    config.pluginmanager.register(WhereToStart(), "kata-where-to-start")


def pytest_report_header(config):
    impl = config.getoption("impl")
    whose = "your code" if impl == "exercises" else "the reference"
    folders = config.getoption("sandbox")
    where = f" in sandbox processes, from {', '.join(folders)}" if folders else ""
    return f"kata: testing {whose} in {impl}/{where}"


def pytest_collection_modifyitems(config, items):
    for item in items:
        stage = stage_of_module(item.module.__name__) if item.module else None
        if stage:
            item.add_marker(getattr(pytest.mark, stage.marker))
        if stage and not item.get_closest_marker("timeout") and config.getoption("timeout", None) is None:
            heavy = any(item.get_closest_marker(m) for m in HEAVY_MARKERS)
            limit = HEAVY_TIMEOUT if heavy else STAGE_TIMEOUT
            if config.getoption("sandbox", None):
                # through the sandbox, a hang is the sandbox's to report ("did not answer
                # within N s", or a hung import): the judge's own limit sits above it
                limit = max(limit, sandbox_call_timeout() + 4)
            item.add_marker(pytest.mark.timeout(limit))


def pytest_generate_tests(metafunc):
    if "engine" not in metafunc.fixturenames:
        return
    own = stage_of_module(metafunc.module.__name__)
    if own is None:
        raise pytest.UsageError(f"{metafunc.module.__name__} uses `engine` but is no stage's test file")
    impl = metafunc.config.getoption("impl")
    only_own = impl == "exercises" or metafunc.definition.get_closest_marker("own_stage_only")
    carriers = [own] if only_own else [s for s in STAGES if s.number >= own.number]
    metafunc.parametrize(
        "engine",
        [f"{impl}.{s.module}" for s in carriers],
        ids=[s.module for s in carriers],
        indirect=True,
    )


class ModuleBroken(Exception):
    """The stage module could not be imported."""


def broken(name, kind, error, lineno):
    where = t("check.at_line", line=lineno) if lineno else ""
    return ModuleBroken(t("check.no_import", file=f"{name.replace('.', '/')}.py", where=where, kind=kind, error=error))



@pytest.fixture
def engine(request):
    """The stage module under test, e.g. ``exercises.stage04_tanh`` (with ``--sandbox``, its proxy)."""
    name = request.param
    if request.config.getoption("sandbox"):
        return remote_engine(request.config, name)
    try:
        return importlib.import_module(name)
    except Exception as error:  # a SyntaxError in the learner's file, a bad import, ...
        sys.modules.pop(name, None)
        lineno = error.lineno if isinstance(error, SyntaxError) else None
        raise broken(name, type(error).__name__, error, lineno) from None


SANDBOXES = pytest.StashKey[dict]()


def remote_engine(config, name):
    """One sandbox per stage module for the whole session; a module that does not import,
    or a sandbox that could not start, gives every later test the same one-line failure."""
    from autograd_kata.classroom import jail, remote  # grading only: the learner's run never loads them

    sandboxes = config.stash.setdefault(SANDBOXES, {})
    if name not in sandboxes:
        folder = os.path.realpath(sandbox_folder(config, name))
        timeout = sandbox_call_timeout()
        try:
            sandboxes[name] = remote.connect(name, folder, launch=jail.launcher(folder), call_timeout=timeout)
        except remote.ImportFailed as error:
            sandboxes[name] = broken(name, error.kind, error.message, error.lineno)
        except remote.SandboxError as error:  # it hung or died while importing: a hang or a crash, as it says
            sandboxes[name] = ModuleBroken(str(error))  # an Exception: a fixture may not raise a BaseException
            sandboxes[name].kind = error.kind
    found = sandboxes[name]
    if isinstance(found, BaseException):
        raise found.with_traceback(None)
    return found


def sandbox_folder(config, name) -> str:
    """The folder ``--sandbox`` gives the module ``name`` (``exercises.stage04_tanh``)."""
    module, everyone = name.rsplit(".", 1)[-1], None
    for value in config.getoption("sandbox"):
        key, sep, folder = value.partition("=")
        if sep and key == module:
            return folder
        if not sep:
            everyone = value
    if everyone is None:
        raise pytest.UsageError(f"--sandbox gives no folder for {module}")
    return everyone


def close_sandbox(config, name) -> None:
    """End the sandbox of ``name`` once its tests are done (a judge of several stages runs on)."""
    found = config.stash.get(SANDBOXES, {}).pop(name, None)
    if found is not None and not isinstance(found, BaseException):
        found.__kata_remote__.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    result = yield
    if item.config.getoption("sandbox") and (nextitem is None or nextitem.path != item.path):
        for name in list(item.config.stash.get(SANDBOXES, {})):
            stage = _stage_of(item)
            if stage and name.rsplit(".", 1)[-1] == stage.module:
                close_sandbox(item.config, name)
    return result


def sandbox_call_timeout() -> float:
    """Seconds the judge waits for one answer of the sandbox (KATA_SANDBOX_TIMEOUT)."""
    from autograd_kata.classroom import remote
    return float(os.environ.get("KATA_SANDBOX_TIMEOUT") or remote.CALL_TIMEOUT)


def sandbox_errors():
    """The sandbox's own failures (a hang, a crash), which are one plain line, as a tuple of types."""
    remote = sys.modules.get("autograd_kata.classroom.remote")
    return (remote.SandboxError,) if remote else ()


def pytest_unconfigure(config):
    for found in config.stash.get(SANDBOXES, {}).values():
        if not isinstance(found, BaseException):
            found.__kata_remote__.close()


def _stage_of(item):
    return stage_of_module(item.module.__name__) if getattr(item, "module", None) else None


def _module_file(item, stage) -> str:
    """The learner's (or the reference's) module this test ran on, e.g. exercises/stage05_backward.py."""
    callspec = getattr(item, "callspec", None)
    name = callspec.params.get("engine") if callspec else None
    if not isinstance(name, str):
        name = f"{item.config.getoption('impl')}.{stage.module}"
    return name.replace(".", "/") + ".py"


def _test_place(error) -> str:
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if "/tests/" in f.filename.replace("\\", "/")]
    if not frames:
        return ""
    f = frames[-1]
    short = f.filename.replace("\\", "/").rsplit("/tests/", 1)[-1]
    return f"tests/{short}:{f.lineno}: {(f.line or '').strip()}"


def _is_timeout(error) -> bool:
    return isinstance(error, pytest.fail.Exception) and str(error).startswith("Timeout (>")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """After a stage's first hang, its other tests are not run: one loop costs seconds, not minutes."""
    stage = _stage_of(item)
    hung = item.config.stash.get(HUNG, {}).get(stage.number) if stage else None
    if hung:
        pytest.skip(t("check.not_run.prefix") + t("check.not_run", n=stage.number, test=hung))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    not_run = t("check.not_run.prefix")
    if report.skipped and isinstance(report.longrepr, tuple) and not_run in report.longrepr[2]:
        path, line, text = report.longrepr
        report.longrepr = (path, line, text[text.index(not_run):])
        record_kind(report, "not run")
        return report
    if not report.failed:
        return report
    record_kind(report, kind_of(call.excinfo.value if call.excinfo else None, report))
    checks = [line[len("FAILURE: "):] for line in report.longreprtext.splitlines()
              if line.startswith("FAILURE: ")]
    error = call.excinfo.value if call.excinfo else None
    stage = _stage_of(item)
    if checks:  # pytest-check's soft failures: every wrong gradient, one line each
        report.longrepr = "\n".join(checks)
    elif isinstance(error, NotImplementedError) and str(error).startswith("stage "):
        report.longrepr = t("check.unwritten.prefix") + explain.stub_said(error)
    elif isinstance(error, (ModuleBroken, RuleBroken, *sandbox_errors())):
        report.longrepr = str(error)
    elif stage is None or error is None:
        pass
    elif _is_timeout(error):
        limit = str(error)[len("Timeout (>"):].split("s)", 1)[0]
        try:
            limit = float(limit)
        except ValueError:
            limit = float("nan")
        report.longrepr = explain.hang(error, _module_file(item, stage), limit, stage.number)
        item.config.stash[HUNG].setdefault(stage.number, item.name)
    elif not isinstance(error, (AssertionError, pytest.fail.Exception, pytest.skip.Exception)):
        report.longrepr = explain.crash(error, _module_file(item, stage), item.config.rootpath, stage.number,
                                        _test_place(error))
    elif getattr(error, "learner_frames", None):  # raised in the sandbox: show its lines as pytest would
        report.longrepr = with_learner_frames(report.longreprtext, error.learner_frames)
    return report


def kind_of(error, report) -> str:
    """The kind of a failure (``results.KINDS``), from what was raised: the words come after.
    A group (Hypothesis reports a flaky example as one) is the most telling of its members."""
    members = getattr(error, "exceptions", None)  # an exception group (the backport's too, on 3.10)
    if isinstance(members, tuple) and members and all(isinstance(e, BaseException) for e in members):
        found = {kind_of(e, report) for e in members}
        return next((k for k in ("hang", "unwritten", "import", "wrong", "crash") if k in found), "other")
    if isinstance(error, NotImplementedError) and str(error).startswith("stage "):
        return "unwritten"
    if isinstance(error, ModuleBroken):
        return getattr(error, "kind", "import")
    if _is_timeout(error):
        return "hang"
    if sandbox_errors() and isinstance(error, sandbox_errors()):
        return error.kind
    if isinstance(error, (AssertionError, RuleBroken, pytest.fail.Exception)) or "FAILURE: " in report.longreprtext:
        return "wrong"
    if error is None or report.when != "call":
        return "other"
    return "crash"


def with_learner_frames(text, frames):
    """A judge-side traceback with the submitted file's frames put where a local run shows them:
    before the exception line (``--tb=native``) or before the ``E`` lines (pytest's own styles)."""
    lines = text.splitlines()
    if lines and lines[0].startswith("Traceback"):
        last = max((i for i, line in enumerate(lines) if line.startswith("  File ")), default=0)
        at = next((i for i in range(last + 1, len(lines)) if not lines[i].startswith("    ")), len(lines))
        yours = [f'  File "{file}", line {line}\n    {code}' for file, line, code in frames]
    else:
        at = next((i for i, line in enumerate(lines) if line.startswith("E ")), len(lines))
        yours = [f"{file}:{line}:\n    {code}" for file, line, code in frames]
    return "\n".join(lines[:at] + yours + lines[at:])


class WhereToStart:
    """A bare ``pytest`` over several stages ends with one line: where to start.
    (A plugin object, so its ``pytest_unconfigure`` runs after pytest's last
    summary line and beside any other ``pytest_unconfigure`` of this conftest.)"""

    def pytest_unconfigure(self, config):
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None or config.getoption("kata_results", None):
            return
        failing = sorted({stage.number for key in ("failed", "error")
                          for report in reporter.stats.get(key, [])
                          if (stage := stage_of_module(report.nodeid.split("::", 1)[0].rsplit("/", 1)[-1][:-3]))})
        if len(failing) > 1:
            first = failing[0]
            reporter.write_line(t("check.where_to_start", k=len(failing), n=first))
