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
"""
from __future__ import annotations

import importlib
import os
import sys

import pytest

from expect import RuleBroken
from autograd_kata.core.manifest import IMPLS, STAGES, stage_of_module


def pytest_addoption(parser):
    parser.addoption(
        "--impl",
        choices=IMPLS,
        default=os.environ.get("KATA_IMPL") or "exercises",
        help="which code the stage tests run against: exercises (yours, the default) "
             "or solutions (the reference). Also settable as KATA_IMPL.",
    )


def pytest_configure(config):
    impl = config.getoption("impl")
    if impl not in IMPLS:  # KATA_IMPL is not checked by argparse
        raise pytest.UsageError(f"KATA_IMPL={impl!r}: choose one of {', '.join(IMPLS)}")
    for stage in STAGES:
        config.addinivalue_line("markers", f"{stage.marker}: stage {stage.number}, {stage.title}")
    config.addinivalue_line("markers", "own_stage_only: a slow test that runs on its own stage's module only, "
                                       "even with --impl solutions (keeps feedback fast)")


def pytest_report_header(config):
    impl = config.getoption("impl")
    whose = "your code" if impl == "exercises" else "the reference"
    return f"kata: testing {whose} in {impl}/"


def pytest_collection_modifyitems(config, items):
    for item in items:
        stage = stage_of_module(item.module.__name__) if item.module else None
        if stage:
            item.add_marker(getattr(pytest.mark, stage.marker))


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


@pytest.fixture
def engine(request):
    """The stage module under test, e.g. ``exercises.stage04_tanh``."""
    name = request.param
    try:
        return importlib.import_module(name)
    except Exception as error:  # a SyntaxError in the learner's file, a bad import, ...
        sys.modules.pop(name, None)
        path = name.replace(".", "/") + ".py"
        where = f" (line {error.lineno})" if isinstance(error, SyntaxError) and error.lineno else ""
        raise ModuleBroken(f"{path} does not import{where}: {type(error).__name__}: {error}") from None


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if not report.failed:
        return report
    checks = [line[len("FAILURE: "):] for line in report.longreprtext.splitlines()
              if line.startswith("FAILURE: ")]
    error = call.excinfo.value if call.excinfo else None
    if checks:  # pytest-check's soft failures: every wrong gradient, one line each
        report.longrepr = "\n".join(checks)
    elif isinstance(error, NotImplementedError) and str(error).startswith("stage "):
        report.longrepr = f"not written yet: {error}"
    elif isinstance(error, (ModuleBroken, RuleBroken)):
        report.longrepr = str(error)
    return report
