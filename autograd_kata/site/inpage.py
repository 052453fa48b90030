"""The kata's Python side in the page: runs in Pyodide, in the page's Web Worker.

The worker (``static/worker.js``) unpacks the learner's kata into ``/kata`` and
calls the functions below, one per button.  Each one runs the *same* code as
the terminal command it stands for and returns the text that command prints:

* ``check(n, lang)`` is ``kata check N``: the command's own function
  (``learner.commands.check``), with the two pieces that start a process swapped for in-process ones of the same
  contract (``_swap_processes``): the stage's tests run by ``pytest.main`` here
  with the project's settings and plugins (``core.runner.pytest_command``),
  results written by the one results plugin (``core.results``), read back by
  ``core.runner.parse_results``; then the terminal's own path, the cache
  (``core.state``) and ``learner.feedback.report``.  Time limits:
  ``site.limits`` in place of pytest-timeout.  Before every run each module imported from the kata's own
  folders (the learner's stage modules, the tests, their conftests) is dropped
  from ``sys.modules``, so an edit is always what is tested.
* ``hint(n, lang)`` is ``kata hint N``; ``diff_previous(n, lang)`` is ``kata diff N --previous``:
  the commands' own functions too, their output captured.
* One difference, in words only: where the terminal's report advises a command the page
  does not have (``kata check N --all``), the page says its own advice (``PAGE_WORDS``).
* ``stub(n)`` is the stage's pristine stub (what ``kata reset N`` puts back);
  ``download()`` zips the learner's ``exercises/`` for submission.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autograd_kata.core.manifest import Stage
    from autograd_kata.core.runner import StageResult

ROOT = Path("/kata")
KEEP = ("autograd_kata",)  # the tool: never edited by the learner, kept imported between runs
# The terminal's words that advise a command the page does not have (``kata check N
# --all``), and the page's own words in their place (``page_words``); the terminal keeps its own.
PAGE_WORDS = {
    "check.fold_all": "site.fold_all",
    "check.more_lines": "site.more_lines",
    "s8.one_wide_not_alone": "site.s8_one_wide_not_alone",
}


class _Captured(io.StringIO):
    """What a terminal would have shown: UTF-8 (so ✓ and ✗, as in a UTF-8 terminal), no colour."""

    encoding = "utf-8"

    def isatty(self) -> bool:
        return False


def prepare(root: str | Path = ROOT) -> None:
    """Once, after the files are unpacked: the kata's folder as the working directory."""
    global ROOT
    ROOT = Path(root)
    os.chdir(ROOT)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    sys.dont_write_bytecode = True  # two saves in one second at one size must not test the old code
    os.environ.pop("NO_COLOR", None)


def language(lang: str | None) -> None:
    """Speak ``lang`` from now on (as ``kata --lang``)."""
    from autograd_kata.core import i18n
    if lang:
        os.environ[i18n.ENV] = i18n.current_language(lang)
    i18n.reset()


def forget_kata_modules(root: Path | None = None) -> list[str]:
    """Drop every module imported from the kata's folder except the tool itself:
    a second ``pytest.main`` would otherwise test the module imported by the first.  So too
    any module under one of the kata's own names (``exercises``, ``tests``' modules, ...)
    imported from elsewhere: another kata's ``exercises.stage01_value`` is not this one's."""
    root = Path(root or ROOT)
    prefix = str(root) + "/"
    own = {"exercises", "solutions", "tests", "conftest", *(p.stem for p in (root / "tests").glob("*.py"))}
    dropped = []
    for name, module in list(sys.modules.items()):
        where = getattr(module, "__file__", None) or ""
        try:  # a namespace that is no list of folders (a class posing as a module) has no paths
            paths = [str(p) for p in getattr(module, "__path__", None) or []]
        except TypeError:
            paths = []
        inside = where.startswith(prefix) or any(str(p).startswith(prefix) for p in paths)
        if (inside or name.split(".")[0] in own) and name.split(".")[0] not in KEEP:
            del sys.modules[name]
            dropped.append(name)
    import importlib
    importlib.invalidate_caches()
    return dropped


def run(impl: str = "exercises", stages: Iterable[Stage] | None = None, root: Path | None = None,
        timeout: float = 300, extra: Sequence[str] = ()) -> dict[int, StageResult]:
    """``core.runner.run``'s contract, in this process: every stage's ``StageResult``
    (its signature too, so that it can stand in for it).  ``timeout`` bounds the
    pytest child there; here there is no child, and each test's limit is
    ``site.limits``'.  ``root`` defaults to the page's kata folder."""
    from autograd_kata.core import i18n, runner
    from autograd_kata.core.manifest import STAGES
    root = Path(root or ROOT)
    stages = list(STAGES if stages is None else stages)
    forget_kata_modules(root)
    env = runner.child_env(impl)
    # the child's environment for the run (the tests speak English, as the child does), then
    # the process's own again, every key of it: a later pytest of this process, or the
    # learner's language, must not inherit KATA_IMPL or PYTEST_DISABLE_PLUGIN_AUTOLOAD
    saved = dict(os.environ)
    for key in [k for k in os.environ if runner.LEAKY_ENV.match(k)]:
        del os.environ[key]
    os.environ.update({k: v for k, v in env.items() if k in ("KATA_IMPL", "PYTEST_DISABLE_PLUGIN_AUTOLOAD", i18n.ENV)})
    try:
        found = _run_here(impl, stages, root, extra)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        i18n.reset()
    if isinstance(found, dict):
        return found
    msgid, fields, tail = found  # worded now, in the learner's language, not the tests' English
    problem = i18n.t(msgid, **fields) + tail
    return {s.number: runner.StageResult(s, impl, problem=problem) for s in stages}


def _run_here(impl: str, stages: list, root: Path,
              extra: Sequence[str]) -> dict[int, StageResult] | tuple[str, dict, str]:
    """``run``'s pytest, in this process, with the child's environment already in place:
    the results, or the problem (catalogue id, its fields, pytest's last words) when there are none."""
    import pytest

    from autograd_kata.core import runner
    with tempfile.TemporaryDirectory(prefix="kata-") as tmp:
        out = Path(tmp) / "results.json"
        # site.limits in pytest-timeout's place (the page has no signals; its --timeout is limits')
        args = runner.pytest_command(impl, stages, out, extra, root=root, modules=("autograd_kata.site.limits",),
                                     plugins=tuple(p for p in runner.PLUGINS if p != "timeout"))[3:]
        printed = _Captured()
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            code = pytest.main(args)
        forget_kata_modules(root)
        if out.exists():
            try:
                return runner.parse_results(runner.read_results(out), impl, stages)
            except ValueError as error:
                return "runner.unreadable", {"error": error}, ""
        return "runner.exited", {"code": int(code)}, "\n" + printed.getvalue()[-2000:]


def warm() -> float:
    """What a check imports first, imported while the learner reads: pytest with every plugin it
    loads by default and the kata's plugins (most of a cold page's first check, issue 28; not
    Hypothesis, which only some checks import: an early check would wait for it).  They are not
    the kata's own files, so they stay imported between runs, as the tool does; nothing is run
    and nothing is saved.  The milliseconds it took."""
    import importlib
    import time

    from _pytest.config import default_plugins
    start = time.perf_counter()
    for name in ("pytest", *(f"_pytest.{p}" for p in default_plugins), "pytest_check", "pytest_check.plugin",
                 "autograd_kata.site.limits",
                 "autograd_kata.core.results.channel", "autograd_kata.core.results.verdicts"):
        try:
            importlib.import_module(name)
        except ImportError:  # a plugin this pytest has not: the check says so, if it needs it
            pass
    return (time.perf_counter() - start) * 1000


def feel(stage, root) -> list[str]:
    """``learner.feel.feel`` without its child process: the same lines, the same time limit."""
    from autograd_kata.core.i18n import t
    from autograd_kata.learner import feel as numbers
    from autograd_kata.site.limits import TimeLimit, deadline
    lines = numbers.read(stage, Path(root))
    if not numbers.runs_engine(stage):
        return lines
    try:
        with deadline(numbers.TIME_LIMIT, str(root)):
            return lines + numbers.show(stage, Path(root))
    except TimeLimit:
        return [*lines, t("feel.too_slow", limit=f"{numbers.TIME_LIMIT:g}")]
    except Exception as error:  # noqa: BLE001 - as the child process's last line of stderr
        return [*lines, t("feel.failed", last=f"{type(error).__name__}: {error}")]
    finally:
        forget_kata_modules(root)


def _swap_processes() -> None:
    """The two places where ``kata`` starts a process, replaced by this process:
    ``core.runner.run`` (the pytest child) and ``learner.feel.feel`` (the numbers'
    child).  Same contracts; everything else is the terminal's own code."""
    from autograd_kata.core import runner
    from autograd_kata.learner import feel as numbers
    runner.run = run
    numbers.feel = feel


@contextlib.contextmanager
def page_words():
    """Within it, every message of ``PAGE_WORDS`` is said in the page's words instead, however
    it is reached (the report's own ``t``, a test's message said again in the learner's
    language): the catalogue's one lookup is the page's for that time, then the terminal's again."""
    from autograd_kata.core import i18n
    messages = i18n.MESSAGES
    terminal = messages.raw

    def raw(msgid: str, lang: str, n: int | None = None) -> str:
        return terminal(PAGE_WORDS.get(msgid, msgid), lang, n)

    messages.raw = raw  # type: ignore[method-assign]
    try:
        yield
    finally:
        del messages.raw


def command(call, lang: str | None = None) -> tuple[int, str]:
    """A learner's command (``learner.commands``) as ``kata`` runs it: in the
    language chosen as ``cli.main`` chooses it (``i18n.setup``), with the two
    process-starting pieces swapped; its exit code and what it prints.  A
    ``Refusal`` (a stage that does not exist) is not caught here: only ``cli.main``
    prints one, and the page offers no stage it could be refused."""
    from autograd_kata.core import i18n
    _swap_processes()
    language(lang)
    i18n.setup(None, stream=_Captured())
    printed = _Captured()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed), page_words():
        code = call()
    return int(code or 0), printed.getvalue().rstrip("\n")


def check(number: int, lang: str | None = None,
          on_test: Callable[[str | None, float | None], object] | None = None) -> dict:
    """``kata check N``: ``{"passed": bool, "text": what the terminal shows, "line": the
    learner's line where the first failure stopped, or None}``, plus one line naming
    the tests the page leaves out (``native_only``), if any.  ``on_test`` is told each
    test's name (as the report names it) and its bound as it starts (``limits.ON_TEST``)."""
    from autograd_kata.core.i18n import t
    from autograd_kata.core.manifest import stage
    from autograd_kata.core.state import known_results
    from autograd_kata.learner import commands
    from autograd_kata.learner.feedback import ordered_failures, short_name
    from autograd_kata.site import limits
    limits.LEFT_OUT.clear()
    limits.ON_TEST = ((lambda name, seconds: on_test(short_name(name, stage(number)) if name else None, seconds))
                      if on_test is not None else None)
    try:
        code, text = command(lambda: commands.check(stage=str(number)), lang)
    finally:
        limits.ON_TEST = None
    if limits.LEFT_OUT:
        names = ", ".join(short_name(name, stage(number)) for name in limits.LEFT_OUT)
        text += "\n" + t("site.not_here", names=names, stage=number)
    # the failure the text shows first, from the run's results (the cache it just wrote)
    result = known_results([stage(number)], ROOT).get(number)
    first = ordered_failures(result)[:1] if result is not None else []
    where = first[0].where if first else None
    line = where[1] if where and where[0] == stage(number).source("exercises") else None
    return {"passed": code == 0, "text": text, "line": line}


def hint(number: int, lang: str | None = None, level: int | None = None) -> str:
    """``kata hint N`` (each call the next level, as in the terminal)."""
    from autograd_kata.learner import commands
    return command(lambda: commands.hint(stage=str(number), level=level), lang)[1]


def diff_previous(number: int, lang: str | None = None) -> str:
    """``kata diff N --previous``: what the stage adds to the one before it."""
    from autograd_kata.learner import commands
    return command(lambda: commands.diff(stage=str(number), previous=True), lang)[1]


def stub(number: int) -> str:
    """The stage's untouched stub, as ``kata reset N`` puts it back."""
    from autograd_kata.core.manifest import stage
    from autograd_kata.core.state import pristine_stub
    return pristine_stub(stage(number), ROOT)


def put_source(number: int, text: str) -> None:
    """The learner's module of stage ``number`` is ``text`` from now on."""
    from autograd_kata.core.manifest import stage
    path = ROOT / stage(number).source("exercises")
    path.write_text(text, encoding="utf-8")


def get_source(number: int) -> str:
    from autograd_kata.core.manifest import stage
    return (ROOT / stage(number).source("exercises")).read_text(encoding="utf-8")


def stages(lang: str | None = None) -> str:
    """The stage picker's rows as JSON: number, title (plain: stage 2's Japanese one is in
    backticks), the learner's file."""
    from autograd_kata.core.i18n import t
    from autograd_kata.core.manifest import STAGES
    from autograd_kata.site import plain
    language(lang)
    return json.dumps([{"number": s.number, "title": plain(t(s.title_id)), "file": s.source("exercises")}
                       for s in STAGES], ensure_ascii=False)


def progress() -> str:
    """The hint levels seen so far (``.kata/progress.json``), for the page to keep."""
    path = ROOT / ".kata" / "progress.json"
    return path.read_text(encoding="utf-8") if path.is_file() else "{}"


def put_progress(text: str) -> None:
    path = ROOT / ".kata" / "progress.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text or "{}", encoding="utf-8")


def download_names() -> list[str]:
    """What ``download`` puts in its zip, as the page names it after a download."""
    return [f"exercises/{path.name}" for path in sorted((ROOT / "exercises").glob("*.py"))]


def download() -> bytes:
    """The learner's ``exercises/`` as a zip, for ``kata grade`` or Gradescope."""
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in download_names():
            archive.write(ROOT / name, name)
    return data.getvalue()
