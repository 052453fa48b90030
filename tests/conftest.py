"""The language of the failure messages; which runs include the property tests (marker ``properties``).

The fixed examples of each stage are the lesson; the property tests are a net
under them: random expression graphs from the stage's operations, every
gradient compared with central differences (tests/graphs.py).

* Their examples are the same on every run, or with ``KATA_HIDDEN_SEED`` set
  (grading) come from that seed: the Hypothesis profile in ``graphs.hypothesis()``,
  which imports Hypothesis only when a property test runs.
* They cost more than the 0.2 s a stage's learner run may spend on them, so
  the learner's default run deselects them; they run with ``-m properties``
  (CI runs them on the reference) or whenever ``KATA_HIDDEN_SEED`` is set.
"""
from __future__ import annotations

import io
import os
import sys

from autograd_kata.core import i18n

# The stage tests speak the learner's language (--lang is kata's; here KATA_LANG, then the
# locale).  Chosen once, before any test module builds its messages; a terminal that cannot
# show it gets English and one notice.  sys.__stdout__: pytest has replaced sys.stdout by now;
# and it captures even the process's stderr while conftests load, so the notice waits for
# the terminal reporter (pytest_sessionstart below).
NOTICE = io.StringIO()
i18n.setup(stream=sys.__stdout__ or sys.stdout, notice=NOTICE)

HIDDEN = os.environ.get("KATA_HIDDEN_SEED")


def pytest_sessionstart(session):
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if NOTICE.getvalue() and reporter is not None:
        reporter.write_line(NOTICE.getvalue().rstrip())


def pytest_configure(config):
    config.addinivalue_line("markers", "properties: random expression graphs checked against central differences "
                                       "(off by default: run with -m properties; on when KATA_HIDDEN_SEED is set)")


def pytest_collection_modifyitems(config, items):
    if HIDDEN or "properties" in (config.getoption("markexpr") or ""):
        return
    keep = [item for item in items if item.get_closest_marker("properties") is None]
    if len(keep) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in keep])
        items[:] = keep
