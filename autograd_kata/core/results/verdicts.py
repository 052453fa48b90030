"""The teaching verdicts: how a failing stage test reads, and what it is, as data.

A pytest plugin, loaded by the kata's root ``conftest.py`` (``pytest_plugins``)
for every run of the stage tests, the learner's and the grader's alike:

* a stub not written yet, or a module that does not import, fails with one
  line that says what to do, instead of a traceback;
* pytest-check's soft failures become one line each; a ``RuleBroken`` is its
  own message;
* a test past its time limit says where the learner's code was spinning, and
  the rest of its stage is not run (reported as "not run");
* an unexpected exception in the learner's code says where:
  ``exercises/...py:LINE`` and that line (``core/explain.py``);
* every failure gets its kind (``core/results/kinds.py``), its messages as data
  (``i18n.Text``, kept in ``SAID`` by the tests' ``Expect``) and the classic
  mistake they name (``core/mistakes.py``), for the results file
  (``core/results/channel.py``): the readers get data, not words.
"""
from __future__ import annotations

import sys
import traceback
from pathlib import Path

import pytest

from autograd_kata.core import explain
from autograd_kata.core.i18n import Text, joined, t
from autograd_kata.core.manifest import stage_of_module
from autograd_kata.core.results.channel import record_kind, record_said, record_where

HUNG = pytest.StashKey[dict]()  # test file's stage number -> where its first hang was

# Every failure message of the running test, as said (``i18n.Text``: its catalogue ids and
# fields): emptied before each test, filled by the tests' ``Expect``, read after it.
SAID: list = []


class RuleBroken(AssertionError):
    """A failed expectation whose message is the whole story (no traceback needed)."""


class ModuleBroken(Exception):
    """The stage module could not be imported."""


def import_line(error, name: str) -> int | None:
    """The line of module ``name``'s file an import stopped at: a SyntaxError's own, else the
    innermost frame in that file (a NameError in a default argument, a bad import, ...)."""
    if isinstance(error, SyntaxError):
        return error.lineno
    path = name.replace(".", "/") + ".py"
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename.replace("\\", "/").endswith(path)]
    return frames[-1].lineno if frames else None


def broken(name, kind, error, lineno):
    where = t("check.at_line", line=lineno) if lineno else ""
    return ModuleBroken(t("check.no_import", file=f"{name.replace('.', '/')}.py", where=where, kind=kind, error=error))



def sandbox_errors():
    """The sandbox's own failures (a hang, a crash), which are one plain line, as a tuple of types."""
    remote = sys.modules.get("autograd_kata.classroom.sandbox.remote")
    return (remote.SandboxError,) if remote else ()


def pytest_configure(config):
    config.stash[HUNG] = {}
    config.pluginmanager.register(WhereToStart(), "kata-where-to-start")


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


def pytest_runtest_logstart(nodeid, location):
    """A test starts with nothing said, before any setup: a plugin's setup that stops it
    before ours runs (the judge's stage budget) must not find the previous test's messages."""
    SAID.clear()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """After a stage's first hang, its other tests are not run: one loop costs seconds, not minutes."""
    stage = _stage_of(item)
    hung = item.config.stash.get(HUNG, {}).get(stage.number) if stage else None
    if hung:
        not_run(t("check.not_run", n=stage.number, test=hung))


def not_run(why: str) -> None:
    """Skip the running test as not run (``check.not_run.prefix``), ``why`` said after it,
    the whole kept as its data (the kind "not run" is recorded by the report hook)."""
    said = joined([t("check.not_run.prefix"), why])
    SAID.append(said)
    pytest.skip(said)


def _lineless_frames_dropped(excinfo) -> None:
    """Drop the traceback entries that have no line number.  A time limit that fires
    inside the learner's loop can leave one (CPython gives ``tb_lineno`` None for an
    instruction without a line), and pytest's own report of it then dies with an
    INTERNALERROR, which ended the run with no verdict for that test."""
    if excinfo is None:
        return
    entries = list(excinfo.traceback)
    kept = [e for e in entries if e._rawentry.tb_lineno is not None]
    if len(kept) < len(entries):
        excinfo.traceback = type(excinfo.traceback)(kept)
        tb = excinfo.value.__traceback__
        while tb is not None and tb.tb_next is not None:  # the same for explain's own walk
            if tb.tb_next.tb_lineno is None:
                tb.tb_next = tb.tb_next.tb_next
            else:
                tb = tb.tb_next


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    _lineless_frames_dropped(call.excinfo)
    report = yield
    prefix = t("check.not_run.prefix")
    stage = _stage_of(item)
    if report.skipped and isinstance(report.longrepr, tuple) and prefix in report.longrepr[2]:
        path, line, text = report.longrepr
        report.longrepr = (path, line, text[text.index(prefix):])
        record_kind(report, "not run")
        if SAID and SAID[-1] == report.longrepr[2]:  # said by not_run()
            record_said(report, [SAID[-1]], [])
        return report
    if not report.failed:
        return report
    kind = kind_of(call.excinfo.value if call.excinfo else None, report)
    record_kind(report, kind)
    named = mistakes_named(SAID, stage) if SAID else []
    if SAID:
        record_said(report, list(SAID), named)
    if kind in ("crash", "hang", "unwritten") and call.excinfo and stage:
        frames = explain.frames_in(call.excinfo.value, _module_file(item, stage))
        if frames:  # the learner's line (a stub's raise too), as data: the message says it in words
            mine = (explain.learner_frame(frames, item.config.rootpath, stage.number) if kind == "crash"
                    else explain.hung_frame(call.excinfo.value, _module_file(item, stage)) if kind == "hang"
                    else frames[-1])
            record_where(report, mine[0], mine[1])
    said = _explained(item, report, call.excinfo.value if call.excinfo else None, stage)
    if isinstance(said, Text):  # the message is one composite message (a crash, a hang, ...): that is its data
        record_said(report, [said], named or mistakes_named([said], stage))
    return report


def _explained(item, report, error, stage):
    """Put the teaching message in ``report`` (a one-line failure, a crash, a hang...);
    return it when it replaced pytest's own."""
    checks = [line[len("FAILURE: "):] for line in report.longreprtext.splitlines()
              if line.startswith("FAILURE: ")]
    said = None
    if checks:  # pytest-check's soft failures: every wrong gradient, one line each
        report.longrepr = "\n".join(checks)
    elif isinstance(error, NotImplementedError) and str(error).startswith("stage "):
        said = joined([t("check.unwritten.prefix"), explain.stub_said(error)])
    elif stage is not None and _sandbox_hang(error):  # the sandbox stopped the loop and said where
        said = explain.hang(error, _module_file(item, stage), error.limit, stage.number)
        item.config.stash[HUNG].setdefault(stage.number, item.name)
    elif isinstance(error, (ModuleBroken, RuleBroken, *sandbox_errors())):
        report.longrepr = str(error)
        said = next(iter(getattr(error, "args", ())), None)
        said = said if said == report.longrepr else None
    elif stage is None or error is None:
        pass
    elif _is_timeout(error):
        limit_said = str(error)[len("Timeout (>"):].split("s)", 1)[0]
        try:
            limit = float(limit_said)
        except ValueError:
            limit = float("nan")
        said = explain.hang(error, _module_file(item, stage), limit, stage.number)
        item.config.stash[HUNG].setdefault(stage.number, item.name)
    elif not isinstance(error, (AssertionError, pytest.fail.Exception, pytest.skip.Exception)):
        said = explain.crash(error, _module_file(item, stage), item.config.rootpath, stage.number,
                             _test_place(error), _source_root(item))
    elif getattr(error, "learner_frames", None):  # raised in the sandbox: show its lines as pytest would
        report.longrepr = with_learner_frames(report.longreprtext, error.learner_frames)  # type: ignore[union-attr]
    if said is not None:
        report.longrepr = str(said)
    return said


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


def _source_root(item) -> Path | None:
    """Under grading (``--sandbox``), the folder the judge wrote the submitted module into: a
    crash's advice reads the submission's lines (``_backward = None``), not the grader's stub."""
    callspec = getattr(item, "callspec", None)
    name = callspec.params.get("engine") if callspec else None
    if not isinstance(name, str) or not item.config.getoption("sandbox", None):
        return None
    return Path(sandbox_folder(item.config, name))


def _sandbox_hang(error) -> bool:
    """A hang that the grading sandbox stopped itself, knowing where the learner's code was."""
    return (bool(sandbox_errors()) and isinstance(error, sandbox_errors()) and error.kind == "hang"
            and bool(error.learner_frames) and isinstance(error.limit, (int, float)))


def mistakes_named(said, stage) -> list[str]:
    """The classic mistakes (``core.mistakes``' label ids) that the failure's messages name,
    in the table's order, found in their English wording whatever language the run speaks."""
    from autograd_kata.core.mistakes import PHRASES

    english = "\n".join(text.render("en") if hasattr(text, "render") else str(text) for text in said)
    return list(dict.fromkeys(ident for number, phrase, ident in PHRASES
                              if stage is not None and number == stage.number and phrase in english))


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
