"""The language of the failure messages; property tests (marker ``properties``) and their Hypothesis profile.

The fixed examples of each stage are the lesson; the property tests are a net
under them: random expression graphs from the stage's operations, every
gradient compared with central differences (tests/graphs.py).

* By default the examples are the same on every run (``derandomize=True``, no
  example database): a learner never sees a test pass, then fail unchanged.
* With ``KATA_HIDDEN_SEED`` set (grading), the examples come from that seed
  (derandomize off), so a submission meets examples its author could not
  read in advance.
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

try:
    from hypothesis import HealthCheck, Phase, settings
except ImportError:  # tests/graphs.py then makes the property tests skip
    pass
else:
    # no shrinking: a wrong engine is reported at its first failing example, in well under the
    # per-test time limit (the generator starts small, so that example is small too)
    COMMON = dict(database=None, deadline=None, max_examples=40, print_blob=False,
                  phases=[Phase.explicit, Phase.reuse, Phase.generate],
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.differing_executors,
                                         HealthCheck.function_scoped_fixture])
    settings.register_profile("kata", derandomize=True, **COMMON)
    settings.register_profile("kata-hidden", derandomize=False, **COMMON)
    settings.load_profile("kata-hidden" if HIDDEN else "kata")


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
