"""How the stage tests find the code they test, and how they report.

* ``pytest`` tests your code in ``exercises/``; ``pytest --impl solutions``
  (or ``KATA_IMPL=solutions``) tests the reference in ``solutions/``.
* A test that takes the ``engine`` fixture gets the stage module, imported by
  package name (``exercises.stage04_tanh``).  With ``--impl solutions`` it also
  runs against every later stage module, since each carries the earlier ones
  (except a slow test marked ``own_stage_only``).
* Every test gets the marker of its stage: ``pytest -m stage4``.
* How a failure reads (one line for a stub not written yet or a module that
  does not import, a hang with its line, a crash with the learner's line) and
  what it is as data (its kind, its messages, the mistake they name) is the
  teaching verdicts' plugin, ``autograd_kata/core/results/verdicts.py``, loaded here.
* Grading runs these same tests with ``--sandbox=FOLDER``: the module is then
  imported from FOLDER by a separate sandbox process (started through
  ``autograd_kata.classroom.sandbox.jail``), and ``engine`` is a proxy for it
  (``autograd_kata.classroom.sandbox.remote``); this process never imports it.
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
import subprocess
import sys

import pytest

from autograd_kata.core.manifest import IMPLS, STAGES, impl_problem, stage_of_module

# the teaching verdicts (one-line failures, hangs, crashes, kinds and mistakes as data);
# imported by pytest as a plugin, so this file imports from it only inside functions
pytest_plugins = ("autograd_kata.core.results.verdicts",)

# Time limits of the stage tests, in seconds (wall clock). The slowest passing
# test that is not heavy takes ~0.1 s (stage 8's training), so 2 s finds a loop
# fast and still leaves a busy machine 20x room (at 1 s, a 2-core machine
# running six test suites timed out correct code); a test marked heavy (the
# 100,000-op chain: ~0.3-0.6 s, property tests) gets HEAVY_TIMEOUT. ``pytest --timeout=N``
# overrides both; tests outside tests/ keep ``timeout`` from pyproject.toml.
STAGE_TIMEOUT = 2.0
HEAVY_TIMEOUT = 10.0
HEAVY_MARKERS = ("heavy", "own_stage_only", "properties")


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
    config.addinivalue_line("markers", "advisory: a check of what only the sandbox can say about itself (its "
                                       "recursion limit, the global random state): under grading it is reported "
                                       "and worth no points (docs/instructors.md); kata check counts it as any")
    config.addinivalue_line("markers", f"heavy: a test that does real work: its time limit is {HEAVY_TIMEOUT:g} s "
                                       f"instead of the default (also for own_stage_only and properties)")


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
        from autograd_kata.core.results.verdicts import broken, import_line
        raise broken(name, type(error).__name__, error, import_line(error, name)) from None


SANDBOXES = pytest.StashKey[dict]()
SANDBOX_FAILED = 3  # the judge's exit status when a sandbox could not start (kata grade: not graded)


def remote_engine(config, name):
    """One sandbox per stage module for the whole session; a module that does not import,
    or a sandbox that could not start, gives every later test the same one-line failure."""
    from autograd_kata.classroom.sandbox import jail, remote
    from autograd_kata.core.results.verdicts import ModuleBroken, broken, sandbox_folder

    sandboxes = config.stash.setdefault(SANDBOXES, {})
    if name not in sandboxes:
        folder = os.path.realpath(sandbox_folder(config, name))
        timeout = sandbox_call_timeout()
        try:
            sandboxes[name] = remote.connect(name, folder, launch=jail.launcher(folder), call_timeout=timeout)
        except (OSError, ValueError, subprocess.SubprocessError) as error:
            # the jail could not start the sandbox (before any submitted code ran): the grader
            # failed, not the submission, and the judge says so by its exit status
            pytest.exit(f"the sandbox could not start: {type(error).__name__}: {error}", returncode=SANDBOX_FAILED)
        except remote.ImportFailed as error:
            sandboxes[name] = broken(name, error.kind, error.message, error.lineno)
        except remote.SandboxError as error:  # it hung or died while importing: a hang or a crash, as it says
            # an Exception: a fixture may not raise a BaseException (its message kept as data)
            sandboxes[name] = ModuleBroken(next(iter(error.args), str(error)))
            sandboxes[name].kind = error.kind
    found = sandboxes[name]
    if isinstance(found, BaseException):
        raise found.with_traceback(None)
    return found


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
            stage = stage_of_module(item.module.__name__) if getattr(item, "module", None) else None
            if stage and name.rsplit(".", 1)[-1] == stage.module:
                close_sandbox(item.config, name)
    return result


def sandbox_call_timeout() -> float:
    """Seconds the judge waits for one answer of the sandbox (KATA_SANDBOX_TIMEOUT)."""
    from autograd_kata.classroom.sandbox import remote
    return float(os.environ.get("KATA_SANDBOX_TIMEOUT") or remote.CALL_TIMEOUT)


def pytest_unconfigure(config):
    for found in config.stash.get(SANDBOXES, {}).values():
        if not isinstance(found, BaseException):
            found.__kata_remote__.close()


