"""The judge's own pytest plugin: the test ids it collected, written at once; a time budget per stage.

Loaded by the grader into each judge (``-p autograd_kata.classroom.grading.plugin
--kata-collected=PATH --kata-stage-budget=SECONDS``).  The judge never imports
submitted code, so what it collects is the grader's own list of tests; written
before any test runs, it survives a judge that is killed later, and every test
on it that has no passing result counts as failed.

One judge runs the tests of several stages (one sandbox per stage).  A stage's
test file may take ``--kata-stage-budget`` seconds in all; once it has, its
remaining tests are not run (skipped, which never passes; the other stages still
run; the message is catalogue data, as ``kata check``'s not-run tests'), and the file is
named under ``"stopped"`` when the collected file is written again at the end.

The collected file also names, under ``"advisory"``, the tests marked ``advisory``: checks of
what only the sandbox can say about itself, which the grader reports and does not score
(docs/instructors.md, "The judge decides").
"""
from __future__ import annotations

import json
import os
import socket
import time

import pytest

from autograd_kata.classroom.grading.folders import SEED_FD
from autograd_kata.classroom.sandbox import jail
from autograd_kata.core.i18n import t
from autograd_kata.core.results.verdicts import not_run


def _receive_hidden_seed() -> None:
    """The hidden seed, from the grader's socket (judging._run), into this process's
    ``os.environ`` before the tests' modules read it: first this process turns not dumpable,
    so nothing of its uid can read its memory once the seed is in it.  A socket given and no
    seed through it is the grader's failure: the judge stops, and its stages are not graded."""
    fd = os.environ.pop(SEED_FD, None)
    if fd is None:
        return
    jail.not_dumpable()
    with socket.socket(fileno=int(fd)) as end:
        end.settimeout(60)
        seed = b""
        while chunk := end.recv(64):
            seed += chunk
    if not seed.strip().isdigit():
        raise pytest.UsageError(f"the judge got no hidden seed from the grader ({seed[:40]!r})")
    os.environ["KATA_HIDDEN_SEED"] = seed.decode()


_receive_hidden_seed()  # at import: -p loads this plugin before any conftest or test module


def pytest_addoption(parser):
    parser.addoption("--kata-collected", metavar="PATH", default=None,
                     help="write the collected test ids to PATH as JSON, before any test runs")
    parser.addoption("--kata-stage-budget", metavar="SECONDS", type=float, default=None,
                     help="seconds one test file may take in all; then its remaining tests are not run")


def _write(path, data) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f)
    os.replace(tmp, path)


class Judge:
    def __init__(self, path, budget):
        self.path, self.budget, self.ids, self.advisory = path, budget, [], []
        self.spent: dict[str, float] = {}
        self.stopped: list[str] = []

    def pytest_collection_finish(self, session):
        self.ids = [item.nodeid for item in session.items]
        self.advisory = [item.nodeid for item in session.items if item.get_closest_marker("advisory")]
        if self.path:
            _write(self.path, {"ids": self.ids, "advisory": self.advisory})

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        start = time.monotonic()
        try:
            return (yield)
        finally:
            where = item.nodeid.split("::", 1)[0]
            self.spent[where] = self.spent.get(where, 0.0) + time.monotonic() - start

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item):
        where = item.nodeid.split("::", 1)[0]
        if self.budget is not None and self.spent.get(where, 0.0) > self.budget:
            if where not in self.stopped:
                self.stopped.append(where)
            not_run(t("judge.stage_budget", budget=f"{self.budget:g}"))

    def pytest_sessionfinish(self, session):
        if self.path:
            _write(self.path, {"ids": self.ids, "advisory": self.advisory, "stopped": self.stopped})


def pytest_configure(config):
    path, budget = config.getoption("kata_collected"), config.getoption("kata_stage_budget")
    if path or budget is not None:
        config.pluginmanager.register(Judge(path, budget), "kata-judge")
