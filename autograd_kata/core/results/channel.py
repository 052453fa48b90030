"""The one results channel: a pytest plugin that writes every test's outcome as JSON.

Like Exercism's test runner, it builds its record from ``pytest_runtest_logreport``
(no JUnit round trip, so no message is ever cut). The learner's runner and the
grader's judge both load it and read the same file::

    python -m pytest -p autograd_kata.core.results.channel --kata-results=PATH ...

The file is written once, at the end of the session, atomically (a temporary
name, then a rename). Its shape::

    {"version": 1, "exitstatus": 1, "collected": 9,
     "tests": [{"nodeid": "tests/test_stage01_value.py::test_x[stage01_value]",
                "name": "test_x[stage01_value]", "stage": 1,
                "outcome": "passed" | "failed" | "error" | "skipped",
                "kind": null | one of KINDS (what sort of failure: data, not words),
                "message": "...", "location": ["tests/test_stage01_value.py", 12],
                "said": [{"id": "expect.hint", "args": {...}}, ...] (the message as data: i18n.Text),
                "mistakes": [...] the classic mistakes it names (core.mistakes label ids),
                "where": null | [file, line] of the learner's code it stopped in (a crash, a hang, a stub),
                "duration": 0.0012}]}

A test's outcome is the worst of its phases (setup, call, teardown); "error"
means setup or teardown failed. A test passes only if its call phase reported
a pass: one whose setup passed and whose call never reported (pytest itself
broke while reporting it: an INTERNALERROR) is an "error" that says so. A
collected test that never reported at all (the session was cut short) is
absent: readers count from ``collected`` and fail closed, and read
``exitstatus``: only 0 and 1 are a verdict.

Beside it, ``PATH.hang`` (``hang_dump``): a run whose time limits pytest-timeout keeps, with the
learner's code in its process (not a judge), arms ``faulthandler`` for each test, ``GRACE``
seconds past its limit. A signal cannot stop code that never comes back to Python
(``sum(itertools.count())``: a loop inside C), but faulthandler's own thread can: it writes every
thread's stack there (its first line "Timeout (h:mm:ss)!") and ends the process, so the run ends
within the test's limit and the runner names the learner's line (``runner.hang_location``).
"""
from __future__ import annotations

import faulthandler
import json
import os
from pathlib import Path

import pytest

from autograd_kata.core.manifest import stage_of_module
from autograd_kata.core.results.kinds import (
    KIND_PROPERTY,
    KINDS,
    MISTAKE_PROPERTY,
    SAID_PROPERTY,
    WHERE_PROPERTY,
    hang_dump,
)

RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}


def record_kind(report, kind: str) -> None:
    """Name ``report``'s kind of failure (one of ``KINDS``), for the results file."""
    assert kind in KINDS, kind
    report.user_properties = [p for p in report.user_properties if p[0] != KIND_PROPERTY] + [(KIND_PROPERTY, kind)]


def record_said(report, said: list, mistakes: list[str]) -> None:
    """Keep ``report``'s failure messages as data (``i18n.Text``) and the classic mistakes
    they name (label ids of ``core.mistakes``), for the results file."""
    report.user_properties = [p for p in report.user_properties if p[0] not in (SAID_PROPERTY, MISTAKE_PROPERTY)]
    data = [text.data() if hasattr(text, "data") else {"id": "", "args": {}, "text": str(text)} for text in said[:20]]
    report.user_properties += [(SAID_PROPERTY, data), (MISTAKE_PROPERTY, list(mistakes))]


def record_where(report, path: str, line: int) -> None:
    """Name the learner's line ``report``'s failure stopped in (a crash, a hang, a stub), for the results file."""
    report.user_properties = [p for p in report.user_properties if p[0] != WHERE_PROPERTY] + \
        [(WHERE_PROPERTY, [path, int(line)])]


MAX_MESSAGE = 4000  # characters of one test's message kept in the file (a teaching message is under 1,000)


def pytest_addoption(parser):
    parser.addoption("--kata-results", metavar="PATH", default=None,
                     help="write every test's outcome, full message and location to PATH as JSON")


class Recorder:
    def __init__(self, path: Path):
        self.path = path
        self.tests: dict[str, dict] = {}
        self.collected = 0

    def pytest_collection_finish(self, session):
        self.collected = len(session.items)

    def pytest_runtest_logreport(self, report):
        entry = self.tests.get(report.nodeid)
        if entry is None:
            module = report.nodeid.split("::", 1)[0].rsplit("/", 1)[-1].removesuffix(".py")
            stage = stage_of_module(module)
            entry = self.tests[report.nodeid] = {
                "nodeid": report.nodeid,
                "name": report.nodeid.split("::")[-1],
                "stage": stage.number if stage else None,
                "outcome": "passed",
                "kind": None,
                "message": "",
                "said": [],
                "mistakes": [],
                "where": None,
                "location": [report.location[0], (report.location[1] or 0) + 1],
                "duration": 0.0,
                "called": False,
            }
        entry["duration"] += report.duration
        if report.when == "call" or report.skipped:
            entry["called"] = True
        if report.passed:
            return
        if report.skipped:
            outcome = "skipped"
        elif report.when == "call":
            outcome = "failed"
        else:
            outcome = "error"
        if RANK[outcome] >= RANK[entry["outcome"]]:
            entry["outcome"] = outcome
            entry["message"] = _message(report)
            kinds = [v for k, v in report.user_properties if k == KIND_PROPERTY]
            entry["kind"] = kinds[-1] if kinds else ("not run" if outcome == "skipped" else "other")
            props = dict(report.user_properties)
            entry["said"], entry["mistakes"] = props.get(SAID_PROPERTY, []), props.get(MISTAKE_PROPERTY) or []
            entry["where"] = props.get(WHERE_PROPERTY)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session, exitstatus):
        for entry in self.tests.values():
            if not entry.pop("called") and entry["outcome"] == "passed":
                from autograd_kata.core.i18n import Text, t
                said = t("results.never_finished")
                entry.update(outcome="error", kind="other", message=said,
                             said=[said.data()] if isinstance(said, Text) else [])
        data = {"version": 1, "exitstatus": int(exitstatus), "collected": self.collected,
                "tests": list(self.tests.values())}
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
        os.replace(tmp, self.path)


def _message(report) -> str:
    if report.skipped and isinstance(report.longrepr, tuple):
        text = str(report.longrepr[2])
    else:
        text = report.longreprtext.strip()
    if len(text) > MAX_MESSAGE:  # the start says what broke; the note says that the rest was cut
        text = f"{text[:MAX_MESSAGE]}\n... [{len(text) - MAX_MESSAGE} more characters cut]"
    return text


#: seconds past a test's limit before faulthandler ends a run that pytest-timeout's signal could not stop
GRACE = 3.0


def limit_of(item) -> float | None:
    """A test's time limit as pytest-timeout reads it: its marker, else --timeout, else the ini's."""
    marker = item.get_closest_marker("timeout")
    if marker is not None:
        value = marker.args[0] if marker.args else marker.kwargs.get("timeout")
    else:
        value = item.config.getoption("timeout", None)
        if value is None:
            value = item.config.getini("timeout")
    try:
        value = float(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None
    return value if value and value > 0 else None


class CLoopWatch:
    """Each test armed (setup, call and teardown, as pytest-timeout's one limit): past its limit
    and ``GRACE``, every thread's stack to the dump, then the process ends."""

    def __init__(self, dump: Path):
        self.file = open(dump, "w", encoding="utf-8")  # noqa: SIM115 - open until the process ends

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        seconds = limit_of(item)
        if seconds is None:
            return (yield)
        faulthandler.dump_traceback_later(seconds + GRACE, exit=True, file=self.file)
        try:
            return (yield)
        finally:
            faulthandler.cancel_dump_traceback_later()


def pytest_configure(config):
    path = config.getoption("kata_results")
    if path:
        config.pluginmanager.register(Recorder(Path(path).resolve()), "kata-results-recorder")
        timeout = any(config.pluginmanager.hasplugin(name) for name in ("timeout", "pytest_timeout"))
        # the learner's code in this process: not a judge's (--sandbox: each sandbox has its own limit,
        # and a judge that ended itself would be a stage not graded), not the page's (no pytest-timeout)
        in_process = not config.getoption("sandbox", None)
        if timeout and in_process and hasattr(faulthandler, "dump_traceback_later"):
            try:
                watch = CLoopWatch(hang_dump(Path(path).resolve()))
            except OSError:  # nowhere to write the stacks: the signal's limit alone, as before
                return
            config.pluginmanager.register(watch, "kata-c-loop-watch")
