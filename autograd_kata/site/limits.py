"""Per-test time limits without signals or threads: pytest-timeout's stand-in in the page.

Pyodide (the page's Python, in a Web Worker) has no ``signal.alarm`` and no
threads, so pytest-timeout cannot run there.  This plugin takes its place with
the same interface: the ``--timeout`` option, the ``timeout`` ini key and the
``@pytest.mark.timeout(N)`` marker the root conftest puts on every stage test
(2 s, 10 s for a heavy one), and the same failure, ``Timeout (>2.0s) from
pytest-timeout.``, raised *inside the code that ran too long*.  The root
conftest then reports it exactly as it reports a local hang: the learner's
line, and the rest of the stage not run.

How it stops a loop: ``sys.monitoring`` (Python 3.12+) calls back on every
jump (each turn of a loop) and every function start in the kata's own code
(its ``exercises/``, ``solutions/`` and ``tests/`` files; every other code
location switches its callback off after the first call, so pytest itself
runs at full speed); past the deadline the callback raises.  Where
``sys.monitoring`` is missing (Python 3.10, 3.11), ``sys.settrace`` does the
same with line events.  A loop inside C code (``sum(itertools.count())``)
makes no such event: the page stops that one from outside (Pyodide's
interrupt buffer, or a new worker).  Time spent in C that ends (``time.sleep(3)``) is
counted when the test's call returns: past its limit, the test fails all the same.

``deadline(seconds)`` is the same limit as a context manager, for the page's
numbers from the learner's engine (``kata check``'s stages 6-8).

The plugin also leaves out any test marked ``native_only`` (none in tests/; see
``pytest_collection_modifyitems`` below), which the page then names.
"""
from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable

import pytest

from autograd_kata.core.results.channel import GRACE, limit_of

MESSAGE = "Timeout (>%ss) from pytest-timeout."  # pytest-timeout's own words: the root conftest reads them
TOOL_ID = 4  # sys.monitoring's tool ids 0-5; 4 and 5 are free for tools (0-3: debugger, coverage, profiler, optimizer)
WATCHED_DIRS = ("exercises", "solutions", "tests")


class TimeLimit(BaseException):
    """Raised by ``deadline`` when its block ran too long (a BaseException, so the
    learner's ``except Exception`` cannot swallow it)."""


def _watched_prefixes(root: str) -> tuple[str, ...]:
    root = os.path.realpath(root)
    return tuple(os.path.join(root, d) + os.sep for d in WATCHED_DIRS) + tuple(
        os.path.join(root, d) + "/" for d in WATCHED_DIRS)


class Limiter:
    """One deadline at a time for the code under ``root``'s kata folders."""

    def __init__(self, root: str):
        self.prefixes = _watched_prefixes(root)
        self.until: float | None = None  # time.monotonic() past which watched code is stopped
        self.make_error: Callable[[], BaseException] | None = None  # what to raise then
        self._monitoring = getattr(sys, "monitoring", None)
        self._on = False

    def watched(self, filename: str) -> bool:
        return filename.startswith(self.prefixes)

    # --- sys.monitoring (3.12+) ---------------------------------------------
    def _callback(self, code, *_):
        if not self.watched(code.co_filename):
            assert self._monitoring is not None  # this callback is registered only where sys.monitoring is
            return self._monitoring.DISABLE
        if self.until is not None and time.monotonic() > self.until:
            self._fire()
        return None

    # --- sys.settrace (3.10, 3.11) --------------------------------------------
    def _trace(self, frame, event, arg):
        if not self.watched(frame.f_code.co_filename):
            return None
        self._check()
        return self._trace_lines

    def _trace_lines(self, frame, event, arg):
        if event == "line":
            self._check()
        return self._trace_lines

    def _check(self):
        if self.until is not None and time.monotonic() > self.until:
            self._fire()

    def _fire(self):
        # Again in a second if the code goes on all the same (a bare ``except:`` in a
        # loop); not at once, so that the test's report (which may call the
        # learner's ``__repr__``) is written in peace.
        self.until = time.monotonic() + 1.0
        assert self.make_error is not None  # set by start(), as the deadline that fired
        raise self.make_error()

    def start(self, seconds: float, make_error: Callable[[], BaseException]) -> None:
        self.until = time.monotonic() + seconds
        self.make_error = make_error
        if self._on:
            return
        self._on = True
        m = self._monitoring
        if m is not None:
            if m.get_tool(TOOL_ID) is None:
                m.use_tool_id(TOOL_ID, "kata-time-limit")
            m.register_callback(TOOL_ID, m.events.JUMP, self._callback)
            m.register_callback(TOOL_ID, m.events.PY_START, self._callback)
            m.restart_events()  # locations switched off in an earlier run are watched again
            m.set_events(TOOL_ID, m.events.JUMP | m.events.PY_START)
        else:
            sys.settrace(self._trace)

    def stop(self) -> None:
        self.until = None
        if not self._on:
            return
        self._on = False
        m = self._monitoring
        if m is not None:
            m.set_events(TOOL_ID, 0)
            m.register_callback(TOOL_ID, m.events.JUMP, None)
            m.register_callback(TOOL_ID, m.events.PY_START, None)
            m.free_tool_id(TOOL_ID)
        else:
            sys.settrace(None)


@contextlib.contextmanager
def deadline(seconds: float, root: str | None = None):
    """Stop the kata's code under ``root`` (default: the working directory) with
    ``TimeLimit`` once the block has run ``seconds``."""
    limiter = Limiter(root or os.getcwd())
    limiter.start(seconds, lambda: TimeLimit(f"over {seconds:g} s"))
    try:
        yield
    finally:
        limiter.stop()


# --- the pytest plugin: pytest-timeout's interface ------------------------------

LIMITER = pytest.StashKey[Limiter]()


def pytest_addoption(parser):
    group = parser.getgroup("timeout", "time limits without signals (the kata's page)")
    group.addoption("--timeout", type=float, default=None, metavar="SECONDS",
                    help="a time limit per test, in seconds (as pytest-timeout's --timeout)")
    parser.addini("timeout", "a time limit per test, in seconds (as pytest-timeout's)", default=None)


def pytest_configure(config):
    config.addinivalue_line("markers", "timeout(seconds): this test's time limit (as pytest-timeout's marker)")
    config.stash[LIMITER] = Limiter(str(config.rootpath))


def pytest_unconfigure(config):
    limiter = config.stash.get(LIMITER, None)
    if limiter is not None:
        limiter.stop()


# Told each test's name as it starts, with the seconds after which the page may end the worker
# (the page's worker sets it for a check): a loop in C never gives Python back, so the page,
# which ends the worker from outside, names the test it was in from what it was told last.
# The seconds are the test's limit and the terminal's GRACE (its CLoopWatch ends a loop in C
# then), None once Python has the test back past its limit (the page's long watchdog again);
# ``(None, None)`` as it ends.
ON_TEST: Callable[[str | None, float | None], object] | None = None


def _tell(name: str | None, seconds: float | None) -> None:
    if ON_TEST is not None:
        ON_TEST(name, seconds)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """As pytest-timeout: one limit for the whole test (setup, call and teardown)."""
    seconds = limit_of(item)
    _tell(item.name, seconds + GRACE if seconds is not None else None)
    limiter = item.config.stash[LIMITER]

    def over():  # the limit noticed, at an event of the kata's code: no loop in C
        _tell(item.name, None)
        return pytest.fail.Exception(MESSAGE % seconds, pytrace=False)

    if seconds is not None:
        limiter.start(seconds, over)
    try:
        return (yield)
    finally:
        if seconds is not None:
            limiter.stop()
        _tell(None, None)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """Time spent in C counts too: a test whose call ran past its limit without an event of the
    kata's code to stop it in (``time.sleep(3)``, a long C call) fails as pytest-timeout's
    signal would have failed it, with its words (``kata check`` names such a test a hang)."""
    limiter = item.config.stash[LIMITER]
    result = yield
    seconds = limit_of(item)
    if seconds is not None and limiter.until is not None and time.monotonic() > limiter.until:
        limiter.until = None  # the teardown runs in peace, as after a fired limit
        _tell(item.name, None)  # the long C call came back
        raise pytest.fail.Exception(MESSAGE % seconds, pytrace=False)
    return result


# --- the tests the page cannot run -------------------------------------------------

LEFT_OUT: list[str] = []  # names of the tests the last session left out (``native_only``)


def pytest_collection_modifyitems(config, items):
    """Leave out the tests marked ``native_only``: they would need what the browser
    lacks (a thread, a signal, a C stack deeper than a Web Worker's).  The page
    names them under its report.  No stage test carries the mark (a verdict in
    the page rests on the same tests as ``kata check N``; tooltests/test_site.py)."""
    LEFT_OUT.clear()
    out = [item for item in items if item.get_closest_marker("native_only")]
    if out:
        LEFT_OUT.extend(item.name for item in out)
        config.hook.pytest_deselected(items=out)
        items[:] = [item for item in items if item not in out]
