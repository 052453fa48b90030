"""The judge's own pytest plugin: the test ids it collected, written at once.

Loaded by the grader into each stage's judge (``-p autograd_kata.classroom.judge
--kata-collected=PATH``).  The judge never imports submitted code, so what it
collects is the grader's own list of tests; written before any test runs, it
survives a judge that is killed later, and every test on it that has no
passing result counts as failed.
"""
from __future__ import annotations

import json
import os


def pytest_addoption(parser):
    parser.addoption("--kata-collected", metavar="PATH", default=None,
                     help="write the collected test ids to PATH as JSON, before any test runs")


def pytest_collection_finish(session):
    path = session.config.getoption("kata_collected")
    if path:
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump({"ids": [item.nodeid for item in session.items]}, f)
        os.replace(tmp, path)
